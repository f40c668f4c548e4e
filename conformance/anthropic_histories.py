"""Hypothesis strategies for the Anthropic Messages API request part (SPEC ANTH-1..ANTH-6).

The chat-completions histories of `conformance.histories`, mapped faithfully by
`conformance.formats.anthropic.from_chat`, with what an Anthropic history holds beside them:
``thinking`` and ``redacted_thinking`` blocks, and the shapes agents send. The rules these
histories are judged by are `conformance.formats.anthropic`'s, which imports no Hypothesis.
"""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from .formats.anthropic import from_chat, length, tokens, tool_results
from .histories import sized_chat, with_tool_media


def _size(chat: list[dict[str, Any]]) -> tuple[int, int]:
    """(tokens, messages) of ``chat`` as a Messages API request: thinking blocks and reminders only add."""
    request = from_chat(chat)
    return tokens(request), length(request)

_SIGNATURE = st.binary(min_size=16, max_size=48).map(lambda b: base64.b64encode(b"\x12" + b).decode("ascii"))
"""Stand-in for a provider signature or redacted-thinking ``data``: opaque and unique per draw, and
standard base64 as Anthropic sends both (a framework that keeps the blob as bytes, as Strands does,
encodes it back the same way; a blob no provider sends would make that round trip look lossy)."""


@st.composite
def _with_thinking(draw: st.DrawFn, request: dict[str, Any], thinking: bool | None) -> dict[str, Any]:
    """Thinking (or, one in four, redacted thinking) blocks first in assistant turns, as an
    extended-thinking model emits them."""
    for m in request["messages"]:
        if m["role"] != "assistant" or not (thinking or (thinking is None and draw(st.booleans()))):
            continue
        if draw(st.integers(0, 3)) == 0:
            block = {"type": "redacted_thinking", "data": draw(_SIGNATURE)}
        else:
            block = {"type": "thinking", "thinking": f"The user wants progress; next: {m['content'][-1].get('name', 'answer') if m['content'] else 'answer'}.", "signature": draw(_SIGNATURE)}
        m["content"] = [block, *m["content"]]
    return request


@st.composite
def _as_sent(draw: st.DrawFn, request: dict[str, Any]) -> dict[str, Any]:
    """What agents send beside the canonical shapes (SPEC ANTH-5): a ``tool_result`` whose
    content is a list of text blocks, maybe marked ``is_error``; a text block after a round's
    results (Claude Code's reminders); a ``cache_control`` breakpoint on a message's last block;
    an assistant text turn as a plain string."""
    messages = request["messages"]
    for m in messages:
        if not isinstance(m["content"], list) or not m["content"]:
            continue
        for block in m["content"]:
            if block.get("type") == "tool_result" and isinstance(block["content"], str) and block["content"] and draw(st.booleans()):
                block["content"] = [{"type": "text", "text": block["content"]}]
                if draw(st.integers(0, 3)) == 0:
                    block["is_error"] = True
        if tool_results(m) and draw(st.integers(0, 3)) == 0:
            m["content"].append({"type": "text", "text": "<reminder>Keep the task list current.</reminder>"})
        if m["role"] == "assistant" and [b.get("type") for b in m["content"]] == ["text"] and draw(st.booleans()):
            m["content"] = m["content"][0]["text"]
        elif draw(st.integers(0, 3)) == 0:
            m["content"][-1] = {**m["content"][-1], "cache_control": {"type": "ephemeral"}}
    return request


def histories(*, thinking: bool | None = None, **chat_options: Any) -> SearchStrategy[dict[str, Any]]:
    """Valid Messages API histories: `conformance.histories.histories` (same keyword options)
    mapped by `from_chat`, with thinking blocks in assistant turns (``thinking``: True always,
    None maybe), images and PDFs in some ``readFile`` results (`with_tool_media`) and the shapes
    real traffic carries (`_as_sent`). ``min_tokens`` and
    ``min_messages`` count in this format (`tokens`, `length`: ``system`` aside). Every history
    passes `invalid`, ANTH-1, ANTH-2 (in-flight ones aside) and ANTH-3 on itself."""
    chat_options["min_rounds"] = max(1, chat_options.get("min_rounds", 0))  # the API rejects an empty messages list
    chat_options["max_rounds"] = max(chat_options["min_rounds"], chat_options.get("max_rounds", 10))
    return sized_chat(chat_options, _size).flatmap(with_tool_media).map(from_chat).flatmap(lambda r: _with_thinking(r, thinking)).flatmap(_as_sent)
