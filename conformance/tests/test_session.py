"""Profile session: a framework's stored session under compaction (SPEC STORE-13..STORE-15,
STORE-18..STORE-20).

The target's ``session(path)`` opens the framework's own session kept in a fresh temporary folder;
the suite calls its ``append``, ``load``, ``compact`` and ``close`` (plain or ``async``) in one event
loop and judges what ``load`` gives, before and after the compaction, and from a session reopened
by a fresh target. The faults are the store's own and real concurrency: a file-size limit the
store's write runs into (STORE-13) and an append from another task while the summarizer holds the
compaction's request (STORE-14). The removal operations a session declares (``pop``, ``remove``,
``clear``: `capabilities.REMOVALS`) run before a compaction, which must bring back nothing they
removed (STORE-18, STORE-19). A session reopened after a compaction must go on compacting as the one
that stayed open (STORE-20).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import inspect
import json
import os
import resource
import tempfile
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pytest
from hypothesis import assume, given, reject
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from compaction_suite.conformance.assertions import require
from compaction_suite.conformance.suite import Suite
from compaction_suite.conformance.violation import Violation as V

from .common import TARGET_FORMAT, clause, declared_capabilities, in_format, target_format

T = TypeVar("T")
ROOM = 1 << 20
"""The room STORE-13 leaves the store: its largest file may grow by 1 MiB (SPEC STORE-13)."""
HOLD_SECONDS = 60.0
"""How long the summarizer would hold STORE-14's request if never released (the test releases it)."""
few = hypothesis_settings(max_examples=min(5, hypothesis_settings().max_examples), deadline=None)
"""Each example writes files and runs a framework's session: a few are enough, the shapes are forced."""
sessions = in_format(min_rounds=4, max_rounds=8, long_outputs=False, multimodal=False)


async def done(value: T | Awaitable[T]) -> T:
    """A session method's result, awaited when the session is ``async``."""
    return await value if inspect.isawaitable(value) else value


def open_session(suite: Suite, folder: str) -> Any:
    opener = getattr(suite.new().compactor, "session", None)
    if not callable(opener):
        pytest.fail(f"{suite.target.spec} claims 'session' but has no session(path) (SPEC Part A, session)")
    return opener(os.path.join(folder, "session"))


async def reopened_load(suite: Suite, folder: str) -> Any:
    """What a session reopened by a fresh target gives."""
    session = await done(open_session(suite, folder))
    try:
        return loaded(await done(session.load()))
    finally:
        await close(session)


async def close(session: Any) -> None:
    closer = getattr(session, "close", None)
    if callable(closer):
        await done(closer())


def scenario(suite: Suite, steps: Callable[[Any, str], Awaitable[T]], history: list[Any]) -> T:
    """Run ``steps(session, folder)`` on a fresh session holding ``history``, in one event loop."""
    suite.reset_server()

    async def run() -> T:
        with tempfile.TemporaryDirectory(prefix="compaction-suite-session-") as folder:
            session = await done(open_session(suite, folder))
            try:
                await done(session.append(copy.deepcopy(history)))
                return await steps(session, folder)
            finally:
                await close(session)

    return asyncio.run(run())


def same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=repr) == json.dumps(b, sort_keys=True, default=repr)


def items(history: Any) -> list[Any]:
    """A history's items: the list, or an Anthropic request's messages."""
    return list(history.get("messages") or []) if isinstance(history, dict) else list(history)


def lost(before: Any, after: Any) -> str:
    """How ``after`` differs from ``before``, item by item, whatever their order."""
    keys = lambda h: Counter(json.dumps(i, sort_keys=True, default=repr) for i in items(h))  # noqa: E731
    missing, back = keys(before) - keys(after), keys(after) - keys(before)
    return f"{sum(missing.values())} of its {len(items(before))} items missing, {sum(back.values())} others in their place ({len(items(after))} items)"


