"""The OpenAI Agents SDK's ``EncryptedSession`` TTL (``agents.extensions.memory``), proven with the SDK's own loop:
each item is its own Fernet token, dropped on read once older than ``ttl``, so a call written when the run parked
for approval expires before the output written when the user approved: the next turn sends the output without its
call, which the API refuses ("No tool call found for function call output with call_id ...").

The clock is a TEST DOUBLE (`openai_agents._FernetClock`: the ``time.time()`` that ``cryptography.fernet`` reads);
the agent model is the SDK's ``OpenAIResponsesModel`` on the suite's summarizer TEST DOUBLE, scripted per request.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from compaction_suite.conformance.formats import responses as responses_format
from compaction_suite.conformance.settings import Settings, connected
from compaction_suite.conformance.summarizer_server import SummarizerServer

pytest.importorskip("agents.extensions.memory", reason="the OpenAI Agents SDK is not installed (pip install -e '.[openai-agents]')")
pytest.importorskip("cryptography.fernet", reason="EncryptedSession needs cryptography")

CALL = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "deploy", "arguments": "{}", "status": "completed"}
SAID = {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed", "content": [{"type": "output_text", "text": "Deployed.", "annotations": []}]}


def test_the_runner_sends_an_output_whose_call_the_ttl_dropped_and_the_api_refuses_it():
    """The SDK's own loop, no adapter: park on a call needing approval, approve 300 s later, and 301 s after that
    (the call 601 s old, past the default ``ttl=600``; its output 301 s) the next turn's input is the output without
    its call; the double refuses it as the API does and ``Runner.run`` raises."""
    import agents
    import openai
    from agents.extensions.memory import EncryptedSession
    from agents.models import openai_responses

    from compaction_suite.adapters.openai_agents import CLOCK_START, COMPACT_MODEL, ENCRYPTION_KEY, _FernetClock, scripted_model

    seen: list[list[dict]] = []

    def answer(given: list[dict]) -> list[dict]:
        seen.append(given)
        return [CALL] if len(seen) == 1 else [SAID]

    async def deploy(_context, _arguments: str) -> str:
        return "deployed v2"

    async def run(server: SummarizerServer) -> list[Any]:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        session = EncryptedSession("ttl-loop", agents.SQLiteSession("ttl-loop"), encryption_key=ENCRYPTION_KEY, ttl=600)
        schema = {"type": "object", "properties": {}, "additionalProperties": True}
        tool = agents.FunctionTool(name="deploy", description="deploy", params_json_schema=schema, on_invoke_tool=deploy, strict_json_schema=False, needs_approval=True)
        agent = agents.Agent(name="loop", model=scripted_model(openai_responses, answer)(model=COMPACT_MODEL, openai_client=client), tools=[tool])
        config = agents.RunConfig(tracing_disabled=True)
        with _FernetClock(CLOCK_START) as clock:
            parked = await agents.Runner.run(agent, "deploy please", session=session, run_config=config)
            assert parked.interruptions
            clock.now += 300
            state = parked.to_state()
            for interruption in parked.interruptions:
                state.approve(interruption)
            await agents.Runner.run(agent, state, session=session, run_config=config)
            clock.now += 301
            read = await session.get_items()
            with pytest.raises(openai.BadRequestError, match="No tool call found for function call output with call_id call_1"):
                await agents.Runner.run(agent, "and now?", session=session, run_config=config)
        await client.close()
        return read

    with SummarizerServer() as server:
        read = asyncio.run(run(server))
    assert [responses_format.kind(i) for i in read] == ["function_call_output", "message"]
    assert [responses_format.kind(i) for i in seen[-1]] == ["function_call_output", "message", "message"]


def test_encrypted_session_returns_the_next_turns_input_the_ttl_left():
    """``openai_agents:encrypted_session``: a history ending in a step of calls and their outputs comes back as the
    outputs alone (everything written when the run parked has expired), which RESP-1 refuses; a history whose last
    step makes no call is returned unchanged."""
    from compaction_suite.adapters.openai_agents import encrypted_session

    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "deploy please"}]}
    output = {"type": "function_call_output", "call_id": "call_1", "output": "deployed v2"}
    with SummarizerServer() as server:
        compactor = encrypted_session(connected(Settings(), server.base_url))
        out = asyncio.run(compactor.compact([user, CALL, output], iteration=1))
        said = [user, SAID]
        assert asyncio.run(compactor.compact(said, iteration=1)) == said
    assert out == [output]
    assert responses_format.FORMAT.structural([user, CALL, output], out)["RESP-1"] is not None


def test_encrypted_session_is_refused_without_approvals(monkeypatch):
    import agents

    from compaction_suite.adapters._common import CannotDrive
    from compaction_suite.adapters.openai_agents import encrypted_session

    monkeypatch.delattr(agents, "RunState")
    with pytest.raises(CannotDrive, match=r"before 0\.8\.0"):
        encrypted_session(Settings())
