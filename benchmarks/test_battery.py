"""How long the full conformance battery takes against the reference (issue: under a minute on
2 cores). Measured here, with pytest-benchmark, never asserted as a timing in the tests:
``pytest benchmarks/test_battery.py --benchmark-only``."""

from __future__ import annotations

import resource

import pytest

from compaction_suite.conformance.runner import run_check


@pytest.mark.parametrize("target", ["reference", "reference-structured"])
@pytest.mark.parametrize("mode", ["full", "fast"])
def test_battery(benchmark, target, mode):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = benchmark.pedantic(run_check, args=(target, ["--fast"] if mode == "fast" else []), rounds=1, iterations=1)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # the check's own CPU time (and its subprocesses'): on a shared machine, what its wall time would be alone
    benchmark.extra_info["cpu_seconds"] = round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 2)
    assert done.exit_code == 0 and done.report is not None and done.report["passed"] is True, done.tail()
