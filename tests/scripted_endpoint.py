"""A TEST DOUBLE of the OpenAI chat-completions endpoint for the framework loop tests.

It plays the *agent's model*, not the summarizer: it answers from the state of the
conversation it is sent, so a framework's own tool loop runs a fixed script offline:

* after a user message: ``ROUND_CALLS`` parallel calls of the ``read_file`` tool;
* after tool results: more calls until ``ROUNDS_PER_TURN`` tool rounds followed the last
  user message, then a text answer.

It is served through ``httpx.MockTransport`` (no socket, no network) to the framework's own
OpenAI connector, and records every request body, so a test can see what the provider
would have received. Every answer says it is a test double (``system_fingerprint``, ids).
``httpx`` comes with the frameworks (current ``openai`` releases bring ``httpx2`` instead), so it is
imported where the endpoint serves, and this module loads in an install without them.
"""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

ROUND_CALLS = 2
ROUNDS_PER_TURN = 2
TOOL = "read_file"
FINGERPRINT = "fp_compaction-suite-scripted-agent-model"


def rounds_since_user(messages: list[dict[str, Any]]) -> int:
    """Assistant messages with tool calls after the last user message."""
    count = 0
    for message in reversed(messages):
        if message.get("role") == "user":
            break
        if message.get("role") == "assistant" and message.get("tool_calls"):
            count += 1
    return count


class ScriptedEndpoint:
    """The scripted agent model behind ``httpx.MockTransport``; ``tool`` is the name the framework registered."""

    def __init__(self, tool: str = TOOL) -> None:
        self.tool = tool
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)

    def answer(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """The assistant message the script gives for ``messages``."""
        last = messages[-1].get("role")
        if last == "user" or (last == "tool" and rounds_since_user(messages) < ROUNDS_PER_TURN):
            calls = []
            for _ in range(ROUND_CALLS):
                n = next(self._ids)
                calls.append({"id": f"call_s{n}", "type": "function", "function": {"name": self.tool, "arguments": json.dumps({"path": f"f{n}.py"})}})
            return {"role": "assistant", "content": None, "tool_calls": calls}
        return {"role": "assistant", "content": f"done after {rounds_since_user(messages)} tool rounds"}

    def handle(self, request: httpx.Request) -> httpx.Response:
        import httpx

        body = json.loads(request.content)
        self.requests.append(body)
        message = self.answer(body["messages"])
        completion = {
            "id": f"chatcmpl-scripted-{len(self.requests)}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": body.get("model", "scripted"),
            "system_fingerprint": FINGERPRINT,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop", "logprobs": None}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        return httpx.Response(200, json=completion)

    def transport(self) -> httpx.MockTransport:
        import httpx

        return httpx.MockTransport(self.handle)

    def async_client(self) -> Any:
        import httpx
        import openai

        # openai 3.x is typed against httpx2's client; the frameworks' connectors and this transport are
        # httpx's, which it drives all the same (the loop tests run through it)
        client = httpx.AsyncClient(transport=self.transport())
        return openai.AsyncOpenAI(api_key="scripted", base_url="http://scripted.invalid/v1", http_client=client, max_retries=0)  # type: ignore[arg-type]


class ScriptedResponsesEndpoint(ScriptedEndpoint):
    """The same scripted agent model on the Responses API (``POST /responses``, stateless: each request
    carries the whole input), by `scripted_agent.next_step`'s policy: for a framework whose agent speaks
    Responses (Semantic Kernel's ``OpenAIResponsesAgent``). Every response says it is a test double (ids)."""

    def handle(self, request: httpx.Request) -> httpx.Response:
        import httpx
        from scripted_agent import next_step

        body = json.loads(request.content)
        self.requests.append(body)
        n = len(self.requests)
        output = [item | {"name": self.tool} if item["type"] == "function_call" else item for item in next_step(list(body["input"]), n)]
        usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15, "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}
        response = {
            "id": f"resp_scripted_{n}", "object": "response", "created_at": 1_700_000_000, "status": "completed",
            "model": body.get("model", "scripted"), "output": output, "parallel_tool_calls": True, "tool_choice": "auto",
            "tools": [], "error": None, "incomplete_details": None, "instructions": None, "metadata": {},
            "temperature": 1.0, "top_p": 1.0, "text": {"format": {"type": "text"}}, "usage": usage,
        }  # fmt: skip
        return httpx.Response(200, json=response)
