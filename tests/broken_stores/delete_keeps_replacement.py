"""Delete retention takes compact retention's code path: it stores the replacement (the summary)
too, where it should only remove the compacted messages."""

from __future__ import annotations

from compaction_suite.reference.points import DurableHistory

from ._base import target

EXPECTED = "STORE-5"
REASON = r"not the view without its replacement"


class ReplacingHistory(DurableHistory):
    def compact(self, session, branch="main", *, retention=None, **run):
        hard = "compact" if (retention or self.retention) == "delete" else retention
        return super().compact(session, branch, retention=hard, **run)


def factory(settings):
    return target(settings, history=ReplacingHistory)
