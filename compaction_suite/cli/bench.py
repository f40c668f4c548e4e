"""``compaction-suite bench``: the benchmarks, with reports (JSON, Markdown, PNG) in ``--out``.

Attached to the ``compaction-suite`` group in ``compaction_suite/cli``; each subcommand imports
its benchmark only when it runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from . import replay_problems
from .bench_options import Sizes, bad_input, replay_options, run_arguments, task_tool, trace_kind
from .contract import INPUT_FILE, OUTPUT_DIR, BadInput, finish, path_option, use_paths
from .extras import require

EXTRA = ("pytest_benchmark", "matplotlib", "numpy")
"""The modules of the ``bench`` extra (pyproject.toml): timings, plots, the speed slopes."""

OUT = click.option(
    "--out", type=OUTPUT_DIR, required=True,
    help="Directory for the reports (required: nothing is written unasked; benchmarks/results is the committed baseline).",
)  # fmt: skip
QUIET = click.option("--quiet", is_flag=True, help="No progress bar.")


@click.group()
def bench() -> None:
    """Run the benchmarks (benchmarks/README.md says what each one measures)."""
    require("bench", *EXTRA)


@bench.command()
@click.argument("targets", nargs=-1)
@click.option("--trace", "traces", multiple=True, type=INPUT_FILE,
              help="A trace to replay: .jsonl (trace format), SWE-agent .traj, tau-bench .json, Codex rollout or Claude Code session .jsonl (repeatable; default: cassettes/traces/*.jsonl).")
@click.option("--trace-format", "trace_kind", default="auto", show_default=True, callback=lambda _c, _p, value: trace_kind(value),
              help="How to read every --trace: auto, trace, codex, claude-code, claude-code-chat, swe-agent or tau-bench "
                   "(benchmarks/traces/kinds.py). auto tells them apart by suffix and content (an error when unsure); codex and "
                   "claude-code keep the agent's own wire format (Responses items, Anthropic messages); claude-code-chat reads "
                   "a Claude Code session as chat-completions, thinking blocks dropped.")
@click.option("--with-reference", is_flag=True, help="With TARGETs: compare them with the reference strategies too.")
@click.option("--max-context-tokens", type=click.IntRange(min=1), help="Token threshold of every token trigger (targets get it as Settings.max_context_tokens).")
@click.option("--threshold-iterations", type=click.IntRange(min=1), help="Seed 000's iteration threshold (targets: Settings.threshold_iterations).")
@click.option("--keep-rounds", type=click.IntRange(min=0), help="Rounds kept verbatim by round-keeping strategies (targets: Settings.keep_recent_rounds); also a ceiling column.")
@click.option("--ceiling-rounds", type=click.IntRange(min=0), multiple=True, help="K of a ceiling column (repeatable; default 2, plus --keep-rounds).")
@click.option("--id-key", "id_keys", multiple=True, help="An extra entity-id key pattern, glob (repeatable; e.g. '*_number'). SPEC ENT-1.")
@click.option("--task-tool", "task_tools", multiple=True, callback=lambda c, p, v: [task_tool(x) for x in v],
              help="An extra task-list tool NAME:ITEMS_KEY:TITLE_KEY (repeatable; reportProgress, TodoWrite and update_plan are built in). SPEC ENT-2.")
@OUT
@QUIET
@path_option
@replay_options
def replay(
    targets: tuple[str, ...], traces: tuple[Path, ...], with_reference: bool, max_context_tokens: int | None,
    threshold_iterations: int | None, keep_rounds: int | None, ceiling_rounds: tuple[int, ...], id_keys: tuple[str, ...],
    task_tools: list[tuple[str, str, str]], trace_kind: str, out: Path, quiet: bool, paths: tuple[str, ...] = (), **issue_23: Any,
) -> None:
    """Replay traces through compactors: tokens, cost, what survives, against the ceilings (replay.md).

    TARGETS are compactors of the plug-in contract (module:attr, a registered name, cmd:...);
    without any, the reference strategies of benchmarks/lineup.py are compared. Summarizers
    talk to the suite's summarizer test double unless --summarizer-base-url is given. No compaction is always the baseline. A
    retention figure reads n/a when the traces carry nothing of that kind.

    Each trace replays in its own wire format; a TARGET of another format
    (capabilities["wire_format"]) gets each context through the faithful conversion only, and
    a compaction point with none is reported as not comparable (replay.md, "Wire formats").

    Every run is priced per provider (--provider, --model), with and without its prompt cache,
    against the token ceiling and the cache-aware ceiling; --summarizer-base-url and
    --summarizer-model summarize with a real model (recorded with --cassettes); --jobs and
    --scheduler spread the traces over processes or a Dask cluster.

    Exit status: 0, 1 when a compactor raised or broke a clause, 2 on a bad input.
    """
    from compaction_suite.benchmarks import cost
    from compaction_suite.benchmarks.lineup import Tuning, lineup
    from compaction_suite.benchmarks.traces.kinds import unreadable
    from compaction_suite.conformance.entities import CODING_AGENT_TASK_LISTS, id_rule
    from compaction_suite.conformance.target import probe
    from compaction_suite.reference import CODING_AGENT_TASK_LISTS as PRESETS
    from compaction_suite.reference import EntityRule, TaskListTool

    use_paths(paths)
    if not traces and not cost.shipped_traces():
        raise BadInput("no traces to replay: this install ships none; pass --trace FILE (.jsonl trace, SWE-agent .traj or tau-bench .json)")
    tuning = Tuning(
        max_context_tokens, threshold_iterations, keep_rounds, EntityRule(keys=id_keys),
        PRESETS + tuple(TaskListTool(*tool) for tool in task_tools),
    )
    changes = {"max_context_tokens": max_context_tokens, "threshold_iterations": threshold_iterations,
               "keep_recent_rounds": keep_rounds, "summarizer_max_tokens": issue_23["summarizer_max_tokens"]}
    extra = run_arguments(issue_23)
    compactors = lineup(tuning, extra["pricings"]) if with_reference or not targets else {}
    compactors |= {spec: target.factory for spec, target in probe(targets, **{k: v for k, v in changes.items() if v is not None}).items()}
    ceilings = sorted(set(ceiling_rounds or (2,)) | ({keep_rounds} if keep_rounds is not None else set()))
    try:
        results = cost.run(
            out, list(traces) or None, compactors, progress=not quiet,
            settings_changes={k: v for k, v in changes.items() if v is not None},
            id_rule=id_rule(keys=id_keys),
            task_lists={**CODING_AGENT_TASK_LISTS, **{name: (items, title) for name, items, title in task_tools}},
            ceiling_rounds=ceilings, trace_kind=trace_kind, **extra,
        )
    except (*unreadable(), *bad_input()) as error:  # a trace that cannot be read, a cassette that is not there
        raise BadInput(str(error)) from error
    click.echo(cost.headline(results))
    click.echo(cost.verdict(results))
    click.echo(cost.cost_section(results))
    click.echo(f"reports in {out}/: replay.json, replay.md, replay-context.png, replay-retention.png")
    finish(replay_problems.problems(results))


@bench.command()
@click.option("--docs-per-class", type=click.IntRange(min=10), default=200, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Corpus sampling seed.")
@OUT
@QUIET
def estimators(docs_per_class: int, seed: int, out: Path, quiet: bool) -> None:
    """Token estimators against exact o200k_base/cl100k_base counts, per content class (estimators.md)."""
    from compaction_suite.benchmarks import estimators as bench_estimators

    results = bench_estimators.run(out, docs_per_class=docs_per_class, progress=not quiet, seed=seed)
    click.echo(bench_estimators.markdown(results))


@bench.command()
@click.option("--sizes", default="100,1000,10000,100000", show_default=True, type=Sizes(100),
              help="History sizes in messages, comma-separated, each at least 100.")
@click.option("--max-time", type=click.FloatRange(min=0), default=1.0, show_default=True, help="pytest-benchmark's --benchmark-max-time (seconds).")
@click.option("--clock", type=click.Choice(["cpu", "wall"]), default="cpu", show_default=True,
              help="Time in the process's CPU time (waiting for a core of a shared machine left out) or the wall clock.")
@OUT
@QUIET
def speed(sizes: tuple[int, ...], max_time: float, clock: str, out: Path, quiet: bool) -> None:
    """pytest-benchmark timings of the reference's non-model operations by history size (speed.md)."""
    from compaction_suite.benchmarks import speed as bench_speed

    bench_speed.run(out, sizes, progress=not quiet, max_time=max_time, clock=clock)
    click.echo((out / "speed.md").read_text(encoding="utf-8"))


