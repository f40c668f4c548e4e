"""The OpenAI Agents SDK's ``Runner`` path through ``previous_response_id``, and the session read limit,
proven with the SDK's own loop (issue 21, points 1 and 4).

The agent model is the SDK's ``OpenAIResponsesModel`` on ``tests/responses_endpoint.py``, a stand-in
Responses API on 127.0.0.1 (a TEST DOUBLE) that keeps response chains and refuses what the real API
refuses (HTTP 400 for a chain with an unanswered call, openai/openai-agents-python#2317; HTTP 404 for a
response it did not store, #2333). The compaction session compacts through the same server.
"""

from __future__ import annotations

import asyncio

import pytest
from responses_endpoint import ResponsesEndpoint, unanswered

from compaction_suite.conformance.formats import responses as responses_format
from compaction_suite.conformance.settings import Settings, connected
from compaction_suite.conformance.summarizer_server import SummarizerServer

TURNS = 3
INSTRUCTIONS = "You are a coding agent. (loop test)"


def read_file(path: str) -> str:
    """Read a file (the loop tests' tool)."""
    return f"contents of {path}"


def _run(endpoint, *, mode: str, store: bool, streamed: bool):
    from agents import Agent, ModelSettings, Runner, SQLiteSession, function_tool, set_tracing_disabled
    from agents.memory import OpenAIResponsesCompactionSession
    from agents.models.openai_responses import OpenAIResponsesModel
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    compactions: list[tuple[list, list]] = []

    class Recording(OpenAIResponsesCompactionSession):
        async def run_compaction(self, args=None, *, wrapper=None):
            before = await self.underlying_session.get_items()
            await super().run_compaction(args, wrapper=wrapper)
            after = await self.underlying_session.get_items()
            if after != before:
                compactions.append((before, after))

    async def main():
        client = AsyncOpenAI(api_key="test-double", base_url=endpoint.base_url, max_retries=0)
        model = OpenAIResponsesModel(model="gpt-4.1", openai_client=client)
        agent = Agent(name="loop", instructions=INSTRUCTIONS, model=model, tools=[function_tool(read_file)], model_settings=ModelSettings(store=store))
        session = Recording(
            "loop", SQLiteSession("loop"), client=client, model="gpt-4.1", compaction_mode=mode,
            should_trigger_compaction=lambda context: len(context["compaction_candidate_items"]) >= 4,
        )  # fmt: skip
        for turn in range(TURNS):
            if streamed:
                result = Runner.run_streamed(agent, f"turn {turn}: read the files", session=session)
                async for _ in result.stream_events():
                    pass
            else:
                await Runner.run(agent, f"turn {turn}: read the files", session=session)
        await client.close()

    asyncio.run(main())
    return compactions


@pytest.mark.parametrize(
    ("mode", "store", "streamed"),
    [("previous_response_id", True, False), ("previous_response_id", True, True), ("auto", True, True), ("auto", False, False)],
)
def test_openai_agents_runner_compacts_complete_chains_only(mode, store, streamed):
    """The Runner's compaction through ``previous_response_id`` (or ``input`` for an unstored response, in
    ``auto`` mode): the server never refuses a compaction, each compacts a chain whose calls all have
    their outputs (``called: between_rounds``), and the session ends holding the compaction item."""
    pytest.importorskip("agents.memory", reason="the OpenAI Agents SDK is not installed (pip install -e '.[openai-agents]')")
    with ResponsesEndpoint() as endpoint:
        compactions = _run(endpoint, mode=mode, store=store, streamed=streamed)
        compacts = [body for path, body in endpoint.requests if path.endswith("/compact")]
        refusals = endpoint.refusals
        chains = [endpoint.stored.get(body.get("previous_response_id"), body.get("input") or []) for body in compacts]
    assert compacts and compactions, "the session never compacted"
    assert refusals == [], refusals
    assert all(unanswered(chain) is None for chain in chains)
    by_reference = [b for b in compacts if b.get("previous_response_id")]
    assert bool(by_reference) is (mode == "previous_response_id" or store), compacts  # auto + store=False sends input
    for before, after in compactions:
        assert not responses_format.in_flight(before)
        assert any(responses_format.kind(i) == "compaction" for i in after)


def test_openai_agents_session_limit_compacts_a_window_and_drops_the_rest():
    """``SessionSettings(limit=N)`` on the underlying session (a documented read limit): the compaction
    session sends only the last N items to the compact endpoint and then replaces the *whole* store with
    the result, so the older items (user messages included) are gone and stood for by nothing
    (loss; openai/openai-agents-python#5010, reported at 0.22)."""
    pytest.importorskip("agents.memory", reason="the OpenAI Agents SDK is not installed (pip install -e '.[openai-agents]')")
    from compaction_suite.adapters.openai_agents import responses_compaction

    items = []
    for i in range(6):
        items += [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"question {i}"}]},
            {"type": "function_call", "call_id": f"call_{i}", "name": "read_file", "arguments": "{}"},
            {"type": "function_call_output", "call_id": f"call_{i}", "output": f"contents {i}"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": f"answer {i}", "annotations": []}]},
        ]
    with SummarizerServer() as endpoint:
        settings = connected(Settings(), endpoint.base_url)
        whole = asyncio.run(responses_compaction(settings, threshold=4).compact(items, iteration=1))
        windowed = asyncio.run(responses_compaction(settings, threshold=4, session_limit=8).compact(items, iteration=1))
        sent = endpoint.bodies[-1]["input"]
    users = lambda out: [i["content"][0]["text"] for i in out if i.get("role") == "user"]  # noqa: E731
    assert users(whole) == [f"question {i}" for i in range(6)]
    assert len(sent) == 8 and users(windowed) == ["question 4", "question 5"]  # questions 0-3: neither sent nor kept