@contextlib.contextmanager
def file_size_limit(folder: str) -> Iterator[int]:
    """Lower this process's file-size limit (RLIMIT_FSIZE) to the largest file under ``folder``
    plus `ROOM`: a write past it fails with EFBIG (CPython ignores SIGXFSZ), as on a full disk."""
    sizes = [os.path.getsize(os.path.join(top, name)) for top, _, names in os.walk(folder) for name in names]
    limit = max(sizes, default=0) + ROOM
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield limit
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def user_turns(texts: list[str]) -> Any:
    """User turns as a history of the target's wire format (what another run appends, STORE-14)."""
    name = target_format().name
    if name == "responses":
        return [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": t}]} for t in texts]
    if name == "anthropic-messages":
        return {"messages": [{"role": "user", "content": [{"type": "text", "text": t}]} for t in texts]}
    return [{"role": "user", "content": t} for t in texts]


TAKEN_BACK = "withdrawn-question-q7x"
"""Words only the turn STORE-18 and STORE-19 remove holds (no drawn history holds them)."""
FRESH = "a new conversation after the clear (fresh-c4t)"
"""The first user turn of the conversation STORE-19 starts in the cleared session."""


def exchange(question: str, answer: str) -> Any:
    """A user question and the model's answer, as a history of the target's wire format: the turn a
    user takes back (the OpenAI Agents SDK's documented correction pops the answer, then the question)."""
    name = target_format().name
    if name == "responses":
        return [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": question}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]},
        ]
    if name == "anthropic-messages":
        return {"messages": [{"role": "user", "content": [{"type": "text", "text": question}]}, {"role": "assistant", "content": [{"type": "text", "text": answer}]}]}
    return [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]


def taken_back_turn() -> Any:
    return exchange(f"Please forget this question ({TAKEN_BACK}).", f"An answer to the question the user takes back ({TAKEN_BACK}).")


def holds(value: Any, words: str) -> bool:
    return words in json.dumps(value, default=repr, ensure_ascii=False)


async def take_back(session: Any, operation: str) -> list[Any]:
    """Remove the taken-back turn by ``operation``: ``pop`` the newest item until its question is
    gone (the answer first, as the SDK's documented correction does), or ``remove`` each of its items
    by position, newest first. Returns what was removed (popped items, or the items at those positions)."""
    removed: list[Any] = []
    if operation == "pop":
        for _ in range(len(items(loaded(await done(session.load())))) or 1):
            popped = await done(session.pop())
            if popped is None:
                break
            removed.append(popped)
            if not holds(items(loaded(await done(session.load()))), TAKEN_BACK):
                break
        return removed
    current = items(loaded(await done(session.load())))
    for index in reversed([n for n, item in enumerate(current) if holds(item, TAKEN_BACK)]):
        await done(session.remove(index))
        removed.append(current[index])
    return removed


async def compacted(suite: Suite, session: Any) -> tuple[Any, list[Any]]:
    """Compact ``session`` (one that raises brings nothing back; STORE-13 judges what it leaves) and
    return what it then loads and what the summarizer requests of that compaction stood for."""
    start = len(suite.server.exchanges)
    with contextlib.suppress(Exception):
        await done(session.compact())
    return loaded(await done(session.load())), sent_since(suite, start)


def sent_since(suite: Suite, start: int) -> list[Any]:
    """What the summarizer requests made since ``start`` stood for (a ``previous_response_id`` resolved
    into the chain the double stored: `summarizer_server.Exchange.body`)."""
    return [e.body for e in suite.server.exchanges[start:]]


def loaded(value: Any) -> Any:
    """What ``load`` gave, as a value of its own (a list, or an Anthropic request)."""
    return list(value) if isinstance(value, (list, tuple)) else value


@clause("STORE-13")
@TARGET_FORMAT
@few
@given(history=sessions)
def test_refused_rewrite_leaves_the_session_whole(suite, history):
    async def steps(session: Any, folder: str) -> tuple[V | None, Any]:
        before = loaded(await done(session.load()))
        with file_size_limit(folder) as limit:
            suite.server.reply_with("the summary " * (2 * limit // 12))  # more than the room left
            try:
                await done(session.compact())
                failed = False
            except Exception:  # noqa: BLE001 - a refused write may be reported; losing history may not
                failed = True
        suite.server.reply_with(None)
        assume(any(e.answer is not None for e in suite.server.exchanges))  # the summarizer answered: the rewrite was tried
        after = loaded(await done(session.load()))
        try:
            again = await reopened_load(suite, folder)
        except Exception as e:  # noqa: BLE001 - a store its own framework cannot reopen has lost the history
            reason = "history-lost-on-refused-write" if failed else "refused-write-not-stored"
            return V(reason, f"the store refused the compaction's write and the session can no longer be reopened ({raised(e)})"), after
        if failed and not same(again, before):
            return V("history-lost-on-refused-write", f"the store refused the compaction's write and the reopened session lost history: {lost(before, again)}"), again
        if not failed and not same(again, after):
            return V("refused-write-not-stored", f"the compaction reported success but the reopened session differs: {lost(after, again)}"), again
        return None, after

    problem, output = scenario(suite, steps, history)
    require(problem, history, output)


@clause("STORE-14")
@TARGET_FORMAT
@few
@given(history=sessions)
def test_appends_during_compaction_are_kept(suite, history):
    texts = [f"appended while the compaction was in flight ({i})" for i in range(2)]

    async def steps(session: Any, _folder: str) -> tuple[V | None, Any]:
        suite.server.fault("hang", times=1, hang_seconds=HOLD_SECONDS)
        compaction = asyncio.ensure_future(done(session.compact()))
        for _ in range(400):
            if suite.server.in_flight or compaction.done():
                break
            await asyncio.sleep(0.025)
        held = bool(suite.server.in_flight)
        append = asyncio.ensure_future(done(session.append(user_turns(texts))))
        await asyncio.sleep(0.2)  # the append runs (or waits for the compaction) while the request is held
        suite.server.release()
        results = await asyncio.gather(compaction, append, return_exceptions=True)
        assume(held)  # the compaction asked its summarizer and was held there
        if isinstance(results[1], BaseException):
            raise results[1]
        after = loaded(await done(session.load()))
        text = json.dumps(after, default=repr)
        missing = [t for t in texts if t not in text]
        if missing:
            return V("append-during-compaction-lost", f"{len(missing)} of {len(texts)} items appended while the compaction was in flight are not in the session after it"), after
        return None, after

    problem, output = scenario(suite, steps, history)
    require(problem, history, output)


@clause("STORE-15")
@TARGET_FORMAT
@few
@given(history=sessions)
def test_reopened_session_gives_the_same_history(suite, history):
    async def steps(session: Any, folder: str) -> tuple[V | None, Any]:
        before = loaded(await done(session.load()))
        try:
            await done(session.compact())
        except Exception:  # noqa: BLE001 - a compaction that raises is judged by STORE-13, not here
            reject()
        view = loaded(await done(session.load()))
        assume(not same(view, before))  # judged where the session compacted
        await close(session)
        again = await reopened_load(suite, folder)
        if not same(again, view):
            return V("reopened-session-differs", f"the reopened session gives other history than the one closed after a compaction: {lost(view, again)}"), again
        return None, view

    problem, output = scenario(suite, steps, history)
    require(problem, history, output)


@clause("STORE-18")
@TARGET_FORMAT
@few
@given(history=sessions, data=st.data())
def test_removed_items_stay_removed(suite, history, data):
    operations = [op for op in ("pop", "remove") if op in declared_capabilities().session_removes]
    operation = data.draw(st.sampled_from(operations), label="operation")

    async def steps(session: Any, _folder: str) -> tuple[V | None, Any]:
        await done(session.append(taken_back_turn()))
        removed = await take_back(session, operation)
        after_removal = loaded(await done(session.load()))
        assume(removed and not holds(after_removal, TAKEN_BACK))  # the operation removed the turn
        after, sent = await compacted(suite, session)
        assume(sent)  # the compaction asked its summarizer
        if holds(after, TAKEN_BACK):
            return V("removed-item-back", f"the session's {operation} removed {len(removed)} items; after the next compaction the session holds them again ({lost(after_removal, after)})"), after
        if holds(sent, TAKEN_BACK):
            return V("removed-item-summarized", f"the session's {operation} removed {len(removed)} items; the next compaction sent them to the summarizer, so its summary stands for them"), after
        return None, after

    problem, output = scenario(suite, steps, history)
    require(problem, history, output)


@clause("STORE-19")
@TARGET_FORMAT
@few
@given(history=sessions)
def test_cleared_conversation_stays_cleared(suite, history):
    async def steps(session: Any, _folder: str) -> tuple[V | None, Any]:
        await done(session.append(taken_back_turn()))
        await done(session.clear())
        assume(not items(loaded(await done(session.load()))))  # the clear emptied the session
        await done(session.append(user_turns([FRESH])))
        for more in (None, history):  # compact the new conversation's first turn; where that asks no summarizer, a longer one
            if more is not None:
                await done(session.append(copy.deepcopy(more)))
            cleared = loaded(await done(session.load()))
            after, sent = await compacted(suite, session)
            if holds(after, TAKEN_BACK):
                return V("cleared-history-back", f"after the session was cleared and a new conversation begun, the next compaction filled it with the old conversation ({lost(cleared, after)})"), after
            if holds(sent, TAKEN_BACK):
                return V("cleared-history-summarized", "after the session was cleared, the next compaction sent the old conversation to the summarizer, so its summary stands for it"), after
            if sent:
                return None, after
        return reject()  # no compaction asked the summarizer

    problem, output = scenario(suite, steps, history)
    require(problem, history, output)


def continuation(history: Any) -> Any:
    """The conversation going on after a compaction: as many user/assistant exchanges as ``history`` has
    items (at least two), in words no drawn history holds, in the target's wire format (STORE-20)."""
    turns = [exchange(f"A later question ({n}) asked after the compaction.", f"A later answer ({n}).") for n in range(max(2, len(items(history)) // 2))]
    if isinstance(turns[0], dict):
        return {"messages": [m for t in turns for m in t["messages"]]}
    return [item for t in turns for item in t]


async def compacted_twice(suite: Suite, history: Any, reopen: bool) -> tuple[bool, BaseException | None, Any, list[Any]]:
    """A fresh session holding ``history``, compacted, (``reopen``: closed and reopened by a fresh target),
    grown by `continuation` and compacted again. Returns whether the first compaction changed what the
    session gives, the second compaction's error, what the session then gives and what that compaction
    sent the summarizer."""
    with tempfile.TemporaryDirectory(prefix="compaction-suite-session-") as folder:
        session = await done(open_session(suite, folder))
        try:
            await done(session.append(copy.deepcopy(history)))
            before = loaded(await done(session.load()))
            await done(session.compact())
            changed = not same(loaded(await done(session.load())), before)
            if reopen:
                await close(session)
                session = await done(open_session(suite, folder))
            await done(session.append(continuation(history)))
            start = len(suite.server.exchanges)
            error: BaseException | None = None
            try:
                await done(session.compact())
            except Exception as e:  # noqa: BLE001 - judged against the session that stayed open
                error = e
            return changed, error, loaded(await done(session.load())), sent_since(suite, start)
        finally:
            await close(session)


def raised(error: BaseException) -> str:
    """``error`` and the errors it was raised from, as one line (a framework's wrapper names the cause last)."""
    chain = [error]
    while chain[-1].__cause__ is not None and len(chain) < 4:
        chain.append(chain[-1].__cause__)
    return " <- ".join(f"{type(e).__name__}: {str(e)[:200]}" for e in chain)


@clause("STORE-20")
@TARGET_FORMAT
@few
@given(history=sessions)
def test_reopened_session_compacts_as_the_open_one(suite, history):
    runs = []
    for reopen in (False, True):  # each on a fresh double, so both see the same answers and ids
        suite.reset_server()
        try:
            runs.append(asyncio.run(compacted_twice(suite, history, reopen)))
        except Exception:  # noqa: BLE001 - a first compaction that raises is judged by STORE-13, not here
            reject()
    (changed, open_error, open_view, open_sent), (_, error, view, sent) = runs
    assume(changed and open_error is None)  # judged where the first compaction changed the session and the open one compacts again
    problem = None
    if error is not None:
        problem = V("reopened-compaction-raised", f"the session reopened after a compaction raised on its next compaction ({raised(error)}) where the session that stayed open compacted")
    elif not same(view, open_view):
        problem = V("reopened-compaction-differs", f"the session reopened after a compaction gives other history after its next compaction than the session that stayed open: {lost(open_view, view)}")
    elif not same(sent, open_sent):
        problem = V("reopened-summarizer-differs", f"the session reopened after a compaction sent its summarizer other requests on its next compaction than the session that stayed open ({len(sent)} requests, {len(open_sent)} from the open one)")
    require(problem, history, view)
