"""``compaction-suite compact-store``: maintenance compaction of a stored session (SPEC DUR-12).

Seed 002's fourth compaction point, "on existing storage … (e.g., cron job, manual
trigger)", for the reference's SQLite store. Attached to the ``compaction-suite`` group
in ``compaction_suite/cli``; the reference itself stays free of click.
"""

from __future__ import annotations

import sys

import click

from .contract import INPUT_FILE, BadInput


@click.command("compact-store")
@click.argument("db", type=INPUT_FILE)
@click.option("--session", required=True, help="The session to compact.")
@click.option("--branch", default="main", show_default=True, help="The branch to compact.")
@click.option("--retention", type=click.Choice(["preserve", "compact", "delete"]), default="compact", show_default=True,
              help="preserve: report only; compact: replace the compacted range; delete: remove it (seed 004).")
@click.option("--boundary", "boundaries", multiple=True, type=click.Choice(["exact", "previous", "turn", "tool-group"]),
              help="Boundary policy for hard retention (repeatable: a composite). Default: exact.")
@click.option("--keep-messages", type=click.IntRange(min=1), help="Keep the last N messages (whole rounds); no model needed.")
@click.option("--summarize", "model", metavar="MODEL", help="Summarize older rounds with MODEL (seed 000; OPENAI_* environment).")
@click.option("--keep-rounds", type=click.IntRange(min=0), default=2, show_default=True, help="Rounds kept verbatim by --summarize.")
def compact_store(db, session, branch, retention, boundaries, keep_messages, model, keep_rounds) -> None:
    """Compact SESSION's BRANCH in the SQLite store DB now (the trigger is not consulted).

    DB must be a store the reference wrote (SPEC DUR-13): any other file is refused unchanged.
    Exit status: 0 when compacted, 1 when the store or the summarizer refused, 2 on a bad input.
    """
    from compaction_suite.reference import Compactor, KeepLastMessages, presets
    from compaction_suite.reference.points import BOUNDARIES, DurableHistory, composite
    from compaction_suite.reference.store import NotAStore, SQLiteStore, StoredMessage, StoreError, identify

    if (keep_messages is None) == (model is None):
        raise click.UsageError("give exactly one of --keep-messages N and --summarize MODEL")
    try:
        if identify(str(db)) == "empty database":
            raise NotAStore(f"{db}: an SQLite database with no tables, not a compaction-suite store")
    except NotAStore as error:
        raise BadInput(str(error)) from error
    if model is not None:
        import openai

        try:
            client = openai.OpenAI(max_retries=0)
        except openai.OpenAIError as error:
            raise click.UsageError(f"--summarize needs the OpenAI client's credentials: {error}") from error
        compactor = presets.openai_azure(model, client=client, keep_recent_rounds=keep_rounds)
    else:
        compactor = Compactor(KeepLastMessages(keep_messages))
    boundary = composite(*(BOUNDARIES[b] for b in boundaries)) if boundaries else BOUNDARIES["exact"]
    store = SQLiteStore(str(db))
    known = store.sessions()
    if branch not in known.get(session, []):
        store.close()
        where = f"session {session!r} has branches {', '.join(known[session])}" if session in known else f"sessions: {', '.join(known) or 'none'}"
        raise BadInput(f"no branch {branch!r} of session {session!r} in {db} ({where})")
    history = DurableHistory(store, compactor, retention=retention, boundary=boundary)
    try:
        before = len(history.events(session, branch))
        view = history.compact(session, branch, force=True)
    except StoreError as error:
        click.echo(f"compact-store: {error}", err=True)
        sys.exit(1)
    finally:
        store.close()
    event = compactor.last_event
    if event is not None and event.failure_reason:
        click.echo(f"compact-store: nothing removed: the compaction failed: {event.failure_reason}", err=True)
        sys.exit(1)
    store = SQLiteStore(str(db))
    events, stored = store.events(session, branch)[before:], store.load(session, branch)
    store.close()
    removed = [i for e in events for i in e.removed_ids]
    inserted = [r.id for e in events for r in e.replacement if isinstance(r, StoredMessage)]  # a recorded event's all are
    click.echo(
        f"session {session!r} branch {branch!r}: the model sees {len(view)} messages; "
        f"{retention} retention removed {len(removed)} ({', '.join(removed) or 'none'}), "
        f"inserted {len(inserted)} ({', '.join(inserted) or 'none'}); {len(stored)} stored"
    )
