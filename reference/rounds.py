"""Rounds: the units compaction keeps or drops whole (SPEC ROUND-*, HIST-*).

Seed 000: a round is an assistant message with ``tool_calls`` plus every tool
message answering those ids, or a bare assistant reply. We add the two other
kinds a history holds: a user message, and a system (or developer) message.
Splitting a history into rounds is also where it is validated, because every
rule a history can break is a rule about rounds. The rules are the ones the
chat-completions API enforces (SPEC HIST-*): calls and results pair up within a
round, so a tool-call id may come back in a later round, as real models do.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Literal

from compaction_suite.message import Message

from .errors import HistoryError

RoundKind = Literal["system", "user", "assistant", "tool_calls"]

SYSTEM_ROLES = frozenset({"system", "developer"})
KNOWN_ROLES = SYSTEM_ROLES | {"user", "assistant", "tool"}
CONTENT_ROLES = SYSTEM_ROLES | {"user", "tool"}
"""Roles whose messages must have ``content`` (HIST-2)."""


NO_CALLS: frozenset[str] = frozenset()
"""The ``pending`` of a round with no tool call waiting: shared, so no round allocates an empty set."""


@dataclass(slots=True)
class Round:
    """A run of messages that is kept or dropped as one (SPEC ROUND-1).

    A round is a range, ``history[start:end]``, of the messages its `RoundLog` split,
    not a copy of them: a long history then costs one small object per round, not a
    list and a set as well, and every object the split keeps alive is one more for the
    garbage collector to walk (`benchmarks/results/speed.md`). A ``tool_calls`` round
    grows while it is split: each answer moves ``end`` on and its id leaves ``pending``.
    Once split, a round is only read.
    """

    kind: RoundKind
    start: int
    end: int
    history: list[Message] = field(repr=False, compare=False)
    """The messages split so far, which the `RoundLog` owns; the round is its ``[start:end]``."""
    pending: frozenset[str] = NO_CALLS
    """Tool-call ids of this round that have no answer yet."""

    @property
    def messages(self) -> list[Message]:
        """The round's messages, in order (a new list)."""
        return self.history[self.start : self.end]

    @property
    def complete(self) -> bool:
        return not self.pending


def extends(messages: Sequence[Message], seen: int, last: Message | None) -> bool:
    """Whether ``messages`` grew by appending from a list of ``seen`` messages ending in
    ``last``: that message, by identity, is still at its place (TOK-4). An empty start
    is extended by anything."""
    return seen == 0 or (len(messages) >= seen and messages[seen - 1] is last)


def split_rounds(messages: Sequence[Message]) -> list[Round]:
    """Split a history into rounds, raising `HistoryError` on any HIST rule.

    SPEC ROUND-1 defines the rounds; HIST-1..HIST-6 the rules checked here. Pairing
    is within a round: an id reused by a later round is that round's own call (HIST-6).
    Only the last round may have unanswered calls (a call in flight, ROUND-3).
    """
    return RoundLog().update(messages)


class RoundLog:
    """`split_rounds` for a history that grows by appending: `update` splits and validates
    only the messages added since the last call (SPEC ROUND-1; the ledger's idea, TOK-4).

    A list extends the one seen last when that list's last message is, by identity, at the
    same place in the new one; any other list is split from scratch. So, like `TokenLedger`,
    it relies on messages already seen not being changed in place. The rounds it returns are
    its own list: read them, do not change them.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything; the next `update` splits from scratch."""
        self.rounds: list[Round] = []
        self.messages: list[Message] = []
        """The messages split so far, in order: the history every round is a range of."""
        self.system_messages = 0
        self.checked = 0
        """How many of ``messages`` an earlier `update` split: the ones `verified` checks."""

    def update(self, messages: Sequence[Message]) -> list[Round]:
        """The rounds of ``messages``; raises `HistoryError` (and forgets all) on a HIST rule."""
        if not isinstance(messages, list):
            raise HistoryError("HIST-1", None, f"expected a list of messages, got {type(messages).__name__}")
        seen = self.messages
        if not extends(messages, len(seen), seen[-1] if seen else None):
            self.reset()
        self.checked = len(self.messages)
        try:
            for index in range(len(self.messages), len(messages)):
                self._add(messages[index], index)
        except HistoryError:
            self.reset()
            raise
        return self.rounds

    def verified(self, messages: list[Message]) -> list[Round]:
        """The rounds of ``messages`` (last given to `update`), split again from scratch if a
        message an earlier `update` split was replaced since: an identity check of each, cheap
        next to a split, so that a compaction never builds on a stale round. The messages the
        last `update` split were read then, so they are not checked again."""
        if not all(map(operator.is_, islice(self.messages, self.checked), messages)):
            self.reset()
            return self.update(messages)
        return self.rounds

    def _add(self, message: Any, index: int) -> None:
        rounds = self.rounds
        role = _role(message, index)
        if role == "tool":
            _answer(rounds[-1] if rounds else None, message, index)
        else:
            if rounds and rounds[-1].pending:
                missing = ", ".join(sorted(rounds[-1].pending))
                raise HistoryError("HIST-5", index, f"new {role} message before tool call(s) {missing} were answered")
            rounds.append(self._open(role, message, index))
        self.messages.append(message)

    def _open(self, role: str, message: dict[str, Any], index: int) -> Round:
        """The round that ``message``, of any role but ``tool``, opens (ROUND-1)."""
        if role in SYSTEM_ROLES:
            self.system_messages += 1
            return Round("system", index, index + 1, self.messages)
        if role == "user":
            return Round("user", index, index + 1, self.messages)
        call_ids = _call_ids(message, index)
        if not call_ids:
            return Round("assistant", index, index + 1, self.messages)
        return Round("tool_calls", index, index + 1, self.messages, frozenset(call_ids))


