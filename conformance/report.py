"""The clause report: JSON for machines, Markdown and the terminal table for a person.

Its JSON shape is ``schema/report.schema.json`` (the fields explained in ``schema/report.md``).
Every clause of SPEC Part A gets one status: ``pass``, ``fail``, ``error`` (the test itself
broke), ``skip`` (profile not claimed or not requested), ``not-applicable`` (a declared capability
makes it unreachable), ``not-exercised`` (no example reached it: nothing was compacted where it speaks), or ``xfail``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .clauses import HARMS, clauses
from .violation import Reasons

if TYPE_CHECKING:
    from .suite import Finding, Suite

FORMAT_VERSION = 3
"""3: a failing clause's ``failures`` lists every distinct reason each failing test failed with
(2: each failing test once, with its first reason)."""
RANK = {"error": 4, "fail": 3, "xfail": 2, "unexercised": 1, "pass": 1, "skip": 0}
STATUSES = ("pass", "fail", "error", "not-exercised", "not-applicable", "skip", "xfail")
REPLAY = "compaction-suite reproduce {report} {clause}"
"""The one-line command that replays a clause's failure from the report alone."""


def outcome_of(rep: pytest.TestReport) -> str:
    """One test's outcome: pass, fail, error (it crashed), skip, xfail (expected to fail), or
    unexercised (Hypothesis found no example satisfying the test's assumptions)."""
    if hasattr(rep, "wasxfail"):
        return "fail" if "SHOULD clause" in rep.wasxfail else "xfail"
    if rep.passed:
        return "pass"
    if rep.skipped:
        return "skip"
    text = str(rep.longrepr)
    if "Unsatisfiable" in text or "filter_too_much" in text:
        return "unexercised"
    return "fail" if rep.when == "call" and ("ClauseViolation" in text or "AssertionError" in text) else "error"


def build(suite: Suite, results: dict[str, list[dict[str, Any]]], collected: set[str] | None = None) -> dict[str, Any]:
    """The report: every clause of SPEC Part A whose tests were collected (all of them, unless
    ``check --clause`` chose some), with its status, harm, title and evidence."""
    suite.settle()
    waived = suite.capabilities.waived()
    out: dict[str, Any] = {}
    for clause in clauses().values():
        if collected is not None and clause.id not in collected:
            continue
        item = _clause(clause, results.get(clause.id, []), suite.observed.findings.get(clause.id), _exercised(suite, clause), waived.get(clause.id), suite)
        if item is not None:
            out[clause.id] = _in_format(item, suite.format.name)
    failing = [c for c in out.values() if c["status"] in ("fail", "error") and c["level"] == "MUST"]
    unexercised = [cid for cid, c in out.items() if c["status"] == "not-exercised" and c["level"] == "MUST"]
    never_compacted = suite.calls > 0 and suite.compacted == 0  # storage-only runs call the store, not compact
    verdict = "does-not-conform" if failing else "not-shown" if unexercised or never_compacted else "conforms"
    ran = [cid for cid, c in out.items() if c["status"] not in ("skip", "not-applicable")]
    return {
        "format": "compaction-suite-report",
        "version": FORMAT_VERSION,
        "compactor": suite.target.spec,
        "origin": suite.target.origin,
        "compactor_version": suite.target.version,
        "profiles_claimed": sorted(suite.claimed),
        "profiles_run": sorted({clauses()[cid].profile for cid in ran}),
        "clauses_run": ran,
        "capabilities": suite.capabilities.as_dict(),
        "settings": suite.settings.as_json() | {"base_url": "(suite's summarizer test double)"},
        "compact_calls": suite.calls,
        "compacted_calls": suite.compacted,
        "calls_summarizer": suite.summarizer_probed,
        "verdict": verdict,
        "passed": verdict == "conforms",
        "harm_counts": {h: sum(1 for c in failing if c["harm"] == h) for h in HARMS},
        "status_counts": {s: sum(1 for c in out.values() if c["status"] == s) for s in STATUSES},
        "skips": _grouped_skips(out),
        "clauses": out,
    }


