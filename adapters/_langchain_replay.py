"""LangChain's ``create_agent`` replaying a history turn by turn, its model requests whole (SPEC FIRE-7).

The agent holds a system prompt and tool schemas beside its messages, as a user's agent does; its
model is ``ChatOpenAI`` on a context-window TEST DOUBLE of its own (the project's `SummarizerServer`,
`SummarizerServer.script`): each model call is answered with the history's next assistant message,
``usage`` counted over the whole request (messages, system prompt and tool definitions), and a
request over the window gets OpenAI's ``context_length_exceeded`` answer, as the provider sends it.
The tools answer with the history's own results (a ``wrap_tool_call`` hook; nothing executes). Each
user turn is one ``agent.invoke`` on a checkpointed thread, the middleware under test running where
``create_agent`` runs it; the output is the thread's messages after the last turn.

The replay stops where the history does: a model call with no scripted answer left (the history
ends with a user turn or tool results) or a call whose result the history does not hold (its last
round in flight) ends it, the state as the loop left it before that step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._common import Message, Note, Notes, requires
from ._model_double import ModelDouble

EXTRA = "langchain"
TOOL_WORDS = (
    "Search the repository's indexed source files, issues and documentation for the given query and return the "
    "matching paths with a short excerpt of each match, ordered by relevance; use it before reading a file whose "
    "path you do not know, and narrow the query when it returns more than twenty matches."
)
"""A tool's description: the length of a real one (about 60 words)."""
SYSTEM_WORDS = (
    "You are a careful software engineering agent. Read the relevant files before changing them, run the tests "
    "after every change, explain what you did and why, and ask before deleting anything. "
)
"""One sentence of the system prompt, repeated to the configured size."""


class Unanswered(Exception):
    """A tool call whose result the history does not hold: its last round is in flight, and the replay ends."""


def system_prompt(tokens: int) -> str:
    """A system prompt of about ``tokens`` tokens (chars/4)."""
    return (SYSTEM_WORDS * (4 * tokens // len(SYSTEM_WORDS) + 1))[: 4 * tokens]


def tools_for(history: list[Message], extra: int) -> list[Any]:
    """The agent's tools: one per tool name the history calls, and ``extra`` more the agent offers (an
    agent with many tools), each with a real-sized description and an open parameter schema."""
    tools = requires("langchain_core.tools", EXTRA)
    called = sorted({str((c.get("function") or {}).get("name")) for m in history for c in m.get("tool_calls") or []})
    names = [*called, *(f"search_index_{n}" for n in range(extra))]
    schema = {"type": "object", "properties": {"query": {"type": "string", "description": "What to look for."}}, "additionalProperties": True}

    def never_run(**_: Any) -> str:
        raise Unanswered("the replay answers tools from the history")

    return [tools.StructuredTool.from_function(func=never_run, name=name, description=TOOL_WORDS, args_schema=schema) for name in names]


def recorded_results(results: dict[str, Any]) -> Any:
    """Middleware answering each tool call with the history's result for its id (``wrap_tool_call``)."""
    base: Any = requires("langchain.agents.middleware", EXTRA).AgentMiddleware
    lc = requires("langchain_core.messages", EXTRA)

    class RecordedResults(base):
        def wrap_tool_call(self, request: Any, handler: Any) -> Any:
            call = request.tool_call
            if call["id"] not in results:
                raise Unanswered(f"tool call {call['id']!r} has no result in the history")
            return lc.ToolMessage(content=results[call["id"]], tool_call_id=call["id"])  # no name: the history's own message comes back

    return RecordedResults()


def turns(history: list[Message], converted: list[Any]) -> list[tuple[list[Any], list[Message]]]:
    """The history as (the messages the user adds, the assistant messages the model answers next)."""
    found: list[tuple[list[Any], list[Message]]] = []
    given: list[Any] = []
    i = 0
    while i < len(history):
        if history[i].get("role") != "assistant":
            given.append(converted[i])
            i += 1
            continue
        script: list[Message] = []
        while i < len(history) and history[i].get("role") in ("assistant", "tool"):
            if history[i]["role"] == "assistant":
                script.append(history[i])
            i += 1
        found.append((given, script))
        given = []
    if given:
        found.append((given, []))
    return found


def replay(build: Callable[[Any], Any], double: ModelDouble, history: list[Message], converted: list[Any], results: dict[str, Any]) -> list[Any]:
    """The thread's messages after replaying ``history`` (``converted``: its LangChain messages) through
    the agent ``build(checkpointer)`` makes, whose tool results come from ``results`` (filled here by call id)."""
    checkpoint = requires("langgraph.checkpoint.memory", EXTRA)
    from compaction_suite.conformance.summarizer_server import SCRIPT_EXHAUSTED_TEXT

    config = {"configurable": {"thread_id": "compaction-suite-replay"}, "recursion_limit": 10_000}
    graph = build(checkpoint.InMemorySaver())
    server = double.server()
    for msg in converted:
        if getattr(msg, "type", None) == "tool":
            results[msg.tool_call_id] = msg.content
    for given, script in turns(history, converted):
        server.script(script)
        answered = server.counts.get("scripted", 0)
        pending: list[Any] = list(given)
        while True:
            try:
                graph.invoke({"messages": pending}, config)
            except Unanswered:
                return list(graph.get_state(config).values["messages"])
            except Exception as error:
                if SCRIPT_EXHAUSTED_TEXT not in str(error):
                    raise
            pending = []
            if server.counts.get("scripted", 0) - answered >= len(script):
                break
    server.script(None)
    return list(graph.get_state(config).values["messages"])


def noted(state: list[Any], history: list[Message], notes: Notes) -> Notes:
    """``notes`` with the history's own dict for each message the loop made (a model answer, matched in
    order by its tool calls or its text; a tool result, by its call id), so they convert back exactly."""
    lc = requires("langchain_core.messages", EXTRA)
    assistants = [m for m in history if m.get("role") == "assistant"]
    tools = {m.get("tool_call_id"): m for m in history if m.get("role") == "tool"}
    for msg in state:
        if notes.get(msg.id) is not None:
            continue
        if isinstance(msg, lc.ToolMessage) and msg.tool_call_id in tools:
            notes.put(msg.id, Note(original=tools.pop(msg.tool_call_id)))
        elif isinstance(msg, lc.AIMessage):
            ids = [c["id"] for c in msg.tool_calls] + [c.get("id") for c in msg.invalid_tool_calls]
            match = next((a for a in assistants if [c.get("id") for c in a.get("tool_calls") or []] == ids and (ids or _text(a) == msg.content)), None)
            if match is not None:
                assistants.remove(match)
                notes.put(msg.id, Note(original=match))
    return notes


def _text(message: Message) -> Any:
    content = message.get("content")
    return "" if content is None else content
