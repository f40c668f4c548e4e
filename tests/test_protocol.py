"""The ``cmd:`` runner (conformance/protocol.py), driven through the fake implementations in tests/fakes/.

Each fake misbehaves in one way; the runner must turn each into its precise
exception and a message a person can act on (with the process's last stderr lines).
"""

from __future__ import annotations

import json
import logging
import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from compaction_suite.conformance.protocol import (
    REQUEST_SCHEMA_ID,
    RESPONSE_SCHEMA_ID,
    CommandCompactor,
    CommandTarget,
    ImplementationErrored,
    ImplementationSkipped,
    ProtocolError,
    Rejected,
    UnsupportedVersion,
    load_schema,
    validator,
)
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.target import TargetError, resolve

FAKES = Path(__file__).parent / "fakes"
HISTORY: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a helpful agent."},
    {"role": "user", "content": "Find the failing test. ünïcödé"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "search", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "tests/test_x.py"},
]


def command(fake: str, *args: str) -> str:
    return shlex.join([sys.executable, str(FAKES / fake), *args])


@pytest.fixture
def open_targets() -> Iterator[list[CommandTarget]]:
    """Targets made by `target`, closed after the test."""
    made: list[CommandTarget] = []
    yield made
    for made_target in made:
        made_target.close()


@pytest.fixture
def target(open_targets: list[CommandTarget]):
    def make(fake: str, *args: str, timeout: float = 10.0) -> CommandTarget:
        made = CommandTarget(command(fake, *args), timeout=timeout)
        open_targets.append(made)
        return made

    return make


# --- schemas ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["request", "response"])
def test_schemas_are_valid_draft_2020_12(name: str) -> None:
    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    assert schema["$id"] == {"request": REQUEST_SCHEMA_ID, "response": RESPONSE_SCHEMA_ID}[name]


@pytest.mark.parametrize(
    ("answer", "valid"),
    [
        ({"seq": 1, "messages": [], "event": None}, True),
        ({"seq": 1, "messages": [{"role": "user", "content": "hi"}]}, True),
        ({"seq": 1, "rejected": {"message": "no"}}, True),
        ({"seq": 1, "skipped": {"message": "no"}}, True),
        ({"seq": 1, "errored": {"message": "no", "context": {"line": 3}}}, True),
        ({"seq": 1, "messages": [], "rejected": {"message": "both"}}, False),
        ({"seq": 1, "messages": [{"content": "no role"}]}, False),
        ({"seq": 1, "tokens": 3}, False),
        ({"messages": []}, False),
    ],
)
def test_a_compact_answer_is_exactly_one_alternative(answer: dict, valid: bool) -> None:
    assert validator("response#/$defs/compact_answer").is_valid(answer) is valid
    if valid:
        assert validator("response").is_valid(answer)


def test_the_requests_the_runner_writes_match_the_request_schema(target, tmp_path: Path) -> None:
    record = tmp_path / "requests.jsonl"
    echo = target("echo.py", "--record", str(record))
    compactor = echo(Settings(summary_prompt="Summarize ☃"))
    compactor.compact(HISTORY, iteration=1)
    compactor.estimate_tokens(HISTORY)
    echo(Settings())
    echo.close()

    lines = record.read_text("utf-8").splitlines()
    requests = [json.loads(line) for line in lines]
    assert [r["cmd"] for r in requests] == ["start", "reset", "compact", "estimate_tokens", "reset", "stop"]
    for request in requests:
        assert validator("request").is_valid(request), request
    assert all(line.isascii() for line in lines)
    assert requests[0] == {"cmd": "start", "protocol": "compaction-suite", "version": 1}
    assert requests[1]["settings"] == Settings(summary_prompt="Summarize ☃").as_json()
    assert [r["seq"] for r in requests[2:4]] == [1, 2]


# --- the round trip -------------------------------------------------------------------


def test_echo_round_trip(target, caplog: pytest.LogCaptureFixture) -> None:
    echo = target("echo.py")
    compactor = echo(Settings())
    assert isinstance(compactor, CommandCompactor)
    assert compactor.implementation == {"name": "echo", "version": "0.0.0", "language": "python"}
    assert compactor.profiles == {"core"}

    with caplog.at_level(logging.INFO, logger="compaction_suite.conformance.protocol.implementation"):
        assert compactor.compact(HISTORY, iteration=1) == HISTORY
    assert compactor.last_event == {"messages_before": 4, "messages_after": 4, "compacts": 1}
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [("INFO", "echoed 4 messages at iteration 1")]
    compactor.compact(HISTORY, iteration=2)
    assert compactor.last_event["compacts"] == 2
    assert compactor.estimate_tokens(HISTORY) == sum(len(m["content"] or "") for m in HISTORY) // 4

    fresh = echo(Settings())  # reset: the implementation's state starts over, in the same process
    fresh.compact(HISTORY, iteration=1)
    assert fresh.last_event["compacts"] == 1


