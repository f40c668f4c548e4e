"""What the matrix counts: reachable findings by harm class, each reproducer re-verified.

A run's clauses come from ``compaction-suite check --report`` (SPEC Part A): each carries its
``status`` and ``harm`` (``rejected``: the provider rejects the request, HTTP 400; ``loss``:
silent loss; ``crash``: an exception escapes ``compact``; ``policy``: trigger semantics,
CORE-9, events). Before the matrix writes a reproducer it checks that failing output against
every structural clause (CORE-1, CORE-2, CORE-3, CORE-6): an output that breaks a clause the
run reported as holding makes that clause fail too, so a ✓ never stands beside a reproducer
that contradicts it (issue 14, point 5).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from compaction_suite.conformance import oracle

HARMS = ("rejected", "loss", "crash", "policy")
FAILING = ("fail", "error")
UNCLASSIFIED = "unclassified"


def structural_harms() -> dict[str, str]:
    """The structural clauses the matrix re-checks every reproducer against, each with its harm when a
    report does not say (SPEC Part A, harm classes). The one place the matrix names clause ids: the
    clause index (``conformance/clauses.json``) can answer this instead."""
    return {"CORE-1": "rejected", "CORE-2": "rejected", "CORE-6": "rejected", "CORE-3": "loss"}


def structural_problems(history: Any, output: Any) -> dict[str, str]:
    """Which structural clauses ``output`` (compacted from ``history``) breaks, with the oracle's reason."""
    problems: dict[str, str] = {}
    invalid = oracle.check_valid_messages(output, history if isinstance(history, list) else ())
    if invalid:
        problems["CORE-6"] = invalid
    if not (isinstance(output, list) and all(isinstance(m, dict) for m in output)):
        return problems
    checks = {
        "CORE-1": oracle.check_tool_results_have_calls(output),
        "CORE-2": oracle.check_calls_have_one_result(output),
        "CORE-3": oracle.check_system_kept(history, output, not oracle.same(history, output)) if isinstance(history, list) else None,
    }
    problems.update({cid: reason for cid, reason in checks.items() if reason})
    return problems


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
        inherent = structural_problems(entry["history"], entry["history"])
        for other, reason in structural_problems(entry["history"], entry["output"]).items():
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
    """The harm class of a failing clause: the report's, else the structural default."""
    return entry.get("harm") or structural_harms().get(clause_id) or UNCLASSIFIED


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
    (CORE-10) each exception type with the summarizer faults (or tests) it was raised under; for a
    lost system message (CORE-3) the system messages its history held. None when plain."""
    if clause_id == "CORE-10":
        return _raised(entry)
    if clause_id == "CORE-3" and isinstance(entry.get("history"), list):
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
    system = [i for i, role in enumerate(roles) if role in oracle.SYSTEM_ROLES]
    others = [i for i, role in enumerate(roles) if role not in oracle.SYSTEM_ROLES]
    if others and any(i > others[0] for i in system):
        return "a system message after the first other message"
    if len(system) > 1:
        return f"{len(system)} leading system messages"
    return None
