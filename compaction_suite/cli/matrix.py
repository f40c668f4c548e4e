"""``compaction-suite matrix``: the conformance suite over every installed framework adapter.

Each configuration (an adapter factory and options over its size parameters, from the
adapter module's ``CONFIGURATIONS``, plus its ``OTHER_SHAPES``: shapes the framework never
produces, reported in their own section and never counted) runs ``compaction-suite check TARGET --report`` in its
own subprocess, with the options in ``$COMPACTION_ADAPTER_OPTIONS``. The results are
written to ``OUT/matrix.json`` and ``OUT/matrix.md``, and each failing clause's smallest
failing history (the report's ``history``, shrunk by Hypothesis) to
``OUT/reproducers/<framework>--<compactor>--<configuration>--<clause>.json`` with the
command that replays it.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import click

from compaction_suite.adapters._common import OPTIONS_ENV
from compaction_suite.conformance.clauses import clauses
from compaction_suite.conformance.runner import run_check
from compaction_suite.conformance.target import probe

from . import matrix_verdicts as verdicts

FORMAT = "compaction-suite-matrix"
FORMAT_VERSION = 1
SYMBOL = {"pass": "✓", "fail": "✗", "error": "!", "skip": "·", "xfail": "x", "timeout": "⏱", "not-applicable": "n/a", "not-exercised": "∅"}


@dataclass
class Job:
    """One configuration to check."""

    framework: str
    versions: dict[str, str]
    factory: str
    target: str
    options: dict[str, Any] = field(default_factory=dict)
    why: str = ""
    native: bool = True
    """False for a shape the framework never produces (``OTHER_SHAPES``): reported apart, never counted."""

    @property
    def label(self) -> str:
        return ", ".join(f"{k}={json.dumps(v)}" for k, v in self.options.items()) or "defaults"

    @property
    def slug(self) -> str:
        parts = [_slug(self.framework), _slug(self.factory), _slug(self.label)]
        return "--".join(p for p in parts if p)

    def command(self) -> str:
        env = f"{OPTIONS_ENV}={shlex.quote(json.dumps(self.options))} " if self.options else ""
        return f"{env}compaction-suite check {shlex.quote(self.target)}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=-]+", "-", text.replace('"', "")).strip("-").lower()[:80]


def plan(only: tuple[str, ...], extra_targets: tuple[str, ...], with_adapters: bool) -> tuple[list[Job], list[dict[str, Any]]]:
    """The jobs to run, and every framework with what the matrix knows of it."""
    jobs: list[Job] = []
    frameworks: list[dict[str, Any]] = []
    if with_adapters:
        from compaction_suite.adapters import FRAMEWORKS

        for fw in FRAMEWORKS:
            entry: dict[str, Any] = {"framework": fw.name, "adapter": fw.module, "extra": fw.extra, "installed": fw.installed()}
            module = fw.adapter()
            entry["claims"] = dict(getattr(module, "WHY", {}))
            if getattr(module, "NOT_ADAPTED", None):
                entry["not_adapted"] = module.NOT_ADAPTED
            unavailable = getattr(module, "UNAVAILABLE", None)
            if not entry["installed"]:
                entry["not_run"] = f"not installed (pip install 'compaction-suite[{fw.extra}]')"
            elif unavailable:
                entry["not_run"] = unavailable
            if "not_run" in entry:
                frameworks.append(entry)
                continue
            entry["versions"] = fw.versions()
            frameworks.append(entry)
            configurations = [(f, o, module.WHY.get(f, ""), True) for f, o in module.CONFIGURATIONS]
            configurations += [(f, o, why, False) for f, o, why in getattr(module, "OTHER_SHAPES", [])]
            for factory, opts, why, native in configurations:
                job = Job(fw.name, entry["versions"], factory, f"{fw.module}:{factory}", dict(opts), why, native)
                if not only or any(o.lower() in f"{fw.name} {fw.module} {factory} {job.label}".lower() for o in only):
                    jobs.append(job)
    for target in extra_targets:
        jobs.append(Job(target, _target_version(target), target.rsplit(":", 1)[-1], target, {}, "as registered"))
    return jobs, frameworks


def _target_version(target: str) -> dict[str, str]:
    name = "compaction-suite"
    try:
        return {name: metadata.version(name)}
    except metadata.PackageNotFoundError:
        return {}


def run_job(job: Job, fast: bool, max_examples: int | None, timeout: float) -> dict[str, Any]:
    """Run ``compaction-suite check`` for one job in a subprocess; its report, summarized."""
    args = ["--fast"] if fast else []
    args += [f"--max-examples={max_examples}"] if max_examples else []
    env = dict(os.environ)
    env.pop(OPTIONS_ENV, None)
    if job.options:
        env[OPTIONS_ENV] = json.dumps(job.options)
    result: dict[str, Any] = {
        "framework": job.framework,
        "versions": job.versions,
        "compactor": job.factory,
        "target": job.target,
        "options": job.options,
        "configuration": job.label,
        "command": job.command() + (" --fast" if fast else "") + (f" --max-examples={max_examples}" if max_examples else ""),
        "why": job.why,
        "native": job.native,
    }
    done = run_check(job.target, args, env=env, timeout=timeout)
    result["exit_code"] = done.exit_code
    if done.exit_code is None:
        result["status"] = "timeout"
    result["seconds"] = round(done.seconds, 1)
    if done.report is not None:
        result["profiles_claimed"] = done.report["profiles_claimed"]
        result["capabilities"] = done.report.get("capabilities")
        result["passed"] = done.report["passed"]
        result["clauses"] = verdicts.reverify(done.report["clauses"])
        if any(c.get("reverified_from") for c in result["clauses"].values()):
            result["passed"] = False
        result.setdefault("status", "conforms" if result["passed"] else "fails")
    else:
        result.setdefault("status", "error")
        result["passed"] = False
        result["clauses"] = {}
        result["error"] = done.tail()
    return result


def build(results: list[dict[str, Any]], frameworks: list[dict[str, Any]], fast: bool, max_examples: int | None, out: Path, seconds: float) -> dict[str, Any]:
    """The matrix document; writes the reproducers under ``out/reproducers``."""
    repro_dir = out / "reproducers"
    repro_dir.mkdir(parents=True, exist_ok=True)
    for old in repro_dir.glob("*.json"):
        old.unlink()
    runs = []
    for r in results:
        failures = []
        for clause_id, c in r["clauses"].items():
            if c["status"] not in ("fail", "error"):
                continue
            failure: dict[str, Any] = {
                "clause": clause_id, "level": c["level"], "status": c["status"], "reason": c.get("reason", ""),
                "harm": verdicts.harm(clause_id, c), "title": c.get("title", ""),
            }  # fmt: skip
            if c.get("reverified_from"):
                failure["reverified_from"] = c["reverified_from"]
            condition = verdicts.shown_with(clause_id, c)
            if condition:
                failure["shown_with"] = condition
            if c.get("history") is not None:
                name = f"{_slug(r['framework'])}--{_slug(r['compactor'])}--{_slug(r['configuration'])}--{clause_id}.json"
                reproducer = {
                    "framework": r["framework"],
                    "versions": r["versions"],
                    "target": r["target"],
                    "options": r["options"],
                    "command": r["command"],
                    "clause": clause_id,
                    "level": c["level"],
                    "title": c["title"],
                    "harm": failure["harm"],
                    "reason": c.get("reason", ""),
                    "status": c["status"],
                    "test": c.get("test"),
                    "history": c["history"],
                    "output": c.get("output"),
                    "case": c.get("case"),
                    "env": {OPTIONS_ENV: json.dumps(r["options"])} if r["options"] else {},
                    "replay": f"python -m compaction_suite.conformance.reproduce reproducers/{name}" if c.get("case") else None,
                    "failures": c.get("failures"),
                    "shown_with": condition,
                    "native_shapes": r.get("native", True),
                }
                (repro_dir / name).write_text(json.dumps(reproducer, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
                failure["reproducer"] = f"reproducers/{name}"
            failures.append(failure)
        run = {k: v for k, v in r.items() if k != "clauses"}
        run["clauses"] = {cid: c["status"] for cid, c in r["clauses"].items()}
        run["failures"] = failures
        runs.append(run)
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "suite_version": _suite_version(),
        "python": platform.python_version(),
        "examples_per_clause": max_examples or (10 if fast else 50),
        "fast": fast,
        "seconds": round(seconds, 1),
        "frameworks": frameworks,
        "runs": runs,
    }


def _suite_version() -> str | None:
    try:
        return metadata.version("compaction-suite")
    except metadata.PackageNotFoundError:
        return None


HARM_TITLES = {
    "rejected": "rejected (the provider rejects the next request: HTTP 400)",
    "loss": "loss (silent: system prompt, ids, task list, history replaced by an empty summary)",
    "crash": "crash (an exception escapes compaction)",
    "policy": "policy (trigger semantics, CORE-9, events)",
}


def markdown(data: dict[str, Any]) -> str:
    """The matrix for a person: what users hit first (by harm), then every clause of every configuration."""
    native = [r for r in data["runs"] if r.get("native", True)]
    other = [r for r in data["runs"] if not r.get("native", True)]
    lines = [
        "# Conformance matrix: agent-framework compactors",
        "",
        f"`compaction-suite matrix` ran `compaction-suite check` on each configuration below "
        f"({data['examples_per_clause']} Hypothesis examples per clause{', --fast' if data['fast'] else ''}; "
        f"{data['seconds']:.0f} s in all; Python {data['python']}, compaction-suite {data['suite_version']}). "
        "Each adapter declares how its framework calls it (between complete rounds) and where the system prompt "
        "lives (outside the compacted list, or in it), each declaration proven by a test running the framework's "
        "own agent loop (`tests/test_adapter_loops.py`); a clause a declaration makes unreachable is `n/a`. "
        "Histories are in each framework's native shapes; shapes a framework never produces are under "
        "*Other shapes*, which no count includes.",
        "",
    ]
    lines += _users_hit(native)
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
        lines.append(f"- **{HARM_TITLES.get(h, h)}**: {_count(len(affected), 'configuration')} ({_count(total, 'finding')})")
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
        status = fw.get("not_run") or str(sum(bool(verdicts.findings(r)) for r in mine))
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
        if run.get("error"):
            lines.append(f"- **{run['framework']} {run['compactor']}** ({run['configuration']}){where_counted}: did not produce a report: `{run['error'].splitlines()[-1] if run['error'] else ''}`")
    return lines or ["None."]


@click.command()
@click.option("--out", "out_dir", default="matrix", show_default=True, type=click.Path(file_okay=False), help="Directory for matrix.md, matrix.json and reproducers/.")
@click.option("--fast", is_flag=True, help="10 Hypothesis examples per clause instead of 50 (check --fast).")
@click.option("--max-examples", type=click.IntRange(min=1), help="Hypothesis examples per clause (overrides --fast).")
@click.option("--only", multiple=True, metavar="TEXT", help="Run only configurations whose framework/compactor/options contain TEXT (repeatable).")
@click.option("--target", "targets", multiple=True, metavar="TARGET", help="Also check TARGET (module:attr, entry point, cmd:...) with its defaults (repeatable).")
@click.option("--adapters/--no-adapters", default=True, show_default=True, help="Run the framework adapters (--no-adapters: only --target).")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True, help="Configurations checked at once.")
@click.option("--timeout", type=click.FloatRange(min=1), default=1800, show_default=True, help="Seconds allowed per configuration.")
def matrix(out_dir, fast, max_examples, only, targets, adapters, jobs, timeout) -> None:
    """Check every installed framework adapter over its configurations; write a matrix.

    Writes OUT/matrix.json, OUT/matrix.md and OUT/reproducers/*.json (the smallest failing
    history of each failure). Exit status 0 when the matrix was written (failing
    configurations are results, not errors), 2 when nothing could be run.
    """
    out = Path(out_dir)
    probe(targets)  # a --target that cannot be imported or built is a bad input, before any check runs (SPEC Part C)
    todo, frameworks = plan(tuple(only), tuple(targets), adapters)
    if not todo:
        raise click.UsageError("nothing to run: no installed adapter matched and no --target given")
    started = time.monotonic()
    # Scheduling only: compactors that call a summarizer meet every fault (hangs included), the
    # longest checks, so they start first; the results keep the adapters' order.
    order = sorted(range(len(todo)), key=lambda i: "summar" not in todo[i].factory)

    def one(job: Job) -> dict[str, Any]:
        click.echo(f"checking {job.framework} {job.factory} ({job.label}) ...", err=True)
        r = run_job(job, fast, max_examples, timeout)
        click.echo(f"  {job.framework} {job.factory} ({job.label}): {r['status']} in {r['seconds']:.0f}s", err=True)
        return r

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        done = dict(zip(order, pool.map(one, [todo[i] for i in order]), strict=True))
    results = [done[i] for i in range(len(todo))]
    data = build(results, frameworks, fast, max_examples, out, time.monotonic() - started)
    out.mkdir(parents=True, exist_ok=True)
    (out / "matrix.json").write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (out / "matrix.md").write_text(markdown(data), encoding="utf-8")
    counted = [r for r in data["runs"] if r.get("native", True)]
    hit = sum(bool(verdicts.findings(r)) for r in counted)
    click.echo(f"{len(counted)} configurations ({len(data['runs']) - len(counted)} other shapes not counted), {hit} with a reachable MUST finding; {data['seconds']:.0f}s; written to {out}/matrix.md and {out}/matrix.json")


if __name__ == "__main__":  # pragma: no cover
    matrix()
