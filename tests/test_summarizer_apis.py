"""The summarizer test double answers the OpenAI Responses API, its compact endpoint and the
Anthropic Messages API (issue 13, point 3) with the same deterministic mode as chat-completions
and the faults each provider is known to send (`summarizer_apis.SENT`, issue 20 point 3), checked
with the official ``openai`` and ``anthropic`` clients, offline."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from compaction_suite.conformance.summarizer_apis import compacted_text, sends
from compaction_suite.conformance.summarizer_server import SummarizerServer

from message_builders import sent_items, sent_messages

ITEMS: list[dict[str, Any]] = [
    {"type": "message", "role": "user", "content": "Please fix the failing build"},
    {"type": "function_call", "call_id": "call_1", "name": "runCommand", "arguments": '{"command": "make"}'},
    {"type": "function_call_output", "call_id": "call_1", "output": "make: *** error 2"},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Step two fails."}]},
]
MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "Please fix the failing build"}, {"role": "assistant", "content": "Step two fails."}, {"role": "user", "content": "Summarize"}]


@pytest.fixture(scope="module")
def server() -> Iterator[SummarizerServer]:
    with SummarizerServer() as srv:
        yield srv


@pytest.fixture(autouse=True)
def _clean(server: SummarizerServer) -> None:
    server.reset()


def clients(server: SummarizerServer, timeout: float = 5.0) -> tuple[openai.OpenAI, anthropic.Anthropic]:
    root = server.base_url.removesuffix("/v1")
    return (
        openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0, timeout=timeout),
        anthropic.Anthropic(base_url=root, api_key="test", max_retries=0, timeout=timeout),
    )


def ask(server: SummarizerServer, api: str, timeout: float = 5.0) -> Any:
    """One request to ``api`` with its official client; returns the text it carries."""
    oai, claude = clients(server, timeout)
    if api == "responses":
        return oai.responses.create(model="m", instructions="Summarize.", input=sent_items(ITEMS)).output
    if api == "compact":
        return oai.responses.compact(model="m", input=sent_items(ITEMS)).output
    return claude.messages.create(model="claude-x", max_tokens=256, system="Summarize.", messages=sent_messages(MESSAGES)).content


def text_of(api: str, output: Any) -> str | None:
    if api == "responses":
        return output[0].content[0].text
    if api == "compact":
        return compacted_text(output[-1].model_dump()) if output[-1].encrypted_content else output[-1].encrypted_content
    return output[0].text


APIS = ("responses", "compact", "anthropic")


@pytest.mark.parametrize("api", APIS)
def test_deterministic_answers_name_the_request(server: SummarizerServer, api: str) -> None:
    first, second = ask(server, api), ask(server, api)
    assert text_of(api, first) == text_of(api, second)
    assert str(text_of(api, first)).startswith("Deterministic test-double summary")
    assert "fix the failing build" in str(text_of(api, first)) or "Summarize" in str(text_of(api, first))
    assert all(r.headers.get("authorization") or r.headers.get("x-api-key") for r in server.requests)


def test_compact_returns_the_messages_then_one_compaction_item(server: SummarizerServer) -> None:
    """The user messages (OpenAI's reference) and the assistant messages as sent, ids kept, reasoning
    not: gpt-5.4's output (openai/openai-agents-python#2727; SPEC "Wire formats" Decision)."""
    output = ask(server, "compact")
    assert [o.type for o in output] == ["message", "message", "compaction"]
    assert [o.role for o in output[:2]] == ["user", "assistant"] and output[-1].id.startswith("cmp_testdouble_")
    assert server.requests[-1].path == "/v1/responses/compact" and server.requests[-1].body["input"] == ITEMS
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAArs1"}
    said = {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed", "content": [{"type": "output_text", "text": "It builds.", "annotations": []}]}
    oai, _ = clients(server)
    output = oai.responses.compact(model="m", input=sent_items([ITEMS[0], reasoning, said])).output
    assert [o.type for o in output] == ["message", "message", "compaction"] and output[1].model_dump(exclude_none=True) == said


@pytest.mark.parametrize("api", APIS)
def test_fixed_reply(server: SummarizerServer, api: str) -> None:
    server.reply_with("A fixed summary.")
    assert text_of(api, ask(server, api)) == "A fixed summary."


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ("429", (openai.RateLimitError, anthropic.RateLimitError)),
        ("500", (openai.InternalServerError, anthropic.InternalServerError)),
        ("503", (openai.InternalServerError, anthropic.APIStatusError)),  # Anthropic's 529 overloaded_error
        ("drop", (openai.APIConnectionError, anthropic.APIConnectionError)),
        ("truncated_stream", (openai.APIError, anthropic.APIError)),
    ],
)
def test_http_and_connection_faults_raise_the_clients_errors(server: SummarizerServer, api: str, fault: str, error: tuple) -> None:
    server.fault(fault, times=1)
    with pytest.raises(error):
        ask(server, api)
    assert str(text_of(api, ask(server, api))).startswith("Deterministic"), "times=1: the next request is answered"


