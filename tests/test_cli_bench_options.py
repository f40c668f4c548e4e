"""Every bad value of the bench commands' own options exits 2 with one line naming the option
(issue 23's options of ``bench replay``, ``--sizes``, ``--clock``, ``--calls``; SPEC Part C,
CLI-1, CLI-2, CLI-6), found before any trace is replayed, nothing written.

Cases as data, in the style of tests/test_cli_bad_input.py (which covers the kinds of bad input
every command shares): each `Cell` is a command line run in this process through
``compaction_suite.cli.main``; each asserts exit status 2, exactly one line containing each of
``says``, no traceback, and no file or folder created or changed under the test's folder.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from compaction_suite.benchmarks import jobs
from compaction_suite.cli import main

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "cassettes" / "traces" / "stdlib-explorer-seed2.jsonl"
REPLAY = f"bench replay --trace {TRACE} --out {{tmp}}/out --quiet"
MISSING_EXTRA = {"distributed", "vcr"}
"""Modules the missing-extra cells hide."""


@dataclass(frozen=True)
class Cell:
    argv: str
    """After ``compaction-suite``; ``{tmp}`` is the test's folder."""
    says: tuple[str, ...]
    hide_extras: bool = False

    @property
    def id(self) -> str:
        return self.argv.replace(REPLAY, "bench replay …")


CELLS = [
    Cell(f"{REPLAY} --provider google", ("--provider", "'google' is not one of")),
    Cell(f"{REPLAY} --model gpt-0", ("--provider/--model", "unknown model 'gpt-0'")),
    Cell(f"{REPLAY} --model gpt-4.1 --model gpt-5.1", ("--model", "at most one per provider")),
    Cell(f"{REPLAY} --summarizer-base-url http://127.0.0.1:9/v1", ("--summarizer-base-url", "need --summarizer-model")),
    Cell(f"{REPLAY} --summarizer-model m", ("--summarizer-model needs --summarizer-base-url",)),
    Cell(f"{REPLAY} --summarizer-model m --cassettes {{tmp}}/file.txt", ("--cassettes", "file.txt", "is a file")),
    Cell(f"{REPLAY} --summarizer-model m --cassettes {{tmp}}/cassettes", ("--cassettes", "no cassette", "no --summarizer-base-url to record it")),
    Cell(f"{REPLAY} --summarizer-model m --summarizer-base-url http://127.0.0.1:9/v1 --summarizer-timeout 0", ("--summarizer-timeout", "0")),
    Cell(f"{REPLAY} --summarizer-model m --summarizer-base-url http://127.0.0.1:9/v1 --summarizer-model-file {{tmp}}/no.gguf",
         ("--summarizer-model-file", "no.gguf")),
    Cell(f"{REPLAY} --max-calls 0", ("--max-calls", "0")),
    Cell(f"{REPLAY} --summarizer-max-tokens 0", ("--summarizer-max-tokens", "0")),
    Cell(f"{REPLAY} --summarizer-max-tokens many", ("--summarizer-max-tokens", "'many' is not a valid integer")),
    Cell(f"{REPLAY} --max-calls 14 --summarizer-model m --cassettes {ROOT}/cassettes/replay-summaries --summarizer-max-tokens 512",
         ("--summarizer-max-tokens 512", "stdlib-explorer-seed2-first-14-calls.yaml", "recorded with no --summarizer-max-tokens")),
    Cell(f"{REPLAY} --jobs 0", ("--jobs", "0")),
    Cell(f"{REPLAY} --jobs two", ("--jobs", "'two' is not a valid integer")),
    Cell(f"{REPLAY} --jobs 2 --scheduler tcp://127.0.0.1:9", ("--jobs and --scheduler", "not both")),
    Cell(f"{REPLAY} --scheduler nowhere", ("--scheduler nowhere", "no Dask scheduler reached", "missing port")),
    Cell(f"{REPLAY} --scheduler tcp://127.0.0.1:9", ("--scheduler tcp://127.0.0.1:9", "no Dask scheduler reached")),
    Cell(f"{REPLAY} --scheduler tcp://127.0.0.1:9", ("--scheduler", "the distributed extra", "distributed>="), hide_extras=True),
    Cell(f"{REPLAY} --summarizer-model m --cassettes {{tmp}}/cassettes", ("--cassettes", "the record extra", "vcrpy>="), hide_extras=True),
    Cell("bench speed --sizes 100,many --out {tmp}/out", ("--sizes", "100,many")),
    Cell("bench speed --sizes 10 --out {tmp}/out", ("--sizes", ">= 100")),
    Cell("bench speed --clock sundial --out {tmp}/out", ("--clock", "'sundial' is not one of")),
    Cell("bench throughput --sizes 0 --out {tmp}/out", ("--sizes", ">= 1")),
    Cell("bench throughput --sizes 1,two --out {tmp}/out", ("--sizes", "1,two")),
    Cell("bench throughput --calls 0 --out {tmp}/out", ("--calls", "0")),
]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "cassettes").mkdir()
    (tmp_path / "file.txt").write_text("not a folder\n")
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    monkeypatch.setattr(jobs, "CONNECT_TIMEOUT", 0.5)  # a refused port is retried until the timeout
    return tmp_path


def snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "folder" for p in sorted(root.rglob("*"))}


def hide_extras(monkeypatch: pytest.MonkeyPatch) -> None:
    """The modules of `MISSING_EXTRA` not installed, as far as the CLI's checks can tell."""
    find = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a, **k: None if name in MISSING_EXTRA else find(name, *a, **k))


@pytest.mark.parametrize("cell", CELLS, ids=lambda cell: cell.id)
def test_a_bad_bench_option_exits_2_with_one_line_naming_it(cell: Cell, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if cell.hide_extras:
        hide_extras(monkeypatch)
    elif "--scheduler" in cell.argv and importlib.util.find_spec("distributed") is None:
        pytest.skip("the distributed extra is not installed")
    before = snapshot(folder)
    result = CliRunner().invoke(main, shlex.split(cell.argv.format(tmp=folder)))
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and all(piece in lines[0] for piece in cell.says), result.output
    assert "Traceback" not in result.output
    assert snapshot(folder) == before, "a file or folder was created or changed"
