"""The configurations the matrix checks, and one ``compaction-suite check`` run of each.

A job is an adapter factory with options (an adapter module's ``CONFIGURATIONS``, plus its
``OTHER_SHAPES``: shapes its framework never produces, reported apart and never counted) or a
``--target`` with its defaults. Each runs ``compaction-suite check TARGET --report`` in its own
process (any interpreter: a version sweep gives each release's), options in
``$COMPACTION_ADAPTER_OPTIONS``. A run that exits 2 broke the plug-in contract before any clause ran
(an unsupported framework release among others): its status is ``contract-error`` with the one line
that says why, never a framework finding.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from compaction_suite.adapters._common import OPTIONS_ENV
from compaction_suite.conformance.runner import run_check
from compaction_suite.extras import install_hint

from . import verdicts

CONTRACT_ERROR = "contract-error"


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
    module: str | None = None
    """The adapter module (None for a ``--target``)."""

    @property
    def label(self) -> str:
        return ", ".join(f"{k}={json.dumps(v)}" for k, v in self.options.items()) or "defaults"

    @property
    def slug(self) -> str:
        parts = [slug(self.framework), slug(self.factory), slug(self.label)]
        return "--".join(p for p in parts if p)

    def command(self) -> str:
        env = f"{OPTIONS_ENV}={shlex.quote(json.dumps(self.options))} " if self.options else ""
        return f"{env}compaction-suite check {shlex.quote(self.target)}"

    def matches(self, only: tuple[str, ...]) -> bool:
        """Whether ``--only`` selects this job (every word of one ``--only`` text in its description)."""
        described = f"{self.framework} {self.module or ''} {self.target} {self.factory} {self.label}".lower()
        return not only or any(all(word in described for word in o.lower().split()) for o in only)


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._=-]+", "-", text.replace('"', "")).strip("-").lower()[:80]


def plan(only: tuple[str, ...], extra_targets: tuple[str, ...], with_adapters: bool, *, check_releases: bool = True) -> tuple[list[Job], list[dict[str, Any]]]:
    """The jobs to run, and every framework with what the matrix knows of it. A framework installed
    at a release its adapter does not support (``SUPPORTED``) is listed with why and not run
    (``check_releases=False`` leaves that to each run: a version sweep plans here and runs elsewhere)."""
    jobs: list[Job] = []
    frameworks: list[dict[str, Any]] = []
    if with_adapters:
        from compaction_suite.adapters import FRAMEWORKS
        from compaction_suite.adapters._common import release_problem

        for fw in FRAMEWORKS:
            module = fw.adapter()
            entry: dict[str, Any] = {"framework": fw.name, "adapter": fw.module, "extra": fw.extra, "installed": fw.installed()}
            entry["claims"] = dict(getattr(module, "WHY", {}))
            entry["supported"] = dict(getattr(module, "SUPPORTED", {}))
            if getattr(module, "NOT_ADAPTED", None):
                entry["not_adapted"] = module.NOT_ADAPTED
            if check_releases:
                unavailable = getattr(module, "UNAVAILABLE", None)
                if not entry["installed"]:
                    entry["not_run"] = f"not installed: {install_hint(fw.extra)}"
                elif unavailable:
                    entry["not_run"] = unavailable
                elif problem := release_problem(module):
                    entry["not_run"] = problem
                entry["versions"] = fw.versions() if entry["installed"] else {}
            frameworks.append(entry)
            if "not_run" in entry:
                continue
            configurations = [(f, o, module.WHY.get(f, ""), True) for f, o in module.CONFIGURATIONS]
            configurations += [(f, o, why, False) for f, o, why in getattr(module, "OTHER_SHAPES", [])]
            for factory, opts, why, native in configurations:
                job = Job(fw.name, entry.get("versions", {}), factory, f"{fw.module}:{factory}", dict(opts), why, native, fw.module)
                if job.matches(only):
                    jobs.append(job)
    for target in extra_targets:
        jobs.append(Job(target, _suite_version(), target.rsplit(":", 1)[-1], target, {}, "as registered"))
    return jobs, frameworks


def _suite_version() -> dict[str, str]:
    try:
        return {"compaction-suite": metadata.version("compaction-suite")}
    except metadata.PackageNotFoundError:
        return {}


def run_job(
    job: Job, fast: bool, max_examples: int | None, timeout: float, *,
    python: str | Path | None = None, versions: dict[str, str] | None = None, clauses: tuple[str, ...] = (),
) -> dict[str, Any]:  # fmt: skip
    """Run ``compaction-suite check`` for one job in a subprocess (``python``: the interpreter, by
    default this one; ``clauses``: only those); its report, summarized, each structural clause re-verified."""
    args = ["--fast"] if fast else []
    args += [f"--max-examples={max_examples}"] if max_examples else []
    args += [f"--clause={c}" for c in clauses]
    env = dict(os.environ)
    env.pop(OPTIONS_ENV, None)
    if job.options:
        env[OPTIONS_ENV] = json.dumps(job.options)
    if python is not None:  # another environment's compaction-suite, not a checkout in the working directory (``-m`` puts it first)
        env["PYTHONSAFEPATH"] = "1"
    result = described(job, versions if versions is not None else job.versions, args)
    done = run_check(job.target, args, env=env, timeout=timeout, python=python)
    result["exit_code"] = done.exit_code
    result["seconds"] = round(done.seconds, 1)
    if done.exit_code is None:
        result["status"] = "timeout"
    if done.report is not None:
        result["profiles_claimed"] = done.report["profiles_claimed"]
        result["capabilities"] = done.report.get("capabilities")
        result["passed"] = done.report["passed"]
        result["clauses"] = verdicts.reverify(done.report["clauses"])
        if any(c.get("reverified_from") for c in result["clauses"].values()):
            result["passed"] = False
        result.setdefault("status", "conforms" if result["passed"] else "fails")
    else:
        result["passed"] = False
        result["clauses"] = {}
        if done.exit_code == 2:
            result["status"] = CONTRACT_ERROR
            result["error"] = contract_line(done.output)
        else:
            result.setdefault("status", "error")
            result["error"] = done.tail()
    return result


def described(job: Job, versions: dict[str, str], args: list[str]) -> dict[str, Any]:
    """What a matrix result says of the job it ran (or refused): its configuration, the releases it met and
    the command that checks it (``args``: the options it ran with)."""
    return {
        "framework": job.framework,
        "versions": versions,
        "compactor": job.factory,
        "target": job.target,
        "options": job.options,
        "configuration": job.label,
        "command": " ".join([job.command(), *args]),
        "why": job.why,
        "native": job.native,
        "adapter": job.module,
    }


def contract_line(output: str) -> str:
    """The one line a run that exited 2 gave (pytest's ``ERROR: ...`` usage line), else its last line."""
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    for line in lines:
        if line.startswith("ERROR: "):
            return line.removeprefix("ERROR: ")
    return lines[-1] if lines else "(no output)"
