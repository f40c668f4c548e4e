"""``bench replay``'s options for issue 23: the bill per provider, real summaries, more than one process.

`options` adds them to the command; `run_arguments` turns their values into `cost.run`'s keyword
arguments, refusing a bad combination with a `click.UsageError` (exit 2) that names it.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

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
    click.option("--max-calls", type=click.IntRange(min=1), help="Replay only each trace's first N model calls."),
    click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
                 help="Replay the traces in N processes of this machine (same results as one)."),
    click.option("--scheduler", help="Replay the traces on the Dask cluster at this address, e.g. tcp://host:8786 (the distributed extra)."),
)  # fmt: skip


def options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the options above to ``command``."""
    for option in reversed(OPTIONS):
        command = option(command)
    return command


def run_arguments(values: dict[str, Any]) -> dict[str, Any]:
    """`cost.run`'s keyword arguments from the options' values; `click.UsageError` for a bad combination."""
    from compaction_suite.benchmarks.jobs import RealSummarizer
    from compaction_suite.benchmarks.prices import pricings

    try:
        chosen = pricings(tuple(values["providers"]), tuple(values["models"]))
    except ValueError as error:
        raise click.UsageError(str(error)) from error
    if len({p.provider for p in chosen}) != len(chosen) or len(values["models"]) > len(chosen):
        raise click.UsageError("give at most one --model per provider")
    url, model, cassettes = values["summarizer_base_url"], values["summarizer_model"], values["cassettes"]
    if (url or cassettes) and not model:
        raise click.UsageError("--summarizer-base-url and --cassettes need --summarizer-model")
    if model and not (url or cassettes):
        raise click.UsageError("--summarizer-model needs --summarizer-base-url (or --cassettes to replay)")
    if values["scheduler"] and values["jobs"] > 1:
        raise click.UsageError("give --jobs or --scheduler, not both")
    if values["scheduler"]:
        _require_distributed()
    if cassettes:
        _require_vcr()
    summarizer = None
    if model:
        summarizer = RealSummarizer(
            url, model, cassettes, os.environ.get("OPENAI_API_KEY"), " ".join(["compaction-suite", *map(shlex.quote, sys.argv[1:])]),
            values["summarizer_model_file"], values["summarizer_server_info"], values["summarizer_timeout"],
        )  # fmt: skip
    return {"pricings": chosen, "summarizer": summarizer, "jobs": values["jobs"], "scheduler": values["scheduler"], "max_calls": values["max_calls"]}


def bad_input() -> tuple[type[Exception], ...]:
    """The benchmark's bad-input errors (a cassette to replay that is not there), imported when an ``except`` looks."""
    from compaction_suite.benchmarks.real_summaries import MissingCassette

    return (MissingCassette,)


def _require_distributed() -> None:
    try:
        import distributed  # noqa: F401
    except ImportError as error:
        raise click.UsageError("--scheduler needs Dask distributed: pip install 'compaction-suite[distributed]'") from error


def _require_vcr() -> None:
    try:
        import vcr  # noqa: F401
    except ImportError as error:
        raise click.UsageError("--cassettes needs vcrpy: pip install 'compaction-suite[record]'") from error
