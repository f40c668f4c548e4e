"""Rounds and history validation (SPEC ROUND-1..ROUND-3, HIST-1..HIST-6): reference/rounds.py."""

from __future__ import annotations

import copy
import gc
import itertools
from typing import Any

import pytest
from hypothesis import given, settings

from compaction_suite.conformance.histories import histories
from compaction_suite.reference import HistoryError, call_in_flight, split_rounds
from compaction_suite.reference.rounds import RoundLog, flatten

from message_builders import calls, reply, result, system, user

PROPERTY = settings(max_examples=50)


# --- ROUND-1: the kinds of round --------------------------------------------------


def test_each_kind_of_round_is_recognised() -> None:
    history = [
        system(),
        system("Be brief.", role="developer"),
        user(),
        reply(),
        calls("a", "b"),
        result("b"),
        result("a"),
        user("Thanks."),
    ]
    rounds = split_rounds(history)
    assert [r.kind for r in rounds] == ["system", "system", "user", "assistant", "tool_calls", "user"]
    assert [r.start for r in rounds] == [0, 1, 2, 3, 4, 7]
    assert [r.end for r in rounds] == [1, 2, 3, 4, 7, 8]
    assert rounds[4].messages == [history[4], history[5], history[6]]
    assert all(r.complete for r in rounds)


@pytest.mark.parametrize("tool_calls", [[], None], ids=["empty-list", "null"])
def test_an_assistant_message_without_calls_is_a_bare_reply(tool_calls: Any) -> None:
    rounds = split_rounds([user(), {"role": "assistant", "content": "Hi.", "tool_calls": tool_calls}])
    assert [r.kind for r in rounds] == ["user", "assistant"]


@pytest.mark.parametrize("order", list(itertools.permutations("abc")), ids="".join)
def test_parallel_calls_form_one_round_whatever_order_the_results_come_in(order: tuple[str, ...]) -> None:
    history = [user(), calls("a", "b", "c"), *(result(i) for i in order), reply()]
    rounds = split_rounds(history)
    assert [r.kind for r in rounds] == ["user", "tool_calls", "assistant"]
    assert rounds[1].messages == history[1:5]
    assert rounds[1].complete


def test_consecutive_tool_rounds_stay_separate() -> None:
    history = [user(), calls("a"), result("a"), calls("b", "c"), result("c"), result("b")]
    rounds = split_rounds(history)
    assert [(r.kind, r.start, r.end) for r in rounds] == [("user", 0, 1), ("tool_calls", 1, 3), ("tool_calls", 3, 6)]


def test_an_empty_history_has_no_rounds() -> None:
    assert split_rounds([]) == []


def test_rounds_keep_the_messages_they_split_when_the_callers_list_changes() -> None:
    """A round is a range of the split's own record of the history, not of the caller's list."""
    history = [user(), calls("a"), result("a"), reply()]
    rounds = split_rounds(history)
    split = [r.messages for r in rounds]
    history[1] = reply("Replaced.")
    del history[:2]
    assert [r.messages for r in rounds] == split
    assert split[1][0]["tool_calls"][0]["id"] == "a"


# --- ROUND-3: a call in flight ---------------------------------------------------------


def test_a_last_round_with_an_unanswered_call_is_in_flight() -> None:
    rounds = split_rounds([user(), calls("a", "b", "c"), result("b")])
    assert call_in_flight(rounds)
    assert rounds[-1].pending == {"a", "c"}
    assert not rounds[-1].complete


def test_the_pending_calls_stay_with_the_last_round_in_a_slice_or_selection() -> None:
    rounds = split_rounds([user(), calls("a"), result("a"), calls("b")])
    assert rounds[1:][-1].pending == {"b"} and rounds[-1:][0].pending == {"b"}
    assert not call_in_flight(rounds[:-1]) and rounds[:-1][-1] == rounds[1]
    assert call_in_flight(rounds.select([False, True, True])) and not call_in_flight(rounds.select([True, True, False]))
    with pytest.raises(IndexError):
        rounds[3]


