"""Each adapter's declared capabilities, proven with its framework's own agent loop.

An adapter declares (SPEC Part A, declared capabilities) that its framework calls the
compactor only ``between_rounds`` (every tool call answered) and where the system prompt
lives (``outside`` the compacted list, or ``in_list``). A declaration waives clauses, so
each one is shown here, offline, by running the framework's real tool loop with a scripted
model and recording every history the compaction hook receives:

* LangChain ``create_agent`` with a ``before_model`` middleware (``SummarizationMiddleware``,
  and ``trim_messages`` in a ``@before_model`` hook as LangChain documents it), model
  ``ChatOpenAI`` on the scripted endpoint (``tests/scripted_endpoint.py``, a test double);
* Semantic Kernel ``ChatCompletionAgent`` (SK's OpenAI connector on the scripted endpoint),
  its thread's history a ``ChatHistoryTruncationReducer``;
* Agent Framework ``Agent(compaction_strategy=...)`` with ``OpenAIChatCompletionClient`` on
  the scripted endpoint;
* AutoGen ``AssistantAgent`` with a ``BufferedChatCompletionContext`` and AutoGen's own
  ``ReplayChatCompletionClient``;
* pydantic-ai ``Agent(capabilities=[SlidingWindowCompaction(...)])`` with pydantic-ai's own
  ``FunctionModel``.

Every test asserts that the hook ran mid-turn (right after a round's results), that no
history it received has an unanswered tool call (``oracle.check_calls_have_one_result`` on
the history converted by the adapter's own converter), where the system prompt was, and
the native shape of a round's results.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

import pytest
from scripted_endpoint import ROUND_CALLS, ROUNDS_PER_TURN, ScriptedEndpoint

from compaction_suite.conformance import oracle

SYSTEM_PROMPT = "You are a coding agent. (loop test)"
TURNS = 2


def read_file(path: str) -> str:
    """Read a file (the loop tests' tool)."""
    return f"contents of {path}"


def assert_between_rounds(histories: list[list[dict]]) -> None:
    """Every history the hook received has each tool call answered, and some were taken mid-turn."""
    assert histories, "the compaction hook never ran"
    for i, history in enumerate(histories):
        assert oracle.check_calls_have_one_result(history) is None, f"call {i}: {oracle.check_calls_have_one_result(history)}\n{history}"
    mid_turn = [h for h in histories if h and h[-1].get("role") == "tool"]
    assert mid_turn, "the hook never ran right after a round's results: the loop did not exercise a mid-turn call"


def assert_no_system(histories: list[list[dict]]) -> None:
    for history in histories:
        assert not [m for m in history if m.get("role") in ("system", "developer")], history


def assert_sent_first(endpoint: ScriptedEndpoint) -> None:
    """Every request the framework sent starts with its system prompt (it lives outside the compacted list)."""
    assert endpoint.requests
    for body in endpoint.requests:
        assert body["messages"][0]["role"] == "system" and SYSTEM_PROMPT in oracle.text(body["messages"][0]), body["messages"][:2]


# --- LangChain ------------------------------------------------------------------------------------


def _langchain_agent(middleware, endpoint):
    pytest.importorskip("langchain.agents", reason="LangChain is not installed (pip install -e '.[langchain]')")
    import httpx
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(
        model="scripted", api_key="scripted", base_url="http://scripted.invalid/v1", max_retries=0,
        http_client=httpx.Client(transport=endpoint.transport()), http_async_client=httpx.AsyncClient(transport=endpoint.transport()),
    )  # fmt: skip
    return create_agent(model, tools=[tool(read_file)], system_prompt=SYSTEM_PROMPT, middleware=[middleware])


def _run_langchain(agent) -> None:
    from langchain_core.messages import HumanMessage

    messages: list = []
    for turn in range(TURNS):
        messages = agent.invoke({"messages": [*messages, HumanMessage(f"turn {turn}: read the files")]})["messages"]


def test_langchain_summarization_middleware_runs_between_rounds_system_prompt_outside():
    pytest.importorskip("langchain.agents", reason="LangChain is not installed (pip install -e '.[langchain]')")
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    from compaction_suite.adapters.langchain import from_langchain

    seen: list[list[dict]] = []

    class Recording(SummarizationMiddleware):
        def before_model(self, state, runtime):
            seen.append(from_langchain(list(state["messages"])))
            return super().before_model(state, runtime)

    summarizer = GenericFakeChatModel(messages=iter([AIMessage("summary so far")] * 20))  # LangChain's own fake model
    endpoint = ScriptedEndpoint()
    _run_langchain(_langchain_agent(Recording(summarizer, trigger=("messages", 6), keep=("messages", 4)), endpoint))
    assert len(seen) == len(endpoint.requests) == TURNS * (ROUNDS_PER_TURN + 1)  # once before every model call
    assert_between_rounds(seen)
    assert_no_system(seen)
    assert_sent_first(endpoint)
    tool_messages = [m for m in seen[-1] if m["role"] == "tool"]
    assert tool_messages  # a ToolMessage answers one call: separate results are LangChain's native shape


def test_langchain_trim_messages_hook_runs_between_rounds_system_prompt_outside():
    pytest.importorskip("langchain.agents", reason="LangChain is not installed (pip install -e '.[langchain]')")
    from langchain.agents.middleware import before_model
    from langchain_core.messages import RemoveMessage, trim_messages
    from langchain_core.messages.utils import count_tokens_approximately
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    from compaction_suite.adapters.langchain import from_langchain

    seen: list[list[dict]] = []

    @before_model
    def trim(state, runtime):
        seen.append(from_langchain(list(state["messages"])))
        kept = trim_messages(state["messages"], max_tokens=60, token_counter=count_tokens_approximately, strategy="last", start_on="human", end_on=("human", "tool"))
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *kept]}

    endpoint = ScriptedEndpoint()
    _run_langchain(_langchain_agent(trim, endpoint))
    assert len(seen) == len(endpoint.requests)  # once before every model call
    assert_between_rounds(seen)
    assert_no_system(seen)
    assert_sent_first(endpoint)


