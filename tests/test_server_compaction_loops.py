"""The Messages API's server-side compaction driven through the frameworks' own loops on the suite's double
(SPEC Part A, "Wire formats", Decision: the Messages API's server-side compaction; ANTH-7, COST-1):
LangChain's ``create_agent`` on ``ChatAnthropic`` (streamed and not) and pydantic-ai's ``AnthropicCompaction``
(where the installed pydantic-ai and anthropic SDK import together)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from compaction_suite.conformance.formats import anthropic
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.suite import probe_history
from compaction_suite.conformance.summarizer_server import SummarizerServer

ROUNDS = 384
"""Some 60,000 tokens by the double's count: past the API's minimum trigger (the probe's largest size)."""


class _Outside:
    system_outside = True


def history(rounds: int, *, ends_in_calls: bool) -> dict[str, Any]:
    request = {"system": "You are a coding agent.", **anthropic.from_chat(probe_history(_Outside(), rounds))}  # type: ignore[arg-type]
    if ends_in_calls:  # the last round ends with the tool's result: the next request answers it
        request["messages"] = request["messages"][:-1]
    return request


@pytest.fixture(scope="module")
def server() -> Iterator[SummarizerServer]:
    with SummarizerServer() as srv:
        yield srv


def settings(server: SummarizerServer) -> Settings:
    server.reset()
    return Settings().with_(base_url=server.base_url, summarizer_timeout=30.0)


@pytest.mark.parametrize("stream", [False, True], ids=["invoke", "stream_mode-messages"])
@pytest.mark.parametrize("ends_in_calls", [True, False], ids=["after-tool-results", "after-final-answer"])
def test_langchain_agent_sends_the_compaction_block_back(server: SummarizerServer, stream: bool, ends_in_calls: bool) -> None:
    pytest.importorskip("langchain_anthropic")
    from compaction_suite.adapters import langchain

    compactor = langchain.server_compaction(settings(server), stream=stream)
    given = history(ROUNDS, ends_in_calls=ends_in_calls)
    out = compactor.compact(given, iteration=1)
    first = out["messages"][0]
    assert first["role"] == "assistant" and first["content"][0]["type"] == "compaction"
    assert first["content"][0]["content"] == server.exchanges[0].answer
    assert out["messages"][1:] == given["messages"][len(given["messages"]) - len(out["messages"]) + 1 :]
    assert [s.api for s in server.served] == ["compaction", "model"]
    assert anthropic.check_compaction_blocks(given, out["messages"]) is None  # langchain-anthropic >= 1.7.9 strips the stream's index


def test_langchain_agent_below_the_trigger_returns_the_history(server: SummarizerServer) -> None:
    pytest.importorskip("langchain_anthropic")
    from compaction_suite.adapters import langchain

    given = history(12, ends_in_calls=True)
    assert langchain.server_compaction(settings(server)).compact(given, iteration=1) == given
    assert [s.api for s in server.served] == ["model"] and not server.exchanges


def test_pydantic_ai_reports_the_usage_of_both_iterations(server: SummarizerServer) -> None:
    """pydantic-ai-slim >= 1.81 sums ``usage.iterations`` (pydantic/pydantic-ai#5065): the run's usage is what was billed."""
    try:
        from compaction_suite.adapters import pydantic_ai

        compactor = pydantic_ai.anthropic_compaction(settings(server))
    except ImportError as error:
        pytest.skip(f"pydantic-ai's Anthropic model does not import here: {error}")
    out = asyncio.run(compactor.compact(history(ROUNDS, ends_in_calls=True), iteration=1))
    assert out["messages"][0]["content"][0]["type"] == "compaction"
    billed = (sum(s.input_tokens for s in server.served), sum(s.output_tokens for s in server.served))
    assert compactor.reported_usage() == {"input_tokens": billed[0], "output_tokens": billed[1]}
