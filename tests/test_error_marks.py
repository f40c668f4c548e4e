"""CORE-62's judge (`conformance.error_marks`): a tool result the provider marks as an error keeps
the mark when a compaction replaces its content in place; and deepagents' eviction on an agent of
``ChatAnthropic`` (``deepagents:eviction``, format ``anthropic-messages``), whose installed release has
PR #1482's fix."""

from __future__ import annotations

import copy

import pytest

from compaction_suite.conformance import error_marks, formats
from compaction_suite.conformance.formats import anthropic

ANTH = formats.get(formats.ANTHROPIC)
CHAT = formats.get(formats.CHAT)
TRACE = "Traceback (most recent call last):\n  File \"build.py\", line 3, in run\nRuntimeError: exit status 2\n" * 40


def _request(*, mark: bool = True, call: str = "toolu_1") -> dict:
    error = {"type": "tool_result", "tool_use_id": call, "content": [{"type": "text", "text": TRACE}], **({"is_error": True} if mark else {})}
    return {
        "messages": [
            {"role": "user", "content": "build it"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": call, "name": "bash", "input": {"cmd": "make"}}]},
            {"role": "user", "content": [error]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_2", "name": "bash", "input": {"cmd": "make -k"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "ok"}]},
            {"role": "assistant", "content": "Built, with one step failing first."},
        ]
    }


def _replaced(request: dict, **block: object) -> dict:
    out = copy.deepcopy(request)
    out["messages"][2]["content"] = [{"type": "tool_result", "tool_use_id": "toolu_1", **block}]
    return out


def test_a_replaced_result_without_its_mark_is_caught() -> None:
    history = _request()
    for out in (_replaced(history, content="[cleared]"), _replaced(history, content="[cleared]", is_error=False)):
        found = error_marks.error_mark_kept(ANTH, history, out)
        assert found is not None and found.reason_id == "error-mark-dropped"
        assert "call 'toolu_1', which the input marks as an error (is_error: true), with its content replaced ('[cleared]')" in found
    assert "(is_error: false)" in str(error_marks.error_mark_kept(ANTH, history, _replaced(history, content="[cleared]", is_error=False)))


def test_a_result_marked_still_kept_or_removed_passes() -> None:
    history = _request()
    assert error_marks.error_mark_kept(ANTH, history, _replaced(history, content="[cleared]", is_error=True)) is None
    assert error_marks.error_mark_kept(ANTH, history, history) is None
    kept_tail = {"messages": history["messages"][3:]}
    kept_tail["messages"].insert(0, {"role": "user", "content": "Summary: make failed once."})
    assert error_marks.error_mark_kept(ANTH, history, kept_tail) is None  # removed with its call: CORE-12's


def test_what_the_compaction_did_not_change_is_not_judged() -> None:
    """Decision: a result sent with the content it had (here as a string, a breakpoint added) is not
    compacted; a mark it lacks is a conversion's."""
    history = _request()
    out = _replaced(history, content=[{"type": "text", "text": TRACE, "cache_control": {"type": "ephemeral"}}])
    out["messages"][-1]["content"] = "Built."
    assert error_marks.error_mark_kept(ANTH, history, out) is None
    assert error_marks.error_mark_kept(ANTH, history, _replaced(history, content=TRACE)) is None


def test_unmarked_reused_and_other_formats_are_not_judged() -> None:
    assert error_marks.error_mark_kept(ANTH, _request(mark=False), _replaced(_request(mark=False), content="[cleared]")) is None
    reused = _request()
    reused["messages"][3]["content"][0]["id"] = "toolu_1"
    reused["messages"][4]["content"][0]["tool_use_id"] = "toolu_1"
    assert error_marks.marked(ANTH, reused) == {}
    chat = [{"role": "user", "content": "x"}, {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "c", "content": "boom"}]
    assert error_marks.marked(CHAT, chat) == {} and error_marks.error_mark_kept(CHAT, chat, chat[:1]) is None


def test_every_output_judges_it() -> None:
    from compaction_suite.conformance import judges

    history = _request()
    found = judges.every_output(ANTH, history, _replaced(history, content="[cleared]"), [], ("anthropic",))
    assert found["CORE-62"] is not None and "CORE-62" in ANTH.judged and "CORE-62" not in CHAT.judged


def test_deepagents_eviction_keeps_the_error_mark() -> None:
    """The installed deepagents (past 0.4.4, PR #1482) evicts a failed call's long output to
    ``/large_tool_results/`` and langchain-anthropic sends the notice with ``is_error: true``."""
    pytest.importorskip("deepagents")
    pytest.importorskip("langchain_anthropic")
    from compaction_suite.adapters import deepagents
    from compaction_suite.conformance.settings import Settings

    compactor = deepagents.eviction(Settings(), format="anthropic-messages", evict_tokens=100)
    assert compactor.capabilities["wire_format"] == "anthropic-messages"
    history = _request()
    out = compactor.compact(history, iteration=1)
    result = anthropic.blocks(out["messages"][2])[0]
    assert "/large_tool_results/toolu_1" in str(result["content"]) and result.get("is_error") is True
    assert error_marks.error_mark_kept(ANTH, history, out) is None
    with pytest.raises(ValueError, match="path 'eviction' takes format"):
        deepagents.eviction(Settings(), format="responses")
