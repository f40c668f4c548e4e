"""Strategies: what a compaction keeps (SPEC STRAT-1..STRAT-9, SUMZ-3): reference/strategies.py.

Summarizing strategies talk to the summarizer test double over HTTP (conftest's
``server``, ``client`` and ``async_client``); the others need no model.
"""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compaction_suite.conformance.histories import histories, real_traffic
from compaction_suite.conformance.summarizer_server import SummarizerServer
from compaction_suite.reference import (
    TODO_WRITE,
    Chain,
    CharsPerFour,
    DropSources,
    EntityRule,
    ExactTokens,
    HistoryError,
    KeepLastMessages,
    MaskAndSummarize,
    MaskObservations,
    StructuredSummarize,
    Summarize,
    Summarizer,
    SummarizerError,
    TokenBudget,
    split_rounds,
)
from compaction_suite.reference.rounds import SYSTEM_ROLES, call_in_flight
from compaction_suite.reference.summary import SUMMARY_PREFIX, TRUNCATE_CHARS, entities, is_summary, transcript

from message_builders import calls, reply, result, system, user

MODEL = "summary-model"
REPLY = "- The user wants the parser fixed.\n- Tests pass."
PROPERTY = settings(max_examples=50)


def summary(text: str = "- earlier work") -> dict[str, Any]:
    return {"role": "user", "content": f"{SUMMARY_PREFIX}\n{text}"}


def history() -> list[dict[str, Any]]:
    """sys | u1 | a1 | tool round c1 | u2 | a2: five non-system rounds, seven messages."""
    return [
        system(),
        user("Please fix the parser in src/app.py."),
        reply("Looking at it."),
        calls("c1"),
        result("c1", "def parse(): ..."),
        user("Now run the tests."),
        reply("All tests pass."),
    ]


def non_system(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m["role"] not in SYSTEM_ROLES]


@pytest.fixture
def summarizer(client: openai.OpenAI, async_client: openai.AsyncOpenAI) -> Summarizer:
    return Summarizer(MODEL, client=client, async_client=async_client)


@pytest.fixture
def fixed(server: SummarizerServer) -> SummarizerServer:
    server.reply_with(REPLY)
    return server


def record(call_id: str, **fields: Any) -> dict[str, Any]:
    return result(call_id, json.dumps(fields))


def todo(call_id: str, *items: str) -> dict[str, Any]:
    todos = [{"content": item, "status": "pending"} for item in items]
    return {"role": "assistant", "content": "", "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": "TodoWrite", "arguments": json.dumps({"todos": todos})}}
    ]}


# --- STRAT-1: Summarize ----------------------------------------------------------------------


def test_summarize_replaces_all_but_the_last_k_rounds_by_one_summary(fixed: SummarizerServer, summarizer: Summarizer) -> None:
    messages = history()
    out = Summarize(summarizer, keep_rounds=2).compact(messages)
    assert out == [messages[0], {"role": "user", "content": f"{SUMMARY_PREFIX}\n{REPLY}"}, *messages[5:]]
    assert out[2] is messages[5] and out[3] is messages[6], "the tail is kept verbatim"
    (body,) = fixed.bodies
    assert body["messages"][1] == {"role": "user", "content": transcript(messages[1:5])}


def test_summarize_defaults_to_two_rounds(fixed: SummarizerServer, summarizer: Summarizer) -> None:
    assert Summarize(summarizer).compact(history())[2:] == history()[5:]


@pytest.mark.parametrize(("keep_messages", "tail_from"), [(1, 6), (2, 5), (3, 3), (4, 3), (5, 2)])
def test_summarize_keep_messages_keeps_whole_rounds_rounding_up(
    fixed: SummarizerServer, summarizer: Summarizer, keep_messages: int, tail_from: int
) -> None:
    messages = history()
    out = Summarize(summarizer, keep_rounds=1, keep_messages=keep_messages).compact(messages)
    assert out[0] == messages[0] and is_summary(out[1])
    assert out[2:] == messages[tail_from:]
    assert fixed.bodies[0]["messages"][1]["content"] == transcript(messages[1:tail_from])