# --- Semantic Kernel ------------------------------------------------------------------------------


def test_semantic_kernel_reducer_runs_between_turns_instructions_outside():
    pytest.importorskip("semantic_kernel", reason="Semantic Kernel is not installed (pip install -e '.[semantic-kernel]')")
    from semantic_kernel import Kernel
    from semantic_kernel.agents import ChatCompletionAgent, ChatHistoryAgentThread
    from semantic_kernel.connectors.ai.function_choice_behavior import FunctionChoiceBehavior
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
    from semantic_kernel.contents import AuthorRole, FunctionResultContent
    from semantic_kernel.contents.history_reducer.chat_history_truncation_reducer import ChatHistoryTruncationReducer
    from semantic_kernel.functions import kernel_function

    from compaction_suite.adapters.semantic_kernel import from_semantic_kernel

    seen: list[list[dict]] = []
    shapes: list[list[int]] = []

    class Recording(ChatHistoryTruncationReducer):
        async def reduce(self):
            seen.append(from_semantic_kernel(list(self.messages)))
            shapes.append([len([i for i in m.items if isinstance(i, FunctionResultContent)]) for m in self.messages if m.role == AuthorRole.TOOL])
            return await super().reduce()

    class Files:
        @kernel_function(name="read_file", description="Read a file")
        def read_file(self, path: str) -> str:
            return read_file(path)

    endpoint = ScriptedEndpoint(tool="files-read_file")
    kernel = Kernel()
    kernel.add_plugin(Files(), plugin_name="files")
    service = OpenAIChatCompletion(ai_model_id="scripted", async_client=endpoint.async_client())
    agent = ChatCompletionAgent(service=service, kernel=kernel, name="coder", instructions=SYSTEM_PROMPT, function_choice_behavior=FunctionChoiceBehavior.Auto())

    async def run() -> int:
        thread = ChatHistoryAgentThread(chat_history=Recording(target_count=4))
        reductions = 0
        for turn in range(TURNS):
            response = await agent.get_response(messages=f"turn {turn}: read the files", thread=thread)
            thread = response.thread
            await thread.reduce()  # where SK's samples reduce: between agent invocations
            reductions += 1
        return reductions

    reductions = asyncio.run(run())
    assert len(endpoint.requests) == TURNS * (ROUNDS_PER_TURN + 1)
    assert len(seen) == reductions, "the agent reduced its thread during a run"  # only the caller's reduce() calls
    for i, history in enumerate(seen):
        assert oracle.check_calls_have_one_result(history) is None, history
        assert history[-1]["role"] == "assistant" and not history[-1].get("tool_calls"), f"reduce {i} saw an unfinished turn"
    assert sum(bool(m.get("tool_calls")) for m in seen[0]) == ROUNDS_PER_TURN  # the first turn's rounds are in the thread it reduces
    assert_no_system(seen)  # instructions= stay outside the thread
    assert_sent_first(endpoint)
    assert shapes[0] and set(shapes[0]) == {1}  # the kernel adds one TOOL message per result: SK's native shape


