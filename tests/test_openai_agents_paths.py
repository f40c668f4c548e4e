"""The OpenAI Agents SDK's ``Runner`` path through ``previous_response_id``, and the session read limit,
proven with the SDK's own loop (issue 21, points 1 and 4).

The agent model is the SDK's ``OpenAIResponsesModel`` on the suite's summarizer TEST DOUBLE, scripted
per request (``tests/scripted_agent.py``: tool rounds, then a text answer). The double keeps response chains and refuses what the real API refuses
(`conformance.response_chains`: HTTP 400 for a chain with an unanswered call,
openai/openai-agents-python#2317; for a response it did not store, #2333). The compaction session
compacts through the same server.
"""

from __future__ import annotations

import asyncio
from importlib.metadata import version

import pytest
from packaging.version import Version
from scripted_agent import agent_model

from compaction_suite.conformance.formats import responses as responses_format
from compaction_suite.conformance.settings import Settings, connected
from compaction_suite.conformance.summarizer_server import SummarizerServer

pytest.importorskip("agents.memory", reason="the OpenAI Agents SDK is not installed (pip install -e '.[openai-agents]')")

TURNS = 3
INSTRUCTIONS = "You are a coding agent. (loop test)"


def read_file(path: str) -> str:
    """Read a file (the loop tests' tool)."""
    return f"contents of {path}"


