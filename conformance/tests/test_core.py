"""Profile core: structural rules every compactor keeps (SPEC CORE-1..CORE-18).

CORE-1..4, CORE-6 and CORE-9 read a chat-completions list; CORE-5, CORE-7, CORE-8, CORE-10 and
CORE-12..CORE-18 mean the same in every wire format and their tests here draw the target's own
(`TARGET_FORMAT`; CORE-5, CORE-8 and CORE-10 also have chat-only tests and format tests in
test_formats.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from compaction_suite.conformance import judges, newest_results, oracle, providers, shapes
from compaction_suite.conformance.assertions import current, require
from compaction_suite.conformance.histories import (
    IMAGE_HOST,
    assistant_replies,
    file_parts,
    image_parts,
    media_round,
    pasted_documents,
    user_turns,
)
from compaction_suite.conformance.histories import histories as raw_histories
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.suite import declared_capabilities
from compaction_suite.conformance.violation import Violation, crashed

from .common import (
    TARGET_FORMAT,
    changed,
    clause,
    compacted_twice,
    estimate,
    heavy,
    histories,
    in_format,
    real_traffic,
    run,
    same_pair,
    slow_note,
    substantial,
    substantial_in_format,
    summarizing,
    target_format,
    well_formed,
)

T = Settings().threshold_iterations
SUBSTANTIAL = 400
"""CORE-7 and CORE-15 are judged where the messages a compaction removed hold at least this many
chars/4 tokens: a summary may honestly outgrow a few words."""
RECLAIMED = 0.5
"""CORE-15: the share of what a compaction removed that it must reclaim (SPEC CORE-15 Decision)."""
FEW = hypothesis_settings(max_examples=min(10, hypothesis_settings().max_examples))
"""For the clauses judged on every output anyway (CORE-12..14, CORE-16..18): their own tests
need a few forced compactions, not the profile's full count."""
iterations = st.integers(1, 2 * T)
drawn = histories() | real_traffic()
"""Generated histories, half of them in the shapes real traffic has (SPEC HIST-* Decision)."""
cases = st.one_of(
    st.tuples(drawn, iterations, st.just(False)),
    st.tuples(histories(min_rounds=4) | real_traffic(raw_histories(min_rounds=4)), st.just(T), st.just(True)),
)
"""(history, iteration, forced): a drawn history at a drawn iteration, or one of at least 4 rounds
with both triggers firing (iteration T, M=1), so that a compacting target compacts in about half
the examples, ``--fast``'s first ten included (a forced shape beats hoping for it)."""


def _run(suite, case):
    history, iteration, force = case
    _, out = run(suite, history, iteration, **({"max_context_tokens": 1} if force else {}))
    return history, out


@clause("CORE-1")
@given(case=cases)
def test_tool_results_follow_their_call(suite, case):
    history, out = _run(suite, case)
    if well_formed(out):
        require(oracle.check_tool_results_have_calls(out), history, out)


@clause("CORE-2")
@given(case=cases)
def test_every_call_has_one_result(suite, case):
    history, out = _run(suite, case)
    if well_formed(out):
        require(oracle.check_calls_have_one_result(out), history, out)


@clause("CORE-3")
@given(history=histories(system=None), iteration=iterations)
def test_system_messages_kept_first(suite, history, iteration):
    _, out = run(suite, history, iteration)
    if well_formed(out):
        require(oracle.check_system_kept(history, out, changed(history, out)), history, out)


@clause("CORE-3")
@given(history=substantial)
def test_system_messages_kept_first_when_compacting(suite, history):
    """CORE-3 where it bites: system prompts and both triggers firing (iteration T, M=1)."""
    _, out = run(suite, history, suite.settings.threshold_iterations, max_context_tokens=1)
    if well_formed(out):
        require(oracle.check_system_kept(history, out, changed(history, out)), history, out)


