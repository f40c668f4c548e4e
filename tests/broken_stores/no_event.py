"""Hard retention rewrites the branch but records no history-compacted event."""

from __future__ import annotations

from compaction_suite.reference.store import SQLiteStore, project

from ._base import target

EXPECTED = "STORE-7"
REASON = r"0 history-compacted events were recorded, expected 1"


class SilentStore(SQLiteStore):
    def apply(self, session, event, branch="main"):
        return self.replace(session, project(self.load(session, branch), event), branch)


def factory(settings):
    return target(settings, store=SilentStore)