def _run(server: SummarizerServer, *, mode: str, store: bool, streamed: bool):
    from agents import Agent, ModelSettings, Runner, SQLiteSession, function_tool, set_tracing_disabled
    from agents.memory import OpenAIResponsesCompactionSession
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
        client = AsyncOpenAI(api_key="test-double", base_url=server.base_url, max_retries=0)
        model = agent_model(client)
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
    ``auto`` mode): the double never refuses a compaction, each compacts a chain whose calls all have
    their outputs (``called: between_rounds``), and the session ends holding the compaction item."""
    with SummarizerServer() as server:
        compactions = _run(server, mode=mode, store=store, streamed=streamed)
        compacts = [e for e in server.exchanges if e.api == "compact"]
    assert compacts and compactions, "the session never compacted"
    assert [e.rejected for e in compacts if e.rejected] == []
    assert all(responses_format.in_flight(e.body["input"]) is False for e in compacts)
    by_reference = [e for e in compacts if e.request.body.get("previous_response_id")]
    assert bool(by_reference) is (mode == "previous_response_id" or store), [e.request.body for e in compacts]  # auto + store=False sends input
    for before, after in compactions:
        assert not responses_format.in_flight(before)
        assert any(responses_format.kind(i) == "compaction" for i in after)


def _stored_rounds(about: str = "") -> list[dict]:
    """Three rounds as the Runner stores them (a question, a read_file call with its output, an answer),
    ids and statuses included; ``about`` ends each question."""
    items: list[dict] = []
    for i in range(3):
        items += [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"question {i} {about}".rstrip()}]},
            {"type": "function_call", "id": f"fc_{i}", "call_id": f"call_{i}", "name": "read_file", "arguments": "{}", "status": "completed"},
            {"type": "function_call_output", "call_id": f"call_{i}", "output": f"contents {i}"},
            {"type": "message", "id": f"msg_{i}", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "text": f"answer {i}", "annotations": []}]},
        ]
    return items


def test_the_runner_configuration_compacts_as_the_loop_does():
    """``openai_agents:runner`` replays a history's last step through ``Runner.run``: a step of calls is
    written with its outputs and not compacted (the Runner defers a turn with local tool outputs), a final
    answer is compacted by ``previous_response_id`` as in the loop above."""
    from compaction_suite.adapters.openai_agents import runner

    items = _stored_rounds("about the repository")
    with SummarizerServer() as server:
        settings = connected(Settings(), server.base_url)
        kept = asyncio.run(runner(settings, threshold=4).compact(items[:-1], iteration=1))
        assert kept == items[:-1] and server.exchanges == []
        compacted = asyncio.run(runner(settings, threshold=4).compact(items, iteration=1))
        chained = server.exchanges[-1]
    assert chained.request.body.get("previous_response_id") and chained.rejected is None
    assert chained.body["input"] == items  # the stored chain is the history, as the SDK wrote it
    assert [responses_format.kind(i) for i in compacted][-1] == "compaction"


def test_the_runner_replays_only_steps_its_loop_produces():
    from compaction_suite.adapters.openai_agents import last_step

    user = {"type": "message", "role": "user", "content": "go"}
    call = {"type": "function_call", "call_id": "c1", "name": "t", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "x"}
    said = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}
    assert last_step([user, call, output]) == ([], [user], [call], {"c1": "x"})
    assert last_step([user, call, output, said]) == ([], [user, call, output], [said], {})
    assert last_step([said, user, said]) == ([said], [user], [said], {})
    assert last_step([user, call, said, output]) == ([], [user], [call, said], {"c1": "x"})  # one response: a call and commentary
    assert last_step([user, call, user, output]) is None  # a user message between a call and its output
    assert last_step([user, call]) is None  # a call still without its output
    assert last_step([user, {**call, "type": "custom_tool_call", "input": "x"}, {**output, "type": "custom_tool_call_output"}]) is None
    assert last_step([said]) is None


@pytest.mark.parametrize("streamed", [False, True])
def test_the_runner_stores_a_tool_result_of_content_parts_as_the_history_holds_it(streamed):
    """A step's output that is a list of content parts is stored as that list (the tool returns the SDK's
    ``ToolOutputText``/``ToolOutputImage``/``ToolOutputFileContent``), not as ``str()`` of it, streamed or not;
    a part no tool return stores leaves the history as it is (no run of the SDK's loop ends in it)."""
    import agents

    from compaction_suite.adapters.openai_agents import runner, tool_return

    parts = [{"type": "input_text", "text": "1\timport json"}, {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"}]
    assert tool_return(agents, "x") == "x"
    assert tool_return(agents, [{"type": "input_audio", "input_audio": {"data": "", "format": "wav"}}]) is None
    assert tool_return(agents, [{"type": "input_text", "text": "x", "annotations": []}]) is None  # a field the SDK would drop
    user = {"type": "message", "role": "user", "content": "read it"}
    call = {"type": "function_call", "id": "fc_c1", "call_id": "c1", "name": "readFile", "arguments": "{}", "status": "completed"}
    output = {"type": "function_call_output", "call_id": "c1", "output": parts}
    with SummarizerServer() as server:
        settings = connected(Settings(), server.base_url)
        kept = asyncio.run(runner(settings, threshold=100, streamed=streamed).compact([user, call, output], iteration=1))
        unchanged = [user, call, {**output, "output": [{"type": "input_audio", "input_audio": {"data": "", "format": "wav"}}]}]
        assert asyncio.run(runner(settings, threshold=100, streamed=streamed).compact(unchanged, iteration=1)) == unchanged
    assert [i["output"] for i in kept if i.get("type") == "function_call_output"] == [parts]


@pytest.mark.skipif(Version(version("openai-agents")) < Version("0.16.0"), reason="ModelSettings.context_management arrived in 0.16.0")
@pytest.mark.parametrize("streamed", [False, True])
def test_server_compaction_stores_the_compaction_item_the_response_starts_with(streamed):
    """``server_compaction``: the agent's request carries ``context_management`` at that threshold; the double,
    the input past it, answers the compaction item before the step, and the SDK stores it in the session between
    the turn's input and the step, every earlier item kept (what the Runner reads into the next turn)."""
    from compaction_suite.adapters.openai_agents import runner

    items = _stored_rounds("about the repository layout " * 20)
    with SummarizerServer() as server:
        settings = connected(Settings(), server.base_url)
        kept = asyncio.run(runner(settings, server_compaction=200, streamed=streamed).compact(items, iteration=1))
        sent = [r.body for r in server.model_requests]
    assert [b.get("context_management") for b in sent] == [[{"type": "compaction", "compact_threshold": 200}]]
    assert [responses_format.kind(i) for i in kept[-2:]] == ["compaction", "message"]
    assert kept[:-2] == items[:-1] and kept[-1]["id"] == items[-1]["id"]
    assert not [e for e in server.exchanges if e.api == "compact"]  # no compaction session: the API compacts


def test_server_compaction_is_refused_where_model_settings_has_no_context_management(monkeypatch):
    import agents

    from compaction_suite.adapters._common import CannotDrive
    from compaction_suite.adapters.openai_agents import runner

    monkeypatch.setattr(agents, "ModelSettings", type("ModelSettings", (), {"__init__": lambda self, store=None: None}))
    with pytest.raises(CannotDrive, match="context_management"):
        runner(Settings(), threshold=100, server_compaction=200)


def test_openai_agents_session_limit_compacts_a_window_and_drops_the_rest():
    """``SessionSettings(limit=N)`` on the underlying session (a documented read limit): the compaction
    session sends only the last N items to the compact endpoint and then replaces the *whole* store with
    the result, so the older items (user messages included) are gone and stood for by nothing
    (loss; openai/openai-agents-python#5010, reported at 0.22)."""
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


def test_the_runner_reads_the_session_through_its_limit():
    """``runner`` with ``session_limit`` (``RunConfig(session_settings=SessionSettings(limit=N))``): the
    Runner reads only the newest N stored items into the model's input, which the double judges as the
    API does. A limit cutting between a call and its output leaves the output without its call; since
    0.20.0 the Runner drops such an output, before it sent it and the API answered HTTP 400 "No tool
    call found for function call output" (openai/openai-agents-python#4322, reported at 0.19.4)."""
    from compaction_suite.adapters.openai_agents import runner

    items = _stored_rounds()
    turn = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "question 3"}]}, {**items[3], "id": "msg_3"}]
    with SummarizerServer() as server:
        settings = connected(Settings(), server.base_url)
        if Version(version("openai-agents")) < Version("0.20.0"):
            with pytest.raises(Exception, match="No tool call found for function call output with call_id call_2"):
                asyncio.run(runner(settings, threshold=100, session_limit=2).compact(items + turn, iteration=1))
            return
        kept = asyncio.run(runner(settings, threshold=100, session_limit=2).compact(items + turn, iteration=1))
        sent = server.model_requests[0].body["input"]
    assert kept[: len(items)] == items  # the limit bounds what the model reads, never what the session stores
    assert [i.get("call_id") or i.get("id") for i in sent if i.get("role") != "user"][:1] == ["msg_2"]  # output_2 dropped: its call was past the limit
    assert not [i for i in sent if responses_format.kind(i) == "function_call_output"]


