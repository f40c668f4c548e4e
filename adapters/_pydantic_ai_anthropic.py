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

from ._common import requires
from ._server_compaction import AGENT_TIMEOUT, PROBE, Sent, blocks, last_step, output, sent_in, text
from .pydantic_ai import EXTRA

MODEL_NAME = "claude-sonnet-4-6"
"""A model that compacts server-side (Anthropic's compaction guide); the double answers any."""


class NotRecorded(ValueError):
    """A block pydantic-ai has no part for here (an image, a document): the history is returned unchanged."""


def to_messages(messages: list[dict[str, Any]], provider: str) -> list[Any]:
    """pydantic-ai's messages for Messages API messages, as it records an Anthropic conversation: a request
    of user prompts and tool returns per user message, a response of the model's parts per assistant message."""
    pm = requires("pydantic_ai.messages", EXTRA)
    names = {b.get("id"): str(b.get("name", "")) for m in messages for b in blocks(m) if b.get("type") == "tool_use"}
    out: list[Any] = []
    for message in messages:
        parts: list[Any] = []
        for block in blocks(message):
            kind = block.get("type")
            if message.get("role") == "user" and kind == "text":
                parts.append(pm.UserPromptPart(content=str(block.get("text", ""))))
            elif kind == "tool_result":
                call = block.get("tool_use_id")
                parts.append(pm.ToolReturnPart(tool_name=names.get(call, ""), content=text(block.get("content")), tool_call_id=str(call)))
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
        return text(results[ctx.tool_call_id].get("content"))

    names = dict.fromkeys(str(b.get("name")) for b in blocks(step) if b.get("type") == "tool_use")
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
    client = anthropic.AsyncAnthropic(base_url=base_url, api_key=settings.api_key, http_client=http, timeout=max(settings.summarizer_timeout, AGENT_TIMEOUT), max_retries=0)
    model = AnthropicModel(MODEL_NAME, provider=AnthropicProvider(anthropic_client=client))
    system = request.get("system")
    agent = pydantic_ai.Agent(
        model, instructions=text(system) or None, tools=_tools(pydantic_ai, messages[at], results),
        capabilities=[capability], model_settings=cast(Any, {"extra_body": {SCRIPTED: blocks(messages[at])}}),
    )  # fmt: skip
    try:
        try:
            kept = await _iterate(agent, None, history, usage)
            await _iterate(agent, text(turn[0]["content"]) if turn else PROBE, kept, usage)
        except Exception as error:
            body = sent_in(error)
            if body is None:
                raise
            wire = [m for m in body.get("messages") or [] if isinstance(m, dict)]
            return output(request, at, [next((m for m in reversed(wire) if m.get("role") == "assistant"), {})])
        raise RuntimeError("pydantic-ai sent no request after the history's last step")
    finally:
        await client.close()
