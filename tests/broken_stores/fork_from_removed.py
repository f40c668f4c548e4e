"""A fork point the branch no longer holds falls back to the branch's last message, so forking
from an id that hard retention removed succeeds (and copies the whole branch)."""

from __future__ import annotations

from compaction_suite.reference.points import DurableHistory

from ._base import target

EXPECTED = "STORE-11"
REASON = r"fork from the compacted-away id .* succeeded"


class LatestFork(DurableHistory):
    def fork(self, session, source, target, from_id, *, compact=False):
        ids = [row.id for row in self.store.load(session, source)]
        point = from_id if from_id in ids or not ids else ids[-1]
        return super().fork(session, source, target, point, compact=compact)


def factory(settings):
    return target(settings, history=LatestFork)
