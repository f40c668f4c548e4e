"""The declarations of the adapters of other wire formats, proven with their framework's own loop.

Like ``tests/test_adapter_loops.py`` for the chat-completions adapters: each test runs the
framework's real agent loop offline with a scripted model, records every history the
compactor receives, and checks what the adapter declares (SPEC Part A, declared
capabilities and wire formats):

* OpenAI Agents SDK: ``Runner.run`` with the SDK's own ``agents.testing.ScriptedModel`` and an
  ``OpenAIResponsesCompactionSession`` whose compact endpoint is the suite's summarizer test
  double (``/v1/responses/compact``, `compaction_suite.conformance.summarizer_apis`);
* Strands Agents: ``Agent`` with a scripted ``Model`` (the stream events Strands' providers emit)
  and its conversation managers.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from compaction_suite.conformance.formats import anthropic as anthropic_format
from compaction_suite.conformance.formats import responses as responses_format
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.summarizer_server import SummarizerServer

INSTRUCTIONS = "You are a coding agent. (loop test)"
TURNS = 3


def read_file(path: str) -> str:
    """Read a file (the loop tests' tool)."""
    return f"contents of {path}"


# --- OpenAI Agents SDK --------------------------------------------------------------------------


def _agents_script(turns: int) -> list:
    """Per turn: two parallel calls, one more call, then a text answer (each step its own response id)."""
    from agents.testing import ModelStep, assistant_message, function_call

    steps, n = [], 0
    for turn in range(turns):
        a, b, c = n, n + 1, n + 2
        n += 3
        steps.append(ModelStep(output=[function_call("read_file", {"path": f"f{a}.py"}, call_id=f"call_{a}"), function_call("read_file", {"path": f"f{b}.py"}, call_id=f"call_{b}")], response_id=f"resp_{a}"))
        steps.append(ModelStep(output=[function_call("read_file", {"path": f"f{c}.py"}, call_id=f"call_{c}")], response_id=f"resp_{c}"))
        steps.append(ModelStep(output=[assistant_message(f"turn {turn} done")], response_id=f"resp_turn_{turn}"))
    return steps


def _run_agents_loop(endpoint, threshold: int, max_retries: int = 0):
    """Run TURNS turns of the SDK's Runner; returns (model, [(items before, items after) per run_compaction], [items at each deferral])."""
    from agents import Agent, Runner, SQLiteSession, function_tool, set_tracing_disabled
    from agents.memory import OpenAIResponsesCompactionSession
    from agents.testing import ScriptedModel
    from openai import AsyncOpenAI

    compactions: list[tuple[list, list]] = []
    deferrals: list[list] = []

    class Recording(OpenAIResponsesCompactionSession):
        async def run_compaction(self, args=None, *, wrapper=None):
            before = await self.underlying_session.get_items()
            await super().run_compaction(args, wrapper=wrapper)
            compactions.append((before, await self.underlying_session.get_items()))

        async def _defer_compaction(self, response_id, store=None, **kwargs):
            deferrals.append(await self.underlying_session.get_items())
            return await super()._defer_compaction(response_id, store, **kwargs)

    set_tracing_disabled(True)  # offline: no trace export

    async def main():
        client = AsyncOpenAI(api_key="test-double", base_url=endpoint.base_url, max_retries=max_retries)
        model = ScriptedModel(_agents_script(TURNS))
        agent = Agent(name="loop", instructions=INSTRUCTIONS, model=model, tools=[function_tool(read_file)])
        session = Recording(
            "loop", SQLiteSession("loop"), client=client, compaction_mode="input",
            should_trigger_compaction=lambda context: len(context["compaction_candidate_items"]) >= threshold,
        )  # fmt: skip
        for turn in range(TURNS):
            await Runner.run(agent, f"turn {turn}: read the files", session=session)
        await client.close()
        return model

    return asyncio.run(main()), compactions, deferrals


def test_openai_agents_compaction_session_runs_between_rounds_instructions_outside():
    pytest.importorskip("agents.memory", reason="the OpenAI Agents SDK is not installed (pip install -e '.[openai-agents]')")
    with SummarizerServer() as endpoint:
        model, compactions, deferrals = _run_agents_loop(endpoint, threshold=4)
        bodies = endpoint.bodies
    assert compactions and bodies, "the session never compacted"
    # Mid-turn saves (local tool outputs pending) only defer: the history then ends with a result.
    assert deferrals and all(responses_format.kind(h[-1]) == "function_call_output" for h in deferrals), deferrals
    # called: between_rounds: every history compacted (and every compact request) has each call answered.
    for before, _ in compactions:
        assert not responses_format.in_flight(before), before
    for body in bodies:
        assert not responses_format.in_flight(body["input"]), body["input"]
    # Each compaction ran at the end of a turn: the history ends with the assistant's answer.
    assert all(responses_format.kind(before[-1]) == "message" and before[-1].get("role") == "assistant" for before, _ in compactions)
    # system_prompt: outside: the instructions go to the model apart, never into the session's items.
    assert all(call.system_instructions == INSTRUCTIONS for call in model.calls)
    for before, after in compactions:
        assert not [i for i in before + after if i.get("role") in responses_format.SYSTEM_ROLES]
    # The SDK's native shapes: a user message without "type", ids on calls, a compaction item after.
    assert any(responses_format.kind(i) == "compaction" for _, after in compactions for i in after)


def test_openai_agents_adapter_compacts_as_the_runner_does():
    """The adapter's manual ``run_compaction`` on a history the Runner compacted sends the compact
    endpoint the same items and leaves the same history (the adapter's equivalence claim)."""
    pytest.importorskip("agents.memory", reason="the OpenAI Agents SDK is not installed (pip install -e '.[openai-agents]')")
    from compaction_suite.adapters.openai_agents import responses_compaction

    with SummarizerServer() as endpoint:
        _, compactions, _ = _run_agents_loop(endpoint, threshold=4)
        runner_requests = endpoint.bodies
        compactor = responses_compaction(Settings(base_url=endpoint.base_url), threshold=4)
        for i, (before, after) in enumerate(compactions):
            out = asyncio.run(compactor.compact(before, iteration=1))
            assert endpoint.bodies[-1]["input"] == runner_requests[i]["input"]
            assert out == after
    # programs: held where the installed SDK records a hosted program's transcript (0.19.0 on)
    held = {"programs": "held"} if hasattr(pytest.importorskip("agents"), "ProgrammaticToolCallingTool") else {}
    assert compactor.capabilities == {"wire_format": "responses", "called": "between_rounds", "system_prompt": "outside", "trigger": {"messages": 4}, **held}


@pytest.mark.parametrize("status", ["500", "429"])
def test_openai_agents_failing_compact_endpoint_makes_the_run_raise_after_its_answer(status):
    """Harm, shown with the SDK's own Runner (crash): when the compact endpoint keeps failing
    (the client's default two retries spent), ``Runner.run`` raises the endpoint's error instead
    of returning the turn whose answer the model had already given."""
    pytest.importorskip("agents.memory", reason="the OpenAI Agents SDK is not installed (pip install -e '.[openai-agents]')")
    import openai

    with SummarizerServer() as endpoint, pytest.raises(openai.APIStatusError) as raised:
        endpoint.fault(status, **({"retry_after": "0"} if status == "429" else {}))
        _run_agents_loop(endpoint, threshold=4, max_retries=2)
    assert raised.value.status_code == int(status)
    assert len(endpoint.bodies) == 3  # the first compaction, at the end of the first turn, and its two retries


def test_openai_agents_adapter_below_threshold_returns_the_items_unchanged():
    pytest.importorskip("agents.memory", reason="the OpenAI Agents SDK is not installed (pip install -e '.[openai-agents]')")
    from compaction_suite.adapters.openai_agents import responses_compaction

    items = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]},
        {"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": "{\"path\": \"a\"}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "x"},
    ]
    with SummarizerServer() as endpoint:
        out = asyncio.run(responses_compaction(Settings(base_url=endpoint.base_url), threshold=10).compact(items, iteration=1))
        assert out == items and not endpoint.bodies


