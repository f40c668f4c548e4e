"""Replace deletes, then inserts message by message, each statement its own transaction."""

from __future__ import annotations

import json

from compaction_suite.reference.store import SQLiteStore

from ._base import target

EXPECTED = "STORE-2"
REASON = r"after a replace that failed: the ids changed"


class NonAtomicStore(SQLiteStore):
    def replace(self, session, messages, branch="main", *, create=False):
        rows = self._stored(session, messages)
        self._db.execute("DELETE FROM messages WHERE session=? AND branch=?", (session, branch))
        self._db.execute("INSERT OR IGNORE INTO branches VALUES (?, ?)", (session, branch))
        for seq, row in enumerate(rows):
            body = json.dumps(row.message)  # fails half-way on a message that cannot be serialized
            self._db.execute("INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?)", (session, branch, seq, row.id, row.turn_id, body))
        return rows


def factory(settings):
    return target(settings, store=NonAtomicStore)
