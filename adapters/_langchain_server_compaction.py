"""LangChain's ``create_agent`` on ``ChatAnthropic`` with the Messages API's server-side compaction
(``context_management`` with the ``compact_20260112`` edit), driven by the agent's own loop on the suite's
Messages API test double (SPEC Part A, "Wire formats", Decision: the Messages API's server-side
compaction; ANTH-7).

The history arrives as a Messages API request part. Its last assistant message is the step the agent's
model answers (`last_step`); the messages before it, ending in a user message, are the agent's state, as
``to_langchain`` draws them (``_langchain_anthropic``), and its ``system`` the agent's ``system_prompt``.
``ChatAnthropic`` (``betas``, ``context_management``, ``streaming`` as configured) asks the double, each
request carrying the step to answer with (`summarizer_apis.SCRIPTED`, through ``model_kwargs``'
``extra_body``); when the request's input reaches the edit's trigger the double compacts as the API does
and answers the compaction block before the step. The tools answer the step's calls with the history's
results (a ``wrap_tool_call`` hook); a step without calls ends the turn, and the next turn is a probe user
message. The next model request, read by a ``wrap_model_call`` hook before it is sent, is the output: the
step's ``AIMessage`` as ``ChatAnthropic`` stored it (from the stream with ``stream_mode="messages"``, or
from the parsed reply) and formats it again (``_get_request_payload``), then the history's messages after
the step; read as the API reads it, from the compaction block on (the guide: "The API automatically drops
all message blocks prior to the compaction block"). Where the double did not compact, the history comes
back unchanged: the request is the history replayed.

A history the loop cannot have produced (no assistant message after a user message, a step whose calls
the next message does not answer, messages after the step other than its results or one user turn) is
returned unchanged.
"""

from __future__ import annotations

import copy
from typing import Any

from ._common import requires
from ._server_compaction import PROBE, Sent, blocks, last_step, output, sent_in

EXTRA = "langchain"


def _tools(step: dict[str, Any]) -> list[Any]:
    tools = requires("langchain_core.tools", EXTRA)
    names = dict.fromkeys(str(b.get("name")) for b in blocks(step) if b.get("type") == "tool_use")
    schema = {"type": "object", "properties": {}, "additionalProperties": True}

    def never_run(**_: Any) -> str:
        raise RuntimeError("the replay answers tools from the history")

    return [tools.StructuredTool.from_function(func=never_run, name=name, description=f"{name} (replayed)", args_schema=schema) for name in names]


def _hooks(results: dict[str, Any]) -> Any:
    """Middleware answering each call with the history's result and reading the request after the step."""
    base: Any = requires("langchain.agents.middleware", EXTRA).AgentMiddleware
    lc = requires("langchain_core.messages", EXTRA)

    calls: list[int] = []

    class Replay(base):
        def wrap_tool_call(self, request: Any, handler: Any) -> Any:
            block = results[request.tool_call["id"]]
            return lc.ToolMessage(content=copy.deepcopy(block.get("content", "")), tool_call_id=request.tool_call["id"], status="error" if block.get("is_error") else "success")

        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            calls.append(1)
            if len(calls) > 1:
                raise Sent(list(request.messages))
            return handler(request)

    return Replay()


def _run(agent: Any, messages: list[Any], stream: bool) -> list[Any]:
    """The state's messages after one run (``stream_mode="messages"`` when ``stream``, as the report's agent)."""
    if not stream:
        return list(agent.invoke({"messages": messages})["messages"])
    state: list[Any] = []
    for mode, data in agent.stream({"messages": messages}, stream_mode=["messages", "values"]):
        if mode == "values":
            state = list(data["messages"])
    return state


def run(request: dict[str, Any], model: Any, *, stream: bool, scripted_key: str) -> dict[str, Any]:
    """What ``create_agent`` on ``model`` sends after the history's last step (module docstring)."""
    from . import _langchain_anthropic as anthropic

    lc = requires("langchain_core.messages", EXTRA)
    create_agent = requires("langchain.agents", EXTRA).create_agent
    messages = list(request.get("messages") or [])
    plan = last_step(messages)
    if plan is None:
        return copy.deepcopy(request)
    at, results, turn = plan
    step = messages[at]
    scripted = model.model_copy(update={"model_kwargs": {**model.model_kwargs, "extra_body": {scripted_key: blocks(step)}}})
    conversion = anthropic.to_langchain({**request, "messages": messages[:at]}, model=scripted)
    system = lc.SystemMessage(content=copy.deepcopy(request["system"])) if request.get("system") else None
    agent = create_agent(scripted, tools=_tools(step), system_prompt=system, middleware=[_hooks(results)])
    try:
        state = _run(agent, list(conversion.messages), stream)
        nxt = [lc.HumanMessage(content=copy.deepcopy(turn[0]["content"]))] if turn else [lc.HumanMessage(content=PROBE)]
        _run(agent, [*state, *nxt], stream)
    except Exception as error:
        seen = sent_in(error)
        if seen is None:
            raise
        return _output(request, at, seen, scripted)
    raise RuntimeError("create_agent sent no request after the history's last step")


def _output(request: dict[str, Any], at: int, seen: list[Any], model: Any) -> dict[str, Any]:
    """The request read after the step (`_server_compaction.output`), the step's ``AIMessage`` formatted by
    ``ChatAnthropic`` as it sends it."""
    from . import _langchain_anthropic as anthropic

    lc = requires("langchain_core.messages", EXTRA)
    answered = [m for m in seen if isinstance(m, lc.AIMessage)]
    if not answered:
        return output(request, at, [])
    return output(request, at, anthropic.sent(model, [answered[-1], lc.HumanMessage("next")])["messages"][:-1])
