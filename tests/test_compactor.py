"""The compactor end to end (SPEC RT-1, RT-7, ROUND-3, SUMZ-2, STRAT-9, STRAT-10, EVENT-*): reference/compactor.py.

The summarizer is the test double on 127.0.0.1, reached through the official
``openai`` client.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import re
from collections.abc import Callable
from typing import Any

import openai
import pytest

from compaction_suite.conformance import summarizer_server
from compaction_suite.conformance.summarizer_server import SummarizerServer
from compaction_suite.reference import (
    CharsPerFour,
    Compactor,
    HistoryError,
    IterationsOrTokens,
    KeepLastMessages,
    ObservedTokenBudget,
    Summarize,
    Summarizer,
)
from compaction_suite.reference.summary import SUMMARY_PREFIX, is_summary

from events import last
from message_builders import calls, reply, result, system, user

MODEL = "summary-model"
LOGGER = "compaction_suite.reference.compactor"
Make = Callable[..., Compactor]


def turn(i: int) -> list[dict[str, Any]]:
    """One user question and the assistant's answer, about 200 characters each."""
    return [user(f"Question {i}: " + "please look into the parser " * 7), reply(f"Answer {i}: " + "the parser is fine " * 10)]


def chat(turns: int) -> list[dict[str, Any]]:
    return [system(), *(m for i in range(turns) for m in turn(i))]


@pytest.fixture
def summarizer(client: openai.OpenAI, async_client: openai.AsyncOpenAI) -> Summarizer:
    return Summarizer(MODEL, client=client, async_client=async_client)


@pytest.fixture
def make(summarizer: Summarizer) -> Make:
    """A seed-000 compactor: Summarize(K=2) behind IterationsOrTokens(T, M)."""

    def build(threshold_iterations: int = 8, max_context_tokens: int = 80_000, **kwargs: Any) -> Compactor:
        trigger = kwargs.pop("trigger", IterationsOrTokens(threshold_iterations, max_context_tokens))
        return Compactor(Summarize(summarizer, keep_rounds=2, **kwargs), trigger)

    return build


# --- RT-1: iterations count from the last compaction --------------------------------------------


def test_iterations_count_from_the_last_compaction(server: SummarizerServer, make: Make) -> None:
    compactor = make()
    messages = chat(4)
    compacted_at = []
    for iteration in range(1, 21):
        messages = compactor.compact(messages + turn(100 + iteration), iteration=iteration)
        if last(compactor).compacted:
            compacted_at.append(iteration)
    assert compacted_at == [8, 16]
    assert len(server.requests) == 2


def test_the_iterations_seen_by_the_trigger_restart_after_a_compaction(server: SummarizerServer, make: Make) -> None:
    compactor = make()
    messages = compactor.compact(chat(6), iteration=8)
    assert last(compactor).trigger == "iterations 8 >= 8"
    for iteration in range(9, 16):
        assert compactor.compact(messages, iteration=iteration) == messages
        assert last(compactor).skipped_reason == "trigger did not fire"
    compactor.compact(messages + turn(9), iteration=16)
    assert last(compactor).trigger == "iterations 8 >= 8"


def test_a_lower_iteration_starts_a_new_run(server: SummarizerServer, make: Make) -> None:
    compactor = make()
    compactor.compact(chat(6), iteration=8)
    assert last(compactor).compacted
    compactor.compact(chat(6), iteration=3)
    assert not last(compactor).compacted
    out = compactor.compact(chat(6), iteration=8)
    assert last(compactor).compacted, "8 iterations into the new run"
    assert last(compactor).trigger == "iterations 8 >= 8"
    assert is_summary(out[1])


# --- the token trigger, through the ledger -----------------------------------------------------------


def test_the_token_trigger_fires_at_its_inclusive_limit(server: SummarizerServer, make: Make) -> None:
    messages = chat(6)
    limit = CharsPerFour().estimate(messages)
    assert make(max_context_tokens=limit + 1).compact(messages, iteration=1) == messages
    compactor = make(max_context_tokens=limit)
    assert compactor.compact(messages, iteration=1) != messages
    assert last(compactor).trigger == f"estimated tokens {limit} >= {limit}"


