"""The reference durable history: ids, writes, boundaries, forks, the four compaction points
and the compact-store command (SPEC DUR-1..DUR-12)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from compaction_suite.cli.store import compact_store
from compaction_suite.reference import Chain, Compactor, DropSources, KeepLastMessages, MaskObservations, call_in_flight, split_rounds
from compaction_suite.reference.points import DurableHistory, agent_loop, composite, exact, plan, previous, tool_group, turn
from compaction_suite.reference.store import MemoryStore, SQLiteStore, StoreConflict, StoreError

S = "s"


def call(call_id: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}


def turn_messages(n: int, source: str | None = None) -> list[dict]:
    """One message turn: a question, a tool round, an answer."""
    user = {"role": "user", "content": f"question {n}: " + "why " * 10} | ({"source_id": source} if source else {})
    return [
        user,
        {"role": "assistant", "content": None, "tool_calls": [call(f"c{n}")]},
        {"role": "tool", "tool_call_id": f"c{n}", "content": f"result {n} " + "x" * 80},
        {"role": "assistant", "content": f"a{n}"},
    ]


def filled(turns: int = 5, **sources: str) -> MemoryStore:
    store = MemoryStore()
    store.append(S, [{"role": "system", "content": "sys"}])
    for n in range(turns):
        store.append(S, turn_messages(n, sources.get(f"t{n}")), turn_id=f"turn-{n}")
    return store


def ids(store, branch: str = "main") -> list[str]:
    return [r.id for r in store.load(S, branch)]


def test_ids_are_stable_and_never_reused(tmp_path):
    store = SQLiteStore(str(tmp_path / "h.db"))
    assert [r.id for r in store.append(S, turn_messages(0))] == ["m-1", "m-2", "m-3", "m-4"]
    DurableHistory(store, Compactor(KeepLastMessages(1))).compact(S, retention="delete", force=True)
    assert ids(store) == ["m-4"]
    assert [r.id for r in store.append(S, [{"role": "user", "content": "again"}])] == ["m-5"]
    store.close()
    assert ids(SQLiteStore(str(tmp_path / "h.db"))) == ["m-4", "m-5"]


def test_a_write_breaking_hist_rules_writes_nothing():
    store = filled(1)
    before = store.load(S)
    with pytest.raises(StoreError, match=r"session 's' branch 'main' row 'm-6': HIST-3"):
        store.append(S, [{"role": "tool", "tool_call_id": "c0", "content": "again"}])
    with pytest.raises(TypeError):
        store.replace(S, [{"role": "user", "content": "fine"}, {"role": "user", "content": "x", "meta": object()}])
    assert store.load(S) == before


def test_replace_keeps_the_ids_of_stored_messages():
    store = filled(2)
    rows = store.load(S)
    assert [r.id for r in store.replace(S, [rows[0], *rows[5:], {"role": "user", "content": "new"}])] == ["m-1", "m-6", "m-7", "m-8", "m-9", "m-10"]


def test_soft_compaction_is_post_load_only():
    store = filled(5)
    before = store.load(S)
    view = DurableHistory(store, Compactor(KeepLastMessages(4))).load_for_model(S, force=True)
    assert len(view) == 5 and store.load(S) == before and store.events(S) == []


def test_compact_and_delete_retention():
    for retention in ("compact", "delete"):
        store = filled(5)
        DurableHistory(store, Compactor(MaskObservations(keep_rounds=2)), retention=retention, boundary=tool_group).compact(S, force=True)
        event = store.events(S)[0]
        assert event.removed_ids == ("m-3", "m-4", "m-7", "m-8", "m-11", "m-12", "m-15", "m-16")
        assert event.replacement == () and len(store.load(S)) == 1 + 4 * 5 - 8


def test_masking_under_compact_retention_replaces_each_result_in_place():
    store = filled(3)
    DurableHistory(store, Compactor(MaskObservations(keep_rounds=1)), retention="compact").compact(S, force=True)
    event = store.events(S)[0]
    assert event.removed_ids == event.anchors == ("m-4", "m-8", "m-12")
    assert ids(store) == ["m-1", "m-2", "m-3", "m-14", "m-5", "m-6", "m-7", "m-15", "m-9", "m-10", "m-11", "m-16", "m-13"]
    split_rounds([r.message for r in store.load(S)])


def test_exact_boundary_that_would_orphan_a_call_is_refused():
    store = filled(3)
    before = store.load(S)
    with pytest.raises(StoreError, match="tool-group boundary"):
        DurableHistory(store, Compactor(MaskObservations(keep_rounds=1))).compact(S, retention="delete", force=True)
    assert store.load(S) == before and store.events(S) == []


def test_boundary_policies():
    store = filled(4, t2="ephemeral")
    rows = store.load(S)
    view = Compactor(DropSources({"ephemeral"})).compact([r.message for r in rows], iteration=1, force=True)
    dropped = {"m-10"}  # DropSources removes the tagged message's round: the question alone
    assert set(plan(rows, view, "delete").removed_ids) == dropped
    assert set(plan(rows, view, "delete", previous).removed_ids) == {f"m-{n}" for n in range(2, 11)}
    assert set(plan(rows, view, "delete", turn).removed_ids) == {"m-10", "m-11", "m-12", "m-13"}
    assert set(plan(rows, view, "delete", tool_group).removed_ids) == dropped
    assert set(plan(rows, view, "delete", composite(exact, turn, tool_group)).removed_ids) == {"m-10", "m-11", "m-12", "m-13"}


def test_an_append_during_compaction_survives():
    """Seed 000's summarizer call takes seconds; the store applies the event to the branch as it is then (DUR-5)."""
    store = filled(4)
    appended = []

    class AppendsMeanwhile(Compactor):
        def compact(self, messages, **kw):
            appended.extend(store.append(S, [{"role": "user", "content": "while summarizing"}]))
            return super().compact(messages, **kw)

    DurableHistory(store, AppendsMeanwhile(KeepLastMessages(4)), retention="delete").compact(S, force=True)
    assert ids(store) == ["m-1", "m-14", "m-15", "m-16", "m-17", appended[0].id]