# --- how rounds are recorded --------------------------------------------------------------


def test_a_split_keeps_no_object_per_round_for_the_garbage_collector() -> None:
    """Rounds are recorded as lists of plain values (`Rounds`): one object per round, alive as
    long as the rounds are, made compacting a long history superlinear (speed.md)."""
    history = [system()] + [m for i in range(500) for m in (calls(f"c{i}"), result(f"c{i}"))]
    gc.collect()
    tracked = len(gc.get_objects())
    rounds = split_rounds(history)
    assert len(rounds) == 501 and rounds[-1].kind == "tool_calls" and flatten(rounds) == history
    assert len(gc.get_objects()) - tracked < 50


@pytest.mark.parametrize(
    "history",
    [[], [user()], [user(), calls("a"), result("a")], [user(), calls("a"), result("a"), reply()]],
    ids=["empty", "user-only", "answered-call", "answered-then-reply"],
)
def test_a_history_whose_calls_are_all_answered_is_not_in_flight(history: list[dict[str, Any]]) -> None:
    assert not call_in_flight(split_rounds(history))


# --- HIST-*: what the provider accepts (real traffic) -----------------------------------


REAL_SHAPES: list[Any] = [
    # (id, history): shapes the chat-completions API takes and real agents send
    ("id-reused-in-a-later-round", [user(), calls("a"), result("a"), calls("a"), result("a")]),
    ("id-reused-three-rounds-in-a-row", [user(), *[m for _ in range(3) for m in (calls("a"), result("a"))], reply()]),
    ("id-reused-after-a-user-turn", [user(), calls("a", "b"), result("b"), result("a"), user(), calls("b"), result("b")]),
    ("name-on-messages", [{**system(), "name": "policy"}, {**user(), "name": "alice"}, {**reply(), "name": "bot"}]),
    ("refusal", [user(), {"role": "assistant", "content": None, "refusal": "I can't help with that."}]),
    ("refusal-part", [user(), {"role": "assistant", "content": [{"type": "refusal", "refusal": "No."}]}]),
    (
        "text-parts-everywhere",
        [
            {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
            {"role": "user", "content": [{"type": "text", "text": "Read it."}]},
            {**calls("a"), "content": [{"type": "text", "text": "Reading."}]},
            {"role": "tool", "tool_call_id": "a", "content": [{"type": "text", "text": "contents"}]},
        ],
    ),
    ("empty-string-content-next-to-calls", [user(), {**calls("a"), "content": ""}, result("a")]),
    ("no-content-key-next-to-calls", [user(), {k: v for k, v in calls("a").items() if k != "content"}, result("a")]),
]


@pytest.mark.parametrize("history", [pytest.param(h, id=name) for name, h in REAL_SHAPES])
def test_a_history_the_provider_accepts_splits_without_error(history: list[dict[str, Any]]) -> None:
    rounds = split_rounds(history)
    assert flatten(rounds) == history
    assert not call_in_flight(rounds)


def test_a_reused_id_pairs_with_the_call_of_its_own_round() -> None:
    history = [user(), calls("a"), result("a", "first"), calls("a"), result("a", "second")]
    rounds = split_rounds(history)
    assert [r.messages for r in rounds[1:]] == [history[1:3], history[3:5]]


def test_a_reused_id_unanswered_in_the_last_round_is_in_flight() -> None:
    rounds = split_rounds([user(), calls("a"), result("a"), calls("a")])
    assert call_in_flight(rounds) and rounds[-1].pending == frozenset({"a"})


# --- HIST-1..HIST-6: bad histories ------------------------------------------------------

BAD_HISTORIES: list[Any] = [
    # (id, history, rule, index)
    ("HIST-1-tuple", (user(),), "HIST-1", None),
    ("HIST-1-dict", user(), "HIST-1", None),
    ("HIST-1-none", None, "HIST-1", None),
    ("HIST-2-message-not-a-dict", [user(), "hello"], "HIST-2", 1),
    ("HIST-2-no-role", [user(), {"content": "x"}], "HIST-2", 1),
    ("HIST-2-unknown-role", [user(), {"role": "robot", "content": "x"}], "HIST-2", 1),
    ("HIST-2-system-without-content", [{"role": "system"}], "HIST-2", 0),
    ("HIST-2-developer-without-content", [{"role": "developer"}, user()], "HIST-2", 0),
    ("HIST-2-user-without-content", [system(), {"role": "user"}], "HIST-2", 1),
    ("HIST-2-tool-without-content", [user(), calls("a"), {"role": "tool", "tool_call_id": "a"}], "HIST-2", 2),
    ("HIST-2-tool-without-tool-call-id", [user(), calls("a"), {"role": "tool", "content": "ok"}], "HIST-2", 2),
    (
        "HIST-2-tool-call-id-not-a-string",
        [user(), calls("a"), {"role": "tool", "tool_call_id": 1, "content": "ok"}],
        "HIST-2",
        2,
    ),
    (
        "HIST-2-tool-calls-not-a-list",
        [user(), {"role": "assistant", "content": None, "tool_calls": {"id": "a"}}],
        "HIST-2",
        1,
    ),
    (
        "HIST-2-tool-call-without-id",
        [user(), {"role": "assistant", "content": None, "tool_calls": [{"type": "function"}]}],
        "HIST-2",
        1,
    ),
    ("HIST-2-tool-call-with-empty-id", [user(), calls("")], "HIST-2", 1),
    (
        "HIST-2-tool-call-id-a-number",
        [user(), {"role": "assistant", "content": None, "tool_calls": [{"id": 7}]}],
        "HIST-2",
        1,
    ),
    ("HIST-2-tool-call-not-a-dict", [user(), {"role": "assistant", "tool_calls": ["a"]}], "HIST-2", 1),
    ("HIST-3-orphan-tool-result", [user(), result("a")], "HIST-3", 1),
    ("HIST-3-tool-result-first", [result("a")], "HIST-3", 0),
    ("HIST-3-tool-result-after-system", [system(), result("a")], "HIST-3", 1),
    ("HIST-3-tool-result-after-bare-reply", [user(), reply(), result("a")], "HIST-3", 2),
    ("HIST-3-unknown-call-id", [user(), calls("a"), result("z")], "HIST-3", 2),
    (
        "HIST-3-answers-an-earlier-round",
        [user(), calls("a"), result("a"), calls("b"), result("a")],
        "HIST-3",
        4,
    ),
    ("HIST-4-answered-twice", [user(), calls("a"), result("a"), result("a")], "HIST-4", 3),
    (
        "HIST-4-answered-twice-among-parallel-calls",
        [user(), calls("a", "b"), result("a"), result("a"), result("b")],
        "HIST-4",
        3,
    ),
    ("HIST-5-user-before-the-answer", [user(), calls("a"), user()], "HIST-5", 2),
    ("HIST-5-reply-before-the-last-answer", [user(), calls("a", "b"), result("b"), reply()], "HIST-5", 3),
    ("HIST-5-system-before-the-answer", [user(), calls("a"), system()], "HIST-5", 2),
    ("HIST-5-new-calls-before-the-answer", [user(), calls("a"), calls("b"), result("b")], "HIST-5", 2),
    ("HIST-6-id-twice-in-one-message", [user(), calls("a", "a")], "HIST-6", 1),
    ("HIST-6-id-twice-among-three-calls", [user(), calls("a", "b", "a"), result("a"), result("b")], "HIST-6", 1),
    (
        "HIST-5-reused-id-still-unanswered-before-the-next-message",
        [user(), calls("a"), result("a"), calls("a"), user()],
        "HIST-5",
        4,
    ),
]


@pytest.mark.parametrize(
    ("history", "rule", "index"),
    [pytest.param(history, rule, index, id=name) for name, history, rule, index in BAD_HISTORIES],
)
def test_a_bad_history_raises_history_error_naming_rule_and_index(history: Any, rule: str, index: int | None) -> None:
    before = copy.deepcopy(history)
    with pytest.raises(HistoryError) as caught:
        split_rounds(history)
    error = caught.value
    assert (error.rule, error.index) == (rule, index)
    assert isinstance(error, ValueError)
    where = "history" if index is None else f"message {index}"
    assert str(error).startswith(f"{rule}: {where}: ")
    assert error.detail
    assert history == before, "validation must not change the input"


def test_history_error_message_names_the_offending_index() -> None:
    with pytest.raises(HistoryError, match=r"^HIST-3: message 3: tool result 'zz' "):
        split_rounds([system(), user(), reply(), result("zz")])


def test_history_error_for_a_pending_call_names_the_missing_ids() -> None:
    with pytest.raises(HistoryError, match="a, c"):
        split_rounds([user(), calls("c", "a", "b"), result("b"), user()])


# --- property: splitting loses nothing -------------------------------------------------


@PROPERTY
@given(histories())
def test_every_generated_history_splits_and_flattens_back_to_itself(history: list[dict[str, Any]]) -> None:
    rounds = split_rounds(history)
    flat = flatten(rounds)
    assert flat == history
    assert all(a is b for a, b in zip(flat, history, strict=True))
    assert [r.start for r in rounds] == [sum(len(r.messages) for r in rounds[:i]) for i in range(len(rounds))]
    assert all(r.complete for r in rounds)
    assert not call_in_flight(rounds)


@PROPERTY
@given(histories(min_rounds=2, in_flight=True))
def test_every_generated_in_flight_history_splits_with_its_last_round_pending(history: list[dict[str, Any]]) -> None:
    rounds = split_rounds(history)
    assert flatten(rounds) == history
    assert call_in_flight(rounds)
    assert all(r.complete for r in rounds[:-1])


# --- RoundLog: split_rounds for a growing history (ROUND-1 incrementally, TOK-4's idea)


@PROPERTY
@given(histories(max_rounds=12))
def test_round_log_agrees_with_split_rounds_on_every_prefix(history):
    log = RoundLog()
    grown: list[dict[str, Any]] = []
    for message in history:
        grown.append(message)
        assert log.update(grown) == split_rounds(list(grown))
        assert log.system_messages == sum(m["role"] in ("system", "developer") for m in grown)


def test_round_log_validates_only_the_new_messages(monkeypatch):
    import compaction_suite.reference.rounds as rounds_module

    checked: list[int] = []
    real = rounds_module._role
    monkeypatch.setattr(rounds_module, "_role", lambda message, index: checked.append(index) or real(message, index))
    log = RoundLog()
    history = [system(), user(), calls("a", "b"), result("b")]
    log.update(history)
    history += [result("a"), reply()]
    rounds = log.update(history)
    assert checked == [0, 1, 2, 3, 4, 5]
    assert [r.kind for r in rounds] == ["system", "user", "tool_calls", "assistant"] and rounds[2].complete


def test_round_log_splits_a_list_that_does_not_extend_the_last_one_from_scratch():
    log = RoundLog()
    log.update([system(), user(), reply()])
    shorter = [system(), user("Something else.")]
    assert log.update(shorter) == split_rounds(shorter)
    assert log.system_messages == 1


def test_round_log_forgets_everything_after_a_history_error():
    log = RoundLog()
    history = [system(), user(), calls("a")]
    log.update(history)
    with pytest.raises(HistoryError) as error:
        log.update(history + [user()])
    assert error.value.rule == "HIST-5"
    assert log.update([user(), reply()]) == split_rounds([user(), reply()])
