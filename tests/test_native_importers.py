"""Importers of agents' session logs into their own wire formats (FORMAT.md): Codex CLI rollouts
as Responses items, Claude Code sessions as an Anthropic Messages request. Fixtures are written
from the formats' public descriptions (tests/fixtures/codex, tests/fixtures/claude-code)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compaction_suite.benchmarks.traces.claude_code_messages import (
    import_claude_code_messages,
)
from compaction_suite.benchmarks.traces.codex import (
    NO_RESULT,
    CodexImportError,
    import_codex,
)
from compaction_suite.conformance.formats import anthropic, responses

FIXTURES = Path(__file__).parent / "fixtures"
CODEX = FIXTURES / "codex" / "rollout-2025-10-01T09-00-00-tools.jsonl"
CLAUDE = FIXTURES / "claude-code"


def test_codex_rollout_is_valid_responses_input_continuing_from_codex_compaction():
    header, items = import_codex(CODEX, created="2025-10-01")
    assert header["wire_format"] == "responses" and header["id"] == "codex:0199a000-0000-7000-8000-00000000c0de"
    assert responses.invalid(items) is None
    # The compacted line's replacement_history is what Codex sent from then on, then the new turn.
    assert [responses.kind(i) for i in items] == ["message", "compaction", "message", "function_call"]
    assert items[1] == {"type": "compaction", "id": "cmp_01", "encrypted_content": "gAAAAB-opaque-summary"}
    assert responses.in_flight(items)  # the last call has no output yet: it stays in flight
    for said in ("event_msg (2)", "session_meta (1)", "turn_context (1)", "Added: output for an unanswered call (1)", "Dropped: output answering no earlier call (1)", "Replaced: history by a compacted line's replacement_history (1)"):
        assert said in header["notes"], header["notes"]


def test_codex_items_before_compaction_are_kept_as_recorded(tmp_path):
    lines = CODEX.read_text().splitlines()
    cut = tmp_path / "rollout-cut.jsonl"
    cut.write_text("\n".join(line for line in lines if '"compacted"' not in line and "call_04" not in line and "Now run" not in line))
    _, items = import_codex(cut)
    assert responses.invalid(items) is None and not responses.in_flight(items)
    recorded = [json.loads(line)["payload"] for line in lines if '"response_item"' in line]
    assert items[2] == recorded[2]  # reasoning item byte-identical (encrypted_content kept)
    interrupted = [i for i in items if i.get("call_id") == "call_02"]
    assert [responses.kind(i) for i in interrupted] == ["function_call", "function_call_output"] and interrupted[1]["output"] == NO_RESULT
    assert not [i for i in items if i.get("call_id") == "call_99"]


def test_codex_flat_rollout_and_errors(tmp_path):
    flat = tmp_path / "rollout-flat.jsonl"
    flat.write_text(json.dumps({"id": "old-session", "timestamp": "2025-05-01", "instructions": None}) + "\n" + json.dumps({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}) + "\n")
    header, items = import_codex(flat)
    assert header["id"] == "codex:old-session" and items == [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}]
    broken = tmp_path / "rollout-broken.jsonl"
    broken.write_text('{"type": "session_meta", "payload": {}}\nnot json\n')
    with pytest.raises(CodexImportError, match=r"rollout-broken.jsonl:2: not JSON"):
        import_codex(broken)


def test_claude_code_session_as_anthropic_request_keeps_thinking_and_merges_result_lines():
    header, request = import_claude_code_messages(CLAUDE / "session-tools.jsonl", created="2025-06-01")
    assert header["wire_format"] == "anthropic-messages" and "system" not in request
    assert anthropic.invalid(request) is None and not anthropic.in_flight(request)
    recorded = [json.loads(line) for line in (CLAUDE / "session-tools.jsonl").read_text().splitlines()]
    thinking = [b for line in recorded if line.get("type") == "assistant" for b in line["message"]["content"] if b.get("type") == "thinking"]
    assert thinking and all(any(b == t for m in request["messages"] for b in m["content"] if isinstance(b, dict)) for t in thinking)
    # One assistant message per API response, results of a round in one user message.
    assert len({m["role"] for m in request["messages"][::2]}) == 1
    assert any(sum(b.get("type") == "tool_result" for b in m["content"] if isinstance(b, dict)) >= 2 for m in request["messages"] if m["role"] == "user")


def test_claude_code_interrupted_session_changes_only_what_the_api_rejects():
    header, request = import_claude_code_messages(CLAUDE / "session-interrupted.jsonl")
    assert anthropic.invalid(request) is None
    for said in ("Added: tool_result for an unanswered tool_use (1)", "Renamed: a tool_use id used twice in the session (1)"):
        assert said in header["notes"], header["notes"]
    ids = [b["id"] for m in request["messages"] for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]
    assert len(ids) == len(set(ids))