@clause("CORE-3")
@pytest.mark.shape("system-in-the-middle")
@given(history=substantial, at=st.integers(1, 12), role=st.sampled_from(["system", "developer"]))
def test_system_message_in_the_middle(suite, history, at, role):
    """CORE-3 decision: a system message in the middle of a history is kept verbatim and in order,
    where it was among the kept messages or moved up front; the leading ones stay first."""
    starts = [r[0] for r in oracle.rounds(history) if history[r[0]].get("role") not in oracle.SYSTEM_ROLES]
    cut = starts[min(at, len(starts) - 1)]
    history = history[:cut] + [{"role": role, "content": "From now on, answer in French."}] + history[cut:]
    _, out = run(suite, history, suite.settings.threshold_iterations, max_context_tokens=1)
    if well_formed(out):
        require(oracle.check_system_kept(history, out, changed(history, out)), history, out)


@clause("CORE-4")
@given(case=cases)
def test_kept_rounds_whole_and_in_order(suite, case):
    history, out = _run(suite, case)
    if well_formed(out):
        require(oracle.check_rounds_whole(history, out), history, out)


@clause("CORE-4")
@hypothesis_settings(max_examples=5)
@given(history=heavy, at_budget=st.booleans())
def test_long_runs_near_the_budget(suite, history, at_budget):
    """CORE-4 (and, as on every output, CORE-1/2/3/6) on long runs with parallel calls and large
    outputs, compacted by iteration or with the estimate exactly at max_context_tokens."""
    subject = suite.new()
    tokens = estimate(subject, history)
    if at_budget:
        _, out = run(suite, history, 1, max_context_tokens=max(tokens, 1))
    else:
        _, out = run(suite, history, T)
    if well_formed(out):
        require(oracle.check_rounds_whole(history, out), history, out)


@clause("CORE-5")
@given(history=drawn, iteration=iterations)
def test_input_not_mutated(suite, history, iteration):
    suite.reset_server()
    subject = suite.new()
    before = copy.deepcopy(history)
    subject.compact(history, iteration)
    problem = None if oracle.same(before, history) else Violation("input-mutated", "the input list or one of its messages was changed")
    require(problem, before, history)


@clause("CORE-5")
@given(history=substantial)
def test_input_not_mutated_when_compacting(suite, history):
    """CORE-5 where it bites: both triggers firing, so the compactor does its work."""
    suite.reset_server()
    subject = suite.new(max_context_tokens=1)
    before = copy.deepcopy(history)
    subject.compact(history, suite.settings.threshold_iterations)
    problem = None if oracle.same(before, history) else Violation("input-mutated", "the input list or one of its messages was changed")
    require(problem, before, history)


@clause("CORE-6")
@given(case=cases)
def test_output_is_valid(suite, case):
    history, out = _run(suite, case)
    require(oracle.check_valid_messages(out, history), history, out)


@TARGET_FORMAT
@clause("CORE-7")
@given(history=in_format(min_rounds=4), iteration=iterations)
def test_never_larger(suite, history, iteration):
    _never_larger(suite, history, iteration)


@TARGET_FORMAT
@clause("CORE-7")
@given(history=substantial_in_format)
def test_never_larger_when_compacting(suite, history):
    """CORE-7 where it bites: both triggers firing on a long history, so there is a prefix to cut."""
    _never_larger(suite, history, T, max_context_tokens=1)


def _never_larger(suite, history, iteration, **changes):
    subject, out = run(suite, history, iteration, **changes)
    if not (suite.format.well_formed(out) and changed(history, out)):
        return
    if suite.format.tokens(suite.format.removed(history, out)) < SUBSTANTIAL:
        return  # a summary may honestly outgrow a few words
    before, after = estimate(subject, history), estimate(subject, out)
    problem = None if after <= before else Violation("context-grew", f"the estimate grew from {before} to {after} tokens")
    require(problem, history, out)


@clause("CORE-8")
@given(history=drawn, iteration=iterations)
def test_deterministic(suite, history, iteration):
    first, second, took = compacted_twice(suite, history, iteration)
    problem = None if oracle.same(first, second) else Violation("nondeterministic", "two fresh compactors gave different outputs" + slow_note(took, suite.settings.summarizer_timeout))
    require(problem, history, second)


@clause("CORE-8")
@given(history=substantial)
def test_deterministic_when_compacting(suite, history):
    first, second, took = compacted_twice(suite, history, T, max_context_tokens=1)
    problem = None if oracle.same(first, second) else Violation("nondeterministic", "two fresh compactors gave different outputs" + slow_note(took, suite.settings.summarizer_timeout))
    require(problem, history, second)


