"""COST: what users pay. The usage a framework itself reports for a run that compacted, against what
the provider (the suite's test double) billed for every request of that run (SPEC Part A, COST-1, COST-2).

Applicable to a target declaring ``capabilities["usage"] = "reported"`` (its ``reported_usage()``,
`conformance.usage`); each example is one on which the target asks its summarizer or compact endpoint
(`summarizing`), so the run holds a compaction request beside the agent's own.
"""

from __future__ import annotations

from typing import Any

from hypothesis import Phase, given
from hypothesis import settings as hypothesis_settings

from compaction_suite.conformance import usage
from compaction_suite.conformance.assertions import require
from compaction_suite.conformance.suite import Suite
from compaction_suite.conformance.summarizer_server import Served

from .common import TARGET_FORMAT, clause, in_format, run, summarizing

COST_SWEEP = hypothesis_settings(max_examples=2, phases=(Phase.explicit, Phase.reuse, Phase.generate), deadline=None)
"""Two examples: the accounting, not the history's shape, is what these clauses are about."""


def billed_run(suite: Suite, history: Any) -> tuple[Any, Any, list[Served], usage.Tokens | None]:
    """The history on which the target compacts asking its summarizer, compacted by a fresh target:
    (history, output, every answer the double billed in that call, the framework's own report)."""
    history = summarizing(suite, history)
    subject, out = run(suite, history, suite.settings.threshold_iterations, max_context_tokens=1)
    return history, out, suite.server.served, usage.reported(subject.compactor)


def compacted(served: list[Served]) -> bool:
    """Whether the call billed a request besides the agent model's own (a summary, a compaction)."""
    return any(s.api != "model" for s in served)


@clause("COST-1")
@TARGET_FORMAT
@COST_SWEEP
@given(history=in_format(min_rounds=3, max_rounds=6, max_parallel_calls=2, earlier_summary=False))
def test_reported_usage_leaves_nothing_billed_out(suite, history):
    """Every token the provider billed in a run that compacted, the compaction's included, is in the
    usage the framework reports for it."""
    history, out, served, report = billed_run(suite, history)
    if compacted(served):
        require(usage.left_out(served, report), history, out)


@clause("COST-2")
@TARGET_FORMAT
@COST_SWEEP
@given(history=in_format(min_rounds=3, max_rounds=6, max_parallel_calls=2, earlier_summary=False))
def test_reported_usage_counts_nothing_twice(suite, history):
    """The usage the framework reports for a run that compacted counts no billed token twice."""
    history, out, served, report = billed_run(suite, history)
    if compacted(served):
        require(usage.counted_twice(served, report), history, out)
