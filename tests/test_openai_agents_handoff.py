"""The OpenAI Agents SDK's handoff with ``RunConfig(nest_handoff_history=True)``, proven with the SDK's own
loop (issue 21, point 1: a compaction path not driven before): the transcript a handoff nests for the next
agent is what ``openai_agents:handoff_history`` returns.

Both agents' models are the SDK's ``OpenAIResponsesModel`` on the suite's summarizer TEST DOUBLE, scripted per
request: the first answers with a handoff (after a reasoning item, as a reasoning model answers), the second
with a text. The double judges each request as the Responses API does (a reasoning item with no item of the
model after it is answered HTTP 400, openai/openai-agents-python#2503).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from compaction_suite.conformance.formats import responses as responses_format
from compaction_suite.conformance.settings import Settings, connected
from compaction_suite.conformance.summarizer_server import SummarizerServer

pytest.importorskip("agents.handoffs", reason="the OpenAI Agents SDK is not installed (pip install -e '.[openai-agents]')")

USER = {"type": "message", "role": "user", "content": "Fix the failing test in parser.py"}
REASONED = [
    USER,
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Read the file first."}], "encrypted_content": "gAAAAAone"},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_file", "arguments": '{"path": "parser.py"}', "status": "completed"},
    {"type": "function_call_output", "call_id": "call_1", "output": "def parse(): pass"},
    {"type": "reasoning", "id": "rs_2", "summary": [{"type": "summary_text", "text": "It is empty."}], "encrypted_content": "gAAAAAtwo"},
    {"type": "message", "role": "assistant", "id": "msg_2", "status": "completed", "content": [{"type": "output_text", "text": "parse() is empty.", "annotations": []}]},
    {"type": "message", "role": "user", "content": "Hand this to the specialist."},
]


def _loop(server: SummarizerServer, history: Any, hosted: list[dict[str, Any]] | None = None) -> Any:
    """The SDK's loop itself, without the adapter: a triage agent hands off to a specialist with
    ``nest_handoff_history=True``; the specialist model's input as the double received it."""
    from agents import Agent, ModelSettings, RunConfig, Runner, handoff
    from agents.models import openai_responses
    from openai import AsyncOpenAI

    from compaction_suite.adapters.openai_agents import scripted_model

    async def main() -> None:
        client = AsyncOpenAI(api_key="test-double", base_url=server.base_url, max_retries=0)
        text = [{"type": "message", "role": "assistant", "id": "msg_specialist", "status": "completed", "content": [{"type": "output_text", "text": "On it.", "annotations": []}]}]
        specialist = Agent(name="specialist", model=scripted_model(openai_responses, lambda _given: text)(model="gpt-4.1", openai_client=client), model_settings=ModelSettings(store=True))
        to_specialist = handoff(specialist)
        step = [
            {"type": "reasoning", "id": "rs_triage", "summary": [], "encrypted_content": "gAAAAAtriage"},
            *(hosted or []),
            {"type": "function_call", "id": "fc_triage", "call_id": "call_triage", "name": to_specialist.tool_name, "arguments": "{}", "status": "completed"},
        ]
        triage = Agent(name="triage", model=scripted_model(openai_responses, lambda _given: step)(model="gpt-4.1", openai_client=client), handoffs=[to_specialist], model_settings=ModelSettings(store=True))
        try:
            await Runner.run(triage, history, run_config=RunConfig(tracing_disabled=True, nest_handoff_history=True), max_turns=3)
        finally:
            await client.close()

    asyncio.run(main())  # a request the double refused would raise here (openai.BadRequestError)
    return server.model_requests[-1].body["input"]