def test_the_runner_filters_the_models_input_and_keeps_what_the_filter_left_out():
    """``runner`` with ``input_turns`` (``RunConfig(call_model_input_filter=...)`` keeping the newest turn, the
    filter's documented use): the model reads only that turn. Since 0.23.1 the automatic compaction, whose
    exchange covers none of the older stored items, is skipped and every stored item kept; before, the
    session was replaced with the compaction of the filtered exchange, the older turns deleted and stood
    for by nothing (openai/openai-agents-python#5103, reported at 0.22.3)."""
    from compaction_suite.adapters.openai_agents import runner

    items = _stored_rounds()
    turn = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "question 3"}]}, {**items[3], "id": "msg_3"}]
    with SummarizerServer() as server:
        kept = asyncio.run(runner(connected(Settings(), server.base_url), threshold=4, input_turns=1).compact(items + turn, iteration=1))
        sent = server.model_requests[0].body["input"]
    assert [i["content"][0]["text"] for i in sent if i.get("role") == "user"] == ["question 3"]
    users = [i["content"][0]["text"] for i in kept if i.get("role") == "user"]
    if Version(version("openai-agents")) >= Version("0.23.1"):
        assert users == ["question 0", "question 1", "question 2", "question 3"]
    else:
        assert "question 0" not in users


