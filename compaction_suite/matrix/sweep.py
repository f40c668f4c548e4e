"""The version sweep: the same configurations across several releases of one framework distribution.

``compaction-suite matrix --versions semantic-kernel==1.38.0,1.41.0,1.41.1`` builds one isolated
environment per release (`environments`), runs every selected configuration of the adapters that
drive that distribution in each (``--target`` configurations too), and writes:

* ``OUT/releases/<distribution>-<version>/matrix.{json,md}`` and its reproducers, the matrix at that release;
* ``OUT/versions.json`` and ``OUT/versions.md``, the version table: per configuration, one row per
  finding, identified by its clause *and* its stable reason (`findings`), and one column per release,
  so a maintainer sees the release that introduced or fixed it.

A release whose environment cannot be built, or that a configuration's adapter refuses (exit 2, an
unsupported release), is said so in its column; neither is a finding.
"""

from __future__ import annotations

import contextlib
import importlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import verdicts
from .document import build
from .environments import Builder, InstallFailed, versions
from .findings import keys
from .jobs import CONTRACT_ERROR, Job, described, run_job, slug
from .render import write

FORMAT = "compaction-suite-versions"
FORMAT_VERSION = 1
SPEC = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^=\s][^=]*)$")


class SweepError(ValueError):
    """A ``--versions`` value that is not ``DIST==V1,V2,...`` (a usage error)."""


@dataclass
class Sweep:
    distribution: str
    releases: list[str]
    results: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Per release, the runs (as `build` keeps them)."""
    problems: dict[str, str] = field(default_factory=dict)
    """Per release that could not be installed, why."""
    installed: dict[str, dict[str, str]] = field(default_factory=dict)
    as_of: dict[str, str] = field(default_factory=dict)
    """Per release whose companions were resolved as of its date (`Builder.as_of`), that bound."""


def parse(spec: str) -> tuple[str, list[str]]:
    """``"semantic-kernel==1.30.0,1.38.0"`` -> (``"semantic-kernel"``, the releases in version order)."""
    from packaging.version import InvalidVersion, Version

    found = SPEC.match(spec)
    if not found:
        raise SweepError(f"--versions takes DIST==V1,V2,... (e.g. semantic-kernel==1.38.0,1.45.0), got {spec!r}")
    releases = [v.strip() for v in found.group(2).split(",") if v.strip()]
    try:
        ordered = sorted(set(releases), key=Version)
    except InvalidVersion as error:
        raise SweepError(f"--versions {spec!r}: {error}") from None
    return found.group(1).lower(), ordered


def applies(job: Job, distribution: str) -> bool:
    """Whether ``job`` belongs in a sweep of ``distribution``: its adapter drives that distribution
    (``DISTRIBUTIONS``/``SUPPORTED``), or it is a ``--target`` (the caller names what it tests)."""
    module = _module(job)
    if module is None:
        return True
    named = {*getattr(module, "DISTRIBUTIONS", ()), *getattr(module, "SUPPORTED", {})}
    return distribution in {d.lower() for d in named}


def requirements(jobs: list[Job], distribution: str, version: str) -> list[str]:
    """What an environment for one release holds: the release pinned, with the distributions its
    adapters install beside it (the module's ``sweep_install(factory, options)`` for a configuration
    whose model needs a client of its own, else ``SWEEP_INSTALL_BY_PATH`` for the job's factory, else
    ``SWEEP_INSTALL``, default ``DISTRIBUTIONS``), those released together
    with it (``RELEASED_TOGETHER``) pinned to the same version. The extras the jobs ask of the release
    are joined (``strands-agents[anthropic]`` and ``strands-agents[anthropic,mistral]`` make one)."""
    wanted = {distribution: f"{distribution}=={version}"}
    extras: set[str] = set()
    for job in jobs:
        module = _module(job)
        if module is None:
            continue
        together = {d.lower() for d in getattr(module, "RELEASED_TOGETHER", ())}
        by_path: dict[str, tuple[str, ...]] = getattr(module, "SWEEP_INSTALL_BY_PATH", {})
        chosen = getattr(module, "sweep_install", None)
        asked = tuple(chosen(job.factory, job.options)) if callable(chosen) else ()
        installs = asked or by_path.get(job.factory) or tuple(getattr(module, "SWEEP_INSTALL", getattr(module, "DISTRIBUTIONS", ())))
        first_beside: dict[str, str] = {k.lower(): v for k, v in getattr(module, "SWEEP_COMPANION_FROM", {}).items()}
        for requirement in installs:
            name = re.split(r"[\[=<>!~ ]", requirement, maxsplit=1)[0].lower()
            if name != distribution and name in first_beside and _older(version, first_beside[name]):
                continue  # a companion that did not exist yet at this release (`SWEEP_COMPANION_FROM`)
            pinned = name == distribution or (distribution in together and name in together)
            if name == distribution:  # the release itself, with the extras its adapter needs (strands-agents[anthropic])
                extras |= set(_extras(requirement))
                wanted[name] = f"{name}[{','.join(sorted(extras))}]=={version}" if extras else f"{requirement}=={version}"
            else:
                wanted.setdefault(name, f"{requirement}=={version}" if pinned else requirement + _PRE * _prerelease(version))
    return [wanted[name] for name in sorted(wanted)]


def _extras(requirement: str) -> list[str]:
    """The extras a requirement names (``strands-agents[anthropic,mistral]`` -> anthropic, mistral)."""
    found = re.search(r"\[([^\]]*)\]", requirement)
    return [e.strip() for e in found.group(1).split(",") if e.strip()] if found else []


_PRE = ">=0.0.0a0"
"""A specifier naming a pre-release, so the installer may pick one (PEP 440: pre-releases are left out
unless a specifier names one): beside a framework's pre-release (agent-framework-core 1.0.0rc6), the
distributions its adapter installs with it may only exist as pre-releases of that time
(agent-framework-openai 1.0.0rc6), and pip found no final release to go with it."""


def _older(version: str, than: str) -> bool:
    """Whether release ``version`` comes before ``than`` (PEP 440); False when either cannot be read.

    An adapter's ``SWEEP_COMPANION_FROM`` names, per companion distribution, the first release of the swept
    framework it is installed beside: below it the companion did not exist (agent-framework-openai arrived
    beside agent-framework-core 1.0.0rc6; rc4 and rc5 hold the OpenAI client themselves), and asking the
    installer for it with the release's day as cutoff fails the whole environment."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version) < Version(than)
    except InvalidVersion:
        return False


