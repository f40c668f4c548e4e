"""Core, the reactive path: a target that reduces after its provider's context-overflow answer
(``capabilities["reactive_window"]``, the context window of its agent's model) reduces and retries
when a history over that window gets the answer, rather than crashing (SPEC FIRE-5).

The answer is the provider's real one (`conformance.overflow`), read by the framework's own model
class; a class that does not recognise it lets the raw error end the agent's run
(strands-agents/harness-sdk#1528, #1712, #1912, #3718, #3969), which fails here with the provider's
words in the reason.
"""

from __future__ import annotations

import copy

from hypothesis import Phase, given
from hypothesis import settings as hypothesis_settings

from compaction_suite.conformance.assertions import require
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.violation import Violation

from .common import TARGET_FORMAT, clause, substantial_in_format
from .test_window import OVER, oversized

pytestmark = TARGET_FORMAT

T = Settings().threshold_iterations
REACTIVE_SWEEP = hypothesis_settings(max_examples=2, phases=(Phase.explicit, Phase.reuse, Phase.generate), deadline=None)
REASON_CHARS = 400
"""How much of the error's text the reason keeps (the provider's words come first)."""


@clause("FIRE-5")
@REACTIVE_SWEEP
@given(history=substantial_in_format)
def test_reduces_and_retries_on_the_providers_overflow_answer(suite, history):
    """A history of more than `OVER` model windows, each added part at most half a window (so one
    that trims whole messages can fit), is compacted without an exception escaping."""
    window = suite.capabilities.reactive_window
    history = oversized(suite, history, window)
    subject = suite.new()
    try:
        out = subject.compact(copy.deepcopy(history), T)
    except Exception as error:  # noqa: BLE001 - the verdict: the crash on the provider's answer (CORE-10 records it too)
        text = f"{type(error).__name__}: {error}"[:REASON_CHARS]
        found = f"a history of more than {OVER} windows of the agent's model ({window} tokens each) ended in {text} instead of a reduction and a retry"
        require(Violation("overflow-answer-not-recovered", found), history, None)
        return
    require(None, history, out)