@bench.command()
@OUT
def battery(out: Path) -> None:
    """How long `compaction-suite check` takes against the reference, full and --fast (battery.md)."""
    from compaction_suite.benchmarks import battery as bench_battery

    bench_battery.run(out)
    click.echo((out / "battery.md").read_text(encoding="utf-8"))


@bench.command()
@click.option("--calls", type=click.IntRange(min=1), default=30, show_default=True, help="Model calls of each shipped trace replayed.")
@click.option("--sizes", default="1,2,4,8", show_default=True, type=Sizes(1), help="Corpus sizes (traces), comma-separated.")
@click.option("--no-dask", is_flag=True, help="Skip the Dask LocalCluster row even when the distributed extra is installed.")
@OUT
def throughput(calls: int, sizes: tuple[int, ...], no_dask: bool, out: Path) -> None:
    """Model calls replayed per second, at 1 and 2 workers, as the corpus grows (throughput.md)."""
    from compaction_suite.benchmarks import throughput as bench_throughput

    bench_throughput.run(out, calls=calls, sizes=sizes, dask=not no_dask, progress=click.echo)
    click.echo((out / "throughput.md").read_text(encoding="utf-8"))


@bench.command("all")
@OUT
@QUIET
@click.pass_context
def all_(context: click.Context, out: Path, quiet: bool) -> None:
    """Every benchmark with its defaults (--out benchmarks/results: the committed baseline)."""
    context.invoke(estimators, out=out, quiet=quiet)
    context.invoke(speed, out=out, quiet=quiet)
    context.invoke(battery, out=out)
    context.invoke(replay, out=out, quiet=quiet)
    context.invoke(throughput, out=out)
