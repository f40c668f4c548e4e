"""The matrix for a person (``matrix.md``): what users hit first (by harm), then every clause of every
configuration, the documented findings apart, and every failure with its reproducer."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from compaction_suite.conformance.clauses import clauses, harms

from . import verdicts

SYMBOL = {"pass": "✓", "fail": "✗", "error": "!", "skip": "·", "xfail": "x", "timeout": "⏱", "not-applicable": "n/a", "not-exercised": "∅"}


def harm_title(harm: str) -> str:
    """A harm class with what it means, as the clause index states it (`clauses.harms`)."""
    said = harms().get(harm)
    return f"{harm} ({said})" if said else harm


def _updates(updates: list[dict[str, Any]]) -> str:
    """How much of the matrix was re-checked after its first run (``matrix --update``)."""
    return "".join(f"; then {u['configurations']} configuration(s) re-checked with --update in {u['seconds']:.0f} s" for u in updates)


def write(folder: Path, data: dict[str, Any], stem: str = "matrix", for_a_person: Callable[[dict[str, Any]], str] | None = None) -> None:
    """``folder/STEM.json`` (``data``) and ``folder/STEM.md`` (``for_a_person(data)``, the matrix's
    `markdown` unless given), the folder made if missing: every document the matrix command writes,
    a matrix, a release's matrix, the version table and the reported bugs, is written this way."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}.json").write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (folder / f"{stem}.md").write_text((for_a_person or markdown)(data), encoding="utf-8")


def markdown(data: dict[str, Any]) -> str:
    """The matrix for a person: what users hit first (by harm), then every clause of every configuration."""
    native = [r for r in data["runs"] if r.get("native", True)]
    other = [r for r in data["runs"] if not r.get("native", True)]
    lines = [
        "# Conformance matrix: agent-framework compactors",
        "",
        f"`compaction-suite matrix` ran `compaction-suite check` on each configuration below "
        f"({data['examples_per_clause']} Hypothesis examples per clause{', --fast' if data['fast'] else ''}; "
        f"{data['seconds']:.0f} s in all; Python {data['python']}, compaction-suite {data['suite_version']}"
        f"{_updates(data.get('updates', []))}). "
        "Each adapter declares how its framework calls it (between complete rounds) and where the system prompt "
        "lives (outside the compacted list, or in it), each declaration proven by a test running the framework's "
        "own agent loop (`tests/test_adapter_loops.py`); a clause a declaration makes unreachable is `n/a`. "
        "Histories are in each framework's native shapes; shapes a framework never produces are under "
        "*Other shapes*, which no count includes.",
        "",
        *([] if data.get("complete", True) else ["**Partial:** written after each configuration; the run is still going, or was stopped before its end. A configuration not checked yet is not listed.", ""]),
    ]
    lines += _users_hit(native)
    lines += _documented(native)
    lines += _frameworks(data, native)
    lines += ["## Clause by clause", ""] + _clause_tables(native)
    lines += [
        "✓ holds, ✗ fails (MUST), (✗) fails a SHOULD clause (reported, never failing), ! the test crashed, "
        "n/a not applicable under the declared capabilities, ∅ not exercised (no example compacted), · not checked "
        "(profile not claimed). Each failure links the smallest history Hypothesis found (`reproducers/`), with the "
        "command that replays it.",
        "",
    ]
    if other:
        lines += [
            "## Other shapes (not counted)",
            "",
            "Shapes the framework's own loop never produces (each row says why). Findings here are not reachable "
            "by the framework's users and are in no count above.",
            "",
        ] + _clause_tables(other, why=True)
    lines += ["## Failures", ""] + _failure_lines(data["runs"])
    lines += ["", "## What each compactor claims", ""]
    for fw in data["frameworks"]:
        for name, why in (fw.get("claims") or {}).items():
            lines.append(f"- **{fw['framework']} `{name}`**: {why}")
        if fw.get("not_run"):
            lines.append(f"- **{fw['framework']}**: not run: {fw['not_run']}")
        if fw.get("not_adapted"):
            lines.append(f"- **{fw['framework']}**, not in the matrix: {fw['not_adapted']}")
    declared = sorted({(r["framework"], r["compactor"], json.dumps(r.get("capabilities"), sort_keys=True)) for r in data["runs"] if r.get("capabilities")})
    if declared:
        lines += ["", "Declared capabilities:", ""]
        lines += [f"- **{fw} `{name}`**: `{caps}`" for fw, name, caps in declared]
    lines += ["", "Replay one configuration: the `command` of its run in `matrix.json` (or of a reproducer file)."]
    return "\n".join(lines) + "\n"


