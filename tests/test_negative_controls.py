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


def check(target: str, profiles: tuple[str, ...], report: Path) -> subprocess.CompletedProcess[str]:
    """``compaction-suite check TARGET --fast --report`` in a subprocess, as a user runs it."""
    args = [sys.executable, "-m", "conformance", "check", target, "--fast", "--report", str(report)]
    args += [f"--profile={p}" for p in profiles]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "tests"))
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_broken_compactor_is_rejected_with_its_clause(name: str, tmp_path: Path) -> None:
    control = CONTROLS[name]
    done = check(f"broken.compactors:{name}", control.profiles, tmp_path / "r.json")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    report = json.loads((tmp_path / "r.json").read_text())
    clause = report["clauses"][control.expected]
    assert clause["status"] == "fail", clause
    assert clause.get("history") is not None, "a failure carries the smallest failing history"


@pytest.mark.parametrize("name", sorted(SHOULD_CONTROLS))
def test_should_clause_is_reported_without_failing(name: str, tmp_path: Path) -> None:
    control = SHOULD_CONTROLS[name]
    done = check(f"broken.compactors:{name}", control.profiles, tmp_path / "r.json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["clauses"][control.expected] | {"reason": ""} == report["clauses"][control.expected] | {
        "status": "fail",
        "level": "SHOULD",
        "reason": "",
    }


@pytest.mark.parametrize("target", ["reference", "reference-structured", "reference-store"])
def test_reference_passes_every_claimed_clause(target: str, tmp_path: Path) -> None:
    done = check(target, (), tmp_path / "r.json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    report = json.loads((tmp_path / "r.json").read_text())
    claimed = set(report["profiles_claimed"])
    statuses = {cid: c["status"] for cid, c in report["clauses"].items() if c["profile"] in claimed}
    assert statuses and set(statuses.values()) == {"pass"}, statuses
