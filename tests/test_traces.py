"""Traces: the JSONL format, the recorder, the shipped traces and the importers."""

from __future__ import annotations

import json
import re
import sysconfig
from pathlib import Path

import pytest
from click.testing import CliRunner

from compaction_suite.benchmarks.traces.format import TraceFormatError, make_header, read_trace, write_trace
from compaction_suite.benchmarks.traces.importers import TraceImportError, import_swe_agent, import_tau_bench
from compaction_suite.benchmarks.traces.record import record_trace
from compaction_suite.cli import main
from compaction_suite.reference.rounds import split_rounds

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "cassettes" / "traces"
SWE_AGENT = Path(__file__).resolve().parents[1].parent / "shared" / "traces" / "swe-agent"
STDLIB = Path(sysconfig.get_paths()["stdlib"])


def _history() -> list[dict]:
    calls = [
        {"id": "call_a", "type": "function", "function": {"name": "readFile", "arguments": '{"path": "x"}'}},
        {"id": "call_b", "type": "function", "function": {"name": "searchCode", "arguments": '{"pattern": "y"}'}},
    ]
    return [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Remember: the deploy code is K7-4411."},
        {"role": "assistant", "content": "Two lookups.", "tool_calls": calls},
        {"role": "tool", "tool_call_id": "call_b", "content": "x:1:y"},
        {"role": "tool", "tool_call_id": "call_a", "content": "text é ✓"},
        {"role": "assistant", "content": "Done."},
    ]


def _header(**extra) -> dict:
    return make_header("t-1", "hand-written in tests/test_traces.py", created="2025-01-01",
                       planted_facts=["the deploy code is K7-4411"], **extra)


# -- format -----------------------------------------------------------------


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    header, messages = _header(corrections=["No — use X"]), _history()
    write_trace(path, header, messages)
    assert read_trace(path) == (header, messages)
    lines = path.read_text(encoding="utf-8").split("\n")
    assert len(lines) == len(messages) + 2 and lines[-1] == ""
    assert json.loads(lines[0])["format"] == "compaction-suite-trace"


def _write_lines(path: Path, objects: list) -> None:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")


def test_history_error_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    messages = _history()
    messages[4] = {"role": "tool", "tool_call_id": "call_zzz", "content": "?"}
    _write_lines(path, [_header(), *messages])
    with pytest.raises(TraceFormatError, match=re.escape(f"{path}:6: HIST-3")) as caught:
        read_trace(path)
    assert caught.value.line == 6


def test_unanswered_call_is_reported_at_the_next_message(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    messages = _history()
    del messages[3]
    _write_lines(path, [_header(), *messages])
    with pytest.raises(TraceFormatError, match=re.escape(f"{path}:6: HIST-5")):
        read_trace(path)


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda h: h.pop("entity_ids"), "missing field 'entity_ids'"),
        (lambda h: h.update(version=2), "unsupported version 2"),
        (lambda h: h.update(format="other"), "'format' is 'other'"),
        (lambda h: h.update(planted_facts=[1]), "every item of 'planted_facts'"),
    ],
)
def test_header_errors_name_line_1(tmp_path: Path, change, needle: str) -> None:
    path = tmp_path / "bad.jsonl"
    header = _header()
    change(header)
    _write_lines(path, [header, *_history()])
    with pytest.raises(TraceFormatError, match=re.escape(f"{path}:1: header: ") + ".*" + re.escape(needle)):
        read_trace(path)


def test_invalid_json_and_blank_lines_name_their_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    good = [json.dumps(o) for o in [_header(), *_history()]]
    path.write_text("\n".join(good[:3] + ["{not json"] + good[3:]) + "\n", encoding="utf-8")
    with pytest.raises(TraceFormatError, match=re.escape(f"{path}:4: invalid JSON")):
        read_trace(path)
    path.write_text("\n".join(good[:2] + [""] + good[2:]) + "\n", encoding="utf-8")
    with pytest.raises(TraceFormatError, match=re.escape(f"{path}:3: blank line")):
        read_trace(path)
    path.write_text("", encoding="utf-8")
    with pytest.raises(TraceFormatError, match=re.escape(f"{path}:1: empty file")):
        read_trace(path)


def test_write_refuses_an_invalid_history(tmp_path: Path) -> None:
    path = tmp_path / "never.jsonl"
    with pytest.raises(TraceFormatError, match="HIST-2"):
        write_trace(path, _header(), [{"role": "robot", "content": "hi"}])
    with pytest.raises(TraceFormatError, match="HIST-2: message 0: user message has no string or list 'content'"):
        write_trace(path, _header(), [{"role": "user", "content": 3}])
    with pytest.raises(TraceFormatError, match="content must be a string"):
        write_trace(path, _header(), [{"role": "user", "content": "hi"}, {"role": "assistant", "content": 3}])
    assert not path.exists()


