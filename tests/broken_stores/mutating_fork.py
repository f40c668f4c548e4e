"""A fork that also cuts the source branch back to the fork point."""

from __future__ import annotations

from compaction_suite.reference.points import DurableHistory

from ._base import target

EXPECTED = "STORE-9"
REASON = r"the source after a fork: the ids changed"


class MutatingFork(DurableHistory):
    def fork(self, session, source, target, from_id, *, compact=False):
        copied = super().fork(session, source, target, from_id, compact=compact)
        self.store.replace(session, self.store.load(session, target), source)
        return copied


def factory(settings):
    return target(settings, history=MutatingFork)