def test_a_growing_history_is_estimated_like_a_fresh_count(server: SummarizerServer, make: Make) -> None:
    compactor = make(threshold_iterations=1_000, max_context_tokens=600)
    messages = chat(1)
    seen = []
    for iteration in range(1, 15):
        messages = compactor.compact(messages + turn(iteration), iteration=iteration)
        event = last(compactor)
        seen.append(event.compacted)
        if not event.compacted:
            assert event.estimated_tokens_before == CharsPerFour().estimate(messages)
        else:
            assert event.estimated_tokens_after == CharsPerFour().estimate(messages)
    assert seen.count(True) >= 2, "the estimate grows past the limit again after a compaction"


def test_a_growing_history_is_validated_once_per_message(server: SummarizerServer, make: Make, monkeypatch) -> None:
    """TOK-4: the compactor's RoundLog checks only what was appended, and across a compaction
    it checks the (short) compacted history once, not the input again."""
    import compaction_suite.reference.rounds as rounds_module

    checked: list[int] = []
    real = rounds_module._role
    def spy(message: Any, index: int) -> Any:
        checked.append(index)
        return real(message, index)

    monkeypatch.setattr(rounds_module, "_role", spy)
    compactor = make(threshold_iterations=3)
    messages = chat(1)
    for iteration in range(1, 3):
        messages = compactor.compact(messages + turn(iteration), iteration=iteration)
    assert sorted(checked) == list(range(len(messages)))  # 1 + 2 * 3 messages, each checked once
    checked.clear()
    compacted = compactor.compact(messages + turn(3), iteration=3)
    assert last(compactor).compacted
    assert checked == [7, 8] + list(range(len(compacted)))  # the new turn, then the compacted output
    checked.clear()
    compactor.compact(compacted + turn(4), iteration=4)
    assert checked == [len(compacted), len(compacted) + 1]


def test_a_message_replaced_in_place_is_not_lost_when_compacting() -> None:
    """TOK-4's decision: before compacting, the compactor re-splits a history whose messages
    are not the ones it saw, so the caller's replacement is what it keeps."""
    compactor = Compactor(KeepLastMessages(4), IterationsOrTokens(threshold_iterations=100))
    messages = chat(4)
    compactor.compact(messages, iteration=1)
    stale = messages[-2]
    messages[-2] = user("A corrected question.")  # not the last message: the RoundLog still extends
    out = compactor.compact(messages + turn(5), iteration=2, force=True)
    assert last(compactor).compacted
    assert out[-4:] == [user("A corrected question."), messages[-1], *turn(5)]
    assert not any(m is stale for m in out)


def test_an_invalid_replacement_is_caught_before_compacting(server: SummarizerServer, make: Make) -> None:
    compactor = make(threshold_iterations=100)
    messages = chat(4)
    compactor.compact(messages, iteration=1)
    messages[2] = {"role": "tool", "tool_call_id": "nobody", "content": "orphan"}
    with pytest.raises(HistoryError) as error:
        compactor.compact(messages + turn(5), iteration=2, force=True)
    assert error.value.rule == "HIST-3" and error.value.index == 2
    assert compactor.last_event is None
    assert not server.requests


# --- RT-7: skip and force ------------------------------------------------------------------------------


def test_force_compacts_below_every_threshold(server: SummarizerServer, make: Make) -> None:
    compactor = make()
    out = compactor.compact(chat(6), iteration=1, force=True)
    assert is_summary(out[1])
    assert last(compactor).trigger == "forced for this run"


@pytest.mark.parametrize("force", [False, True])
def test_skip_leaves_the_history_alone_even_when_forced(server: SummarizerServer, make: Make, force: bool) -> None:
    compactor = make()
    messages = chat(6)
    out = compactor.compact(messages, iteration=8, skip=True, force=force)
    assert out == messages and out is not messages
    assert last(compactor).skipped_reason == "skipped for this run"
    assert last(compactor).trigger is None
    assert server.requests == []


# --- ROUND-3 and HIST: what the compactor will not compact -------------------------------------------------


def test_a_call_in_flight_is_returned_unchanged_even_when_forced(server: SummarizerServer, make: Make) -> None:
    compactor = make()
    messages = [*chat(6), calls("a", "b"), result("b")]
    out = compactor.compact(messages, iteration=8, force=True)
    assert out == messages and out is not messages
    event = last(compactor)
    assert not event.compacted
    assert event.skipped_reason == "a tool call is in flight (ROUND-3)"
    assert server.requests == []


