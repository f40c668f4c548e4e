"""examples/node/compactor.mjs, seed 000 in Node.js, driven through the ``cmd:`` runner
against the suite's summarizer test double."""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from compaction_suite.conformance.protocol import CommandCompactor, CommandTarget, Rejected
from compaction_suite.conformance.settings import Settings

from events import last_json

summarizer_server = pytest.importorskip("compaction_suite.conformance.summarizer_server")
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not on PATH")

COMPACTOR = Path(__file__).resolve().parents[1] / "examples" / "node" / "compactor.mjs"
T = 4
MODEL = "summary-deployment"


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    with summarizer_server.SummarizerServer() as running:
        yield running
    assert running.errors == []


@pytest.fixture(scope="module")
def target() -> Iterator[CommandTarget]:
    with CommandTarget(f"{NODE} {COMPACTOR}", timeout=20) as started:
        yield started


@pytest.fixture
def settings(server: Any) -> Settings:
    server.fault(None)
    server.reply_with(None)
    server.clear()
    return Settings(threshold_iterations=T, max_context_tokens=10_000, base_url=server.base_url, summarizer_timeout=1.0)


def tool_round(n: int) -> list[dict[str, Any]]:
    call = {"id": f"call_{n}", "type": "function", "function": {"name": "readFile", "arguments": json.dumps({"path": f"f{n}.py"})}}
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"call_{n}", "content": f"contents of f{n}.py " * 5},
    ]


