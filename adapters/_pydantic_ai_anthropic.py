"""pydantic-ai's ``AnthropicCompaction`` driven by pydantic-ai's ``Agent`` loop on ``AnthropicModel`` and the
suite's Messages API test double (SPEC Part A, "Wire formats", Decision: the Messages API's server-side
compaction; ANTH-7, COST-1).

The history arrives as a Messages API request part. Its last assistant message is the step the agent's
model answers (`_langchain_server_compaction.last_step`, the same reading of a loop's end); the messages
before it are the ``message_history`` the ``Agent`` is run with, as pydantic-ai records an Anthropic
conversation (`to_messages`), the ``system`` the agent's ``instructions``. Each request carries the step's
blocks to answer with (`summarizer_apis.SCRIPTED`, in ``extra_body``); the tools answer the step's calls with
the history's results. ``AnthropicCompaction(token_threshold=...)`` puts the ``compact_20260112`` edit on every
request, and the double compacts as the API does when the input reaches it.

The output is the next request pydantic-ai sends after the step (a step without calls: the next turn's,
its probe user message taken off), read on the wire by an ``httpx`` request hook, which ends the run there:
its messages from the compaction block on (the API drops the blocks before it), the history's own messages
after the step standing for their re-encoding. Where the double did not compact, the history comes back
unchanged. The usage pydantic-ai reports for the runs (``AgentRun.usage()``, what ``result.usage()`` is) is
the compactor's ``reported_usage`` (SPEC COST-1).
"""

from __future__ import annotations

import copy
import json
from typing import Any, cast

PROBE = "compaction-suite: next turn (probe)"
MODEL_NAME = "claude-sonnet-4-6"
"""A model that compacts server-side (Anthropic's compaction guide); the double answers any."""


class NotRecorded(ValueError):
    """A block pydantic-ai has no part for here (an image, a document): the history is returned unchanged."""


class Sent(Exception):
    """Raised by the request hook on the request after the step: ends the run."""

    def __init__(self, body: dict[str, Any]) -> None:
        super().__init__("request read")
        self.body = body


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [{"type": "text", "text": content}] if isinstance(content, str) else [b for b in content or [] if isinstance(b, dict)]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content or [] if isinstance(b, dict))


def to_messages(messages: list[dict[str, Any]], provider: str) -> list[Any]:
    """pydantic-ai's messages for Messages API messages, as it records an Anthropic conversation: a request
    of user prompts and tool returns per user message, a response of the model's parts per assistant message."""
    pm = __import__("pydantic_ai.messages", fromlist=["ModelRequest"])
    names = {b.get("id"): str(b.get("name", "")) for m in messages for b in _blocks(m) if b.get("type") == "tool_use"}
    out: list[Any] = []
    for message in messages:
        parts: list[Any] = []
        for block in _blocks(message):
            kind = block.get("type")
            if message.get("role") == "user" and kind == "text":
                parts.append(pm.UserPromptPart(content=str(block.get("text", ""))))
            elif kind == "tool_result":
                call = block.get("tool_use_id")
                parts.append(pm.ToolReturnPart(tool_name=names.get(call, ""), content=_text(block.get("content")), tool_call_id=str(call)))
            elif kind == "text":
                parts.append(pm.TextPart(content=str(block.get("text", ""))))
            elif kind == "tool_use":
                parts.append(pm.ToolCallPart(tool_name=str(block.get("name")), args=block.get("input"), tool_call_id=str(block.get("id"))))
            elif kind == "thinking":
                parts.append(pm.ThinkingPart(content=str(block.get("thinking", "")), signature=block.get("signature"), provider_name=provider))
            elif kind == "compaction":
                parts.append(pm.CompactionPart(content=block.get("content"), provider_name=provider))
            else:
                raise NotRecorded(f"a {kind!r} block has no pydantic-ai part here")
        if message.get("role") == "user":
            out.append(pm.ModelRequest(parts=parts))
        else:
            out.append(pm.ModelResponse(parts=parts, provider_name=provider, model_name=MODEL_NAME))
    return out