def test_summarize_sets_system_messages_aside_and_puts_them_first(fixed: SummarizerServer, summarizer: Summarizer) -> None:
    messages = [system("one"), user("a"), system("two", role="developer"), reply("b"), user("c"), reply("d")]
    out = Summarize(summarizer, keep_rounds=2).compact(messages)
    assert out[:2] == [system("one"), system("two", role="developer")]
    assert is_summary(out[2]) and out[3:] == messages[4:]
    assert "two" not in fixed.bodies[0]["messages"][1]["content"], "system messages are not summarized"


def test_summarize_folds_an_earlier_summary_into_the_new_one(fixed: SummarizerServer, summarizer: Summarizer) -> None:
    messages = [system(), summary("- the user chose PostgreSQL"), *history()[1:]]
    out = Summarize(summarizer, keep_rounds=2).compact(messages)
    assert sum(map(is_summary, out)) == 1, "STRAT-8: never two summaries"
    assert out[1] == {"role": "user", "content": f"{SUMMARY_PREFIX}\n{REPLY}"}
    assert "the user chose PostgreSQL" in fixed.bodies[0]["messages"][1]["content"]


@pytest.mark.parametrize(
    "messages",
    [
        [system(), user(), reply()],
        [system(), summary(), user(), reply()],
        [summary(), user(), reply()],
        [system(), user(), calls("c1"), result("c1")],
        [system()],
        [],
    ],
    ids=["only-the-tail", "summary-then-tail", "summary-without-system", "tool-round-tail", "system-only", "empty"],
)
def test_summarize_leaves_a_history_with_nothing_to_fold_alone(
    server: SummarizerServer, summarizer: Summarizer, messages: list[dict[str, Any]]
) -> None:
    out = Summarize(summarizer, keep_rounds=2).compact(messages)
    assert out == messages and out is not messages
    assert server.requests == [], "STRAT-9: the summarizer is not asked"


def test_summarize_does_fold_a_summary_followed_by_one_more_round(fixed: SummarizerServer, summarizer: Summarizer) -> None:
    messages = [system(), summary(), user("x"), user("y"), reply()]
    out = Summarize(summarizer, keep_rounds=2).compact(messages)
    assert out == [system(), {"role": "user", "content": f"{SUMMARY_PREFIX}\n{REPLY}"}, user("y"), reply()]


def test_summarize_apply_reports_usage_and_prompt_hash(fixed: SummarizerServer, summarizer: Summarizer) -> None:
    outcome = Summarize(summarizer).apply(history())
    assert outcome.summary is not None and outcome.summary.text == REPLY
    assert outcome.summary.prompt_tokens and outcome.summary.completion_tokens
    assert outcome.prompt_hash == summarizer.prompt_hash
    assert outcome.fallback_reason is None


def test_summarize_acompact_uses_the_async_client(fixed: SummarizerServer, async_client: openai.AsyncOpenAI) -> None:
    strategy = Summarize(Summarizer(MODEL, async_client=async_client), keep_rounds=2)
    out = asyncio.run(strategy.acompact(history()))
    assert out == [history()[0], {"role": "user", "content": f"{SUMMARY_PREFIX}\n{REPLY}"}, *history()[5:]]
    assert len(fixed.requests) == 1


def test_summarize_acompact_with_nothing_to_fold_makes_no_request(server: SummarizerServer, summarizer: Summarizer) -> None:
    messages = [system(), user(), reply()]
    assert asyncio.run(Summarize(summarizer).acompact(messages)) == messages
    assert server.requests == []


# --- SUMZ-3: fallback truncation ---------------------------------------------------------------


def test_summarizer_failure_raises_without_fallback(server: SummarizerServer, summarizer: Summarizer) -> None:
    server.fault("500")
    with pytest.raises(SummarizerError) as caught:
        Summarize(summarizer).compact(history())
    assert caught.value.error_type == "InternalServerError"