# --- Strands Agents -----------------------------------------------------------------------------


def _scripted_strands_model():
    """A TEST DOUBLE of a Strands ``Model``: streams the events Strands' providers emit, from the
    conversation it is sent: after a user prompt, thinking then two parallel ``toolUse`` blocks;
    after the results of one round, one more call; then a text answer."""

    from strands.models.model import Model

    class ScriptedStrandsModel(Model):
        def __init__(self) -> None:
            self.requests: list[dict] = []
            self.summaries = 0
            self.calls = 0

        def update_config(self, **config):
            pass

        def get_config(self):
            return {"context_window_limit": CONTEXT_WINDOW}

        def structured_output(self, *args, **kwargs):
            raise NotImplementedError("not used by the loop test")

        async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
            if not tool_specs:  # a summarization request (SummarizingConversationManager): no tools
                self.summaries += 1
                yield {"messageStart": {"role": "assistant"}}
                yield {"contentBlockStart": {"start": {}}}
                yield {"contentBlockDelta": {"delta": {"text": f"summary {self.summaries} of {len(messages)} messages"}}}
                yield {"contentBlockStop": {}}
                yield {"messageStop": {"stopReason": "end_turn"}}
                return
            self.requests.append({"system_prompt": system_prompt, "messages": [dict(m) for m in messages]})
            rounds = 0
            for message in reversed(messages):
                if message["role"] == "user" and not any("toolResult" in b for b in message["content"]):
                    break
                rounds += message["role"] == "assistant"
            yield {"messageStart": {"role": "assistant"}}
            if rounds < 2:
                if rounds == 0:
                    yield {"contentBlockStart": {"start": {}}}
                    yield {"contentBlockDelta": {"delta": {"reasoningContent": {"text": "Read both files first."}}}}
                    yield {"contentBlockDelta": {"delta": {"reasoningContent": {"signature": f"sig-test-double-{self.calls}"}}}}
                    yield {"contentBlockStop": {}}
                for _ in range(2 if rounds == 0 else 1):
                    self.calls += 1
                    yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": f"tooluse_{self.calls}", "name": "read_file"}}}}
                    yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps({"path": f"f{self.calls}.py"})}}}}
                    yield {"contentBlockStop": {}}
                yield {"messageStop": {"stopReason": "tool_use"}}
            else:
                yield {"contentBlockStart": {"start": {}}}
                yield {"contentBlockDelta": {"delta": {"text": f"done after {rounds} rounds"}}}
                yield {"contentBlockStop": {}}
                yield {"messageStop": {"stopReason": "end_turn"}}
            prompt = len(json.dumps(messages, default=str)) // 4  # a rough count, as a provider's usage would grow
            yield {"metadata": {"usage": {"inputTokens": prompt, "outputTokens": 5, "totalTokens": prompt + 5}, "metrics": {"latencyMs": 0}}}

    return ScriptedStrandsModel()


