"""The agent model's own TEST DOUBLE for an adapter that drives a framework's agent loop: the
project's `SummarizerServer` on 127.0.0.1, started on first use, with a context window of ``window``
tokens (SPEC FIRE-5, FIRE-7). It stays apart from the suite's summarizer double, so the suite's faults
and records stay the summarizer's alone."""

from __future__ import annotations

import threading
import weakref
from typing import Any


class ModelDouble:
    """A `SummarizerServer` started on first use, answering a request over ``window`` tokens with the
    overflow ``answers`` names for its API (``{api: answer}``; each API's default when None)."""

    def __init__(self, window: int, answers: dict[str, str] | None = None) -> None:
        self.window_tokens, self.answers = window, answers
        self._server: Any = None
        self._lock = threading.Lock()

    def server(self) -> Any:
        with self._lock:
            if self._server is None:
                from compaction_suite.conformance.summarizer_server import SummarizerServer

                server = SummarizerServer().start()
                server.window(self.window_tokens, self.answers)
                weakref.finalize(self, server.stop)
                self._server = server
            return self._server