def test_summarizer_failure_raises_without_fallback_async(server: SummarizerServer, summarizer: Summarizer) -> None:
    server.fault("503")
    with pytest.raises(SummarizerError, match="HTTP 503"):
        asyncio.run(Summarize(summarizer).acompact(history()))


def test_fallback_truncation_keeps_the_first_200_characters_of_each_summarized_message(
    server: SummarizerServer, summarizer: Summarizer
) -> None:
    server.fault("500")
    long = "x" * 1_000
    messages = [system(), user(long), reply("short"), calls("c1"), result("c1", "y" * 500), user("u"), reply("r")]
    outcome = Summarize(summarizer, keep_rounds=2, fallback_truncation=True).apply(messages)
    lines = [transcript([m])[:TRUNCATE_CHARS] for m in messages[1:5]]
    assert outcome.messages == [messages[0], {"role": "user", "content": SUMMARY_PREFIX + "\n" + "\n".join(lines)}, *messages[5:]]
    assert [len(line) for line in lines] == [200, len("assistant:\nshort"), len(transcript([messages[3]])), 200]
    assert outcome.summary is None
    assert outcome.fallback_reason is not None and "InternalServerError" in outcome.fallback_reason
    assert outcome.prompt_hash == summarizer.prompt_hash


def test_fallback_truncation_also_stands_in_for_the_async_summarizer(
    server: SummarizerServer, summarizer: Summarizer
) -> None:
    server.fault("drop")
    strategy = Summarize(summarizer, keep_rounds=2, fallback_truncation=True)
    out = asyncio.run(strategy.acompact(history()))
    assert out[1]["content"].startswith(f"{SUMMARY_PREFIX}\nuser:\nPlease fix the parser")
    assert out[2:] == history()[5:]


def test_fallback_truncation_works_with_no_client_at_all() -> None:
    strategy = Summarize(Summarizer(MODEL), fallback_truncation=True)
    outcome = strategy.apply(history())
    assert is_summary(outcome.messages[1])
    assert outcome.fallback_reason is not None and outcome.fallback_reason.startswith("ConfigurationError")


# --- STRAT-2: StructuredSummarize ------------------------------------------------------------


def test_structured_summarize_keeps_ten_messages_and_writes_the_sections(
    server: SummarizerServer, summarizer: Summarizer
) -> None:
    server.reply_with("### Key Decisions\n- Use PostgreSQL.\n### Context\nThe user set up a ticket.")
    created = json.dumps({"id": "ent-42", "type": "ticket", "title": "Login fails"})
    messages = [system(), user("Open a ticket."), calls("c1", name="createEntity"), result("c1", created)]
    messages += [user(f"question {i}") if i % 2 == 0 else reply(f"answer {i}") for i in range(10)]
    out = StructuredSummarize(summarizer).compact(messages)
    assert out[2:] == messages[-10:]
    text = out[1]["content"]
    assert text.startswith(f"{SUMMARY_PREFIX}\n## Conversation Summary (auto-compacted)\n")
    assert '- [ticket] "Login fails" (id: ent-42)' in text
    assert "### Key Decisions\n- Use PostgreSQL.\n### Context\nThe user set up a ticket." in text


# --- STRAT-3: KeepLastMessages -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "tail_from"),
    [(0, 7), (1, 6), (2, 5), (3, 3), (4, 3), (5, 2), (6, 1), (7, 1), (100, 1)],
)
def test_keep_last_messages_keeps_the_shortest_tail_of_whole_rounds_with_at_least_n(n: int, tail_from: int) -> None:
    messages = history()
    assert KeepLastMessages(n).compact(messages) == [messages[0], *messages[tail_from:]]


def test_keep_last_messages_never_splits_parallel_calls_from_their_results() -> None:
    messages = [user(), calls("a", "b", "c"), result("c"), result("a"), result("b")]
    assert KeepLastMessages(1).compact(messages) == messages[1:]


# --- STRAT-4: MaskObservations ------------------------------------------------------------------


