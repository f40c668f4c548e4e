"""A TEST DOUBLE of the OpenAI Responses API that keeps response chains, for the OpenAI Agents SDK's
``Runner`` path through ``previous_response_id`` (``tests/test_openai_agents_paths.py``).

It plays the agent's model (``POST /v1/responses``: after a user message, ``ROUND_CALLS`` parallel
``read_file`` calls; after their outputs, more calls until ``ROUNDS_PER_TURN`` rounds followed the last
user message, then a text answer) and the compact endpoint (``POST /v1/responses/compact``). Like the real
API it stores a response (its whole input chain and output) unless ``store`` is false, resolves
``previous_response_id`` against what it stored, and refuses what the real API refuses:

* ``previous_response_id`` it did not store: HTTP 404 ``Previous response with id '...' not found.``
  (the answer reported in openai/openai-agents-python#2333 for ``store=False`` runs);
* a chain or input holding a ``function_call`` without its ``function_call_output``: HTTP 400
  ``No tool output found for function call <call_id>.`` (openai/openai-agents-python#2317).

A compaction's output is the chain's user messages and one ``compaction`` item whose content says it
comes from this double. A real HTTP server on 127.0.0.1 (``http.server``, a daemon thread); every
request body is recorded by path.
"""

from __future__ import annotations

import base64
import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ROUND_CALLS = 2
ROUNDS_PER_TURN = 2


def _kind(item: dict[str, Any]) -> str:
    return str(item.get("type", "message"))


def _rounds_since_user(chain: list[dict[str, Any]]) -> int:
    count, previous = 0, None
    for item in reversed(chain):
        if _kind(item) == "message" and item.get("role") == "user":
            break
        if _kind(item) == "function_call" and previous != "function_call":
            count += 1
        previous = _kind(item)
    return count


def unanswered(items: list[dict[str, Any]]) -> str | None:
    """The first ``function_call`` of ``items`` without its output, or None."""
    answered = {i.get("call_id") for i in items if _kind(i) == "function_call_output"}
    return next((str(i.get("call_id")) for i in items if _kind(i) == "function_call" and i.get("call_id") not in answered), None)


class ResponsesEndpoint:
    """The stand-in; use as a context manager. ``requests`` holds (path, body) in arrival order."""

    def __init__(self) -> None:
        self.stored: dict[str, list[dict[str, Any]]] = {}
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.refusals: list[tuple[int, str]] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with endpoint._lock:
                    endpoint.requests.append((self.path, body))
                    status, answer = endpoint.answer(self.path, body)
                    if status != 200:
                        endpoint.refusals.append((status, answer["error"]["message"]))
                if status == 200 and body.get("stream"):
                    data = _sse(answer)
                    content_type = "text/event-stream"
                else:
                    data = json.dumps(answer).encode()
                    content_type = "application/json"
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("X-Test-Double", "compaction-suite responses endpoint")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_port}/v1"

    def __enter__(self) -> ResponsesEndpoint:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    # --- answers

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        chain, refusal = self._chain(body)
        if refusal:
            return refusal
        if path.endswith("/responses/compact"):
            return self._compact(chain)
        if path.endswith("/responses"):
            return self._respond(body, chain)
        return 404, _error(f"no route {path} (compaction-suite responses endpoint)", "not_found")

    def _chain(self, body: dict[str, Any]) -> tuple[list[dict[str, Any]], tuple[int, dict[str, Any]] | None]:
        items = body.get("input") or []
        items = [{"type": "message", "role": "user", "content": items}] if isinstance(items, str) else list(items)
        previous = body.get("previous_response_id")
        if previous is None:
            return items, None
        if previous not in self.stored:
            return [], (404, _error(f"Previous response with id '{previous}' not found.", "previous_response_not_found"))
        return self.stored[previous] + items, None

    def _respond(self, body: dict[str, Any], chain: list[dict[str, Any]]) -> tuple[int, dict[str, Any]]:
        missing = unanswered(chain)
        if missing:
            return 400, _error(f"No tool output found for function call {missing}.", None)
        n = next(self._ids)
        if _kind(chain[-1]) == "function_call_output" and _rounds_since_user(chain) >= ROUNDS_PER_TURN:
            output = [{"type": "message", "id": f"msg_se{n}", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "text": f"done after {ROUNDS_PER_TURN} rounds", "annotations": []}]}]
        else:
            output = [
                {"type": "function_call", "id": f"fc_se{n}_{k}", "call_id": f"call_se{n}_{k}", "name": "read_file", "arguments": json.dumps({"path": f"f{n}_{k}.py"}), "status": "completed"}
                for k in range(ROUND_CALLS)
            ]
        response_id = f"resp_stand_in_{n}"
        if body.get("store", True) is not False:
            self.stored[response_id] = chain + output
        return 200, {
            "id": response_id, "object": "response", "created_at": 1_700_000_000, "status": "completed", "model": body.get("model"),
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "error": None,
            "incomplete_details": None, "metadata": {}, "instructions": body.get("instructions"),
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15},
        }

    def _compact(self, chain: list[dict[str, Any]]) -> tuple[int, dict[str, Any]]:
        missing = unanswered(chain)
        if missing:
            return 400, _error(f"No tool output found for function call {missing}.", None)
        users = [{"type": "message", "role": "user", "content": i.get("content")} for i in chain if _kind(i) == "message" and i.get("role") == "user"]
        text = f"compaction-suite responses endpoint: {len(chain)} items compacted"
        item = {"type": "compaction", "id": f"cmp_stand_in_{next(self._ids)}", "encrypted_content": base64.b64encode(text.encode()).decode()}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        return 200, {"id": f"resp_compact_{next(self._ids)}", "object": "response.compaction", "created_at": 1_700_000_000, "output": [*users, item], "usage": usage}


def _sse(response: dict[str, Any]) -> bytes:
    """A streamed answer as the Responses API sends one: created, each output item added and done, completed."""
    started = {**response, "status": "in_progress", "output": []}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": started}]
    for index, item in enumerate(response["output"]):
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": response})
    return b"".join(f"event: {e['type']}\ndata: {json.dumps({**e, 'sequence_number': n})}\n\n".encode() for n, e in enumerate(events))


def _error(message: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}}
