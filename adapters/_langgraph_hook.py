"""LangGraph's prebuilt ReAct agent replaying a history with a ``pre_model_hook`` (SPEC FIRE-7).

``create_react_agent(model, tools, pre_model_hook=hook)`` runs ``hook`` on the agent's state before
every model call; a hook that returns ``llm_input_messages`` has those sent to the model instead of
``state["messages"]``, which it leaves as it was (langgraph-prebuilt ``chat_agent_executor``,
``_get_model_input_state``). LangGraph's documented recipe for managing a ReAct agent's history is
such a hook around ``trim_messages`` ("Manage message history": ``trim_messages(state["messages"],
strategy="last", token_counter=count_tokens_approximately, max_tokens=..., start_on="human",
end_on=("human", "tool"))`` returned as ``{"llm_input_messages": ...}``).

The replay is `_langchain_replay`'s: each user turn is one ``invoke`` on a checkpointed thread, the
model ``ChatOpenAI`` on a context-window double of its own (a request over its window gets OpenAI's
``context_length_exceeded`` answer), the tools answering with the history's own results through the
``ToolNode``'s ``wrap_tool_call`` (nothing executes). What the model is sent is what the agent's own
model node chose from the hook's answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._common import CannotDrive, accepts, requires
from ._langchain_replay import Unanswered, replay, tools_for
from ._model_double import ModelDouble

EXTRA = "langchain"
TARGET = "langchain:trim_messages"


def trimming_hook(trim: Callable[[list[Any]], list[Any]]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The documented ``pre_model_hook``: ``trim`` on the state's messages, handed back as ``llm_input_messages``."""

    def pre_model_hook(state: dict[str, Any]) -> dict[str, Any]:
        return {"llm_input_messages": trim(list(state["messages"]))}

    return pre_model_hook


def _tool_node(tools: list[Any], results: dict[str, Any]) -> Any:
    """A ``ToolNode`` over ``tools`` whose ``wrap_tool_call`` answers each call with the history's result."""
    prebuilt = requires("langgraph.prebuilt", EXTRA)
    lc = requires("langchain_core.messages", EXTRA)
    if not accepts(prebuilt.ToolNode, "wrap_tool_call"):
        raise CannotDrive(TARGET, "langgraph-prebuilt", "ToolNode takes wrap_tool_call from langgraph-prebuilt 1.0 on")

    def answer(request: Any, execute: Any) -> Any:
        call = request.tool_call
        if call["id"] not in results:
            raise Unanswered(f"tool call {call['id']!r} has no result in the history")
        return lc.ToolMessage(content=results[call["id"]], tool_call_id=call["id"])

    return prebuilt.ToolNode(tools, wrap_tool_call=answer)


def replayed(model: Any, double: ModelDouble, hook: Any, history: list[Any], converted: list[Any]) -> list[Any]:
    """The thread's messages after replaying ``history`` (``converted``: its LangChain messages) through
    ``create_react_agent(model, tools, pre_model_hook=hook)``; an error the loop lets through escapes
    (the provider's answer to a request over the double's window ends the run)."""
    create_react_agent = requires("langgraph.prebuilt", EXTRA).create_react_agent
    results: dict[str, Any] = {}
    tools = _tool_node(tools_for(history, 0), results)

    def build(checkpointer: Any) -> Any:
        return create_react_agent(model, tools=tools, pre_model_hook=hook, checkpointer=checkpointer)

    return replay(build, double, history, converted, results)