@pytest.mark.parametrize("api", APIS)
def test_anthropic_errors_have_anthropic_shape(server: SummarizerServer, api: str) -> None:
    server.fault("429", times=1)
    with pytest.raises((openai.RateLimitError, anthropic.RateLimitError)) as raised:
        ask(server, api)
    assert isinstance(raised.value, (openai.RateLimitError, anthropic.RateLimitError))
    body: Any = raised.value.body
    assert (body["type"] == "error" and body["error"]["type"] == "rate_limit_error") if api == "anthropic" else body["type"] == "requests"


@pytest.mark.parametrize("api", APIS)
def test_malformed_body(server: SummarizerServer, api: str) -> None:
    server.fault("malformed", times=1)
    if not sends(api, "malformed"):  # no report of the Messages API answering a body that is not JSON
        assert str(text_of(api, ask(server, api))).startswith("Deterministic") and server.counts["unsent:malformed"] == 1
        return
    with pytest.raises(Exception):  # noqa: B017 - each client raises its own decoding error
        text_of(api, ask(server, api))
    assert server.counts["malformed"] == 1


@pytest.mark.parametrize("api", APIS)
def test_no_output_empty_and_null_content_where_the_api_sends_them(server: SummarizerServer, api: str) -> None:
    """Each API's own shape of an answer without text, and only the ones its provider sends."""
    expected = {
        "responses": (["reasoning"], None, None),  # 'incomplete' at max_output_tokens: reasoning only
        "compact": (None, None, None),  # no report of an empty or missing compaction item
        "anthropic": ([], "", None),
    }[api]
    for fault, want in zip(("no_choices", "empty_content", "null_content"), expected, strict=True):
        server.fault(fault, times=1)
        output = ask(server, api)
        if want is None:
            assert not sends(api, fault) and str(text_of(api, output)).startswith("Deterministic"), (api, fault)
        elif fault == "no_choices":
            assert [getattr(o, "type", None) for o in output] == want
        else:
            assert text_of(api, output) == want


@pytest.mark.parametrize("api", APIS)
def test_hang_times_the_client_out(server: SummarizerServer, api: str) -> None:
    server.fault("hang", times=1, hang_seconds=5)
    with pytest.raises((openai.APITimeoutError, anthropic.APITimeoutError)):
        ask(server, api, timeout=0.3)


