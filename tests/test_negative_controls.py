"""Negative controls: every deliberately broken compactor in tests/broken/ is rejected by
``compaction-suite check`` with the clause its defect breaks, and the reference passes
(the suite is worth what it catches)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from broken.compactors import CONTROLS, SHOULD_CONTROLS

ROOT = Path(__file__).resolve().parent.parent


def check(target: str, profiles: tuple[str, ...], tmp_path: Path, exit_code: int) -> dict:
    """``compaction-suite check TARGET --fast --report`` in a subprocess, as a user runs it:
    asserts its exit code and returns the JSON report."""
    report = tmp_path / "r.json"
    args = [sys.executable, "-m", "compaction_suite", "check", target, "--fast", "--report", str(report)]
    args += [f"--profile={p}" for p in profiles]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "tests"))
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == exit_code, done.stdout[-3000:] + done.stderr[-2000:]
    return json.loads(report.read_text())


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_broken_compactor_is_rejected_with_its_clause(name: str, tmp_path: Path) -> None:
    control = CONTROLS[name]
    report = check(f"broken.compactors:{name}", control.profiles, tmp_path, exit_code=1)
    clause = report["clauses"][control.expected]
    assert clause["status"] == "fail", clause
    assert clause.get("history") is not None, "a failure carries the smallest failing history"


@pytest.mark.parametrize("name", sorted(SHOULD_CONTROLS))
def test_should_clause_is_reported_without_failing(name: str, tmp_path: Path) -> None:
    control = SHOULD_CONTROLS[name]
    report = check(f"broken.compactors:{name}", control.profiles, tmp_path, exit_code=0)
    assert report["clauses"][control.expected] | {"reason": ""} == report["clauses"][control.expected] | {
        "status": "fail",
        "level": "SHOULD",
        "reason": "",
    }


@pytest.mark.parametrize("target", ["reference", "reference-structured", "reference-store"])
def test_reference_passes_every_claimed_clause(target: str, tmp_path: Path) -> None:
    report = check(target, (), tmp_path, exit_code=0)
    claimed = set(report["profiles_claimed"])
    statuses = {cid: c["status"] for cid, c in report["clauses"].items() if c["profile"] in claimed}
    assert statuses and set(statuses.values()) == {"pass"}, statuses