# --- Microsoft Agent Framework ------------------------------------------------------------------------


def test_agent_framework_strategy_runs_between_rounds():
    pytest.importorskip("agent_framework", reason="Agent Framework is not installed (pip install -e '.[agent-framework]')")
    import agent_framework as af
    from agent_framework_openai import OpenAIChatCompletionClient

    from compaction_suite.adapters.agent_framework import from_agent_framework

    seen: list[list[dict]] = []
    results_per_tool_message: list[int] = []

    class Recording:
        def __init__(self, inner) -> None:
            self.inner = inner

        async def __call__(self, messages) -> bool:
            seen.append(from_agent_framework(list(messages)))
            results_per_tool_message.extend(len(m.contents) for m in messages if m.role == "tool")
            return await self.inner(messages)

    endpoint = ScriptedEndpoint()
    client = OpenAIChatCompletionClient(model="scripted", async_client=endpoint.async_client())
    agent = af.Agent(client, instructions=SYSTEM_PROMPT, tools=[read_file], compaction_strategy=Recording(af.SlidingWindowStrategy(keep_last_groups=2)))

    async def run() -> None:
        session = agent.create_session()
        for turn in range(TURNS):
            await agent.run(f"turn {turn}: read the files", session=session)

    asyncio.run(run())
    assert len(seen) == len(endpoint.requests) == TURNS * (ROUNDS_PER_TURN + 1)  # once before every model call
    assert_between_rounds(seen)
    assert_no_system(seen)  # instructions= stay outside the list the strategy sees
    assert_sent_first(endpoint)
    assert results_per_tool_message and set(results_per_tool_message) == {ROUND_CALLS}  # one tool message per round: AF's shape


# --- AutoGen ----------------------------------------------------------------------------------------------


def test_autogen_assistant_agent_reads_its_context_between_rounds_system_message_outside():
    pytest.importorskip("autogen_agentchat", reason="AutoGen AgentChat is not installed (pip install -e '.[autogen]')")
    from autogen_agentchat.agents import AssistantAgent
    from autogen_core.model_context import BufferedChatCompletionContext
    from autogen_core.models import FunctionExecutionResultMessage, SystemMessage

    from compaction_suite.adapters.autogen import from_autogen

    seen: list[list[dict]] = []
    packed: list[int] = []
    sent: list[list] = []

    class Recording(BufferedChatCompletionContext):
        async def get_messages(self):
            seen.append(from_autogen(list(self._messages)))
            packed.extend(len(m.content) for m in self._messages if isinstance(m, FunctionExecutionResultMessage))
            return await super().get_messages()

    agent = AssistantAgent(
        "coder", model_client=autogen_scripted_client(sent), tools=[read_file], system_message=SYSTEM_PROMPT,
        model_context=Recording(buffer_size=4), max_tool_iterations=ROUNDS_PER_TURN + 1,
    )  # fmt: skip
    run_autogen_turns(agent)
    assert len(seen) == len(sent) == TURNS * (ROUNDS_PER_TURN + 1)
    assert_between_rounds(seen)
    assert_no_system(seen)  # the system message is not in the model context...
    assert all(isinstance(m[0], SystemMessage) and m[0].content == SYSTEM_PROMPT for m in sent)  # ...it is sent first
    assert packed and set(packed) == {ROUND_CALLS}  # one FunctionExecutionResultMessage per round: AutoGen's shape


# --- pydantic-ai ------------------------------------------------------------------------------------------


