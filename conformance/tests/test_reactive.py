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
import json
from typing import Any

from hypothesis import Phase, given
from hypothesis import settings as hypothesis_settings

from compaction_suite.conformance import overflow
from compaction_suite.conformance.assertions import require
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.suite import Suite
from compaction_suite.conformance.violation import Violation

from .common import TARGET_FORMAT, clause, in_format
from .test_window import OVER, log_text, oversized

pytestmark = TARGET_FORMAT

T = Settings().threshold_iterations
REACTIVE_SWEEP = hypothesis_settings(max_examples=2, phases=(Phase.explicit, Phase.reuse, Phase.generate), deadline=None)
REASON_CHARS = 400
"""How much of the error's text the reason keeps (the provider's words come first)."""
BATCH = 3
"""The newest round's parallel calls (SPEC FIRE-5, the newest batch over the window)."""
PART = 9 / 20
"""Each of the batch's results holds this share of the window: under half of it (a result fits, as
FIRE-5's added parts do), the batch together more than a window (27/20)."""
reducible = in_format(min_rounds=8, max_rounds=14, shapes=(), long_outputs=False, multimodal=False)
"""The drawn part of FIRE-5's histories: `substantial`'s rounds without the labelled shapes (a wide round,
a newest result over any budget), long outputs or media, so what a target keeps of it (its newest
messages) fits the window once the older rounds are reduced (SPEC FIRE-5 Decision, the kept part fits):
a newest round over the window is the newest-batch test's, judged by its own rule."""


@clause("FIRE-5")
@REACTIVE_SWEEP
@given(history=reducible)
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


@clause("FIRE-5")
@REACTIVE_SWEEP
@given(history=reducible)
def test_a_newest_batch_over_the_window_is_reduced_or_refused(suite, history):
    """FIRE-5's history with a newest round of `BATCH` parallel calls whose results each hold `PART` of
    the window and together more than it, the agent's next call due to answer them (SPEC FIRE-5,
    the newest batch over the window). Summarizing the older rounds cannot fit that call: the target
    reduces the batch itself (clips, offloads or truncates the results) and its call comes back, or
    ends the run with its own error saying the request cannot be reduced to fit. The provider's
    overflow answer to the call the target made after its own reduction, let through to the agent,
    fails (`overflow-after-reduction`, langchain-ai/deepagents#3405: a batch larger than the window
    was kept whole after the summary and the retried call overflowed again)."""
    window = suite.capabilities.reactive_window
    plain = oversized(suite, history, window)
    history = with_newest_batch(suite, plain, window)
    subject = suite.new()
    try:
        out = subject.compact(copy.deepcopy(history), T)
    except Exception as error:  # noqa: BLE001 - the verdict: whose words end the run
        endless = isinstance(error, overflow.UnboundedReduction)
        if not endless and overflow.LABEL not in str(error):
            return  # the target's own refusal: the request cannot be reduced to fit (SPEC FIRE-5 Decision)
        if not endless and not recovers(suite, plain):
            return  # it reads no overflow at all: the other FIRE-5 test's finding, not a reduction that overflowed
        text = f"{type(error).__name__}: {error}"[:REASON_CHARS]
        how = "each reduction was followed by the overflow again, without end" if endless else "the provider's answer ended the run"
        found = (
            f"the newest round's {BATCH} parallel results together hold more than the agent model's window ({window} tokens); "
            f"after the target's reduction its call overflowed again and {how}: {text}"
        )
        require(Violation("overflow-after-reduction", found), history, None)
        return
    require(None, history, out)


def recovers(suite: Suite, history: Any) -> bool:
    """Whether a fresh target compacts ``history`` (the same history without the newest batch) without an
    exception: it reads the provider's answer and reduces, so an answer ending the run on the batch came
    after its own reduction."""
    try:
        suite.new().compact(copy.deepcopy(history), T)
    except Exception:  # noqa: BLE001 - only whether it came back
        return False
    return True


def with_newest_batch(suite: Suite, history: Any, window: int) -> Any:
    """``history`` followed by a round in which the user asks for several build logs at once and the
    assistant reads `BATCH` of them in parallel (``readFile``), each result `PART` of the window: the
    history ends with the results, as an agent's state does when its model is called on them (an
    assistant acknowledgement first where the history does not end with the assistant's turn)."""
    calls = [
        {"id": f"call_batch_{k}", "type": "function", "function": {"name": "readFile", "arguments": json.dumps({"path": f"logs/build_{k}.log"})}}
        for k in range(BATCH)
    ]
    rounds: list[dict[str, Any]] = []
    items = history["messages"] if isinstance(history, dict) else history
    if not items or suite.format.role(items[-1]) != "assistant":
        rounds.append({"role": "assistant", "content": "Noted."})
    rounds += [
        {"role": "user", "content": f"Read the {BATCH} newest build logs at once and tell me which module failed."},
        {"role": "assistant", "content": None, "tool_calls": calls},
        *({"role": "tool", "tool_call_id": call["id"], "content": log_text(int(window * PART), 500 + k)} for k, call in enumerate(calls)),
    ]
    added = suite.format.from_chat(rounds)
    if isinstance(history, dict):
        return {**history, "messages": [*history["messages"], *added["messages"]]}
    return [*history, *added]