def test_a_bad_history_raises_and_is_left_untouched(server: SummarizerServer, make: Make) -> None:
    compactor = make()
    messages = [*chat(6), result("nobody-called-me")]
    before = copy.deepcopy(messages)
    with pytest.raises(HistoryError) as caught:
        compactor.compact(messages, iteration=8)
    assert (caught.value.rule, caught.value.index) == ("HIST-3", 13)
    assert messages == before
    assert server.requests == []


def test_a_bad_history_leaves_no_stale_event(server: SummarizerServer, make: Make) -> None:
    compactor = make()
    compactor.compact(chat(2), iteration=1)
    assert compactor.last_event is not None
    with pytest.raises(HistoryError):
        compactor.compact([*chat(2), result("nobody-called-me")], iteration=2)
    assert compactor.last_event is None


def test_a_bad_history_raises_from_acompact_too(server: SummarizerServer, make: Make) -> None:
    with pytest.raises(HistoryError, match="HIST-5"):
        asyncio.run(make().acompact([user("x"), calls("a"), user("y")], iteration=8))


# --- SUMZ-2: a failing summarizer is not fatal -----------------------------------------------------------------

FAULTS = [
    ("429", {"retry_after": "3"}, "RateLimitError"),
    ("500", {}, "InternalServerError"),
    ("503", {}, "InternalServerError"),
    ("malformed", {}, "JSONDecodeError"),
    ("no_choices", {}, "MalformedResponse"),
    ("empty_content", {}, "EmptySummary"),
    ("null_content", {}, "EmptySummary"),
    ("hang", {"hang_seconds": 10}, "APITimeoutError"),
    ("drop", {}, "APIConnectionError"),
]


@pytest.mark.parametrize(("fault", "params", "error_type"), [pytest.param(*f, id=f[0]) for f in FAULTS])
def test_a_summarizer_failure_returns_the_input_and_logs_a_warning(
    server: SummarizerServer,
    client: openai.OpenAI,
    caplog: pytest.LogCaptureFixture,
    fault: str,
    params: dict[str, Any],
    error_type: str,
) -> None:
    summarizer = Summarizer(MODEL, client=client.with_options(timeout=0.3 if fault == "hang" else 2.0))
    compactor = Compactor(Summarize(summarizer), IterationsOrTokens(8, 80_000))
    messages = chat(6)
    before = copy.deepcopy(messages)
    server.fault(fault, times=1, **params)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        out = compactor.compact(messages, iteration=8)
    assert out == messages == before and out is not messages
    event = last(compactor)
    assert not event.compacted
    assert event.failure_reason is not None and event.failure_reason.startswith(f"{error_type}: ")
    assert event.prompt_hash == summarizer.prompt_hash
    assert event.messages_after is None and event.estimated_tokens_saved is None
    (record,) = [r for r in caplog.records if r.name == LOGGER]
    assert record.levelno == logging.WARNING
    assert record.getMessage() == f"compaction failed: {event.failure_reason}"
    assert re.match(rf"compaction failed: {error_type}: \S", record.getMessage())


def test_a_failure_does_not_restart_the_count_so_the_next_round_tries_again(server: SummarizerServer, make: Make) -> None:
    compactor = make()
    server.fault("500", times=1)
    messages = compactor.compact(chat(6), iteration=8)
    assert last(compactor).failure_reason
    compactor.compact(messages + turn(9), iteration=9)
    assert last(compactor).compacted
    assert len(server.requests) == 2


def test_acompact_failure_is_not_fatal_either(
    server: SummarizerServer, make: Make, caplog: pytest.LogCaptureFixture
) -> None:
    server.fault("503", times=1)
    messages = chat(6)
    compactor = make()
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert asyncio.run(compactor.acompact(messages, iteration=8)) == messages
    assert str(last(compactor).failure_reason).startswith("InternalServerError: HTTP 503")
    assert "compaction failed: InternalServerError: HTTP 503" in caplog.text


