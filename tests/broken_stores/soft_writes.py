"""Soft compaction (preserve) writes the compacted view back to the stored branch."""

from __future__ import annotations

from compaction_suite.reference.points import DurableHistory

from ._base import target

EXPECTED = "STORE-3"
REASON = r"after soft compaction: (the ids changed|a stored message changed)"


class WritingHistory(DurableHistory):
    def compact(self, session, branch="main", *, retention=None, **run):
        view = super().compact(session, branch, retention=retention, **run)
        if (retention or self.retention) == "preserve":
            self.store.replace(session, view, branch)
        return view


def factory(settings):
    return target(settings, history=WritingHistory)
