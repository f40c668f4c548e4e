"""What each command does with good input under the contract (issue 22; SPEC Part C): a run that
finds a problem exits 1, one that finds none exits 0, an internal error is one line unless
``--traceback`` is asked for, and a maintenance command opens only what it recognises."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from compaction_suite.benchmarks.traces.format import read_trace, write_trace
from compaction_suite.cli import main
from compaction_suite.cli.contract import BadInput
from compaction_suite.cli.extras import require
from compaction_suite.conformance.reproduce import Failure, Replayed, judge
from compaction_suite.extras import install_hint
from compaction_suite.reference import SQLiteStore, split_rounds
from compaction_suite.reference.store import APPLICATION_ID, SCHEMA, identify

from checking import in_process

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"

RAISES = '''
class Raises:
    def compact(self, messages, *, iteration):
        raise ValueError(f"cannot compact at iteration {iteration}")

def factory(settings):
    return Raises()
'''


def lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip()]


# --- reproduce ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def failing_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A check report in which CORE-3 fails (broken.compactors:strip_system drops the system prompt)."""
    folder = tmp_path_factory.mktemp("report")
    checked = in_process(folder, "broken.compactors:strip_system", clauses=["CORE-3"], fast=True)
    assert checked.exit_code == 1 and checked.clause("CORE-3")["status"] == "fail"
    return folder / "report.json"


