"""The ``bench`` commands' parameter types, and ``bench replay``'s options for issue 23: the bill per
provider, real summaries, more than one process.

`replay_options` adds the latter to the command; `run_arguments` turns their values into
`cost.run`'s keyword arguments, refusing a bad combination or a missing extra with `BadInput`
(exit 2, one line naming the option; SPEC CLI-1, CLI-2, CLI-6) before any trace is replayed.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from .contract import BadInput
from .extras import require

OPTIONS = (
    click.option("--provider", "providers", multiple=True, type=click.Choice(["openai", "anthropic"]),
                 help="Price the runs with this provider's prompt-cache rules (repeatable; default: both)."),
    click.option("--model", "models", multiple=True,
                 help="The agent's model to price with (repeatable, one per provider; e.g. gpt-5.1, claude-opus-4-5; "
                      "benchmarks/prices.py lists them). Default: gpt-4.1, claude-sonnet-4-5."),
    click.option("--summarizer-base-url", help="An OpenAI-compatible endpoint whose model summarizes instead of the test double."),
    click.option("--summarizer-model", help="The model to ask at --summarizer-base-url (or recorded in --cassettes)."),
    click.option("--cassettes", type=click.Path(file_okay=False, path_type=Path),
                 help="Record each trace's summarizer exchanges to DIR/<trace>.yaml, or replay them offline when the cassette exists (vcrpy: the record extra)."),
    click.option("--summarizer-model-file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                 help="The served model's weights file: its name, size and sha256 go into each cassette's meta record."),
    click.option("--summarizer-server-info", help="What serves the model (program, version, options), for each cassette's meta record."),
    click.option("--summarizer-timeout", type=click.FloatRange(min=1), default=600.0, show_default=True,
                 help="Seconds one summarizer call may take at --summarizer-base-url."),
    click.option("--summarizer-max-tokens", type=click.IntRange(min=1),
                 help="Bound every summary at N tokens (the summarization request's max_tokens; targets: Settings.summarizer_max_tokens). "
                      "A cassette replays with the bound it was recorded with."),
    click.option("--max-calls", type=click.IntRange(min=1), help="Replay only each trace's first N model calls."),
    click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
                 help="Replay the traces in N processes of this machine (same results as one)."),
    click.option("--scheduler", help="Replay the traces on the Dask cluster at this address, e.g. tcp://host:8786 (the distributed extra)."),
)  # fmt: skip


def task_tool(value: str) -> tuple[str, str, str]:
    """``--task-tool NAME:ITEMS_KEY:TITLE_KEY``."""
    parts = value.split(":")
    if len(parts) != 3 or not all(parts):
        raise click.BadParameter(f"expected NAME:ITEMS_KEY:TITLE_KEY, got {value!r}", param_hint="--task-tool")
    return parts[0], parts[1], parts[2]


def trace_kind(value: str) -> str:
    """``--trace-format``, checked against the kinds when used: the trace importers are not
    imported with the CLI (they bring the reference and openai before pytest starts, in ``check``)."""
    from compaction_suite.benchmarks.traces.kinds import KINDS

    if value not in ("auto", *KINDS):
        raise click.BadParameter(f"{value!r} is not one of auto, {', '.join(KINDS)}", param_hint="--trace-format")
    return value


class Sizes(click.ParamType):
    """``--sizes``: comma-separated integers, each at least ``minimum``, sorted and deduplicated (a
    type, not a callback, so `bench all`'s ``invoke`` converts the default too)."""

    name = "sizes"

    def __init__(self, minimum: int) -> None:
        self.minimum = minimum

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> tuple[int, ...]:
        from compaction_suite.benchmarks.speed import parse_sizes

        if isinstance(value, tuple):
            return value
        try:
            return parse_sizes(value, self.minimum)
        except ValueError as error:
            self.fail(str(error), param, ctx)


def replay_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the options above to ``command``."""
    for option in reversed(OPTIONS):
        command = option(command)
    return command


def run_arguments(values: dict[str, Any]) -> dict[str, Any]:
    """`cost.run`'s keyword arguments from the options' values; `BadInput` for a bad combination or a missing extra."""
    from compaction_suite.benchmarks.jobs import RealSummarizer
    from compaction_suite.benchmarks.prices import pricings

    try:
        chosen = pricings(tuple(values["providers"]), tuple(values["models"]))
    except ValueError as error:
        raise BadInput(f"--provider/--model: {error}") from error
    if len({p.provider for p in chosen}) != len(chosen) or len(values["models"]) > len(chosen):
        raise BadInput("--model: give at most one per provider")
    url, model, cassettes = values["summarizer_base_url"], values["summarizer_model"], values["cassettes"]
    if (url or cassettes) and not model:
        raise BadInput("--summarizer-base-url and --cassettes need --summarizer-model")
    if model and not (url or cassettes):
        raise BadInput("--summarizer-model needs --summarizer-base-url (or --cassettes to replay)")
    if values["scheduler"] and values["jobs"] > 1:
        raise BadInput("--jobs and --scheduler: give one, not both")
    if values["scheduler"]:
        _require("--scheduler", "distributed", "distributed")
    if cassettes:
        _require("--cassettes", "record", "vcr")
    summarizer = None
    if model:
        summarizer = RealSummarizer(
            url, model, cassettes, os.environ.get("OPENAI_API_KEY"), " ".join(["compaction-suite", *map(shlex.quote, sys.argv[1:])]),
            values["summarizer_model_file"], values["summarizer_server_info"], values["summarizer_timeout"],
        )  # fmt: skip
    return {"pricings": chosen, "summarizer": summarizer, "jobs": values["jobs"], "scheduler": values["scheduler"], "max_calls": values["max_calls"]}


def bad_input() -> tuple[type[Exception], ...]:
    """The benchmark's bad-input errors (a cassette to replay that is not there or was recorded with
    another bound, a scheduler not reached), imported when an ``except`` looks."""
    from compaction_suite.benchmarks.jobs import SchedulerUnreachable
    from compaction_suite.benchmarks.real_summaries import MissingCassette, OtherBound

    return (MissingCassette, OtherBound, SchedulerUnreachable)


def _require(option: str, extra: str, module: str) -> None:
    """`BadInput` naming ``option`` and the extra it needs when ``module`` cannot be imported."""
    try:
        require(extra, module)
    except BadInput as error:
        raise BadInput(f"{option}: {error.message}") from None
