"""Every target that asks the suite's summarizer meets every fault its summarizer API sends,
claimed ``failure`` or not, in a history where it really summarizes (SPEC CORE-10, CORE-11:
summarizer reach): what a user of any summarizing compactor hits when the model endpoint fails.
Unchanged output is FAIL-1..4's promise, for claimers only; here the MUSTs for all are no crash
(CORE-10, recorded by the suite on every call) and no history replaced by a summary nobody wrote
(CORE-11). Every test runs in the target's own wire format.

A persistent fault fails every request of the call; a transient one fails the first only, as a
provider's 429 or 503 usually does: a client retrying it (the official ``openai`` client retries
twice by default) gets the answer, and a summary standing for that answer is right (SPEC CORE-11
Decision: transient faults).
"""

from __future__ import annotations

import pytest
from hypothesis import given

from compaction_suite.conformance import judges
from compaction_suite.conformance.assertions import require
from compaction_suite.conformance.settings import Settings

from .common import (
    FAULT_SWEEP,
    FAULTS,
    HANG_TIMEOUT,
    TARGET_FORMAT,
    TRANSIENT,
    TRANSIENT_SWEEP,
    clause,
    faulted,
    substantial_in_format,
    summarizing,
)

pytestmark = TARGET_FORMAT

T = Settings().threshold_iterations
NOT_OFFERED = "no summarizer request offered a tool, so none can be answered with a tool call (SPEC CORE-11 Decision: a tool call is not a summary)"


@clause("CORE-11")
@pytest.mark.judges("CORE-10", "CORE-14", "CORE-16")  # a crash is CORE-10's; every output is judged for CORE-14 and CORE-16
@pytest.mark.parametrize("fault", FAULTS)
@FAULT_SWEEP
@given(history=substantial_in_format)
def test_no_failed_summary_replaces_history(suite, fault, history):
    """A persistent fault: the output holds nothing new standing for removed items."""
    history = summarizing(suite, history, fault)
    subject = faulted(suite, fault, max_context_tokens=1, summarizer_timeout=HANG_TIMEOUT)
    try:
        out = subject.compact(history, T)
    except Exception:  # noqa: BLE001 - a crash is CORE-10's verdict, recorded by the suite
        return
    finally:
        suite.reach(suite.server.exchanges, history)
    require(suite.format.no_failed_summary(history, out), history, out)


@clause("CORE-11")
@pytest.mark.judges("CORE-10", "CORE-12")
@pytest.mark.parametrize("fault", TRANSIENT)
@TRANSIENT_SWEEP
@given(history=substantial_in_format)
def test_transient_fault_then_the_answer(suite, fault, history):
    """A transient fault (the first request fails, the next is answered): whatever new item the
    output holds stands for an answer the summarizer gave in this call (what that answer's request
    held is CORE-12's, judged on this output as on every output)."""
    history = summarizing(suite, history, fault)
    subject = faulted(suite, fault, times=1, max_context_tokens=1, summarizer_timeout=HANG_TIMEOUT)
    try:
        out = subject.compact(history, T)
    except Exception:  # noqa: BLE001 - a crash is CORE-10's verdict, recorded by the suite
        return
    finally:
        suite.reach(suite.server.exchanges, history)
    if fault == "tool_call" and not any(e.fault for e in suite.server.exchanges):
        pytest.skip(NOT_OFFERED)
    require(judges.summary_stands_for_answer(suite.format, history, out, suite.server.exchanges, held=False), history, out)
