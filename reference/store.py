"""Durable history: sessions, branches, stable message ids (SPEC DUR-*, STORE-*).

Seed 002's ``HistoryProvider`` appends (``save_messages``) and, for compaction,
replaces a session's history atomically (``replace_messages``). Seed 004 adds
branches, message ids as fork points, and the durable ``BranchHistoryCompactedEvent``
that hard retention appends. The message the model sees stays a plain
chat-completions dict; its id travels beside it in a `StoredMessage`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .errors import HistoryError
from .rounds import Message, split_rounds


@dataclass(frozen=True)
class StoredMessage:
    """A message and the stable id it got when it was stored (DUR-1)."""

    id: str
    message: Message
    turn_id: str | None = None
    """The message turn it belongs to, for the turn boundary (seed 004's ``messageTurnId``)."""


@dataclass(frozen=True)
class HistoryCompacted:
    """Seed 004's ``BranchHistoryCompactedEvent``: what hard retention did to a branch (STORE-7).

    ``replacement[i]`` takes the place of the removed message ``anchors[i]``: where
    the removed range it stands for began (DUR-6).
    """

    removed_ids: tuple[str, ...]
    replacement: tuple[StoredMessage | Message, ...] = ()
    """Stored, each has its id; a plain dict in a planned event gets one from `apply`."""
    anchors: tuple[str, ...] = ()


class StoreError(ValueError):
    """A stored row or a write breaks the rules; names session, branch and row; nothing changed (DUR-4)."""

    def __init__(self, session: str, branch: str, row: str | None, detail: str) -> None:
        self.session, self.branch, self.row = session, branch, row
        where = f"session {session!r} branch {branch!r}" + (f" row {row!r}" if row else "")
        super().__init__(f"{where}: {detail}")


class StoreConflict(StoreError):
    """A compaction's removed message is gone: another writer compacted first (DUR-5)."""


class HistoryStore(Protocol):
    """The store protocol (SPEC plug-in contract, storage). ``branch`` defaults to ``"main"``."""

    def load(self, session: str, branch: str = "main") -> list[StoredMessage]: ...
    def append(self, session: str, messages: Sequence[Message], branch: str = "main", *,
               turn_id: str | None = None) -> list[StoredMessage]: ...
    def replace(self, session: str, messages: Sequence[Message | StoredMessage], branch: str = "main", *,
                create: bool = False) -> list[StoredMessage]: ...
    def apply(self, session: str, event: HistoryCompacted, branch: str = "main") -> list[StoredMessage]: ...
    def events(self, session: str, branch: str = "main") -> list[HistoryCompacted]: ...
    def close(self) -> None: ...


def project(rows: Sequence[StoredMessage], event: HistoryCompacted) -> list[StoredMessage | Message]:
    """The branch after ``event``: removed rows out, each replacement at its anchor (seed 004 projection).

    A planned event's replacement is plain messages, not stored yet: they come out as they are.
    """
    removed = set(event.removed_ids)
    out: list[StoredMessage | Message] = []
    for row in rows:
        if row.id in removed:
            out += [r for r, anchor in zip(event.replacement, event.anchors) if anchor == row.id]
        else:
            out.append(row)
    return out


SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (session TEXT NOT NULL, branch TEXT NOT NULL, seq INTEGER NOT NULL,
    id TEXT NOT NULL, turn_id TEXT, body TEXT NOT NULL, PRIMARY KEY (session, branch, id));
CREATE INDEX IF NOT EXISTS messages_order ON messages (session, branch, seq);
CREATE TABLE IF NOT EXISTS branches (session TEXT NOT NULL, branch TEXT NOT NULL, PRIMARY KEY (session, branch));
CREATE TABLE IF NOT EXISTS ids (session TEXT PRIMARY KEY, last INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL,
    branch TEXT NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL);
"""


APPLICATION_ID = 0x636D7073
"""SQLite's ``application_id`` of a compaction-suite store ("cmps"): its file says what it is (DUR-13)."""
SCHEMA_VERSION = 1
"""``user_version`` of the schema above; a store of a newer version is refused, never rewritten."""
COLUMNS = {
    "messages": ("session", "branch", "seq", "id", "turn_id", "body"), "branches": ("session", "branch"),
    "ids": ("session", "last"), "events": ("seq", "session", "branch", "kind", "body"),
}  # fmt: skip
"""The tables of schema version 1 and their columns: how a store written before the mark is known."""


class NotAStore(ValueError):
    """A file that is not a compaction-suite store; it was read, never written (DUR-13)."""


class SQLiteStore:
    """The embedded default: a SQLite file, WAL, one ``BEGIN IMMEDIATE`` transaction per write (DUR-2)."""

    def __init__(self, path: str) -> None:
        self.path = str(path)
        if self.path != ":memory:" and Path(self.path).is_file() and Path(self.path).stat().st_size:
            identify(self.path)  # another application's file is refused before a byte is written (DUR-13)
        self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(SCHEMA)
        if self._db.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:  # new, or written before the mark
            self._db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def close(self) -> None:
        self._db.close()

    def sessions(self) -> dict[str, list[str]]:
        """Every stored session with its branches (for messages naming what exists)."""
        found: dict[str, list[str]] = {}
        for session, branch in self._db.execute("SELECT DISTINCT session, branch FROM messages ORDER BY session, branch"):
            found.setdefault(session, []).append(branch)
        return found

    def load(self, session: str, branch: str = "main") -> list[StoredMessage]:
        """The branch's messages in order, checked (DUR-4); an unknown branch is empty."""
        rows = self._read(session, branch)
        self._check(session, branch, rows)
        return rows

    def append(
        self, session: str, messages: Sequence[Message], branch: str = "main", *, turn_id: str | None = None
    ) -> list[StoredMessage]:
        """Store ``messages`` after the branch's last one, each with a new id (DUR-1, DUR-3)."""
        with self._write():
            rows = self.load(session, branch)
            new = [StoredMessage(self._next_id(session), dict(m), turn_id) for m in messages]
            self._check(session, branch, rows + new)
            self._insert(session, branch, new, start=len(rows))
            return new

    def replace(
        self, session: str, messages: Sequence[Message | StoredMessage], branch: str = "main", *, create: bool = False
    ) -> list[StoredMessage]:
        """Seed 002's ``replace_messages``, atomic (STORE-2). A `StoredMessage` keeps its id;
        a plain dict gets a new one. ``create=True`` (a fork) refuses an existing branch."""
        with self._write():
            exists = "SELECT 1 FROM branches WHERE session=? AND branch=?"
            if create and self._db.execute(exists, (session, branch)).fetchone():
                raise StoreError(session, branch, None, "the branch already exists")
            rows = self._stored(session, messages)
            self._check(session, branch, rows)
            self._rewrite(session, branch, rows)
            return rows

    def apply(self, session: str, event: HistoryCompacted, branch: str = "main") -> list[StoredMessage]:
        """Hard retention: apply ``event`` to the rows as they are now and record it, in one
        transaction; messages appended since the caller loaded survive (DUR-5, STORE-7)."""
        with self._write():
            rows = self.load(session, branch)
            gone = set(event.removed_ids) - {r.id for r in rows}
            if gone:
                raise StoreConflict(session, branch, min(gone), "no longer stored: another writer compacted first")
            replacement = self._stored(session, event.replacement)
            event = HistoryCompacted(event.removed_ids, tuple(replacement), event.anchors)
            after = self._stored(session, project(rows, event))  # all stored already: each keeps its id
            why = "hard retention would break the history (a tool-group boundary keeps groups whole): "
            self._check(session, branch, after, why)
            self._rewrite(session, branch, after)
            body = {"removed_ids": event.removed_ids, "anchors": event.anchors, "replacement": list(map(_row, replacement))}
            self._db.execute(
                "INSERT INTO events (session, branch, kind, body) VALUES (?, ?, 'history_compacted', ?)",
                (session, branch, json.dumps(body, ensure_ascii=False)),
            )
            return after

    def events(self, session: str, branch: str = "main") -> list[HistoryCompacted]:
        """The branch's durable history-compacted events, oldest first."""
        found = self._db.execute("SELECT body FROM events WHERE session=? AND branch=? ORDER BY seq", (session, branch))
        return [_event(json.loads(body)) for (body,) in found]

    @contextmanager
    def _write(self) -> Iterator[None]:
        """One transaction; IMMEDIATE takes the write lock first, so concurrent writers queue (DUR-2)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _read(self, session: str, branch: str) -> list[StoredMessage]:
        """The rows, parsed but not checked against HIST-*."""
        found = self._db.execute(
            "SELECT id, turn_id, body FROM messages WHERE session=? AND branch=? ORDER BY seq", (session, branch)
        )
        rows = []
        for row_id, turn_id, body in found:
            try:
                rows.append(StoredMessage(row_id, json.loads(body), turn_id))
            except (TypeError, ValueError) as error:
                raise StoreError(session, branch, row_id, f"the stored body is not JSON ({error})") from error
        return rows

    def _check(self, session: str, branch: str, rows: Sequence[StoredMessage], why: str = "") -> None:
        """HIST-* on a branch; the error names the offending row (DUR-3, DUR-4)."""
        try:
            split_rounds([r.message for r in rows])
        except HistoryError as error:
            row = rows[error.index].id if error.index is not None else None
            raise StoreError(session, branch, row, why + str(error)) from error

    def _stored(self, session: str, messages: Sequence[Message | StoredMessage]) -> list[StoredMessage]:
        """A `StoredMessage` keeps its id; a plain message dict gets a new one."""
        return [m if isinstance(m, StoredMessage) else StoredMessage(self._next_id(session), dict(m)) for m in messages]

    def _rewrite(self, session: str, branch: str, rows: Sequence[StoredMessage]) -> None:
        self._db.execute("DELETE FROM messages WHERE session=? AND branch=?", (session, branch))
        self._insert(session, branch, rows, start=0)

    def _next_id(self, session: str) -> str:
        """``m-<n>``, counted per session and never reused, even after a removal (DUR-1)."""
        count = "INSERT INTO ids VALUES (?, 1) ON CONFLICT (session) DO UPDATE SET last = last + 1"
        self._db.execute(count, (session,))
        (last,) = self._db.execute("SELECT last FROM ids WHERE session=?", (session,)).fetchone()
        return f"m-{last}"

    def _insert(self, session: str, branch: str, rows: Sequence[StoredMessage], start: int) -> None:
        self._db.execute("INSERT OR IGNORE INTO branches VALUES (?, ?)", (session, branch))
        for seq, row in enumerate(rows, start):
            self._db.execute(
                "INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?)",
                (session, branch, seq, row.id, row.turn_id, json.dumps(row.message, ensure_ascii=False)),
            )


def identify(path: str) -> str:
    """What the SQLite file ``path`` holds, read without writing a byte or creating a file (DUR-13):
    ``"store"`` (marked), ``"unmarked store"`` (the tables of schema version 1, written before the
    mark) or ``"empty database"``; `NotAStore` for anything else, saying what it is."""
    with open(path, "rb") as file:
        head = file.read(16)
    if not head:
        raise NotAStore(f"{path}: is empty, not a compaction-suite store")
    if head != b"SQLite format 3\x00":
        raise NotAStore(f"{path}: not an SQLite database, so not a compaction-suite store")
    application, version, tables = _header(Path(path))
    if application == APPLICATION_ID:
        if version > SCHEMA_VERSION:
            raise NotAStore(f"{path}: a compaction-suite store of schema version {version}; this version reads {SCHEMA_VERSION}")
        return "store"
    if application:
        raise NotAStore(f"{path}: an SQLite database of another application (application_id {application:#x}), not a compaction-suite store")
    if not tables:
        return "empty database"
    if {name: columns for name, columns in tables.items() if name != "sqlite_sequence"} == COLUMNS:
        return "unmarked store"
    raise NotAStore(f"{path}: an SQLite database that is not a compaction-suite store (tables: {', '.join(sorted(tables))})")


def _header(path: Path) -> tuple[int, int, dict[str, tuple[str, ...]]]:
    """(application_id, user_version, each table's columns), read-only. A WAL file in use is read through its
    ``-wal`` and ``-shm`` files; otherwise the file is opened immutable, so SQLite creates none."""
    live = Path(f"{path}-wal").exists() and Path(f"{path}-shm").exists()
    db = sqlite3.connect(f"{path.resolve().as_uri()}?{'mode=ro' if live else 'immutable=1'}", uri=True)
    try:
        application = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        names = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        tables = {name: tuple(c for (c,) in db.execute("SELECT name FROM pragma_table_info(?)", (name,))) for name in names}
    except sqlite3.DatabaseError as error:
        raise NotAStore(f"{path}: an SQLite file that cannot be read ({error}), not a compaction-suite store") from error
    finally:
        db.close()
    return application, version, tables


class MemoryStore(SQLiteStore):
    """The same store in memory, for tests: nothing outlives the object."""

    def __init__(self) -> None:
        super().__init__(":memory:")


def _row(row: StoredMessage) -> dict[str, Any]:
    return {"id": row.id, "message": row.message, "turn_id": row.turn_id}


def _event(body: dict[str, Any]) -> HistoryCompacted:
    replacement = tuple(StoredMessage(r["id"], r["message"], r.get("turn_id")) for r in body["replacement"])
    return HistoryCompacted(tuple(body["removed_ids"]), replacement, tuple(body["anchors"]))