def call_in_flight(rounds: Sequence[Round]) -> bool:
    """True when the last round has an unanswered tool call (SPEC ROUND-3)."""
    return bool(rounds) and not rounds[-1].complete


def flatten(rounds: Sequence[Round]) -> list[Message]:
    """The messages of ``rounds``, in order.

    Rounds that follow each other in their history are copied as one slice: a long history
    then costs a few list copies, not a new list per round (`benchmarks/results/speed.md`)."""
    out: list[Message] = []
    history: list[Message] | None = None
    start = end = 0
    for round_ in rounds:
        if round_.history is history and round_.start == end:
            end = round_.end  # contiguous with the span so far
            continue
        if history is not None:
            out += history[start:end]
        history, start, end = round_.history, round_.start, round_.end
    if history is not None:
        out += history[start:end]
    return out


def _role(message: Any, index: int) -> str:
    if not isinstance(message, dict):
        raise HistoryError("HIST-2", index, f"expected a message dict, got {type(message).__name__}")
    role = message.get("role")
    if role not in KNOWN_ROLES:
        raise HistoryError("HIST-2", index, f"unknown role {role!r}; expected one of {sorted(KNOWN_ROLES)}")
    if role in CONTENT_ROLES and not isinstance(message.get("content"), (str, list)):
        raise HistoryError("HIST-2", index, f"{role} message has no string or list 'content'")
    return role


def _call_ids(message: dict[str, Any], index: int) -> list[str]:
    """The ids of an assistant message's tool calls; HIST-2 and HIST-6.

    Ids must differ within the message (its results are matched to its calls by id);
    an id an earlier round used is fine, since that round is answered and closed.
    """
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise HistoryError("HIST-2", index, "'tool_calls' is not a list")
    ids: list[str] = []
    for call in calls:
        call_id = call.get("id") if isinstance(call, dict) else None
        if not isinstance(call_id, str) or not call_id:
            raise HistoryError("HIST-2", index, "a tool call has no string 'id'")
        if not isinstance(call.get("function"), dict) or not isinstance(call["function"].get("name"), str):
            raise HistoryError("HIST-2", index, f"tool call {call_id!r} has no function with a string 'name'")
        if call_id in ids:
            raise HistoryError("HIST-6", index, f"tool_call id {call_id!r} is used twice in one assistant message")
        ids.append(call_id)
    return ids


def _answer(current: Round | None, message: Any, index: int) -> None:
    """Append a tool message to the round whose call it answers; HIST-3 and HIST-4."""
    call_id = message.get("tool_call_id")
    if not isinstance(call_id, str):
        raise HistoryError("HIST-2", index, "tool message has no string 'tool_call_id'")
    if current is None or current.kind != "tool_calls":
        raise HistoryError("HIST-3", index, f"tool result {call_id!r} does not follow an assistant tool call")
    if call_id not in current.pending:
        answered = any(m.get("tool_call_id") == call_id for m in current.messages[1:])
        rule, what = ("HIST-4", "answered twice") if answered else ("HIST-3", "answers no call of its round")
        raise HistoryError(rule, index, f"tool result {call_id!r} {what}")
    current.end += 1
    current.pending = current.pending - {call_id} if len(current.pending) > 1 else NO_CALLS
