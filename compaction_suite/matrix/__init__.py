"""The framework matrix as a library: the conformance suite over every installed framework adapter
(`jobs`), the document and reproducers it writes (`document`, `render`), what it counts
(`verdicts`, `findings`), and the version sweep across framework releases, each in its own
environment (`sweep`, `environments`). ``compaction-suite matrix`` (``cli/matrix.py``) only parses
options and calls `check_all` or `sweep_versions`. SPEC Part A, "The framework matrix".
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from .document import build
from .environments import Builder, cache_dir
from .jobs import Job, plan, run_job
from .render import markdown, write
from .sweep import parse, run, table, table_markdown

__all__ = ["Builder", "Job", "MatrixError", "build", "cache_dir", "check_all", "earlier", "markdown", "parse", "plan", "run_job", "sweep_versions"]


class MatrixError(ValueError):
    """A matrix the command cannot update (a bad input: exit 2)."""


def check_all(
    todo: list[Job], frameworks: list[dict[str, Any]], out: Path, *,
    fast: bool, max_examples: int | None, timeout: float, jobs: int = 1, clauses: tuple[str, ...] = (), echo: Callable[[str], None] = print,
    update: dict[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Run every job (``jobs`` at once) and write ``out/matrix.json``, ``out/matrix.md`` and the reproducers,
    again after each job with ``"complete": false`` until the last ends.
    With ``update`` (the matrix already in ``out``, `earlier`), the runs of ``todo`` replace that
    matrix's runs of the same configurations and its other runs are kept with their reproducers
    (SPEC Part A, "The framework matrix": re-checking some configurations)."""
    started = time.monotonic()
    # Scheduling only: compactors that call a summarizer meet every fault (hangs included), the
    # longest checks, so they start first; the results keep the adapters' order.
    order = sorted(range(len(todo)), key=lambda i: "summar" not in todo[i].factory)

    def one(job: Job) -> dict[str, Any]:
        echo(f"checking {job.framework} {job.factory} ({job.label}) ...")
        r = run_job(job, fast, max_examples, timeout, clauses=clauses)
        echo(f"  {job.framework} {job.factory} ({job.label}): {r['status']} in {r['seconds']:.0f}s")
        return r

    def written(done: dict[int, dict[str, Any]]) -> dict[str, Any]:
        results = [done[i] for i in range(len(todo)) if i in done]
        data = build(results, frameworks, fast, max_examples, out, time.monotonic() - started, kept=update["runs"] if update else None)
        if update:
            data["seconds"] = round(update["seconds"] + data["seconds"], 1)
            data["updates"] = [*update.get("updates", []), {"configurations": len(results), "seconds": round(time.monotonic() - started, 1)}]
            data["frameworks"] = _merged(update["frameworks"], frameworks)
        data["complete"] = len(results) == len(todo)
        write(out, data)
        return data

    done: dict[int, dict[str, Any]] = {}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        started_jobs = {pool.submit(one, todo[i]): i for i in order}
        for future in as_completed(started_jobs):
            done[started_jobs[future]] = future.result()
            if len(done) < len(todo):  # SPEC "The framework matrix and releases", written as it goes
                written(done)
    return written(done)


def earlier(out: Path, fast: bool, max_examples: int | None) -> dict[str, Any]:
    """The matrix already in ``out`` that an update re-checks some configurations of: it must be
    this format's and have been checked with as many examples per clause."""
    from .document import FORMAT, READS

    path = out / "matrix.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise MatrixError(f"--update: no matrix to update in {out} ({path.name}: {type(error).__name__})") from error
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") not in READS:
        raise MatrixError(f"--update: {path} is not a {FORMAT} version {' or '.join(map(str, READS))} document")
    examples = max_examples or (10 if fast else 50)
    if data.get("examples_per_clause") != examples:
        raise MatrixError(f"--update: {path} was checked with {data.get('examples_per_clause')} examples per clause, this run would use {examples}")
    return data


def _merged(before: list[dict[str, Any]], now: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The frameworks of both, this run's entry winning for a framework in both."""
    names = {f.get("framework") for f in now}
    return [f for f in before if f.get("framework") not in names] + now


def sweep_versions(
    todo: list[Job], spec: str, builder: Builder, out: Path, *,
    fast: bool, max_examples: int | None, timeout: float, clauses: tuple[str, ...] = (), echo: Callable[[str], None] = print,
) -> dict[str, Any]:  # fmt: skip
    """The version sweep ``spec`` (``DIST==V1,V2``) over the jobs that drive that distribution; writes
    ``out/versions.{json,md}`` and each release's matrix under ``out/releases``."""
    from .sweep import SweepError, applies

    distribution, releases = parse(spec)
    selected = [job for job in todo if applies(job, distribution)]
    if not selected:
        raise SweepError(f"no selected configuration drives {distribution} (adapters name it in DISTRIBUTIONS or SUPPORTED; --target always applies)")
    data = table(run(selected, distribution, releases, builder, out, fast=fast, max_examples=max_examples, timeout=timeout, clauses=clauses, echo=echo))
    write(out, data, "versions", table_markdown)
    return data