def _exercised(suite: Suite, clause: Any) -> int:
    """How many examples exercised ``clause``: for the fault clauses of a target that summarizes,
    the examples whose summarizer fault reached the summarizer (SPEC CORE-11 Decision); a target whose
    summaries are all server-side meets no fault, and counts as one that never summarizes does."""
    if clause.exercised == "fault" and suite.fault_swept:
        return len(suite.observed.reached.get(clause.id, ()))
    return suite.observed.count(clause.id)


UNREACHED = "the target asks its summarizer, but no summarizer fault reached it: no fault test drove it to summarize (SPEC CORE-11 Decision: summarizer reach)"


def _clause(clause: Any, entries: list[dict[str, Any]], finding: Finding | None, exercised: int, waiver: str | None, suite: Suite) -> dict[str, Any] | None:
    item: dict[str, Any] = {"status": "", "level": clause.level, "profile": clause.profile, "harm": clause.harm, "title": clause.title, "exercised": exercised}
    if waiver is not None:
        said = waiver if waiver.endswith(("histories", "clauses")) else f"{waiver}: the framework never hands the compactor what {clause.id} judges"
        return item | {"status": "not-applicable", "reason": said}
    inactive = suite.active(clause.profile)
    if not entries and finding is None:
        return item | {"status": "skip", "reason": inactive} if inactive else None
    if inactive:  # found on an output outside the profile's own tests (a core clause is always active)
        return item | {"status": "skip", "reason": inactive}
    worst: dict[str, Any] = max(entries, key=lambda e: RANK[e["outcome"]]) if entries else {"outcome": "pass"}
    status = worst["outcome"]
    failing = _failing_tests(entries, suite.observed.seen_in.get(clause.id, {}))
    if failing:
        item["failures"] = failing
    if finding is not None and status not in ("fail",):
        item |= {"status": "fail", "reason": f"{finding.reason} (seen in {finding.test or 'another test'})", "reason_id": finding.reason_id, "test": finding.test}
        return item | _evidence(finding.history, finding.output, finding.case, clause.id)
    if status in ("skip", "pass", "unexercised") and any(e["outcome"] == "pass" for e in entries):
        status = "pass"
    if clause.exercised == "fault" and suite.fault_swept and status in ("skip", "pass", "unexercised") and exercised == 0:
        return item | {"status": "not-exercised", "reason": UNREACHED}
    if status in ("pass", "unexercised") and exercised == 0:
        why = "no example compacted where this clause speaks" if not clause.exercised_by_check else "no example reached its check"
        return item | {"status": "not-exercised", "reason": why}
    if status == "unexercised":  # its own tests found no example, but other tests' outputs exercised it, without a finding
        status = "pass"
    item["status"] = status
    ruled_out = sorted({e["reason"] for e in entries if e["outcome"] == "skip" and e.get("reason", "").startswith("declared capabilities")})
    if ruled_out:
        item["ruled_out"] = ruled_out  # tests of a shape variant the declarations rule out (SPEC Part A, Declarations)
    if status != "pass":
        item["reason"] = worst.get("reason", "")
        item["test"] = worst.get("test")
        if status in ("fail", "error"):
            item["reason_id"] = worst.get("reason_id") or f"{status}:unclassified"
    if status == "fail" and worst.get("history") is not None:
        item |= _evidence(worst["history"], worst.get("output"), worst.get("case"), clause.id)
    return item


def _in_format(item: dict[str, Any], name: str) -> dict[str, Any]:
    """A clause that ran says in which wire format its histories were drawn: the target's own
    (a test drawing another format's histories never runs, SPEC Part A, "Wire formats")."""
    return item if item["status"] in ("skip", "not-applicable") else item | {"wire_format": name}


def _failing_tests(entries: list[dict[str, Any]], found_elsewhere: dict[str, Reasons]) -> list[dict[str, str]]:
    """Every distinct reason each failing test of a clause failed it with, with its reason id: the
    clause's own tests (the reason each reported first, then every other its examples met), then
    the tests whose outputs broke it (a clause shown by several faults or shapes, or failing for
    two defects in one test: the first reason alone would hide the others; SPEC Part A, "Reason ids")."""
    seen: dict[str, Reasons] = {}
    for e in entries:
        if e["outcome"] in ("fail", "error"):
            reasons = seen.setdefault(e["test"], Reasons())
            reasons.add(e.get("reason_id") or f"{e['outcome']}:unclassified", e.get("reason") or "")
            for r in e.get("reasons", ()):
                reasons.add(r["reason_id"], r["reason"])
    for test, found in found_elsewhere.items():
        reasons = seen.setdefault(test, Reasons())
        for r in found.items():
            reasons.add(r["reason_id"], r["reason"])
    return [{"test": test, **r} for test, reasons in seen.items() for r in reasons.items()]


