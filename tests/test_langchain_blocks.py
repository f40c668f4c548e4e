"""Tool results as LangChain holds them, a string or a list of content blocks (``adapters/_langchain_blocks.py``):
the LangChain-family conversions hold every other string result as one text block and give a result left as
it was back as given; deepagents' eviction path offloads a large result in either form (the installed
release has deepagents PR #674's fix)."""

from __future__ import annotations

import pytest

from compaction_suite.adapters._langchain_blocks import given_back, held


def _round(call_id: str, text: str) -> list[dict]:
    call = {"id": call_id, "type": "function", "function": {"name": "search", "arguments": "{}"}}
    return [{"role": "assistant", "content": None, "tool_calls": [call]}, {"role": "tool", "tool_call_id": call_id, "content": text}]


HISTORY = [{"role": "user", "content": "find all three"}, *_round("c1", "A" * 900), *_round("c2", "B" * 900), *_round("c3", "C" * 900), {"role": "assistant", "content": "done"}]


def test_every_other_string_result_is_one_text_block() -> None:
    assert [held("x", k) for k in range(3)] == ["x", [{"type": "text", "text": "x"}], "x"]
    assert held("", 1) == "" and held([{"type": "text", "text": "x"}], 1) == [{"type": "text", "text": "x"}]
    assert given_back([{"type": "text", "text": "x"}], "x") == "x"
    assert given_back([{"type": "text", "text": "y"}], "x") == [{"type": "text", "text": "y"}]
    assert given_back("[cleared]", "x") == "[cleared]"


def test_the_chat_conversion_holds_blocks_and_gives_the_history_back() -> None:
    lc = pytest.importorskip("langchain_core.messages")
    from compaction_suite.adapters.langchain import from_langchain, to_langchain

    converted, notes = to_langchain(HISTORY)
    results = [m.content for m in converted if isinstance(m, lc.ToolMessage)]
    assert results == ["A" * 900, [{"type": "text", "text": "B" * 900}], "C" * 900]
    assert from_langchain(converted, notes) == HISTORY
    converted[4] = converted[4].model_copy(update={"content": "[cleared]"})  # the block result replaced
    assert from_langchain(converted, notes)[4]["content"] == "[cleared]"


def test_deepagents_eviction_offloads_a_result_held_as_blocks() -> None:
    pytest.importorskip("deepagents")
    from compaction_suite.adapters import deepagents
    from compaction_suite.conformance import offloads
    from compaction_suite.conformance.settings import Settings

    compactor = deepagents.eviction(Settings(), evict_tokens=100)
    out = compactor.compact(HISTORY, iteration=1)
    assert offloads.kept_over_limit(HISTORY, out, 100) is None
    assert offloads.unreadable(HISTORY, out, compactor.read_offload, compactor.capabilities["offloads"]) is None
