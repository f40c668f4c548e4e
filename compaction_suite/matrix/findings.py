"""What identifies a finding across runs and releases: its clause and a stable reason.

A clause can fail for several defects at once (an orphan tool result and a dropped system message
both break a history), so a version table that compared clauses alone would not show a fix while
another defect of the same clause remains. The report gives every failure a ``reason_id``, a short
slug naming the defect, the same across runs and releases (SPEC Part A, "The framework matrix");
a report without one (an older suite) is read by its reason text with positions, quoted values
and ids normalised away, so the same defect reads the same at every release.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from compaction_suite.conformance import violation


def normalised(reason: str) -> str:
    """``reason``'s first line with quoted values, ids and positions replaced, for comparison."""
    return violation.normalised(reason)


def reason_key(failure: dict[str, Any]) -> str:
    """The stable reason of one failure: its ``reason_id``, else its normalised reason text."""
    return str(failure.get("reason_id") or normalised(str(failure.get("reason") or "")))


def keys(clause_id: str, entry: dict[str, Any]) -> set[tuple[str, str]]:
    """Every (clause, reason) a failing clause entry of a report holds: one per distinct reason of
    each failing test (``failures``; a report of format 3 lists every reason a test failed with,
    an older one its first), else the entry's own reason."""
    failures: Iterable[dict[str, Any]] = entry.get("failures") or [entry]
    return {(clause_id, reason_key(f)) for f in failures}


def every_reason(entry: dict[str, Any]) -> list[dict[str, str]]:
    """Each distinct reason a failing clause entry of a report holds, with its text: the entry's own
    (the failure the report shows) first, then every other of its ``failures``, once per stable
    reason and text (`reason_key`, the first line). What a reported bug's expected reason is matched
    against (`bugs.Bug.names`): a clause failing first for another defect does not hide the bug's."""
    found: dict[tuple[str, str], dict[str, str]] = {}
    for f in [entry, *(entry.get("failures") or [])]:
        text = violation.first_line(str(f.get("reason") or ""))
        if text or f.get("reason_id"):
            found.setdefault((reason_key(f), text), {"reason_id": reason_key(f), "reason": text})
    return list(found.values())
