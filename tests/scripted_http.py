"""A TEST DOUBLE of the OpenAI chat-completions endpoint, served over real HTTP on 127.0.0.1.

It plays the agent's model with the script of ``scripted_endpoint.ScriptedEndpoint`` (tool rounds
after each user message, then a text answer), and rejects what the real API rejects, with the real
API's words, so a framework loop that sends a broken history fails the way its users see it:

* a ``tool`` message that answers no ``tool_calls`` of the assistant message before it: HTTP 400
  "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with
  'tool_calls'." (the API's text, spelling included, as quoted in microsoft/semantic-kernel#6350 and #12708);
* an assistant ``tool_calls`` message not followed by a result for each call: HTTP 400 "An assistant
  message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The
  following tool_call_ids did not have response messages: ..." (quoted in microsoft/semantic-kernel#7626).

Every answer says it is a test double (``system_fingerprint``); ``big`` makes each tool round ask for
a file whose tool result the test makes large.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from scripted_endpoint import FINGERPRINT, ScriptedEndpoint
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIEnvironment

ORPHAN = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
UNANSWERED = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "
    "The following tool_call_ids did not have response messages: {ids}"
)


def rejection(messages: list[dict[str, Any]]) -> tuple[str, str] | None:
    """The API's 400 for a malformed tool sequence: (message, param), or None."""
    pending: list[str] = []
    open_calls: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in open_calls:
                return ORPHAN, f"messages.[{i}].role"
            pending = [c for c in pending if c != message.get("tool_call_id")]
            continue
        if pending:
            return UNANSWERED.format(ids=", ".join(pending)), "messages"
        open_calls = set()
        if role == "assistant" and message.get("tool_calls"):
            pending = [c["id"] for c in message["tool_calls"]]
            open_calls = set(pending)
    if pending:
        return UNANSWERED.format(ids=", ".join(pending)), "messages"
    return None


class ScriptedServer:
    """The scripted agent model on ``http://127.0.0.1:<port>/v1``; ``requests`` holds every body, ``rejected`` every 400."""

    def __init__(self, tool: str = "read_file") -> None:
        self.script = ScriptedEndpoint(tool)
        self.requests: list[dict[str, Any]] = []
        self.rejected: list[str] = []
        self._server = make_server("127.0.0.1", 0, self._app, threaded=True)
        self.base_url = f"http://127.0.0.1:{self._server.server_port}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._thread.join(timeout=5)

    def _app(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        return self._answer(Request(environ))(environ, start_response)

    def _answer(self, request: Request) -> Response:
        body = json.loads(request.get_data())
        self.requests.append(body)
        refused = rejection(body["messages"])
        if refused:
            self.rejected.append(refused[0])
            error = {"error": {"message": refused[0], "type": "invalid_request_error", "param": refused[1], "code": None}}
            return Response(json.dumps(error), status=400, content_type="application/json")
        message = self.script.answer(body["messages"])
        completion = {
            "id": f"chatcmpl-scripted-{len(self.requests)}", "object": "chat.completion", "created": 1_700_000_000,
            "model": body.get("model", "scripted"), "system_fingerprint": FINGERPRINT,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop", "logprobs": None}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }  # fmt: skip
        return Response(json.dumps(completion), content_type="application/json")

    def async_client(self) -> Any:
        import openai

        return openai.AsyncOpenAI(api_key="scripted", base_url=self.base_url, max_retries=0)