def masking_history() -> list[dict[str, Any]]:
    return [
        system(),
        user(),
        calls("a", "b"),
        result("b", "B" * 120),
        result("a", "A" * 30),
        user("next"),
        calls("c"),
        result("c", "C" * 50),
        reply("done"),
    ]


def test_mask_observations_replaces_older_tool_results_keeping_their_call_ids() -> None:
    messages = masking_history()
    out = MaskObservations(keep_rounds=3).compact(messages)
    assert out[:3] == messages[:3]
    assert out[3] == {"role": "tool", "tool_call_id": "b", "content": "[tool output omitted: 120 characters]"}
    assert out[4] == {"role": "tool", "tool_call_id": "a", "content": "[tool output omitted: 30 characters]"}
    assert all(a is b for a, b in zip(out[5:], messages[5:], strict=True)), "the last K rounds are untouched"
    split_rounds(out)  # every call still has its result


def test_mask_observations_is_idempotent() -> None:
    once = MaskObservations(keep_rounds=1).compact(masking_history())
    assert MaskObservations(keep_rounds=1).compact(once) == once
    assert once[7]["content"] == "[tool output omitted: 50 characters]"


def test_mask_observations_with_a_custom_placeholder() -> None:
    out = MaskObservations(keep_rounds=0, placeholder="<{chars} chars elided>").compact(masking_history())
    assert [m["content"] for m in out if m["role"] == "tool"] == ["<120 chars elided>", "<30 chars elided>", "<50 chars elided>"]


def test_mask_observations_with_a_placeholder_starting_with_a_field() -> None:
    out = MaskObservations(keep_rounds=0, placeholder="{chars} chars elided").compact(masking_history())
    assert [m["content"] for m in out if m["role"] == "tool"] == ["120 chars elided", "30 chars elided", "50 chars elided"]


def test_mask_observations_leaves_a_short_history_alone() -> None:
    messages = masking_history()
    assert MaskObservations(keep_rounds=10).compact(messages) == messages


# --- STRAT-5: TokenBudget --------------------------------------------------------------------------


def budget_history() -> list[dict[str, Any]]:
    """System 10 tokens; rounds of 25, 50 (a tool round) and 25 tokens by chars/4."""
    return [system("s" * 40), user("u" * 100), calls("c1"), result("c1", "r" * 190), reply("a" * 100)]


@pytest.mark.parametrize(
    ("budget", "tail_from"),
    [(10**6, 1), (110, 1), (109, 2), (85, 2), (84, 4), (35, 4), (34, 4), (0, 4)],
)
def test_token_budget_drops_the_oldest_rounds_until_within_budget(budget: int, tail_from: int) -> None:
    messages = budget_history()
    assert CharsPerFour().estimate(messages) == 110
    assert CharsPerFour().estimate(messages[2:4]) == 50
    assert TokenBudget(budget).compact(messages) == [messages[0], *messages[tail_from:]]


def test_token_budget_keeps_the_last_round_even_when_it_alone_is_over() -> None:
    messages = [system(), user("u" * 400), calls("c1"), result("c1", "r" * 4_000)]
    assert TokenBudget(10).compact(messages) == [messages[0], *messages[2:]]


# --- STRAT-6: DropSources -----------------------------------------------------------------------------


def test_drop_sources_removes_the_whole_round_of_a_marked_message() -> None:
    marked = {**result("b", "from the wiki"), "source_id": "wiki"}
    messages = [system(), user(), calls("a", "b"), result("a"), marked, {**user("later"), "source_id": "chat"}, reply()]
    assert DropSources({"wiki"}).compact(messages) == [messages[0], messages[1], messages[5], messages[6]]
    assert DropSources({"wiki", "chat"}).compact(messages) == [messages[0], messages[1], messages[6]]
    assert DropSources(set()).compact(messages) == messages


# --- STRAT-7: Chain --------------------------------------------------------------------------------------


