"""The compaction paths and native shapes of Semantic Kernel, Agent Framework and AutoGen, each shown
with the framework's own loop, offline, and compared with what the adapter does on that path.

The agent's model is ``scripted_http.ScriptedServer``, a TEST DOUBLE on 127.0.0.1 that answers
HTTP 400 where the OpenAI API does (orphan tool results, unanswered calls); a summarizer is the
suite's ``SummarizerServer`` test double, in a failing mode where a test says so. Each test pins
the installed release's behaviour: when a release changes it, the test says so, and the matrix
configuration of that path (``CONFIGURATIONS``) must be re-read.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from scripted_endpoint import ROUND_CALLS, ROUNDS_PER_TURN, ScriptedEndpoint
from scripted_http import ScriptedServer, rejection
from test_adapter_loops import (
    SYSTEM_PROMPT,
    TURNS,
    assert_between_rounds,
    assert_no_system,
    autogen_scripted_client,
    read_file,
    run_autogen_turns,
)

from compaction_suite.conformance import oracle
from compaction_suite.conformance.settings import Settings

SK = "Semantic Kernel is not installed (pip install -e '.[semantic-kernel]')"
AF = "Agent Framework is not installed (pip install -e '.[agent-framework]')"
AG = "AutoGen AgentChat is not installed (pip install -e '.[autogen]')"


def installed(distribution: str) -> Any:
    from importlib import metadata

    from packaging.version import Version

    return Version(metadata.version(distribution))


def compact(compactor: Any, history: list[dict]) -> list[dict]:
    out = compactor.compact(history, iteration=1)
    return asyncio.run(out) if asyncio.iscoroutine(out) else out


# --- Semantic Kernel ------------------------------------------------------------------------------


def _sk_kernel() -> Any:
    """A kernel with the loop tests' tool as SK's plugin ``files`` (the model calls it ``files-read_file``)."""
    from semantic_kernel import Kernel
    from semantic_kernel.functions import kernel_function

    class Files:
        @kernel_function(name="read_file", description="Read a file")
        def read_file(self, path: str) -> str:
            return read_file(path)

    kernel = Kernel()
    kernel.add_plugin(Files(), plugin_name="files")
    return kernel


def _sk_agent(server: ScriptedServer) -> Any:
    from semantic_kernel.agents import ChatCompletionAgent
    from semantic_kernel.connectors.ai.function_choice_behavior import FunctionChoiceBehavior
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion

    service = OpenAIChatCompletion(ai_model_id="scripted", async_client=server.async_client())
    return ChatCompletionAgent(service=service, kernel=_sk_kernel(), name="coder", instructions=SYSTEM_PROMPT, function_choice_behavior=FunctionChoiceBehavior.Auto())


def test_semantic_kernel_agent_thread_path_matches_chat_completion_agent():
    """``invoked_by="agent_thread"``: a thread whose history is a reducer with ``auto_reduce=True``, as
    ChatCompletionAgent adds each message to it. At releases where the agent never calls the reducer
    (microsoft/semantic-kernel#12303) the adapter's path leaves the history unchanged too."""
    pytest.importorskip("semantic_kernel", reason=SK)
    from semantic_kernel.agents import ChatHistoryAgentThread
    from semantic_kernel.contents.history_reducer.chat_history_truncation_reducer import ChatHistoryTruncationReducer

    from compaction_suite.adapters.semantic_kernel import from_semantic_kernel, truncation_reducer

    reductions: list[int] = []

    class Recording(ChatHistoryTruncationReducer):
        async def reduce(self):
            reductions.append(len(self.messages))
            return await super().reduce()

    with ScriptedServer("files-read_file") as server:
        agent = _sk_agent(server)
        history = Recording(target_count=2, auto_reduce=True)

        async def run() -> None:
            thread = ChatHistoryAgentThread(chat_history=history)
            for turn in range(TURNS):
                thread = (await agent.get_response(messages=f"turn {turn}: read the files", thread=thread)).thread

        asyncio.run(run())
        assert not server.rejected
    kept = from_semantic_kernel(list(history.messages))
    adapter = compact(truncation_reducer(Settings(), target_count=2, invoked_by="agent_thread"), kept)
    if reductions:
        assert len(adapter) < len(kept)  # the agent reduces its thread: so does the adapter's path
    else:
        assert len(kept) > 2 and adapter == kept  # the agent never reduced (#12303): nor does the adapter's path


def test_semantic_kernel_agent_thread_reduce_path_matches_the_samples_loop():
    """``invoked_by="agent_thread_reduce"``: SK's history-reducer agent samples give
    ``ChatHistoryAgentThread`` a new (empty) reducer and call ``await thread.reduce()`` after each turn.
    Where the thread keeps the reducer, it reduces and so does the adapter's path on the same history;
    where the thread swaps an empty reducer for a plain ``ChatHistory`` (its ``chat_history or
    ChatHistory()``, before 1.30.0: microsoft/semantic-kernel#11976) ``thread.reduce()`` does nothing,
    nor does the path."""
    pytest.importorskip("semantic_kernel", reason=SK)
    from semantic_kernel.agents import ChatHistoryAgentThread
    from semantic_kernel.contents.history_reducer.chat_history_truncation_reducer import ChatHistoryTruncationReducer

    from compaction_suite.adapters.semantic_kernel import from_semantic_kernel, truncation_reducer

    before: list[list[dict]] = []

    class Recording(ChatHistoryTruncationReducer):
        async def reduce(self):
            before.append(from_semantic_kernel(list(self.messages)))
            return await super().reduce()

    with ScriptedServer("files-read_file") as server:
        agent = _sk_agent(server)
        thread = ChatHistoryAgentThread(chat_history=Recording(target_count=2))

        async def run() -> Any:
            nonlocal thread
            for turn in range(TURNS):
                thread = (await agent.get_response(messages=f"turn {turn}: read the files", thread=thread)).thread
                await thread.reduce()
            return thread._chat_history

        history = asyncio.run(run())
        assert not server.rejected
    if isinstance(history, Recording):  # the thread kept the reducer: each reduce() saw the whole thread
        assert before and len(compact(truncation_reducer(Settings(), target_count=2, invoked_by="agent_thread_reduce"), before[-1])) < len(before[-1])
    else:  # swapped for a plain ChatHistory: reduce() never reached a reducer, and the path leaves the history as it is
        kept = from_semantic_kernel(list(history.messages))
        assert not before and len(kept) > 2 and compact(truncation_reducer(Settings(), target_count=2, invoked_by="agent_thread_reduce"), kept) == kept


def _sk_responses_agent(endpoint: Any) -> Any:
    from semantic_kernel.agents import OpenAIResponsesAgent

    return OpenAIResponsesAgent(ai_model_id="scripted", client=endpoint.async_client(), kernel=_sk_kernel(), name="coder", instructions=SYSTEM_PROMPT, store_enabled=False)


def test_semantic_kernel_responses_agent_stores_a_rounds_results_in_one_tool_message():
    """``invoked_by="responses_thread_reduce"`` with ``tool_results="grouped"``: ``OpenAIResponsesAgent``
    without a stored response keeps its thread's history itself (``ResponsesAgentThread(chat_history=...,
    enable_store=False)``) and adds to it one TOOL message holding each round's results
    (``merge_function_results``), unlike ``ChatCompletionAgent``'s one per result. A reducer given as that
    history sees the round so, and the adapter's path, on the same history, reduces it as ``await
    thread.reduce()`` does."""
    pytest.importorskip("semantic_kernel", reason=SK)
    from scripted_endpoint import ScriptedResponsesEndpoint
    from semantic_kernel.agents.open_ai.openai_responses_agent import ResponsesAgentThread
    from semantic_kernel.contents import AuthorRole, FunctionResultContent
    from semantic_kernel.contents.history_reducer.chat_history_truncation_reducer import ChatHistoryTruncationReducer

    from compaction_suite.adapters.semantic_kernel import from_semantic_kernel, to_semantic_kernel, truncation_reducer

    seen: list[tuple[list[dict], list[dict]]] = []

    class Recording(ChatHistoryTruncationReducer):
        async def reduce(self):
            before = from_semantic_kernel(list(self.messages))
            shapes.append([(m.role, sum(isinstance(i, FunctionResultContent) for i in m.items)) for m in self.messages])
            result = await super().reduce()
            seen.append((before, from_semantic_kernel(list(self.messages))))
            return result

    shapes: list[list[tuple[Any, int]]] = []
    endpoint = ScriptedResponsesEndpoint("files-read_file")
    agent = _sk_responses_agent(endpoint)
    thread = ResponsesAgentThread(client=agent.client, chat_history=Recording(target_count=4), enable_store=False)

    async def run() -> None:
        for turn in range(TURNS):
            async for _ in agent.invoke(messages=f"turn {turn}: read the files", thread=thread):
                pass
            await thread.reduce()

    asyncio.run(run())
    tools = [results for shape in shapes for role, results in shape if role == AuthorRole.TOOL]
    assert tools and set(tools) == {ROUND_CALLS}  # every TOOL message the agent stored holds a whole round's results
    before, after = seen[-1]
    converted, _ = to_semantic_kernel(before, tool_results="grouped")
    assert [(m.role, sum(isinstance(i, FunctionResultContent) for i in m.items)) for m in converted] == shapes[-1]
    assert len(after) < len(before)
    assert compact(truncation_reducer(Settings(), target_count=4, invoked_by="responses_thread_reduce", tool_results="grouped"), before) == after


def test_semantic_kernel_add_message_async_path_reduces_between_rounds():
    """``invoked_by="add_message_async"``: with ``auto_reduce=True`` SK's history reduces in
    ``add_message_async``, which the caller uses; the kernel's function calling adds each round's results
    with the plain ``add_message``, so a reduction always sees every call answered (``called: between_rounds``)."""
    pytest.importorskip("semantic_kernel", reason=SK)
    from semantic_kernel import Kernel
    from semantic_kernel.connectors.ai.function_choice_behavior import FunctionChoiceBehavior
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion, OpenAIChatPromptExecutionSettings
    from semantic_kernel.contents import ChatMessageContent
    from semantic_kernel.contents.history_reducer.chat_history_truncation_reducer import ChatHistoryTruncationReducer
    from semantic_kernel.contents.utils.author_role import AuthorRole
    from semantic_kernel.functions import kernel_function

    from compaction_suite.adapters.semantic_kernel import from_semantic_kernel

    seen: list[list[dict]] = []

    class Recording(ChatHistoryTruncationReducer):
        async def reduce(self):
            seen.append(from_semantic_kernel(list(self.messages)))
            return await super().reduce()

    class Files:
        @kernel_function(name="read_file", description="Read a file")
        def read_file(self, path: str) -> str:
            return read_file(path)

    with ScriptedServer("files-read_file") as server:
        kernel = Kernel()
        kernel.add_plugin(Files(), plugin_name="files")
        service = OpenAIChatCompletion(ai_model_id="scripted", async_client=server.async_client())
        settings = OpenAIChatPromptExecutionSettings(function_choice_behavior=FunctionChoiceBehavior.Auto())
        history = Recording(target_count=4, auto_reduce=True)

        async def run() -> None:
            for turn in range(TURNS + 1):
                await history.add_message_async(ChatMessageContent(role=AuthorRole.USER, content=f"turn {turn}: read the files"))
                replies = await service.get_chat_message_contents(chat_history=history, settings=settings, kernel=kernel)
                for reply in replies:
                    await history.add_message_async(reply)

        asyncio.run(run())
        assert not server.rejected, server.rejected
    assert seen, "add_message_async never reduced"
    for h in seen:
        assert oracle.check_calls_have_one_result(h) is None, h  # every reduction between rounds
    assert len(history.messages) < 4 + 2 * (1 + ROUNDS_PER_TURN * (1 + ROUND_CALLS))  # it did reduce


def test_semantic_kernel_tool_message_shapes_at_the_installed_release():
    """SK's tool results: ``FunctionResultContent`` from function calling; a TOOL message of text only
    from ``ChatHistory.add_tool_message(str)`` before 1.35.1 (microsoft/semantic-kernel#12753 made it a
    ``FunctionResultContent``) and from ``ChatMessageContent(role=TOOL, content=str)`` at any release.
    The adapter draws both (``tool_message``), and its plain-text messages are what SK holds."""
    pytest.importorskip("semantic_kernel", reason=SK)
    from packaging.version import Version
    from semantic_kernel.contents import ChatHistory, ChatMessageContent, FunctionResultContent, TextContent
    from semantic_kernel.contents.utils.author_role import AuthorRole

    from compaction_suite.adapters.semantic_kernel import to_semantic_kernel

    history = ChatHistory()
    if installed("semantic-kernel") < Version("1.35.1"):
        history.add_tool_message("contents of a.py")
        assert [type(i) for i in history.messages[-1].items] == [TextContent]
    else:
        history.add_tool_message("contents of a.py", tool_call_id="call_1", function_name="read_file")
        assert [type(i) for i in history.messages[-1].items] == [FunctionResultContent]
    history.add_message(ChatMessageContent(role=AuthorRole.TOOL, content="contents of b.py"))
    assert history.messages[-1].role == AuthorRole.TOOL and [type(i) for i in history.messages[-1].items] == [TextContent]
    drawn, _ = to_semantic_kernel([{"role": "tool", "tool_call_id": "call_2", "content": "contents of b.py"}], tool_message="text")
    assert drawn[0].role == AuthorRole.TOOL and [type(i) for i in drawn[0].items] == [TextContent] and drawn[0].content == "contents of b.py"


@pytest.mark.parametrize("fail_on_error", [True, False])
def test_semantic_kernel_summarization_reducer_under_a_failing_summarizer_in_the_agent_loop(fail_on_error):
    """The summarization reducer between ChatCompletionAgent turns, its summarizer answering HTTP 500:
    with ``fail_on_error=True`` (SK's default, documented: "Raise error if summarization fails")
    ``thread.reduce()`` raises; with ``False`` the thread is left as it was and the next turn runs."""
    pytest.importorskip("semantic_kernel", reason=SK)
    import openai
    from semantic_kernel.agents import ChatHistoryAgentThread
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
    from semantic_kernel.contents.history_reducer.chat_history_summarization_reducer import ChatHistorySummarizationReducer
    from semantic_kernel.exceptions.content_exceptions import ChatHistoryReducerException

    from compaction_suite.conformance.summarizer_server import SummarizerServer

    with ScriptedServer("files-read_file") as server, SummarizerServer() as summarizer:
        summarizer.fault("500")
        client = openai.AsyncOpenAI(api_key="test", base_url=summarizer.base_url, max_retries=0)
        reducer = ChatHistorySummarizationReducer(service=OpenAIChatCompletion(ai_model_id="summarizer", async_client=client), target_count=2, fail_on_error=fail_on_error)
        agent = _sk_agent(server)

        async def run() -> tuple[int, int, BaseException | None]:
            thread = ChatHistoryAgentThread(chat_history=reducer)
            thread = (await agent.get_response(messages="turn 0: read the files", thread=thread)).thread
            before = len(reducer.messages)
            raised = None
            try:
                await thread.reduce()
            except ChatHistoryReducerException as error:
                raised = error
            after = len(reducer.messages)
            if raised is None:
                await agent.get_response(messages="turn 1: read the files", thread=thread)
            return before, after, raised

        before, after, raised = asyncio.run(run())
        assert summarizer.requests, "the summarizer was never asked"
    assert (raised is not None) == fail_on_error
    assert after == before  # either way nothing was replaced


# --- Microsoft Agent Framework -------------------------------------------------------------------


def test_agent_framework_compaction_provider_runs_once_per_run_on_the_loaded_history():
    """``compaction_provider(phase="before")``: ``CompactionProvider.before_run`` compacts what the history
    provider loaded, once per ``agent.run`` (not inside the function-invocation loop), so always between
    rounds; the model then gets the projection, which the API accepts."""
    pytest.importorskip("agent_framework", reason=AF)
    import agent_framework as af
    from agent_framework._compaction import CompactionProvider, SlidingWindowStrategy
    from agent_framework._sessions import InMemoryHistoryProvider
    from agent_framework_openai import OpenAIChatCompletionClient

    from compaction_suite.adapters.agent_framework import compaction_provider, from_agent_framework

    seen: list[list[dict]] = []
    received: list[list[dict]] = []

    class Recording(CompactionProvider):
        async def before_run(self, *, agent, session, context, state):
            seen.append(from_agent_framework(context.get_messages()))
            await super().before_run(agent=agent, session=session, context=context, state=state)
            received.append(from_agent_framework(context.get_messages()))

    with ScriptedServer() as server:
        client = OpenAIChatCompletionClient(model="scripted", async_client=server.async_client())
        history = InMemoryHistoryProvider()
        provider = Recording(before_strategy=SlidingWindowStrategy(keep_last_groups=2), history_source_id=history.source_id)
        agent = af.Agent(client, instructions=SYSTEM_PROMPT, tools=[read_file], context_providers=[history, provider])

        async def run() -> None:
            session = agent.create_session()
            for turn in range(TURNS + 1):
                await agent.run(f"turn {turn}: read the files", session=session)

        asyncio.run(run())
        assert not server.rejected, server.rejected
        assert len(server.requests) == (TURNS + 1) * (ROUNDS_PER_TURN + 1)
    assert len(seen) == TURNS + 1  # once per run
    for h in seen:
        assert oracle.check_calls_have_one_result(h) is None, h
    assert_no_system(seen)  # instructions= stay outside what the provider compacts
    adapter = compaction_provider(Settings(), phase="before", strategy="sliding_window", keep_last_groups=2)
    assert compact(adapter, seen[-1]) == received[-1]  # the adapter's path gives what the provider gave the model


def test_agent_framework_token_budget_drops_a_leading_system_message_in_its_loop():
    """``TokenBudgetComposedStrategy`` inside ``Agent(compaction_strategy=...)``'s function-invocation loop:
    a single system message passed first, as a message, is dropped from the model's request once a round's
    results exceed the budget (its strict fallback excludes system groups). The matrix labels AF's CORE-3
    finding with this (``SHOWN_IN_LOOP``)."""
    pytest.importorskip("agent_framework", reason=AF)
    import agent_framework as af
    from agent_framework_openai import OpenAIChatCompletionClient

    def read_big_file(path: str) -> str:
        """Read a file (a long log)."""
        return f"{path}: " + "log line\n" * 1500

    with ScriptedServer("read_big_file") as server:
        client = OpenAIChatCompletionClient(model="scripted", async_client=server.async_client())
        strategy = af.TokenBudgetComposedStrategy(
            token_budget=2000, tokenizer=af.CharacterEstimatorTokenizer(),
            strategies=[af.ToolResultCompactionStrategy(keep_last_tool_call_groups=1), af.SlidingWindowStrategy(keep_last_groups=6)],
        )  # fmt: skip
        agent = af.Agent(client, tools=[read_big_file], compaction_strategy=strategy)
        system = "You are a coding agent. Never delete files."
        asyncio.run(agent.run([af.Message(role="system", contents=[af.Content.from_text(system)]), af.Message(role="user", contents=[af.Content.from_text("read the logs")])]))
        sent = [[m.get("role") for m in body["messages"]] for body in server.requests]
    assert sent[0][0] == "system" and sent[0].count("system") == 1  # one leading system message, passed as a message
    dropped = [roles for roles in sent if "system" not in roles]
    assert dropped, sent  # later requests of the same run lost it


# --- AutoGen ------------------------------------------------------------------------------------------


def _autogen_run(context: Any) -> tuple[list[list[dict]], list[list[Any]]]:
    from autogen_agentchat.agents import AssistantAgent

    from compaction_suite.adapters.autogen import from_autogen

    seen: list[list[dict]] = []
    sent: list[list[Any]] = []
    inner_get = context.get_messages

    async def recording_get():
        seen.append(from_autogen(list(context._messages)))
        return await inner_get()

    context.get_messages = recording_get

    client = autogen_scripted_client(sent)
    context._model_client = getattr(context, "_model_client", None) and client
    agent = AssistantAgent(
        "coder", model_client=client, tools=[read_file], system_message=SYSTEM_PROMPT, model_context=context, max_tool_iterations=ROUNDS_PER_TURN + 1,
    )  # fmt: skip
    run_autogen_turns(agent)
    return seen, sent


@pytest.mark.parametrize("kind", ["token_limited", "head_and_tail"])
def test_autogen_contexts_inside_assistant_agent_loop(kind):
    """``TokenLimitedChatCompletionContext`` and ``HeadAndTailChatCompletionContext`` as ``AssistantAgent``
    reads them before each model call: after each round's packed results (``called: between_rounds``),
    the system message outside; what the agent sends is the adapter's output on that history."""
    pytest.importorskip("autogen_agentchat", reason=AG)
    from autogen_core.model_context import HeadAndTailChatCompletionContext, TokenLimitedChatCompletionContext
    from autogen_core.models import SystemMessage
    from autogen_ext.models.replay import ReplayChatCompletionClient

    from compaction_suite.adapters.autogen import MODEL_INFO, from_autogen, head_and_tail

    if kind == "token_limited":
        context = TokenLimitedChatCompletionContext(ReplayChatCompletionClient([], model_info=MODEL_INFO), token_limit=40)
    else:
        context = HeadAndTailChatCompletionContext(head_size=1, tail_size=3)
    seen, sent = _autogen_run(context)
    assert len(seen) == len(sent) == TURNS * (ROUNDS_PER_TURN + 1)
    assert_between_rounds(seen)
    assert_no_system(seen)
    assert all(isinstance(m[0], SystemMessage) and m[0].content == SYSTEM_PROMPT for m in sent)
    views = [from_autogen(list(m[1:])) for m in sent]
    if kind == "head_and_tail":
        assert compact(head_and_tail(Settings(), head_size=1, tail_size=3), seen[-1]) == views[-1]
    assert all(oracle.check_tool_results_have_calls(v) is None for v in views[:1])  # the first request of a run is whole


def test_scripted_server_rejects_what_the_api_rejects():
    """The stand-in's 400s (a test of the test double)."""
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    assert rejection([{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "call_1", "content": "x"}])[0].startswith("Invalid parameter")
    assert "call_1" in rejection([{"role": "assistant", "content": None, "tool_calls": [call]}, {"role": "user", "content": "hi"}])[0]
    assert rejection([{"role": "assistant", "content": None, "tool_calls": [call]}, {"role": "tool", "tool_call_id": "call_1", "content": "x"}]) is None
    ScriptedEndpoint()  # the script the server plays