@TARGET_FORMAT
@clause("CORE-8")
@hypothesis_settings(max_examples=5)
@given(history=substantial_in_format)
def test_deterministic_across_processes(suite, other_process, history):
    """CORE-8 decision, in the target's own wire format: the same output in another process."""
    def elsewhere() -> dict[str, Any]:
        suite.reset_server()
        return other_process.compact(suite.settings.with_(max_context_tokens=1), history, T)

    timeout = suite.settings.summarizer_timeout
    here, there, took = same_pair(lambda: run(suite, history, T, max_context_tokens=1)[1], elsewhere, lambda a, b: not b.get("error") and oracle.same(a, b["messages"]), timeout)
    problem = Violation("second-process-failed", f"the second process failed: {there['error']}") if there.get("error") else None
    if problem is None and not oracle.same(here, there["messages"]):
        problem = Violation("nondeterministic-across-processes", "another process gave a different output for the same input, iteration and summarizer answers" + slow_note(took, timeout))
    require(problem, history, there.get("messages"))


@clause("CORE-9")
@given(history=histories(min_rounds=4, in_flight=True))  # SPEC CORE-9 Decision: a compaction fires on a long history
def test_call_in_flight_never_compacted(suite, history):
    try:
        _, out = run(suite, history, T, max_context_tokens=1)
    except ValueError:
        suite.exercise(current(), history)
        return  # rejected: allowed
    problem = None if oracle.same(history, out) else Violation("compacted-in-flight", "a history with an unanswered tool call was changed")
    require(problem, history, out)


@clause("CORE-10")
@given(history=histories(min_rounds=1, max_rounds=14), iteration=iterations, tokens=st.sampled_from([1, 80_000]))
def test_never_raises_on_a_valid_history(suite, history, iteration, tokens):
    """CORE-10: no exception escapes ``compact`` on a valid, complete history (a ValueError is a
    rejection, allowed for an in-flight history only: CORE-9)."""
    try:
        run(suite, history, iteration, max_context_tokens=tokens)
    except Exception as error:  # noqa: BLE001 - any exception is the violation under test
        require(crashed(error), history)


# --- CORE-12..CORE-17: what a compaction stands for, what it asks, what it keeps (every format)


def _forced(suite, history):
    """A forced compaction (iteration T, M=1) of ``history``: the output, if it is one to judge."""
    _, out = run(suite, history, T, max_context_tokens=1)
    assume(suite.format.well_formed(out) and changed(history, out))
    return out


@TARGET_FORMAT
@clause("CORE-12")
@FEW
@given(history=substantial_in_format)
def test_summary_stands_for_an_answer(suite, history):
    """A new item standing for removed ones carries an answer the summarizer gave to a request
    that held them (langchain-ai/langchain#39261: fixed text, the summarizer never called)."""
    history = summarizing(suite, history)
    out = _forced(suite, history)
    require(judges.summary_stands_for_answer(suite.format, history, out, suite.server.exchanges), history, out)


IMAGES_BY_URL = st.builds(
    lambda side, seed: {"type": "image_url", "image_url": {"url": f"{IMAGE_HOST}{side:02d}-{seed:08x}.png"}},
    st.sampled_from((8, 32, 64)),
    st.integers(0, 2**32 - 1),
)
"""An image referred to by an https URL, as `histories.image_parts` draws one in three."""


@TARGET_FORMAT
@clause("CORE-12")
@FEW
@given(history=histories(min_rounds=8, max_rounds=12, multimodal=False, in_flight=False), parts=st.lists(IMAGES_BY_URL, min_size=1, max_size=2))
def test_summary_of_an_image_stands_for_an_answer(suite, history, parts):
    """A summary replacing an item that refers to an image by URL answers a request that held the URL
    (CORE-12 Decision: media; langchain-ai/deepagents#2873): the media round comes first, in what the
    target summarizes, so every example has an image to hold (forced, not left to the draw)."""
    if not declared_capabilities().image_urls:
        pytest.skip("the target declares images: inline (no image is referred to by URL)")
    subject_history = summarizing(suite, _with_early_media(history, parts))
    out = _forced(suite, subject_history)
    require(judges.summary_stands_for_answer(suite.format, subject_history, out, suite.server.exchanges), subject_history, out)


