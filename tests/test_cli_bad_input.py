"""Every command × every kind of bad input (issue 22, point 6; SPEC Part C, "The command contract").

Cases as data: each `Cell` is a command line with one bad input, run in this process through
``compaction_suite.cli.main`` (the matrix's too, so the table survives its internals moving). Every
cell asserts exit status 2, exactly one line of output naming the input and what is wrong, and
that no file or folder anywhere under the test's folder (the working directory included) was
created or changed. `NOT_APPLICABLE` says, per command, why an input kind has no cell; a sanity
test checks that every (command, kind) pair has one or the other.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import sqlite3
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from compaction_suite.cli import main
from compaction_suite.reference import SQLiteStore

KINDS = (
    "missing file", "directory", "empty file", "not JSON", "truncated JSON", "wrong schema", "foreign SQLite",
    "unknown option", "target with a syntax error", "target raising at import", "factory raising",
)  # fmt: skip
COMMANDS = (
    "check", "reproduce", "record", "record-errors", "compact-store", "matrix", "bench replay", "bench estimators",
    "bench speed", "bench battery", "bench throughput", "bench all", "traces record", "traces import", "prune-envs",
)  # fmt: skip
TARGETS = {"target with a syntax error": "cs_syntax", "target raising at import": "cs_import_raises", "factory raising": "cs_factory_raises"}
SAYS = {"target with a syntax error": "SyntaxError", "target raising at import": "no config at import", "factory raising": "the factory failed"}
BENCH_WRITERS = ("estimators", "speed", "battery", "throughput", "all")
"""The bench commands that read nothing and only write --out."""
RECORD = "record --model m --base-url http://127.0.0.1:9/v1 --out {tmp}/out"


@dataclass(frozen=True)
class Cell:
    command: str
    kind: str
    argv: str
    """The command line after ``compaction-suite``: ``{tmp}`` is the test's folder, ``{target}`` the
    kind's broken target (``module:factory``, on ``--path {tmp}``)."""
    says: tuple[str, ...]
    """What the one line must contain, each piece (formatted like ``argv``)."""

    @property
    def id(self) -> str:
        return f"{self.command} × {self.kind}: {self.argv}"


def files(command: str, template: str, files: dict[str, tuple[str, str]]) -> list[Cell]:
    """One cell per kind: ``template`` with ``{file}`` replaced by the kind's file; ``files`` maps
    a kind to (file name under the test's folder, what the line says besides the name)."""
    return [Cell(command, kind, template.replace("{file}", "{tmp}/" + name), (name, says)) for kind, (name, says) in files.items()]


def targets(command: str, template: str) -> list[Cell]:
    return [Cell(command, kind, template, (TARGETS[kind], SAYS[kind])) for kind in TARGETS]


JSON_FILES = {
    "missing file": ("missing.json", "no such file"), "directory": ("folder", "is a directory"),
    "empty file": ("empty.json", "is empty"), "not JSON": ("text.json", "not JSON"), "truncated JSON": ("cut.json", "JSON cut short"),
    "foreign SQLite": ("foreign.db", "is an SQLite database, not JSON"),
}  # fmt: skip
HISTORY_FILES = JSON_FILES | {"wrong schema": ("object.json", "not a history")}
TRACE_FILES = {
    "missing file": ("missing.jsonl", "no such file"), "directory": ("folder", "is a directory"), "empty file": ("empty.jsonl", "is empty"),
    "not JSON": ("text.jsonl", "not JSON"), "truncated JSON": ("cut.jsonl", "cut inside"),
    "wrong schema": ("header.jsonl", "missing field 'id'"), "foreign SQLite": ("foreign.db", "not text"),
}  # fmt: skip
TAU_BENCH_FILES = JSON_FILES | {"wrong schema": ("object.json", "expected a JSON list of records")}
STORE_FILES = {
    "missing file": ("missing.db", "no such file"), "directory": ("folder", "is a directory"), "empty file": ("empty.db", "is empty"),
    "not JSON": ("text.json", "not an SQLite database"), "truncated JSON": ("cut.db", "cannot be read"),
    "wrong schema": ("newer.db", "schema version 2"), "foreign SQLite": ("foreign.db", "not a compaction-suite store (tables: t)"),
}  # fmt: skip
REPORT_FILES = JSON_FILES | {"wrong schema": ("object.json", "not a compaction-suite report")}

