"""The agent model's own TEST DOUBLE for an adapter that drives a framework's agent loop: the
project's `SummarizerServer` on 127.0.0.1, started on first use, with a context window of ``window``
tokens (SPEC FIRE-5, FIRE-7), or answering every request with a fault its API is known to send
(``fault``: a model a framework's own component calls, an output guardrail's check, failing as the
provider fails it). It stays apart from the suite's summarizer double, so the suite's faults and records
stay the summarizer's alone."""

from __future__ import annotations

import threading
import weakref
from typing import Any


class ModelDouble:
    """A `SummarizerServer` started on first use, answering a request over ``window`` tokens with the
    overflow ``answers`` names for its API (``{api: answer}``; each API's default when None); with
    ``fault``, answering every request with that fault (`SummarizerServer.fault`: on an API not known
    to send it, `summarizer_apis.SENT`, the request is answered normally)."""

    def __init__(self, window: int | None, answers: dict[str, str] | None = None, *, fault: str | None = None) -> None:
        self.window_tokens, self.answers, self.fault = window, answers, fault
        self._server: Any = None
        self._lock = threading.Lock()

    def server(self) -> Any:
        with self._lock:
            if self._server is None:
                from compaction_suite.conformance.summarizer_server import SummarizerServer

                server = SummarizerServer().start()
                server.window(self.window_tokens, self.answers)
                if self.fault is not None:
                    server.fault(self.fault)
                weakref.finalize(self, server.stop)
                self._server = server
            return self._server
