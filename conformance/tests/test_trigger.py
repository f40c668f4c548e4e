"""Profile trigger: seed 000's ``iterations >= T OR tokens >= M`` (SPEC TRIG-1..TRIG-5).

Every test here runs in the target's own wire format (`TARGET_FORMAT`): when a compaction fires
does not depend on the history's shape."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from compaction_suite.conformance import oracle
from compaction_suite.conformance.assertions import require
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.violation import Violation

from .common import TARGET_FORMAT, changed, clause, compacts, estimate, in_format, run, substantial_in_format

pytestmark = TARGET_FORMAT

DEFAULT = Settings()
T, M, K = DEFAULT.threshold_iterations, DEFAULT.max_context_tokens, DEFAULT.keep_recent_rounds


def _unchanged(reason_id: str, history, out, why: str) -> None:
    require(None if oracle.same(history, out) else Violation(reason_id, f"{why}, yet the output differs from the input"), history, out)


def _compacted(reason_id: str, history, out, why: str) -> None:
    require(None if changed(history, out) else Violation(reason_id, f"{why}, yet the history was not compacted"), history, out)


@clause("TRIG-1")
@given(history=in_format(), iteration=st.integers(1, T - 1))
def test_below_both_thresholds_nothing_changes(suite, history, iteration):
    subject, out = run(suite, history, iteration)
    assume(estimate(subject, history) < M)
    _unchanged("compacted-below-thresholds", history, out, f"iteration {iteration} < {T} and tokens < {M}")


@clause("TRIG-2")
@given(history=substantial_in_format, iteration=st.integers(T, 2 * T))
def test_iterations_alone_compact(suite, history, iteration):
    assume(compacts(suite, history))
    subject, out = run(suite, history, iteration)
    assume(estimate(subject, history) < M)
    _compacted("iterations-did-not-trigger", history, out, f"iteration {iteration} >= {T}")


@clause("TRIG-3")
@given(history=substantial_in_format, iteration=st.integers(1, T - 1))
def test_tokens_alone_compact(suite, history, iteration):
    assume(compacts(suite, history))
    limit = suite.new().estimate(history) or 1
    _, out = run(suite, history, iteration, max_context_tokens=limit)
    _compacted("tokens-did-not-trigger", history, out, f"estimated tokens >= max_context_tokens={limit} at iteration {iteration}")


@clause("TRIG-4")
@given(history=substantial_in_format)
def test_boundaries_inclusive(suite, history):
    assume(compacts(suite, history))
    subject, below = run(suite, history, T - 1)
    assume(estimate(subject, history) < M)
    _unchanged("fired-below-iteration-boundary", history, below, f"iteration {T - 1} is below T={T}")
    _, at = run(suite, history, T)
    _compacted("iteration-boundary-exclusive", history, at, f"iteration {T} equals T={T}")
    tokens = subject.estimate(history)
    if tokens is None:
        return  # no estimate_tokens: the token boundary cannot be placed exactly
    _, at_m = run(suite, history, 1, max_context_tokens=tokens)
    _compacted("token-boundary-exclusive", history, at_m, f"the estimate {tokens} equals max_context_tokens")
    _, below_m = run(suite, history, 1, max_context_tokens=tokens + 1)
    _unchanged("fired-below-token-boundary", history, below_m, f"the estimate {tokens} is below max_context_tokens={tokens + 1}")


@clause("TRIG-5")
@given(history=in_format(max_rounds=K, earlier_summary=False), iteration=st.integers(T, 2 * T))
def test_nothing_older_than_the_tail(suite, history, iteration):
    _, out = run(suite, history, iteration, max_context_tokens=1)
    _unchanged("compacted-nothing-older", history, out, f"only {len(suite.format.rounds(history))} rounds (K={K}) exist")
