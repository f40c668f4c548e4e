"""The four compaction points of seed 002, one compactor reused at each (SPEC DUR-7..DUR-12).

post-load (the model sees less, storage unchanged): `DurableHistory.load_for_model`;
pre-write (compact, then persist): `DurableHistory.save`; in-run (the tool loop, between
complete rounds): `agent_loop`; maintenance (a stored branch): `DurableHistory.compact`.
Seed 004 adds *retention* (``preserve`` the stored branch, ``compact`` it, or ``delete``
the compacted messages), *boundary policies* (which stored messages hard retention
removes) and fork compaction.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Callable, Sequence
from typing import Any, Literal

from .rounds import SYSTEM_ROLES, Message, call_in_flight, split_rounds
from .store import HistoryCompacted, HistoryStore, StoredMessage, StoreError, project

Retention = Literal["preserve", "compact", "delete"]
Boundary = Callable[[Sequence[StoredMessage], set[str]], set[str]]
"""Widens the set of removed ids (seed 004's boundary policies, DUR-9)."""


def exact(rows: Sequence[StoredMessage], removed: set[str]) -> set[str]:
    """Exactly the ids the compaction left out of the model's view."""
    return set(removed)


def previous(rows: Sequence[StoredMessage], removed: set[str]) -> set[str]:
    """Also every non-system message before the last removed one."""
    last = max((i for i, r in enumerate(rows) if r.id in removed), default=-1)
    return removed | {r.id for r in rows[:last] if not _system(r)}


def turn(rows: Sequence[StoredMessage], removed: set[str]) -> set[str]:
    """Also every message of a message turn (``turn_id``) that lost one."""
    turns = {r.turn_id for r in rows if r.id in removed and r.turn_id is not None}
    return removed | {r.id for r in rows if r.turn_id in turns and not _system(r)}


def tool_group(rows: Sequence[StoredMessage], removed: set[str]) -> set[str]:
    """Also the rest of a tool-call group (the call and every result) that lost one."""
    grown = set(removed)
    for round_ in split_rounds([r.message for r in rows]):
        ids = [r.id for r in rows[round_.start : round_.end]]
        if round_.kind == "tool_calls" and grown.intersection(ids):
            grown.update(ids)
    return grown


def composite(*policies: Boundary) -> Boundary:
    """Apply every policy until none widens the set further."""

    def widen(rows: Sequence[StoredMessage], removed: set[str]) -> set[str]:
        while True:
            grown = removed
            for policy in policies:
                grown = policy(rows, grown)
            if grown == removed:
                return grown
            removed = grown

    return widen


BOUNDARIES: dict[str, Boundary] = {"exact": exact, "previous": previous, "turn": turn, "tool-group": tool_group}


def plan(
    rows: Sequence[StoredMessage], view: Sequence[Message], retention: Retention, boundary: Boundary = exact
) -> HistoryCompacted | None:
    """The durable event for a compaction whose model view is ``view``, or None (DUR-8).

    Stored non-system messages are matched to the view from the end (compaction keeps
    the tail): the unmatched ones are the compacted ids. An unmatched view message is a
    replacement, anchored at the first compacted message of its gap. System messages are
    never removed and stay where they are (seed 004).
    """
    stored = [r for r in rows if not _system(r)]
    shown = [m for m in view if m.get("role") not in SYSTEM_ROLES]
    where: dict[str, list[int]] = {}
    for index, row in enumerate(stored):
        where.setdefault(_key(row.message), []).append(index)
    match: list[int | None] = []
    upper = len(stored) - 1
    for message in reversed(shown):
        found = where.get(_key(message), [])
        at = bisect.bisect_right(found, upper) - 1  # the last copy at or before `upper`
        match.append(found[at] if at >= 0 else None)
        upper = upper if at < 0 else found[at] - 1
    kept = {stored[j].id for j in match if j is not None}
    compacted = {r.id for r in stored} - kept
    if not compacted:
        return None
    removed = boundary(rows, compacted) - {r.id for r in rows if _system(r)}
    replacement, anchors, below = [], [], -1
    # A replacement result goes with its call when the call opening its round in the view
    # was removed (tool-group); found by round, since ids pair only within one (HIST-6).
    call_removed = False
    for message, j in zip(shown, reversed(match)):
        if message.get("role") != "tool":
            call_removed = j is not None and stored[j].id in removed
        if j is not None:
            below = j
        elif retention == "compact" and not call_removed:
            if below + 1 >= len(stored) or stored[below + 1].id not in compacted:
                raise ValueError("the compaction added a message without removing any: hard retention cannot place it")
            replacement.append(message)
            anchors.append(stored[below + 1].id)
    return HistoryCompacted(tuple(r.id for r in rows if r.id in removed), tuple(replacement), tuple(anchors))


class DurableHistory:
    """A store with one compactor reused at every compaction point (seed 002's Option 1).

    ``compactor`` is a `reference.Compactor` (or anything with its ``compact``
    signature). This is also what the storage profile checks (``store(path)``).
    """

    def __init__(
        self, store: HistoryStore, compactor: Any, *, retention: Retention = "preserve", boundary: Boundary = exact
    ) -> None:
        self.store, self.compactor = store, compactor
        self.retention, self.boundary = retention, boundary

    def __getattr__(self, name: str) -> Any:
        """The store protocol (``load``, ``append``, ``replace``, ``events``, ``close``) is the store's."""
        return getattr(self.store, name)

    def load_for_model(self, session: str, branch: str = "main", **run: Any) -> list[Message]:
        """Post-load: the model sees the compacted history; storage is unchanged (STORE-3)."""
        return self.compact(session, branch, retention="preserve", **run)

    def save(
        self, session: str, messages: Sequence[Message], branch: str = "main", *, turn_id: str | None = None, **run: Any
    ) -> list[StoredMessage]:
        """Pre-write: compact this run's messages, then append them (seed 002's ``after_run``)."""
        compacted = self.compactor.compact(list(messages), **({"iteration": 1} | run))
        return self.store.append(session, compacted, branch, turn_id=turn_id)

    def compact(
        self, session: str, branch: str = "main", *, retention: Retention | None = None,
        boundary: Boundary | None = None, iteration: int = 1, skip: bool = False, force: bool = False,
    ) -> list[Message]:
        """Maintenance on a stored branch; returns what the model sees next (STORE-3..STORE-8).

        Under hard retention the event is applied to the branch as it is then, so
        messages appended meanwhile survive (DUR-5). A summarizer failure, even one
        covered by fallback truncation, removes nothing (DUR-10).
        """
        retention = retention or self.retention
        rows = self.store.load(session, branch)
        view = self.compactor.compact([r.message for r in rows], iteration=iteration, skip=skip, force=force)
        event = getattr(self.compactor, "last_event", None)
        if retention == "preserve" or getattr(event, "failure_reason", None):
            return view
        planned = plan(rows, view, retention, boundary or self.boundary)
        if planned is not None:
            self.store.apply(session, planned, branch)
        return view

    def fork(
        self, session: str, source: str, target: str, from_id: str, *, compact: bool = False
    ) -> list[StoredMessage]:
        """Copy ``source`` through ``from_id`` into the new branch ``target`` (DUR-11, STORE-9..STORE-11).

        With ``compact`` the copy is compacted (forced: the caller asked) before its first
        save; the source is never changed and no compacted event is recorded (seed 004).
        """
        rows = self.store.load(session, source)
        index = next((i for i, r in enumerate(rows) if r.id == from_id), None)
        if index is None:
            gone = any(from_id in e.removed_ids for e in self.store.events(session, source))
            why = "was compacted away (hard retention): no longer a fork point" if gone else "is not in this branch"
            raise StoreError(session, source, from_id, f"cannot fork: the message {why}")
        copied = rows[: index + 1]
        saved: Sequence[StoredMessage | Message] = copied
        if compact:
            view = self.compactor.compact([r.message for r in copied], iteration=1, force=True)
            planned = plan(copied, view, "compact", self.boundary)
            saved = copied if planned is None else project(copied, planned)
        return self.store.replace(session, saved, target, create=True)


def agent_loop(
    compactor: Any, messages: list[Message], step: Callable[[list[Message]], list[Message]], *,
    max_iterations: int, **run: Any,
) -> list[Message]:
    """In-run: a tool loop whose compaction point is between complete rounds (DUR-7, seed 000).

    ``step(messages)`` returns the next messages: an assistant message, tool results, or
    both (an empty list ends the run). Iterations count complete rounds; a bare
    assistant reply ends the run.
    """
    iteration = 0
    while iteration < max_iterations and (new := step(messages)):
        messages = messages + list(new)
        if call_in_flight(split_rounds(messages)):
            continue  # a tool call is unanswered: not a compaction point
        iteration += 1
        # COMPACTION POINT — between rounds, after a complete assistant→tool-results
        # round; never while a tool_call is in flight or unanswered (seed 000).
        messages = compactor.compact(messages, iteration=iteration, **run)
        if new[-1]["role"] == "assistant" and not new[-1].get("tool_calls"):
            break
    return messages


def _system(row: StoredMessage) -> bool:
    return row.message.get("role") in SYSTEM_ROLES


def _key(message: Message) -> str:
    return json.dumps(message, sort_keys=True)