CELLS: list[Cell] = [
    # check: a text file of test ids (--xfails), a report to write (--report), the target
    *files("check", "check reference --xfails {file}", {k: v for k, v in JSON_FILES.items() if k in ("missing file", "directory")}),
    Cell("check", "foreign SQLite", "check reference --xfails {tmp}/foreign.db", ("foreign.db: is an SQLite database, not text",)),
    Cell("check", "directory", "check reference --report {tmp}/folder", ("folder: is a directory; name a file",)),
    Cell("check", "missing file", "check reference --report {tmp}/no/such/r.json", ("the folder {tmp}/no/such does not exist",)),
    Cell("check", "unknown option", "check reference --no-such-option", ("No such option '--no-such-option'",)),
    Cell("check", "unknown option", "check reference --clause CORE-99", ("unknown clause(s) CORE-99",)),
    *targets("check", "check {target} --path {tmp}"),
    # reproduce: a report or a matrix reproducer, and the target it names
    *files("reproduce", "reproduce {file} CORE-3", REPORT_FILES),
    Cell("reproduce", "wrong schema", "reproduce {tmp}/report-v0.json", ("report-v0.json: not a compaction-suite report",)),
    Cell("reproduce", "missing file", "reproduce", ("Missing argument 'REPORT'",)),
    Cell("reproduce", "unknown option", "reproduce {tmp}/repro-cs_syntax.json --no-such-option", ("No such option '--no-such-option'",)),
    *[Cell("reproduce", kind, f"reproduce {{tmp}}/repro-{module}.json --path {{tmp}}", (module, SAYS[kind])) for kind, module in TARGETS.items()],
    # record and record-errors: history files, the target
    *files("record", RECORD + " reference --history {file}", HISTORY_FILES),
    Cell("record", "unknown option", RECORD + " reference --no-such-option", ("No such option '--no-such-option'",)),
    *targets("record", RECORD + " {target} --path {tmp}"),
    *files("record-errors", "record-errors --out {tmp}/out --history {file}", HISTORY_FILES),
    Cell("record-errors", "unknown option", "record-errors --out {tmp}/out --no-such-option", ("No such option '--no-such-option'",)),
    Cell("record-errors", "missing file", "record-errors", ("Missing option '--out'",)),
    # compact-store: the store
    *files("compact-store", "compact-store {file} --session s --keep-messages 2", STORE_FILES),
    Cell("compact-store", "unknown option", "compact-store {tmp}/store.db --session s --no-such-option", ("No such option '--no-such-option'",)),
    # matrix: what it parses and checks before running (its --target is importable, as installed)
    Cell("matrix", "unknown option", "matrix --no-such-option", ("No such option '--no-such-option'",)),
    Cell("matrix", "unknown option", "matrix --clause CORE-99 --out {tmp}/out", ("--clause: unknown clause(s) CORE-99",)),
    Cell("matrix", "directory", "matrix --out {tmp}/empty.json", ("empty.json",)),
    *targets("matrix", "matrix --no-adapters --target {target} --out {tmp}/out"),
    # bench: the traces, the report folder, the target
    *files("bench replay", "bench replay --trace {file} --out {tmp}/out", TRACE_FILES),
    *files("bench replay", "bench replay --trace {file} --trace-format tau-bench --out {tmp}/out",
           {k: v for k, v in TAU_BENCH_FILES.items() if k in ("not JSON", "truncated JSON", "wrong schema")}),
    Cell("bench replay", "directory", "bench replay --out {tmp}/empty.json", ("empty.json: is a file, not a folder",)),
    Cell("bench replay", "unknown option", "bench replay --out {tmp}/out --no-such-option", ("No such option '--no-such-option'",)),
    *targets("bench replay", "bench replay {target} --path {tmp} --out {tmp}/out"),
    *[Cell(f"bench {name}", "unknown option", f"bench {name} --out {{tmp}}/out --no-such-option", ("--no-such-option",)) for name in BENCH_WRITERS],
    *[Cell(f"bench {name}", "directory", f"bench {name} --out {{tmp}}/empty.json", ("empty.json: is a file, not a folder",)) for name in BENCH_WRITERS],
    *[Cell(f"bench {name}", "missing file", f"bench {name}", ("Missing option '--out'",)) for name in BENCH_WRITERS],
    # traces: files to import, the trace to write
    *files("traces import", "traces import claude-code {file} --out-dir {tmp}/out", {
        **TRACE_FILES, "empty file": ("empty.jsonl", "no messages to import"), "truncated JSON": ("cut.jsonl", "not JSON: Unterminated string"),
        "wrong schema": ("notes.jsonl", "no messages to import"), "foreign SQLite": ("foreign.db", "cannot read")}),
    *files("traces import", "traces import tau-bench {file} --out-dir {tmp}/out", {k: v for k, v in TAU_BENCH_FILES.items() if k in ("not JSON", "wrong schema")}),
    Cell("traces import", "unknown option", "traces import tau-bench {tmp}/object.json --out-dir {tmp}/out --no-such-option", ("--no-such-option",)),
    Cell("traces record", "directory", "traces record --seed 1 --rounds 20 --out {tmp}/folder", ("folder: is a directory",)),
    Cell("traces record", "unknown option", "traces record --seed 1 --rounds 20 --out {tmp}/t.jsonl --no-such-option", ("--no-such-option",)),
    # prune-envs: the environment cache it removes from
    Cell("prune-envs", "missing file", "prune-envs --unused-for 1 --cache-dir {tmp}/no/such", ("--cache-dir {tmp}/no/such: no such folder",)),
    Cell("prune-envs", "directory", "prune-envs --unused-for 1 --cache-dir {tmp}/empty.json", ("empty.json' is a file",)),
    Cell("prune-envs", "missing file", "prune-envs --cache-dir {tmp}/folder", ("Missing option '--unused-for'",)),
    Cell("prune-envs", "unknown option", "prune-envs --unused-for -1 --cache-dir {tmp}/folder", ("'--unused-for': -1.0 is not in the range",)),
]