def _run_unless_refused(history: list[dict], options: dict, *, refused_before: str, refusal: str) -> tuple[list, list] | None:
    """``runner(threshold=100, **options)`` compacting ``history`` at the installed release: below
    ``refused_before`` the double refuses the Runner's request in the API's words ``refusal`` (and None is
    returned), else (the output, the model requests the double received)."""
    from compaction_suite.adapters.openai_agents import runner

    with SummarizerServer() as server:
        compactor = runner(connected(Settings(), server.base_url), threshold=100, **options)
        if Version(version("openai-agents")) < Version(refused_before):
            with pytest.raises(Exception, match=refusal):
                asyncio.run(compactor.compact(history, iteration=1))
            return None
        kept = asyncio.run(compactor.compact(history, iteration=1))
        return kept, list(server.model_requests)


def test_the_runner_reads_a_session_an_abandoned_approval_left():
    """``runner`` with ``abandoned``: a run of the SDK's loop in the session ends on a call awaiting approval
    (``needs_approval``, after the reasoning item of a reasoning model), stored without its output, and the
    user sends the history's last turn instead of resuming. The Runner drops the stale call from the model's
    input; since 0.17.1 its reasoning item with it, before the request kept the reasoning item alone and the
    API answered HTTP 400 "… of type 'reasoning' was provided without its required following item"
    (openai/openai-agents-python#3207, reported at 0.17.0). The output leaves the abandoned run's items out."""
    from compaction_suite.adapters.openai_agents import ABANDONED_REQUEST

    reasoning = {"type": "reasoning", "id": "rs_3", "summary": [], "encrypted_content": "gAAAAA3"}
    items = _stored_rounds()
    turn = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "question 3"}]}, reasoning, {**items[3], "id": "msg_3"}]
    ran = _run_unless_refused(items + turn, {"abandoned": True}, refused_before="0.17.1", refusal="of type 'reasoning' was provided without its required following item")
    if ran is None:
        return
    kept, requests = ran
    first, sent = (r.body["input"] for r in requests)
    assert [i["content"] for i in first if i.get("role") == "user"][-1] in (ABANDONED_REQUEST, [{"type": "input_text", "text": ABANDONED_REQUEST}])
    assert not [i for i in sent if "abandoned" in str(i.get("id")) + str(i.get("call_id"))]  # the stale call and its reasoning: not sent
    assert [i.get("id") for i in kept if responses_format.kind(i) == "reasoning"] == ["rs_3"] and ABANDONED_REQUEST not in str(kept)


@pytest.mark.parametrize("behavior", ["stop_on_first_tool", "stop_at_tools"])
def test_the_runner_resumes_an_approved_run_before_the_last_turn(behavior):
    """``runner`` with ``approved``: a run in the session parks on a ``needs_approval`` call of an agent with an
    output guardrail and a ``tool_use_behavior`` other than ``run_llm_again``; the user approves it
    (``RunState.approve``) and resumes, the tool runs, then the user sends the history's last turn. From 0.22.0
    to 0.23.x the resumed run left the call out of the session and the next request held its output alone,
    which the API refuses ("No tool call found for function call output", openai/openai-agents-python#4827);
    0.24.0 keeps the pair. The output leaves the approved run's items out."""
    from compaction_suite.adapters.openai_agents import APPROVED_OUTPUT

    items = _stored_rounds()
    turn = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "question 3"}]}, {**items[3], "id": "msg_3"}]
    deferred = behavior == "stop_at_tools" and Version(version("openai-agents")) >= Version("0.22.0")  # the deferral (#4507) arrived in 0.22.0
    ran = _run_unless_refused(items + turn, {"approved": behavior}, refused_before="0.24.0" if deferred else "0", refusal="No tool call found for function call output")
    if ran is None:
        return
    kept, requests = ran
    last = requests[-1].body["input"]
    approved = [i for i in last if "approved" in str(i.get("call_id"))]
    assert [responses_format.kind(i) for i in approved] == ["function_call", "function_call_output"]
    assert approved[1]["output"] == APPROVED_OUTPUT
    assert "approved" not in str(kept) and responses_format.check_outputs_have_calls(kept) is None