def test_a_failure_whose_fallback_truncation_is_discarded_is_still_reported(
    server: SummarizerServer, summarizer: Summarizer, caplog: pytest.LogCaptureFixture
) -> None:
    server.fault("500")
    compactor = Compactor(Summarize(summarizer, keep_rounds=2, fallback_truncation=True))
    messages = [system(), *(m for i in range(6) for m in (user(f"q{i}"), reply(f"a{i}")))]
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        out = compactor.compact(messages, iteration=8)
    assert out == messages, "truncating short messages does not make them smaller (STRAT-10)"
    assert "(STRAT-10)" in str(last(compactor).skipped_reason)
    assert last(compactor).failure_reason is not None
    assert "InternalServerError" in caplog.text


# --- STRAT-9 and STRAT-10: compactions that change nothing ----------------------------------------------------


def test_nothing_older_than_the_tail_means_no_request_and_an_unchanged_history(server: SummarizerServer, make: Make) -> None:
    compactor = make()
    messages = [system(), user("hi"), reply("hello")]
    assert compactor.compact(messages, iteration=8) == messages
    assert last(compactor).skipped_reason == "nothing older than the kept tail (STRAT-9)"
    assert not last(compactor).compacted
    assert server.requests == []


def test_a_summary_that_is_not_smaller_is_discarded(server: SummarizerServer, make: Make) -> None:
    long_summary = "The conversation covered the parser in great detail. " * 200
    server.reply_with(long_summary)
    compactor = make()
    messages = chat(6)
    out = compactor.compact(messages, iteration=8)
    assert out == messages and out is not messages
    event = last(compactor)
    assert not event.compacted
    assert event.skipped_reason is not None and "(STRAT-10)" in event.skipped_reason
    assert "would not be smaller" in event.skipped_reason
    usage = summarizer_server.usage(server.bodies[0]["messages"], long_summary)
    assert (event.summarizer_prompt_tokens, event.summarizer_completion_tokens) == (
        usage["prompt_tokens"],
        usage["completion_tokens"],
    ), "the usage that was paid is still reported"
    compactor.compact(messages + turn(7), iteration=9)
    assert len(server.requests) == 1, "the count restarts, so the summarizer is not asked again next round"


# --- EVENT-1: the event of a compaction ----------------------------------------------------------------------------


def test_the_event_of_a_compaction_carries_every_field(server: SummarizerServer, make: Make, summarizer: Summarizer) -> None:
    server.reply_with("- The user asked about the parser; it is fine.")
    compactor = make()
    messages = chat(6)
    out = compactor.compact(messages, iteration=8)
    event = last(compactor)
    assert out == [messages[0], {"role": "user", "content": f"{SUMMARY_PREFIX}\n- The user asked about the parser; it is fine."}, *messages[-2:]]
    assert event.compacted and event.trigger == "iterations 8 >= 8" and event.iteration == 8
    assert (event.messages_before, event.messages_after) == (13, 4)
    assert event.estimated_tokens_before == CharsPerFour().estimate(messages)
    assert event.estimated_tokens_after == CharsPerFour().estimate(out)
    assert event.estimated_tokens_saved == event.estimated_tokens_before - event.estimated_tokens_after > 0
    usage = summarizer_server.usage(server.bodies[0]["messages"], "- The user asked about the parser; it is fine.")
    assert event.summarizer_prompt_tokens == usage["prompt_tokens"]
    assert event.summarizer_completion_tokens == usage["completion_tokens"]
    assert event.summarizer_tokens == usage["total_tokens"]
    assert event.prompt_hash == summarizer.prompt_hash
    assert re.fullmatch(r"[0-9a-f]{8}", event.prompt_hash)
    assert event.still_too_large is False
    assert event.failure_reason is None and event.skipped_reason is None and event.verified_prompt_tokens is None
    assert event.as_dict()["estimated_tokens_saved"] == event.estimated_tokens_saved


def test_the_event_of_a_call_that_does_not_fire(server: SummarizerServer, make: Make) -> None:
    compactor = make()
    messages = chat(6)
    compactor.compact(messages, iteration=3)
    event = last(compactor)
    assert (event.iteration, event.messages_before, event.compacted) == (3, 13, False)
    assert event.estimated_tokens_before == CharsPerFour().estimate(messages)
    assert event.trigger is None and event.skipped_reason == "trigger did not fire"
    assert event.messages_after is None and event.prompt_hash is None


def test_still_too_large_when_the_kept_tail_alone_is_over_the_limit(server: SummarizerServer, make: Make) -> None:
    compactor = make(max_context_tokens=100)
    messages = [*chat(6), user("x" * 2_000), reply("y" * 2_000)]
    out = compactor.compact(messages, iteration=1)
    assert last(compactor).compacted
    assert out[-2:] == messages[-2:]
    assert last(compactor).still_too_large is True