def test_a_second_compaction_of_the_same_range_conflicts():
    store = filled(4)
    rows = store.load(S)
    view = Compactor(KeepLastMessages(4)).compact([r.message for r in rows], iteration=1, force=True)
    store.apply(S, plan(rows, view, "delete"))
    after = store.load(S)
    with pytest.raises(StoreConflict, match="another writer compacted first"):
        store.apply(S, plan(rows, view, "delete"))
    assert store.load(S) == after and len(store.events(S)) == 1


def test_skip_wins_over_force():
    store = filled(5)
    before = store.load(S)
    view = DurableHistory(store, Compactor(KeepLastMessages(4)), retention="compact").compact(S, skip=True, force=True)
    assert view == [r.message for r in before] and store.load(S) == before


def test_pre_write_compacts_before_persisting():
    store = filled(1)
    run = [m for n in range(1, 5) for m in turn_messages(n)]
    saved = DurableHistory(store, Compactor(KeepLastMessages(4))).save(S, run, force=True)
    assert [r.message for r in saved] == run[-4:] and len(store.load(S)) == 5 + 4


def test_fork_plain_compacted_and_from_a_removed_id():
    store = filled(5)
    history = DurableHistory(store, Compactor(KeepLastMessages(4)))
    before = store.load(S)
    assert [r.id for r in history.fork(S, "main", "copy", "m-7")] == [f"m-{n}" for n in range(1, 8)]
    assert [r.id for r in history.fork(S, "main", "lean", "m-21", compact=True)] == ["m-1", "m-18", "m-19", "m-20", "m-21"]
    assert store.load(S) == before and store.events(S, "lean") == []
    with pytest.raises(StoreError, match="already exists"):
        history.fork(S, "main", "copy", "m-3")
    history.compact(S, retention="delete", force=True)
    with pytest.raises(StoreError, match=r"row .m-3.: cannot fork: the message was compacted away"):
        history.fork(S, "main", "late", "m-3")
    with pytest.raises(StoreError, match="is not in this branch"):
        history.fork(S, "main", "late", "m-99")
    assert store.load(S, "late") == []