def test_reproduce_exits_1_while_the_failure_reproduces_from_any_folder(failing_report: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    result = CliRunner().invoke(main, ["reproduce", str(failing_report), "--path", str(TESTS)])  # its one failure: CORE-3
    assert result.exit_code == 1, result.output
    assert lines(result.output)[-1].startswith("CORE-3 still fails: CORE-3: "), result.output


def test_reproduce_exits_0_once_the_target_is_fixed(failing_report: Path) -> None:
    result = CliRunner().invoke(main, ["reproduce", str(failing_report), "CORE-3", "reference"])
    assert result.exit_code == 0, result.output
    assert lines(result.output)[-1] == "CORE-3 no longer fails: CORE-3 holds on the replayed call"


def test_reproduce_names_what_it_cannot_replay(failing_report: Path) -> None:
    result = CliRunner().invoke(main, ["reproduce", str(failing_report), "CORE-1"])
    assert result.exit_code == 2 and lines(result.output) == [f"Error: {failing_report}: no clause CORE-1 in this report"]


def test_the_module_form_still_replays(failing_report: Path) -> None:
    """``python -m compaction_suite.conformance.reproduce`` is the same command (the process boundary is the point)."""
    args = [sys.executable, "-m", "compaction_suite.conformance.reproduce", str(failing_report), "CORE-3", "--path", str(TESTS)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "CORE-3 still fails" in done.stdout, done.stdout + done.stderr


def test_a_clause_judged_over_several_calls_reproduces_only_with_the_failing_output() -> None:
    """TRIG-2 is not judged on one output: the very output that failed still fails; another one is
    not called a pass, the line says how to judge it."""
    case = {"messages": [{"role": "user", "content": "hi"}], "iteration": 8}
    failure = Failure("TRIG-2", "t:factory", case, output=[{"role": "user", "content": "hi"}], reason="did not compact at T")
    same = judge(failure, Replayed(output=[{"role": "user", "content": "hi"}]))
    other = judge(failure, Replayed(output=[{"role": "user", "content": "[Context Summary] hi"}]))
    assert same.reproduces and "the output is the one that failed TRIG-2 (did not compact at T)" in same.why
    assert not other.reproduces and "compaction-suite check TARGET --clause TRIG-2" in other.why
    assert judge(failure, Replayed(raised="ValueError: no")).reproduces


# --- bench replay -----------------------------------------------------------------------------------


@pytest.fixture
def short_trace(tmp_path: Path) -> Path:
    header, messages = read_trace(ROOT / "cassettes" / "traces" / "stdlib-explorer-seed1.jsonl")
    trace = tmp_path / "short.jsonl"
    write_trace(trace, header | {"id": "short"}, [m for r in split_rounds(messages)[:24] for m in r.messages])
    return trace


def test_a_compactor_that_raises_fails_the_replay_visibly(short_trace: Path, tmp_path: Path) -> None:
    (tmp_path / "raising.py").write_text(RAISES)
    args = ["bench", "replay", "raising:factory", "--path", str(tmp_path), "--trace", str(short_trace), "--out", str(tmp_path / "o"), "--quiet"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    header = next(line for line in result.output.splitlines() if line.startswith("| compactor |"))
    row = next(line for line in result.output.splitlines() if line.startswith("| raising:factory |"))
    errors = header.split("|").index(" errors ")
    points = json.loads((tmp_path / "o" / "replay.json").read_text())["runs"][1]["model_calls"] - 1
    assert int(row.split("|")[errors]) == points > 0
    assert f"raising:factory raised at {points} of {points} compaction points of short; first: call 2: ValueError: cannot compact" in result.output
    assert "*errors*: compact raised there" in result.output


def test_a_replay_that_finds_nothing_exits_0(short_trace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "path", [str(ROOT / "examples" / "python"), *sys.path])
    args = ["bench", "replay", "truncating:factory", "--trace", str(short_trace), "--out", str(tmp_path / "o"), "--quiet", "--threshold-iterations", "4"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "no reference strategy" not in result.output and "raised at" not in result.output


# --- compact-store ----------------------------------------------------------------------------------


def test_compact_store_marks_and_compacts_a_store_written_before_the_mark(tmp_path: Path) -> None:
    """SPEC DUR-13: a store of ours with no mark (the tables of schema version 1) is recognised and
    marked on its first open; compact-store then works on it as on any store."""
    path = tmp_path / "old.db"
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(SCHEMA)
    db.close()
    store = SQLiteStore(str(path))
    store.append("s1", [{"role": "user", "content": f"question {i}"} for i in range(6)])
    store.close()
    assert identify(str(path)) == "store"
    result = CliRunner().invoke(main, ["compact-store", str(path), "--session", "s1", "--keep-messages", "2"])
    assert result.exit_code == 0, result.output
    assert "the model sees 2 messages; compact retention removed 4" in result.output
    with sqlite3.connect(path) as check:
        assert check.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID


def test_the_library_refuses_a_foreign_database_without_writing(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE orders (id)")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(ValueError, match=r"not a compaction-suite store \(tables: orders\)"):
        SQLiteStore(str(path))
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["app.db"]


# --- the contract itself --------------------------------------------------------------------------


def test_an_internal_error_is_one_line_and_its_traceback_only_on_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SQLiteStore(str(tmp_path / "s.db"))
    store.append("s1", [{"role": "user", "content": "hi"}])
    store.close()

    def broken(self: SQLiteStore) -> dict[str, list[str]]:
        raise RuntimeError("a bug in the suite")

    monkeypatch.setattr(SQLiteStore, "sessions", broken)
    args = ["compact-store", str(tmp_path / "s.db"), "--session", "s1", "--keep-messages", "2"]
    quiet = CliRunner().invoke(main, args)
    assert quiet.exit_code == 3 and lines(quiet.output) == ["Error: internal error: RuntimeError: a bug in the suite (run again with --traceback to see where)"]
    loud = CliRunner().invoke(main, [*args, "--traceback"])
    assert loud.exit_code == 3 and "Traceback (most recent call last)" in loud.output and 'raise RuntimeError("a bug in the suite")' in loud.output


def test_a_missing_extra_names_a_command_that_installs_it() -> None:
    """There is no PyPI release: the hint installs the extra's own requirements (pyproject.toml)."""
    assert install_hint("bench").startswith("pip install 'pytest-benchmark>=4' 'matplotlib>=3.10' 'numpy>=1.26'")
    assert "compaction-suite[" not in install_hint("bench").split(" (from a checkout")[0]
    with pytest.raises(BadInput, match=r"needs the record extra \(missing: no_such_module_here\): pip install 'vcrpy>=6'"):
        require("record", "no_such_module_here")


def test_a_share_of_a_ceiling_over_100_percent_says_why(short_trace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keeping 2 rounds cuts more than an ideal compactor that keeps 5 and a summary: the table
    says the ceiling is a yardstick there, not a bound."""
    monkeypatch.setattr(sys, "path", [str(ROOT / "examples" / "python"), *sys.path])
    args = ["bench", "replay", "truncating:factory", "--trace", str(short_trace), "--out", str(tmp_path / "o"), "--quiet",
            "--threshold-iterations", "4", "--ceiling-rounds", "5"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    row = next(line for line in result.output.splitlines() if line.startswith("| truncating:factory |"))
    share = float(row.split("|")[6].strip().rstrip("%"))
    assert result.exit_code == 0 and share > 100, result.output
    assert "*of ceiling* over 100%: the compactor sent less than the ideal compactor" in result.output


def test_a_claude_code_session_no_point_of_which_compares_points_at_its_chat_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from native_logs import claude_code_log

    monkeypatch.setattr(sys, "path", [str(ROOT / "examples" / "python"), *sys.path])
    session = claude_code_log(tmp_path / "session.jsonl", turns=3, rounds=2, thinking=True)
    args = ["bench", "replay", "truncating:factory", "--trace", str(session), "--out", str(tmp_path / "o"), "--quiet", "--threshold-iterations", "2"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "no compaction point of claude-code:native-replay was comparable for truncating:factory: --trace-format claude-code-chat" in result.output
