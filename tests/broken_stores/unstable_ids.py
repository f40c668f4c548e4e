"""Ids are made up when a branch is read (a fresh one per load) instead of being stored with the
message, as a store that keeps only the messages would do: a second load gives other ids."""

from __future__ import annotations

import uuid

from compaction_suite.reference.store import SQLiteStore, StoredMessage

from ._base import target

EXPECTED = "STORE-1"
REASON = r"a second load: the ids changed"


class UnstableIdStore(SQLiteStore):
    def _read(self, session, branch):
        return [StoredMessage(f"m-{uuid.uuid4().hex[:8]}", row.message, row.turn_id) for row in super()._read(session, branch)]


def factory(settings):
    return target(settings, store=UnstableIdStore)
