"""STORE-22: what a run that compacted inside itself hands the application to store (SPEC Part A).

Applicable to a target declaring ``capabilities["run_messages"] = "reported"`` (its ``reported_run()``,
`conformance.run_messages`): the framework's run is given the history up to its last user turn and
replays that turn, compacting in the run; the judge compares what the framework reports as the run's
new messages with its own history after the run.
"""

from __future__ import annotations

from typing import Any

from hypothesis import Phase, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from compaction_suite.conformance import run_messages
from compaction_suite.conformance.assertions import require
from compaction_suite.conformance.histories import tool_rounds, user_turns

from .common import clause, histories, run

RUN_SWEEP = hypothesis_settings(max_examples=12, phases=(Phase.explicit, Phase.reuse, Phase.generate), deadline=None)
"""Few examples: each is a whole agent run of the framework's loop."""
ANSWER = "Done: that is everything I found."


def answered(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``history`` ending as a finished run ends: in an assistant answer without calls (one added after
    trailing tool results or a user message), so the run's last step is the model's answer."""
    last = history[-1] if history else {}
    if last.get("role") == "assistant" and not last.get("tool_calls"):
        return history
    return [*history, {"role": "assistant", "content": ANSWER}]


LAST_TURN_ROUNDS = (2, 3)
"""Tool rounds in the replayed last turn: a run of several model steps, so a window moving inside the run
removes messages of the run itself (pydantic/pydantic-ai#3983's shape), whatever the earlier rounds drew."""


@st.composite
def _ending_in_a_tool_loop(draw: st.DrawFn, before: st.SearchStrategy[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """A history from ``before``, then a last user turn of `LAST_TURN_ROUNDS` tool rounds and an answer:
    the run STORE-22 judges is forced to take several steps (SPEC STORE-22), not left to the draw."""
    history = draw(before) + [draw(user_turns(multimodal=False))]
    for _ in range(draw(st.integers(*LAST_TURN_ROUNDS))):
        history += draw(tool_rounds(max_calls=2))
    return answered(history)


@clause("STORE-22")
@RUN_SWEEP
@given(history=_ending_in_a_tool_loop(histories(min_rounds=3, max_rounds=7, max_parallel_calls=2, earlier_summary=False, multimodal=False)), iteration=st.just(1))
def test_new_messages_are_what_the_run_added(suite, history, iteration):
    """The messages the framework reports as a run's new ones are exactly those of its history after
    the run that the run added: a store of the run's input followed by them is that history."""
    subject, _ = run(suite, history, iteration)
    report = run_messages.reported(subject.compactor)
    if report is not None:
        given_, new, after = report
        require(run_messages.split_wrong(history, given_, new, after, run_messages.counts(subject.compactor)), history, after)
