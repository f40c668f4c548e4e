"""Every target that asks the suite's summarizer meets every fault, claimed ``failure`` or not
(SPEC CORE-10, CORE-11): what a user of any summarizing compactor hits when the model endpoint
fails. Unchanged output is FAIL-1..4's promise, for claimers only; here the MUSTs for all are
no crash (CORE-10, recorded by the suite on every call) and no history replaced by a summary
nobody wrote (CORE-11)."""

from __future__ import annotations

import pytest
from hypothesis import assume, given

from compaction_suite.conformance import oracle
from compaction_suite.conformance.assertions import require

from .common import FAULT_SWEEP, FAULTS, HANG_TIMEOUT, clause, compacts, faulted, substantial


@clause("CORE-11")
@pytest.mark.judges("CORE-10")  # a crash under any fault is CORE-10's, recorded by the suite
@pytest.mark.parametrize("fault", FAULTS)
@FAULT_SWEEP
@given(history=substantial)
def test_no_failed_summary_replaces_history(suite, fault, history):
    if not suite.calls_summarizer:
        pytest.skip("the target made no request to the suite's summarizer when it compacted: no summarizer fault can reach it")
    assume(compacts(suite, history))
    subject = faulted(suite, fault, max_context_tokens=1, summarizer_timeout=HANG_TIMEOUT)
    try:
        out = subject.compact(history, suite.settings.threshold_iterations)
    except Exception:  # noqa: BLE001 - a crash is CORE-10's verdict, recorded by the suite
        return
    require("CORE-11", oracle.check_no_failed_summary(history, out), history, out)
