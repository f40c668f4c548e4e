"""Replay across wire formats (benchmarks/across_formats.py): conversions used only where they
are faithful, checked on every history; compactors of every format replayed on one trace."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import ClassVar

import pytest
from native_logs import claude_code_log

from compaction_suite.benchmarks.across_formats import NotFaithful, from_chat, to_chat
from compaction_suite.benchmarks.replay import replay
from compaction_suite.benchmarks.traces.claude_code_messages import (
    import_claude_code_messages,
)
from compaction_suite.benchmarks.traces.codex import import_codex
from compaction_suite.benchmarks.traces.format import read_trace
from compaction_suite.conformance.formats import ANTHROPIC, RESPONSES
from compaction_suite.conformance.settings import Settings
from compaction_suite.reference import split_rounds

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "cassettes" / "traces" / "stdlib-explorer-seed1.jsonl"

HISTORY = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Fix the build."},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "run", "arguments": '{"command":  "make"}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
    {"role": "assistant", "content": "It builds."},
]


@pytest.fixture(scope="module")
def sliced() -> list[dict]:
    _, messages = read_trace(TRACE)
    return [m for r in split_rounds(messages)[:60] for m in r.messages]


@pytest.mark.parametrize("wire_format", [RESPONSES, ANTHROPIC])
def test_faithful_both_ways_with_the_arguments_text_restored(wire_format):
    native = from_chat(HISTORY, wire_format)
    assert native != HISTORY
    assert to_chat(native, wire_format, arguments={"call_1": '{"command":  "make"}'}) == HISTORY


def test_what_has_no_chat_form_is_named_not_converted():
    _, items = import_codex(ROOT / "tests" / "fixtures" / "codex" / "rollout-2025-10-01T09-00-00-tools.jsonl")
    with pytest.raises(NotFaithful, match=r"item 1 \(compaction cmp_01\) has no chat-completions form"):
        to_chat(items, RESPONSES)
    thinking = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"}, {"type": "text", "text": "x"}]}]}
    with pytest.raises(NotFaithful, match="'thinking' block has no chat-completions form"):
        to_chat(thinking, ANTHROPIC)
    with pytest.raises(NotFaithful, match="does not convert back"):  # a detail Responses input parts do not carry
        from_chat([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AA==", "detail": "low"}}]}], RESPONSES)


def _examples(name: str):
    sys.path.insert(0, str(ROOT / "examples" / "python"))
    try:
        return __import__(name).factory(Settings(threshold_iterations=4, keep_recent_rounds=2))
    finally:
        sys.path.pop(0)


@pytest.mark.parametrize("module", ["responses_truncating", "anthropic_truncating"])
def test_a_compactor_of_another_format_replays_on_a_chat_trace(sliced, module):
    run = replay(sliced, _examples(module))
    assert not run.errors, run.errors[:3]
    assert any(call.compacted for call in run.calls)
    assert not run.violations, run.violations[:3]


def test_strands_sliding_window_replays_on_a_chat_trace(sliced):
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    from compaction_suite.adapters.strands import sliding_window

    run = replay(sliced, sliding_window(Settings(base_url="http://127.0.0.1:9/v1"), window_size=12))
    assert not run.errors and any(call.compacted for call in run.calls)


class FoldsIntoACompactionItem:
    """A TEST DOUBLE of a Responses compactor that folds everything into an opaque compaction item."""

    capabilities: ClassVar[dict[str, str]] = {"wire_format": RESPONSES}

    def compact(self, items, *, iteration):
        return [*items[:1], {"type": "compaction", "id": "cmp_double", "encrypted_content": "opaque"}] if iteration >= 3 else items


def test_an_output_with_no_chat_form_is_reported_not_measured(sliced):
    run = replay(sliced, FoldsIntoACompactionItem())
    assert not run.errors and not run.comparable
    assert all("has no chat-completions form" in e for e in run.not_comparable)
    assert len(run.not_comparable) == len(run.calls) - 3  # every point from iteration 3 on
    assert not any(call.compacted for call in run.calls)


def test_a_native_trace_replays_through_compactors_of_any_format(tmp_path):
    """A Claude Code session imported as an Anthropic request replays, by its faithful chat form,
    through compactors of every format; what has no chat form is refused by name."""
    header, request = import_claude_code_messages(claude_code_log(tmp_path / "native.jsonl", turns=4, rounds=3))
    messages = to_chat(request, header["wire_format"])
    assert from_chat(messages, ANTHROPIC) == request  # faithful both ways
    for module in ("responses_truncating", "anthropic_truncating", "truncating"):
        run = replay(messages, _examples(module))
        assert len(run.calls) == 16 and not run.errors and not run.violations, (module, run.errors)
        assert any(call.compacted for call in run.calls), module
    claude = ROOT / "tests" / "fixtures" / "claude-code"
    header, request = import_claude_code_messages(claude / "session-tools.jsonl")
    with pytest.raises(NotFaithful, match="'thinking' block"):
        to_chat(request, header["wire_format"])
    header, request = import_claude_code_messages(claude / "session-interrupted.jsonl")
    with pytest.raises(NotFaithful, match=r"\['is_error'\] of a 'tool_result'"):  # the importer's answer to an unanswered call
        to_chat(request, header["wire_format"])


def test_an_unknown_wire_format_is_named_in_the_error():
    with pytest.raises(ValueError, match="unknown wire format 'gemini'"):
        to_chat(HISTORY, "gemini")