def test_an_older_compactor_takes_the_process_back_only_where_that_is_exact(target, tmp_path: Path) -> None:
    record = tmp_path / "requests.jsonl"
    echo = target("echo.py", "--record", str(record))
    first = echo(Settings(threshold_iterations=3))
    first.compact(HISTORY, iteration=1)
    second = echo(Settings(threshold_iterations=5))
    third = echo(Settings(threshold_iterations=7))

    assert first.estimate_tokens(HISTORY) > 0  # stateless: reset back to first's settings, then ask
    second.compact(HISTORY, iteration=1)  # second never compacted: it has no state to lose
    assert second.last_event["compacts"] == 1
    with pytest.raises(RuntimeError, match=r"stale: .* state .* is gone"):
        first.compact(HISTORY, iteration=2)  # first's state (one compaction) was reset away
    third.estimate_tokens(HISTORY)
    assert first.estimate_tokens(HISTORY) > 0
    with pytest.raises(RuntimeError, match="stale"):  # current again, but its state stays lost
        first.compact(HISTORY, iteration=2)

    requests = [json.loads(line) for line in record.read_text("utf-8").splitlines()]
    resets = [r["settings"]["threshold_iterations"] for r in requests if r["cmd"] == "reset"]
    assert resets == [3, 5, 7, 3, 5, 7, 3]
    assert [r["cmd"] for r in requests].count("compact") == 2


def test_undeclared_capabilities_are_absent(target) -> None:
    compactor = target("echo.py", "--no-estimate")(Settings())
    assert not hasattr(compactor, "estimate_tokens")
    assert not hasattr(compactor, "last_event")
    assert compactor.compact(HISTORY, iteration=1) == HISTORY


def test_start_reports_the_implementation(target) -> None:
    hello = target("echo.py").start()
    assert hello["implementation"]["name"] == "echo"
    assert hello["capabilities"] == {"estimate_tokens": True, "last_event": True}


def test_close_ends_the_process(target) -> None:
    echo = target("echo.py")
    echo(Settings())
    process = echo._session.process.popen
    echo.close()
    assert process.poll() == 0
    assert echo.returncode == 0
    echo.close()  # twice is harmless


def test_close_kills_a_process_that_ignores_stop(target, monkeypatch: pytest.MonkeyPatch) -> None:
    import compaction_suite.conformance.protocol as protocol

    monkeypatch.setattr(protocol, "STOP_TIMEOUT", 0.3)
    stubborn = target("silent.py", "--ignore-stop")
    stubborn(Settings())
    process = stubborn._session.process.popen
    started = time.monotonic()
    stubborn.close()
    assert time.monotonic() - started < 5
    assert process.poll() is not None and stubborn.returncode != 0


def test_a_target_string_names_the_command() -> None:
    """``cmd:`` is parsed in one place, `resolve` (conformance/target.py)."""
    factory = resolve("cmd:node examples/node/compactor.mjs", timeout=7.0).factory
    assert isinstance(factory, CommandTarget) and factory.argv == ["node", "examples/node/compactor.mjs"] and factory.timeout == 7.0
    assert not isinstance(resolve("compaction_suite.reference.conformance_factory:seed_000").factory, CommandTarget)
    with pytest.raises(TargetError, match="cmd: needs a command"):
        resolve("cmd:  ")


# --- answers that are not results -------------------------------------------------------


def test_rejected_is_a_value_error(target) -> None:
    with pytest.raises(Rejected, match=r"^HIST-3 at message 1: orphan tool result$") as raised:
        target("rejecter.py")(Settings()).compact(HISTORY, iteration=1)
    assert isinstance(raised.value, ValueError)


def test_skipped(target) -> None:
    with pytest.raises(ImplementationSkipped, match=r"^multimodal histories are not supported$"):
        target("skipper.py")(Settings()).compact(HISTORY, iteration=1)


