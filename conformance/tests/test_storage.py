"""Profile storage: durable histories under compaction (SPEC STORE-1..STORE-12).

The target's ``store(path)`` opens a durable history in a fresh temporary folder for every
example; the suite only calls the methods of the plug-in contract (SPEC Part A) and reads
the branch back with ``load``, so a third-party store is checked exactly like the reference.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from compaction_suite.conformance import oracle
from compaction_suite.conformance.assertions import require
from compaction_suite.conformance.histories import histories
from compaction_suite.conformance.suite import Suite
from compaction_suite.conformance.violation import Violation as V

from .common import clause

SESSION = "conformance-session"
FORK = "conformance-fork"
HARD = ["compact", "delete"]
substantial = histories(min_rounds=8, max_rounds=14, long_outputs=False, multimodal=False)
"""Histories with something to compact; short tool outputs keep examples (and shrinking) cheap."""


class Opaque:
    """A value no store can serialize as JSON: the failure injected into a replace (STORE-2)."""

    def __repr__(self) -> str:
        return "<Opaque: cannot be serialized>"


@contextmanager
def opened(suite: Suite, history: list[dict] | None = None) -> Iterator[tuple[Any, str]]:
    """A fresh target's store in a fresh folder, holding ``history`` (appended as one call)."""
    suite.reset_server()
    with tempfile.TemporaryDirectory(prefix="compaction-suite-store-") as folder:
        path = os.path.join(folder, "history.db")
        store = open_store(suite, path)
        try:
            if history is not None:
                store.append(SESSION, copy.deepcopy(history), branch="main")
            yield store, path
        finally:
            close = getattr(store, "close", None)
            if callable(close):
                close()


def open_store(suite: Suite, path: str) -> Any:
    opener = getattr(suite.new().compactor, "store", None)
    if not callable(opener):
        pytest.fail(f"{suite.target.spec} claims 'storage' but has no store(path) (SPEC plug-in contract)")
    return opener(path)


def _get(item: Any, name: str) -> Any:
    return item[name] if isinstance(item, Mapping) else getattr(item, name)


def rows(store: Any, branch: str = "main") -> list[tuple[str, dict]]:
    """The branch as (id, message) pairs."""
    return [(_get(r, "id"), _get(r, "message")) for r in store.load(SESSION, branch=branch)]


def events(store: Any, branch: str = "main") -> list[tuple[set[str], list[dict]]]:
    """The branch's history-compacted events as (removed ids, replacement messages)."""
    out = []
    for event in store.events(SESSION, branch=branch):
        replacement = [_message(r) for r in _get(event, "replacement")]
        out.append((set(_get(event, "removed_ids")), replacement))
    return out


def _message(item: Any) -> dict:
    """A replacement item: a message, or something holding one in ``message``."""
    if isinstance(item, Mapping):
        return item["message"] if "message" in item else dict(item)
    return item.message


def messages(pairs: list[tuple[str, dict]]) -> list[dict]:
    return [m for _, m in pairs]


def non_system(items: list[dict]) -> list[dict]:
    return [m for m in items if m.get("role") not in oracle.SYSTEM_ROLES]


def key(message: Any) -> str:
    return json.dumps(message, sort_keys=True)


def unchanged(before: list[tuple[str, dict]], after: list[tuple[str, dict]], what: str) -> V | None:
    if [i for i, _ in before] != [i for i, _ in after]:
        return V("ids-changed", f"{what}: the ids changed from {[i for i, _ in before]} to {[i for i, _ in after]}")
    if not oracle.same(messages(before), messages(after)):
        return V("stored-message-changed", f"{what}: a stored message changed")
    return None


@contextmanager
def hard_compaction(suite: Suite, history: list[dict], retention: str) -> Iterator[tuple[Any, list, list, list, list]]:
    """Append ``history``, compact it under ``retention`` (forced); skip examples that do not compact."""
    with opened(suite, history) as (store, _):
        before, events_before = rows(store), events(store)
        view = store.compact(SESSION, branch="main", retention=retention, force=True)
        assume(not oracle.same(messages(before), view))
        yield store, before, events_before, view, rows(store)


def removed_ids(before: list[tuple[str, dict]], after: list[tuple[str, dict]]) -> list[str]:
    kept = {i for i, _ in after}
    return [i for i, _ in before if i not in kept]


def check_removed(before: list[tuple[str, dict]], after: list[tuple[str, dict]], view: list[dict]) -> V | None:
    """The removed messages are exactly those the view no longer holds verbatim; the rest is untouched."""
    expected = Counter(map(key, non_system(messages(before)))) - Counter(map(key, non_system(view)))
    removed = dict(before)
    gone = Counter(key(removed[i]) for i in removed_ids(before, after))
    if gone != expected:
        dropped = sum(expected.values())
        return V("removed-other-messages", f"removed {sum(gone.values())} messages ({removed_ids(before, after)}); the view dropped {dropped}")
    changed = [i for i, m in after if i in removed and not oracle.same(removed[i], m)]
    return V("kept-row-changed", f"kept rows {changed} changed their message") if changed else None


