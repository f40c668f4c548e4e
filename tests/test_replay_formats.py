"""``bench replay`` on traces in their own wire formats (issue 13, replay across formats): a Codex
rollout and a Claude Code session read from disk as the agents write them (tests/native_logs.py,
from the published formats), compactors of every format, and the pairs with no faithful mapping
reported as not comparable, never measured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from native_logs import claude_code_log, codex_rollout

from compaction_suite.benchmarks import cost
from compaction_suite.benchmarks.across_formats import to_chat
from compaction_suite.benchmarks.lineup import NoCompaction
from compaction_suite.benchmarks.replay import replay
from compaction_suite.benchmarks.traces.codex import import_codex
from compaction_suite.benchmarks.traces.format import read_trace, write_trace
from compaction_suite.benchmarks.traces.kinds import TraceKindError, detect
from compaction_suite.cli import main
from compaction_suite.conformance.formats import RESPONSES
from compaction_suite.reference import split_rounds

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "python"
RESPONSES_TARGET, ANTHROPIC_TARGET, CHAT_TARGET = "responses_truncating:factory", "anthropic_truncating:factory", "truncating:factory"
SHARED = ROOT.parent / "shared" / "traces"


@pytest.fixture
def examples_importable(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))


def bench_replay(out: Path, traces: list[Path], targets: list[str], *extra: str, exit_code: int = 0) -> dict:
    """Run ``compaction-suite bench replay`` and return its replay.json (exit 1: a compactor broke a clause or raised)."""
    args = ["bench", "replay", *targets, *[a for t in traces for a in ("--trace", str(t))], "--out", str(out), "--quiet",
            "--threshold-iterations", "2", "--keep-rounds", "1", *extra]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == exit_code, result.output
    return json.loads((out / "replay.json").read_text())


def runs_by_compactor(saved: dict, trace_prefix: str) -> dict[str, dict]:
    return {r["compactor"]: r for r in saved["runs"] if r["trace"].startswith(trace_prefix)}


def chat_slice(tmp_path: Path) -> Path:
    """The first 30 rounds of a shipped chat-completions trace, as trace ``chat-slice``."""
    header, messages = read_trace(ROOT / "cassettes" / "traces" / "stdlib-explorer-seed1.jsonl")
    chat = tmp_path / "chat.jsonl"
    write_trace(chat, header | {"id": "chat-slice"}, [m for r in split_rounds(messages)[:30] for m in r.messages])
    return chat


def test_trace_kinds_are_told_apart_by_content(tmp_path):
    assert detect(codex_rollout(tmp_path / "rollout.jsonl", 1, 1)) == "codex"
    assert detect(claude_code_log(tmp_path / "session.jsonl", 1, 1)) == "claude-code"
    assert detect(ROOT / "cassettes" / "traces" / "stdlib-explorer-seed1.jsonl") == "trace"
    neither = tmp_path / "other.jsonl"
    neither.write_text('{"type": "note", "text": "hi"}\n')
    with pytest.raises(TraceKindError, match=r"other.jsonl: not a compaction-suite trace.*\['note'\]\); pass --trace-format"):
        detect(neither)
    both = tmp_path / "both.jsonl"
    both.write_text(codex_rollout(tmp_path / "a.jsonl", 1, 1).read_text() + claude_code_log(tmp_path / "b.jsonl", 1, 1).read_text())
    with pytest.raises(TraceKindError, match="fit both a Codex rollout and a Claude Code session"):
        detect(both)


def test_an_undetectable_trace_is_a_clear_cli_error(tmp_path):
    other = tmp_path / "other.jsonl"
    other.write_text('{"type": "note"}\n')
    result = CliRunner().invoke(main, ["bench", "replay", "--trace", str(other), "--out", str(tmp_path / "o"), "--quiet"])
    assert result.exit_code == 2 and "other.jsonl: not a compaction-suite trace" in result.output and "--trace-format" in result.output


def test_responses_compactor_on_a_codex_rollout_and_on_a_chat_trace(tmp_path, examples_importable):
    rollout = codex_rollout(tmp_path / "rollout-2025-10-02T10-00-00-plain.jsonl", turns=4, rounds=3)
    chat = chat_slice(tmp_path)
    saved = bench_replay(tmp_path / "o", [rollout, chat], [RESPONSES_TARGET, CHAT_TARGET])
    assert {t["id"]: t["wire_format"] for t in saved["traces"]} == {"codex:native-codex": "responses", "chat-slice": "chat-completions"}
    for trace in ("codex:", "chat-slice"):
        runs = runs_by_compactor(saved, trace)
        assert runs[cost.BASELINE]["compactor_format"] == "any"
        for target, own in ((RESPONSES_TARGET, "responses"), (CHAT_TARGET, "chat-completions")):
            run = runs[target]
            assert run["compactor_format"] == own and run["not_comparable"] == 0, run["not_comparable_reasons"]
            assert run["compactions"] > 0 and not run["violations"] and not run["errors"], (trace, target, run)
            assert 0 < run["input_reduction"] < 1


def test_a_faithful_native_trace_measures_as_its_chat_form(tmp_path):
    """views.py: a unit with a chat form counts as that form, so the same history in both formats
    gives the same calls, tokens and retention."""
    _, items = import_codex(codex_rollout(tmp_path / "rollout.jsonl", turns=3, rounds=2))
    native = replay(items, NoCompaction(), trace_format=RESPONSES).summary()
    chat = replay(to_chat(items, RESPONSES), NoCompaction()).summary()
    for key in ("model_calls", "cumulative_input_tokens", "cumulative_cached_tokens", "peak_context_tokens", "output_tokens", "entity_ids_tracked"):
        assert native[key] == chat[key], key


def test_reasoning_items_are_not_comparable_for_a_chat_compactor_but_replay_natively(tmp_path, examples_importable):
    rollout = codex_rollout(tmp_path / "rollout-2025-10-02T10-00-00-reasoning.jsonl", turns=4, rounds=3, reasoning=True)
    saved = bench_replay(tmp_path / "o", [rollout], [RESPONSES_TARGET, CHAT_TARGET])
    runs = runs_by_compactor(saved, "codex:")
    native = runs[RESPONSES_TARGET]
    assert native["not_comparable"] == 0 and native["compactions"] > 0 and not native["violations"], native
    chat = runs[CHAT_TARGET]
    assert chat["not_comparable"] == chat["model_calls"] - 1  # every compaction point holds a reasoning item
    assert all("(reasoning rs_0_0) has no chat-completions form" in r for r in chat["not_comparable_reasons"])
    assert chat["input_reduction"] is None and chat["cost_reduction_with_cache"] is None  # n/a, not a percentage
    row = next(r for r in saved["strategies"] if r["compactor"] == CHAT_TARGET)
    assert row["runs_not_comparable"] == 1 and row["input_reduction"] is None and row["cumulative_input_tokens"] is None
    assert not row["meets_target"]
    report = (tmp_path / "o" / "replay.md").read_text()
    assert "| codex:native-codex | responses | " in report
    assert f"| {CHAT_TARGET} | chat-completions | 1 of 1 | {chat['not_comparable']} |" in report
    assert "*not comparable at" in report and "(reasoning rs_0_0) has no chat-completions form" in report


def test_anthropic_compactor_on_a_claude_code_session_keeps_thinking(tmp_path, examples_importable):
    session = claude_code_log(tmp_path / "session.jsonl", turns=4, rounds=3, thinking=True)
    saved = bench_replay(tmp_path / "o", [session], [ANTHROPIC_TARGET, RESPONSES_TARGET])
    assert saved["traces"][0]["wire_format"] == "anthropic-messages"
    runs = runs_by_compactor(saved, "claude-code:")
    native = runs[ANTHROPIC_TARGET]
    assert native["compactor_format"] == "anthropic-messages" and native["not_comparable"] == 0
    assert native["compactions"] > 0 and not native["violations"] and not native["errors"] and 0 < native["input_reduction"] < 1
    other = runs[RESPONSES_TARGET]
    assert other["not_comparable"] > 0 and "'thinking' block has no chat-completions form" in other["not_comparable_reasons"][0]


def test_claude_code_chat_reading_is_still_available(tmp_path, examples_importable):
    session = claude_code_log(tmp_path / "session.jsonl", turns=3, rounds=2, thinking=True)
    saved = bench_replay(tmp_path / "o", [session], [CHAT_TARGET], "--trace-format", "claude-code-chat")
    assert saved["traces"][0]["wire_format"] == "chat-completions"
    assert runs_by_compactor(saved, "claude-code:")[CHAT_TARGET]["not_comparable"] == 0  # thinking dropped by that importer


SHARED_NATIVE = sorted(p for p in SHARED.rglob("*.jsonl") if p.is_file()) if SHARED.is_dir() else []


@pytest.mark.skipif(not SHARED_NATIVE, reason="no .jsonl session logs under ../shared/traces")
def test_shared_native_session_logs_replay(tmp_path, examples_importable):
    for path in SHARED_NATIVE:
        try:
            kind = detect(path)
        except TraceKindError:
            continue
        if kind in ("codex", "claude-code"):
            saved = bench_replay(tmp_path / path.stem, [path], [RESPONSES_TARGET, ANTHROPIC_TARGET, CHAT_TARGET])
            assert all(not r["errors"] for r in saved["runs"]), path


def test_trace_format_option_names_every_kind_and_the_cli_imports_no_importer() -> None:
    """``--trace-format`` lists and accepts exactly the kinds of `kinds.KINDS`; importing the CLI
    imports neither the importers nor openai (``check`` must start pytest before them)."""
    import subprocess
    import sys

    from click.testing import CliRunner

    from compaction_suite.benchmarks.traces.kinds import KINDS
    from compaction_suite.cli.bench import replay as replay_command

    help_text = " ".join(CliRunner().invoke(replay_command, ["--help"]).output.split())
    assert all(kind in help_text for kind in KINDS)
    wrong = CliRunner().invoke(replay_command, ["--trace-format", "nonsense"])
    assert wrong.exit_code == 2 and "is not one of auto, " + ", ".join(KINDS) in wrong.output
    probe = "import sys, compaction_suite.cli; print(sorted({'openai', 'hypothesis', 'anyio'} & set(sys.modules)))"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip() == "[]"


def test_a_compactor_of_another_format_is_judged_in_its_own_format(tmp_path, examples_importable):
    """SPEC XFMT-6: a Responses compactor that writes a chat-style ``{"role": "tool"}`` item
    (RESP-6) over a chat trace: its output has no chat form, so the point is not comparable, and
    the violation is reported all the same; the correct compactor of that format shows none."""
    chat = chat_slice(tmp_path)
    saved = bench_replay(tmp_path / "o", [chat], ["broken.formats:ChatRoleItem", RESPONSES_TARGET], exit_code=1)
    runs = runs_by_compactor(saved, "chat-slice")
    broken = runs["broken.formats:ChatRoleItem"]
    assert broken["not_comparable"] > 0 and broken["violations"], broken
    assert all(": RESP-6: " in v and "unknown role 'tool'" in v for v in broken["violations"])
    assert len(broken["violations"]) == broken["not_comparable"], "one violation per point, judged once"
    correct = runs[RESPONSES_TARGET]
    assert correct["compactions"] > 0 and not correct["violations"] and correct["not_comparable"] == 0


def test_a_strategy_that_broke_a_clause_on_unmeasured_traces_shows_its_violations(tmp_path, examples_importable):
    """A run not comparable enters no figure, but its violations count in the strategy's row."""
    chat = chat_slice(tmp_path)
    saved = bench_replay(tmp_path / "o", [chat], ["broken.formats:ChatRoleItem"], exit_code=1)
    row = next(s for s in saved["strategies"] if s["compactor"] == "broken.formats:ChatRoleItem")
    assert row["runs_not_comparable"] == 1 and row["input_reduction"] is None
    assert row["violations"] == len(runs_by_compactor(saved, "chat-slice")["broken.formats:ChatRoleItem"]["violations"]) > 0
    assert "still count in the violations column" in (tmp_path / "o" / "replay.md").read_text()
