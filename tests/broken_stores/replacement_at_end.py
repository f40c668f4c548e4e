"""Compact retention appends the replacement to the end of the branch instead of putting it where
the removed range began: the summary lands after the messages it is older than."""

from __future__ import annotations

from compaction_suite.reference.store import SQLiteStore

from ._base import target

EXPECTED = "STORE-4"
REASON = r"the replacement is not where the removed range began"


class AppendingStore(SQLiteStore):
    def apply(self, session, event, branch="main"):
        old = {row.id for row in self._read(session, branch)}
        after = super().apply(session, event, branch)
        moved = [row for row in after if row.id in old] + [row for row in after if row.id not in old]
        with self._write():
            self._rewrite(session, branch, moved)
        return moved


def factory(settings):
    return target(settings, store=AppendingStore)
