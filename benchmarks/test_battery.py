"""How long the full conformance battery takes against the reference (issue: under a minute on
2 cores). Measured here, with pytest-benchmark, never asserted as a timing in the tests:
``pytest benchmarks/test_battery.py --benchmark-only``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


@pytest.mark.parametrize("target", ["reference", "reference-structured"])
@pytest.mark.parametrize("mode", ["full", "fast"])
def test_battery(benchmark, tmp_path, target, mode):
    report = tmp_path / "report.json"
    command = [sys.executable, "-m", "compaction_suite", "check", target, "--report", str(report)]
    command += ["--fast"] if mode == "fast" else []

    def run() -> int:
        return subprocess.run(command, capture_output=True, check=False).returncode

    assert benchmark.pedantic(run, rounds=1, iterations=1) == 0
    assert json.loads(report.read_text())["passed"] is True