def test_the_runner_refuses_an_unknown_approval_behavior():
    """``approved`` names a ``tool_use_behavior`` of `APPROVALS` or is None."""
    from compaction_suite.adapters.openai_agents import runner

    with pytest.raises(ValueError, match="approved must be one of"):
        runner(Settings(), approved="run_llm_again")


def _kinds(items: list) -> list[str | None]:
    return [responses_format.kind(i) for i in items]


@pytest.mark.parametrize(("streamed", "gated"), [(False, False), (True, False), (False, True), (True, True)])
def test_a_tripped_output_guardrail_leaves_the_steps_calls_and_outputs_stored(streamed, gated):
    """``runner`` with ``tripwire`` (and ``stop_on_first_tool``): the last step's tools run, the first one's
    output is the run's final output, the agent's output guardrail trips on it and the run ends in
    ``OutputGuardrailTripwireTriggered``; with ``gated`` the step's tools need approval, the run parks on
    them, the user approves and resumes it (``run_streamed`` with ``streamed``). The SDK documents that a
    tripwire persists the already-completed tool calls and outputs (docs/guardrails.md, 0.24.0): before 0.19.3
    a streamed run dropped them (openai/openai-agents-python#4148) and a streamed resume kept the approved
    call without its output (#4125). From 0.22.0 the rejected terminal output is stored as the SDK's
    data-free placeholder (``RunConfig.output_guardrail_blocked_message``)."""
    from compaction_suite.adapters.openai_agents import runner

    items = _stored_rounds()
    history = items[:-1]  # the last step: a read_file call and its output
    with SummarizerServer() as server:
        kept = asyncio.run(runner(connected(Settings(), server.base_url), threshold=100, stop_on_first_tool=True, tripwire=True, gated=gated, streamed=streamed).compact(history, iteration=1))
        assert len(server.model_requests) == 1  # the step answered once; the tool's output ended the run
    assert kept[: len(history) - 2] == history[:-2]
    assert _kinds(kept[len(history) - 3 :]) == ["message", "function_call", "function_call_output"]
    assert kept[-1]["call_id"] == "call_2" and kept[-2]["call_id"] == "call_2"
    placeholder = Version(version("openai-agents")) >= Version("0.22.0")
    assert kept[-1]["output"] == ("Output withheld by an output guardrail." if placeholder else "contents 2")


def test_a_tripwire_leaves_a_history_ending_on_the_models_message_unchanged():
    """``tripwire``: a history whose last step is the model's message shows that message delivered, which a
    tripping output guardrail withholds (the rejected candidate final output, docs/guardrails.md): no run of
    this configuration produces it, so it is returned unchanged without a run."""
    from compaction_suite.adapters.openai_agents import runner

    items = _stored_rounds()
    with SummarizerServer() as server:
        kept = asyncio.run(runner(connected(Settings(), server.base_url), threshold=4, stop_on_first_tool=True, tripwire=True).compact(items, iteration=1))
        assert server.exchanges == [] and server.model_requests == []
    assert kept == items


def test_a_gated_step_is_approved_and_resumed_through_the_sdks_loop():
    """``gated`` alone: the step's tools need approval; the run parks on the step's call (the SDK stores the
    turn and the call), the user approves and resumes, the tool answers with the history's output and the
    loop ends at ``max_turns``: the session holds the history as it was given."""
    from compaction_suite.adapters.openai_agents import runner

    items = _stored_rounds()
    history = items[:-1]
    with SummarizerServer() as server:
        kept = asyncio.run(runner(connected(Settings(), server.base_url), threshold=100, gated=True).compact(history, iteration=1))
        assert len(server.model_requests) == 1
    assert [{k: v for k, v in i.items() if k in ("type", "role", "call_id", "output")} for i in kept] == [
        {k: v for k, v in i.items() if k in ("type", "role", "call_id", "output")} for i in history
    ]


