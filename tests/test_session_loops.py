"""Stored sessions (SPEC STORE-13..15, STORE-18), shown with the frameworks' own objects (issue 21).

Strands: an ``Agent`` with ``SummarizingConversationManager`` under a ``FileSessionManager`` summarizes
in its own loop (proactive compression before a model call; the scripted model of
``tests/test_adapter_format_loops.py``, a TEST DOUBLE), then an ``Agent`` rebuilt on the same session
restores it: what the adapter's ``summarizing_session`` checks (STORE-15). OpenAI Agents SDK: the
adapter's session is the object ``Runner`` writes to and compacts through (``add_items``,
``run_compaction``), on a file ``SQLiteSession`` that a second ``SQLiteSession`` reads back.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from test_adapter_format_loops import INSTRUCTIONS, TURNS, _scripted_strands_model, read_file

from compaction_suite.conformance.settings import Settings, connected
from compaction_suite.conformance.summarizer_server import SummarizerServer


def _strands_agent(folder: str, model, pin_first: int | None):
    from strands import Agent, tool
    from strands.agent.conversation_manager import SummarizingConversationManager
    from strands.session.file_session_manager import FileSessionManager

    pinned: dict[str, Any] = {"pin_first": pin_first} if pin_first is not None else {}
    manager = SummarizingConversationManager(preserve_recent_messages=2, proactive_compression={"compression_threshold": 0.5}, **pinned)
    session = FileSessionManager(session_id="loop", storage_dir=folder)
    return Agent(agent_id="loop", model=model, system_prompt=INSTRUCTIONS, tools=[tool(read_file)], conversation_manager=manager, session_manager=session, callback_handler=None)


def _said(messages: list[dict]) -> list[tuple[str, list]]:
    return [(m["role"], m["content"]) for m in messages]


@pytest.mark.parametrize("pin_first", [None, 2])
def test_strands_agent_restored_after_summarizing_in_its_loop(tmp_path, pin_first):
    """Without ``pin_first`` the rebuilt agent holds what the summarizing agent held; with ``pin_first=2``
    it does not (strands-agents/harness-sdk#4027, open at 1.62.0: the restore reads the stored messages
    from ``removed_message_count``, which does not count the pinned head), as STORE-15 reports it
    through ``strands:summarizing_session``."""
    pytest.importorskip("strands.session.file_session_manager", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    model = _scripted_strands_model()
    agent = _strands_agent(str(tmp_path), model, pin_first)
    for turn in range(TURNS):
        agent(f"turn {turn}: read the files")
    assert model.summaries, "proactive compression never fired"
    restored = _strands_agent(str(tmp_path), _scripted_strands_model(), pin_first)
    if pin_first is None:
        assert _said(restored.messages) == _said(agent.messages)
    else:
        assert _said(restored.messages) != _said(agent.messages)  # in the loop a toolResult of the summarized range even comes back orphaned


def test_strands_session_adapter_fails_store_15_only_with_pin_first(tmp_path):
    """The adapter's session, driven as STORE-15 drives it, on one history: the reopened session
    differs with ``pin_first=2`` and not without it (the loop test above shows the same in Strands' loop)."""
    pytest.importorskip("strands.session.file_session_manager", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    from compaction_suite.adapters.strands import summarizing_session

    history = {"messages": [m for i in range(5) for m in ({"role": "user", "content": f"question {i}"}, {"role": "assistant", "content": [{"type": "text", "text": f"answer {i}"}]})]}
    results = {}
    with SummarizerServer() as server:
        settings = connected(Settings(), server.base_url)
        for pin_first in (None, 2):
            target = summarizing_session(settings, pin_first=pin_first)
            folder = str(tmp_path / f"pin-{pin_first}")

            async def steps(target=target, folder=folder):
                session = target.session(folder)
                await session.append(history)
                session.compact()
                return session.load(), target.session(folder).load()

            results[pin_first] = asyncio.run(steps())
    (view, again), (pinned_view, pinned_again) = results[None], results[2]
    assert any("answer 0" not in str(m) for m in view["messages"]) and view != history  # compacted
    assert again == view
    assert pinned_again != pinned_view and len(pinned_again["messages"]) == len(pinned_view["messages"])


def test_strands_session_adapter_fails_store_15_with_a_message_pinned_past_the_head(tmp_path):
    """``pin=2``: the agent pins its third user message (``metadata.custom.pinned``, Strands' own
    ``pin_message``) after appending it; the reduction keeps it in memory, but the marker never reached
    the store, so the reopened session gives other history (strands-agents/harness-sdk#4088, at 1.62.0)."""
    pytest.importorskip("strands.agent.conversation_manager.compression.pin_message", reason="Strands Agents >= 1.54 is not installed")
    from compaction_suite.adapters.strands import summarizing_session

    history = {"messages": [m for i in range(5) for m in ({"role": "user", "content": f"question {i}"}, {"role": "assistant", "content": [{"type": "text", "text": f"answer {i}"}]})]}
    with SummarizerServer() as server:
        target = summarizing_session(connected(Settings(), server.base_url), pin=2)

        async def steps():
            session = target.session(str(tmp_path))
            await session.append(history)
            session.compact()
            return session.load(), target.session(str(tmp_path)).load()

        view, again = asyncio.run(steps())
    assert "question 2" in str(view["messages"][0]) and "answer 0" not in str(view)  # kept ahead of the summary, in memory
    assert again != view


def test_openai_agents_runner_writes_and_compacts_through_the_adapters_session(tmp_path):
    """``Runner.run`` with the adapter's session (``openai_agents:responses_session``): the Runner stores
    each turn through it and compacts through its ``run_compaction``; a second ``SQLiteSession`` on the
    file reads back what the session gives (what STORE-15 reopens)."""
    pytest.importorskip("agents.memory", reason="the OpenAI Agents SDK is not installed (pip install -e '.[openai-agents]')")
    from agents import Agent, Runner, SQLiteSession, function_tool, set_tracing_disabled
    from openai import AsyncOpenAI
    from scripted_agent import agent_model

    from compaction_suite.adapters.openai_agents import responses_session

    set_tracing_disabled(True)
    path = str(tmp_path / "session.db")
    with SummarizerServer() as endpoint:
        settings = connected(Settings(), endpoint.base_url)

        async def main():
            session = responses_session(settings, threshold=2).session(path)
            client = AsyncOpenAI(api_key="test-double", base_url=endpoint.base_url, max_retries=0)
            agent = Agent(name="loop", instructions=INSTRUCTIONS, model=agent_model(client), tools=[function_tool(read_file)])
            for turn in range(3):
                await Runner.run(agent, f"turn {turn}", session=session._session)
            held = await session.load()
            await session.close()
            await client.close()
            return held, await SQLiteSession("compaction-suite", path).get_items()

        held, again = asyncio.run(main())
        compacts = [e for e in endpoint.exchanges if e.api == "compact"]
    assert compacts, "the Runner never compacted through the session"
    assert any(item.get("type") == "compaction" for item in held)
    assert again == held


QUESTION = "What is 2 + 2? (the question taken back)"
ANSWER = "It is 5. (the answer taken back)"


def _runner_session_after_correction(tmp_path, *, forced_id: bool) -> tuple[list, list, bool]:
    """The SDK's documented correction on the adapter's ``runner_session``: a turn the ``Runner`` writes
    (its model scripted through the double, which stores the response chain), then ``pop_item`` twice
    (the answer, then the question) and the manual ``run_compaction``. ``forced_id``: the compaction names
    the popped turn's response id itself (what a session that kept it does, openai-agents-python#4867).
    Returns (what the session holds after, the compaction requests as the double resolved them, whether
    the double stored a chain holding the popped turn)."""
    pytest.importorskip("agents.memory", reason="the OpenAI Agents SDK is not installed (pip install -e '.[openai-agents]')")
    from compaction_suite.adapters.openai_agents import runner_session

    turn = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": QUESTION}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": ANSWER}]},
    ]
    with SummarizerServer() as endpoint:
        settings = connected(Settings(), endpoint.base_url)

        async def main():
            session = runner_session(settings).session(str(tmp_path / "session.db"))
            try:
                await session.append([{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hello."}]}])
                await session.append(turn)
                response_id = session._session._response_id
                assert [await session.pop() for _ in range(2)][-1]["content"][0]["text"] == QUESTION
                if forced_id:
                    await session._session.run_compaction({"force": True, "response_id": response_id, "compaction_mode": "previous_response_id"})
                else:
                    await session.compact()
                return await session.load(), response_id
            finally:
                await session.close()

        held, response_id = asyncio.run(main())
        sent = [e.body for e in endpoint.exchanges if e.api == "compact"]
        chained = endpoint.stored(response_id)
    return held, sent, chained


def test_openai_agents_runner_session_pop_then_compaction_brings_nothing_back(tmp_path):
    """At the installed release (0.22.2 onward ``pop_item`` forgets the response id) the manual
    compaction after the correction compacts the session's own items: nothing of the popped turn in
    what it sends or what the session holds (STORE-18)."""
    held, sent, chained = _runner_session_after_correction(tmp_path, forced_id=False)
    assert chained, "the Runner's turn was not stored as a response chain: the clause would see no stale chain"
    assert sent and "previous_response_id" not in json.dumps(sent)
    assert QUESTION not in json.dumps(sent) and QUESTION not in json.dumps(held) and ANSWER not in json.dumps(held)


def test_compaction_by_the_popped_turns_response_brings_it_back(tmp_path):
    """The instrument STORE-18 reads: compacting by the response id the popped turn was answered in (what
    0.22.0 and 0.22.1 do on their own) sends the chain holding the popped question and answer, and the
    session holds them again."""
    held, sent, _ = _runner_session_after_correction(tmp_path, forced_id=True)
    assert QUESTION in json.dumps(sent) and ANSWER in json.dumps(sent)
    assert QUESTION in json.dumps(held) and ANSWER in json.dumps(held)


def test_strands_context_manager_session_restores_the_unreduced_history(tmp_path):
    """``summarizing_session(manager="context_manager")``, driven as STORE-15 drives it: the context manager's
    reduction changes what the agent holds, and an agent rebuilt on the same ``FileSessionManager`` session
    holds the history as it was before (strands-agents/harness-sdk#4270: the reductions never reach the
    session). Strands >= 1.55."""
    pytest.importorskip("strands.session.file_session_manager", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    from compaction_suite.adapters._common import release
    from compaction_suite.adapters.strands import summarizing_session

    if release("strands-agents") < (1, 55):
        pytest.skip("Agent(context_manager=...) arrived in Strands 1.55")
    history = {"messages": [m for i in range(8) for m in ({"role": "user", "content": f"question {i} " * 20}, {"role": "assistant", "content": [{"type": "text", "text": f"answer {i} " * 20}]})]}
    with SummarizerServer() as server:
        target = summarizing_session(connected(Settings(), server.base_url), manager="context_manager")

        async def steps():
            session = target.session(str(tmp_path))
            await session.append(history)
            before = session.load()
            session.compact()
            return before, session.load(), target.session(str(tmp_path)).load()

        before, view, again = asyncio.run(steps())
    assert view != before  # the context manager reduced what the agent holds
    assert again == before  # the rebuilt agent holds the unreduced history