def test_errored_keeps_its_context_and_the_process(target) -> None:
    crash = target("crash.py")
    compactor = crash(Settings())
    with pytest.raises(ImplementationErrored) as raised:
        compactor.compact(HISTORY, iteration=1)
    assert raised.value.message == "KeyError: 'content'"
    assert "Traceback (most recent call last)" in raised.value.context
    assert str(raised.value).startswith("KeyError: 'content'\nTraceback")
    assert not isinstance(raised.value, (ProtocolError, ValueError))
    with pytest.raises(ImplementationErrored):  # an errored answer is an answer: the process goes on
        compactor.compact(HISTORY, iteration=2)


# --- protocol errors -------------------------------------------------------------------


def test_a_line_that_is_not_json(target) -> None:
    garbage = target("garbage.py")
    with pytest.raises(ProtocolError) as raised:
        garbage(Settings()).compact(HISTORY, iteration=1)
    message = str(raised.value)
    assert message.startswith(f"cmd:{garbage.command}: answered compact (seq 1) with a line that is not JSON")
    assert "'this is not json'" in message
    assert message.endswith("stderr (last 1 lines):\n  | garbage.py: about to misbehave")
    assert raised.value.stderr == ["garbage.py: about to misbehave"]


def test_an_answer_that_does_not_match_the_schema(target) -> None:
    with pytest.raises(ProtocolError, match=r"invalid answer to compact \(seq 1\): 'not a list' is not of type 'array'"):
        target("garbage.py", "--invalid")(Settings()).compact(HISTORY, iteration=1)


def test_the_wrong_seq(target) -> None:
    with pytest.raises(ProtocolError, match=r": answered compact \(seq 1\) with seq 42\nstderr: \(nothing\)$"):
        target("wrong_seq.py")(Settings()).compact(HISTORY, iteration=1)


def test_no_answer_within_the_timeout(target) -> None:
    silent = target("silent.py", timeout=0.5)
    compactor = silent(Settings())
    started = time.monotonic()
    with pytest.raises(ProtocolError, match=r"did not answer compact \(seq 1\) within 0\.5 s") as raised:
        compactor.compact(HISTORY, iteration=1)
    assert time.monotonic() - started < 5
    assert "silent.py: thinking forever" in str(raised.value)


def test_a_process_that_dies(target) -> None:
    dies = target("dies.py")
    with pytest.raises(ProtocolError) as raised:
        dies(Settings()).compact(HISTORY, iteration=1)
    message = str(raised.value)
    assert ": exited with status 3 before answering compact (seq 1)\n" in message
    assert message.endswith("  | dies.py: fatal: out of cheese")


def test_a_protocol_error_ends_the_process_and_the_next_call_starts_another(target) -> None:
    garbage = target("garbage.py")
    compactor = garbage(Settings())
    first = garbage._session.process.popen
    with pytest.raises(ProtocolError):
        compactor.compact(HISTORY, iteration=1)
    assert first.poll() is not None
    with pytest.raises(ProtocolError, match="ended by an earlier protocol error"):
        compactor.compact(HISTORY, iteration=1)
    replacement = garbage(Settings())
    assert garbage._session.process.popen is not first
    with pytest.raises(ProtocolError, match="not JSON"):
        replacement.compact(HISTORY, iteration=1)


def test_an_old_version_is_refused(target) -> None:
    old = target("old_version.py")
    expected = r"refused protocol version 1: only protocol version 2 is spoken here, not 1"
    with pytest.raises(UnsupportedVersion, match=expected) as raised:
        old(Settings())
    assert isinstance(raised.value, ProtocolError)
    assert old._session is None
    with pytest.raises(UnsupportedVersion, match=expected):  # remembered: no second process
        old(Settings())


def test_a_command_that_does_not_exist(target) -> None:
    missing = CommandTarget("compaction-suite-no-such-program --flag")
    with pytest.raises(ProtocolError, match="could not start the process"):
        missing(Settings())


def test_a_history_that_is_not_json_is_a_type_error_not_a_rejection(target) -> None:
    compactor = target("echo.py")(Settings())
    with pytest.raises(TypeError, match="cannot be sent as JSON"):
        compactor.compact([{"role": "user", "content": object()}], iteration=1)
    with pytest.raises(TypeError, match="cannot be sent as JSON"):
        compactor.compact([{"role": "user", "content": float("nan")}], iteration=1)
    assert compactor.compact(HISTORY, iteration=1) == HISTORY
