"""``compaction-suite record``: a compactor's real summarizer calls on vcrpy cassettes.

The recording is `compaction_suite.recording.record` (``cassettes/README.md``); this module parses
the options and checks the ``record`` extra is installed before importing it.
"""

from __future__ import annotations

import shlex

import click

from .contract import INPUT_FILE, OUTPUT_DIR, BadInput, finish, path_option, use_paths
from .extras import require


@click.command()
@click.argument("target", required=False)
@click.option("--base-url", help="An OpenAI-compatible endpoint, e.g. http://127.0.0.1:8765/v1 or https://api.openai.com/v1.")
@click.option("--azure-endpoint", help="An Azure OpenAI resource, e.g. https://NAME.openai.azure.com (with --api-version).")
@click.option("--api-version", help="Azure OpenAI api-version.")
@click.option("--model", required=True, help="The summary model (Azure: the deployment name).")
@click.option("--history", "histories", multiple=True, type=INPUT_FILE, help="History JSON to compact (repeatable; default: the three in cassettes/histories/).")
@click.option("--out", required=True, type=OUTPUT_DIR, help="Cassettes go to OUT/<target>/<history>.yaml (the project's own: cassettes/provider).")
@click.option("--name", help="Directory name for the target under OUT (default: derived from TARGET).")
@click.option("--iteration", type=click.IntRange(min=1), help="Iteration passed to compact (default: Settings().threshold_iterations).")
@click.option("--timeout", default=600.0, show_default=True, type=float, help="Seconds a summarizer call may take.")
@click.option("--model-file", type=INPUT_FILE, help="The local model file, hashed into the meta file.")
@click.option("--server-info", help='What serves the model, for the meta file (e.g. "llama-cpp-python 0.3.36").')
@path_option
def record(target, base_url, azure_endpoint, api_version, model, histories, out, name, iteration, timeout, model_file, server_info, paths) -> None:
    """Record TARGET's summarizer calls on each history as vcrpy cassettes (cassettes/README.md).

    The key comes from $OPENAI_API_KEY (Azure: $AZURE_OPENAI_API_KEY), never from the command line.
    Exit status: 0 when every history was compacted and the endpoint accepted the result, 1 otherwise, 2 on a usage error.
    """
    require("record", "vcr")
    from compaction_suite.recording import Endpoint, RecordingError, default_histories
    from compaction_suite.recording import record as record_histories

    use_paths(paths)
    try:
        endpoint = Endpoint.from_env(model, base_url=base_url, azure_endpoint=azure_endpoint, api_version=api_version, timeout=timeout)
        recordings = record_histories(
            target, histories or default_histories(), out, endpoint, iteration=iteration, name=name,
            model_file=model_file, server_info=server_info, command=_as_given(target),
        )  # fmt: skip
    except RecordingError as error:
        raise BadInput(str(error)) from error
    for recording in recordings:
        tokens = recording.meta.get("verified_prompt_tokens")
        click.echo(f"{recording.cassette}: {recording.problem or f'compacted; verified {tokens} prompt tokens'}")
    finish(sum(bool(r.problem) for r in recordings))


def _as_given(target: str | None) -> str:
    """The command as given, for the meta files (options at their defaults left out)."""
    context, argv = click.get_current_context(), ["compaction-suite", "record", *([target] if target else [])]
    for param in context.command.params:
        value = context.params[param.name]
        if isinstance(param, click.Option) and value not in (None, (), param.default):
            argv += [arg for v in (value if isinstance(value, tuple) else (value,)) for arg in (param.opts[0], str(v))]
    return shlex.join(argv)