def test_the_handoff_nests_the_transcript_for_the_next_agent():
    """What the specialist's model receives after a handoff in the SDK's own loop has the shape the adapter
    returns for the same history: the transcript nested into assistant summary text, no item the API
    refuses (at this release: 0.9.2 on drops the reasoning items the summary covers)."""
    from compaction_suite.adapters.openai_agents import handoff_history

    with SummarizerServer() as server:
        received = _loop(server, REASONED)
    with SummarizerServer() as server:
        returned = asyncio.run(handoff_history(connected(Settings(), server.base_url)).compact(REASONED, iteration=1))
        assert server.model_requests[-1].body["input"] == returned  # the adapter returns what the next agent's model received
        assert server.exchanges == []  # no summarizer: the SDK nests the transcript itself
    for nested in (received, returned):
        summary = nested[0]
        assert summary["role"] == "assistant" and "<CONVERSATION HISTORY>" in summary["content"]
        assert "parse() is empty." in summary["content"]  # the assistant's newest answer, folded into the summary text
        assert not responses_format.invalid(nested)


def test_the_handoff_step_is_the_same_in_every_process():
    """The scripted handoff step is named from the history, not from a counter (SPEC CORE-8)."""
    from compaction_suite.adapters.openai_agents import _digest

    assert _digest(REASONED) == _digest([dict(i) for i in REASONED]) != _digest(REASONED[:-1])


def test_a_handoff_step_with_hosted_calls_forwards_them_as_the_sdks_loop_does():
    """``hosted_tools``: the handoff step holds the calls the agent's server-run tools made in the same
    response (`hosted_step`), as a triage agent with hosted tools answers; the SDK's own loop given such a
    step sends the next agent's model each hosted call as the adapter returns it, and at this release
    (0.19.0 on, openai/openai-agents-python#3412) never also restates it in a summary message."""
    from compaction_suite.adapters.openai_agents import HOSTED_STEP_KINDS, _digest, handoff_history, hosted_step
    from compaction_suite.conformance import judges

    with SummarizerServer() as server:
        returned = asyncio.run(handoff_history(connected(Settings(), server.base_url), hosted_tools=True).compact(REASONED, iteration=1))
    with SummarizerServer() as server:
        received = _loop(server, REASONED, hosted_step(_digest(REASONED)))
    for nested in (received, returned):
        assert [i.get("type") for i in nested if i.get("type") in HOSTED_STEP_KINDS] == list(HOSTED_STEP_KINDS)
        assert not responses_format.invalid(nested)
    assert judges.restated_calls(responses_format.FORMAT, REASONED, returned) is None


def test_the_next_turn_history_is_what_the_sdk_hands_back():
    """``returned="next_turn"``: the run's history for the user's next turn, the SDK's documented continuation
    (``to_input_list(mode="normalized")`` where the release has it, openai/openai-agents-python#2258): the second
    agent's answer last, and at this release no call both restated in the nested summary and sent (CORE-50)."""
    from compaction_suite.adapters.openai_agents import handoff_history
    from compaction_suite.conformance import judges

    with SummarizerServer() as server:
        returned = asyncio.run(handoff_history(connected(Settings(), server.base_url), returned="next_turn").compact(REASONED, iteration=1))
    assert returned[0]["role"] == "assistant" and "<CONVERSATION HISTORY>" in returned[0]["content"]
    assert returned[-1]["role"] == "assistant" and returned[-1]["content"][0]["text"] == "Taking over."
    assert not responses_format.invalid(returned)
    assert judges.restated_calls(responses_format.FORMAT, REASONED, returned) is None


def test_a_release_without_the_normalized_mode_hands_back_to_input_list():
    """Before 0.12.2 ``to_input_list`` takes no mode: the history is what it returns, items as dicts."""
    from compaction_suite.adapters.openai_agents import next_turn_input

    class Old:
        def to_input_list(self) -> list[Any]:
            return [{"role": "user", "content": "hi"}]

    class New:
        def to_input_list(self, mode: str = "preserve_all") -> list[Any]:
            return [{"role": "user", "content": mode}]

    assert next_turn_input(Old()) == [{"role": "user", "content": "hi"}]
    assert next_turn_input(New()) == [{"role": "user", "content": "normalized"}]
    with pytest.raises(ValueError, match="returned must be"):
        from compaction_suite.adapters.openai_agents import handoff_history

        handoff_history(Settings(), returned="both")