CONTEXT_WINDOW = 700
"""The scripted model's context window (tokens, as Strands estimates them): small, so that the
summarizing manager's proactive compression fires within the loop."""


def _strands_loop(per_turn: bool, window_size: int = 6):
    """Run TURNS invocations of a Strands Agent; every history ``apply_management`` received (Strands blocks)."""
    import copy

    from strands import Agent, tool
    from strands.agent.conversation_manager import SlidingWindowConversationManager

    seen: list[list[dict]] = []

    class Recording(SlidingWindowConversationManager):
        def apply_management(self, agent, **kwargs):
            seen.append(copy.deepcopy(agent.messages))
            return super().apply_management(agent, **kwargs)

    model = _scripted_strands_model()
    agent = Agent(model=model, system_prompt=INSTRUCTIONS, tools=[tool(read_file)], conversation_manager=Recording(window_size=window_size, per_turn=per_turn), callback_handler=None)
    for turn in range(TURNS):
        agent(f"turn {turn}: read the files")
    return agent, model, seen


def test_strands_sliding_window_trims_a_history_in_flight_when_a_tool_interrupts():
    """called: anytime, shown: a tool that asks for approval (``tool_context.interrupt``) stops the
    invocation with its toolUse unanswered, and ``apply_management`` (in the loop's ``finally``)
    trims that history while the call is in flight (ANTH-6's case, reachable)."""
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    import copy

    from strands import Agent, tool
    from strands.agent.conversation_manager import SlidingWindowConversationManager

    seen: list[tuple[list[dict], list[dict]]] = []
    ask = {"approval": False}

    class Recording(SlidingWindowConversationManager):
        def apply_management(self, agent, **kwargs):
            before = copy.deepcopy(agent.messages)
            super().apply_management(agent, **kwargs)
            seen.append((before, copy.deepcopy(agent.messages)))

    @tool(context=True)
    def read_file(path: str, tool_context) -> str:
        """Read a file; once approvals are on, only after a human approved it."""
        if ask["approval"]:
            tool_context.interrupt("approve", reason=f"read {path}?")
        return f"contents of {path}"

    agent = Agent(model=_scripted_strands_model(), system_prompt=INSTRUCTIONS, tools=[read_file], conversation_manager=Recording(window_size=6), callback_handler=None)
    agent("turn 0: read the files")
    ask["approval"] = True
    assert agent("turn 1: read the files").stop_reason == "interrupt"
    before, after = seen[-1]
    request = {"system": INSTRUCTIONS, "messages": _to_anthropic(before)}
    assert anthropic_format.invalid(request) is None and anthropic_format.in_flight(request), before
    assert len(after) < len(before) and after[-1] == before[-1]  # trimmed, the pending toolUse last


