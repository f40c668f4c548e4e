"""The OpenAI Agents SDK's ``ToolOutputTrimmer`` in the SDK's own loop: ``Runner.run`` with
``RunConfig(call_model_input_filter=ToolOutputTrimmer(...))``, the agent model the SDK's
``OpenAIResponsesModel`` on the suite's summarizer TEST DOUBLE, scripted per request
(``tests/scripted_agent.py``: two rounds of ``read_file`` calls a turn, then a text answer).

What the model receives is what ``openai_agents:tool_output_trimmer`` returns for the same items, and
under ``max_output_chars=40`` the SDK sends an older output shortened to more than 40 characters
(SPEC CORE-40; openai/openai-agents-python#4622).
"""

from __future__ import annotations

import asyncio

import pytest
from scripted_agent import agent_model

from compaction_suite.conformance import judges
from compaction_suite.conformance.formats import get
from compaction_suite.conformance.formats import responses as responses_format
from compaction_suite.conformance.settings import Settings, connected
from compaction_suite.conformance.summarizer_server import SummarizerServer

pytest.importorskip("agents.extensions", reason="the OpenAI Agents SDK is not installed (pip install -e '.[openai-agents]')")

CAP, PREVIEW = 40, 20
OUTPUT = "\n".join(f"{n}\tline {n} of the file" for n in range(1, 13))
"""What ``read_file`` returns: 12 lines, longer than the trimmer's header and preview together."""


def read_file(path: str) -> str:
    """Read a file (the loop test's tool)."""
    return OUTPUT


def _model_inputs(server: SummarizerServer) -> list[list[dict]]:
    from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool, set_tracing_disabled
    from agents.extensions import ToolOutputTrimmer
    from openai import AsyncOpenAI

    set_tracing_disabled(True)

    async def main() -> None:
        client = AsyncOpenAI(api_key="test-double", base_url=server.base_url, max_retries=0)
        agent = Agent(name="loop", instructions="You are a coding agent. (loop test)", model=agent_model(client), tools=[function_tool(read_file)])
        config = RunConfig(call_model_input_filter=ToolOutputTrimmer(recent_turns=1, max_output_chars=CAP, preview_chars=PREVIEW))
        session = SQLiteSession("loop")
        for turn in range(2):
            await Runner.run(agent, f"turn {turn}: read the files", session=session, run_config=config)
        await client.close()

    asyncio.run(main())
    return [list(r.body["input"]) for r in server.model_requests]


def test_the_runner_sends_the_model_what_the_trimmer_configuration_returns():
    from compaction_suite.adapters.openai_agents import tool_output_trimmer

    with SummarizerServer() as server:
        sent = _model_inputs(server)
        settings = connected(Settings(), server.base_url)
        trimmer = tool_output_trimmer(settings, recent_turns=1, max_output_chars=CAP, preview_chars=PREVIEW)
    last = sent[-1]
    outputs = [i for i in last if responses_format.kind(i) == "function_call_output"]
    shortened = [i for i in outputs if i["output"] != OUTPUT]
    assert shortened and len(shortened) < len(outputs)  # the first turn's outputs, not the current turn's
    history = [{**i, "output": OUTPUT} if i in shortened else i for i in last]
    assert trimmer.compact(history, iteration=1) == last
    assert trimmer.capabilities["trimmed_result_chars"] == CAP


def test_in_the_loop_a_shortened_output_is_over_the_configured_cap():
    """CORE-40 on what the model receives: the SDK keeps its header and a 20-character preview,
    shorter than the output and longer than ``max_output_chars``."""
    with SummarizerServer() as server:
        sent = _model_inputs(server)
    last = sent[-1]
    history = [{**i, "output": OUTPUT} if responses_format.kind(i) == "function_call_output" else i for i in last]
    found = judges.trimmed_results_fit(get("responses"), history, last, CAP)
    assert found is not None and found.reason_id == "trimmed-result-over-cap", found
    assert f"shortened from {len(OUTPUT)} to" in str(found)
