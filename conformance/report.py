"""The clause report: JSON for machines, Markdown for a person reading at a glance."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .clauses import clauses

if TYPE_CHECKING:
    from .suite import Suite

FORMAT_VERSION = 1
RANK = {"error": 4, "fail": 3, "xfail": 2, "pass": 1, "skip": 0}


def outcome_of(rep: pytest.TestReport) -> str:
    """One test's outcome: pass, fail, error (it crashed), skip, or xfail (expected to fail)."""
    if hasattr(rep, "wasxfail"):
        return "fail" if "SHOULD clause" in rep.wasxfail else "xfail"
    if rep.passed:
        return "pass"
    if rep.skipped:
        return "skip"
    return "fail" if rep.when == "call" and _is_violation(rep) else "error"


def _is_violation(rep: pytest.TestReport) -> bool:
    text = str(rep.longrepr)
    return "ClauseViolation" in text or "AssertionError" in text


def build(suite: Suite, results: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The report: every clause of SPEC Part A with its status and, for a failure, the history."""
    out: dict[str, Any] = {}
    for clause in clauses().values():
        entries = results.get(clause.id, [])
        if not entries:
            continue
        worst = max(entries, key=lambda e: RANK[e["outcome"]])
        status = worst["outcome"]
        if status == "skip" and any(e["outcome"] == "pass" for e in entries):
            status = "pass"
        item: dict[str, Any] = {"status": status, "level": clause.level, "profile": clause.profile, "title": clause.title}
        if status != "pass":
            item["reason"] = worst.get("reason", "")
            item["test"] = worst["test"]
        if status == "fail" and worst.get("history") is not None:
            item["history"] = worst["history"]
            item["output"] = worst.get("output")
        out[clause.id] = item
    return {
        "format": "compaction-suite-report",
        "version": FORMAT_VERSION,
        "compactor": suite.target.spec,
        "origin": suite.target.origin,
        "compactor_version": suite.target.version,
        "profiles_claimed": sorted(suite.claimed),
        "settings": suite.settings.as_json() | {"base_url": "(suite's summarizer test double)"},
        "compact_calls": suite.calls,
        "compacted_calls": suite.compacted,
        "passed": all(c["status"] in ("pass", "skip", "xfail") or c["level"] == "SHOULD" for c in out.values()),
        "clauses": out,
    }


def summary_lines(data: dict[str, Any]) -> list[str]:
    lines = []
    for clause_id, c in data["clauses"].items():
        status = c["status"] + (" (SHOULD)" if c["status"] == "fail" and c["level"] == "SHOULD" else "")
        reason = f"  {c.get('reason', '')}".rstrip() if c["status"] != "pass" else ""
        lines.append(f"{clause_id:<9} {status:<14}{reason.splitlines()[0] if reason else ''}")
    verdict = "conforms" if data["passed"] else "does NOT conform"
    lines.append(f"{data['compactor']} {verdict} to the profiles it claims ({', '.join(data['profiles_claimed'])})")
    lines.append(_exercised(data))
    return lines


def _exercised(data: dict[str, Any]) -> str:
    """How much compacting the verdict rests on (a compactor that never compacts passes core)."""
    return f"it compacted the history in {data['compacted_calls']} of the {data['compact_calls']} compact calls the tests made"


def markdown(data: dict[str, Any]) -> str:
    verdict = "conforms" if data["passed"] else "does **not** conform"
    lines = [
        f"# compaction-suite report: `{data['compactor']}`",
        "",
        f"{data['origin']}{' (' + data['compactor_version'] + ')' if data['compactor_version'] else ''} "
        f"{verdict} to the profiles it claims: {', '.join(data['profiles_claimed'])}; "
        f"{_exercised(data)}.",
        "",
        "| clause | level | status | reason |",
        "|---|---|---|---|",
    ]
    for clause_id, c in data["clauses"].items():
        reason = (c.get("reason") or "").splitlines()[0] if c["status"] != "pass" else ""
        lines.append(f"| {clause_id} | {c['level']} | {c['status']} | {reason.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def write(data: dict[str, Any], path: Path) -> None:
    """Write ``data`` as JSON or Markdown, chosen by the file's suffix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".md":
        path.write_text(markdown(data), encoding="utf-8")
    else:
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