@clause("STORE-1")
@given(history=histories(min_rounds=1), cut=st.integers(0, 1000))
def test_append_and_load(suite, history, cut):
    groups = oracle.rounds(history)
    at = groups[cut % len(groups)][0] if groups else 0
    with opened(suite) as (store, path):
        store.append(SESSION, copy.deepcopy(history[:at]), branch="main")
        store.append(SESSION, copy.deepcopy(history[at:]), branch="main")
        first = rows(store)
        ids = [i for i, _ in first]
        problem = None if oracle.same(messages(first), history) else V("loaded-messages-differ", "the loaded messages differ from the appended ones")
        if problem is None and (len(set(ids)) != len(ids) or not all(isinstance(i, str) and i for i in ids)):
            problem = V("ids-not-unique", f"ids are not unique non-empty strings: {ids}")
        problem = problem or unchanged(first, rows(store), "a second load")
        reopened = open_store(suite, path)
        try:
            problem = problem or unchanged(first, rows(reopened), "a store opened anew at the same path")
        finally:
            getattr(reopened, "close", lambda: None)()
    require(problem, history, messages(first))


@clause("STORE-2")
@given(history=histories(min_rounds=2), new=histories(min_rounds=2))
def test_replace_is_atomic(suite, history, new):
    groups = oracle.rounds(new)
    at = groups[len(groups) // 2][0]
    opaque = {"role": "user", "content": "unserializable", "metadata": Opaque()}
    broken = copy.deepcopy(new[:at]) + [opaque] + copy.deepcopy(new[at:])
    with opened(suite, history) as (store, _):
        before = rows(store)
        try:
            store.replace(SESSION, broken, branch="main")
            failed = False
        except Exception:  # noqa: BLE001 - a failing replace is the case under test
            failed = True
        after = rows(store)
        if failed:
            problem = unchanged(before, after, "after a replace that failed")
        else:
            whole = len(after) == len(broken)
            problem = None if whole else V("replace-partial", f"a replace that returned left {len(after)} of {len(broken)} messages")
        require(problem, history, messages(after))
        store.replace(SESSION, copy.deepcopy(new), branch="main")
        problem = None if oracle.same(messages(rows(store)), new) else V("replace-not-stored", "after a replace, load gives other messages")
        require(problem, new, messages(rows(store)))


@clause("STORE-3")
@given(history=substantial)
def test_soft_compaction_leaves_storage(suite, history):
    with opened(suite, history) as (store, _):
        before, events_before = rows(store), events(store)
        view = store.compact(SESSION, branch="main", retention="preserve", force=True)
        assume(not oracle.same(messages(before), view))
        after = rows(store)
        problem = unchanged(before, after, "after soft compaction")
        if problem is None and len(events(store)) != len(events_before):
            problem = V("soft-compaction-recorded-event", "soft compaction recorded a history-compacted event")
    require(problem, history, messages(after))


@clause("STORE-4")
@given(history=substantial)
def test_compact_retention(suite, history):
    with hard_compaction(suite, history, "compact") as (_store, before, _, view, after):
        problem = check_removed(before, after, view)
        if problem is None and not oracle.same(non_system(messages(after)), non_system(view)):
            problem = V("replacement-misplaced", "the stored branch is not the view: the replacement is not where the removed range began")
        require(problem, history, messages(after))


@clause("STORE-5")
@given(history=substantial)
def test_delete_retention(suite, history):
    with hard_compaction(suite, history, "delete") as (_store, before, _, view, after):
        problem = check_removed(before, after, view)
        stored = {key(m) for m in messages(before)}
        expected = [m for m in non_system(view) if key(m) in stored]
        if problem is None and not oracle.same(non_system(messages(after)), expected):
            problem = V("replacement-stored-under-delete", "the stored branch is not the view without its replacement messages")
        require(problem, history, messages(after))


@clause("STORE-6")
@pytest.mark.parametrize("retention", HARD)
@given(history=substantial)
def test_hard_retention_orphans_nothing(suite, retention, history):
    with opened(suite, history) as (store, _):
        try:
            store.compact(SESSION, branch="main", retention=retention, force=True)
        except Exception:  # noqa: BLE001 - refusing is allowed; the branch must still be whole
            pass
        after = messages(rows(store))
    problem = oracle.check_tool_results_have_calls(after) or oracle.check_calls_have_one_result(after)
    require(problem, history, after)


@clause("STORE-7")
@pytest.mark.parametrize("retention", HARD)
@given(history=substantial)
def test_hard_retention_records_event(suite, retention, history):
    with hard_compaction(suite, history, retention) as (store, before, events_before, _, after):
        new = events(store)[len(events_before) :]
        problem = None if len(new) == 1 else V("event-count", f"{len(new)} history-compacted events were recorded, expected 1")
        if problem is None:
            removed, replacement = new[0]
            old = {i for i, _ in before}
            inserted = [m for i, m in after if i not in old]
            if removed != set(removed_ids(before, after)):
                problem = V("event-removed-ids", f"the event names {sorted(removed)}, the branch lost {removed_ids(before, after)}")
            elif not oracle.same(replacement, inserted if retention == "compact" else []):
                problem = V("event-replacement", f"the event's replacement ({len(replacement)} messages) is not what was inserted ({len(inserted)})")
        require(problem, history, messages(after))


@clause("STORE-8")
@pytest.mark.parametrize("retention", HARD)
@hypothesis_settings(max_examples=min(10, hypothesis_settings().max_examples))
@given(history=substantial)
def test_summarizer_failure_removes_nothing(suite, retention, history):
    with opened(suite, history) as (store, _):
        before, events_before = rows(store), events(store)
        suite.server.fault("500")
        try:
            store.compact(SESSION, branch="main", retention=retention, force=True)
        except Exception:  # noqa: BLE001 - reporting the failure is allowed; removing is not
            pass
        after = rows(store)
        problem = unchanged(before, after, "after a summarizer failure")
        if problem is None and len(events(store)) != len(events_before):
            problem = V("failed-compaction-recorded-event", "a history-compacted event was recorded for a failed compaction")
    require(problem, history, messages(after))


@clause("STORE-9")
@given(history=histories(min_rounds=1), point=st.integers(0, 10_000))
def test_fork_copies_through_the_fork_point(suite, history, point):
    with opened(suite, history) as (store, _):
        before, events_before = rows(store), events(store)
        index = point % len(before)
        store.fork(SESSION, "main", FORK, before[index][0])
        problem = unchanged(before, rows(store), "the source after a fork")
        if problem is None and events(store) != events_before:
            problem = V("fork-changed-source-events", "the source's events changed")
        target = messages(rows(store, FORK))
        if problem is None and not oracle.same(target, messages(before[: index + 1])):
            problem = V("fork-wrong-length", f"the fork holds {len(target)} messages, not the {index + 1} through the fork point")
    require(problem, history, target)


@clause("STORE-10")
@given(history=substantial)
def test_compacting_fork(suite, history):
    with opened(suite, history) as (store, _):
        before = rows(store)
        store.fork(SESSION, "main", FORK, before[-1][0], compact=True)
        problem = unchanged(before, rows(store), "the source after a compacting fork")
        target = messages(rows(store, FORK))
        if problem is None:
            problem = oracle.check_valid_messages(target) or oracle.check_tool_results_have_calls(target)
            problem = problem or oracle.check_calls_have_one_result(target)
        if problem is None and events(store, FORK):
            problem = V("fork-recorded-event", "the fork recorded a history-compacted event")
        if problem is None and oracle.same(target, messages(before)):
            view = store.compact(SESSION, branch="main", retention="preserve", force=True)
            assume(not oracle.same(view, messages(before)))  # only judged where compaction applies
            problem = V("fork-not-compacted", "the fork was not compacted before its first save")
    require(problem, history, target)


@clause("STORE-11")
@given(history=substantial, pick=st.integers(0, 10_000))
def test_compacted_away_id_is_no_fork_point(suite, history, pick):
    with hard_compaction(suite, history, "compact") as (store, before, _, _, after):
        gone = removed_ids(before, after)
        assume(gone)
        try:
            store.fork(SESSION, "main", FORK, gone[pick % len(gone)])
            problem: V | None = V("fork-from-compacted-id", f"fork from the compacted-away id {gone[pick % len(gone)]!r} succeeded")
        except Exception:  # noqa: BLE001 - any clear error will do
            problem = None if not rows(store, FORK) else V("failed-fork-left-branch", "the failed fork left a branch behind")
        require(problem, history, messages(after))


@clause("STORE-12")
@given(history=substantial)
def test_skip_wins_over_force(suite, history):
    with opened(suite, history) as (store, _):
        before, events_before = rows(store), events(store)
        view = store.compact(SESSION, branch="main", retention="compact", skip=True, force=True)
        problem = None if oracle.same(view, messages(before)) else V("skip-lost-to-force", "skip with force still compacted the view")
        problem = problem or unchanged(before, rows(store), "after skip with force")
        if problem is None and len(events(store)) != len(events_before):
            problem = V("skip-recorded-event", "skip with force recorded an event")
    require(problem, history, view)
