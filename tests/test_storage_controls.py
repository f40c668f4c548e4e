"""Negative controls for the storage profile: each deliberately broken store in
tests/broken_stores/ must be rejected by ``compaction-suite check`` with the clause it
breaks, and the reference store must pass (SPEC STORE-*)."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BROKEN = ["non_atomic_replace", "soft_writes", "orphans", "mutating_fork", "no_event"]


def check(target: str, report: Path) -> subprocess.CompletedProcess[str]:
    """``compaction-suite check TARGET --profile storage --fast`` in a subprocess."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if os.path.isdir("/dev/shm"):
        env["TMPDIR"] = "/dev/shm"  # the suite's per-example stores: no disk syncs to wait for
    command = shutil.which("compaction-suite", path=str(Path(sys.executable).parent)) or "compaction-suite"
    args = [command, "check", target, "--profile", "storage", "--fast", "--report", str(report)]
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("name", BROKEN)
def test_broken_store_is_rejected_with_its_clause(name, tmp_path):
    expected = importlib.import_module(f"broken_stores.{name}").EXPECTED
    done = check(f"tests.broken_stores.{name}:factory", tmp_path / "r.json")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["passed"] is False
    assert report["clauses"][expected]["status"] == "fail", report["clauses"][expected]


def test_reference_store_passes(tmp_path):
    done = check("reference-store", tmp_path / "r.json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    report = json.loads((tmp_path / "r.json").read_text())
    assert {k: v["status"] for k, v in report["clauses"].items() if k.startswith("STORE-")} == {
        f"STORE-{n}": "pass" for n in range(1, 13)
    }