@TARGET_FORMAT
@clause("CORE-13")
@FEW
@given(history=substantial_in_format)
def test_summarizer_requests_are_valid(suite, history):
    """Every request the compaction sends the summarizer is one its provider accepts (the test
    double answers HTTP 400 with the provider's text otherwise, as the real API does). A target whose
    call raised after a refused request fails here by the refusal (its crash is CORE-10's)."""
    try:
        history = summarizing(suite, history)
        run(suite, history, T, max_context_tokens=1)
    except Exception:
        require(judges.requests_accepted(suite.server.exchanges), history)
        raise
    require(judges.requests_accepted(suite.server.exchanges), history)


@TARGET_FORMAT
@clause("CORE-14")
@FEW
@given(history=substantial_in_format)
def test_newest_round_kept(suite, history):
    """The newest round (the current task) survives a compaction; under faults the fault tests'
    outputs are judged for it too (every output is)."""
    _judge_newest_round(suite, history)


def _judge_newest_round(suite, history):
    """CORE-14 on a forced compaction of ``history``."""
    out = _forced(suite, history)
    require(judges.newest_round_kept(suite.format, history, out, suite.server.exchanges), history, out)


def _newest_holds_result(history):
    """Whether the newest round of ``history`` (in the target's format) answers a call with a tool result."""
    fmt = target_format()
    rounds = fmt.rounds(history)
    return bool(rounds) and not fmt.in_flight(history) and bool(newest_results.results(fmt, rounds[-1]))


@TARGET_FORMAT
@clause("CORE-14")
@FEW
@given(history=substantial_in_format.filter(_newest_holds_result))
def test_newest_tool_result_kept(suite, history):
    """CORE-14 on the round a compactor may truncate: the newest round is a tool round whose result
    the model has not read yet, so every example offers a compactor the choice between masking it
    and removing older work (SPEC CORE-14 Decision: a newest result masked in place)."""
    _judge_newest_round(suite, history)


@TARGET_FORMAT
@clause("CORE-15")
@given(history=substantial_in_format)
def test_compaction_reclaims_what_it_removes(suite, history):
    """SHOULD: a compaction removing at least SUBSTANTIAL tokens reclaims at least RECLAIMED of them
    (a tool-result strategy re-inserting the text it excluded reclaims nothing and passes CORE-7).
    An earlier summary it removes is not counted as removed: the new summary folds it (SUM-4) and
    carries its ids and tasks on (STRUCT-2, STRUCT-3) (SPEC CORE-15 Decision)."""
    subject, out = run(suite, history, T, max_context_tokens=1)
    if not (suite.format.well_formed(out) and changed(history, out)):
        return
    gone = _without_summaries(suite.format, suite.format.removed(history, out))
    if suite.format.tokens(gone) < SUBSTANTIAL:
        return  # a summary may honestly outgrow a few words
    removed, before, after = estimate(subject, gone), estimate(subject, history), estimate(subject, out)
    problem = None
    if before - after < RECLAIMED * removed:
        problem = Violation("little-reclaimed", f"the compaction removed {removed} tokens (earlier summaries aside) but reclaimed {before - after} ({before} -> {after} by the estimate), less than {RECLAIMED:.0%} of them")
    require(problem, history, out)


def _without_summaries(fmt, gone):
    """``gone`` (a `WireFormat.removed` history) without the earlier summaries it holds."""
    if isinstance(gone, dict):
        return {**gone, "messages": [m for m in gone.get("messages") or [] if not fmt.is_summary(m)]}
    return [item for item in gone if not fmt.is_summary(item)]


@TARGET_FORMAT
@clause("CORE-16")
@FEW
@given(history=substantial_in_format)
def test_something_besides_the_system_prompt_is_left(suite, history):
    out = _forced(suite, history)
    require(judges.something_left(suite.format, history, out), history, out)