def _evidence(history: Any, output: Any, case: dict[str, Any] | None, clause_id: str) -> dict[str, Any]:
    """What shows and replays a failure: the input, the output, the call's case, the command."""
    return {"history": history, "output": output, "case": case, "replay": REPLAY.format(report="{report}", clause=clause_id) if case else None}


def _grouped_skips(out: dict[str, Any]) -> list[dict[str, Any]]:
    groups: dict[str, list[str]] = {}
    for cid, c in out.items():
        if c["status"] in ("skip", "not-applicable"):
            groups.setdefault(c.get("reason") or "", []).append(cid)
    return [{"reason": reason, "clauses": ids} for reason, ids in groups.items()]


def ranges(ids: Iterable[str]) -> str:
    """``CORE-1..6, CORE-8, TRIG-1..5``: clause ids compressed into runs."""
    runs: list[tuple[str, int, int]] = []
    for cid in ids:
        prefix, _, n = cid.rpartition("-")
        if runs and runs[-1][0] == prefix and runs[-1][2] == int(n) - 1:
            runs[-1] = (prefix, runs[-1][1], int(n))
        else:
            runs.append((prefix, int(n), int(n)))
    return ", ".join(f"{p}-{a}" if a == b else f"{p}-{a}..{b}" for p, a, b in runs)


VERDICTS = {
    "conforms": "conforms to",
    "does-not-conform": "does NOT conform to",
    "not-shown": "is NOT shown to conform to",
}


def verdict_line(data: dict[str, Any]) -> str:
    """The verdict, naming exactly the profiles and clauses that ran."""
    return f"{data['compactor']} {VERDICTS[data['verdict']]} profiles {', '.join(data['profiles_run']) or '(none)'} (clauses {ranges(data['clauses_run']) or 'none'})"


def notes(data: dict[str, Any]) -> list[str]:
    """The lines under the verdict: harms, what was not exercised or waived, the compaction count."""
    lines = [f"MUST clauses failing by harm: {', '.join(f'{h} {n}' for h, n in data['harm_counts'].items())}"]
    if data["compact_calls"] == 0:
        lines.append("no compact calls: the clauses that ran exercise the store (see each clause's examples)")
    elif data["compacted_calls"] == 0:
        lines.append(f"WARNING: the compactor NEVER compacted (0 of {data['compact_calls']} compact calls): its passes show nothing, so it is not shown to conform")
    else:
        lines.append(f"it compacted the history in {data['compacted_calls']} of the {data['compact_calls']} compact calls the tests made")
    unexercised = [cid for cid, c in data["clauses"].items() if c["status"] == "not-exercised"]
    if unexercised:
        lines.append(f"not exercised (no example reached them, so no verdict): {ranges(unexercised)}")
    return lines


def formats_line(data: dict[str, Any]) -> str | None:
    """Which wire format the clauses ran in (one line: every clause that ran drew the target's format)."""
    ran = {c["wire_format"] for c in data["clauses"].values() if c.get("wire_format")}
    return f"clauses run on {', '.join(sorted(ran))} histories (the target's wire_format)" if ran else None


def summary_lines(data: dict[str, Any]) -> list[str]:
    lines = [line] if (line := formats_line(data)) else []
    for cid, c in data["clauses"].items():
        if c["status"] in ("skip", "not-applicable"):
            continue
        status = c["status"] + (" (SHOULD)" if c["status"] == "fail" and c["level"] == "SHOULD" else "")
        harm = c["harm"] if c["status"] in ("fail", "error") else ""
        lines.append(f"{cid:<9} {status:<15}{harm:<9}{c['exercised']:>5}  {c['title']}")
        if c["status"] not in ("pass",) and c.get("reason"):
            lines.append(f"{'':<11}{c['reason'].splitlines()[0]}")
        if others := other_reasons(c):
            lines.append(f"{'':<11}also failed with: {', '.join(others)}")
        if c["status"] == "fail" and c.get("replay"):
            lines.append(f"{'':<11}replay: {c['replay']}")
        lines += [f"{'':<11}not run: {why}" for why in c.get("ruled_out", ())]
    for group in data["skips"]:
        lines.append(f"{ranges(group['clauses'])}: {_status_word(data, group)} ({group['reason']})")
    lines.append(verdict_line(data))
    lines += notes(data)
    return lines


