"""A separate writer process for the store's reliability tests (tests/test_store_reliability.py).

``python tests/store_worker.py compact DB``: opens DB, prints ``ready``, waits for a line on
standard input, prints ``writing`` when its hard-retention transaction has deleted the old
rows (the tracer sees the DELETE), and ``done`` after the commit. The parent kills it.

``python tests/store_worker.py churn DB TAG ROUNDS BASE_URL``: appends ROUNDS rounds tagged
TAG (a user turn, a tool round, a reply), compacting the session under hard retention every
few rounds through the summarizer at BASE_URL; prints each appended id as a JSON line.
"""

from __future__ import annotations

import json
import sys

import openai

from compaction_suite.reference import Compactor, MaskObservations, presets
from compaction_suite.reference.points import DurableHistory
from compaction_suite.reference.store import SQLiteStore, StoreConflict

SESSION = "s"


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def compact(db: str) -> None:
    store = SQLiteStore(db)
    history = DurableHistory(store, Compactor(MaskObservations(keep_rounds=2)), retention="compact")
    say("ready")
    sys.stdin.readline()
    store._db.set_trace_callback(lambda sql: say("writing") if sql.startswith("DELETE FROM messages") else None)
    history.compact(SESSION, force=True)
    say("done")


def churn(db: str, tag: str, rounds: int, base_url: str) -> None:
    client = openai.OpenAI(base_url=base_url, api_key="test", max_retries=0, timeout=10)
    history = DurableHistory(SQLiteStore(db), presets.openai_azure("m", client=client, keep_recent_rounds=2), retention="compact")
    for n in range(rounds):
        call = {"id": f"{tag}-call-{n}", "type": "function", "function": {"name": "search", "arguments": json.dumps({"q": f"{tag} {n}"})}}
        messages = [
            {"role": "user", "content": f"{tag} question {n}: " + "why " * 40},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call["id"], "content": f"{tag} result {n} " + "data " * 60},
            {"role": "assistant", "content": f"{tag} answer {n}"},
        ]
        for row in history.append(SESSION, messages):
            say(json.dumps({"id": row.id, "message": row.message}))
        if n % 4 == 3:
            try:
                history.compact(SESSION, force=True)
            except StoreConflict:
                say(json.dumps({"conflict": n}))


if __name__ == "__main__":
    if sys.argv[1] == "compact":
        compact(sys.argv[2])
    else:
        churn(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