def test_chain_applies_each_strategy_in_turn() -> None:
    messages = masking_history()
    chained = Chain(MaskObservations(keep_rounds=1), KeepLastMessages(4)).compact(messages)
    assert chained == KeepLastMessages(4).compact(MaskObservations(keep_rounds=1).compact(messages))
    assert chained[0] == messages[0]
    assert chained[3] == {"role": "tool", "tool_call_id": "c", "content": "[tool output omitted: 50 characters]"}


def test_chain_keeps_the_summarizers_outcome(fixed: SummarizerServer, summarizer: Summarizer) -> None:
    outcome = Chain(MaskObservations(keep_rounds=1), Summarize(summarizer), KeepLastMessages(100)).apply(history())
    assert outcome.summary is not None and outcome.summary.text == REPLY
    assert outcome.prompt_hash == summarizer.prompt_hash
    assert sum(map(is_summary, outcome.messages)) == 1


def test_chain_acompact_runs_async_summarizers(fixed: SummarizerServer, summarizer: Summarizer) -> None:
    out = asyncio.run(Chain(MaskObservations(keep_rounds=2), Summarize(summarizer)).acompact(history()))
    assert out[1] == {"role": "user", "content": f"{SUMMARY_PREFIX}\n{REPLY}"}


# --- histories that pass validation but have null fields -------------------------------------------


def test_a_tool_call_with_a_null_function_is_rejected() -> None:
    messages = [user(), {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "function": None}]}, result("a"), user(), reply()]
    with pytest.raises(HistoryError, match="HIST-2: message 1: tool call 'a' has no function"):
        Summarize(Summarizer(MODEL), fallback_truncation=True).compact(messages)


def test_a_tool_result_with_null_content_is_rejected() -> None:
    messages = [user(), calls("a"), {"role": "tool", "tool_call_id": "a", "content": None}, user(), reply()]
    with pytest.raises(HistoryError, match="HIST-2: message 2: tool message has no string or list 'content'"):
        MaskObservations(keep_rounds=1).compact(messages)


# --- properties: every model-free strategy keeps the history valid --------------------------------------

MODEL_FREE = st.one_of(
    st.integers(0, 30).map(KeepLastMessages),
    st.integers(0, 5).map(MaskObservations),
    st.integers(0, 3_000).map(TokenBudget),
    st.sampled_from([DropSources({"wiki"}), Chain(MaskObservations(1), KeepLastMessages(6))]),
    st.integers(0, 4).map(lambda k: Summarize(Summarizer(MODEL), keep_rounds=k, fallback_truncation=True)),
    st.integers(0, 4).map(lambda k: MaskAndSummarize(Summarizer(MODEL), keep_rounds=k, fallback_truncation=True)),
)
"""Summarize without a client fails over to truncation, so it runs with no model either."""


def _with_sources(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**m, "source_id": "wiki"} if m["role"] == "user" and i % 3 == 0 else m for i, m in enumerate(messages)]


@PROPERTY
@given((histories(system=None) | real_traffic(histories(system=None))).map(_with_sources), MODEL_FREE)
def test_every_model_free_strategy_keeps_rounds_whole_and_system_first(messages: list[dict[str, Any]], strategy: Any) -> None:
    before = copy.deepcopy(messages)
    out = strategy.compact(messages)
    assert messages == before, "the input is never mutated"
    rounds = split_rounds(out)  # no orphans, no unanswered calls
    assert not call_in_flight(rounds)
    system_in = [m for m in messages if m["role"] in SYSTEM_ROLES]
    assert out[: len(system_in)] == system_in
    assert not any(m["role"] in SYSTEM_ROLES for m in out[len(system_in) :])
    assert sum(map(is_summary, out)) <= max(1, sum(map(is_summary, messages)))


@PROPERTY
@given(histories(), st.integers(0, 3_000))
def test_token_budget_output_fits_or_is_down_to_its_last_round(messages: list[dict[str, Any]], budget: int) -> None:
    out = TokenBudget(budget).compact(messages)
    rest = [r for r in split_rounds(out) if r.kind != "system"]
    assert CharsPerFour().estimate(out) <= budget or len(rest) <= 1


