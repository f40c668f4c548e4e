"""A fork drops its ``compact=True``: the new branch is a plain copy, never compacted."""

from __future__ import annotations

from compaction_suite.reference.points import DurableHistory

from ._base import target

EXPECTED = "STORE-10"
REASON = r"the fork was not compacted"


class PlainFork(DurableHistory):
    def fork(self, session, source, target, from_id, *, compact=False):
        return super().fork(session, source, target, from_id)


def factory(settings):
    return target(settings, history=PlainFork)
