"""A TEST DOUBLE of Anthropic's ``POST /v1/messages`` that streams (server-sent events), for the
Strands summarizing adapter test: Strands' ``AnthropicModel`` always streams, which the suite's
summarizer double does not answer yet. Every answer is one text block naming the double and the
number of messages it was sent; every request body is recorded. 127.0.0.1 only (werkzeug thread).
"""

from __future__ import annotations

import json
import threading
from typing import Any, Self

from compaction_suite.conformance.summarizer_server import QuietHandler
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response


def _event(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n"


class MessagesEndpoint:
    """``with MessagesEndpoint() as endpoint: endpoint.base_url`` (ends in ``/v1``, as the suite's)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._server = make_server("127.0.0.1", 0, self._app, threaded=True, request_handler=QuietHandler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/v1"

    def text(self, body: dict[str, Any]) -> str:
        return f"summary by the messages test double of {len(body.get('messages') or [])} messages"

    @Request.application  # type: ignore[arg-type]
    def _app(self, request: Request) -> Response:
        body = json.loads(request.get_data())
        self.requests.append(body)
        message = {"id": f"msg_testdouble_{len(self.requests)}", "type": "message", "role": "assistant", "model": body.get("model"), "content": [], "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}
        events = [
            _event("message_start", {"type": "message_start", "message": message}),
            _event("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            _event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": self.text(body)}}),
            _event("content_block_stop", {"type": "content_block_stop", "index": 0}),
            _event("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 12}}),
            _event("message_stop", {"type": "message_stop"}),
        ]
        return Response("".join(events), content_type="text/event-stream")

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