NOT_APPLICABLE: dict[str, dict[str, str]] = {
    "check": dict.fromkeys(("empty file", "not JSON", "truncated JSON", "wrong schema"), "check reads no JSON or SQLite file: its inputs are the target and a text file of test ids"),
    "record-errors": dict.fromkeys(TARGETS, "record-errors has no target: it records the reference against the test double"),
    "compact-store": dict.fromkeys(TARGETS, "compact-store has no target: the compactor is the reference's"),
    "matrix": {k: "matrix reads no input file; it writes --out (the directory cell)" for k in KINDS[:7] if k != "directory"},
    **{f"bench {name}": {k: f"bench {name} reads no input and has no target; it writes --out" for k in KINDS if k not in ("unknown option", "directory", "missing file")}
       for name in BENCH_WRITERS},
    "traces record": {k: "traces record reads no file and has no target; it writes --out" for k in KINDS if k not in ("unknown option", "directory")},
    "traces import": dict.fromkeys(TARGETS, "traces import has no target"),
    "prune-envs": {k: "prune-envs reads no file and has no target; it removes from --cache-dir" for k in KINDS if k not in ("unknown option", "directory", "missing file")},
}


def test_every_command_meets_every_kind_of_bad_input_or_says_why_not() -> None:
    covered = {(c.command, c.kind) for c in CELLS}
    assert {c.command for c in CELLS} == set(COMMANDS) and {c.kind for c in CELLS} <= set(KINDS)
    for command in COMMANDS:
        for kind in KINDS:
            assert ((command, kind) in covered) != (kind in NOT_APPLICABLE.get(command, {})), (command, kind)


def test_the_table_runs_every_command_the_cli_has() -> None:
    """A new command needs rows here (the matrix helper's move keeps the name ``matrix``)."""
    names = {name for name, command in main.commands.items() if not hasattr(command, "commands")}
    names |= {f"{group} {name}" for group, command in main.commands.items() for name in getattr(command, "commands", {})}
    assert names == set(COMMANDS)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every bad input of the table, the broken targets, and an empty working directory; the
    broken targets importable (as an installed package would be) and no bytecode written."""
    (tmp_path / "folder").mkdir()
    texts = {
        "empty.json": "", "empty.jsonl": "", "text.json": "hello, not JSON\n", "text.jsonl": "hello, not JSON\n",
        "cut.json": '{"messages": [{"role": "user", "con', "cut.jsonl": '{"format": "compaction-suite-trace", "vers',
        "object.json": '{"something": "else"}\n', "header.jsonl": '{"format": "compaction-suite-trace", "version": 1}\n',
        "notes.jsonl": '{"type": "user", "uuid": "u1", "sessionId": "s", "message": {"role": "user", "content": []}}\n',
        "report-v0.json": json.dumps({"format": "some-other-report", "clauses": {}}),
        "cs_syntax.py": "def factory(settings:\n", "cs_import_raises.py": "raise RuntimeError('no config at import')\n",
        "cs_factory_raises.py": "def factory(settings):\n    raise RuntimeError('no API key configured')\n", "empty.db": "",
    }  # fmt: skip
    for name, text in texts.items():
        (tmp_path / name).write_text(text)
    case = {"messages": [{"role": "user", "content": "hi"}], "iteration": 8, "settings": {}, "summarizer": {}}
    for module in TARGETS.values():
        (tmp_path / f"repro-{module}.json").write_text(json.dumps({"clause": "CORE-3", "target": f"{module}:factory", "case": case}))
    foreign = sqlite3.connect(tmp_path / "foreign.db")
    foreign.execute("CREATE TABLE t (a)")
    foreign.commit()
    foreign.close()
    store = SQLiteStore(str(tmp_path / "store.db"))
    store.append("s", [{"role": "user", "content": "hello"}])
    store.close()
    (tmp_path / "cut.db").write_bytes((tmp_path / "store.db").read_bytes()[:120])
    (tmp_path / "newer.db").write_bytes((tmp_path / "store.db").read_bytes())
    newer = sqlite3.connect(tmp_path / "newer.db")
    newer.execute("PRAGMA user_version = 2")
    newer.close()
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    yield tmp_path
    for module in TARGETS.values():
        sys.modules.pop(module, None)


def snapshot(root: Path) -> dict[str, str]:
    """Every file (its sha256) and folder under ``root``."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "folder" for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("cell", CELLS, ids=lambda cell: cell.id)
def test_bad_input_exits_2_with_one_line_and_writes_nothing(cell: Cell, folder: Path) -> None:
    kind_target = TARGETS.get(cell.kind, "cs_factory_raises")
    fill = {"tmp": str(folder), "target": f"{kind_target}:factory"}
    before = snapshot(folder)
    result = CliRunner().invoke(main, shlex.split(cell.argv.format(**fill)))
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and all(piece.format(**fill) in lines[0] for piece in cell.says), result.output
    assert "Traceback" not in result.output
    assert snapshot(folder) == before, "a file or folder was created or changed"
