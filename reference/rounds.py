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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice, repeat
from typing import Any, Literal, overload

from compaction_suite.message import Message

from .errors import HistoryError

RoundKind = Literal["system", "user", "assistant", "tool_calls"]

SYSTEM_ROLES = frozenset({"system", "developer"})
KNOWN_ROLES = SYSTEM_ROLES | {"user", "assistant", "tool"}
CONTENT_ROLES = SYSTEM_ROLES | {"user", "tool"}
"""Roles whose messages must have ``content`` (HIST-2)."""


NO_CALLS: frozenset[str] = frozenset()
"""The ``pending`` of a round with no tool call waiting: shared, so no round allocates an empty set."""


@dataclass(frozen=True, slots=True)
class Round:
    """A run of messages that is kept or dropped as one (SPEC ROUND-1): ``history[start:end]``.

    A round is a range of the messages its `RoundLog` split, not a copy of them. It is a
    view, made by `Rounds` when a round is asked for: see there why no round is stored.
    """

    kind: RoundKind
    start: int
    end: int
    history: list[Message] = field(repr=False, compare=False)
    """The messages split, which the `RoundLog` owns; the round is its ``[start:end]``."""
    pending: frozenset[str] = NO_CALLS
    """Tool-call ids of this round that have no answer yet (only the last round can have any)."""

    @property
    def messages(self) -> list[Message]:
        """The round's messages, in order (a new list)."""
        return self.history[self.start : self.end]

    @property
    def complete(self) -> bool:
        return not self.pending


class Rounds(Sequence[Round]):
    """A history's rounds, in order, read as `Round`s.

    They are recorded as three lists of plain values, the kind, start and end of each round,
    not as an object per round: Python's garbage collector walks every object that can hold
    others, and each object a split kept alive brought the next full collection nearer. With
    one object per round, splitting 100,000 messages kept some 44,000 alive, and the
    collections they caused made compacting grow faster than linearly with the history
    (`benchmarks/results/speed.md`). Strings and numbers in a list are not walked.
    """

    def __init__(
        self, history: list[Message], kinds: list[RoundKind], starts: list[int], ends: list[int], pending: frozenset[str] = NO_CALLS
    ) -> None:
        self.history = history
        self.kinds = kinds
        self.starts = starts
        self.ends = ends
        self.pending = pending
        """The last round's unanswered tool-call ids (ROUND-3)."""

    def __len__(self) -> int:
        return len(self.kinds)

    @overload
    def __getitem__(self, index: int) -> Round: ...
    @overload
    def __getitem__(self, index: slice) -> Rounds: ...
    def __getitem__(self, index: int | slice) -> Round | Rounds:
        if isinstance(index, slice):
            kept = range(len(self))[index]
            pending = self.pending if kept and kept[-1] == len(self) - 1 else NO_CALLS
            return Rounds(self.history, self.kinds[index], self.starts[index], self.ends[index], pending)
        i = range(len(self))[index]  # a negative index counts from the end; raises IndexError
        return Round(self.kinds[i], self.starts[i], self.ends[i], self.history, self.pending if i == len(self) - 1 else NO_CALLS)

    def select(self, keep: Iterable[bool]) -> Rounds:
        """The rounds for which ``keep`` (one flag per round, in order) is true."""
        chosen = [i for i, kept in zip(range(len(self)), keep) if kept]
        pending = self.pending if chosen and chosen[-1] == len(self) - 1 else NO_CALLS
        return Rounds(self.history, [self.kinds[i] for i in chosen], [self.starts[i] for i in chosen], [self.ends[i] for i in chosen], pending)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    def __repr__(self) -> str:
        return f"Rounds({list(self)!r})"


def extends(messages: Sequence[Message], seen: int, last: Message | None) -> bool:
    """Whether ``messages`` grew by appending from a list of ``seen`` messages ending in
    ``last``: that message, by identity, is still at its place (TOK-4). An empty start
    is extended by anything."""
    return seen == 0 or (len(messages) >= seen and messages[seen - 1] is last)


