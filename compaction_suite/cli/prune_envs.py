"""``compaction-suite prune-envs``: remove the sweep's environments no run has used for a while
(`compaction_suite.matrix.pruning`; SPEC Part C, "Version sweeps", Decision on pruning)."""

from __future__ import annotations

import click

from .contract import BadInput

DAY = 86400.0


@click.command("prune-envs")
@click.option(
    "--unused-for",
    "days",
    required=True,
    type=click.FloatRange(min=0),
    metavar="DAYS",
    help="Remove the environments no run has used for DAYS days (0: every one not in use).",
)
@click.option(
    "--cache-dir", type=click.Path(file_okay=False), help="The sweep's environment cache [default: $XDG_CACHE_HOME/compaction-suite/envs]."
)
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
def prune_envs(days: float, cache_dir: str | None, dry_run: bool) -> None:
    """Remove the version sweep's environments (matrix --versions, --bugs) unused for DAYS days.

    Only what a sweep made is removed: virtual environments in the cache folder and wheel folders
    left by a run that was stopped. An environment another run is using is kept. Exit status 0, 2
    when --cache-dir is not a folder.
    """
    from compaction_suite.matrix.environments import cache_dir as default_cache
    from compaction_suite.matrix.pruning import prune

    root = default_cache(cache_dir)
    if not root.is_dir():
        if cache_dir:
            raise BadInput(f"--cache-dir {cache_dir}: no such folder")  # a file there is refused by click
        click.echo(f"no environments: {root} does not exist")
        return
    done = prune(root, days * DAY, dry_run)
    verb = "would remove" if dry_run else "removed"
    busy = f", {len(done.in_use)} of them in use by another run" if done.in_use else ""
    click.echo(
        f"{verb} {len(done.removed)} folders unused for {days:g} days ({_size(done.freed)}); kept {done.kept + len(done.in_use)}{busy}; in {root}"
    )


def _size(n: int) -> str:
    """``n`` bytes in GB, MB or KB, whichever is the largest that reads as 1 or more."""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"
