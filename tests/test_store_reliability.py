"""The durable store under crashes, concurrent writers, summarizer failures and corrupt rows
(SPEC DUR-2..DUR-5, DUR-10, STORE-2, STORE-8). Real processes, real SQLite files, no timing
assertions: kill delays are random, outcomes are checked, never durations."""

from __future__ import annotations

import json
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compaction_suite.reference import Compactor, MaskObservations, presets
from compaction_suite.reference.points import DurableHistory
from compaction_suite.reference.store import SQLiteStore, StoreError

WORKER = Path(__file__).parent / "store_worker.py"
SESSION = "s"
KILLS = 30
ROUNDS = 600
"""Tool rounds in the killed writer's history: enough rows that its transaction takes a while."""


def tool_history(rounds: int, tag: str = "t") -> list[dict]:
    history: list[dict] = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": "go"}]
    for n in range(rounds):
        call = {"id": f"{tag}{n}", "type": "function", "function": {"name": "readFile", "arguments": json.dumps({"path": f"f{n}.py"})}}
        history += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call["id"], "content": f"file {n}\n" + "x = 1\n" * 40},
        ]
    return history + [{"role": "assistant", "content": "done"}]


def state(db: Path) -> tuple[list[tuple[str, dict]], list]:
    store = SQLiteStore(str(db))
    try:
        return [(r.id, r.message) for r in store.load(SESSION)], store.events(SESSION)
    finally:
        store.close()


def spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(WORKER), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def test_writer_killed_mid_hard_retention_leaves_old_or_new_whole(tmp_path):
    pristine = tmp_path / "pristine.db"
    store = SQLiteStore(str(pristine))
    store.append(SESSION, tool_history(ROUNDS))
    store.close()
    expected_new = tmp_path / "expected.db"
    shutil.copy(pristine, expected_new)
    history = DurableHistory(SQLiteStore(str(expected_new)), Compactor(MaskObservations(keep_rounds=2)), retention="compact")
    history.compact(SESSION, force=True)
    history.close()
    old, new = state(pristine), state(expected_new)
    assert old[0] != new[0] and old[1] == [] and len(new[1]) == 1

    rng = random.Random(20260522)
    outcomes = {"old": 0, "new": 0}
    copies = [tmp_path / f"kill-{i}.db" for i in range(KILLS)]
    shutil.copy(pristine, copies[0])
    child = spawn("compact", str(copies[0]))
    for i, db in enumerate(copies):
        assert child.stdout.readline().strip() == "ready"
        if i + 1 < KILLS:  # the next writer imports while this one runs
            shutil.copy(pristine, copies[i + 1])
            following = spawn("compact", str(copies[i + 1]))
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "writing"  # inside the transaction now
        time.sleep(rng.uniform(0, 0.03))
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert child.returncode == -signal.SIGKILL or child.returncode == 0
        with sqlite3.connect(db) as raw:
            assert raw.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        found = state(db)
        assert found in (old, new), f"kill {i}: the store holds neither the old nor the new history whole"
        outcomes["old" if found == old else "new"] += 1
        if i + 1 < KILLS:
            child = following
    print(f"{KILLS} kills inside the write transaction: {outcomes}")


def test_concurrent_appends_and_compactions_lose_nothing(tmp_path, server):
    db = tmp_path / "shared.db"
    SQLiteStore(str(db)).close()
    children = [spawn("churn", str(db), tag, "24", server.base_url) for tag in ("A", "B")]
    lines = [line for child in children for line in child.communicate(timeout=300)[0].splitlines()]
    assert all(child.returncode == 0 for child in children)
    appended = {d["id"]: d["message"] for d in map(json.loads, lines) if "id" in d}
    assert len(appended) == 2 * 24 * 4  # ids never collide across writers

    rows, events = state(db)
    present = dict(rows)
    removed = [i for e in events for i in e.removed_ids]
    assert len(removed) == len(set(removed)), "an id was removed twice"
    replacements = {r.id for e in events for r in e.replacement}
    for message_id, message in appended.items():
        assert (message_id in present) != (message_id in removed), f"{message_id} is lost (or both kept and removed)"
        if message_id in present:
            assert present[message_id] == message
    assert set(present) <= set(appended) | replacements
    assert set(removed) <= set(appended) | replacements
    assert events, "no compaction happened"


@pytest.mark.parametrize("retention", ["compact", "delete"])
def test_summarizer_failure_under_hard_retention_removes_nothing(tmp_path, server, client, retention):
    store = SQLiteStore(str(tmp_path / "h.db"))
    store.append(SESSION, tool_history(12))
    before = store.load(SESSION)
    compactor = presets.openai_azure("summarizer", client=client)
    server.fault("500")
    view = DurableHistory(store, compactor, retention=retention).compact(SESSION, force=True)
    assert view == [r.message for r in before]
    assert store.load(SESSION) == before and store.events(SESSION) == []
    assert compactor.last_event.failure_reason
    assert server.requests  # the summarizer was really asked


def test_fallback_truncation_under_hard_retention_removes_nothing(tmp_path, server, client):
    """Seed 003's truncation stands in for the model's view, never for the durable branch (DUR-10)."""
    store = SQLiteStore(str(tmp_path / "h.db"))
    store.append(SESSION, tool_history(12))
    before = store.load(SESSION)
    server.fault("503")
    view = DurableHistory(store, presets.researcher("summarizer", client=client, max_tokens=400)).compact(SESSION, retention="compact", force=True)
    assert len(view) < len(before)
    assert store.load(SESSION) == before and store.events(SESSION) == []


CORRUPT = {
    "bad JSON": (json.dumps({"role": "user", "content": "x"})[:-3], "not JSON"),
    "unknown role": (json.dumps({"role": "function", "content": "x"}), "HIST-2"),
    "not a message": (json.dumps(["user", "x"]), "HIST-2"),
    "orphan tool result": (json.dumps({"role": "tool", "tool_call_id": "nope", "content": "x"}), "HIST-3"),
}


@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_corrupt_or_foreign_row_names_session_and_row(tmp_path, case):
    body, rule = CORRUPT[case]
    db = tmp_path / "h.db"
    store = SQLiteStore(str(db))
    store.append(SESSION, tool_history(3))
    store.append("other", tool_history(2))
    with sqlite3.connect(db) as raw:
        raw.execute("INSERT INTO messages VALUES (?, 'main', 2, 'foreign-7', NULL, ?)", (SESSION, body))
        raw.execute("UPDATE messages SET seq = seq + 1 WHERE session = ? AND seq >= 2 AND id != 'foreign-7'", (SESSION,))
        snapshot = raw.execute("SELECT * FROM messages ORDER BY session, seq").fetchall()
    for attempt in (
        lambda: store.load(SESSION),
        lambda: store.append(SESSION, [{"role": "user", "content": "more"}]),
        lambda: DurableHistory(store, Compactor(MaskObservations(1))).compact(SESSION, retention="compact", force=True),
    ):
        with pytest.raises(StoreError) as raised:
            attempt()
        assert "session 's'" in str(raised.value) and "row 'foreign-7'" in str(raised.value) and rule in str(raised.value)
    assert len(store.load("other")) == len(tool_history(2))  # other sessions are untouched
    with sqlite3.connect(db) as raw:
        assert raw.execute("SELECT * FROM messages ORDER BY session, seq").fetchall() == snapshot
