"""``compaction-suite traces``: record a trace whose tools really run, or import public agent traces.

Attached to the ``compaction-suite`` group in ``compaction_suite/cli``; the trace format is
``benchmarks/traces/FORMAT.md``.
"""

from __future__ import annotations

from pathlib import Path

import click

from .contract import INPUT_FILE, OUTPUT_DIR, OUTPUT_FILE, BadInput

MIN_ROUNDS = 20


@click.group()
def traces() -> None:
    """Make traces for `compaction-suite bench replay` (benchmarks/traces/FORMAT.md)."""


@traces.command("record")
@click.option("--seed", type=int, required=True, help="The scripted planner's seed.")
@click.option("--rounds", type=click.IntRange(min=MIN_ROUNDS), required=True, help=f"Rounds to record (at least {MIN_ROUNDS}).")
@click.option("--out", type=OUTPUT_FILE, required=True, help="The .jsonl trace to write.")
@click.option("--created", help="The header's 'created' value (default: today's UTC date).")
@click.option("--id", "trace_id", help="Trace id (default: stdlib-explorer-seed<N>).")
def record(seed: int, rounds: int, out: Path, created: str | None, trace_id: str | None) -> None:
    """Record an episode of a scripted, seeded planner whose tools really run on this Python's standard library."""
    from compaction_suite.benchmarks.traces.record import record_trace

    header = record_trace(out, seed, rounds, created=created, trace_id=trace_id)
    click.echo(f"{out}: {header['notes']}")


@traces.command("import")
@click.argument("kind", type=click.Choice(("tau-bench", "swe-agent", "claude-code")))
@click.argument("files", nargs=-1, required=True, type=INPUT_FILE)
@click.option("--out-dir", type=OUTPUT_DIR, required=True, help="Directory for the .jsonl traces.")
def import_(kind: str, files: tuple[Path, ...], out_dir: Path) -> None:
    """Convert tau-bench result files, SWE-agent .traj files or Claude Code session logs into the trace format, one trace per episode.

    Every file is read before anything is written: one that cannot be read is a bad input (exit 2).
    """
    from compaction_suite.benchmarks.traces.format import write_trace
    from compaction_suite.benchmarks.traces.importers import import_file
    from compaction_suite.benchmarks.traces.kinds import unreadable

    episodes = []
    for file in files:
        try:
            found = import_file(kind, file)
        except unreadable() as error:
            raise BadInput(str(error) if str(error).startswith(str(file)) else f"{file}: {error}") from error
        if not any(messages for _, messages in found):
            raise BadInput(f"{file}: no messages to import (not a {kind} file?)")
        episodes += found
    out_dir.mkdir(parents=True, exist_ok=True)
    for header, messages in episodes:
        target = out_dir / (header["id"].replace(":", "__") + ".jsonl")
        write_trace(target, header, messages)
        click.echo(f"{target} ({len(messages)} messages)")