def test_agent_loop_compacts_only_between_complete_rounds():
    seen = []

    class Recording(Compactor):
        def compact(self, messages, **kw):
            assert not call_in_flight(split_rounds(messages)), "compacted with a tool call in flight"
            seen.append(kw["iteration"])
            return super().compact(messages, **kw)

    script = iter([[m] for n in range(3) for m in turn_messages(n)[1:3]] + [[{"role": "assistant", "content": "bye"}]])
    out = agent_loop(Recording(KeepLastMessages(3)), [{"role": "user", "content": "go"}], lambda _: next(script, []), max_iterations=10, force=True)
    assert seen == [1, 2, 3, 4]  # three tool rounds, delivered call first then result, and the reply
    assert out[-1]["content"] == "bye" and len(out) == 3


def test_compact_store_command(tmp_path, server, monkeypatch):
    db = tmp_path / "h.db"
    store = SQLiteStore(str(db))
    for n in range(6):
        store.append(S, turn_messages(n))
    store.close()
    runner = CliRunner()
    done = runner.invoke(compact_store, [str(db), "--session", S, "--keep-messages", "4", "--retention", "delete", "--boundary", "tool-group"])
    assert done.exit_code == 0, done.output
    assert "delete retention removed 20" in done.output and "4 stored" in done.output
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    store = SQLiteStore(str(db))
    for n in range(6, 10):
        store.append(S, turn_messages(n))
    store.close()
    done = runner.invoke(compact_store, [str(db), "--session", S, "--summarize", "m", "--keep-rounds", "2"])
    assert done.exit_code == 0, done.output
    assert "compact retention removed" in done.output and "inserted 1" in done.output
    summary = SQLiteStore(str(db)).load(S)[0].message
    assert summary["content"].startswith("[Context Summary]")
    store = SQLiteStore(str(db))
    for n in range(10, 14):
        store.append(S, turn_messages(n))
    store.close()
    server.fault("500")
    done = runner.invoke(compact_store, [str(db), "--session", S, "--summarize", "m"])
    assert done.exit_code == 1 and "nothing removed" in done.output
    with (tmp_path / "bad.db").open("w") as f:
        f.write("")
    bad = SQLiteStore(str(tmp_path / "bad.db"))
    bad._db.execute("INSERT INTO messages VALUES ('s', 'main', 0, 'x-1', NULL, ?)", (json.dumps({"role": "robot", "content": ""}),))
    bad.close()
    done = runner.invoke(compact_store, [str(tmp_path / "bad.db"), "--session", S, "--keep-messages", "1"])
    assert done.exit_code == 1 and "row 'x-1'" in done.output


def test_a_reused_call_id_pairs_by_round_in_writes_and_hard_retention():
    """HIST-6 Decision: a model may reuse a call id in a later round. The store takes it (DUR-3),
    and the hard-retention plan places a masked result by its own round, even when another round
    with the same id is removed in the same compaction."""
    store = MemoryStore()
    store.append(S, [{"role": "system", "content": "sys"}])
    for n in range(4):
        messages = turn_messages(n)
        messages[1] = {**messages[1], "tool_calls": [call("c")]} | ({"source_id": "wiki"} if n == 0 else {})
        messages[2] = {**messages[2], "tool_call_id": "c"}
        store.append(S, messages, turn_id=f"turn-{n}")
    compactor = Compactor(Chain(DropSources({"wiki"}), MaskObservations(keep_rounds=1)))
    DurableHistory(store, compactor, retention="compact").compact(S, force=True)
    event = store.events(S)[0]
    assert event.removed_ids == ("m-3", "m-4", "m-8", "m-12", "m-16")  # turn 0's tool round; three results masked
    assert event.anchors == ("m-8", "m-12", "m-16")  # each masked result in its own place
    rows = [r.message for r in store.load(S)]
    split_rounds(rows)
    assert [m["content"].startswith("[tool output omitted") for m in rows if m["role"] == "tool"] == [True, True, True]
