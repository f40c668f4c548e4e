"""The summarizer test double's tool-call answers (SPEC CORE-11 Decision: a tool call is not a
summary), through the official ``openai`` and ``anthropic`` clients over real HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from openai.types.chat import ChatCompletionMessage, ChatCompletionMessageFunctionToolCall

from compaction_suite.conformance import tool_call_answers
from compaction_suite.conformance.summarizer_server import SummarizerServer

CHAT_TOOLS: Any = [
    {"type": "function", "function": {"name": "noop", "description": "Does nothing.", "parameters": {"type": "object", "properties": {}}}}
]
RESPONSES_TOOLS: Any = [{"type": "function", "name": "noop", "parameters": {"type": "object", "properties": {}}}]
ANTHROPIC_TOOLS: Any = [{"name": "noop", "description": "Does nothing.", "input_schema": {"type": "object", "properties": {}}}]
ASK: Any = [{"role": "user", "content": "Please summarize this conversation."}]


def called(message: ChatCompletionMessage) -> list[str]:
    """The names of the functions ``message`` calls."""
    return [c.function.name for c in message.tool_calls or [] if isinstance(c, ChatCompletionMessageFunctionToolCall)]


@pytest.fixture
def server() -> Iterator[SummarizerServer]:
    with SummarizerServer() as running:
        yield running
    assert running.errors == []


@pytest.fixture
def chat(server: SummarizerServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0, timeout=10)


@pytest.fixture
def messages_api(server: SummarizerServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.base_url.removesuffix("/v1"), api_key="test", max_retries=0, timeout=10)


def test_a_request_offering_no_tool_gets_text_and_the_fault_stays(server: SummarizerServer, chat: openai.OpenAI) -> None:
    server.fault("tool_call", times=1)
    assert chat.chat.completions.create(model="m", messages=ASK).choices[0].message.content
    assert server.counts == {"unsent:tool_call": 1, "summary": 1}
    answered = chat.chat.completions.create(model="m", messages=ASK, tools=CHAT_TOOLS).choices[0]
    assert answered.finish_reason == "tool_calls"
    assert answered.message.content is None
    assert called(answered.message) == ["noop"]
    assert server.exchanges[-1].answer is None and server.exchanges[-1].fault == "tool_call"


def test_transient_tool_call_then_text(server: SummarizerServer, chat: openai.OpenAI) -> None:
    server.fault("tool_call", times=1)
    first = chat.chat.completions.create(model="m", messages=ASK, tools=CHAT_TOOLS).choices[0].message
    second = chat.chat.completions.create(model="m", messages=ASK, tools=CHAT_TOOLS).choices[0].message
    assert first.tool_calls and not second.tool_calls and second.content


def test_a_forced_tool_is_always_called(server: SummarizerServer, chat: openai.OpenAI) -> None:
    choices: list[Any] = ["required", {"type": "function", "function": {"name": "noop"}}]
    for choice in choices:
        message = chat.chat.completions.create(model="m", messages=ASK, tools=CHAT_TOOLS, tool_choice=choice).choices[0].message
        assert called(message) == ["noop"]
    assert chat.chat.completions.create(model="m", messages=ASK, tools=CHAT_TOOLS, tool_choice="none").choices[0].message.content
    assert server.counts["tool_call_forced"] == 2


def test_streamed_chat_tool_call(server: SummarizerServer, chat: openai.OpenAI) -> None:
    server.fault("tool_call", times=1)
    chunks = list(chat.chat.completions.create(model="m", messages=ASK, tools=CHAT_TOOLS, stream=True))
    calls = [c for chunk in chunks for c in chunk.choices[0].delta.tool_calls or []]
    assert calls[0].function and calls[0].function.name == "noop"
    assert "".join(c.function.arguments or "" for c in calls if c.function) == "{}"
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_responses_tool_call(server: SummarizerServer, chat: openai.OpenAI) -> None:
    server.fault("tool_call", times=1)
    response = chat.responses.create(model="m", input="Please summarize.", tools=RESPONSES_TOOLS)
    assert [(item.type, getattr(item, "name", None)) for item in response.output] == [("function_call", "noop")]


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_tool_use(server: SummarizerServer, messages_api: anthropic.Anthropic, stream: bool) -> None:
    server.fault("tool_call", times=1)
    request: Any = {"model": "m", "max_tokens": 100, "messages": ASK, "tools": ANTHROPIC_TOOLS}
    if stream:
        with messages_api.messages.stream(**request) as events:
            message = events.get_final_message()
    else:
        message = messages_api.messages.create(**request)
    assert message.stop_reason == "tool_use"
    assert [(b.type, getattr(b, "name", None), getattr(b, "input", None)) for b in message.content] == [("tool_use", "noop", {})]


def test_the_compact_endpoint_never_answers_a_tool_call(server: SummarizerServer, chat: openai.OpenAI) -> None:
    server.fault("tool_call", times=1)
    compacted = chat.responses.compact(model="m", input=[{"role": "user", "content": "hi"}])
    assert compacted.output[-1].type == "compaction"
    assert server.counts == {"unsent:tool_call": 1, "summary": 1}


def test_offered_reads_each_api_and_tool_choice() -> None:
    assert tool_call_answers.offered("chat", {"tools": CHAT_TOOLS}) == "noop"
    assert tool_call_answers.offered("chat", {"tools": CHAT_TOOLS, "tool_choice": "none"}) is None
    assert tool_call_answers.offered("responses", {"tools": RESPONSES_TOOLS + [{"type": "web_search"}]}) == "noop"
    assert tool_call_answers.offered("anthropic", {"tools": []}) is None
    assert tool_call_answers.forced("anthropic", {"tools": ANTHROPIC_TOOLS, "tool_choice": {"type": "any"}}) == "noop"
    assert tool_call_answers.forced("anthropic", {"tools": ANTHROPIC_TOOLS, "tool_choice": {"type": "auto"}}) is None
