"""A TEST DOUBLE of OpenAI's ``POST /v1/responses/compact`` for the loop tests.

It answers as the endpoint is documented (the ``CompactedResponse`` type of the ``openai``
package: "a list of all user messages, followed by a single compaction item"), records every
request body, and says it is a double in every id and in ``encrypted_content``. It runs on
127.0.0.1 (werkzeug, a daemon thread), so a client built from a base URL, as an adapter builds
it, reaches it exactly as the Runner's client does.
"""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Any, Self

from compaction_suite.conformance.summarizer_server import QuietHandler
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

USAGE = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15, "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}


def _is_user(item: dict[str, Any]) -> bool:
    return item.get("role") == "user" and item.get("type", "message") == "message"


class CompactEndpoint:
    """``with CompactEndpoint() as endpoint: endpoint.base_url``; ``endpoint.requests`` holds the bodies."""

    def __init__(self, fail_with: int | None = None) -> None:
        self.fail_with = fail_with
        """An HTTP status to answer every request with (an OpenAI-style error body), or None."""
        self.requests: list[dict[str, Any]] = []
        self._server = make_server("127.0.0.1", 0, self._app, threaded=True, request_handler=QuietHandler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/v1"

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        n = hashlib.sha256(json.dumps(body.get("input"), sort_keys=True).encode()).hexdigest()[:12]  # same request, same answer
        kept = [item for item in body.get("input") or [] if isinstance(item, dict) and _is_user(item)]
        compaction = {"type": "compaction", "id": f"cmp_test_double_{n}", "encrypted_content": f"compaction-suite test double {n}"}
        return {"id": f"resp_compact_test_double_{n}", "object": "response.compaction", "created_at": 1_700_000_000, "output": [*kept, compaction], "usage": USAGE}

    @Request.application  # type: ignore[arg-type]
    def _app(self, request: Request) -> Response:
        if request.path != "/v1/responses/compact":
            return Response(json.dumps({"error": {"message": f"no {request.path} in this test double"}}), status=404, content_type="application/json")
        body = json.loads(request.get_data())
        self.requests.append(body)
        if self.fail_with is not None:
            error = {"error": {"message": f"HTTP {self.fail_with} from the compact endpoint's test double", "type": "server_error", "code": None}}
            return Response(json.dumps(error), status=self.fail_with, content_type="application/json")
        return Response(json.dumps(self.answer(body)), content_type="application/json")

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
