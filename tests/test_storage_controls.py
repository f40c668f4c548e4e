"""Negative controls for the storage profile: each deliberately broken store in
tests/broken_stores/ must be rejected by ``compaction-suite check`` with the clause it
breaks, and the reference store must pass (SPEC STORE-*)."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest

from compaction_suite.conformance.runner import CheckRun, run_check

ROOT = Path(__file__).resolve().parent.parent
BROKEN = ["non_atomic_replace", "soft_writes", "orphans", "mutating_fork", "no_event"]


def check(target: str) -> CheckRun:
    """``compaction-suite check TARGET --profile storage --fast`` in a subprocess."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if os.path.isdir("/dev/shm"):
        env["TMPDIR"] = "/dev/shm"  # the suite's per-example stores: no disk syncs to wait for
    return run_check(target, ["--profile", "storage", "--fast"], env=env, cwd=ROOT)


@pytest.mark.parametrize("name", BROKEN)
def test_broken_store_is_rejected_with_its_clause(name):
    expected = importlib.import_module(f"broken_stores.{name}").EXPECTED
    done = check(f"tests.broken_stores.{name}:factory")
    assert done.exit_code == 1 and done.report is not None, done.tail(40)
    report = done.report
    assert report["passed"] is False
    assert report["clauses"][expected]["status"] == "fail", report["clauses"][expected]


def test_reference_store_passes():
    done = check("reference-store")
    assert done.exit_code == 0 and done.report is not None, done.tail(40)
    report = done.report
    assert {k: v["status"] for k, v in report["clauses"].items() if k.startswith("STORE-")} == {
        f"STORE-{n}": "pass" for n in range(1, 13)
    }