@pytest.mark.parametrize(
    ("path", "body", "says"),
    [
        ("/v1/messages", {"model": "c", "messages": []}, "max_tokens"),
        ("/v1/responses", {"input": "x"}, "model"),
        ("/v1/responses/compact", {"model": "m", "previous_response_id": "resp_1"}, "Previous response with id 'resp_1' not found."),
        (
            "/v1/chat/completions",
            {"model": "m", "messages": [
                {"role": "user", "content": "List the files."},
                {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "Tool execution aborted"},
                {"role": "tool", "tool_call_id": "call_1", "content": "a.py b.py"},
            ]},
            "Invalid parameter: Duplicate value for 'tool_call_id' of 'call_1', in messages[2] and messages[3].",
        ),
    ],
)
def test_invalid_requests_are_http_400(server: SummarizerServer, path: str, body: dict, says: str) -> None:
    request = urllib.request.Request(server.base_url.removesuffix("/v1") + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(request, timeout=5)
    assert raised.value.code == 400 and says in raised.value.read().decode()


def stream_text(server: SummarizerServer, timeout: float = 5.0) -> str:
    """The text of a streamed Messages API answer, read as the anthropic client's stream helper does."""
    _, claude = clients(server, timeout)
    with claude.messages.stream(model="claude-x", max_tokens=256, system="Summarize.", messages=sent_messages(MESSAGES)) as stream:
        return "".join(block.text for block in stream.get_final_message().content if block.type == "text")


def test_anthropic_streaming_answers_the_same_text(server: SummarizerServer) -> None:
    assert stream_text(server) == text_of("anthropic", ask(server, "anthropic"))
    assert server.requests[0].body["stream"] is True
    server.fault("no_choices", times=1)
    _, claude = clients(server)
    with claude.messages.stream(model="claude-x", max_tokens=256, messages=sent_messages(MESSAGES)) as stream:
        assert stream.get_final_message().content == []


@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
def test_a_request_with_thinking_on_is_answered_with_a_thinking_block_first(server: SummarizerServer, stream: bool) -> None:
    """A model asked with ``thinking`` on answers with a thinking block (text and signature) before
    its text, as extended thinking does; the same request without it gets text only."""
    _, claude = clients(server)
    asked: Any = {"model": "claude-x", "max_tokens": 2048, "messages": sent_messages(MESSAGES)}
    thinking: Any = {"type": "enabled", "budget_tokens": 1024}
    if stream:
        with claude.messages.stream(**asked, thinking=thinking) as answer:
            content = answer.get_final_message().content
    else:
        content = claude.messages.create(**asked, thinking=thinking).content
    blocks = [block.model_dump() for block in content]
    assert [block["type"] for block in blocks] == ["thinking", "text"]
    assert blocks[0]["thinking"] and blocks[0]["signature"] and blocks[1]["text"] == text_of("anthropic", claude.messages.create(**asked).content)
    assert [block.type for block in claude.messages.create(**asked, thinking={"type": "disabled"}).content] == ["text"]


@pytest.mark.parametrize("fault", ["429", "503", "drop", "truncated_stream"])
def test_anthropic_streaming_faults_raise(server: SummarizerServer, fault: str) -> None:
    server.fault(fault, times=1)
    with pytest.raises(Exception):  # noqa: B017 - an APIError, or the client's own decoding error for a malformed event
        stream_text(server)
    assert server.counts[fault] == 1


# --- the declared providers' request rules (SPEC CORE-13: Bedrock Converse's tool config)

USE = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "runCommand", "input": {"command": "make"}}]}
RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "make: ok"}]}
CALL = {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "runCommand", "arguments": "{}"}}]}
TOOL = {"name": "noop", "description": "Does nothing.", "input_schema": {"type": "object", "properties": {}}}
REQUESTS = [  # (declared, path, body, what Bedrock's rule answers: None = accepted)
    (["bedrock-converse"], "/v1/messages", {"messages": [MESSAGES[0], USE, RESULT]}, "toolConfig field must be defined"),
    (["bedrock-converse"], "/v1/messages", {"messages": [MESSAGES[0], USE, RESULT], "tools": [TOOL]}, None),
    (["bedrock-converse"], "/v1/messages", {"messages": [MESSAGES[0], USE, RESULT], "tools": []}, "toolConfig field must be defined"),
    (["bedrock-converse"], "/v1/messages", {"messages": MESSAGES}, None),
    (["anthropic"], "/v1/messages", {"messages": [MESSAGES[0], USE, RESULT]}, None),
    ([], "/v1/messages", {"messages": [MESSAGES[0], USE, RESULT]}, None),
    (["openai", "bedrock-converse"], "/v1/chat/completions", {"messages": [MESSAGES[0], CALL, {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]}, "toolConfig field must be defined"),
    (["openai"], "/v1/chat/completions", {"messages": [MESSAGES[0], CALL, {"role": "tool", "tool_call_id": "call_1", "content": "ok"}]}, None),
]


@pytest.mark.parametrize(("declared", "path", "body", "says"), REQUESTS)
def test_the_double_answers_as_the_declared_providers(server: SummarizerServer, declared: list[str], path: str, body: dict, says: str | None) -> None:
    """Bedrock Converse rejects a request holding toolUse/toolResult blocks without a toolConfig
    (strands-agents/harness-sdk#998); the Messages and chat-completions APIs are not known to."""
    server.answer_as(declared)
    try:
        sent = {"model": "m", "max_tokens": 64, **body}
        request = urllib.request.Request(server.base_url.removesuffix("/v1") + path, json.dumps(sent).encode(), {"Content-Type": "application/json"})
        if says is None:
            with urllib.request.urlopen(request, timeout=5) as answered:
                assert answered.status == 200
            return
        with pytest.raises(urllib.error.HTTPError) as raised:
            urllib.request.urlopen(request, timeout=5)
        assert raised.value.code == 400 and says in raised.value.read().decode()
        rejected = server.exchanges[-1].rejected
        assert rejected is not None and rejected.reason_id == "bedrock-converse:tool-blocks-without-tool-config"
    finally:
        server.answer_as(())


REASONING = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAArs1"}
FOLLOWED = [  # (input, the Responses API's answer: None = accepted)
    ([ITEMS[0], REASONING, *ITEMS[1:]], None),
    ([ITEMS[0], REASONING, ITEMS[3]], None),
    ([ITEMS[0], *ITEMS[1:3], REASONING], "without its required following item"),
    ([ITEMS[0], REASONING, {"type": "message", "role": "user", "content": "Go on."}], "without its required following item"),
    ([ITEMS[0], REASONING, {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAA"}], "without its required following item"),
]


@pytest.mark.parametrize("path", ["/v1/responses", "/v1/responses/compact"])
@pytest.mark.parametrize(("items", "says"), FOLLOWED)
def test_a_reasoning_item_needs_the_item_it_preceded(server: SummarizerServer, path: str, items: list, says: str | None) -> None:
    """SPEC CORE-13 with RESP-3's rule where a request alone shows it: "Item 'rs_…' of type 'reasoning'
    was provided without its required following item" (continuedev/continue#10163)."""
    request = urllib.request.Request(server.base_url.removesuffix("/v1") + path, json.dumps({"model": "m", "input": items}).encode(), {"Content-Type": "application/json"})
    if says is None:
        with urllib.request.urlopen(request, timeout=5) as answered:
            assert answered.status == 200
        return
    with pytest.raises(urllib.error.HTTPError) as raised:
        urllib.request.urlopen(request, timeout=5)
    assert raised.value.code == 400 and says in raised.value.read().decode()
    assert server.exchanges[-1].rejected is not None and server.exchanges[-1].rejected.reason_id == "summarizer-request-reasoning-without-its-item"


def test_the_token_counting_endpoint_counts_what_the_messages_api_accepts(server: SummarizerServer) -> None:
    """SPEC "Wire formats", Decision (the token counting endpoint): ``count_tokens`` answers the size of a
    request the Messages API accepts and refuses, in the API's words, one it refuses; never a summarizer
    exchange, whatever fault is set."""
    _, claude = clients(server)
    use: Any = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a"}}]}
    result: Any = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]}
    asked: Any = {"role": "user", "content": "read a"}

    def count(messages: Any, **system: Any) -> int:
        return claude.messages.count_tokens(model="claude-x", messages=messages, **system).input_tokens

    server.fault("500")
    assert count([asked, use, result], system="Be brief.") > 0
    with pytest.raises(anthropic.BadRequestError, match="unexpected `tool_use_id` found in `tool_result` blocks: toolu_1"):
        count([result, use])  # a reversed prefix
    with pytest.raises(anthropic.BadRequestError, match="`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1"):
        count([asked, use])
    assert len(server.token_counts) == 3 and server.exchanges == []


@pytest.mark.parametrize(("stream", "refused"), [(None, True), (False, True), (True, False)])
def test_a_stream_only_model_refuses_a_request_not_streamed(server: SummarizerServer, stream: bool | None, refused: bool) -> None:
    """``dashscope-qwq`` (SPEC CORE-13 Decision): Alibaba Cloud's OpenAI-compatible chat API answers a request to a
    stream-only QwQ model without ``stream: true`` with HTTP 400 "This model only support stream mode, ..."
    (FoundationAgents/OpenManus#330, infiniflow/ragflow#5912); a streamed one is answered."""
    server.answer_as(["dashscope-qwq"])
    try:
        sent = {"model": "qwq-plus", "messages": [MESSAGES[0]], **({} if stream is None else {"stream": stream})}
        request = urllib.request.Request(server.base_url + "/chat/completions", json.dumps(sent).encode(), {"Content-Type": "application/json"})
        if not refused:
            with urllib.request.urlopen(request, timeout=5) as answered:
                assert answered.status == 200 and b"data:" in answered.read()
            return
        with pytest.raises(urllib.error.HTTPError) as raised:
            urllib.request.urlopen(request, timeout=5)
        assert raised.value.code == 400 and "only support stream mode" in raised.value.read().decode()
        rejected = server.exchanges[-1].rejected
        assert rejected is not None and rejected.reason_id == "dashscope-qwq:non-streaming-request"
    finally:
        server.answer_as(())
