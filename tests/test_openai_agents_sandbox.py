"""The OpenAI Agents SDK's sandbox agents and their ``Compaction`` capability (``agents.sandbox``, 0.14.0 on),
proven with the SDK's own loop: ``Runner.run`` on a ``SandboxAgent`` with the SDK's local sandbox client
(``UnixLocalSandboxClient``: a temporary workspace on this machine, no network, no docker).

The agent model is the SDK's ``OpenAIResponsesModel`` on the suite's summarizer TEST DOUBLE, scripted per
request (`openai_agents.scripted_model`); the double compacts server-side where a request's
``context_management`` threshold is reached (the compaction item before the scripted items).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from test_openai_agents_paths import _stored_rounds as _rounds

from compaction_suite.conformance import judges
from compaction_suite.conformance.formats import responses as responses_format
from compaction_suite.conformance.settings import Settings, connected
from compaction_suite.conformance.summarizer_server import SummarizerServer

pytest.importorskip("agents.sandbox.capabilities", reason="the OpenAI Agents SDK's sandbox agents are not installed (openai-agents 0.14.0 on)")


def _kinds(items: list[dict]) -> list[str | None]:
    return [responses_format.kind(i) for i in items]


def test_the_sandbox_agents_loop_cuts_the_next_turns_input_at_the_newest_compaction_item():
    """The SDK's own loop, no adapter: a ``SandboxAgent`` whose ``Compaction`` capability has a static threshold
    sends ``context_management`` at it on every request; the double compacts the step's request (its items before the
    step) and the SDK stores the compaction item in the session; on the next turn the capability's
    ``process_context`` cuts the model's input at the newest compaction item: the turns before it are sent no more."""
    import agents
    import openai
    from agents.models import openai_responses
    from agents.run_config import SandboxRunConfig
    from agents.sandbox import SandboxAgent
    from agents.sandbox.capabilities import Compaction, Filesystem, Shell, StaticCompactionPolicy
    from agents.sandbox.sandboxes.unix_local import UnixLocalSandboxClient

    from compaction_suite.adapters.openai_agents import COMPACT_MODEL, scripted_model

    items = _rounds("about the repository layout " * 20)
    said = {"type": "message", "role": "assistant", "id": "msg_next", "status": "completed", "content": [{"type": "output_text", "text": "Noted.", "annotations": []}]}
    received: list[list[dict]] = []

    def answer(given: list[dict]) -> list[dict]:
        received.append(given)
        return [items[-1]] if len(received) == 1 else [said]

    async def run(server: SummarizerServer) -> list[Any]:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        session = agents.SQLiteSession("sandbox-loop")
        await session.add_items(items[:8])
        model = scripted_model(openai_responses, answer)(model=COMPACT_MODEL, openai_client=client)
        agent = SandboxAgent(name="loop", model=model, capabilities=[Filesystem(), Shell(), Compaction(policy=StaticCompactionPolicy(threshold=3800))])
        config = agents.RunConfig(tracing_disabled=True, sandbox=SandboxRunConfig(client=UnixLocalSandboxClient()))
        await agents.Runner.run(agent, items[8:9], session=session, run_config=config)
        await agents.Runner.run(agent, "what next?", session=session, run_config=config)
        stored = [i if isinstance(i, dict) else i.model_dump(exclude_unset=True) for i in await session.get_items()]
        await client.close()
        return stored

    with SummarizerServer() as server:
        stored = asyncio.run(run(server))
        sent = [r.body for r in server.model_requests]
    assert [b.get("context_management") for b in sent] == [[{"type": "compaction", "compact_threshold": 3800}]] * 2
    assert _kinds(stored[8:11]) == ["message", "compaction", "message"] and stored[:9] == items[:9]  # the session keeps every item
    assert _kinds(received[0]) == _kinds(items[:9])  # the first turn: nothing compacted yet, the history sent whole
    assert _kinds(received[1]) == ["compaction", "message", "message"] and received[1][-1]["content"] == "what next?"


@pytest.mark.parametrize("streamed", [False, True])
def test_sandbox_compaction_returns_the_next_turns_input_the_capability_cut(streamed):
    """``openai_agents:sandbox_compaction``: the output is the model's input on the user's next turn, the probe taken
    off: from the compaction item the API answered the history's last step with. The double records no summarizer
    exchange for a server-side compaction (SPEC Part A, Wire formats, Decision: server-side compaction), so CORE-12
    holds such an output back as the note of a target that never summarizes."""
    from compaction_suite.adapters.openai_agents import sandbox_compaction

    items = _rounds("about the repository layout " * 20)
    with SummarizerServer() as server:
        out = asyncio.run(sandbox_compaction(connected(Settings(), server.base_url), threshold=3800, streamed=streamed).compact(items, iteration=1))
        exchanges = server.exchanges
    assert _kinds(out) == ["compaction", "message"] and out[-1]["id"] == items[-1]["id"]
    assert not any(responses_format.FORMAT.structural(items, out).values())
    assert exchanges == []  # what CORE-12 would need, and the fault sweep would meet, is not recorded
    missing = judges.summary_stands_for_answer(responses_format.FORMAT, items, out, exchanges)
    assert missing is not None and missing.reason_id == "summary-without-summarizer-answer"  # held back, not judged


def test_sandbox_compaction_below_the_threshold_sends_the_history():
    """Below the threshold the API compacts nothing and the next turn's input is the history itself."""
    from compaction_suite.adapters.openai_agents import sandbox_compaction

    items = _rounds("short")
    with SummarizerServer() as server:
        out = asyncio.run(sandbox_compaction(connected(Settings(), server.base_url), threshold=10**6).compact(items, iteration=1))
        assert server.exchanges == []
    assert _kinds(out) == _kinds(items) and [i.get("call_id") for i in out] == [i.get("call_id") for i in items]


def test_sandbox_compaction_is_refused_where_the_release_has_no_sandbox_agents(monkeypatch):
    from compaction_suite.adapters import openai_agents
    from compaction_suite.adapters._common import CannotDrive

    monkeypatch.setattr(openai_agents, "_sandbox_modules", lambda: None)
    with pytest.raises(CannotDrive, match=r"before 0\.14\.0"):
        openai_agents.sandbox_compaction(Settings())