def history(rounds: int = 5) -> list[dict[str, Any]]:
    messages = [{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": "Fix the failing build."}]
    for n in range(1, rounds + 1):
        messages += tool_round(n)
    return messages


def stderr_shows(target: CommandTarget, prefix: str, wait: float = 5.0) -> bool:
    """Whether a stderr line starts with ``prefix``; stderr is read by its own thread, so poll."""
    deadline = time.monotonic() + wait
    while not any(line.startswith(prefix) for line in target.stderr):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_start_declares_seed_000(target: CommandTarget, settings: Settings) -> None:
    compactor = target(settings)
    assert isinstance(compactor, CommandCompactor)
    assert compactor.implementation["language"] == "javascript"
    assert compactor.profiles == {"core", "trigger", "summary", "failure", "events"}


def test_below_the_threshold_nothing_changes(target: CommandTarget, settings: Settings, server: Any) -> None:
    compactor = target(settings)
    messages = history()
    assert compactor.compact(messages, iteration=T - 1) == messages
    assert server.requests == []
    assert last_json(compactor)["compacted"] is False
    assert last_json(compactor)["skipped_reason"] == "trigger did not fire"


def test_at_iteration_t_it_compacts_to_system_summary_and_the_last_two_rounds(
    target: CommandTarget, settings: Settings, server: Any
) -> None:
    compactor = target(settings.with_(model=MODEL))
    messages = history()
    output = compactor.compact(messages, iteration=T)

    assert output[0] == messages[0]
    assert output[1]["role"] == "user" and output[1]["content"].startswith("[Context Summary]\n")
    assert output[2:] == messages[-4:]
    (body,) = server.bodies
    assert body["model"] == MODEL and body["temperature"] == 0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "called readFile" in body["messages"][1]["content"]
    assert server.requests[0].headers["authorization"] == f"Bearer {settings.api_key}"

    event = last_json(compactor)
    usage = summarizer_server.usage(body["messages"], output[1]["content"].removeprefix("[Context Summary]\n"))
    assert event["compacted"] is True and event["failure_reason"] is None
    assert (event["messages_before"], event["messages_after"]) == (len(messages), 6)
    assert event["summarizer_prompt_tokens"] == usage["prompt_tokens"]
    assert event["summarizer_completion_tokens"] == usage["completion_tokens"]
    assert event["estimated_tokens_saved"] == compactor.estimate_tokens(messages) - compactor.estimate_tokens(output)
    default_prompt = body["messages"][0]["content"]
    assert event["prompt_hash"] == hashlib.sha256(default_prompt.encode()).hexdigest()[:8]


def test_iterations_count_from_the_last_compaction_and_summaries_fold(
    target: CommandTarget, settings: Settings, server: Any
) -> None:
    compactor = target(settings)
    once = compactor.compact(history(), iteration=T)
    longer = once + tool_round(6) + tool_round(7)
    assert compactor.compact(longer, iteration=T + 1) == longer  # 1 iteration since the compaction
    twice = compactor.compact(longer, iteration=2 * T)
    assert sum(m["content"].startswith("[Context Summary]") for m in twice if m["role"] == "user") == 1
    assert twice[2:] == longer[-4:]
    assert once[1]["content"] in server.bodies[-1]["messages"][1]["content"]  # the earlier summary is folded in


def test_the_token_threshold_alone_compacts(target: CommandTarget, settings: Settings) -> None:
    messages = history()
    compactor = target(settings.with_(max_context_tokens=len(json.dumps(messages)) // 100))
    assert len(compactor.compact(messages, iteration=1)) == 6
    assert last_json(compactor)["trigger"].startswith("estimated tokens")


def test_a_summary_prompt_override_changes_the_hash(target: CommandTarget, settings: Settings, server: Any) -> None:
    prompt = "Summarize tersely."
    compactor = target(settings.with_(summary_prompt=prompt))
    compactor.compact(history(), iteration=T)
    assert server.bodies[-1]["messages"][0]["content"] == prompt
    assert last_json(compactor)["prompt_hash"] == hashlib.sha256(prompt.encode()).hexdigest()[:8]


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("429", "RateLimitError: HTTP 429"),
        ("503", "InternalServerError: HTTP 503"),
        ("malformed", "MalformedResponse"),
        ("no_choices", "MalformedResponse"),
        ("empty_content", "EmptySummary"),
        ("hang", "Timeout"),
        ("drop", "ConnectionError"),
    ],
)
def test_a_summarizer_failure_leaves_the_history_unchanged(
    target: CommandTarget, settings: Settings, server: Any, caplog: pytest.LogCaptureFixture, fault: str, reason: str
) -> None:
    server.fault(fault)
    compactor = target(settings)
    messages = history()
    with caplog.at_level("WARNING", logger="compaction_suite.conformance.protocol.implementation"):
        assert compactor.compact(messages, iteration=T) == messages
    event = last_json(compactor)
    assert event["compacted"] is False and event["failure_reason"].startswith(reason)
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert caplog.records[0].getMessage().startswith(f"compaction failed: {reason}")
    assert stderr_shows(target, f"WARNING compaction failed: {reason}")


def test_an_unanswered_tool_call_is_never_compacted(target: CommandTarget, settings: Settings, server: Any) -> None:
    compactor = target(settings)
    messages = history() + tool_round(99)[:1]
    assert compactor.compact(messages, iteration=T) == messages
    assert server.requests == []
    assert "in flight" in last_json(compactor)["skipped_reason"]


def test_nothing_older_than_the_tail_means_no_change(target: CommandTarget, settings: Settings, server: Any) -> None:
    compactor = target(settings)
    messages = [history()[0], *tool_round(1), *tool_round(2)]
    assert compactor.compact(messages, iteration=T) == messages
    assert server.requests == []


def test_an_orphan_tool_message_is_rejected(target: CommandTarget, settings: Settings) -> None:
    compactor = target(settings)
    orphan = [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "call_x", "content": "?"}]
    with pytest.raises(Rejected, match=r"^HIST-3 at message 1: tool result 'call_x' does not follow an assistant tool call$"):
        compactor.compact(orphan, iteration=1)


def test_estimate_tokens_is_chars_over_4_in_code_points(target: CommandTarget, settings: Settings) -> None:
    compactor = target(settings)
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "😀" * 7}, {"type": "image_url", "image_url": {"url": "x" * 400}}]},
        {"role": "assistant", "content": "abc", "name": "bot", "refusal": "no",
         "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
    ]
    assert compactor.estimate_tokens(messages) == (7 + 3 + 3 + 2 + 1 + 2) // 4