@pytest.mark.parametrize("per_turn", [False, True])
def test_strands_sliding_window_tool_loop_runs_between_rounds_system_prompt_outside(per_turn):
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    _agent, model, seen = _strands_loop(per_turn)
    assert len(seen) >= TURNS
    for history in seen:
        request = {"system": INSTRUCTIONS, "messages": _to_anthropic(history)}
        assert anthropic_format.invalid(request) is None, anthropic_format.invalid(request)
        assert not anthropic_format.in_flight(request), history  # without interrupts, every call answered
    if per_turn:  # before model calls: some right after a round's results
        assert any(h and any("toolResult" in b for b in h[-1]["content"]) for h in seen)
    else:  # at the end of each invocation: after the answer
        assert all(h[-1]["role"] == "assistant" and "text" in h[-1]["content"][-1] for h in seen)
    # system_prompt: outside: never in agent.messages; sent apart with every model call.
    assert all(r["system_prompt"] == INSTRUCTIONS for r in model.requests)
    assert all(m["role"] in ("user", "assistant") for h in seen for m in h)
    # Native shapes: a round's results packed in one user message; thinking kept with its signature.
    assert any(sum("toolResult" in b for b in m["content"]) == 2 for h in seen for m in h)
    assert any("reasoningContent" in b and b["reasoningContent"]["reasoningText"]["signature"] for h in seen for m in h for b in m["content"])


def _to_anthropic(strands_messages: list[dict]) -> list[dict]:
    """Strands messages as Strands' own AnthropicModel sends them (its formatter, no network)."""
    from strands.models.anthropic import AnthropicModel

    model = AnthropicModel(client_args={"api_key": "test-double", "base_url": "http://127.0.0.1:9/v1"}, model_id="loop-test", max_tokens=64)
    return [{"role": m["role"], "content": [b for b in (model._format_request_message_content(c) for c in m["content"]) if b is not None]} for m in strands_messages]


