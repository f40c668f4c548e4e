"""``pydantic_ai:deduplicate_file_reads``: the harness's ``DeduplicateFileReads`` with the ``file_key`` its docstring
shows (a file reader's calls keyed by their path), driven directly and in pydantic-ai's ``Agent`` loop. No network."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from message_builders import asks, call, reply, result, user

pytest.importorskip("pydantic_ai_harness")

from test_pydantic_ai_loop import settings


def _reads() -> list[dict[str, Any]]:
    """``a.py`` read twice (the first read superseded), ``b.py`` once, then a question."""
    out: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}, user("Fix the build.")]
    for n, path in enumerate(["a.py", "b.py", "a.py"]):
        out += [asks(call(f"r{n}", "readFile", {"path": path})), result(f"r{n}", f"contents {n} of {path}\n" * 5)]
    return [*out, reply("Read."), user("And now?")]


def _tool_texts(messages: list[dict[str, Any]]) -> dict[str, str]:
    return {str(m["tool_call_id"]): str(m["content"]) for m in messages if m.get("role") == "tool"}


def test_a_superseded_read_is_blanked_and_its_call_kept() -> None:
    from compaction_suite.adapters import pydantic_ai

    messages = _reads()
    out = asyncio.run(pydantic_ai.deduplicate_file_reads(settings()).compact(messages, iteration=1))
    texts = _tool_texts(out)
    assert set(texts) == {"r0", "r1", "r2"}  # every call keeps its answer
    assert "contents 0" not in texts["r0"] and "contents 1 of b.py" in texts["r1"] and "contents 2 of a.py" in texts["r2"]
    calls = [c["id"] for m in out for c in m.get("tool_calls") or []]
    assert calls == ["r0", "r1", "r2"]


def test_another_tool_or_a_read_of_another_file_is_left_alone() -> None:
    from compaction_suite.adapters import pydantic_ai

    messages = _reads()
    out = asyncio.run(pydantic_ai.deduplicate_file_reads(settings(), file_tools=["search"]).compact(messages, iteration=1))
    assert _tool_texts(out) == _tool_texts(messages)


def test_in_the_agent_loop_the_superseded_read_is_blanked() -> None:
    from compaction_suite.adapters import pydantic_ai

    messages = [*_reads()[:-2], asks(call("r3", "readFile", {"path": "b.py"})), result("r3", "contents 3 of b.py"), reply("Done.")]
    out = asyncio.run(pydantic_ai.deduplicate_file_reads(settings(), in_agent=True).compact(messages, iteration=1))
    texts = _tool_texts(out)
    assert "contents 1" not in texts["r1"] and "contents 3 of b.py" in texts["r3"]