def _tools(pydantic_ai: Any, step: dict[str, Any], results: dict[str, Any]) -> list[Any]:
    async def answer(ctx: Any, **_arguments: Any) -> Any:
        return _text(results[ctx.tool_call_id].get("content"))

    names = dict.fromkeys(str(b.get("name")) for b in _blocks(step) if b.get("type") == "tool_use")
    schema = {"type": "object", "properties": {}, "additionalProperties": True}
    return [pydantic_ai.Tool.from_schema(answer, name=n, description=f"{n} (replayed)", json_schema=schema, takes_ctx=True) for n in names]


class Usage:
    """What pydantic-ai reported of the model usage of the last ``compact`` call's runs (SPEC COST-1)."""

    def __init__(self) -> None:
        self.runs: list[Any] = []

    def reported(self) -> dict[str, int] | None:
        if not self.runs:
            return None
        return {"input_tokens": sum(int(u.input_tokens or 0) for u in self.runs), "output_tokens": sum(int(u.output_tokens or 0) for u in self.runs)}


async def _iterate(agent: Any, prompt: str | None, history: list[Any], usage: Usage) -> list[Any]:
    """One run of the agent's loop, its usage kept whatever ended it."""
    async with agent.iter(prompt, message_history=history) as agent_run:
        try:
            async for _node in agent_run:
                pass
        finally:
            usage.runs.append(agent_run.usage())
        return list(agent_run.result.all_messages()) if agent_run.result is not None else []


async def run(request: dict[str, Any], settings: Any, capability: Any, usage: Usage) -> dict[str, Any]:
    """What pydantic-ai's agent sends the model after the history's last step (module docstring)."""
    import anthropic
    import pydantic_ai
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    from compaction_suite.conformance.summarizer_apis import SCRIPTED

    from ._langchain_server_compaction import last_step

    usage.runs.clear()
    messages = list(request.get("messages") or [])
    plan = last_step(messages)
    if plan is None:
        return copy.deepcopy(request)
    at, results, turn = plan
    try:
        history = to_messages(messages[:at], "anthropic")
    except NotRecorded:
        return copy.deepcopy(request)
    seen: list[int] = []

    async def read(sent: Any) -> None:  # an httpx.Request of the client anthropic uses
        if sent.url.path.rstrip("/").endswith("/messages"):
            seen.append(1)
            if len(seen) == 2:
                raise Sent(json.loads(sent.content))

    http = anthropic.DefaultAsyncHttpxClient(event_hooks={"request": [read]})
    base_url = (settings.base_url or "").removesuffix("/v1") or None
    client = anthropic.AsyncAnthropic(base_url=base_url, api_key=settings.api_key, http_client=http, timeout=settings.summarizer_timeout, max_retries=0)
    model = AnthropicModel(MODEL_NAME, provider=AnthropicProvider(anthropic_client=client))
    system = request.get("system")
    agent = pydantic_ai.Agent(
        model, instructions=_text(system) or None, tools=_tools(pydantic_ai, messages[at], results),
        capabilities=[capability], model_settings=cast(Any, {"extra_body": {SCRIPTED: _blocks(messages[at])}}),
    )  # fmt: skip
    try:
        try:
            kept = await _iterate(agent, None, history, usage)
            await _iterate(agent, _text(turn[0]["content"]) if turn else PROBE, kept, usage)
        except Exception as error:
            body = _sent(error)
            if body is None:
                raise
            return _output(request, messages, at, body)
        raise RuntimeError("pydantic-ai sent no request after the history's last step")
    finally:
        await client.close()


def _sent(error: BaseException | None) -> dict[str, Any] | None:
    while error is not None:
        if isinstance(error, Sent):
            return error.body
        error = error.__cause__ or error.__context__
    return None


def _output(request: dict[str, Any], messages: list[dict[str, Any]], at: int, body: dict[str, Any]) -> dict[str, Any]:
    """The request read, from its last compaction block on, the history's messages after the step for
    what follows; the history unchanged when no compaction block was answered."""
    from compaction_suite.conformance.anthropic_compaction import read_from

    wire = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    step = next((m for m in reversed(wire) if m.get("role") == "assistant"), None)
    if step is None or not any(b.get("type") == "compaction" for b in _blocks(step)):
        return copy.deepcopy(request)
    out: dict[str, Any] = {k: copy.deepcopy(v) for k, v in request.items() if k != "messages"}
    out["messages"] = read_from([copy.deepcopy(step), *copy.deepcopy(messages[at + 1 :])])
    return out
