"""Deep Agents delegating to a sub-agent in the run that compacts (SPEC STORE-33): the
``delegated(history, subagent_history)`` hook of ``deepagents:summarization`` (``path: "request"``).

``create_deep_agent(model, middleware=[parent script], subagents=[{"name": "worker", ..., "tools":
[...], "middleware": [worker script]}], backend=<the compactor's FilesystemBackend>, checkpointer=
InMemorySaver())`` is invoked once on ``history`` on a thread (``{"configurable": {"thread_id": ...}}``,
as an application with a checkpointer runs it). Each agent's own stack (``create_deep_agent`` gives the
parent and every declarative sub-agent a ``create_summarization_middleware(model, backend)``) compacts
what its model is sent; the scripts are the innermost middleware, so what they record is the request
after the compaction, and they answer in place of the model:

* the parent's first request is answered with a call of deepagents' ``task`` tool handing the worker
  ``subagent_history``'s first user message as its task; its later ones with a closing answer;
* the worker's requests are answered with ``subagent_history``'s assistant messages in order, its
  tool calls with the history's own results (``wrap_tool_call``; nothing executes), so the worker's
  loop runs that history, its summarization firing where its window says, inside the parent's
  ``task`` call (deepagents' ``task`` tool invokes the sub-agent graph under the parent's run config).

Summaries come from the model (``ChatOpenAI`` on the suite's summarizer, its profile the window), as in
every configuration of the adapter. The hook returns what each agent's model was sent last (chat
completions, the system prompt apart); ``read_offload`` reads the backend both wrote to.
"""

from __future__ import annotations

from typing import Any

from compaction_suite.message import Message

from ._common import requires, text_of_parts
from .langchain import chat_model, from_langchain, to_langchain

EXTRA = "deepagents"
WORKER = "worker"
TASK_CALL = "call_compaction_suite_task"
THREAD = "compaction-suite-delegating"
CLOSING = "Done: the worker's findings are in."


def _script(sent: list[Any], answers: list[Any], results: dict[str, Any]) -> Any:
    """An innermost ``AgentMiddleware`` recording each model request's messages (``sent`` holds the
    last) and answering with the next of ``answers`` (a closing answer once they run out), each tool
    call with ``results``' message for its id."""
    middleware = requires("langchain.agents.middleware", EXTRA)
    lc = requires("langchain_core.messages", EXTRA)
    queue = list(answers)

    class CompactionSuiteScript(middleware.AgentMiddleware):  # type: ignore[name-defined]
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            sent[:] = list(request.messages)
            answer = queue.pop(0) if queue else lc.AIMessage(content=CLOSING)
            response = getattr(middleware, "ModelResponse", None)
            return response(result=[answer]) if response is not None else answer

        def wrap_tool_call(self, request: Any, handler: Any) -> Any:
            call = request.tool_call
            if call["id"] in results:
                return results[call["id"]]
            return handler(request)  # the parent's task call: deepagents' own tool runs the worker

    return CompactionSuiteScript()


def _stub_tools(converted: list[Any]) -> list[Any]:
    """One tool per name the worker's history calls (answered by its script, never run)."""
    tools = requires("langchain_core.tools", EXTRA)
    names = sorted({c["name"] for m in converted for c in getattr(m, "tool_calls", None) or []})
    schema = {"type": "object", "properties": {}, "additionalProperties": True}

    def never_run(**_: Any) -> str:
        raise RuntimeError("the worker's tools are answered from its history")

    return [tools.StructuredTool.from_function(func=never_run, name=n, description=f"The {n} tool.", args_schema=schema) for n in names]


def delegating(settings: Any, o: dict[str, Any], window: int, backend: Any) -> Any:
    """The hook: ``delegated(history, subagent_history) -> {"agent": ..., "subagent": ...}`` (SPEC STORE-33)."""
    deepagents = requires("deepagents", EXTRA)
    memory = requires("langgraph.checkpoint.memory", EXTRA)
    lc = requires("langchain_core.messages", EXTRA)

    def delegated(history: list[Message], subagent_history: list[Message]) -> dict[str, list[Message]]:
        converted, notes = to_langchain(history, tool_messages=o["tool_messages"])
        worker, worker_notes = to_langchain(subagent_history, tool_messages=o["tool_messages"])
        if not worker or not isinstance(worker[0], lc.HumanMessage):
            raise ValueError("a sub-agent's history starts with its task, a user message")
        task = lc.AIMessage(content="", tool_calls=[{"id": TASK_CALL, "name": "task", "args": {"description": text_of_parts(worker[0].content), "subagent_type": WORKER}, "type": "tool_call"}])
        parent_sent: list[Any] = []
        worker_sent: list[Any] = []
        results = {m.tool_call_id: m for m in worker if isinstance(m, lc.ToolMessage)}
        spec = {
            "name": WORKER, "description": "Works through one delegated task with its own tools.",
            "system_prompt": "Do the task you are given with your tools and report what you found.",
            "tools": _stub_tools(worker), "middleware": [_script(worker_sent, [m for m in worker if isinstance(m, lc.AIMessage)], results)],
        }  # fmt: skip
        model = chat_model(settings, o, profile={"max_input_tokens": window})
        agent = deepagents.create_deep_agent(
            model=model, middleware=[_script(parent_sent, [task], {})], subagents=[spec], backend=backend, checkpointer=memory.InMemorySaver()
        )
        agent.invoke({"messages": converted}, {"configurable": {"thread_id": THREAD}, "recursion_limit": 10_000})
        return {"agent": from_langchain(parent_sent, notes), "subagent": from_langchain(worker_sent, worker_notes)}

    return delegated
