"""What identifies a finding across runs and releases: its clause and a stable reason.

A clause can fail for several defects at once (an orphan tool result and a dropped system message
both break a history), so a version table that compared clauses alone would not show a fix while
another defect of the same clause remains. The report gives every failure a ``reason_id``, a short
slug naming the defect, the same across runs and releases (SPEC Part A, "The framework matrix");
a report without one (an older suite) is read by its reason text with positions, quoted values
and ids normalised away, so the same defect reads the same at every release.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")
IDENTIFIER = re.compile(r"\b(?:call|toolu|fc|rs|msg|ent|item|chatcmpl)[_-][A-Za-z0-9_-]+\b")
RANGE = re.compile(r"\b\d+\.\.\d+\b")
POSITION = re.compile(r"\b(messages?|items?|index|indices|rounds?|turns?|groups?|iterations?|positions?|examples?|tokens?|chars?|characters?)\s+\d+\b", re.IGNORECASE)
"""A number naming a position or a size (``message 3``): normalised. A count that says what went
wrong (``1 in, 0 out``, ``0 results``) is kept: it tells one defect from another."""
SPACES = re.compile(r"\s+")


def normalised(reason: str) -> str:
    """``reason``'s first line with quoted values, ids and positions replaced, for comparison."""
    line = reason.strip().splitlines()[0] if reason.strip() else ""
    line = QUOTED.sub("…", line)
    line = IDENTIFIER.sub("ID", line)
    line = RANGE.sub("N..N", line)
    line = POSITION.sub(lambda m: f"{m.group(1)} N", line)
    return SPACES.sub(" ", line).strip()


def reason_key(failure: dict[str, Any]) -> str:
    """The stable reason of one failure: its ``reason_id``, else its normalised reason text."""
    return str(failure.get("reason_id") or normalised(str(failure.get("reason") or "")))


def keys(clause_id: str, entry: dict[str, Any]) -> set[tuple[str, str]]:
    """Every (clause, reason) a failing clause entry of a report holds: one per failing test
    (``failures``), else the entry's own reason."""
    failures: Iterable[dict[str, Any]] = entry.get("failures") or [entry]
    return {(clause_id, reason_key(f)) for f in failures}
