"""Each adapter's declared trigger (``capabilities["trigger"]``, SPEC Part A "Declarations", FIRE-1,
FIRE-2), shown in its framework's own agent loop with a scripted model (``tests/scripted_endpoint.py``,
a test double; no network).

A declaration is a claim about the framework: in its loop, every compaction call made on a history
at least twice the declared trigger (the suite's count, system prompt aside) compacts, and every
call on one at most half of it (system prompt included) leaves it alone; both zones are met. The
histories grow turn by turn, their user turns in CJK text with emoji (what a byte or escaped-JSON
count inflates: microsoft/agent-framework#7124) or in plain ASCII.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from scripted_endpoint import ScriptedEndpoint
from test_adapter_loops import SYSTEM_PROMPT, read_file

from compaction_suite.conformance import formats
from compaction_suite.conformance.capabilities import declared
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.trigger import Trigger

CHAT = formats.get(formats.CHAT)
CJK = "構成ファイルを読み込みました。测试全部通过🚀✅ "
ASCII = "The build log shows no error in the parser module; every test passed. "


def trigger_of(compactor: Any) -> Trigger:
    found = declared(compactor).trigger
    assert found is not None, f"{compactor!r} declares no trigger"
    return found


def assert_fires_as_declared(trigger: Trigger, calls: list[tuple[Any, bool]], fmt: formats.WireFormat = CHAT) -> None:
    """Every call at twice the trigger or more compacted, every call at half or less did not, and
    the loop made calls of both kinds (as FIRE-1 and FIRE-2 define them: `Trigger.well_past`,
    `Trigger.well_below`; ``calls``: the history each call received, in chat form, and
    whether it compacted)."""
    past = [(trigger.size(fmt, h, system=False), changed) for h, changed in calls if trigger.well_past(fmt, h)]
    below = [(trigger.size(fmt, h, system=True), changed) for h, changed in calls if trigger.well_below(fmt, h)]
    assert past and below, f"the loop never met both zones of {trigger}: {[(trigger.size(fmt, h, system=True), c) for h, c in calls]}"
    assert all(changed for _, changed in past), f"not compacted at twice {trigger} or more: {past}"
    assert not any(changed for _, changed in below), f"compacted at half {trigger} or less: {below}"


# --- Semantic Kernel ------------------------------------------------------------------------------------


def test_semantic_kernel_reducer_reduces_past_target_plus_threshold_in_the_agent_loop():
    """``ChatCompletionAgent`` turns with ``thread.reduce()`` between them (SK's samples): the truncation
    reducer reduces exactly when the thread holds more than ``target_count + threshold_count``."""
    pytest.importorskip("semantic_kernel", reason="Semantic Kernel is not installed (pip install -e '.[semantic-kernel]')")
    from semantic_kernel import Kernel
    from semantic_kernel.agents import ChatCompletionAgent, ChatHistoryAgentThread
    from semantic_kernel.connectors.ai.function_choice_behavior import FunctionChoiceBehavior
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
    from semantic_kernel.contents.history_reducer.chat_history_truncation_reducer import ChatHistoryTruncationReducer
    from semantic_kernel.functions import kernel_function

    from compaction_suite.adapters.semantic_kernel import from_semantic_kernel, truncation_reducer

    trigger = trigger_of(truncation_reducer(Settings(), target_count=4, threshold_count=2))
    assert trigger == Trigger("messages", 6)
    calls: list[tuple[list[dict], bool]] = []

    class Recording(ChatHistoryTruncationReducer):
        async def reduce(self):
            before = from_semantic_kernel(list(self.messages))
            reduced = await super().reduce()
            calls.append((before, reduced is not None))
            return reduced

    class Files:
        @kernel_function(name="read_file", description="Read a file")
        def read_file(self, path: str) -> str:
            return read_file(path)

    endpoint = ScriptedEndpoint(tool="files-read_file")
    kernel = Kernel()
    kernel.add_plugin(Files(), plugin_name="files")
    agent = ChatCompletionAgent(
        service=OpenAIChatCompletion(ai_model_id="scripted", async_client=endpoint.async_client()), kernel=kernel, name="coder",
        instructions=SYSTEM_PROMPT, function_choice_behavior=FunctionChoiceBehavior.Auto(),
    )  # fmt: skip

    async def run() -> None:
        thread = ChatHistoryAgentThread(chat_history=Recording(target_count=4, threshold_count=2))
        await thread.reduce()  # an empty thread: the first call, well below the trigger
        for turn in range(3):
            thread = (await agent.get_response(messages=f"turn {turn}: {CJK}", thread=thread)).thread
            await thread.reduce()

    asyncio.run(run())
    assert_fires_as_declared(trigger, calls)


# --- Microsoft Agent Framework --------------------------------------------------------------------------


def _agent_framework_calls(strategy: Any, texts: list[str]) -> list[tuple[list[dict], bool]]:
    """``Agent(compaction_strategy=...)`` run one turn per text, the strategy recorded before every model
    call: (the included messages it received, in chat form; whether it compacted)."""
    import agent_framework as af
    from agent_framework_openai import OpenAIChatCompletionClient

    from compaction_suite.adapters.agent_framework import from_agent_framework

    compaction = pytest.importorskip("agent_framework._compaction")
    calls: list[tuple[list[dict], bool]] = []

    class Recording:
        async def __call__(self, messages: list[Any]) -> bool:
            compaction.annotate_message_groups(messages)
            before = from_agent_framework(list(compaction.project_included_messages(messages)))
            changed = await strategy(messages)
            calls.append((before, bool(changed)))
            return changed

    endpoint = ScriptedEndpoint()
    client = OpenAIChatCompletionClient(model="scripted", async_client=endpoint.async_client())
    agent = af.Agent(client, instructions=SYSTEM_PROMPT, tools=[read_file], compaction_strategy=Recording())

    async def run() -> None:
        session = agent.create_session()
        for text in texts:
            await agent.run(text, session=session)

    asyncio.run(run())
    return calls


def test_agent_framework_truncation_fires_past_max_n_messages_in_its_loop():
    pytest.importorskip("agent_framework", reason="Agent Framework is not installed (pip install -e '.[agent-framework]')")
    import agent_framework as af

    from compaction_suite.adapters.agent_framework import truncation

    trigger = trigger_of(truncation(Settings(), max_n=8, compact_to=4))
    assert trigger == Trigger("messages", 8)
    calls = _agent_framework_calls(af.TruncationStrategy(max_n=8, compact_to=4), [f"turn {n}: {CJK}" for n in range(3)])
    assert_fires_as_declared(trigger, calls)


@pytest.mark.parametrize("text", [CJK, ASCII], ids=["cjk-and-emoji", "ascii"])
def test_agent_framework_token_budget_fires_past_its_budget_in_its_loop(text):
    """``TokenBudgetComposedStrategy(token_budget=500)``: a first user turn of about 120 tokens (chars/4)
    is left alone, a history of 1,000 or more is compacted. At 1.11.0 the CJK case fails here: its
    first call, 122 tokens in one message, is compacted, since AF counted the message's JSON with
    ``\\uXXXX`` escapes (microsoft/agent-framework#7124); it passes at 1.12.0 and 1.23.0, and the ASCII
    case at all three (run in each release's environment: ``PYTHONPATH=<this checkout's wheel, unpacked>
    PYTHONSAFEPATH=1 <env>/bin/python -m pytest tests/test_declared_triggers.py -k agent_framework``)."""
    pytest.importorskip("agent_framework", reason="Agent Framework is not installed (pip install -e '.[agent-framework]')")
    import agent_framework as af

    from compaction_suite.adapters.agent_framework import token_budget

    trigger = trigger_of(token_budget(Settings(), token_budget=500))
    assert trigger == Trigger("tokens", 500)
    tokenizer = af.CharacterEstimatorTokenizer()
    strategy = af.TokenBudgetComposedStrategy(
        token_budget=500, tokenizer=tokenizer,
        strategies=[af.ToolResultCompactionStrategy(keep_last_tool_call_groups=1), af.SlidingWindowStrategy(keep_last_groups=6)],
    )  # fmt: skip
    first = text * (480 // len(text))  # about 120 tokens by chars/4
    calls = _agent_framework_calls(strategy, [f"turn 0: {first}", *(f"turn {n}: {ASCII * 60}" for n in (1, 2))])
    assert_fires_as_declared(trigger, calls)


# --- LangChain --------------------------------------------------------------------------------------------


def _langchain_calls(middleware: Any, texts: list[str]) -> None:
    """``create_agent`` with ``middleware``, one turn per text (``tests/test_adapter_loops.py``'s agent)."""
    from langchain_core.messages import HumanMessage
    from test_adapter_loops import _langchain_agent

    agent = _langchain_agent(middleware, ScriptedEndpoint())
    messages: list = []
    for text in texts:
        messages = agent.invoke({"messages": [*messages, HumanMessage(text)]})["messages"]


def _growing(text: str) -> list[str]:
    """A first turn of about 120 tokens (chars/4), then two of about 1,060: both zones of a 500 trigger."""
    return [f"turn 0: {text * (480 // len(text))}", *(f"turn {n}: {ASCII * 60}" for n in (1, 2))]


@pytest.mark.parametrize("text", [CJK, ASCII], ids=["cjk-and-emoji", "ascii"])
def test_langchain_summarization_middleware_summarizes_past_its_token_trigger_in_create_agent(text):
    pytest.importorskip("langchain.agents", reason="LangChain is not installed (pip install -e '.[langchain]')")
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    from compaction_suite.adapters.langchain import from_langchain, summarization_middleware

    trigger = trigger_of(summarization_middleware(Settings(), trigger_tokens=500, keep_messages=4))
    assert trigger == Trigger("tokens", 500)
    calls: list[tuple[list[dict], bool]] = []

    class Recording(SummarizationMiddleware):
        def before_model(self, state, runtime):
            update = super().before_model(state, runtime)
            calls.append((from_langchain(list(state["messages"])), update is not None))
            return update

    summarizer = GenericFakeChatModel(messages=iter([AIMessage("summary so far")] * 20))  # LangChain's own fake model
    _langchain_calls(Recording(summarizer, trigger=("tokens", 500), keep=("messages", 4)), _growing(text))
    assert_fires_as_declared(trigger, calls)


def test_langchain_summarization_middleware_without_a_trigger_never_summarizes_in_create_agent():
    """No trigger (``trigger=None``; 1.0's ``max_tokens_before_summary=None``, "summarization is disabled"):
    the adapter declares ``"never"`` (SPEC FIRE-6), and in ``create_agent`` no call summarizes, though
    the history grows past the 20 messages it keeps by default and past 4,000 tokens (langchain 1.0.x
    summarized there, langchain-ai/langchain#33701)."""
    pytest.importorskip("langchain.agents", reason="LangChain is not installed (pip install -e '.[langchain]')")
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    from compaction_suite.adapters.langchain import summarization_middleware

    assert declared(summarization_middleware(Settings(), trigger_tokens=None)).never_compacts
    calls: list[tuple[int, bool]] = []

    class Recording(SummarizationMiddleware):
        def before_model(self, state, runtime):
            update = super().before_model(state, runtime)
            calls.append((len(state["messages"]), update is not None))
            return update

    summarizer = GenericFakeChatModel(messages=iter([AIMessage("summary so far")] * 40))  # LangChain's own fake model
    _langchain_calls(Recording(summarizer), [f"turn {n}: {ASCII * 10}" for n in range(24)])
    assert max(size for size, _ in calls) > 2 * 20, calls
    assert not any(summarized for _, summarized in calls), calls


def test_langchain_trim_messages_trims_past_max_tokens_in_create_agent():
    """``trim_messages`` without ``start_on``/``end_on`` in a ``@before_model`` hook: the only
    configuration whose changes a size decides (with them it also cuts below the budget)."""
    pytest.importorskip("langchain.agents", reason="LangChain is not installed (pip install -e '.[langchain]')")
    from langchain.agents.middleware import before_model
    from langchain_core.messages import RemoveMessage, trim_messages
    from langchain_core.messages.utils import count_tokens_approximately
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    from compaction_suite.adapters.langchain import from_langchain
    from compaction_suite.adapters.langchain import trim_messages as adapter

    assert declared(adapter(Settings(), max_tokens=500)).trigger is None  # LangChain's recipe (start_on="human") cuts below it too
    trigger = trigger_of(adapter(Settings(), max_tokens=500, start_on=None, end_on=None, include_system=False))
    assert trigger == Trigger("tokens", 500)
    calls: list[tuple[list[dict], bool]] = []

    @before_model
    def trim(state, runtime):
        kept = trim_messages(state["messages"], max_tokens=500, token_counter=count_tokens_approximately, strategy="last", include_system=False)
        calls.append((from_langchain(list(state["messages"])), len(kept) != len(state["messages"])))
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *kept]}

    _langchain_calls(trim, _growing(CJK))
    assert_fires_as_declared(trigger, calls)


# --- AutoGen ----------------------------------------------------------------------------------------------


def test_autogen_buffered_context_drops_past_its_buffer_in_assistant_agent():
    pytest.importorskip("autogen_agentchat", reason="AutoGen AgentChat is not installed (pip install -e '.[autogen]')")
    from autogen_agentchat.agents import AssistantAgent
    from autogen_core.model_context import BufferedChatCompletionContext
    from test_adapter_loops import ROUNDS_PER_TURN, autogen_scripted_client, run_autogen_turns

    from compaction_suite.adapters.autogen import buffered, from_autogen

    trigger = trigger_of(buffered(Settings(), buffer_size=4))
    assert trigger == Trigger("messages", 4)
    calls: list[tuple[list[dict], bool]] = []

    class Recording(BufferedChatCompletionContext):
        async def get_messages(self):
            returned = await super().get_messages()
            calls.append((from_autogen(list(self._messages)), len(returned) < len(self._messages)))
            return returned

    agent = AssistantAgent(
        "coder", model_client=autogen_scripted_client([]), tools=[read_file], system_message=SYSTEM_PROMPT,
        model_context=Recording(buffer_size=4), max_tool_iterations=ROUNDS_PER_TURN + 1,
    )  # fmt: skip
    run_autogen_turns(agent)
    assert_fires_as_declared(trigger, calls)


# --- Strands Agents ---------------------------------------------------------------------------------------


def test_strands_sliding_window_trims_past_its_window_in_the_agent_loop():
    """``apply_management`` at the end of each invocation: a fresh agent's first turn (6 messages) is
    left alone, a session resumed with 24 messages is trimmed after its next turn."""
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    import copy

    from strands import Agent, tool
    from strands.agent.conversation_manager import NullConversationManager, SlidingWindowConversationManager
    from test_adapter_format_loops import INSTRUCTIONS, _scripted_strands_model, _to_anthropic

    from compaction_suite.adapters.strands import sliding_window

    trigger = trigger_of(sliding_window(Settings(base_url="http://127.0.0.1:9/v1"), window_size=12))
    assert trigger == Trigger("messages", 12)
    calls: list[tuple[Any, bool]] = []

    class Recording(SlidingWindowConversationManager):
        def apply_management(self, agent, **kwargs):
            before = copy.deepcopy(agent.messages)
            super().apply_management(agent, **kwargs)
            calls.append(({"messages": _to_anthropic(before)}, agent.messages != before))

    def agent(manager: Any, messages: list | None = None) -> Any:
        return Agent(model=_scripted_strands_model(), system_prompt=INSTRUCTIONS, tools=[tool(read_file)], conversation_manager=manager, messages=messages, callback_handler=None)

    agent(Recording(window_size=12))(f"turn 0: {CJK}")
    earlier = agent(NullConversationManager())
    for turn in range(4):
        earlier(f"turn {turn}: {ASCII}")
    agent(Recording(window_size=12), copy.deepcopy(earlier.messages))(f"turn 4: {CJK}")
    assert_fires_as_declared(trigger, calls, formats.get(formats.ANTHROPIC))


def _billing(model: Any, system: str) -> Any:
    """The scripted Strands model reporting each call's usage as a provider bills it: the exact tokens
    (cl100k_base) of the text it was sent (system prompt, texts, tool names and inputs, tool results),
    which Strands' next projection starts from (``_estimate_input_tokens``: the last call's usage, then
    its own estimate of what came after)."""
    import json

    from compaction_suite.text import count_tokens

    def billed(messages: list[dict]) -> int:
        texts = [system]
        for message in messages:
            for block in message["content"]:
                texts += [block.get("text", "")]
                if "toolUse" in block:
                    texts += [block["toolUse"].get("name", ""), json.dumps(block["toolUse"].get("input", {}))]
                if "toolResult" in block:
                    texts += [item.get("text", "") for item in block["toolResult"].get("content", [])]
        return sum(count_tokens(t, "cl100k_base") for t in texts if t)

    stream = model.stream

    async def billing_stream(messages, tool_specs=None, system_prompt=None, **kwargs):
        async for event in stream(messages, tool_specs, system_prompt, **kwargs):
            if "metadata" in event:
                used = billed(messages)
                event = {"metadata": {"usage": {"inputTokens": used, "outputTokens": 5, "totalTokens": used + 5}, "metrics": {"latencyMs": 0}}}
            yield event

    model.stream = billing_stream
    return model


def test_strands_proactive_compression_fires_past_its_token_trigger_in_the_agent_loop():
    """The proactive path (``proactive_compression``, Strands >= 1.40): before each model call of the
    agent's loop the manager's hook (``ConversationManager``'s, shared by both managers) reduces once
    Strands' projection of the call reaches ``compression_threshold`` of the model's
    ``context_window_limit``; the adapter declares that share of the window in tokens (both managers),
    and in the loop the summarizing manager's calls at twice it or more reduce and those at half or
    less do not, the projection starting from each call's billed usage. (The sliding window cannot
    drop the turn in flight, so a long paste alone past twice the trigger is not trimmed in the loop:
    FIRE-1's histories hold older rounds for it.)"""
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    import copy

    from strands import Agent, tool
    from strands.agent.conversation_manager import SummarizingConversationManager
    from test_adapter_format_loops import CONTEXT_WINDOW, INSTRUCTIONS, _scripted_strands_model, _to_anthropic

    from compaction_suite.adapters import strands as adapter

    if adapter.release("strands-agents") < (1, 40):
        pytest.skip("the proactive path arrived in 1.40.0")
    trigger = trigger_of(adapter.summarizing(Settings(base_url="http://127.0.0.1:9/v1"), path="proactive", context_window_limit=CONTEXT_WINDOW))
    assert trigger == Trigger("tokens", int(0.7 * CONTEXT_WINDOW))
    assert trigger_of(adapter.sliding_window(Settings(base_url="http://127.0.0.1:9/v1"), path="proactive", context_window=CONTEXT_WINDOW)) == trigger
    calls: list[tuple[Any, bool]] = []

    class Recording(SummarizingConversationManager):
        def _on_before_model_call_threshold(self, event):
            before = copy.deepcopy(event.agent.messages)
            super()._on_before_model_call_threshold(event)
            calls.append(({"system": INSTRUCTIONS, "messages": _to_anthropic(before)}, event.agent.messages != before))

    manager = Recording(proactive_compression={"compression_threshold": 0.7}, preserve_recent_messages=2)
    agent = Agent(model=_billing(_scripted_strands_model(), INSTRUCTIONS), system_prompt=INSTRUCTIONS, tools=[tool(read_file)], conversation_manager=manager, callback_handler=None)
    for turn, repeats in enumerate((1, 6, 60, 6, 60)):  # a long paste jumps the projection past twice the trigger
        agent(f"turn {turn}: " + ASCII * repeats)
    assert_fires_as_declared(trigger, calls, formats.get(formats.ANTHROPIC))


# --- Pydantic AI (pydantic-ai-harness) --------------------------------------------------------------------


def test_pydantic_ai_sliding_window_compacts_past_max_messages_in_the_agent_run():
    """``Agent(capabilities=[SlidingWindowCompaction(max_messages=8)])``: a fresh run's first request is
    left alone, a run resumed with three earlier turns (18 messages) is compacted before its first."""
    pytest.importorskip("pydantic_ai_harness", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai_harness.compaction import SlidingWindowCompaction

    from compaction_suite.adapters.pydantic_ai import from_pydantic_ai, sliding_window

    trigger = trigger_of(sliding_window(Settings(), max_messages=8, keep_messages=4))
    assert trigger == Trigger("messages", 8)
    calls: list[tuple[Any, bool]] = []

    class Recording(SlidingWindowCompaction):
        async def before_model_request(self, ctx, request_context):
            before = list(ctx.messages)
            sent = await super().before_model_request(ctx, request_context)
            calls.append((from_pydantic_ai(before), len(sent.messages) != len(before)))
            return sent

    ids = iter(range(1, 1000))

    def model(messages, info) -> ModelResponse:  # pydantic-ai's FunctionModel: the scripted agent model
        rounds = 0
        for m in reversed(messages):
            if isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart) for p in m.parts):
                break
            rounds += isinstance(m, ModelResponse) and any(isinstance(p, ToolCallPart) for p in m.parts)
        if rounds < 2:
            return ModelResponse(parts=[ToolCallPart("read_file", {"path": "a.py"}, tool_call_id=f"call_p{next(ids)}") for _ in range(2)])
        return ModelResponse(parts=[TextPart("done")])

    def agent(*capabilities: Any) -> Any:
        return Agent(FunctionModel(model), system_prompt=SYSTEM_PROMPT, tools=[read_file], capabilities=list(capabilities))

    agent(Recording(max_messages=8, keep_messages=4)).run_sync(f"turn 0: {CJK}")
    history = None
    for turn in range(3):
        history = agent().run_sync(f"turn {turn}: {ASCII}", message_history=history).all_messages()
    agent(Recording(max_messages=8, keep_messages=4)).run_sync(f"turn 3: {CJK}", message_history=history)
    assert_fires_as_declared(trigger, calls)


# --- "never" (SPEC FIRE-6) --------------------------------------------------------------------------------


def test_a_never_trigger_makes_fire_6_applicable_and_waives_fire_1_and_2():
    from types import SimpleNamespace

    never = declared(SimpleNamespace(capabilities={"trigger": "never"}))
    sized, nothing = declared(SimpleNamespace(capabilities={"trigger": {"tokens": 500}})), declared(object())
    assert never.never_compacts and never.trigger is None and never.as_dict()["trigger"] == "never"
    assert {"FIRE-1", "FIRE-2"} <= set(never.waived()) and "FIRE-6" not in never.waived()
    assert "FIRE-6" in sized.waived() and not {"FIRE-1", "FIRE-2"} & set(sized.waived())
    assert {"FIRE-1", "FIRE-2", "FIRE-6"} <= set(nothing.waived())


@pytest.mark.parametrize("raw", ["Never", "always", {"never": True}, ""])
def test_any_other_trigger_word_is_a_contract_error(raw):
    from types import SimpleNamespace

    from compaction_suite.conformance.capabilities import CapabilityError

    with pytest.raises(CapabilityError, match="or 'never'"):
        declared(SimpleNamespace(capabilities={"trigger": raw}))