@TARGET_FORMAT
@clause("CORE-21")
@FEW
@given(history=substantial_in_format)
def test_placeholder_states_true_count(suite, history):
    """SHOULD: a placeholder the compactor writes in place of removed messages, when it says how
    many ("Skipped 4 messages."), says how many it removed; judged on every output too."""
    out = _forced(suite, history)
    require(judges.count_stated(suite.format, history, out, suite.server.exchanges), history, out)


@TARGET_FORMAT
@clause("CORE-50")
@FEW
@given(history=substantial_in_format)
def test_a_call_sent_as_an_item_is_not_restated(suite, history):
    """SHOULD: a message the compaction writes does not restate, by its call id, a tool call or result
    the output also sends as an item, nor by its whole text a message the output also sends (the model
    would read it twice); judged on every output too."""
    out = _forced(suite, history)
    require(judges.restated_calls(suite.format, history, out, suite.server.exchanges), history, out)


@TARGET_FORMAT
@clause("CORE-60")
@FEW
@given(history=substantial_in_format)
def test_a_transcript_carries_each_message_whole(suite, history):
    """SHOULD: a message the compaction writes without a summarizer, carrying the start of an input message
    it no longer sends, carries that message whole (a transcript does not cut a message without a word);
    judged on every output too."""
    out = _forced(suite, history)
    require(judges.transcript_whole(suite.format, history, out, suite.server.exchanges), history, out)


@TARGET_FORMAT
@clause("CORE-61")
@FEW
@given(history=histories(min_rounds=8, max_rounds=12, multimodal=False), pasted=pasted_documents())
def test_a_transcript_names_each_record_by_a_role(suite, history, pasted):
    """SHOULD: a message the compaction writes without a summarizer names each message record it holds by
    a message role (openai/openai-agents-python#4787: a record re-read at a Unicode line boundary came back
    of role '{"role"'); the first user turn pastes a document's paragraphs (forced: their layout lines
    break at U+2028 or U+0085); judged on every output too."""
    subject_history = _with_early_turn(history, pasted)
    out = _forced(suite, subject_history)
    require(judges.transcript_roles(suite.format, subject_history, out, suite.server.exchanges), subject_history, out)


def _with_early_turn(history: list[dict], message: dict) -> Any:
    """``history`` (chat-completions) with ``message`` first after its system prompts (older than any tail
    a compactor keeps), in the target's format."""
    fmt = target_format()
    lead = next((i for i, m in enumerate(history) if m.get("role") not in oracle.SYSTEM_ROLES), len(history))
    out = fmt.from_chat([*history[:lead], message, {"role": "assistant", "content": "I read it; I will check it against the code."}, *history[lead:]])
    return fmt.without_system(out) if declared_capabilities().system_outside else out


@TARGET_FORMAT
@clause("CORE-17")
@FEW
@given(history=substantial_in_format)
def test_declared_providers_rules_hold(suite, history):
    """The rules of every provider the target declares (``capabilities["providers"]``) hold on its
    compacted outputs, beyond the wire format's own clauses."""
    declared = suite.capabilities.providers
    if not providers.rules(declared):
        pytest.skip(f"the declared providers {list(declared)} add no rules beyond the wire format's own clauses")
    out = _forced(suite, history)
    require(providers.broken(declared, suite.format, history, out), history, out)


def ending_mid_turn(history: list[dict]) -> list[dict]:
    """``history`` cut right after its last tool result: the agent between two iterations of its
    tool loop, where in-loop compaction runs (what a summary lost across iterations needs)."""
    last = max(i for i, m in enumerate(history) if m.get("role") == "tool")
    return history[: last + 1]


def _mid_turn_in_format() -> st.SearchStrategy[Any]:
    fmt = target_format()
    cut = raw_histories(min_rounds=8, max_rounds=14).filter(lambda h: any(m.get("role") == "tool" for m in h)).map(ending_mid_turn)
    drawn = cut.map(fmt.from_chat)
    return drawn.map(fmt.without_system) if declared_capabilities().system_outside else drawn


def _long_tool_loop_in_format() -> st.SearchStrategy[Any]:
    fmt = target_format()
    drawn = shapes.drawn("long-tool-loop", fmt.name)
    return drawn.map(fmt.without_system) if declared_capabilities().system_outside else drawn