def _prerelease(version: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version).is_prerelease
    except InvalidVersion:
        return False


def run(
    jobs: list[Job], distribution: str, releases: list[str], builder: Builder, out: Path, *,
    fast: bool, max_examples: int | None, timeout: float, clauses: tuple[str, ...] = (), echo: Any = print,
) -> Sweep:  # fmt: skip
    """Every job in an environment of every release; each release's matrix written under ``out/releases``."""
    sweep = Sweep(distribution, releases)
    for version in releases:
        folder = out / "releases" / slug(f"{distribution}-{version}")
        refusals = [refused(job, distribution, version) for job in jobs]
        runs = [r for r in refusals if r is not None]
        for result in runs:
            echo(f"checking {result['framework']} {result['compactor']} ({result['configuration']}) at {distribution} {version} ...")
            echo(f"  {CONTRACT_ERROR}: {result['error']}")
        jobs_here = [job for job, r in zip(jobs, refusals, strict=True) if r is None]
        if not jobs_here:
            sweep.installed[version] = {}
            _write(sweep, version, runs, fast, max_examples, folder)
            continue
        as_of = builder.as_of(distribution, version)
        if as_of is not None:
            sweep.as_of[version] = as_of.strftime("%Y-%m-%d %H:%M UTC")
            echo(f"{distribution} {version}: installed with what the index held on {sweep.as_of[version]}")
        with contextlib.ExitStack() as held:
            try:
                python = held.enter_context(builder.using(requirements(jobs_here, distribution, version), folder / "install.log", as_of))
            except InstallFailed as error:
                sweep.problems[version] = str(error)
                echo(f"{distribution} {version}: not installed: {error}")
                continue
            installed = versions(python, sorted({distribution, *(d for j in jobs_here for d in _distributions(j))}))
            sweep.installed[version] = installed
            for job in jobs_here:
                echo(f"checking {job.framework} {job.factory} ({job.label}) at {distribution} {version} ...")
                result = run_job(job, fast, max_examples, timeout, python=python, versions=installed, clauses=clauses)
                echo(f"  {result['status']} in {result['seconds']:.0f}s")
                runs.append(result)
        _write(sweep, version, runs, fast, max_examples, folder)
    return sweep