# --- EVENT-2: the verified figure ------------------------------------------------------------------------------------


def twenty_four_messages() -> list[dict[str, Any]]:
    """24 messages with no system prompt; seed 000's K = 2 leaves a summary and 2 rounds: 24→3."""
    return [m for i in range(12) for m in turn(i)]


def test_observe_usage_logs_seed_000s_line(
    server: SummarizerServer, client: openai.OpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    summarizer = Summarizer(MODEL, client=client)
    compactor = Compactor(Summarize(summarizer, keep_rounds=2))
    out = compactor.compact(twenty_four_messages(), iteration=8)
    assert len(out) == 3
    with caplog.at_level(logging.INFO, logger=LOGGER):
        compactor.observe_usage(18_000)
    event = last(compactor)
    assert event.verified_prompt_tokens == 18_000
    usage = summarizer_server.usage(server.bodies[0]["messages"], out[0]["content"].removeprefix(f"{SUMMARY_PREFIX}\n"))
    expected = (
        f"Compacted 24→3 messages; verified 18000 input tokens (saved est. {event.estimated_tokens_saved}; "
        f"summarizer cost {usage['total_tokens']} tokens; prompt {summarizer.prompt_hash})"
    )
    (record,) = [r for r in caplog.records if r.name == LOGGER]
    assert (record.levelno, record.getMessage()) == (logging.INFO, expected)
    assert re.fullmatch(
        r"Compacted 24→3 messages; verified 18000 input tokens \(saved est\. \d+; summarizer cost \d+ tokens; prompt [0-9a-f]{8}\)",
        record.getMessage(),
    )


def test_observe_usage_records_the_first_figure_after_a_compaction_only(
    server: SummarizerServer, make: Make, caplog: pytest.LogCaptureFixture
) -> None:
    compactor = make()
    with caplog.at_level(logging.INFO, logger=LOGGER):
        compactor.compact(chat(6), iteration=3)
        compactor.observe_usage(5_000)
        assert last(compactor).verified_prompt_tokens is None, "no compaction to verify"
        compactor.compact(chat(6), iteration=8)
        compactor.observe_usage(900)
        compactor.observe_usage(1_200)
    assert last(compactor).verified_prompt_tokens == 900
    (logged,) = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert "; verified 900 input tokens (" in logged


def test_observe_usage_feeds_the_observed_token_trigger(server: SummarizerServer, make: Make) -> None:
    compactor = make(trigger=ObservedTokenBudget(1_000))
    messages = chat(6)
    compactor.compact(messages, iteration=1)
    assert last(compactor).skipped_reason == "trigger did not fire", "nothing observed yet"
    compactor.observe_usage(1_000)
    compactor.compact(messages, iteration=2)
    assert not last(compactor).compacted
    compactor.observe_usage(1_001)
    compactor.compact(messages, iteration=3)
    assert last(compactor).compacted
    assert last(compactor).trigger == "observed prompt tokens 1001 > 1000 + 0"


# --- acompact ----------------------------------------------------------------------------------------------------------


def test_acompact_compacts_with_the_async_client(server: SummarizerServer, async_client: openai.AsyncOpenAI) -> None:
    summarizer = Summarizer(MODEL, async_client=async_client)
    compactor = Compactor(Summarize(summarizer, keep_rounds=2))
    messages = chat(6)
    out = asyncio.run(compactor.acompact(messages, iteration=8))
    assert out[0] == messages[0] and is_summary(out[1]) and out[2:] == messages[-2:]
    event = last(compactor)
    assert event.compacted and event.messages_after == 4
    usage = summarizer_server.usage(server.bodies[0]["messages"], out[1]["content"].removeprefix(f"{SUMMARY_PREFIX}\n"))
    assert (event.summarizer_prompt_tokens, event.summarizer_completion_tokens) == (usage["prompt_tokens"], usage["completion_tokens"])


def test_acompact_follows_the_same_trigger_as_compact(server: SummarizerServer, make: Make) -> None:
    compactor = make()
    messages = chat(6)
    assert asyncio.run(compactor.acompact(messages, iteration=7)) == messages
    assert server.requests == []
