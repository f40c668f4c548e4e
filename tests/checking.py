"""Running ``compaction-suite check`` from the project's own tests.

`in_process` runs the command's own pytest arguments (`compaction_suite.cli.check_args`)
with ``pytest.main`` inside this interpreter, so a negative control costs its own tests and
nothing else; `as_user` runs the command in a fresh interpreter, exit code and all, as a
user does. Both return the JSON clause report the run wrote.

Not pytester's ``runpytest_inprocess``: it removes every module an inner run imported, so
the next run imports ``openai``'s lazily loaded HTTP stack afresh beside the old one, and a
timeout raised by one copy escapes the other's ``except`` (the reference then "fails"
FAIL-4). Here only the conformance test modules are imported afresh, so each run's
Hypothesis profile applies to them.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import Phase
from hypothesis import settings as hypothesis_settings
from hypothesis.configuration import set_hypothesis_home_dir, storage_directory

from compaction_suite.cli import EXIT, check_args
from compaction_suite.conformance.runner import run_check

from broken.compactors import Control

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
REPORT_SCHEMA = ROOT / "conformance" / "schema" / "report.schema.json"
REPORTS = jsonschema.Draft202012Validator(json.loads(REPORT_SCHEMA.read_text(encoding="utf-8")))
"""Every report a ``check`` run of the project's tests writes is validated against the report's
JSON Schema (issue 24 point 5)."""


def valid_report(report: dict[str, Any]) -> dict[str, Any]:
    """``report``, after checking it against ``conformance/schema/report.schema.json``; an
    `AssertionError` lists every place it breaks the schema."""
    errors = [f"  {'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:300]}" for e in REPORTS.iter_errors(report)]
    assert not errors, "the report breaks its schema:\n" + "\n".join(sorted(errors)[:20])
    return report


@dataclass(frozen=True)
class Checked:
    """One ``check`` run: its exit code (0 conforms, 1 a MUST clause fails, 2 usage), the JSON
    report and what it printed."""

    exit_code: int
    report: dict[str, Any]
    output: str

    def clause(self, clause_id: str) -> dict[str, Any]:
        found = self.report["clauses"].get(clause_id)
        assert found is not None, f"{clause_id} is not in the report:\n{self.output[-3000:]}"
        return found


def in_process(tmp_path: Path, target: str, *, profiles: Sequence[str] = (), clauses: Sequence[str] = (), fast: bool = False) -> Checked:
    """``compaction-suite check TARGET`` in this interpreter, from ``tmp_path``, narrowed to
    ``profiles`` and ``clauses`` (``fast``: ``--fast``'s 10 examples a test instead of the
    default 50). Hypothesis reports the first failing example it finds instead of shrinking
    it: whether a clause catches a defect does not depend on the size of the example that
    shows it, and shrinking is most of a failing run's time (1-2 s against 15-20 s for a
    trigger control). `as_user` shrinks, as the command does."""
    report = tmp_path / "report.json"
    args = check_args(target, {"profile": list(profiles), "clause": list(clauses), "fast": fast, "report": [str(report)]})
    output = io.StringIO()
    with _isolated(tmp_path), contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        code = pytest.main(args, plugins=[_Inner(), _NoShrink()])
    assert report.exists(), f"check wrote no report (pytest exit {code}):\n{output.getvalue()[-3000:]}"
    return Checked(EXIT.get(code, 3), valid_report(json.loads(report.read_text(encoding="utf-8"))), output.getvalue())


def assert_caught(checked: Checked, control: Control) -> dict[str, Any]:
    """``control.expected`` failed with a reason matching ``control.reason``, the history that shows
    it, and a reason id on the clause and on each of its failures (``control.reason_id`` among them
    when the control names one)."""
    found = checked.clause(control.expected)
    assert found["status"] == "fail", f"{found}\n{checked.output[-3000:]}"
    assert re.search(control.reason, found.get("reason") or ""), f"reason does not name the defect: {found.get('reason')!r}"
    assert found.get("history") is not None, "a failure carries the history that shows it"
    ids = {found.get("reason_id"), *(f.get("reason_id") for f in found.get("failures", []))}
    assert found.get("reason_id") and found.get("failures") and None not in ids and not any(i.endswith("unclassified") for i in ids), found
    assert not control.reason_id or control.reason_id in ids, f"reason ids {ids}, expected {control.reason_id!r}"
    return found


def as_user(target: str, *options: str) -> Checked:
    """``compaction-suite check TARGET --fast OPTIONS`` in a fresh interpreter
    (`compaction_suite.conformance.runner.run_check`), from the repository root with
    ``tests/`` on PYTHONPATH (for the broken compactors)."""
    done = run_check(target, ["--fast", *options], env=dict(os.environ, PYTHONPATH=str(TESTS)), cwd=ROOT)
    assert done.exit_code is not None and done.report is not None, f"check wrote no report (exit {done.exit_code}):\n{done.tail(40)}"
    return Checked(done.exit_code, valid_report(done.report), done.output)


class _Inner:
    """As pytester does for an inner run: no ``gc.collect()`` rounds at its end hunting for
    unraisable exceptions (a quarter of a second each time in a process this size)."""

    def pytest_configure(self, config: pytest.Config) -> None:
        try:
            from _pytest.unraisableexception import gc_collect_iterations_key
        except ImportError:  # a pytest without the setting: nothing to turn off
            return
        config.stash[gc_collect_iterations_key] = 0


class _NoShrink:
    """Loads, after the compaction plugin has loaded its Hypothesis profile, the same profile
    without the shrink phase."""

    @pytest.hookimpl(trylast=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        current = hypothesis_settings.get_profile(hypothesis_settings.get_current_profile_name())
        phases = [p for p in current.phases if p is not Phase.shrink]
        hypothesis_settings.register_profile("compaction-suite-no-shrink", parent=current, phases=phases)
        hypothesis_settings.load_profile("compaction-suite-no-shrink")


@contextlib.contextmanager
def _isolated(folder: Path) -> Iterator[None]:
    """What an inner run changes in this process, undone afterwards: the working directory,
    the cache folder, the Hypothesis profile and storage folder (process-wide settings), and
    the conformance test modules (imported afresh by every run, under its own profile)."""
    profile = hypothesis_settings.get_current_profile_name()
    home = storage_directory(intent_to_write=False).home_directory
    cache = os.environ.get("XDG_CACHE_HOME")
    path = list(sys.path)
    _forget_conformance_tests()
    os.environ["XDG_CACHE_HOME"] = str(folder / ".cache")
    sys.path.insert(0, str(TESTS))
    try:
        with contextlib.chdir(folder):
            yield
    finally:
        _forget_conformance_tests()
        sys.path[:] = path
        if cache is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = cache
        hypothesis_settings.load_profile(profile)
        set_hypothesis_home_dir(home)


def _forget_conformance_tests() -> None:
    """Drop the conformance test modules: pytest imports them from the source tree, under the
    package name ``conformance`` or ``compaction_suite.conformance`` depending on the layout."""
    for name in [
        n for n in sys.modules if n.split(".")[:2] == ["conformance", "tests"] or n.startswith("compaction_suite.conformance.tests")
    ]:
        del sys.modules[name]


def check(target: str, profiles: Sequence[str], tmp_path: Path, exit_code: int) -> dict[str, Any]:
    """`as_user` on ``profiles``, asserting its exit code; the JSON report (the verdict tests'
    helper; ``tmp_path`` is not needed since the runner keeps the report in its own folder)."""
    done = as_user(target, *[f"--profile={p}" for p in profiles])
    assert done.exit_code == exit_code, done.output[-3000:]
    return done.report
