"""What the matrix counts: reachable findings by harm class, each reproducer re-verified.

A run's clauses come from ``compaction-suite check --report`` (SPEC Part A): each carries its
``status``, ``harm`` (the clause index's classes, `clauses.harms`) and ``wire_format``. Before the
matrix writes a reproducer it checks that failing output against every structural clause of its
wire format (`formats.WireFormat.structural`: CORE-1..4 and 6, RESP-1..7 and 9, ANTH-1..5): an
output that breaks a clause the run reported as holding makes that clause fail too, so a ✓ never
stands beside a reproducer that contradicts it (issue 14, point 5; issue 24, point 2).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from compaction_suite.conformance.clauses import HARMS, harm_of, waived_by
from compaction_suite.message import SYSTEM_ROLES

__all__ = ["HARMS", "by_harm", "findings", "harm", "reverify", "shown_with", "structural_problems"]

FAILING = ("fail", "error")
UNCLASSIFIED = "unclassified"


def structural_problems(history: Any, output: Any, wire_format: str | None = None) -> dict[str, str]:
    """Which of ``wire_format``'s structural clauses (those its format judges on every output,
    `formats.WireFormat.structural`; default chat-completions) ``output``, compacted from
    ``history``, breaks, with the reason."""
    from compaction_suite.conformance import formats  # when a run is judged: the command starts without it

    found = formats.get(wire_format or formats.CHAT).structural(history, output)
    return {cid: str(reason) for cid, reason in found.items() if reason}


def reverify(clauses: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``clauses`` with each structural clause that another failure's output breaks marked as failing.

    A problem the input history has itself (an in-flight history's unanswered call, CORE-9)
    is not the compactor's; a clause that is already failing or is not applicable keeps its
    entry.
    """
    found: dict[str, dict[str, Any]] = {}
    for cid, entry in clauses.items():
        if entry.get("status") not in FAILING or entry.get("output") is None or entry.get("history") is None:
            continue
        wire_format = entry.get("wire_format")
        inherent = structural_problems(entry["history"], entry["history"], wire_format)
        for other, reason in structural_problems(entry["history"], entry["output"], wire_format).items():
            current = clauses.get(other)
            if other == cid or other in found or other in inherent or current is None or current.get("status") not in ("pass", "not-exercised"):
                continue
            updated = copy.deepcopy(current)
            updated.update(
                status="fail",
                reason=f"{reason} (shown by the {cid} reproducer: the same output breaks {other})",
                history=entry["history"],
                output=entry["output"],
                reverified_from=cid,
            )
            found[other] = updated
    return {**clauses, **found}


def harm(clause_id: str, entry: dict[str, Any]) -> str:
    """The harm class of a failing clause: the report's, else the clause index's."""
    return entry.get("harm") or harm_of(clause_id) or UNCLASSIFIED


def findings(run: dict[str, Any], *, documented: bool = False) -> list[dict[str, Any]]:
    """A run's MUST failures (and crashed tests), as the matrix lists them: those its framework does
    not document as its contract, or (``documented=True``) those it does (counted apart)."""
    return [f for f in run["failures"] if f["level"] == "MUST" and f["status"] in FAILING and bool(f.get("documented")) == documented]


def by_harm(run: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """A run's findings grouped by harm class (every class present, ``unclassified`` when used)."""
    grouped: dict[str, list[dict[str, Any]]] = {h: [] for h in HARMS}
    for f in findings(run):
        grouped.setdefault(f["harm"], []).append(f)
    return grouped


RAISED = re.compile(r"raised (\w+)")
PARAMETER = re.compile(r"\[([^\]]+)\]$")


def shown_with(clause_id: str, entry: dict[str, Any]) -> str | None:
    """What a finding needs, read from its evidence, so a reader sees who hits it: for a crash
    (harm ``crash``, CORE-10) each exception type with the summarizer faults (or tests) it was raised
    under; for a lost system prompt (a clause a system prompt kept outside waives: CORE-3, RESP-7)
    the system messages its history held. None when plain."""
    if harm_of(clause_id) == "crash":
        return _raised(entry)
    if clause_id in waived_by("system_prompt", "outside") and isinstance(entry.get("history"), list):
        return _systems(entry["history"])
    return None


def _raised(entry: dict[str, Any]) -> str | None:
    failures = entry.get("failures") or [{"test": entry.get("test") or "", "reason": entry.get("reason") or ""}]
    by_type: dict[str, list[str]] = {}
    for f in failures:
        kind = RAISED.search(f["reason"])
        if kind is None:
            continue
        parameter = PARAMETER.search(f["test"])
        where = parameter.group(1) if parameter and "fault" in f["test"] else f["test"].rpartition("::")[2]
        by_type.setdefault(kind.group(1), [])
        if where not in by_type[kind.group(1)]:
            by_type[kind.group(1)].append(where)
    return "; ".join(f"{kind} under {', '.join(wheres)}" for kind, wheres in by_type.items()) or None


def _systems(history: list[Any]) -> str | None:
    roles = [m.get("role") for m in history if isinstance(m, dict)]
    system = [i for i, role in enumerate(roles) if role in SYSTEM_ROLES]
    others = [i for i, role in enumerate(roles) if role not in SYSTEM_ROLES]
    if others and any(i > others[0] for i in system):
        return "a system message after the first other message"
    if len(system) > 1:
        return f"{len(system)} leading system messages"
    return None
