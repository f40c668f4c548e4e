"""A declared kept window (SPEC CORE-71): the judge, and Strands' routine sliding window declaring its
``window_size`` and keeping it at the installed release (strands-agents/harness-sdk#578 is caught at 1.1.0 by
the bugs run). No network."""

from __future__ import annotations

import pytest

from compaction_suite.conformance import formats, judges
from compaction_suite.conformance.capabilities import CapabilityError, declared
from compaction_suite.conformance.formats import anthropic as anthropic_format
from compaction_suite.conformance.settings import Settings


def _history(rounds: int) -> list[dict]:
    out: list[dict] = []
    for i in range(rounds):
        out += [{"role": "user", "content": f"Read file {i}."}]
        out += [{"role": "assistant", "content": "", "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": "readFile", "arguments": "{}"}}]}]
        out += [{"role": "tool", "tool_call_id": f"c{i}", "content": f"line {i}\n" * 5}, {"role": "assistant", "content": f"Read {i}."}]
    return out


def test_a_compaction_over_the_window_that_keeps_every_item_is_named() -> None:
    fmt = formats.get(formats.CHAT)
    history = _history(4)
    masked = [dict(m, content="The tool result was too large!") if m.get("tool_call_id") == "c3" else m for m in history]
    found = judges.kept_items_fit(fmt, history, masked, 6)
    assert found is not None and found.reason_id == "kept-items-over-window" and "16 items compacted to 16, over the 6" in str(found)
    assert judges.kept_items_fit(fmt, history, history[-6:], 6) is None  # slid to the window
    assert judges.kept_items_fit(fmt, history, history, 6) is None  # unchanged: FIRE-1's to judge


def test_only_a_positive_integer_declares_a_window() -> None:
    from types import SimpleNamespace

    with pytest.raises(CapabilityError, match="kept_items"):
        declared(SimpleNamespace(capabilities={"kept_items": 0}))


def test_strands_routine_sliding_window_declares_and_keeps_its_window() -> None:
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    from compaction_suite.adapters import strands

    target = strands.sliding_window(Settings(), window_size=6)
    assert declared(target).kept_items == 6
    fmt = formats.get(formats.ANTHROPIC)
    request = anthropic_format.from_chat(_history(5))
    out = target.compact(request, iteration=1)
    assert len(out["messages"]) <= 6 and judges.kept_items_fit(fmt, request, out, 6) is None