def test_strands_adapter_matches_the_agent_loop():
    """The adapter on the Anthropic form of a history the loop handed its manager gives the
    Anthropic form of what the manager left, and its conversion is Strands' own mapping."""
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    from compaction_suite.adapters.strands import Conversion, sliding_window

    _, _, seen = _strands_loop(per_turn=True, window_size=6)
    compactor = sliding_window(Settings(base_url="http://127.0.0.1:9/v1"), window_size=6)
    compacted = 0
    for history in seen:
        request = {"system": INSTRUCTIONS, "messages": _to_anthropic(history)}
        strip = [{"role": m["role"], "content": m["content"]} for m in history]
        assert _to_anthropic(Conversion(request["messages"]).strands) == request["messages"]  # faithful both ways
        out = compactor.compact(request, iteration=1)
        assert out["system"] == INSTRUCTIONS
        window = strip[-len(out["messages"]):] if out["messages"] else []
        assert out["messages"] == _to_anthropic(window)
        compacted += len(out["messages"]) < len(history)
    assert compacted, "no history of the loop was long enough to be cut"
    assert compactor.capabilities == {"wire_format": "anthropic-messages", "called": "anytime", "system_prompt": "outside", "providers": ["anthropic", "bedrock-converse"], "trigger": {"messages": 6}, "kept_items": 6}


def test_strands_summarizing_runs_before_model_calls_between_rounds_system_prompt_outside():
    """``SummarizingConversationManager`` with proactive compression, in Strands' own loop: it
    summarizes only in the before-model-call hook, each time with every toolUse answered."""
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    import copy

    from strands import Agent, tool
    from strands.agent.conversation_manager import SummarizingConversationManager

    seen: list[list[dict]] = []

    class Recording(SummarizingConversationManager):
        def reduce_context(self, agent, e=None, **kwargs):
            seen.append(copy.deepcopy(agent.messages))
            return super().reduce_context(agent, e, **kwargs)

    model = _scripted_strands_model()
    manager = Recording(preserve_recent_messages=2, proactive_compression={"compression_threshold": 0.5})
    agent = Agent(model=model, system_prompt=INSTRUCTIONS, tools=[tool(read_file)], conversation_manager=manager, callback_handler=None)
    for turn in range(TURNS):
        agent(f"turn {turn}: read the files")
    assert seen and model.summaries, "proactive compression never fired"
    for history in seen:
        request = {"system": INSTRUCTIONS, "messages": _to_anthropic(history)}
        assert anthropic_format.invalid(request) is None, anthropic_format.invalid(request)
        assert not anthropic_format.in_flight(request), history  # called: between_rounds
    assert any(any("toolResult" in b for b in h[-1]["content"]) for h in seen)  # mid-turn, right after a round's results
    assert all(r["system_prompt"] == INSTRUCTIONS for r in model.requests)  # system_prompt: outside
    assert all(m["role"] in ("user", "assistant") for h in seen for m in h)


@pytest.mark.parametrize("preset", ["stale_tool_cleanup", "proactive_summarization"])
def test_strands_context_manager_runs_before_model_calls_between_rounds_system_prompt_outside(preset):
    """``Agent(context_manager={"strategies": [preset]})`` (Strands >= 1.55) in Strands' own loop: its
    strategy pipeline runs in the before-model-call hook, each time with every toolUse answered, on a
    list holding no system prompt, and the model is sent exactly what the pipeline left (what the
    adapter's ``context_manager`` returns)."""
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    from compaction_suite.adapters._common import release

    if release("strands-agents") < (1, 55):
        pytest.skip("Agent(context_manager=...) arrived in strands-agents 1.55.0")
    import copy

    from strands import Agent, tool
    from strands._context_manager.context_manager import ContextManager

    before: list[list[dict]] = []
    after: list[list[dict]] = []

    class Recording(ContextManager):
        async def _run_strategies(self, agent, precomputed_input_tokens=None, *, overflow=False):
            before.append(copy.deepcopy(agent.messages))
            acted = await super()._run_strategies(agent, precomputed_input_tokens, overflow=overflow)
            after.append(copy.deepcopy(agent.messages))
            return acted

    model = _scripted_strands_model()
    agent = Agent(model=model, system_prompt=INSTRUCTIONS, tools=[tool(read_file)], context_manager=Recording(strategies=[preset]), callback_handler=None)
    for turn in range(TURNS):
        agent(f"turn {turn}: read the files")
    assert any(a != b for a, b in zip(before, after, strict=True)), "the pipeline never changed the list"
    for history in before:
        request = {"system": INSTRUCTIONS, "messages": _to_anthropic(history)}
        assert anthropic_format.invalid(request) is None, anthropic_format.invalid(request)
        assert not anthropic_format.in_flight(request), history  # called: between_rounds
    assert len(model.requests) == len(after)  # one pipeline run before each model call, no overflow
    for sent, left in zip(model.requests, after, strict=True):
        assert sent["system_prompt"] == INSTRUCTIONS  # system_prompt: outside
        assert sent["messages"] == [{"role": m["role"], "content": m["content"]} for m in left]  # Strands' own tracking ids are not sent
    assert preset != "proactive_summarization" or model.summaries, "the summarizing preset never summarized"