def ending_with_answered_turn(drawn: tuple[list[dict], dict, dict]) -> list[dict]:
    """``history`` cut after its last finished turn (an answer without calls), then a question answered
    without a call: the agent between two turns, where a framework compacting at a turn's start compacts
    before that turn's one request, and where the history is kept between turns."""
    history, question, answer = drawn
    ends = [i for i, m in enumerate(history) if m.get("role") == "assistant" and not m.get("tool_calls")]
    return [*history[: ends[-1] + 1], question, answer] if ends else [*history, question, answer]


def _answered_turn_in_format() -> st.SearchStrategy[Any]:
    fmt = target_format()
    tooled = raw_histories(min_rounds=8, max_rounds=14).filter(lambda h: any(m.get("role") == "tool" for m in h))
    cut = st.tuples(tooled, user_turns(corrections=False, multimodal=False), assistant_replies()).map(ending_with_answered_turn)
    drawn = cut.map(fmt.from_chat)
    return drawn.map(fmt.without_system) if declared_capabilities().system_outside else drawn


mid_turn_in_format = _mid_turn_in_format()
"""Substantial histories ending with a round's tool results, in the target's wire format."""
long_tool_loop_in_format = _long_tool_loop_in_format()
"""One user turn, then only tool rounds (the labelled ``long-tool-loop`` shape): an agent deep in its
tool loop, where a framework's loop compacts its own earlier iterations."""
answered_turn_in_format = _answered_turn_in_format()
"""Substantial histories cut after their last question answered without a call: the agent between two turns
(pydantic/pydantic-ai#6123: a compaction run at that turn's start, lost when the history is kept between turns)."""


@TARGET_FORMAT
@clause("CORE-18")
@FEW
@given(history=st.one_of(mid_turn_in_format, long_tool_loop_in_format, substantial_in_format, answered_turn_in_format))
def test_summary_obtained_is_kept(suite, history):
    """What the compaction sent the summarizer and removed is carried by an answer in the output
    (microsoft/agent-framework#4991: the summary of one tool-loop iteration lost at the next, its
    exclusions kept); half of the histories end mid-turn, where in-loop compaction runs, one of them
    deep in a long tool loop, and a quarter right after a question answered without a call, where
    compaction at a turn's start runs (pydantic/pydantic-ai#6123)."""
    history = summarizing(suite, history)
    out = _forced(suite, history)
    require(judges.summary_kept(suite.format, history, out, suite.server.exchanges), history, out)


@TARGET_FORMAT
@clause("CORE-30")
@FEW
@given(history=st.one_of(mid_turn_in_format, long_tool_loop_in_format, substantial_in_format))
def test_tool_rounds_removed_oldest_first(suite, history):
    """SHOULD: a compaction that only removes takes tool rounds oldest first, never a newer one while an
    older stays (microsoft/agent-framework#5237: message ids AF assigned as it re-annotated a grown
    list collided, merged groups, and its window excluded newer rounds); the histories end deep in a
    tool loop, where a framework re-annotates its list at each iteration."""
    out = _forced(suite, history)
    require(judges.oldest_tool_rounds_first(suite.format, history, out), history, out)


MEDIA_ROUND_TOKENS = 2_000
"""The long output beside the media in CORE-31's forced newest round, in tokens, where the target
declares no window: a result large enough that a compactor clips what it keeps."""


