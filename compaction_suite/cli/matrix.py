"""``compaction-suite matrix``: options only; the matrix itself is `compaction_suite.matrix`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from compaction_suite import matrix as library
from compaction_suite.conformance.clauses import unknown_ids
from compaction_suite.conformance.target import probe
from compaction_suite.matrix import verdicts
from compaction_suite.matrix.sweep import SweepError


@click.command()
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Directory (created if missing) for matrix.md, matrix.json and reproducers/ (with --versions: versions.md, versions.json, releases/).")
@click.option("--fast", is_flag=True, help="10 Hypothesis examples per clause instead of 50 (check --fast).")
@click.option("--max-examples", type=click.IntRange(min=1), help="Hypothesis examples per clause (overrides --fast).")
@click.option("--only", multiple=True, metavar="TEXT", help="Run only configurations whose framework/adapter/compactor/options contain every word of TEXT (repeatable).")
@click.option("--target", "targets", multiple=True, metavar="TARGET", help="Also check TARGET (module:attr, entry point, cmd:...) with its defaults (repeatable).")
@click.option("--adapters/--no-adapters", default=True, show_default=True, help="Run the framework adapters (--no-adapters: only --target).")
@click.option("--clause", "clause_ids", multiple=True, metavar="ID", help="Check only this clause in each configuration (repeatable; check --clause).")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True, help="Configurations checked at once.")
@click.option("--timeout", type=click.FloatRange(min=1), default=1800, show_default=True, help="Seconds allowed per configuration.")
@click.option("--versions", "versions_spec", metavar="DIST==V1,V2,...", help="Sweep: run the selected configurations at each release of DIST, each in its own environment.")
@click.option("--cache-dir", type=click.Path(file_okay=False), help="Where the sweep keeps its environments [default: $XDG_CACHE_HOME/compaction-suite/envs].")
@click.option("--find-links", multiple=True, metavar="DIR|URL", help="Sweep: also look for releases here (passed to the installer).")
@click.option("--no-index", is_flag=True, help="Sweep: install from --find-links only.")
@click.option("--share-suite", is_flag=True, help="Sweep: install only the framework release; the environment imports compaction-suite and its dependencies from this interpreter (offline).")
@click.option("--companions", type=click.Choice(["release", "today"]), default="release", show_default=True, help="Sweep: install what each release needs beside it as the index held it a day after the release (release), or as it is now (today).")
@click.option("--update", is_flag=True, help="Re-check the selected configurations (--only) into the matrix already in OUT: their rows and reproducers are replaced, every other row is kept.")
@click.option("--bugs", "bugs_file", type=click.Path(dir_okay=False), help="Run the reported bugs of this list (adapters/reported_bugs.json) at their reported and fixing releases; writes bugs.md, bugs.json (--only selects bugs).")
def matrix(out_dir, fast, max_examples, only, targets, adapters, clause_ids, jobs, timeout, versions_spec, cache_dir, find_links, no_index, share_suite, companions, update, bugs_file) -> None:
    """Check every installed framework adapter over its configurations; write a matrix.

    Writes OUT/matrix.json, OUT/matrix.md and OUT/reproducers/*.json (the smallest failing
    history of each failure). With --versions, runs the configurations across framework releases
    and writes the version table OUT/versions.md (and versions.json, releases/). Exit status 0
    when no configuration has a reachable MUST finding (documented ones apart), 1 when one has
    (with --versions: at any release; with --bugs: a bug not caught at its reported release or
    still found at its fixing release), 2 on a bad input or when nothing could be run.
    """
    out = Path(out_dir)
    if unknown := unknown_ids(clause_ids):
        raise click.UsageError(f"--clause: {unknown}")
    earlier = _earlier(out, fast, max_examples, bool(versions_spec or bugs_file)) if update else None
    if bugs_file:
        run_bugs(Path(bugs_file), out, tuple(only), fast, max_examples, timeout, _builder(cache_dir, find_links, no_index, share_suite), bool(versions_spec or targets or clause_ids))
    if not versions_spec:  # a sweep's targets live in the environments it builds
        probe(targets)  # a --target that cannot be imported or built is a bad input, before any check runs (SPEC Part C)
    todo, frameworks = library.plan(tuple(only), tuple(targets), adapters, check_releases=versions_spec is None)
    if not todo:
        raise click.UsageError("nothing to run: no installed adapter matched and no --target given")
    if versions_spec:
        builder = _builder(cache_dir, find_links, no_index, share_suite, dated=companions == "release")
        try:
            data = library.sweep_versions(todo, versions_spec, builder, out, fast=fast, max_examples=max_examples, timeout=timeout, clauses=clause_ids, echo=lambda s: click.echo(s, err=True))
        except SweepError as error:
            raise click.UsageError(str(error)) from error
        sys.exit(_sweep_summary(data, out))
    data = library.check_all(todo, frameworks, out, fast=fast, max_examples=max_examples, timeout=timeout, jobs=jobs, clauses=clause_ids, echo=lambda s: click.echo(s, err=True), update=earlier)
    counted = [r for r in data["runs"] if r.get("native", True)]
    hit = sum(bool(verdicts.findings(r)) for r in counted)
    documented = sum(len(verdicts.findings(r, documented=True)) for r in counted)
    click.echo(
        f"{len(counted)} configurations ({len(data['runs']) - len(counted)} other shapes not counted), {hit} with a reachable MUST finding"
        f" ({documented} documented findings counted apart); {data['seconds']:.0f}s; written to {out}/matrix.md and {out}/matrix.json"
    )
    sys.exit(1 if hit else 0)


def _sweep_summary(data: dict, out: Path) -> int:
    """Say the sweep in one line and return its exit status (SPEC Part C, "The command contract";
    "Version sweeps" Decision): 2 when no release could be installed (nothing ran), 1 when a
    release could not be installed or a finding is present at some release, else 0. A release
    not installed is named in the line, never left to the table alone."""
    missing = [r["version"] for r in data["releases"] if r.get("not_installed")]
    if len(missing) == len(data["releases"]):
        raise click.UsageError(f"--versions: no release of {data['distribution']} could be installed ({', '.join(missing)}; see {out}/releases/*/install.log)")
    changed = sum(bool(row["changes"]) for c in data["configurations"] for row in c["rows"])
    line = f"{len(data['configurations'])} configurations at {len(data['releases'])} releases of {data['distribution']}, {changed} findings changing between releases"
    if missing:
        line += f"; not installed at {', '.join(missing)} (see {out}/releases/*/install.log)"
    click.echo(f"{line}; written to {out}/versions.md and {out}/versions.json")
    found = any(row["present"] and not row["documented"] for c in data["configurations"] for row in c["rows"])
    return 1 if found or missing else 0