def _write(sweep: Sweep, version: str, runs: list[dict[str, Any]], fast: bool, max_examples: int | None, folder: Path) -> None:
    """The matrix at one release, written under ``folder`` and kept in ``sweep``."""
    document = build(runs, [], fast, max_examples, folder, 0.0)
    write(folder, document)
    sweep.results[version] = document["runs"]


def refused(job: Job, distribution: str, version: str) -> dict[str, Any] | None:
    """``job``'s result at a release of ``distribution`` outside what its adapter declares for its path
    (``SUPPORTED``, ``SUPPORTED_BY_PATH``): a contract error in the one line the factory would give,
    found before any environment is built (SPEC Part A, "The framework matrix and releases": every
    adapter runs at each release it declares or says in one line that it cannot; a release nobody
    declared is not installed, since what it needs beside it may not exist at its date:
    agent-framework-core's 2026 betas predate agent-framework-openai). None inside, or for a ``--target``."""
    from compaction_suite.adapters._common import outside

    module = _module(job)
    problem = outside(module, job.factory, distribution, version) if module is not None else None
    if problem is None:
        return None
    line = f"{job.target}: UnsupportedRelease: {problem}; not installed"
    return {**described(job, {distribution: version}, []), "exit_code": 2, "seconds": 0.0, "passed": False, "clauses": {}, "status": CONTRACT_ERROR, "error": line}


def table(sweep: Sweep) -> dict[str, Any]:
    """The version table as data: per configuration, one row per (clause, reason) and one cell per release."""
    configurations: dict[tuple[str, str, str], dict[str, Any]] = {}
    for version in sweep.releases:
        for run in sweep.results.get(version, []):
            key = (run["framework"], run["compactor"], run["configuration"])
            entry = configurations.setdefault(key, {
                "framework": key[0], "compactor": key[1], "configuration": key[2], "target": run["target"],
                "declared": _declared(run), "status": {}, "rows": {},
            })  # fmt: skip
            entry["status"][version] = run["status"] if run["status"] in (CONTRACT_ERROR, "error", "timeout") else "ran"
            if run["status"] == CONTRACT_ERROR:
                entry.setdefault("errors", {})[version] = run.get("error", "")
            for f in run["failures"]:
                if f["level"] != "MUST" or f["status"] not in verdicts.FAILING:
                    continue
                for reason in f.get("reasons") or sorted(r for _, r in keys(f["clause"], f)):
                    row = entry["rows"].setdefault(
                        (f["clause"], reason),
                        {
                            "clause": f["clause"],
                            "reason": reason,
                            "harm": f["harm"],
                            "documented": bool(f.get("documented")),
                            "present": [],
                        },
                    )
                    row["present"].append(version)
    out = []
    for entry in configurations.values():
        rows = []
        for row in entry["rows"].values():
            row["cells"] = {v: _cell(v, row, entry) for v in sweep.releases}
            row["changes"] = _changes(row["cells"], sweep.releases)
            rows.append(row)
        entry["rows"] = sorted(rows, key=lambda r: (r["clause"], r["reason"]))
        out.append(entry)
    return {
        "format": FORMAT, "version": FORMAT_VERSION, "distribution": sweep.distribution,
        "releases": [{
            "version": v, "installed": sweep.installed.get(v, {}),
            **({"companions_as_of": sweep.as_of[v]} if v in sweep.as_of else {}),
            **({"not_installed": sweep.problems[v]} if v in sweep.problems else {}),
        } for v in sweep.releases],
        "configurations": out,
    }  # fmt: skip


def _declared(run: dict[str, Any]) -> dict[str, str]:
    """The releases the run's adapter declares for its path (``SUPPORTED``, or ``SUPPORTED_BY_PATH``
    for its factory); ``{}`` for a ``--target``."""
    from compaction_suite.adapters._common import supported

    return supported(importlib.import_module(run["adapter"]), run["compactor"]) if run.get("adapter") else {}


