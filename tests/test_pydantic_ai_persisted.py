"""pydantic-ai's ``OpenAICompaction`` across a turn whose history the user keeps in a UI protocol
(``adapters/pydantic_ai.py``, ``openai_compaction(persisted="vercel_ai")``): the turn that ends the history
compacts, its messages go through ``VercelAIAdapter.dump_messages`` and ``load_messages`` as a ``useChat``
frontend holds them, and the next turn's request is read on the suite's Responses double.

pydantic/pydantic-ai#6123: before pydantic-ai-slim 2.27.0 (#7287) the Vercel AI adapter dropped every
``CompactionPart`` on dump, so the next turn's request carried neither the compaction item nor what it
replaced (CORE-18 ``summary-lost``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("pydantic_ai.ui.vercel_ai", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")

from packaging.version import Version

from compaction_suite.adapters._common import installed
from compaction_suite.conformance.settings import Settings, connected

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _finished_turns(turns: int) -> list[dict[str, Any]]:
    """A Responses history of ``turns`` finished turns (a question, a call, its output, an answer), then a
    question answered without a tool: the turn that ends the history starts at a user prompt, where the
    compaction runs before its one request (mid-turn, the compact endpoint is sent a call without its output)."""
    items: list[dict[str, Any]] = [{"role": "developer", "content": "You are a coding agent. (persisted test)"}]
    for i in range(turns):
        items += [
            {"type": "message", "role": "user", "content": f"Question {i} about module m{i}"},
            {"type": "function_call", "id": f"fc_{i}", "call_id": f"call_{i}", "name": "read_file", "arguments": json.dumps({"path": f"m{i}.py"}), "status": "completed"},
            {"type": "function_call_output", "call_id": f"call_{i}", "output": f"def f{i}(): ...\n" * 20},
            {"type": "message", "id": f"msg_{i}", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": f"Module {i}.", "annotations": []}]},
        ]
    return [
        *items,
        {"type": "message", "role": "user", "content": "Which module was longest?"},
        {"type": "message", "id": "msg_last", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "Module 0.", "annotations": []}]},
    ]


def _next_request(server: Any, persisted: str | None) -> list[dict[str, Any]]:
    from compaction_suite.adapters.pydantic_ai import openai_compaction

    compactor = openai_compaction(connected(Settings(), server.base_url), stateless=True, message_count_threshold=4, persisted=persisted)
    return list(asyncio.run(compactor.compact(_finished_turns(4), iteration=1)))


def _kinds(items: list[dict[str, Any]]) -> list[str]:
    return [i.get("type", "message") for i in items]


def test_the_next_turn_keeps_the_compaction_in_the_process(server: Any) -> None:
    """Kept as ``result.all_messages()``: the next turn's request opens with the compaction item."""
    out = _next_request(server, None)
    assert _kinds(out).count("compaction") == 1 and len(out) < len(_finished_turns(4))


def test_the_next_turn_after_the_vercel_ai_round_trip(server: Any) -> None:
    """Through the Vercel AI protocol the compaction survives from 2.27.0; before, the request lost it."""
    out = _next_request(server, "vercel_ai")
    fixed = Version(installed("pydantic-ai-slim") or "0") >= Version("2.27.0")
    assert (_kinds(out).count("compaction") == 1) is fixed, _kinds(out)
