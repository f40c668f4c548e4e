"""Hypothesis strategies for OpenAI Responses API input items (SPEC RESP-1..RESP-8).

The chat-completions histories of `conformance.histories`, mapped faithfully by
`conformance.formats.responses.from_chat`, with what a Responses history holds beside them:
``reasoning`` items, earlier summaries as ``compaction`` items, and the shapes real traffic
carries. The rules these histories are judged by are `conformance.formats.responses`'s, which
imports no Hypothesis.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from .formats.responses import ANSWERED_BY, Item, from_chat, kind
from .histories import histories as chat_histories

_OPAQUE_TEXT = st.binary(min_size=12, max_size=48).map(lambda b: "gAAAAA" + b.hex())
"""Stand-in for provider-encrypted content: opaque, unique per draw."""


@st.composite
def _decorated(draw: st.DrawFn, chat: list[dict[str, Any]], reasoning: bool | None, compaction: bool | None) -> list[Item]:
    """``chat`` as items, with reasoning items before assistant output (as a reasoning model
    emits them), an earlier ``[Context Summary]`` maybe standing as a provider compaction item,
    and the shapes real traffic carries (`_as_sent`)."""
    items = from_chat(chat)
    decorated: list[Item] = []
    custom: set[str] = set()
    reasons = compacted = 0
    for n, item in enumerate(items):
        previous = kind(decorated[-1]) if decorated else None
        starts_output = item.get("role") == "assistant" or (kind(item) == "function_call" and previous not in ANSWERED_BY)
        if starts_output and previous != "reasoning" and (reasoning or (reasoning is None and draw(st.booleans()))):
            reasons += 1
            decorated.append({"type": "reasoning", "id": f"rs_{reasons:04d}", "summary": [{"type": "summary_text", "text": f"Step {n}: decide what to do next."}], "encrypted_content": draw(_OPAQUE_TEXT)})
        is_summary = item.get("role") == "user" and isinstance(item.get("content"), str) and item["content"].startswith("[Context Summary]")
        if is_summary and (compaction or (compaction is None and draw(st.booleans()))):
            compacted += 1
            decorated.append({"type": "compaction", "id": f"cmp_{compacted:04d}", "encrypted_content": draw(_OPAQUE_TEXT)})
            continue
        decorated.append(_as_sent(draw, item, n, custom))
    return decorated


def _as_sent(draw: st.DrawFn, item: Item, n: int, custom: set[str]) -> Item:
    """One item as agents send it: calls with ids, maybe a custom tool call (Codex's
    ``apply_patch``: free-form ``input``, answered by a ``custom_tool_call_output``) or a
    ``status``; outputs maybe as a list of parts; user and system messages maybe without
    ``type`` (the API's EasyInputMessage)."""
    if kind(item) == "function_call":
        if draw(st.booleans()):
            custom.add(item["call_id"])
            return {"type": "custom_tool_call", "id": f"ctc_{item['call_id']}", "call_id": item["call_id"], "name": item["name"], "input": item["arguments"]}
        return {**item, "id": f"fc_{item['call_id']}", **({"status": "completed"} if draw(st.booleans()) else {})}
    if kind(item) == "function_call_output":
        output = [{"type": "input_text", "text": item["output"]}] if draw(st.booleans()) else item["output"]
        return {**item, "type": "custom_tool_call_output" if item["call_id"] in custom else "function_call_output", "output": output}
    if item.get("role") == "assistant":
        return {**item, "id": f"msg_{n:04d}", "status": "completed"}
    return {k: v for k, v in item.items() if k != "type"} if draw(st.booleans()) else item


def histories(*, reasoning: bool | None = None, compaction: bool | None = None, **chat_options: Any) -> SearchStrategy[list[Item]]:
    """Valid Responses item histories: `conformance.histories.histories` (same keyword options)
    mapped by `from_chat`, with reasoning items (``reasoning``: True always, None maybe) and an
    earlier summary as a ``compaction`` item (``compaction``: True when the chat history has an
    earlier summary, None maybe). Every history passes `invalid`, RESP-1 and RESP-2 (in-flight
    ones aside) and RESP-3 on itself."""
    if compaction:
        chat_options.setdefault("earlier_summary", True)
    return chat_histories(**chat_options).flatmap(lambda chat: _decorated(chat, reasoning, compaction))