def _documented(runs: list[dict[str, Any]]) -> list[str]:
    """Findings the framework documents as its contract: counted apart, each with its words."""
    said = [(r, f) for r in runs for f in verdicts.findings(r, documented=True)]
    if not said:
        return []
    lines = [
        "## Documented behaviour (counted apart)",
        "",
        f"{_count(len(said), 'finding')} the framework documents as its contract; each still fails its clause, "
        "and none is in the counts above.",
        "",
    ]
    for r, f in said:
        doc = f["documented"]
        lines.append(f"- **{r['framework']} {r['compactor']}** ({r['configuration']}): {_finding(f)}: *\"{doc['quote']}\"* ({doc['source']})")
    return lines + [""]


def _users_hit(runs: list[dict[str, Any]]) -> list[str]:
    """The first table: per configuration with a reachable MUST finding, the findings by harm class."""
    hit = [r for r in runs if verdicts.findings(r) or r["status"] in ("error", "timeout")]
    harms = list(verdicts.HARMS) + sorted({f["harm"] for r in hit for f in verdicts.findings(r)} - set(verdicts.HARMS))
    lines = [
        "## What users hit",
        "",
        f"{len(hit)} of {_count(len(runs), 'configuration')} {'has' if len(hit) == 1 else 'have'} a MUST violation their "
        "framework's users can reach (declarations applied, native shapes only). By harm class:",
        "",
    ]
    for h in harms:
        affected = [r for r in runs if verdicts.by_harm(r).get(h)]
        total = sum(len(verdicts.by_harm(r).get(h, [])) for r in runs)
        lines.append(f"- **{harm_title(h)}**: {_count(len(affected), 'configuration')} ({_count(total, 'finding')})")
    lines += ["", "| framework | compactor | configuration | " + " | ".join(harms) + " | findings |", "|---|---|---|" + "---|" * (len(harms) + 1)]
    for run in hit:
        grouped = verdicts.by_harm(run)
        cells = [str(len(grouped.get(h, []))) if grouped.get(h) else "" for h in harms]
        listed = "; ".join(_finding(f) for f in verdicts.findings(run))
        if run["status"] in ("error", "timeout"):
            listed = listed or f"no report ({run['status']})"
        lines.append(f"| {run['framework']} | {run['compactor']} | {run['configuration'].replace('|', '/')} | " + " | ".join(cells) + f" | {listed} |")
    if not hit:
        lines.append("| – | – | none | " + " | ".join("" for _ in harms) + " | |")
    return lines + [""]


def _finding(f: dict[str, Any]) -> str:
    """One finding in the first table: the clause (linked to its reproducer), its harm, and what
    it needs when its evidence says (`verdicts.shown_with`)."""
    said = f"[{f['clause']}]({f['reproducer']}) {f['harm']}" if f.get("reproducer") else f"{f['clause']} {f['harm']}"
    return said + (f" ({f['shown_with'].replace('|', '/')})" if f.get("shown_with") else "")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _frameworks(data: dict[str, Any], runs: list[dict[str, Any]]) -> list[str]:
    lines = ["## Frameworks", "", "| framework | versions | configurations | conform | with a reachable finding |", "|---|---|---|---|---|"]
    for fw in data["frameworks"]:
        mine = [r for r in runs if r["framework"] == fw["framework"]]
        versions = ", ".join(f"{k} {v}" for k, v in (fw.get("versions") or {}).items()) or "–"
        refused = [r for r in mine if r["status"] == "contract-error"]
        if refused and not fw.get("not_run"):
            fw = {**fw, "not_run": f"{len(refused)} contract error(s): {refused[0].get('error', '')}"}
        status = fw.get("not_run") or (str(sum(bool(verdicts.findings(r)) for r in mine)) if mine else "not selected (--only)")
        lines.append(f"| {fw['framework']} | {versions} | {len(mine)} | {sum(r['passed'] for r in mine)} | {status.replace('|', '/')} |")
    for name in sorted({r["framework"] for r in runs} - {fw["framework"] for fw in data["frameworks"]}):
        mine = [r for r in runs if r["framework"] == name]
        versions = ", ".join(f"{k} {v}" for k, v in mine[0]["versions"].items())
        lines.append(f"| {name} | {versions} | {len(mine)} | {sum(r['passed'] for r in mine)} | {sum(bool(verdicts.findings(r)) for r in mine)} (extra target) |")
    return lines + [""]


