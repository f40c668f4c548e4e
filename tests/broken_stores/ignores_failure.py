"""Hard retention applies whatever view the compactor returns and never looks at the event's
failure reason. Its compactor falls back to truncation when the summarizer fails (seed 003, a
legitimate choice), so a failed summary still deletes the range it could not summarize."""

from __future__ import annotations

from compaction_suite.reference.points import DurableHistory, plan

from ._base import target

EXPECTED = "STORE-8"
REASON = r"after a summarizer failure: the ids changed"


class CarelessHistory(DurableHistory):
    def compact(self, session, branch="main", *, retention=None, boundary=None, iteration=1, skip=False, force=False):
        retention = retention or self.retention
        rows = self.store.load(session, branch)
        view = self.compactor.compact([r.message for r in rows], iteration=iteration, skip=skip, force=force)
        planned = None if retention == "preserve" else plan(rows, view, retention, boundary or self.boundary)
        if planned is not None:
            self.store.apply(session, planned, branch)
        return view


def factory(settings):
    made = target(settings, history=CarelessHistory)
    made.compactor.strategy.fallback_truncation = True
    return made