def _earlier(out: Path, fast: bool, max_examples: int | None, other_mode: bool) -> dict:
    """``--update``: the matrix in ``out`` to re-check configurations of (a bad input when there is none)."""
    if other_mode:
        raise click.UsageError("--update re-checks configurations of a matrix: not with --versions or --bugs")
    try:
        return library.earlier(out, fast, max_examples)
    except library.MatrixError as error:
        raise click.UsageError(str(error)) from error


def _builder(cache_dir: str | None, find_links: tuple[str, ...], no_index: bool, share_suite: bool, dated: bool = False) -> library.Builder:
    """The environment builder; ``dated`` (a sweep's ``--companions release``) resolves each release's
    companions as of its date, while ``--bugs`` entries pin theirs."""
    pip_args = [arg for link in find_links for arg in ("--find-links", link)] + (["--no-index"] if no_index else [])
    return library.Builder(library.cache_dir(cache_dir), pip_args, share_suite, dated=dated)


def run_bugs(path: Path, out: Path, only: tuple[str, ...], fast: bool, max_examples: int | None, timeout: float, builder: library.Builder, other_mode: bool) -> None:
    """``--bugs``: each reported bug at its releases (`compaction_suite.matrix.bugs`); exits 1 when one
    is not caught where reported or still found where fixed, 2 on a list that cannot be read."""
    from compaction_suite.matrix import bugs

    if other_mode:
        raise click.UsageError("--bugs runs each bug's own target, releases and clause: not with --versions, --target or --clause")
    try:
        listed = bugs.load(path, only)
    except bugs.BugsError as error:
        raise click.UsageError(str(error)) from error
    if not listed.bugs:
        raise click.UsageError(f"--bugs {path}: no entry with a run{' matched --only' if only else ''}")
    data = bugs.run(listed, builder, out, fast=fast, max_examples=max_examples, timeout=timeout, echo=lambda s: click.echo(s, err=True))
    r = data["recall"]
    click.echo(
        f"{r['caught']} of {r['attempted']} reported bugs caught at their reported release ({r['recall']}"
        f"{f'; {unrun} did not run there: not installed, refused or failed, see {out}/bugs.md' if (unrun := r['attempted'] - r['ran']) else ''}); "
        f"{r['lost_at_fix']} of {r['judged_at_fix']} lost at the fixing release ({r['lost_share']}); written to {out}/bugs.md and {out}/bugs.json"
    )
    sys.exit(1 if bugs.problems(data) else 0)


if __name__ == "__main__":  # pragma: no cover
    matrix()