def test_a_chain_of_two_handoffs_with_said_messages_nests_twice():
    """``said`` and ``hops=2``: each handing agent says it transfers (`SAID`, naming the agent it hands to)
    beside its handoff call, and the second agent hands off again, so the third agent's model receives the
    transcript nested twice (the first summary re-read at the second handoff). At this release (0.19.0 on,
    openai/openai-agents-python#3791) the second agent's message reaches the third once, in place, and a user
    message of several lines is carried whole through both hops (#3319): no CORE-50 or CORE-60 finding."""
    from compaction_suite.adapters.openai_agents import NEXT_AGENT, SAID, handoff_history
    from compaction_suite.conformance import judges

    ask = "Fix the failing test in parser.py before the release goes out.\nThe trace points at tokenize() in lexer.py, line 88."
    history = [{"type": "message", "role": "user", "content": ask}, *REASONED[1:]]
    with SummarizerServer() as server:
        returned = asyncio.run(handoff_history(connected(Settings(), server.base_url), said=True, hops=2).compact(history, iteration=1))
        assert len(server.model_requests) == 3  # the first agent, the second, the third
    said = [i for i in returned if i.get("type") == "message" and i.get("id", "").startswith("msg_said_")]
    assert [s["content"][0]["text"] for s in said] == [SAID.format(agent=NEXT_AGENT)]
    assert not responses_format.invalid(returned)
    assert judges.restated_calls(responses_format.FORMAT, history, returned) is None
    assert judges.transcript_whole(responses_format.FORMAT, history, returned) is None
    with pytest.raises(ValueError, match="hops must be 1 or 2"):
        handoff_history(Settings(), hops=3)


def test_a_pasted_document_comes_back_of_a_made_up_role_after_the_second_hop():
    """``said`` and ``hops=2`` on a user message pasting a document's paragraphs (Decision: pasted text): the
    first handoff writes it as a JSON record holding U+2028 as it is, and the second splits the transcript with
    ``str.splitlines`` and reads the broken record as a ``role: text`` line, so the third agent's transcript
    holds it as a record whose role is the broken record's first key ('{"type"' for an input item,
    '{"role"' for an easy input message: openai/openai-agents-python#4787, still so at this release):
    CORE-61 finds it; its letters are all there, so CORE-60 does not."""
    from compaction_suite.adapters.openai_agents import handoff_history
    from compaction_suite.conformance import judges

    ask = "I copied this from the cache design document, does it still hold?\n\nEntries live ten minutes.\u2028A miss reads the database."
    history = [{"type": "message", "role": "user", "content": ask}, *REASONED[1:]]
    with SummarizerServer() as server:
        returned = asyncio.run(handoff_history(connected(Settings(), server.base_url), said=True, hops=2).compact(history, iteration=1))
    found = judges.transcript_roles(responses_format.FORMAT, history, returned)
    assert found is not None and found.reason_id == "transcript-record-role-made-up" and "record of role '{\"" in found
    assert judges.transcript_whole(responses_format.FORMAT, history, returned) is None


def test_a_program_transcript_in_the_history_is_summarized_not_also_sent():
    """A history holding a hosted program's transcript (``program``, a function call and its output whose
    ``caller`` is the program, ``program_output``; `responses_histories.program_transcript`), as the SDK's session
    stores it from 0.19.0 (declared ``programs: held``): the handoff nests it into the summary and forwards none of
    it, so CORE-50 (a call restated by its call id and also sent) holds. openai/openai-agents-python#3878 fixed a
    main branch (after #3833 added programmatic tool calling) that forwarded the program items beside the summary;
    no release held both."""
    import agents

    from compaction_suite.adapters.openai_agents import handoff_history
    from compaction_suite.conformance.judges import restated_calls
    from compaction_suite.conformance.responses_histories import program_transcript

    if not hasattr(agents, "ProgrammaticToolCallingTool"):
        pytest.skip("programmatic tool calling arrived in 0.19.0")
    call, answer = REASONED[2], REASONED[3]
    history = [REASONED[0], REASONED[1], *program_transcript([call], [answer], "gAAAAAfingerprint"), *REASONED[4:]]
    with SummarizerServer() as server:
        compactor = handoff_history(connected(Settings(), server.base_url))
        out = asyncio.run(compactor.compact(history, iteration=1))
    assert compactor.capabilities["programs"] == "held"
    assert not [i for i in out if responses_format.kind(i) in responses_format.PROGRAM_ITEMS or (isinstance(i, dict) and i.get("caller"))]
    assert "program_call_1" in str(out)  # restated in the summary
    assert restated_calls(responses_format.FORMAT, history, out) is None