def other_reasons(clause: dict[str, Any]) -> list[str]:
    """The reason ids a failing clause also failed with, besides the one its ``reason`` shows (each once)."""
    shown = clause.get("reason_id")
    return list(dict.fromkeys(f["reason_id"] for f in clause.get("failures", ()) if f["reason_id"] != shown))


def _status_word(data: dict[str, Any], group: dict[str, Any]) -> str:
    return data["clauses"][group["clauses"][0]]["status"]


def _declared(capabilities: dict[str, Any] | None) -> str:
    """The declarations as Markdown (`called`: `anytime`, ...), a list's values joined, a trigger as JSON,
    one not declared (None) left out."""
    shown = [f"`{key}`: `{_value(value)}`" for key, value in (capabilities or {}).items() if value is not None]
    return ", ".join(shown) or "none"


def _value(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return json.dumps(value) if isinstance(value, dict) else str(value)


def markdown(data: dict[str, Any], report_path: str = "REPORT.json") -> str:
    version = f" ({data['compactor_version']})" if data["compactor_version"] else ""
    lines = [
        f"# compaction-suite report: `{data['compactor']}`",
        "",
        f"{data['origin']}{version}. Declared capabilities: {_declared(data['capabilities'])}.",
        "",
        f"**{verdict_line(data)}**",
        "",
        *[f"- {line}" for line in notes(data)],
        "",
        "| clause | title | level | harm | format | status | examples | reason |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for cid, c in data["clauses"].items():
        if c["status"] in ("skip", "not-applicable"):
            continue
        reason = (c.get("reason") or "").splitlines()[0] if c["status"] != "pass" else ""
        if others := other_reasons(c):
            reason += f" (also failed with: {', '.join(others)})"
        lines.append(f"| {cid} | {c['title']} | {c['level']} | {c['harm']} | {c.get('wire_format', '')} | {c['status']} | {c['exercised']} | {_cell(reason)} |")
    ruled_out = [(cid, why) for cid, c in data["clauses"].items() for why in c.get("ruled_out", ())]
    if data["skips"] or ruled_out:
        lines += ["", "Not run:", ""]
        lines += [f"- {ranges(g['clauses'])}: {_status_word(data, g)}, {_cell(g['reason'])}" for g in data["skips"]]
        lines += [f"- some tests of {cid}: {_cell(why)}" for cid, why in ruled_out]
    for cid, c in data["clauses"].items():
        if c["status"] == "fail" and c.get("case"):
            lines += _failure_section(cid, c, report_path)
    return "\n".join(lines) + "\n"


def _failure_section(cid: str, c: dict[str, Any], report_path: str) -> list[str]:
    case = c["case"]
    return [
        "",
        f"## {cid} ({c['harm']}): {c['title']}",
        "",
        c.get("reason", ""),
        "",
        (
            f"Reproduce: iteration {case['iteration']}, settings changed {case['settings'] or '{}'}, summarizer {case['summarizer']}, "
            f"{len(case['messages'])} input messages (in the JSON report). Replay: `{c['replay'].format(report=report_path)}`"
        ),
    ]


def _cell(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("|", "/"))


def write(data: dict[str, Any], path: Path) -> None:
    """Write ``data`` as JSON or Markdown, chosen by the file's suffix (its folder exists: the path
    was checked before the run, `compaction_suite.inputs.output_file`)."""
    json_path = str(path.with_suffix(".json"))
    if path.suffix == ".md":
        path.write_text(markdown(data, json_path), encoding="utf-8")
        return
    clauses_out = {cid: dict(c, replay=c["replay"].format(report=json_path)) if c.get("replay") else c for cid, c in data["clauses"].items()}
    path.write_text(json.dumps(data | {"clauses": clauses_out}, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
