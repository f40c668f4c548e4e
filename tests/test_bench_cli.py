"""The ``compaction-suite bench`` group: its commands, usage errors, and the battery table
(benchmarks/battery.py). The benchmarks' own figures are tested in test_replay.py,
test_speed_bench.py and test_estimator_bench.py; no test here times anything."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from compaction_suite.benchmarks import battery
from compaction_suite.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_bench_lists_every_benchmark():
    result = CliRunner().invoke(main, ["bench", "--help"])
    assert result.exit_code == 0
    for command in ("all", "battery", "estimators", "replay", "speed", "throughput"):
        assert f"  {command} " in result.output


def test_speed_sizes_must_be_numbers(tmp_path):
    result = CliRunner().invoke(main, ["bench", "speed", "--sizes", "100,many", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "--sizes" in result.output and "100,many" in result.output


def test_battery_table_from_pytest_benchmark_json():
    results = {
        "version": "5.3.1",
        "datetime": "2026-11-23T17:12:40",
        "machine_info": {"cpu": {"brand_raw": "Some CPU", "count": 2}, "python_implementation": "CPython", "python_version": "3.11.7"},
        "benchmarks": [
            {"params": {"target": "reference", "mode": "full"}, "stats": {"median": 26.92}, "extra_info": {"cpu_seconds": 19.4}},
            {"params": {"target": "quick-one", "mode": "fast"}, "stats": {"median": 9.5}},
        ],
        "load_average": [2.1, 2.4],
        "slowest": [{"seconds": 3.25, "phase": "call", "test": "tests/test_core.py::test_core_6"}],
        "profile": battery.grouped({
            ("/venv/site-packages/hypothesis/core.py", 10, "run"): (1, 1, 6.0, 9.0, {}),
            ("/repo/reference/rounds.py", 20, "split_rounds"): (1, 3, 1.0, 1.0, {}),
            ("~", 0, "<method 'recv' of '_socket.socket' objects>"): (1, 7, 3.0, 3.0, {}),
        }),
    }
    text = battery.markdown(results)
    assert "Some CPU, 2 cores, CPython 3.11.7" in text and "load average 2.1 before, 2.4 after" in text
    assert "| reference | full | 26.9 | 19.4 | no: 11.9 s over (CPU 19.4 s: 4.4 s over) |" in text
    assert "| quick-one | fast | 9.5 | n/a | yes |" in text
    assert "| 3.25 | call | `tests/test_core.py::test_core_6` |" in text
    assert "| Hypothesis (drawing and shrinking examples) | 60.0% |" in text and "| the reference compactor (reference/) | 10.0% |" in text
    assert "| built-in `<method 'recv' of '_socket.socket' objects>` | 30.0% |" in text and "| `core.py:10 run` | 1 | 60.0% |" in text


def test_throughput_sizes_must_be_numbers(tmp_path):
    result = CliRunner().invoke(main, ["bench", "throughput", "--sizes", "1,two", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "--sizes" in result.output


def test_compactions_are_counted_in_the_compactors_own_format(tmp_path, monkeypatch):
    """SPEC XFMT-7: a Claude Code session whose tool results hold a list of text blocks, replayed
    through a chat-completions compactor, counts the compactions the compactor made (its output
    differs from its input, in its own format), not the points where the way back through
    chat-completions merely rewrote a block list as a string; the chat reading of the same session
    counts the same."""
    from native_logs import claude_code_log

    from compaction_suite.benchmarks.replay import replay
    from compaction_suite.benchmarks.traces.kinds import load
    from compaction_suite.conformance.settings import Settings

    monkeypatch.syspath_prepend(str(ROOT / "examples" / "python"))
    import truncating

    path = claude_code_log(tmp_path / "session.jsonl", turns=3, rounds=3)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        for block in line["message"]["content"] if isinstance(line["message"]["content"], list) else []:
            if block.get("type") == "tool_result":
                block["content"] = [{"type": "text", "text": block["content"]}]
    path.write_text("\n".join(map(json.dumps, lines)) + "\n")
    counted = {}
    for kind in ("claude-code", "claude-code-chat"):
        ((header, history),) = load(path, kind)
        compactor, changed = truncating.factory(Settings(threshold_iterations=4, keep_recent_rounds=2)), []
        own = compactor.compact

        def compact(messages, *, iteration, own=own, changed=changed):
            out = own(messages, iteration=iteration)
            changed.append(out != messages)
            return out

        compactor.compact = compact
        run = replay(history, compactor, trace_format=header.get("wire_format") or "chat-completions")
        assert run.compactions == sum(changed) > 0, kind
        counted[kind] = run.compactions
    assert counted["claude-code"] == counted["claude-code-chat"]
