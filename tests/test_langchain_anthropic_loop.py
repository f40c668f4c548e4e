"""LangChain on Anthropic histories (``format: anthropic-messages``), proven with ``create_agent``'s own loop.

The agent's model is ``ChatAnthropic`` with extended thinking, on a TEST DOUBLE of the Messages API
served on 127.0.0.1 (`ScriptedMessages`): it opens each turn with a signed ``thinking`` block and a
``tool_use``, answers the next tool rounds of the turn with a ``tool_use`` alone (thinking once per
turn, as extended thinking without interleaving does), then text. Like the API with thinking on, it
answers HTTP 400 to a request ending in a tool loop whose final assistant turn does not open with a
thinking block (the API's words, quoted in microsoft/vscode-copilot-chat#2367; SPEC ANTH-3).

The adapter is given each history the loop's ``SummarizationMiddleware`` saw, as the agent would have
sent it, and must return exactly what the loop's model was sent next; its drawing of the history must
be the messages ``ChatAnthropic`` stored (langchain-ai/langchain#34794: summarizing during an active
turn drops the thinking block that opened it).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from json_endpoint import JSONEndpoint

from compaction_suite.conformance.formats import anthropic as anth
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.summarizer_server import SummarizerServer

SYSTEM_PROMPT = "You are a coding agent. (loop test)"
ROUNDS_PER_TURN = 4
TRIGGER, KEEP = 8, 3
"""SummarizationMiddleware's trigger and kept messages (counts): it fires at the fifth model call of a
turn, nine messages in, and keeps the last three (moved back to the AIMessage of the cut's result)."""


def read_file(path: str) -> str:
    """Read a file (the loop test's tool)."""
    return f"contents of {path}"


class ScriptedMessages(JSONEndpoint):
    """A TEST DOUBLE of ``POST /v1/messages`` playing the agent's model with thinking on."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[dict[str, Any]] = []
        self.rejected: list[str] = []
        self.calls = 0

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.requests.append(body)
        messages = body["messages"]
        problem = _thinking_rule(messages)
        if problem:
            self.rejected.append(problem)
            return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": problem}}
        self.calls += 1
        rounds = _rounds_in_turn(messages)
        if rounds == 0:
            content = [{"type": "thinking", "thinking": "Read the files first.", "signature": f"c2lnbmF0dXJl{self.calls:04d}"}, _use(self.calls)]
        elif rounds < ROUNDS_PER_TURN:
            content = [_use(self.calls)]
        else:
            content = [{"type": "text", "text": f"done after {rounds} tool rounds"}]
        stop = "tool_use" if content[-1]["type"] == "tool_use" else "end_turn"
        reply = {"id": f"msg_scripted_{self.calls}", "type": "message", "role": "assistant", "model": body.get("model"), "content": content,
                 "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}  # fmt: skip
        return 200, reply


def _use(n: int) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_s{n}", "name": "read_file", "input": {"path": f"f{n}.py"}}


def _rounds_in_turn(messages: list[dict[str, Any]]) -> int:
    """Assistant messages after the last user message that holds no tool_result."""
    count = 0
    for message in reversed(messages):
        if message["role"] == "user" and not anth.tool_results(message):
            break
        count += message["role"] == "assistant"
    return count


def _thinking_rule(messages: list[dict[str, Any]]) -> str | None:
    """The API's answer, with thinking on, to a request ending in a tool loop whose final assistant turn
    does not open with a thinking block (None when it accepts it)."""
    if not messages or messages[-1]["role"] != "user" or not anth.tool_results(messages[-1]):
        return None
    opened = next(i for i in range(len(messages) - 1, -1, -1) if messages[i]["role"] == "user" and not anth.tool_results(messages[i])) + 1
    first = anth.blocks(messages[opened])[0]["type"] if opened < len(messages) and anth.blocks(messages[opened]) else None
    if first in anth.THINKING:
        return None
    return (
        f"messages.{opened}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{first}`. When `thinking` is enabled, "
        "a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks)."
    )


def _agent_loop(scripted: ScriptedMessages, summarizer_url: str) -> tuple[list[list[Any]], Any]:
    """``create_agent`` with ``ChatAnthropic`` (thinking on) and a recording ``SummarizationMiddleware``
    summarizing through ``ChatAnthropic`` on the suite's summarizer; the messages each ``before_model``
    saw, and the error the run ended with (None when it finished)."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_anthropic import ChatAnthropic
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import tool

    seen: list[list[Any]] = []

    class Recording(SummarizationMiddleware):
        def before_model(self, state, runtime):
            seen.append([m.model_copy(deep=True) for m in state["messages"]])
            return super().before_model(state, runtime)

    settings = Settings(base_url=summarizer_url)
    summarizing: dict[str, Any] = {"model": settings.model, "base_url": summarizer_url.removesuffix("/v1"), "api_key": settings.api_key, "max_retries": 0}
    thinking: dict[str, Any] = {"model": "scripted", "base_url": scripted.base_url, "api_key": "scripted", "max_retries": 0, "max_tokens": 2048}
    summarizer = ChatAnthropic(**summarizing)
    model = ChatAnthropic(**thinking, thinking={"type": "enabled", "budget_tokens": 1024})
    agent = create_agent(model, tools=[tool(read_file)], system_prompt=SYSTEM_PROMPT, middleware=[Recording(summarizer, trigger=("messages", TRIGGER), keep=("messages", KEEP))])
    try:
        agent.invoke({"messages": [HumanMessage("read the files")]})
    except Exception as error:  # noqa: BLE001 (the loop's own outcome, asserted below)
        return seen, error
    return seen, None


def test_adapter_draws_the_messages_chat_anthropic_stores_and_sends_what_the_loop_sends():
    pytest.importorskip("langchain_anthropic", reason="langchain-anthropic is not installed (pip install -e '.[langchain]')")
    pytest.importorskip("langchain.agents", reason="LangChain is not installed (pip install -e '.[langchain]')")
    from compaction_suite.adapters import _langchain_anthropic as native
    from compaction_suite.adapters.langchain import summarization_middleware

    with SummarizerServer() as summarizer:
        with ScriptedMessages().running() as server:
            seen, error = _agent_loop(server, summarizer.base_url)
        compactor = summarization_middleware(
            Settings(base_url=summarizer.base_url), trigger_messages=TRIGGER, trigger_tokens=None, keep_messages=KEEP, format="anthropic-messages"
        )
        assert compactor.capabilities["wire_format"] == "anthropic-messages"
        sender = native.chat_anthropic()
        assert len(seen) == len(server.requests)  # once before every model call, rejected ones included
        for state, sent in zip(seen, server.requests, strict=True):
            from langchain_core.messages import SystemMessage

            history = native.sent(sender, [SystemMessage(SYSTEM_PROMPT), *state])
            assert history["system"] == SYSTEM_PROMPT
            drawn = native.to_langchain(history).messages
            assert [_shape(m) for m in drawn] == [_shape(m) for m in state]  # ChatAnthropic's own AIMessages and the tool node's ToolMessages
            out = compactor.compact(history, iteration=1)
            assert out == {"system": sent["system"], "messages": sent["messages"]}  # what the loop's model was sent next
            assert (anth.check_final_turn_opens_with_thinking(history, out["messages"]) is not None) == (_thinking_rule(sent["messages"]) is not None)

    summarized = [r for r in server.requests if "Here is a summary" in json.dumps(r["messages"][0])]
    assert summarized, "the middleware never summarized in the loop"
    if server.rejected:  # langchain-ai/langchain#34794: the summary cut into the open turn and dropped its thinking
        assert error is not None and "thinking" in str(error)


def _shape(message: Any) -> tuple[Any, ...]:
    """What the model is sent of a LangChain message (its type, content, calls and result status)."""
    return (message.type, message.content, [(c["id"], c["name"], c["args"]) for c in getattr(message, "tool_calls", [])], getattr(message, "tool_call_id", None), getattr(message, "status", None))