def driven(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Per configuration of a version table, what each release did with it (SPEC Part A, "The framework
    matrix and releases": every adapter runs at each release it declares, or says in one line that it
    cannot): the releases it *ran* at (whatever it found there), those its adapter *refused* with its one
    line (a contract error), and those where the environment or the run failed (*other*)."""
    releases = [r["version"] for r in data["releases"]]
    out = []
    for entry in data["configurations"]:
        status = entry["status"]
        out.append({
            "framework": entry["framework"], "compactor": entry["compactor"], "configuration": entry["configuration"],
            "declared": entry.get("declared", {}),
            "ran": [v for v in releases if status.get(v) == "ran"],
            "refused": {v: (entry.get("errors") or {}).get(v, "") for v in releases if status.get(v) == CONTRACT_ERROR},
            "other": {v: status.get(v, "not-installed") for v in releases if status.get(v) not in ("ran", CONTRACT_ERROR)},
        })  # fmt: skip
    return out


def driven_markdown(data: dict[str, Any]) -> list[str]:
    """`driven` as a table: one row per configuration."""
    lines = ["| configuration | declared | ran at | refused (one line) | other |", "|---|---|---|---|---|"]
    for d in driven(data):
        declared = ", ".join(f"{k} {v}" for k, v in d["declared"].items()) or "–"
        refused = "; ".join(f"{v}: {line}" for v, line in d["refused"].items()) or "none"
        other = "; ".join(f"{v}: {MARK.get(s, s)}" for v, s in d["other"].items()) or "none"
        name = f"{d['framework']} `{d['compactor']}` ({d['configuration']})"
        lines.append(f"| {name} | {declared} | {', '.join(d['ran']) or 'none'} | {refused} | {other} |".replace("\n", " "))
    return lines


def _cell(version: str, row: dict[str, Any], entry: dict[str, Any]) -> str:
    status = entry["status"].get(version)
    if status is None:
        return "not-installed"
    if status != "ran":
        return status
    return "present" if version in row["present"] else "absent"


def _changes(cells: dict[str, str], releases: list[str]) -> list[str]:
    """Where a finding appears or goes, between consecutive releases that both ran."""
    said, previous = [], None
    for version in releases:
        cell = cells[version]
        if cell not in ("present", "absent"):
            continue
        if previous is not None and previous[1] != cell:
            said.append(f"{'appears' if cell == 'present' else 'fixed'} in {version}")
        previous = (version, cell)
    return said


MARK = {"present": "✗", "absent": "✓", CONTRACT_ERROR: "unsupported", "not-installed": "not installed", "error": "!", "timeout": "⏱"}


def table_markdown(data: dict[str, Any]) -> str:
    """The version table for a person."""
    releases = [r["version"] for r in data["releases"]]
    lines = [
        f"# Findings across {data['distribution']} releases",
        "",
        "`compaction-suite matrix --versions` ran each configuration in its own environment per release. A row is one "
        "finding: its clause and its stable reason (the report's `reason_id`, else its reason text with positions, quoted values "
        "and ids normalised). ✗ found, ✓ not found (the configuration ran), *unsupported* the adapter refused the release "
        "(a contract error, not a finding).",
        "",
        "| release | installed | companions as of |",
        "|---|---|---|",
    ]
    for r in data["releases"]:
        said = r.get("not_installed") or ", ".join(f"{k} {v}" for k, v in r["installed"].items())
        lines.append(f"| {r['version']} | {said.replace('|', '/')} | {r.get('companions_as_of', 'today')} |")
    lines += [
        "",
        "## Releases driven",
        "",
        "Each configuration ran at a release, or its adapter refused it in one line (*unsupported*), or the environment or the run failed there.",
        "",
    ]
    lines += driven_markdown(data)
    for entry in data["configurations"]:
        lines += ["", f"## {entry['framework']} `{entry['compactor']}` ({entry['configuration']})", ""]
        lines += ["| clause | reason | harm | " + " | ".join(releases) + " | change |", "|---|---|---|" + "---|" * (len(releases) + 1)]
        for row in entry["rows"]:
            harm = row["harm"] + (" (documented)" if row["documented"] else "")
            cells = " | ".join(MARK.get(row["cells"][v], row["cells"][v]) for v in releases)
            lines.append(f"| {row['clause']} | {row['reason'].replace('|', '/')} | {harm} | {cells} | {'; '.join(row['changes'])} |")
        if not entry["rows"]:
            cells = " | ".join("✓" if entry["status"].get(v) == "ran" else MARK[entry["status"].get(v, "not-installed")] for v in releases)
            lines.append(f"| – | no finding | | {cells} | |")
        for version, error in (entry.get("errors") or {}).items():
            lines.append(f"\n{version}: {error}")
    return "\n".join(lines) + "\n"


def _module(job: Job) -> Any:
    return importlib.import_module(job.module) if job.module else None


def _distributions(job: Job) -> tuple[str, ...]:
    module = _module(job)
    return tuple(getattr(module, "DISTRIBUTIONS", ())) if module is not None else ()
