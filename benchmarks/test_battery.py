"""How long the full conformance battery takes against the reference (issue: under a minute on
2 cores). Measured here, with pytest-benchmark, never asserted as a timing in the tests:
``pytest benchmarks/test_battery.py --benchmark-only``."""

from __future__ import annotations

import pytest

from compaction_suite.conformance.runner import run_check


@pytest.mark.parametrize("target", ["reference", "reference-structured"])
@pytest.mark.parametrize("mode", ["full", "fast"])
def test_battery(benchmark, target, mode):
    done = benchmark.pedantic(run_check, args=(target, ["--fast"] if mode == "fast" else []), rounds=1, iterations=1)
    assert done.exit_code == 0 and done.report is not None and done.report["passed"] is True, done.tail()