def split_rounds(messages: Sequence[Message]) -> Rounds:
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
    it relies on messages already seen not being changed in place. The rounds it returns
    read its own lists: read them, do not change them.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything; the next `update` splits from scratch."""
        self.messages: list[Message] = []
        """The messages split so far, in order: the history every round is a range of."""
        self.kinds: list[RoundKind] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        """Each round's kind and range, in order (`Rounds`)."""
        self.pending: frozenset[str] = NO_CALLS
        """The last round's tool-call ids that have no answer yet."""
        self.system_messages = 0
        self.checked = 0
        """How many of ``messages`` an earlier `update` split: the ones `verified` checks."""

    @property
    def rounds(self) -> Rounds:
        return Rounds(self.messages, self.kinds, self.starts, self.ends, self.pending)

    def update(self, messages: Sequence[Message]) -> Rounds:
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

    def verified(self, messages: list[Message]) -> Rounds:
        """The rounds of ``messages`` (last given to `update`), split again from scratch if a
        message an earlier `update` split was replaced since: an identity check of each, cheap
        next to a split, so that a compaction never builds on a stale round. The messages the
        last `update` split were read then, so they are not checked again."""
        if not all(map(operator.is_, islice(self.messages, self.checked), messages)):
            self.reset()
            return self.update(messages)
        return self.rounds

    def _add(self, message: Any, index: int) -> None:
        role = _role(message, index)
        if role == "tool":
            self._answer(message, index)
        elif self.pending:
            missing = ", ".join(sorted(self.pending))
            raise HistoryError("HIST-5", index, f"new {role} message before tool call(s) {missing} were answered")
        else:
            self._open(role, message, index)
        self.messages.append(message)

    def _open(self, role: str, message: dict[str, Any], index: int) -> None:
        """Start the round that ``message``, of any role but ``tool``, opens (ROUND-1)."""
        kind: RoundKind
        if role in SYSTEM_ROLES:
            self.system_messages += 1
            kind = "system"
        elif role == "user":
            kind = "user"
        else:
            call_ids = _call_ids(message, index)
            kind = "tool_calls" if call_ids else "assistant"
            self.pending = frozenset(call_ids) if call_ids else NO_CALLS
        self.kinds.append(kind)
        self.starts.append(index)
        self.ends.append(index + 1)

    def _answer(self, message: Any, index: int) -> None:
        """Add a tool message to the last round, whose call it answers; HIST-3 and HIST-4."""
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str):
            raise HistoryError("HIST-2", index, "tool message has no string 'tool_call_id'")
        if not self.kinds or self.kinds[-1] != "tool_calls":
            raise HistoryError("HIST-3", index, f"tool result {call_id!r} does not follow an assistant tool call")
        if call_id not in self.pending:
            answered = any(m.get("tool_call_id") == call_id for m in self.messages[self.starts[-1] + 1 :])
            rule, what = ("HIST-4", "answered twice") if answered else ("HIST-3", "answers no call of its round")
            raise HistoryError(rule, index, f"tool result {call_id!r} {what}")
        self.ends[-1] += 1
        self.pending = self.pending - {call_id} if len(self.pending) > 1 else NO_CALLS


def call_in_flight(rounds: Sequence[Round]) -> bool:
    """True when the last round has an unanswered tool call (SPEC ROUND-3)."""
    return bool(rounds) and not rounds[-1].complete


def flatten(rounds: Iterable[Round]) -> list[Message]:
    """The messages of ``rounds``, in order.

    Rounds that follow each other in their history are copied as one slice: a long history
    then costs a few list copies, not a new list per round (`benchmarks/results/speed.md`).
    `Rounds` give their ranges as they are recorded, without making a `Round` of each."""
    if isinstance(rounds, Rounds):
        spans: Iterable[tuple[list[Message], int, int]] = zip(repeat(rounds.history), rounds.starts, rounds.ends)
    else:
        spans = ((round_.history, round_.start, round_.end) for round_ in rounds)
    out: list[Message] = []
    history: list[Message] | None = None
    start = end = 0
    for span_history, span_start, span_end in spans:
        if span_history is history and span_start == end:
            end = span_end  # contiguous with the span so far
            continue
        if history is not None:
            out += history[start:end]
        history, start, end = span_history, span_start, span_end
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