# -- recorder ---------------------------------------------------------------


@pytest.fixture(scope="module")
def short_trace(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same short episode recorded twice (once through the CLI)."""
    folder = tmp_path_factory.mktemp("recorded")
    first, second = folder / "a.jsonl", folder / "b.jsonl"
    record_trace(first, seed=11, rounds=60, created="2025-01-01")
    result = CliRunner().invoke(main, ["traces", "record", "--seed", "11", "--rounds", "60", "--out", str(second), "--created", "2025-01-01"])
    assert result.exit_code == 0, result.output
    return first, second


def test_recorder_is_deterministic(short_trace: tuple[Path, Path], tmp_path: Path) -> None:
    first, second = short_trace
    assert first.read_bytes() == second.read_bytes()
    other = tmp_path / "c.jsonl"
    record_trace(other, seed=12, rounds=60, created="2025-01-01")
    assert other.read_bytes() != first.read_bytes()


def _calls_and_results(messages: list[dict]) -> list[tuple[str, dict, str]]:
    """``(tool name, arguments, result)`` for every call in ``messages``."""
    results = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    return [
        (call["function"]["name"], json.loads(call["function"]["arguments"]), results[call["id"]])
        for m in messages
        for call in m.get("tool_calls", [])
    ]


def test_recorded_episode_is_well_formed(short_trace: tuple[Path, Path]) -> None:
    header, messages = read_trace(short_trace[0])
    assert header["source"].startswith("recorded by compaction_suite.benchmarks.traces.record seed=11 planner=")
    assert "no model involved" in header["source"]
    assert 55 <= len(split_rounds(messages)) <= 66
    names = {name for name, _, _ in _calls_and_results(messages)}
    assert {"readFile", "searchCode", "runCommand", "createEntity", "reportProgress"} <= names
    assert any(len(m.get("tool_calls", [])) > 1 for m in messages)
    assert all(isinstance(m["content"], str) and len(m["content"]) < 300 for m in messages if m["role"] == "assistant")


def test_read_file_returns_the_real_text(short_trace: tuple[Path, Path]) -> None:
    _, messages = read_trace(short_trace[0])
    reads = [(args, result) for name, args, result in _calls_and_results(messages) if name == "readFile"]
    assert reads
    for args, result in reads:
        text = (STDLIB / args["path"]).read_text(encoding="utf-8")
        expected = "\n".join(text.split("\n")[args["start"] - 1 : args["end"]])
        assert result == expected or (result.startswith(expected[:12_000]) and "[... truncated" in result)


def test_search_and_commands_show_real_output(short_trace: tuple[Path, Path]) -> None:
    _, messages = read_trace(short_trace[0])
    calls = _calls_and_results(messages)
    for name, args, result in calls:
        if name == "searchCode":
            for hit in result.splitlines()[:-1]:
                if hit.startswith("[... truncated"):
                    continue
                path, number, text = hit.split(":", 2)
                line = (STDLIB / path).read_text(encoding="utf-8").split("\n")[int(number) - 1]
                assert line.startswith(text) and re.search(args["pattern"], line)
        if name == "runCommand" and args["cmd"].startswith("ls "):
            folder = STDLIB / args["cmd"].split()[-1]
            listed = result.splitlines()[1:-1]
            assert listed == sorted(p.name for p in folder.iterdir() if p.name != "__pycache__")
        if name == "runCommand" and args["cmd"].startswith("wc -l "):
            for row in result.splitlines()[1:-1]:
                count, path = row.split()
                if path != "total":
                    assert int(count) == (STDLIB / path).read_text(encoding="utf-8").count("\n")
    commands = [args["cmd"].split()[0] for name, args, _ in calls if name == "runCommand"]
    assert "ls" in commands


def test_entities_and_facts_match_the_header(short_trace: tuple[Path, Path]) -> None:
    header, messages = read_trace(short_trace[0])
    created = [json.loads(r)["id"] for name, _, r in _calls_and_results(messages) if name == "createEntity"]
    assert created == header["entity_ids"] and all(re.fullmatch(r"ent-[0-9a-f]{10}", i) for i in created)
    users = [m["content"] for m in messages if m["role"] == "user"]
    for fact in header["planted_facts"]:
        assert f"Remember: {fact}." in users
    for correction in header.get("corrections", []):
        assert correction in users and correction.startswith("No — ")


# -- shipped traces ---------------------------------------------------------


def _shipped() -> list[Path]:
    return sorted(SHIPPED.glob("*.jsonl"))


def test_shipped_traces_exist_and_stay_small() -> None:
    files = _shipped()
    assert len(files) >= 4
    assert sum(f.stat().st_size for f in files) < 15_000_000
    assert (SHIPPED / "README.md").is_file()


@pytest.mark.parametrize("path", _shipped(), ids=lambda p: p.name)
def test_shipped_trace_is_valid_and_long(path: Path) -> None:
    header, messages = read_trace(path)
    chars = sum(len(m["content"]) for m in messages if isinstance(m.get("content"), str))
    assert chars / 4 > 80_000
    assert 200 <= len(split_rounds(messages)) <= 610
    assert header["planted_facts"] and header["entity_ids"] and header["corrections"]
    text = path.read_text(encoding="utf-8")
    assert all(entity in text.split("\n", 1)[1] for entity in header["entity_ids"])


# -- importers: hand-written inputs -----------------------------------------


def _tau_records() -> list[dict]:
    call = {"id": "call_1", "type": "function", "function": {"name": "find_user", "arguments": '{"email": "a@b.c"}'}}
    traj = [
        {"role": "system", "content": "policy"},
        {"role": "user", "content": "hi, I want to return an item"},
        {"role": "assistant", "content": None, "tool_calls": [call], "function_call": None},
        {"role": "tool", "tool_call_id": "call_1", "name": "find_user", "content": "user_7"},
        {"role": "assistant", "content": "Found you.", "tool_calls": None, "function_call": None},
        {"role": "user", "content": "###STOP###"},
    ]
    return [
        {"task_id": 3, "reward": 1.0, "info": {}, "traj": traj, "trial": 0},
        {"task_id": 4, "reward": 0.0, "info": {"error": "crash"}, "traj": [], "trial": 0},
        {"task_id": 5, "reward": 0.0, "info": {}, "traj": traj[:2] + [{"role": "assistant", "content": "Sure."}], "trial": 1},
    ]


def test_tau_bench_records_become_traces(tmp_path: Path) -> None:
    source = tmp_path / "tool-calling-gpt-4o.json"
    source.write_text(json.dumps(_tau_records()), encoding="utf-8")
    traces = import_tau_bench(source, created="2025-01-01")
    assert [h["id"] for h, _ in traces] == ["tau-bench:tool-calling-gpt-4o:record-0", "tau-bench:tool-calling-gpt-4o:record-2"]
    header, messages = traces[0]
    assert messages[2] == {"role": "assistant", "content": None, "tool_calls": [_tau_records()[0]["traj"][2]["tool_calls"][0]]}
    assert messages[3] == {"role": "tool", "content": "user_7", "tool_call_id": "call_1"}
    assert messages[4] == {"role": "assistant", "content": "Found you."}
    assert "task_id=3" in header["notes"] and "name (1)" in header["notes"]
    assert header["source"].startswith("imported from tau-bench")
    write_trace(tmp_path / "out.jsonl", header, messages)
    assert read_trace(tmp_path / "out.jsonl") == (header, messages)


def test_tau_bench_errors_name_record_and_message(tmp_path: Path) -> None:
    source = tmp_path / "bad.json"
    records = _tau_records()
    records[2]["traj"][1] = {"role": "user"}
    source.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(TraceImportError, match=re.escape(f"{source}: record 2, message 1: user message content")):
        import_tau_bench(source)
    records = _tau_records()
    del records[0]["traj"][3]
    source.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(TraceImportError, match=re.escape(f"{source}: record 0, message 3: HIST-5")):
        import_tau_bench(source)
    source.write_text(json.dumps([{"task_id": 1}]), encoding="utf-8")
    with pytest.raises(TraceImportError, match=re.escape(f"{source}: record 0: expected an object with a 'traj'")):
        import_tau_bench(source)
    source.write_text("{", encoding="utf-8")
    with pytest.raises(TraceImportError, match=re.escape(f"{source}: JSON cut short at line 1")):
        import_tau_bench(source)


def _swe_history() -> list[dict]:
    def call(call_id: str, command: str) -> dict:
        return {"id": call_id, "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": command})}}

    extra = {"agent": "main", "message_type": "action"}
    return [
        {"role": "system", "content": "You are SWE-agent.", "agent": "main", "message_type": "system_prompt"},
        {"role": "user", "content": "Fix the bug.", "agent": "main", "message_type": "observation"},
        {"role": "assistant", "content": "Look first.", "thought": "Look first.", "action": "ls; pwd",
         "tool_calls": [call("call_x", "ls"), call("call_y", "pwd")], **extra},
        {"role": "tool", "content": "a.py\n/repo", "tool_call_ids": ["call_x", "call_y"], "agent": "main"},
        {"role": "assistant", "content": "Again.", "thought": "Again.", "action": "ls",
         "tool_calls": [call("call_x", "ls")], **extra},
        {"role": "tool", "content": "a.py", "tool_call_ids": ["call_x"], "agent": "main"},
        {"role": "assistant", "content": "submit", "thought": "", "action": "submit", "agent": "main"},
    ]


def test_swe_agent_tool_call_ids_are_expanded_and_reused_ids_kept(tmp_path: Path) -> None:
    source = tmp_path / "demo.traj"
    source.write_text(json.dumps({"history": _swe_history(), "info": {"exit_status": "submitted"}}), encoding="utf-8")
    header, messages = import_swe_agent(source, created="2025-01-01")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "assistant", "tool", "assistant"]
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == ["call_x", "call_y", "call_x"]
    assert messages[3]["content"] == messages[4]["content"] == "a.py\n/repo"
    assert messages[5]["tool_calls"][0]["id"] == "call_x"  # as recorded: ids pair within a round (HIST-6)
    assert all(set(m) <= {"role", "content", "tool_calls", "tool_call_id"} for m in messages)
    assert header["id"] == "swe-agent:demo" and "exit_status=submitted" in header["notes"]
    assert "reuse an id of an earlier round (call_x)" in header["notes"] and "1 extra tool message" in header["notes"]
    assert "thought (3)" in header["notes"]
    split_rounds(messages)


def test_swe_agent_errors_name_the_message(tmp_path: Path) -> None:
    source = tmp_path / "bad.traj"
    history = _swe_history()
    history[5]["tool_call_ids"] = []
    source.write_text(json.dumps({"history": history}), encoding="utf-8")
    with pytest.raises(TraceImportError, match=re.escape(f"{source}: history, message 5: tool message needs")):
        import_swe_agent(source)
    history = _swe_history()
    history[3]["tool_call_ids"] = ["call_x"]
    source.write_text(json.dumps({"history": history}), encoding="utf-8")
    with pytest.raises(TraceImportError, match=re.escape(f"{source}: history, message 4: HIST-5")):
        import_swe_agent(source)
    source.write_text(json.dumps({"trajectory": []}), encoding="utf-8")
    with pytest.raises(TraceImportError, match="'history' list"):
        import_swe_agent(source)


# -- importers: the published SWE-agent trajectories -------------------------


def _swe_files() -> list[Path]:
    if not SWE_AGENT.is_dir():
        pytest.skip(f"no shared SWE-agent trajectories at {SWE_AGENT}")
    files = sorted(SWE_AGENT.glob("*.traj"))
    if not files:
        pytest.skip(f"no .traj files in {SWE_AGENT}")
    return files


def test_every_published_swe_agent_trajectory_imports(tmp_path: Path) -> None:
    for source in _swe_files():
        history = json.loads(source.read_text(encoding="utf-8"))["history"]
        header, messages = import_swe_agent(source, created="2025-01-01")
        assert len(messages) == len(history) + sum(len(m.get("tool_call_ids", [None])) - 1 for m in history)
        assert [m["content"] for m in messages if m["role"] != "tool"] == [m["content"] for m in history if m["role"] != "tool"]
        write_trace(tmp_path / "t.jsonl", header, messages)
        assert read_trace(tmp_path / "t.jsonl") == (header, messages)


def test_published_function_calling_trajectories_keep_their_calls() -> None:
    function_calling = []
    for source in _swe_files():
        history = json.loads(source.read_text(encoding="utf-8"))["history"]
        if not any(m.get("tool_calls") for m in history):
            continue
        function_calling.append(source.name)
        _, messages = import_swe_agent(source)
        answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
        assert answered == [i for m in history for i in m.get("tool_call_ids", [])]
        calls = [c["id"] for m in messages for c in m.get("tool_calls") or []]
        assert calls == [c["id"] for m in history for c in m.get("tool_calls") or []], "ids are kept as recorded"
        assert all(m.get("tool_calls") for m in messages if m["role"] == "assistant")
    assert len(function_calling) >= 4
    assert any("function_calling_simple" in name for name in function_calling)
