"""Probes of what the agent still knows (benchmarks/probes.py; SPEC PROBE-1..3)."""

from __future__ import annotations

import json

from compaction_suite.benchmarks.lineup import NoCompaction
from compaction_suite.benchmarks.probes import Probe, Probes
from compaction_suite.benchmarks.replay import replay
from compaction_suite.conformance.oracle import readable_text
from compaction_suite.reference import Compactor, IterationsOrTokens, KeepLastMessages

from message_builders import asks, call, reply, result, system, user


def progress(*tasks: tuple[str, str]) -> dict:
    return call("p", "reportProgress", {"tasks": [{"title": t, "status": s} for t, s in tasks]})


def history() -> list[dict]:
    return [
        system("You are an agent."),
        user("Fix the parser. Never touch vendor/lib/yaml.py; keep the fix inside src/parse/."),
        asks(call("a", "readFile", {"path": "src/parse/core.py"})),
        result("a", "def parse(): ..."),
        asks(call("b", "createEntity", {"title": "parser bug"})),
        result("b", json.dumps({"id": "ent-42", "status": "created"})),
        asks(progress(("Read the parser", "completed"), ("Fix the bug", "in_progress"))),
        result("p", "ok"),
        asks(call("c", "runCommand", {"cmd": "pytest tests/test_core.py"})),
        result("c", "Traceback (most recent call last):\nValueError: bad token"),
        asks(call("d", "runCommand", {"cmd": "pytest tests/test_core.py"})),
        result("d", "KeyError: 'x'"),
        asks(progress(("Read the parser", "completed"), ("Fix the bug", "completed"))),
        result("p", "ok"),
        reply("Fixed."),
    ]


def learned(messages: list[dict]) -> Probes:
    probes = Probes()
    for m in messages:
        probes.learn([m])
    return probes


def test_each_kind_is_taken_from_the_trace():
    probes = learned(history())
    assert probes.counts() == {"entity id": 1, "file path": 2, "last error": 1, "task status": 2, "constraint": 1}
    assert Probe("entity id", ("ent-42",)) in probes.live
    assert Probe("file path", ("src/parse/core.py",)) in probes.live and Probe("file path", ("tests/test_core.py",)) in probes.live
    assert Probe("constraint", ("vendor/lib/yaml.py", "src/parse/")) in probes.live


def test_only_the_latest_error_and_task_list_count():
    probes = learned(history())
    assert [p.keys for p in probes.live if p.kind == "last error"] == [("KeyError",)]
    assert [p.keys for p in probes.live if p.kind == "task status"] == [("Read the parser", "completed"), ("Fix the bug", "completed")]


def test_a_probe_is_kept_when_the_context_holds_every_key():
    probes = learned(history())
    whole = readable_text(history())
    assert probes.check(whole, compacted=True) == 1.0
    summary = "Fixed the parser in src/parse/core.py (ent-42); tests/test_core.py raised KeyError. Fix the bug: completed."
    share = probes.check(summary, compacted=True)
    kept = probes.kept_now()
    assert kept["entity id"] == 1.0 and kept["file path"] == 1.0 and kept["last error"] == 1.0
    assert kept["constraint"] == 0.0 and kept["task status"] == 0.5
    assert share == 1 - 2 / 7
    assert probes.worst["constraint"] == 0.0


def test_between_compactions_the_share_carries_over():
    probes = learned(history()[:6])
    assert probes.check("nothing", compacted=True) == 0.0
    probes.learn([asks(call("e", "readFile", {"path": "src/parse/lexer.py"}))])
    assert probes.check("ignored: not compacted", compacted=False) == 1 / 4  # of 4 probes, only the new path is in the grown context


def test_the_replay_reports_probes_per_kind_and_n_a_without_any():
    messages = history()
    kept = replay(messages, NoCompaction()).summary()
    assert kept["min_probe_retention"] == 1.0 and kept["probes"]["tracked"]["file path"] == 2
    cut = replay(messages, Compactor(KeepLastMessages(2), IterationsOrTokens(threshold_iterations=1))).summary()
    assert cut["min_probe_retention"] < 1.0 and cut["probes"]["min"]["constraint"] == 0.0
    plain = [system("s"), user("hello"), reply("hi"), user("again"), reply("yes")]
    assert replay(plain, NoCompaction()).summary()["min_probe_retention"] is None
