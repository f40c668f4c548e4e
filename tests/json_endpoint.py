"""A scripted JSON endpoint on 127.0.0.1 for tests that play a provider's model (a TEST DOUBLE):
each POST's body goes to the subclass's `JSONEndpoint.answer`, which gives the HTTP status and the
JSON to send back. The framework under test reaches it through its own HTTP client, as it would
the provider. (`scripted_http.ScriptedServer` is the chat-completions agent model with a script.)"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class JSONEndpoint(ThreadingHTTPServer):
    """Answers every POST with `answer`; use it as ``with Endpoint().running() as endpoint``."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The HTTP status and JSON answering a POST of ``body``."""
        raise NotImplementedError

    @contextlib.contextmanager
    def running(self) -> Iterator[Any]:
        """Serves on a daemon thread until the block ends, then closes the socket."""
        thread = threading.Thread(target=self.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.shutdown()
            self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: JSONEndpoint

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        status, answer = self.server.answer(body)
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass
