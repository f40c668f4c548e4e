"""The seed presets and their documented defaults (SPEC PRESET-*): reference/presets.py."""

from __future__ import annotations

import logging
from typing import Any

import openai
import pytest

from compaction_suite.conformance.summarizer_server import SummarizerServer
from compaction_suite.reference import (
    CharsPerFour,
    ContextFraction,
    IterationsOrTokens,
    KeepLastMessages,
    MessageCount,
    StructuredSummarize,
    Summarize,
    TokenThreshold,
    presets,
)
from compaction_suite.reference.summarizer import DEFAULT_PROMPT, STRUCTURED_PROMPT
from compaction_suite.reference.summary import SUMMARY_PREFIX, TRUNCATE_CHARS, is_summary, transcript

from events import last
from message_builders import calls, reply, result, system, user

MODEL = "summary-model"
WORDS = "the parser reads the config file and the cache "  # 48 characters


def words(chars: int) -> str:
    """``chars`` characters of plain words (cheap for the test double to tokenize)."""
    return (WORDS * (chars // len(WORDS) + 1))[:chars]


def padded(messages: list[dict[str, Any]], tokens: int) -> list[dict[str, Any]]:
    """``messages`` with the first user message grown so that chars/4 is exactly ``tokens``."""
    missing = tokens * 4 - sum(CharsPerFour().units(m) for m in messages)
    assert missing >= 0
    index = next(i for i, m in enumerate(messages) if m["role"] == "user")
    grown = {**messages[index], "content": messages[index]["content"] + words(missing)}
    out = [*messages[:index], grown, *messages[index + 1 :]]
    assert CharsPerFour().estimate(out) == tokens
    return out


def turns(count: int, chars: int = 100) -> list[dict[str, Any]]:
    """``count`` single-message rounds, user and assistant in turn."""
    return [user(f"q{i} " + words(chars)) if i % 2 == 0 else reply(f"a{i} " + words(chars)) for i in range(count)]


# --- PRESET-000: OpenAI/Azure -------------------------------------------------------------------------


def test_preset_000_defaults(client: openai.OpenAI) -> None:
    compactor = presets.openai_azure(MODEL, client=client)
    assert compactor.trigger == IterationsOrTokens(8, 80_000)
    assert isinstance(compactor.estimator, CharsPerFour)
    strategy = compactor.strategy
    assert type(strategy) is Summarize
    assert (strategy.keep_rounds, strategy.keep_messages, strategy.fallback_truncation) == (2, None, False)
    summarizer = strategy.summarizer
    assert (summarizer.model, summarizer.prompt, summarizer.max_tokens, summarizer.client) == (MODEL, DEFAULT_PROMPT, None, client)
    assert {"core", "trigger", "summary", "failure", "events"} <= compactor.profiles


def test_preset_000_compacts_at_iteration_8_keeping_two_rounds(server: SummarizerServer, client: openai.OpenAI) -> None:
    compactor = presets.openai_azure(MODEL, client=client)
    messages = [system(), *turns(8), calls("c1", "c2"), result("c2", "x"), result("c1", "y"), reply("done")]
    assert compactor.compact(messages, iteration=7) == messages
    out = compactor.compact(messages, iteration=8)
    assert out[0] == messages[0] and is_summary(out[1]) and out[2:] == messages[-4:]
    assert "max_tokens" not in server.bodies[0]


@pytest.mark.parametrize(("tokens", "fires"), [(79_999, False), (80_000, True)])
def test_preset_000_token_limit_is_80000_inclusive(server: SummarizerServer, client: openai.OpenAI, tokens: int, fires: bool) -> None:
    compactor = presets.openai_azure(MODEL, client=client)
    compactor.compact(padded([system(), *turns(6)], tokens), iteration=1)
    assert last(compactor).compacted is fires
    assert len(server.requests) == int(fires)


def test_preset_000_returns_the_input_when_the_summarizer_fails(server: SummarizerServer, client: openai.OpenAI) -> None:
    server.fault("500")
    messages = [system(), *turns(8)]
    compactor = presets.openai_azure(MODEL, client=client)
    assert compactor.compact(messages, iteration=8) == messages
    assert str(last(compactor).failure_reason).startswith("InternalServerError")


# --- PRESET-001: structured admin chat ------------------------------------------------------------------------


def test_preset_001_defaults(client: openai.OpenAI) -> None:
    compactor = presets.structured_admin_chat(MODEL, client=client)
    assert compactor.trigger == TokenThreshold(60_000)
    strategy = compactor.strategy
    assert type(strategy) is StructuredSummarize
    assert (strategy.keep_rounds, strategy.keep_messages, strategy.fallback_truncation) == (None, 10, False)
    assert strategy.summarizer.prompt == STRUCTURED_PROMPT
    assert "structured" in compactor.profiles


def structured_history() -> list[dict[str, Any]]:
    """A tool round straddles the 10th message from the end, so keeping 10 keeps 11."""
    return [system(), *turns(6), user("search it"), calls("a", "b", "c"), result("a", "1"), result("c", "3"), result("b", "2"), *turns(7)]


@pytest.mark.parametrize(("tokens", "fires"), [(60_000, False), (60_001, True)])
def test_preset_001_fires_strictly_above_60k(server: SummarizerServer, client: openai.OpenAI, tokens: int, fires: bool) -> None:
    compactor = presets.structured_admin_chat(MODEL, client=client)
    compactor.compact(padded(structured_history(), tokens), iteration=1)
    assert last(compactor).compacted is fires
    assert len(server.requests) == int(fires)


def test_preset_001_keeps_at_least_10_messages_in_whole_rounds(server: SummarizerServer, client: openai.OpenAI) -> None:
    messages = structured_history()
    out = presets.structured_admin_chat(MODEL, client=client).compact(messages, iteration=1, force=True)
    assert out[0] == messages[0]
    assert out[1]["content"].startswith(f"{SUMMARY_PREFIX}\n## Conversation Summary (auto-compacted)")
    assert out[2:] == messages[-11:], "the tool round is kept whole, so 11 messages"


# --- PRESET-003: researcher -------------------------------------------------------------------------------------


def test_preset_003_defaults(client: openai.OpenAI) -> None:
    compactor = presets.researcher(MODEL, client=client)
    assert compactor.trigger == ContextFraction(4096, 0.6)
    assert compactor.trigger.limit == 2457
    assert isinstance(compactor.estimator, CharsPerFour)
    strategy = compactor.strategy
    assert type(strategy) is Summarize
    assert (strategy.keep_rounds, strategy.fallback_truncation, strategy.summarizer.max_tokens) == (3, True, 300)


@pytest.mark.parametrize(("tokens", "fires"), [(2_457, False), (2_458, True)])
def test_preset_003_fires_above_60_percent_of_max_tokens(
    server: SummarizerServer, client: openai.OpenAI, tokens: int, fires: bool
) -> None:
    compactor = presets.researcher(MODEL, client=client)
    compactor.compact(padded([system(), *turns(8)], tokens), iteration=1)
    assert last(compactor).compacted is fires


def test_preset_003_asks_for_a_300_token_summary_and_keeps_3_rounds(server: SummarizerServer, client: openai.OpenAI) -> None:
    messages = padded([system(), *turns(8)], 3_000)
    out = presets.researcher(MODEL, client=client).compact(messages, iteration=1)
    assert server.bodies[0]["max_tokens"] == 300
    assert out[0] == messages[0] and is_summary(out[1]) and out[2:] == messages[-3:]


def test_preset_003_falls_back_to_truncation_when_the_summarizer_fails(
    server: SummarizerServer, client: openai.OpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    server.fault("503")
    messages = padded([system(), *turns(8)], 3_000)
    compactor = presets.researcher(MODEL, client=client)
    with caplog.at_level(logging.WARNING, logger="compaction_suite.reference.compactor"):
        out = compactor.compact(messages, iteration=1)
    expected = "\n".join(transcript([m])[:TRUNCATE_CHARS] for m in messages[1:6])
    assert out == [messages[0], {"role": "user", "content": f"{SUMMARY_PREFIX}\n{expected}"}, *messages[-3:]]
    event = last(compactor)
    assert event.compacted and str(event.failure_reason).startswith("InternalServerError: HTTP 503")
    assert event.still_too_large is False
    assert "compaction fell back to truncation: InternalServerError" in caplog.text


def test_preset_003_reports_still_too_large_when_the_kept_rounds_exceed_60_percent(
    server: SummarizerServer, client: openai.OpenAI
) -> None:
    server.fault("500")
    messages = [system(), *turns(8, chars=1_000), user(words(4_000)), reply(words(4_000)), user(words(4_000))]
    compactor = presets.researcher(MODEL, client=client)
    out = compactor.compact(messages, iteration=1)
    assert out[-3:] == messages[-3:]
    event = last(compactor)
    assert event.compacted and (event.estimated_tokens_after or 0) > 2_457
    assert event.still_too_large is True


# --- PRESET-004-COUNT --------------------------------------------------------------------------------------------------


def test_preset_004_count_defaults() -> None:
    compactor = presets.message_counting()
    assert compactor.trigger == MessageCount(20, 5)
    assert type(compactor.strategy) is KeepLastMessages and compactor.strategy.n == 50


@pytest.mark.parametrize(("count", "fires"), [(25, False), (26, True)])
def test_preset_004_count_fires_above_25_messages_not_counting_system(count: int, fires: bool) -> None:
    compactor = presets.message_counting()
    messages = [system(), system(), *turns(count, chars=10)]
    assert compactor.compact(messages, iteration=1) == messages
    assert (last(compactor).trigger is not None) is fires


@pytest.mark.parametrize("count", [26, 40, 50])
def test_preset_004_count_changes_nothing_up_to_50_messages(count: int) -> None:
    compactor = presets.message_counting()
    messages = [system(), *turns(count, chars=10)]
    assert compactor.compact(messages, iteration=1) == messages
    assert last(compactor).trigger == f"messages {count} > 20 + 5"
    assert last(compactor).skipped_reason == "nothing older than the kept tail (STRAT-9)"


@pytest.mark.parametrize("count", [51, 80])
def test_preset_004_count_cuts_to_the_last_50_above_50(count: int) -> None:
    compactor = presets.message_counting()
    messages = [system(), *turns(count, chars=10)]
    out = compactor.compact(messages, iteration=1)
    assert out == [messages[0], *messages[-50:]]
    assert last(compactor).compacted and last(compactor).messages_after == 51


# --- PRESET-004-SUMMARIZE ---------------------------------------------------------------------------------------------


def test_preset_004_summarize_defaults(client: openai.OpenAI) -> None:
    compactor = presets.summarizing(MODEL, client=client)
    assert compactor.trigger == MessageCount(20, 5)
    strategy = compactor.strategy
    assert type(strategy) is Summarize
    assert (strategy.keep_rounds, strategy.keep_messages, strategy.fallback_truncation) == (None, 20, False)


def test_preset_004_summarize_resummarizes_after_5_new_messages(server: SummarizerServer, client: openai.OpenAI) -> None:
    compactor = presets.summarizing(MODEL, client=client)
    messages = [system()]
    compacted_at = []
    for iteration, message in enumerate(turns(60, chars=300), 1):
        messages = compactor.compact([*messages, message], iteration=iteration)
        if last(compactor).compacted:
            compacted_at.append(iteration)
            held = [m for m in messages if m["role"] != "system"]
            assert len(held) == 21 and is_summary(held[0]), "one summary and the last 20 messages"
        assert sum(map(is_summary, messages)) <= 1
    assert compacted_at == list(range(26, 61, 5))
    assert len(server.requests) == len(compacted_at)
