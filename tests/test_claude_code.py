"""The Claude Code session-log importer (benchmarks/traces/claude_code.py, FORMAT.md).

The fixtures in ``tests/fixtures/claude-code/`` were written for these tests from the format's
public descriptions (line types, ``uuid``/``parentUuid``, Anthropic content blocks); they are
not copies of anyone's session.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compaction_suite.benchmarks import cost
from compaction_suite.benchmarks.replay import replay
from compaction_suite.benchmarks.traces.claude_code import NO_RESULT, ClaudeCodeImportError, import_claude_code
from compaction_suite.benchmarks.traces.format import read_trace, write_trace
from compaction_suite.conformance.entities import CODING_AGENT_TASK_LISTS, entity_ids, latest_task_titles
from compaction_suite.reference import Compactor, IterationsOrTokens, KeepLastMessages, call_in_flight, split_rounds

FIXTURES = Path(__file__).parent / "fixtures" / "claude-code"


@pytest.fixture(scope="module")
def tools_session():
    return import_claude_code(FIXTURES / "session-tools.jsonl", created="2025-06-01")


def test_lines_become_chat_completions_messages(tools_session):
    _, messages = tools_session
    assert [m["role"] for m in messages] == ["user", "user", "assistant", "tool", "tool", "assistant", "tool", "assistant", "tool", "user", "assistant"]
    first = messages[2]
    assert first["content"] == "I'll read the test and the module."  # thinking dropped, text kept
    assert [c["id"] for c in first["tool_calls"]] == ["toolu_01", "toolu_02"]  # one response, four lines
    assert json.loads(first["tool_calls"][0]["function"]["arguments"]) == {"file_path": "/repo/tests/test_api.py"}
    assert [m["tool_call_id"] for m in messages[3:5]] == ["toolu_02", "toolu_01"]  # results in log order
    assert messages[4]["content"] == "def test_get(): assert get(1)"  # one text part: a string
    assert messages[5]["content"] is None  # tool calls only
    assert messages[9]["content"][1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    assert messages[-1] == {"role": "assistant", "content": "Fixed: get() now returns the order."}
    assert not call_in_flight(split_rounds(messages))


def test_the_header_says_what_was_left_out(tools_session):
    header, _ = tools_session
    assert header["id"] == "claude-code:8f0e2a8c-0000-4000-8000-00000000c0de"
    notes = header["notes"]
    assert "file-history-snapshot (1)" in notes and "summary (1)" in notes and "system (1)" in notes
    assert "assistant thinking block (1)" in notes
    assert "1 user/assistant line(s) off the active branch" in notes  # the sidechain
    assert "Changed only" not in notes  # nothing the API would reject


def test_ids_and_the_to_do_list_are_found_in_an_imported_session(tools_session):
    _, messages = tools_session
    assert entity_ids(messages) == ["ord_77", "4411", "sku-1", "sku-2"]
    assert latest_task_titles(messages, CODING_AGENT_TASK_LISTS) == ["Fix get()", "Run the tests"]


def test_an_interrupted_and_rewound_session_is_changed_only_where_the_api_would_reject_it():
    header, messages = import_claude_code(FIXTURES / "session-interrupted.jsonl")
    assert "Old answer (rewound)." not in json.dumps(messages)  # the rewound turn is off the branch
    assert messages[1]["tool_calls"][0]["id"] == messages[4]["tool_calls"][0]["id"] == "toolu_10"  # reused, kept
    assert messages[2] == {"role": "tool", "tool_call_id": "toolu_10", "content": NO_RESULT}
    assert messages[3] == {"role": "user", "content": "Stop, use git ls-files instead."}
    assert "late result" not in json.dumps(messages)  # an orphan result
    rounds = split_rounds(messages)
    assert call_in_flight(rounds) and rounds[-1].pending == frozenset({"toolu_11"})
    notes = header["notes"]
    assert "result for an unanswered call (1" in notes and "tool_result answering no call of its round (1)" in notes


def test_an_imported_session_round_trips_and_replays(tools_session, tmp_path):
    header, messages = tools_session
    write_trace(tmp_path / "t.jsonl", header, messages)
    assert read_trace(tmp_path / "t.jsonl") == (header, messages)
    [(loaded_header, loaded)] = cost.load_traces([FIXTURES / "session-tools.jsonl"], "claude-code-chat")
    assert loaded == messages and loaded_header["id"] == header["id"]
    run = replay(loaded, Compactor(KeepLastMessages(2), IterationsOrTokens(threshold_iterations=1)))
    assert run.calls and not run.errors and not run.violations
    assert run.summary()["entity_ids_tracked"] == 4 and run.summary()["task_list_always_kept"] is not None


@pytest.mark.parametrize(
    ("text", "match"),
    [("not json\n", ":1: not JSON"), ("[1]\n", ":1: expected a JSON object"),
     ('{"type": "user", "uuid": "u", "parentUuid": null}\n', "without a 'message' object")],
    ids=["not-json", "not-an-object", "no-message"],
)
def test_malformed_logs_raise_naming_the_line(tmp_path, text, match):
    path = tmp_path / "bad.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ClaudeCodeImportError, match=match):
        import_claude_code(path)