def test_a_chained_run_returns_the_stored_chain_then_the_next_request():
    """``chained``: the run continues by the server's stored responses (``auto_previous_response_id=True``), so
    what the next agent's model reads is the chain its request names followed by its input, as the API resolves
    it (openai/openai-agents-python#2151). The next request names the first agent's response and sends only what
    that chain lacks; the adapter returns the history, the handoff step and then that input. At this release
    the SDK sends only what the server lacks, and the rewritten history is not among it (from 0.14.1, PR #2747, it also
    turns the nesting off under server-managed continuation): no summary message."""
    from compaction_suite.adapters.openai_agents import handoff_history

    with SummarizerServer() as server:
        returned = asyncio.run(handoff_history(connected(Settings(), server.base_url), chained=True).compact(REASONED, iteration=1))
        first, last = server.model_requests[0].body, server.model_requests[-1].body
    assert "previous_response_id" not in first and last.get("previous_response_id")
    assert returned[: len(REASONED)] == REASONED  # the stored chain: the first request's input, then its output
    assert returned[-len(last["input"]) :] == last["input"]  # then the next request's own input
    assert [i.get("name") for i in returned if i.get("type") == "function_call"][-1].startswith("transfer_to")
    assert not any("<CONVERSATION HISTORY>" in str(i.get("content", "")) for i in returned)
    assert not responses_format.invalid(returned)


def test_chained_needs_stored_responses():
    from compaction_suite.adapters.openai_agents import handoff_history

    with pytest.raises(ValueError, match="chained and conversation need store"):
        handoff_history(Settings(), chained=True, store=False)


def test_a_conversation_run_returns_the_conversation_then_the_next_request():
    """``conversation``: the run continues in a Conversations API conversation (``conversation_id``), which the double
    opens and reads as a stored chain; the next agent's model reads the conversation's items, then its input."""
    from compaction_suite.adapters.openai_agents import handoff_history

    with SummarizerServer() as server:
        returned = asyncio.run(handoff_history(connected(Settings(), server.base_url), conversation=True).compact(REASONED, iteration=1))
        requests = [r.body for r in server.model_requests]
    assert all(r.get("conversation") == requests[0]["conversation"] for r in requests) and requests[0]["conversation"]
    assert returned[: len(REASONED)] == REASONED and returned[-len(requests[-1]["input"]) :] == requests[-1]["input"]
    assert not any("<CONVERSATION HISTORY>" in str(i.get("content", "")) for i in returned)


def test_a_tool_removing_filter_on_a_conversation_is_refused():
    """openai/openai-agents-python#2151: ``remove_all_tools`` drops the handoff's own output from the local history
    while the conversation holds the handoff call: before 0.14.1 the API refuses the next agent's request ("No tool
    output found for function call"); from 0.14.1 the SDK refuses the configuration with its UserError (PR #2747)."""
    import openai
    from agents.exceptions import UserError

    from compaction_suite.adapters.openai_agents import handoff_history

    with SummarizerServer() as server:
        compactor = handoff_history(connected(Settings(), server.base_url), conversation=True, input_filter="remove_all_tools")
        with pytest.raises((openai.BadRequestError, UserError), match=r"No tool output found for function call call_handoff|do not support handoff input filters"):
            asyncio.run(compactor.compact(REASONED, iteration=1))


def test_options_of_the_server_managed_handoff():
    from compaction_suite.adapters.openai_agents import handoff_history

    with pytest.raises(ValueError, match="two server-managed states"):
        handoff_history(Settings(), chained=True, conversation=True)
    with pytest.raises(ValueError, match="input_filter must be one of"):
        handoff_history(Settings(), input_filter="keep_everything")
