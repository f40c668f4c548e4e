"""``compaction-suite record-errors``: re-record the summarizer test double's failure exchanges.

Attached to the ``compaction-suite`` group in ``compaction_suite/cli``; the recording itself is
``compaction_suite/recording/errors.py`` (``cassettes/README.md``).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from .contract import INPUT_FILE, OUTPUT_DIR, BadInput, finish
from .extras import require


@click.command("record-errors")
@click.option("--out", required=True, type=OUTPUT_DIR, help="Directory for the error cassettes (the project's own: cassettes/errors).")
@click.option("--history", type=INPUT_FILE, help="History to compact (default: cassettes/histories/parallel-tool-calls.json).")
def record_errors(out: Path, history: Path | None) -> None:
    """Record HTTP 429/500/503, malformed, empty and truncated answers of the suite's summarizer
    TEST DOUBLE, through the reference compactor and the openai client, as vcrpy cassettes.

    Exit status: 0 when every case was recorded as intended, 1 otherwise, 2 on a usage error.
    """
    require("record", "vcr")
    from compaction_suite.recording import RecordingError
    from compaction_suite.recording.errors import record_errors as record

    command = shlex.join(["compaction-suite", "record-errors", "--out", str(out), *(["--history", str(history)] if history else [])])
    try:
        recordings = record(out, history, command=command)
    except RecordingError as error:
        raise BadInput(str(error)) from error
    for recording in recordings:
        click.echo(f"{recording.cassette}: {recording.meta['what']}: {recording.problem or 'ok'}")
    finish(sum(bool(r.problem) for r in recordings))

