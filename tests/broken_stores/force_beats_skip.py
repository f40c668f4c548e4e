"""``force`` wins over ``skip``: a maintenance run told to skip compacts anyway when forced."""

from __future__ import annotations

from compaction_suite.reference.points import DurableHistory

from ._base import target

EXPECTED = "STORE-12"
REASON = r"skip with force still compacted"


class ForcedHistory(DurableHistory):
    def compact(self, session, branch="main", *, skip=False, force=False, **run):
        return super().compact(session, branch, skip=skip and not force, force=force, **run)


def factory(settings):
    return target(settings, history=ForcedHistory)