def _clause_tables(runs: list[dict[str, Any]], why: bool = False) -> list[str]:
    """One clause table per wire format the runs compact (one, unheaded, when all share it): a
    format's table has no columns for the clauses of the other formats."""
    by_format: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        by_format.setdefault(_wire_format(run), []).append(run)
    if len(by_format) <= 1:
        return _clause_table(runs, why)
    lines: list[str] = []
    for name, group in by_format.items():
        lines += [f"### {name}", ""] + _clause_table(group, why)
    return lines


def _wire_format(run: dict[str, Any]) -> str:
    from compaction_suite.conformance import formats  # imports Hypothesis: not at the CLI's import (pytest must see it first)

    return (run.get("capabilities") or {}).get(formats.KEY) or formats.CHAT


def _clause_table(runs: list[dict[str, Any]], why: bool = False) -> list[str]:
    from compaction_suite.conformance import formats

    registry = clauses()
    elsewhere = set.intersection(*(set(formats.other_formats_clauses(_wire_format(run))) for run in runs)) if runs else set()
    checked = [cid for cid in registry if cid not in elsewhere and any(run["clauses"].get(cid) not in (None, "skip") for run in runs)]
    head = "| framework | compactor | configuration | claims | " + " | ".join(checked) + " | s |" + (" why not counted |" if why else "")
    lines = [head, "|---|---|---|---|" + "---|" * len(checked) + "---|" + ("---|" if why else "")]
    for run in runs:
        links = {f["clause"]: f.get("reproducer") for f in run["failures"]}
        cells = []
        for cid in checked:
            status = run["clauses"].get(cid, "skip")
            mark = SYMBOL.get(status, status)
            if status == "fail" and registry[cid].level == "SHOULD":
                mark = "(✗)"
            if links.get(cid):
                mark = f"[{mark}]({links[cid]})"
            cells.append(mark)
        claims = ", ".join(run.get("profiles_claimed") or []) or run["status"]
        row = f"| {run['framework']} | {run['compactor']} | {run['configuration'].replace('|', '/')} | {claims} | " + " | ".join(cells) + f" | {run['seconds']:.0f} |"
        lines.append(row + (f" {run['why']} |" if why else ""))
    return lines + [""]


def _failure_lines(runs: list[dict[str, Any]]) -> list[str]:
    lines = []
    for run in runs:
        where_counted = "" if run.get("native", True) else " *(other shape, not counted)*"
        for f in run["failures"]:
            level = "" if f["level"] == "MUST" else " (SHOULD)"
            where = f" — [{f['reproducer'].split('/')[-1]}]({f['reproducer']})" if f.get("reproducer") else ""
            reason = f["reason"].splitlines()[0] if f["reason"] else ""
            reason += f" (shown with {f['shown_with']})" if f.get("shown_with") else ""
            lines.append(f"- **{run['framework']} {run['compactor']}** ({run['configuration']}){where_counted}: {f['clause']}{level} [{f['harm']}] {reason}{where}")
        if run["status"] == "contract-error":
            lines.append(f"- **{run['framework']} {run['compactor']}** ({run['configuration']}){where_counted}: contract error, not a finding: {run.get('error', '')}")
        elif run.get("error"):
            lines.append(f"- **{run['framework']} {run['compactor']}** ({run['configuration']}){where_counted}: did not produce a report: `{run['error'].splitlines()[-1] if run['error'] else ''}`")
    return lines or ["None."]