def test_strands_context_manager_adapter_matches_the_agent_loop():
    """The adapter's ``context_manager`` on the Anthropic form of each list the loop's pipeline got
    gives the Anthropic form of what the pipeline left (a preset that asks no model: the same output)."""
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    from compaction_suite.adapters._common import release
    from compaction_suite.adapters.strands import context_manager

    if release("strands-agents") < (1, 55):
        pytest.skip("Agent(context_manager=...) arrived in strands-agents 1.55.0")
    import copy

    from strands import Agent, tool
    from strands._context_manager.context_manager import ContextManager

    pairs: list[tuple[list[dict], list[dict]]] = []

    class Recording(ContextManager):
        async def _run_strategies(self, agent, precomputed_input_tokens=None, *, overflow=False):
            seen = copy.deepcopy(agent.messages)
            acted = await super()._run_strategies(agent, precomputed_input_tokens, overflow=overflow)
            pairs.append((seen, copy.deepcopy(agent.messages)))
            return acted

    agent = Agent(model=_scripted_strands_model(), system_prompt=INSTRUCTIONS, tools=[tool(read_file)], context_manager=Recording(strategies=["stale_tool_cleanup"]), callback_handler=None)
    for turn in range(TURNS):
        agent(f"turn {turn}: read the files")
    compactor = context_manager(Settings(base_url="http://127.0.0.1:9/v1"), preset="stale_tool_cleanup", context_window_limit=CONTEXT_WINDOW)
    strip = lambda history: [{"role": m["role"], "content": m["content"]} for m in history]  # noqa: E731
    for seen, left in pairs:
        out = compactor.compact({"system": INSTRUCTIONS, "messages": _to_anthropic(strip(seen))}, iteration=1)
        assert out == {"system": INSTRUCTIONS, "messages": _to_anthropic(strip(left))}
    assert any(seen != left for seen, left in pairs)


def test_strands_summarizing_adapter_summarizes_through_anthropic_messages():
    """The adapter runs Strands' own estimate and hook: past the threshold the oldest messages
    become Strands' summary message (from the suite's double, streamed /v1/messages), every ANTH
    clause holds, the system prompt is untouched; below it the request comes back unchanged."""
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    from compaction_suite.adapters.strands import summarizing
    from compaction_suite.conformance.settings import connected

    _, _, seen = _strands_loop(per_turn=True, window_size=100)
    request = {"system": INSTRUCTIONS, "messages": _to_anthropic(seen[-1])}
    with SummarizerServer() as endpoint:
        settings = connected(Settings(), endpoint.base_url)
        out = summarizing(settings, preserve_recent_messages=4, context_window_limit=200).compact(request, iteration=1)
        unchanged = summarizing(settings, preserve_recent_messages=4, context_window_limit=100_000).compact(request, iteration=1)
        bodies = endpoint.bodies
    assert len(bodies) == 1 and bodies[0]["stream"] is True
    assert unchanged == request
    assert len(out["messages"]) < len(request["messages"]) and out["system"] == INSTRUCTIONS
    assert out["messages"][0] not in request["messages"] and out["messages"][0]["role"] == "user"  # Strands' summary message
    assert out["messages"][-4:] == request["messages"][-4:]
    assert {k: v for k, v in anthropic_format.structural(request, out).items() if v} == {}
