"""The ``compaction-suite`` command: the one place that depends on every part of the project.

Nothing imports this package; each subcommand imports what it runs only when it runs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib import resources
from typing import Any

import click
import pytest

from compaction_suite.conformance.options import OPTIONS, Option
from compaction_suite.conformance.options import pytest_args as options_to_pytest

EXIT: dict[int, int] = {pytest.ExitCode.OK: 0, pytest.ExitCode.TESTS_FAILED: 1, pytest.ExitCode.USAGE_ERROR: 2, pytest.ExitCode.NO_TESTS_COLLECTED: 2}


@click.group()
@click.version_option(package_name="compaction-suite")
def main() -> None:
    """Conformance and benchmark suite for LLM-agent context compaction."""


def _check_options(command: Callable[..., None]) -> Callable[..., None]:
    """The options of `compaction_suite.conformance.options`, as click options of ``check``."""
    for option in reversed(OPTIONS):
        command = click.option(f"--{option.name}", option.dest, help=option.help[:1].upper() + option.help[1:] + ".", **_click(option))(command)
    return command


def _click(option: Option) -> dict[str, Any]:
    if option.kind == "flag":
        return {"is_flag": True}
    kind = {
        "int": click.IntRange(min=1), "path": click.Path(exists=True, dir_okay=False),
        "dir": click.Path(exists=True, file_okay=False), "choice": click.Choice(option.choices),
    }.get(option.kind, click.STRING)
    return {"type": kind, "multiple": option.multiple, "metavar": option.metavar}


@main.command(context_settings={"ignore_unknown_options": True})
@click.argument("target", required=False)
@_check_options
@click.option("-v", "--verbose", count=True, help="Show each test (repeat for more).")
@click.argument("pytest_args", nargs=-1, type=click.UNPROCESSED)
def check(target: str | None, verbose: int, pytest_args: tuple[str, ...], **values: Any) -> None:
    """Verify the compactor TARGET clause by clause (SPEC.md Part A).

    TARGET is module:attr (a factory taking compaction_suite.conformance.Settings), a name
    registered in the entry-point group compaction_suite.compactors (e.g. "reference"), or
    cmd:<command> for a compactor in another language. Default: $COMPACTION_COMPACTOR.

    A package that is not installed is found with --path DIR. Arguments after "--" go to
    pytest as they are (e.g. -- --junitxml=results.xml).

    Exit status: 0 when every MUST clause of the claimed profiles holds, 1 when one
    fails, 2 on a usage error or when the target breaks the plug-in contract at start.
    """
    given = {o.name: values[o.dest] for o in OPTIONS}
    sys.exit(EXIT.get(pytest.main(check_args(target, given, verbose, pytest_args)), 3))


def check_args(target: str | None, given: dict[str, Any], verbose: int = 0, extra: tuple[str, ...] = ()) -> list[str]:
    """The pytest command line that ``check`` runs."""
    ini = resources.files("compaction_suite.conformance").joinpath("pytest.ini")
    args = ["--pyargs", "compaction_suite.conformance.tests", "-c", str(ini)]
    args += ["--compactor", target] if target else []
    args += options_to_pytest(given)
    args += ["-" + "v" * verbose] if verbose else []
    return args + list(extra)


@main.command()
@click.argument("target", required=False)
@click.option("--base-url", help="An OpenAI-compatible endpoint, e.g. http://127.0.0.1:8765/v1 or https://api.openai.com/v1.")
@click.option("--azure-endpoint", help="An Azure OpenAI resource, e.g. https://NAME.openai.azure.com (with --api-version).")
@click.option("--api-version", help="Azure OpenAI api-version.")
@click.option("--model", required=True, help="The summary model (Azure: the deployment name).")
@click.option("--history", "histories", multiple=True, type=click.Path(exists=True, dir_okay=False), help="History JSON to compact (repeatable; default: the three in cassettes/histories/).")
@click.option("--out", default="cassettes/provider", show_default=True, type=click.Path(file_okay=False), help="Cassettes go to OUT/<target>/<history>.yaml.")
@click.option("--name", help="Directory name for the target under OUT (default: derived from TARGET).")
@click.option("--iteration", type=click.IntRange(min=1), help="Iteration passed to compact (default: Settings().threshold_iterations).")
@click.option("--timeout", default=600.0, show_default=True, type=float, help="Seconds a summarizer call may take.")
@click.option("--model-file", type=click.Path(exists=True, dir_okay=False), help="The local model file, hashed into the meta file.")
@click.option("--server-info", help='What serves the model, for the meta file (e.g. "llama-cpp-python 0.3.36").')
def record(target, base_url, azure_endpoint, api_version, model, histories, out, name, iteration, timeout, model_file, server_info) -> None:
    """Record TARGET's summarizer calls on each history as vcrpy cassettes (cassettes/README.md).

    The key comes from $OPENAI_API_KEY (Azure: $AZURE_OPENAI_API_KEY), never from the command line.
    Exit status: 0 when every history was compacted and the endpoint accepted the result, 1 otherwise, 2 on a usage error.
    """
    import shlex

    from compaction_suite.conformance.target import TargetError
    from compaction_suite.recording import Endpoint, RecordingError, default_histories
    from compaction_suite.recording import record as record_histories

    try:
        endpoint = Endpoint.from_env(model, base_url=base_url, azure_endpoint=azure_endpoint, api_version=api_version, timeout=timeout)
        context, argv = click.get_current_context(), ["compaction-suite", "record", *([target] if target else [])]
        for param in context.command.params:  # the command as given, for the meta files
            value = context.params[param.name]
            if isinstance(param, click.Option) and value not in (None, (), param.default):
                argv += [arg for v in (value if isinstance(value, tuple) else (value,)) for arg in (param.opts[0], str(v))]
        command = shlex.join(argv)
        recordings = record_histories(
            target, histories or default_histories(), out, endpoint, iteration=iteration, name=name,
            model_file=model_file, server_info=server_info, command=command,
        )
    except (RecordingError, TargetError) as error:
        raise click.UsageError(str(error)) from error
    for recording in recordings:
        tokens = recording.meta.get("verified_prompt_tokens")
        click.echo(f"{recording.cassette}: {recording.problem or f'compacted; verified {tokens} prompt tokens'}")
    sys.exit(1 if any(r.problem for r in recordings) else 0)


def _attach() -> None:
    """Commands that live in their own modules (each imports its heavy parts only when run)."""
    from .bench import bench
    from .matrix import matrix
    from .record_errors import record_errors
    from .store import compact_store
    from .traces import traces

    main.add_command(bench)
    main.add_command(matrix)
    main.add_command(compact_store)
    main.add_command(record_errors)
    main.add_command(traces)


_attach()