@PROPERTY
@given(histories(), st.sampled_from([CharsPerFour(), ExactTokens()]), st.data())
def test_token_budget_drops_no_more_than_it_must(messages: list[dict[str, Any]], estimator: Any, data: st.DataObject) -> None:
    """STRAT-5 as written, oldest first: drop the oldest round while the rest is over the budget,
    down to the last round (`TokenBudget` keeps the newest rounds while they fit instead). The
    budget is drawn at, just under or just over what some tail of the history needs."""
    system_in = [m for m in messages if m["role"] in SYSTEM_ROLES]
    rounds = [r.messages for r in split_rounds(messages) if r.kind != "system"]
    tail = data.draw(st.integers(0, len(rounds)))
    budget = max(0, estimator.estimate(system_in + [m for r in rounds[tail:] for m in r]) + data.draw(st.integers(-1, 1)))
    rest = list(rounds)
    while len(rest) > 1 and estimator.estimate(system_in + [m for r in rest for m in r]) > budget:
        rest.pop(0)
    assert TokenBudget(budget, estimator).compact(messages) == system_in + [m for r in rest for m in r]


# --- STRAT-11: masking that keeps ids, with a structured summary behind it ------------------


def id_history() -> list[dict[str, Any]]:
    """A user turn, a to-do list, three lookups returning nested ids (one id reused), a reply."""
    return [
        system(),
        user("Rebook my flight."),
        todo("c1", "Find the reservation", "Rebook"),
        result("c1", "Todos updated"),
        calls("c2"),
        record("c2", reservation={"reservation_id": "ZFA04Y", "user_id": "mia_li_3668"}, note="x" * 2000),
        calls("c2"),  # the model reused the id in a later round (HIST-6)
        record("c2", flights=[{"flightId": 1042}], payment_ids=["pay_1"]),
        calls("c3"),
        result("c3", "plain text " * 50),
        reply("Rebooked."),
    ]


def test_masking_with_an_entity_rule_keeps_the_ids_of_a_json_result() -> None:
    out = MaskObservations(1, entity_rule=EntityRule()).compact(id_history())
    masked = out[5]["content"]
    assert json.loads(masked) == {
        "omitted": f"[tool output omitted: {len(id_history()[5]['content'])} characters]",
        "ids": {"reservation_id": ["ZFA04Y"], "user_id": ["mia_li_3668"]},
    }
    assert [e["id"] for e in entities(out)] == ["ZFA04Y", "mia_li_3668", "1042", "pay_1"]
    assert out[9]["content"].startswith("[tool output omitted")  # text: nothing to keep
    assert MaskObservations(1, entity_rule=EntityRule()).compact(out) == out  # masked once


def test_mask_and_summarize_only_masks_while_the_older_part_is_small(summarizer: Summarizer) -> None:
    out = MaskAndSummarize(summarizer, keep_rounds=2, summarize_over=10_000).apply(id_history())
    assert out.summary is None
    assert len(out.messages) == len(id_history())
    assert "ZFA04Y" in out.messages[5]["content"] and "x" * 100 not in out.messages[5]["content"]


def test_mask_and_summarize_folds_a_large_older_part_keeping_ids_and_the_task_list(
    fixed: SummarizerServer, summarizer: Summarizer
) -> None:
    strategy = MaskAndSummarize(summarizer, keep_rounds=1, summarize_over=0, task_lists=(TODO_WRITE,))
    out = strategy.apply(id_history())
    assert out.summary is not None
    assert out.messages[0] == system() and is_summary(out.messages[1]) and out.messages[2:] == id_history()[-1:]
    text = out.messages[1]["content"]
    for kept in ("ZFA04Y", "mia_li_3668", "1042", "pay_1", "Find the reservation", "Rebook"):
        assert kept in text
    assert "x" * 100 not in fixed.bodies[-1]["messages"][1]["content"], "the summarizer reads masked results"
