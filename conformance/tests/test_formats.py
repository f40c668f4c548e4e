"""Wire formats other than chat-completions: the Responses API items (SPEC RESP-1..RESP-9), the
Anthropic Messages API request part (SPEC ANTH-1..ANTH-7), and CORE-5, CORE-8, CORE-10 on
histories in the target's own format (the other format-independent clauses, TRIG, FAIL, EVT,
SUM-5, CORE-7, CORE-8 across processes, CORE-11..17, run in their own modules on
`common.in_format`'s histories).

Each test draws histories in one format; the plugin runs it only for a target of that format
(``wire_format`` marker), and a format's clauses are not applicable to targets of another
(SPEC Part A, "Wire formats"). Every output is also judged for all of the format's structural
clauses by the suite (`Suite.judge`), whichever test produced it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compaction_suite.conformance import formats, oracle
from compaction_suite.conformance.assertions import current, require
from compaction_suite.conformance.formats import anthropic, responses
from compaction_suite.conformance.responses_histories import reaching_again
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.suite import declared_capabilities
from compaction_suite.conformance.violation import Violation, crashed

from .common import clause, compacted_twice, run, slow_note, summarizing

T = Settings().threshold_iterations
iterations = st.integers(1, 2 * T)
forced = st.booleans()
"""True: both triggers fire (iteration T, M=1), so a compacting target compacts."""

RESPONSES = pytest.mark.wire_format(formats.RESPONSES)
ANTHROPIC = pytest.mark.wire_format(formats.ANTHROPIC)


def as_declared(history: Any) -> Any:
    """``history`` as the target's framework hands it over: without the system prompt when the
    target declares it lives outside (SPEC Part A, Declarations)."""
    if not declared_capabilities().system_outside:
        return history
    if isinstance(history, dict):
        return {k: v for k, v in history.items() if k != "system"}
    return [i for i in history if not (responses.kind(i) == "message" and i.get("role") in responses.SYSTEM_ROLES)]


def drawn(module: Any, **options: Any) -> st.SearchStrategy[Any]:
    return module.histories(**options).map(as_declared)


def judged(suite: Any, history: Any, iteration: int, force: bool) -> None:
    """Compact ``history`` and require the test's own clause (its marker) of the target's format on the output."""
    changes = {"max_context_tokens": 1} if force else {}
    _, out = run(suite, history, T if force else iteration, **changes)
    require(suite.format.structural(history, out).get(current()), history, out)


def in_flight_unchanged(suite: Any, history: Any) -> None:
    """A history waiting for a tool result comes back unchanged, or is rejected with ValueError."""
    try:
        _, out = run(suite, history, T, max_context_tokens=1)
    except ValueError:
        suite.exercise(current(), history)
        return
    suite.exercise(current(), history)
    require(suite.format.in_flight_changed(history, out), history, out)


# --- Responses API items


@RESPONSES
@clause("RESP-1")
@given(history=drawn(responses, min_rounds=4, max_rounds=14), iteration=iterations, force=forced)  # SPEC CORE-9 Decision: long histories
def test_outputs_follow_their_call(suite, history, iteration, force):
    judged(suite, history, iteration, force)


@RESPONSES
@clause("RESP-2")
@given(history=drawn(responses, min_rounds=4, max_rounds=14), iteration=iterations, force=forced)  # SPEC CORE-9 Decision: long histories
def test_every_call_has_one_output(suite, history, iteration, force):
    judged(suite, history, iteration, force)


@RESPONSES
@clause("RESP-3")
@given(history=drawn(responses, min_rounds=4, max_rounds=14, reasoning=True), iteration=iterations, force=forced)
def test_reasoning_stays_before_its_item(suite, history, iteration, force):
    judged(suite, history, iteration, force)


@RESPONSES
@clause("RESP-4")
@given(history=drawn(responses, min_rounds=4, max_rounds=14, compaction=True), iteration=iterations, force=forced)
def test_compaction_item_kept_opaque(suite, history, iteration, force):
    judged(suite, history, iteration, force)


@RESPONSES
@clause("RESP-5")
@given(history=drawn(responses, min_rounds=4, max_rounds=14, compaction=True), force=forced)
def test_compaction_item_never_duplicated(suite, history, force):
    """Also compacts the output again: an earlier compaction item meets a second compaction."""
    judged(suite, history, T, force)
    _, once = run(suite, history, T, max_context_tokens=1)
    if responses.invalid(once) is None and not responses.in_flight(once):
        judged(suite, once, T, True)


@RESPONSES
@clause("RESP-6")
@given(history=drawn(responses, max_rounds=14), iteration=iterations, force=forced)
def test_output_is_valid_items(suite, history, iteration, force):
    judged(suite, history, iteration, force)


@RESPONSES
@clause("RESP-7")
@given(history=drawn(responses, max_rounds=14, system=True), iteration=iterations, force=forced)
def test_system_items_kept(suite, history, iteration, force):
    """Every example holds a system or developer prompt (forced: the clause's control met none in its
    derandomized examples once pasted user turns moved the draws); RESP-7 is also judged on every output."""
    judged(suite, history, iteration, force)


@RESPONSES
@clause("RESP-8")
@given(history=drawn(responses, min_rounds=4, max_rounds=12, in_flight=True))  # SPEC CORE-9 Decision
def test_pending_call_never_compacted(suite, history):
    in_flight_unchanged(suite, history)


@RESPONSES
@clause("RESP-9")
@given(history=drawn(responses, min_rounds=4, max_rounds=14, reasoning=True), iteration=iterations, force=forced)
def test_reasoning_items_kept_opaque(suite, history, iteration, force):
    judged(suite, history, iteration, force)


@RESPONSES
@clause("RESP-20")
@given(history=drawn(responses, min_rounds=4, max_rounds=14), iteration=iterations, force=forced)
def test_compacted_items_not_resent(suite, history, iteration, force):
    judged(suite, history, iteration, force)


@RESPONSES
@clause("RESP-32")
@given(history=responses.histories(min_rounds=4, max_rounds=14).map(reaching_again).map(as_declared), iteration=iterations, force=forced)
def test_called_tools_stay_findable(suite, history, iteration, force):
    """Histories ending in a turn whose first step calls again a tool an earlier turn called (`reaching_again`:
    the model reaching for it after a compaction at the turn's start)."""
    judged(suite, history, iteration, force)


# --- Anthropic Messages API


@ANTHROPIC
@clause("ANTH-1")
@given(history=drawn(anthropic, max_rounds=14), iteration=iterations, force=forced)
def test_results_follow_their_use(suite, history, iteration, force):
    judged(suite, history, iteration, force)


@ANTHROPIC
@clause("ANTH-2")
@given(history=drawn(anthropic, max_rounds=14), iteration=iterations, force=forced)
def test_every_use_has_one_result(suite, history, iteration, force):
    judged(suite, history, iteration, force)


@ANTHROPIC
@clause("ANTH-3")
@given(history=drawn(anthropic, min_rounds=4, max_rounds=14, thinking=True), iteration=iterations, force=forced)
def test_thinking_kept_with_tool_use(suite, history, iteration, force):
    judged(suite, history, iteration, force)


@ANTHROPIC
@clause("ANTH-4")
@given(history=drawn(anthropic, max_rounds=14, system=True), iteration=iterations, force=forced)
def test_system_untouched(suite, history, iteration, force):
    judged(suite, history, iteration, force)


@ANTHROPIC
@clause("ANTH-5")
@given(history=drawn(anthropic, max_rounds=14), iteration=iterations, force=forced)
def test_output_is_a_valid_request(suite, history, iteration, force):
    judged(suite, history, iteration, force)


@ANTHROPIC
@clause("ANTH-6")
@given(history=drawn(anthropic, min_rounds=4, max_rounds=12, in_flight=True))  # SPEC CORE-9 Decision
def test_pending_use_never_compacted(suite, history):
    in_flight_unchanged(suite, history)


@ANTHROPIC
@clause("ANTH-7")
@given(history=drawn(anthropic, max_rounds=14), iteration=iterations, force=forced)
def test_compaction_blocks_as_accepted(suite, history, iteration, force):
    """A target that summarizes meets a history grown to its own trigger (`summarizing`): a compaction
    block is written when a compaction runs, the provider's own at its trigger of 50,000 tokens at least."""
    if suite.calls_summarizer:
        history = summarizing(suite, history)
    judged(suite, history, iteration, force)


# --- format-independent clauses, on the target's own format (chat-completions has its own tests)

TARGET = pytest.mark.wire_format("target")


@st.composite
def own(draw: st.DrawFn, **options: Any) -> Any:
    """A valid history in the target's format."""
    fmt = formats.get(declared_capabilities().wire_format)
    return as_declared(draw(fmt.histories(**options)))


def not_chat(suite: Any) -> None:
    if suite.format.name == formats.CHAT:
        pytest.skip("the chat-completions tests of this clause cover a chat-completions target")


@TARGET
@clause("CORE-5")
@given(history=own(max_rounds=14), force=forced)
def test_input_not_mutated_in_format(suite, history, force):
    not_chat(suite)
    before = json.dumps(history, sort_keys=True)
    suite.reset_server()
    subject = suite.new(**({"max_context_tokens": 1} if force else {}))
    out = subject.compact(history, T)
    problem = None if json.dumps(history, sort_keys=True) == before else Violation("input-mutated", "compact changed the history it was given")
    require(problem, json.loads(before), out)


@TARGET
@clause("CORE-8")
@given(history=own(min_rounds=4, max_rounds=14))
def test_same_input_same_output_in_format(suite, history):
    not_chat(suite)
    first, second, took = compacted_twice(suite, history, T, max_context_tokens=1)
    problem = None if oracle.same(first, second) else Violation("nondeterministic", "two fresh compactors gave different outputs" + slow_note(took, suite.settings.summarizer_timeout))
    require(problem, history, second)


@TARGET
@clause("CORE-10")
@given(history=own(min_rounds=1, max_rounds=14), iteration=iterations, force=forced)
def test_never_raises_in_format(suite, history, iteration, force):
    not_chat(suite)
    try:
        run(suite, history, T if force else iteration, **({"max_context_tokens": 1} if force else {}))
    except Exception as error:  # noqa: BLE001 - any exception is the violation under test
        require(crashed(error), history)