def test_pydantic_ai_capability_runs_between_rounds_system_prompts_leading():
    pytest.importorskip("pydantic_ai_harness", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelRequest, ModelResponse, SystemPromptPart, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai_harness.compaction import SlidingWindowCompaction

    from compaction_suite.adapters.pydantic_ai import from_pydantic_ai

    seen: list[list[dict]] = []
    first_requests: list[list[str]] = []
    returns_per_request: list[int] = []

    class Recording(SlidingWindowCompaction):
        async def before_model_request(self, ctx, request_context):
            messages = list(ctx.messages)
            seen.append(from_pydantic_ai(messages))
            first_requests.append([type(p).__name__ for p in messages[0].parts])
            returns_per_request.extend(sum(isinstance(p, ToolReturnPart) for p in m.parts) for m in messages if isinstance(m, ModelRequest) and any(isinstance(p, ToolReturnPart) for p in m.parts))
            return await super().before_model_request(ctx, request_context)

    ids = iter(range(1, 100))

    def model(messages, info) -> ModelResponse:  # pydantic-ai's FunctionModel: the scripted agent model
        rounds = 0
        for m in reversed(messages):
            if isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart) for p in m.parts):
                break
            rounds += isinstance(m, ModelResponse) and any(isinstance(p, ToolCallPart) for p in m.parts)
        if rounds < ROUNDS_PER_TURN:
            return ModelResponse(parts=[ToolCallPart("read_file", {"path": "a.py"}, tool_call_id=f"call_p{next(ids)}") for _ in range(ROUND_CALLS)])
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(model), system_prompt=SYSTEM_PROMPT, tools=[read_file], capabilities=[Recording(max_messages=100, keep_messages=50)])

    @agent.system_prompt
    def second_prompt() -> str:
        return "Answer in French."

    history = None
    for turn in range(TURNS):
        history = agent.run_sync(f"turn {turn}: read the files", message_history=history).all_messages()
    assert len(seen) == TURNS * (ROUNDS_PER_TURN + 1)
    assert_between_rounds(seen)
    for kinds, received in zip(first_requests, seen, strict=True):
        assert kinds[:3] == ["SystemPromptPart", "SystemPromptPart", "UserPromptPart"], kinds  # stored together, in the list the capability sees
        assert [m["content"] for m in received[:2]] == [SYSTEM_PROMPT, "Answer in French."]
        roles = [m["role"] for m in received]
        assert "system" not in roles[roles.index("user"):]  # system_prompt: leading (never after the first other message)
    assert sum(isinstance(p, SystemPromptPart) for m in history for p in getattr(m, "parts", [])) == 2  # stored once each, first
    assert returns_per_request and set(returns_per_request) == {ROUND_CALLS}  # a round's results in one ModelRequest


def autogen_scripted_client(sent: list[list[Any]]) -> Any:
    """AutoGen's own scripted client (``ReplayChatCompletionClient``), recording in ``sent`` what it
    is sent: TURNS turns of ROUNDS_PER_TURN rounds of ROUND_CALLS parallel calls, then "done"."""
    from autogen_core import FunctionCall
    from autogen_core.models import CreateResult, ModelInfo, RequestUsage
    from autogen_ext.models.replay import ReplayChatCompletionClient

    from compaction_suite.adapters.autogen import MODEL_INFO

    class Replay(ReplayChatCompletionClient):
        async def create(self, messages, **kwargs):
            sent.append(list(messages))
            return await super().create(messages, **kwargs)

    ids = iter(range(1, 1000))

    def calls() -> CreateResult:
        made = [FunctionCall(id=f"call_a{next(ids)}", name="read_file", arguments=json.dumps({"path": "a.py"})) for _ in range(ROUND_CALLS)]
        return CreateResult(finish_reason="function_calls", content=made, usage=RequestUsage(prompt_tokens=1, completion_tokens=1), cached=False)

    script = [item for _ in range(TURNS) for item in ([calls() for _ in range(ROUNDS_PER_TURN)] + ["done"])]
    return Replay(script, model_info=cast(ModelInfo, MODEL_INFO))


def run_autogen_turns(agent: Any) -> None:
    """TURNS turns of an AutoGen ``AssistantAgent``, each a task to read the files."""

    async def run() -> None:
        for turn in range(TURNS):
            await agent.run(task=f"turn {turn}: read the files")

    asyncio.run(run())
