"""Profile core: structural rules every compactor keeps (SPEC CORE-1..CORE-9)."""

from __future__ import annotations

import copy

from hypothesis import given
from hypothesis import strategies as st

from compaction_suite.conformance import oracle
from compaction_suite.conformance.assertions import require
from compaction_suite.conformance.histories import histories, real_traffic
from compaction_suite.conformance.settings import Settings

from .common import changed, clause, estimate, run, substantial, well_formed

T = Settings().threshold_iterations
SUBSTANTIAL = 400
"""CORE-7 is judged where the messages a compaction removed hold at least this many chars/4
tokens: a summary may honestly outgrow a few words."""
iterations = st.integers(1, 2 * T)
drawn = histories() | real_traffic()
"""Generated histories, half of them in the shapes real traffic has (SPEC HIST-* Decision)."""


@clause("CORE-1")
@given(history=drawn, iteration=iterations)
def test_tool_results_follow_their_call(suite, history, iteration):
    _, out = run(suite, history, iteration)
    if well_formed(out):
        require("CORE-1", oracle.check_tool_results_have_calls(out), history, out)


@clause("CORE-2")
@given(history=drawn, iteration=iterations)
def test_every_call_has_one_result(suite, history, iteration):
    _, out = run(suite, history, iteration)
    if well_formed(out):
        require("CORE-2", oracle.check_calls_have_one_result(out), history, out)


@clause("CORE-3")
@given(history=histories(system=None), iteration=iterations)
def test_system_messages_kept_first(suite, history, iteration):
    _, out = run(suite, history, iteration)
    if well_formed(out):
        require("CORE-3", oracle.check_system_kept(history, out, changed(history, out)), history, out)


@clause("CORE-3")
@given(history=substantial)
def test_system_messages_kept_first_when_compacting(suite, history):
    """CORE-3 where it bites: system prompts and both triggers firing (iteration T, M=1)."""
    _, out = run(suite, history, suite.settings.threshold_iterations, max_context_tokens=1)
    if well_formed(out):
        require("CORE-3", oracle.check_system_kept(history, out, changed(history, out)), history, out)


@clause("CORE-4")
@given(history=drawn, iteration=iterations)
def test_kept_rounds_whole_and_in_order(suite, history, iteration):
    _, out = run(suite, history, iteration)
    if well_formed(out):
        require("CORE-4", oracle.check_rounds_whole(history, out), history, out)


@clause("CORE-5")
@given(history=drawn, iteration=iterations)
def test_input_not_mutated(suite, history, iteration):
    suite.reset_server()
    subject = suite.new()
    before = copy.deepcopy(history)
    subject.compact(history, iteration)
    problem = None if oracle.same(before, history) else "the input list or one of its messages was changed"
    require("CORE-5", problem, before, history)


@clause("CORE-6")
@given(history=drawn, iteration=iterations)
def test_output_is_valid(suite, history, iteration):
    _, out = run(suite, history, iteration)
    require("CORE-6", oracle.check_valid_messages(out), history, out)


@clause("CORE-7")
@given(history=histories(min_rounds=4), iteration=iterations)
def test_never_larger(suite, history, iteration):
    subject, out = run(suite, history, iteration)
    if not (well_formed(out) and changed(history, out)):
        return
    kept = set(oracle.kept_indices(history, out)[0].values())
    removed = [m for i, m in enumerate(history) if i not in kept]
    if oracle.chars4(removed) < SUBSTANTIAL:
        return  # a summary may honestly outgrow a few words
    before, after = estimate(subject, history), estimate(subject, out)
    problem = None if after <= before else f"the estimate grew from {before} to {after} tokens"
    require("CORE-7", problem, history, out)


@clause("CORE-8")
@given(history=drawn, iteration=iterations)
def test_deterministic(suite, history, iteration):
    _, first = run(suite, history, iteration)
    _, second = run(suite, history, iteration)
    problem = None if oracle.same(first, second) else "two fresh compactors gave different outputs"
    require("CORE-8", problem, history, second)


@clause("CORE-9")
@given(history=histories(min_rounds=2, in_flight=True))
def test_call_in_flight_never_compacted(suite, history):
    try:
        _, out = run(suite, history, T, max_context_tokens=1)
    except ValueError:
        return  # rejected: allowed
    problem = None if oracle.same(history, out) else "a history with an unanswered tool call was changed"
    require("CORE-9", problem, history, out)