def test_the_runner_refuses_a_tripwire_without_stop_on_first_tool():
    """``tripwire`` needs ``stop_on_first_tool``: only then does a step of calls end the run, where output
    guardrails run."""
    from compaction_suite.adapters.openai_agents import runner

    with pytest.raises(ValueError, match="tripwire needs stop_on_first_tool"):
        runner(Settings(), tripwire=True)


def _said(items: list) -> list[tuple]:
    """Each item's kind, role, call id and text (a stored message's id and encoding aside)."""
    return [(responses_format.kind(i), i.get("role"), i.get("call_id"), responses_format.said(i)) for i in items]


@pytest.mark.parametrize("streamed", [False, True])
def test_a_failing_output_guardrail_leaves_the_final_turn_stored(streamed):
    """``guardrail_fails``: the agent's output guardrail runs its own check agent, whose model request its
    double answers with HTTP 500, so the guardrail raises on the run's final output (the history's closing
    message) and the run ends in that error. The SDK documents that the verdict is then unknown and the
    completed final turn is persisted (docs/guardrails.md, 0.22.0): before 0.20.0 a streamed run applied the
    tripwire rule and dropped the message (openai/openai-agents-python#4312). The suite's own double sees no
    summarizer exchange: the guardrail's fault is its model's alone."""
    from compaction_suite.adapters.openai_agents import runner

    items = _stored_rounds()
    with SummarizerServer() as server:
        compactor = runner(connected(Settings(), server.base_url), threshold=100, guardrail_fails=True, streamed=streamed)
        kept = asyncio.run(compactor.compact(items, iteration=1))
        assert server.exchanges == [] and len(server.model_requests) == 1
    if Version(version("openai-agents")) >= Version("0.20.0") or not streamed:
        assert _said(kept) == _said(items)


@pytest.mark.parametrize("streamed", [False, True])
def test_a_max_turns_handler_answers_with_the_closing_message(streamed):
    """``max_turns_handler``: the model answers the step of calls before the history's closing message, the
    tools answer, the turn limit ends the run and the ``max_turns`` error handler answers with the message's
    text, which the SDK stores as the run's final message; with ``guardrail_fails`` the guardrail raises on it.
    From 0.21.0 the handler's output goes through the final-output session pipeline, so it is stored
    (openai/openai-agents-python#4393: 0.20.0's ``Runner.run`` dropped it)."""
    from compaction_suite.adapters.openai_agents import runner

    items = _stored_rounds()
    with SummarizerServer() as server:
        compactor = runner(connected(Settings(), server.base_url), threshold=100, max_turns_handler=True, guardrail_fails=True, streamed=streamed)
        kept = asyncio.run(compactor.compact(items, iteration=1))
        assert len(server.model_requests) == 1  # the step of calls; the closing message is the handler's
    if Version(version("openai-agents")) >= Version("0.21.0"):
        assert _said(kept) == _said(items)


def test_a_max_turns_handler_leaves_other_histories_unchanged():
    """``max_turns_handler``: a history not ending in a step of calls, their outputs and one assistant text
    message holds no answer the handler gives: returned unchanged without a run."""
    from compaction_suite.adapters.openai_agents import handled_step, runner

    items = _stored_rounds()
    reasoned = [*items[:-1], {"type": "reasoning", "id": "rs_1", "summary": []}, items[-1]]
    assert handled_step(items) is not None and handled_step(reasoned) is None and handled_step(items[:-1]) is None
    with SummarizerServer() as server:
        kept = asyncio.run(runner(connected(Settings(), server.base_url), threshold=4, max_turns_handler=True).compact(items[:-1], iteration=1))
        assert server.model_requests == []
    assert kept == items[:-1]


def test_the_runner_refuses_a_guardrail_that_both_trips_and_fails():
    from compaction_suite.adapters.openai_agents import runner

    with pytest.raises(ValueError, match="two verdicts of one guardrail"):
        runner(Settings(), stop_on_first_tool=True, tripwire=True, guardrail_fails=True)