def _media_round_chars() -> int:
    """A long output as large as the summarizer window or token trigger the target declares (a tenth
    more), so that the newest round alone is over it: where a framework clips the tail it keeps; at
    most half the agent model's window on a reactive path, where a round over it could not be sent at all."""
    caps = declared_capabilities()
    trigger = caps.trigger.limit if caps.trigger is not None and caps.trigger.kind == "tokens" else 0
    tokens = int(max(caps.summarizer_window or 0, trigger) * 1.1) or MEDIA_ROUND_TOKENS
    if caps.reactive_window is not None:
        tokens = min(tokens, caps.reactive_window // 2)
    return tokens * 4


def _with_media_round(history: list[dict], parts: list[dict], log: str) -> Any:
    """``history`` (chat-completions) with `histories.media_round` after it, in the target's format
    (media in a tool result where the format holds it there, else in the user turn)."""
    fmt = target_format()
    chat = history + media_round(parts, log, in_tool=fmt.name != "chat-completions")
    out = fmt.from_chat(chat)
    return fmt.without_system(out) if declared_capabilities().system_outside else out


@TARGET_FORMAT
@clause("CORE-31")
@FEW
@given(
    history=histories(min_rounds=6, max_rounds=10, multimodal=False, in_flight=False),
    parts=st.lists(image_parts() | file_parts(), min_size=1, max_size=2),
)
def test_media_kept_or_named(suite, history, parts):
    """An image or file an item kept (or masked in place) held is still there, or words name it where
    it was: the forced newest round reads media beside an output as large as the target's declared
    window (deepagents' overflow clip keeps the text of a ``read_file`` result and drops its image,
    langchain-ai/deepagents#4954); judged on every output too."""
    if declared_capabilities().reactive_window is not None:  # a PDF alone (1,500 tokens a page) may be over the agent model's window
        parts = [p for p in parts if p["type"] != "file"]
    parts = _held(parts)
    subject_history = _with_media_round(history, parts, _log(_media_round_chars()))
    out = _forced(suite, subject_history)
    require(judges.media_named(suite.format, subject_history, out), subject_history, out)


def _held(parts: list[dict]) -> list[dict]:
    """The media ``parts`` the target's messages hold: no file where it declares ``files: "none"``
    (a framework whose messages take text and images only); assumes one is left."""
    if declared_capabilities().files == "none":
        parts = [p for p in parts if p["type"] != "file"]
    assume(parts)
    return parts


def _log(size: int) -> str:
    """``size`` characters of build log, numbered lines (deterministic: the round's size is forced, not drawn)."""
    lines = [f"{n:>6}  [build] compiled module_{n % 97} in {n % 13}.{n % 10}s, 0 warnings\n" for n in range(1, size // 40 + 2)]
    return "".join(lines)[:size]


INLINE_MEDIA = (image_parts() | file_parts()).filter(lambda part: bool(judges.inline_media([part])))
"""An image or PDF inline, its data long enough to be looked for in a request (SUM-6)."""


def _with_early_media(history: list[dict], parts: list[dict]) -> Any:
    """``history`` (chat-completions) with `histories.media_round` first after its system prompts
    (older than any tail a compactor keeps), in the target's format."""
    fmt = target_format()
    lead = next((i for i, m in enumerate(history) if m.get("role") not in oracle.SYSTEM_ROLES), len(history))
    chat = history[:lead] + media_round(parts, _log(2_000), in_tool=fmt.name != "chat-completions") + history[lead:]
    out = fmt.from_chat(chat)
    return fmt.without_system(out) if declared_capabilities().system_outside else out


@TARGET_FORMAT
@clause("CORE-43")
@FEW
@given(history=histories(min_rounds=8, max_rounds=12, multimodal=False, in_flight=False), parts=st.lists(INLINE_MEDIA, min_size=1, max_size=2))
def test_media_stays_media(suite, history, parts):
    """No output item holds an image's or file's inline data as text (a preview sliced from
    ``str()`` of a tool output's content list, openai/openai-agents-python#4173): the media round
    comes first, older than any tail a compactor keeps whole; judged on every output too."""
    subject_history = _with_early_media(history, _held(parts))
    out = _forced(suite, subject_history)
    require(judges.media_data_in_text(suite.format, subject_history, out), subject_history, out)


@TARGET_FORMAT
@clause("SUM-6")
@FEW
@given(history=histories(min_rounds=8, max_rounds=12, multimodal=False, in_flight=False), parts=st.lists(INLINE_MEDIA, min_size=1, max_size=2))
def test_summarizer_reads_media_as_media(suite, history, parts):
    """A summarizer request holds an image or file it is sent as media (or leaves it out, or names
    it), never its base64 data as text: the media round comes first, in what the target summarizes;
    judged on every summarizer request too."""
    subject_history = summarizing(suite, _with_early_media(history, _held(parts)))
    out = _forced(suite, subject_history)
    require(judges.media_as_text(subject_history, suite.server.exchanges), subject_history, out)
