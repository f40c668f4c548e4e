"""The summarizer test double, exercised over real HTTP through the official ``openai`` client.

Expected token counts are computed here from tiktoken ``o200k_base`` (made available
offline by ``compaction_suite.bpe``), not taken from the server.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Iterator
from typing import Any

import openai
import pytest

import compaction_suite.conformance.summarizer_server as module
from compaction_suite.bpe import encoding
from compaction_suite.conformance.summarizer_server import MAX_SUMMARY_CHARS, SummarizerServer

from message_builders import sent

MODEL = "summary-model"
CLIENT_TIMEOUT = 10.0
HANG_CLIENT_TIMEOUT = 0.5
JOIN_TIMEOUT = 30.0
"""Guards against a test blocking forever; never a performance bound."""

UUID = "550e8400-e29b-41d4-a716-446655440000"
ENTITY = "ent-7f3a9c"
HEX_ID = "deadbeefcafe"
IDS = (UUID, ENTITY, HEX_ID, "inv_20240611", "A1B2C3")


@pytest.fixture
def server() -> Iterator[SummarizerServer]:
    with SummarizerServer() as running:
        yield running
    assert running.errors == []


def client(server: SummarizerServer, timeout: float = CLIENT_TIMEOUT, **kwargs: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0, timeout=timeout, **kwargs)


def history(task: str = "Please summarize the refactoring of the billing module") -> list[dict[str, Any]]:
    tool_result = json.dumps({"id": ENTITY, "owner": UUID, "ref": HEX_ID, "invoice": "inv_20240611"})
    transcript = "\n".join(
        [
            f"user: {task}.",
            f"tool: created {ENTITY} for account {UUID} with secret A1B2C3 {tool_result}",
            "assistant: The billing module now validates invoices before sending them. " * 20,
        ]
    )
    return [
        {"role": "system", "content": "You compact the history of an agent."},
        {"role": "user", "content": transcript},
    ]


def ask(server: SummarizerServer, messages: list[dict[str, Any]] | None = None, **kwargs: Any) -> Any:
    return client(server).chat.completions.create(model=MODEL, messages=sent(messages or history()), **kwargs)


def tokens(text: str) -> int:
    return len(encoding("o200k_base").encode(text, disallowed_special=()))


def expected_prompt_tokens(messages: list[dict[str, Any]]) -> int:
    """OpenAI's chat format: 3 a message (+1 with a name), role and text tokens, 3 to prime the reply."""
    total = 3
    for message in messages:
        total += 3 + tokens(message["role"])
        content = message["content"]
        parts = [content] if isinstance(content, str) else [part["text"] for part in content]
        total += sum(tokens(part) for part in parts)
        if "name" in message:
            total += 1 + tokens(message["name"])
    return total


# --- labels and determinism ----------------------------------------------------------


def test_it_says_it_is_a_test_double(server: SummarizerServer) -> None:
    raw = client(server).chat.completions.with_raw_response.create(model=MODEL, messages=sent(history()))
    completion = raw.parse()

    assert "TEST DOUBLE" in (module.__doc__ or "")
    assert raw.headers["x-test-double"] == "compaction-suite summarizer"
    assert "test-double" in (completion.system_fingerprint or "")
    assert "testdouble" in completion.id
    assert completion.model == MODEL
    assert completion.object == "chat.completion"
    assert completion.choices[0].message.role == "assistant"
    assert completion.choices[0].finish_reason == "stop"


def test_identical_requests_get_identical_bodies(server: SummarizerServer) -> None:
    create = client(server).chat.completions.with_raw_response.create

    first = create(model=MODEL, messages=sent(history())).text
    second = create(model=MODEL, messages=sent(history())).text
    other = create(model=MODEL, messages=sent(history("Please summarize the search index migration"))).parse()

    assert first == second
    assert json.loads(first)["created"] == json.loads(second)["created"]
    assert other.choices[0].message.content != json.loads(first)["choices"][0]["message"]["content"]


def test_the_answer_is_short_names_the_request_and_keeps_no_identifier(server: SummarizerServer) -> None:
    messages = history()
    content = ask(server, messages).choices[0].message.content

    assert content.startswith("Deterministic test-double summary of 2 messages (sha256 ")
    assert "Please summarize the refactoring of the billing module" in content
    assert len(content) <= MAX_SUMMARY_CHARS
    assert len(content) * 5 < len(json.dumps(messages))
    for identifier in IDS:
        assert identifier not in content
    assert not re.search(r"ent-|\bid\b|[0-9a-f]{8}-[0-9a-f]{4}", content.split("): ", 1)[1])


def test_a_long_last_user_message_gives_a_bounded_answer(server: SummarizerServer) -> None:
    long_task = " ".join(["summarize"] * 5000)
    content = ask(server, [{"role": "user", "content": long_task}]).choices[0].message.content

    assert len(content) <= MAX_SUMMARY_CHARS


def test_reply_with_fixes_the_answer_until_reset(server: SummarizerServer) -> None:
    server.reply_with("- the fixed summary")
    assert ask(server).choices[0].message.content == "- the fixed summary"
    server.reply_with(None)
    assert ask(server).choices[0].message.content.startswith("Deterministic test-double summary")
    assert server.counts == {"fixed": 1, "summary": 1}


# --- usage ------------------------------------------------------------------------------


def test_usage_is_exact_tiktoken_o200k(server: SummarizerServer) -> None:
    messages = history()
    completion = ask(server, messages)
    usage = completion.usage

    assert usage.prompt_tokens == expected_prompt_tokens(messages)
    assert usage.completion_tokens == tokens(completion.choices[0].message.content)
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_usage_counts_names_and_text_parts(server: SummarizerServer) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "Summarize.", "name": "compactor"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "Hello, world!"}, {"type": "text", "text": "<|endoftext|> is text"}],
        },
    ]
    assert ask(server, messages).usage.prompt_tokens == expected_prompt_tokens(messages)


def test_usage_agrees_with_the_reference_exact_estimator(server: SummarizerServer) -> None:
    from compaction_suite.reference.tokens import ExactTokens

    messages = history()
    assert ask(server, messages).usage.prompt_tokens == ExactTokens("o200k_base").estimate(messages)


# --- streaming ----------------------------------------------------------------------------


def test_streaming_gives_the_same_answer_and_usage(server: SummarizerServer) -> None:
    plain = ask(server)
    chunks = list(ask(server, stream=True, stream_options={"include_usage": True}))

    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    finish = [chunk.choices[0].finish_reason for chunk in chunks if chunk.choices]
    assert text == plain.choices[0].message.content
    assert finish[-1] == "stop"
    assert chunks[-1].choices == []
    assert chunks[-1].usage.model_dump(include={"prompt_tokens", "completion_tokens", "total_tokens"}) == (
        plain.usage.model_dump(include={"prompt_tokens", "completion_tokens", "total_tokens"})
    )
    assert all(chunk.usage is None for chunk in chunks[:-1])
    assert all(chunk.object == "chat.completion.chunk" and chunk.model == MODEL for chunk in chunks)


def test_streaming_without_include_usage_has_no_usage_chunk(server: SummarizerServer) -> None:
    chunks = list(ask(server, stream=True))
    assert chunks and all(chunk.usage is None and chunk.choices for chunk in chunks)


def test_the_async_client_works_too(server: SummarizerServer) -> None:
    async def run() -> tuple[str, type[BaseException]]:
        async with openai.AsyncOpenAI(
            base_url=server.base_url, api_key="test", max_retries=0, timeout=CLIENT_TIMEOUT
        ) as aclient:
            completion = await aclient.chat.completions.create(model=MODEL, messages=sent(history()))
            server.fault("503", times=1)
            try:
                await aclient.chat.completions.create(model=MODEL, messages=sent(history()))
            except openai.APIStatusError as error:
                return completion.choices[0].message.content or "", type(error)
        raise AssertionError("the 503 fault did not raise")

    content, error = asyncio.run(run())
    assert content == ask(server).choices[0].message.content
    assert issubclass(error, openai.APIStatusError)


def test_azure_deployment_paths_are_served(server: SummarizerServer) -> None:
    azure = openai.AzureOpenAI(
        azure_endpoint=server.azure_endpoint,
        azure_deployment="summarizer-small",
        api_version="2024-06-01",
        api_key="test",
        max_retries=0,
        timeout=CLIENT_TIMEOUT,
    )
    completion = azure.chat.completions.create(model="summarizer-small", messages=sent(history()))

    assert str(completion.choices[0].message.content).startswith("Deterministic test-double summary")
    assert server.requests[-1].path == "/openai/deployments/summarizer-small/chat/completions"


# --- faults ---------------------------------------------------------------------------------


def test_429_is_a_rate_limit_error_with_retry_after(server: SummarizerServer) -> None:
    server.fault("429", retry_after="7")
    with pytest.raises(openai.RateLimitError) as caught:
        ask(server)

    assert caught.value.status_code == 429
    assert caught.value.response.headers["retry-after"] == "7"
    assert caught.value.response.headers["x-test-double"] == "compaction-suite summarizer"
    assert isinstance(caught.value.body, dict) and set(caught.value.body) >= {"message", "type", "code"}
    assert caught.value.code == "rate_limit_exceeded"


def test_429_retry_after_defaults_to_one_second(server: SummarizerServer) -> None:
    server.fault("429")
    with pytest.raises(openai.RateLimitError) as caught:
        ask(server)
    assert caught.value.response.headers["retry-after"] == "1"


@pytest.mark.parametrize("status", [500, 503])
def test_5xx_are_status_errors_with_an_openai_error_body(server: SummarizerServer, status: int) -> None:
    server.fault(str(status))
    with pytest.raises(openai.InternalServerError) as caught:
        ask(server)

    assert isinstance(caught.value, openai.APIStatusError)
    assert caught.value.status_code == status
    assert caught.value.type == "server_error"
    assert "test double" in caught.value.message


def test_malformed_json_body_fails_to_decode(server: SummarizerServer) -> None:
    """The client raises ``json.JSONDecodeError`` here, which is not an ``openai.OpenAIError``."""
    server.fault("malformed")
    with pytest.raises(json.JSONDecodeError):
        ask(server)


def test_malformed_non_json_body_is_text_or_rejected_when_strict(server: SummarizerServer) -> None:
    server.fault("malformed", content_type="text/html")

    answer = ask(server)
    assert isinstance(answer, str) and not hasattr(answer, "choices")
    with pytest.raises(openai.APIResponseValidationError):
        strict = client(server, _strict_response_validation=True)
        strict.chat.completions.create(model=MODEL, messages=sent(history()))


def test_malformed_stream_event_fails_to_decode(server: SummarizerServer) -> None:
    server.fault("malformed")
    with pytest.raises(json.JSONDecodeError):
        list(ask(server, stream=True))


def test_no_choices(server: SummarizerServer) -> None:
    server.fault("no_choices")
    completion = ask(server)
    assert completion.choices == []
    assert completion.usage.completion_tokens == 0


@pytest.mark.parametrize(("fault", "content"), [("empty_content", ""), ("null_content", None)])
def test_empty_and_null_content(server: SummarizerServer, fault: str, content: str | None) -> None:
    server.fault(fault)
    completion = ask(server)
    assert completion.choices[0].message.content == content
    assert completion.usage.completion_tokens == 0


def test_reply_with_empty_text_is_empty_content(server: SummarizerServer) -> None:
    server.reply_with("")
    assert ask(server).choices[0].message.content == ""


def test_hang_trips_the_client_timeout(server: SummarizerServer) -> None:
    server.fault("hang")
    with pytest.raises(openai.APITimeoutError):
        client(server, timeout=HANG_CLIENT_TIMEOUT).chat.completions.create(model=MODEL, messages=sent(history()))
    assert server.counts == {"hang": 1}


def test_a_short_hang_ends_in_a_normal_answer(server: SummarizerServer) -> None:
    server.fault("hang", hang_seconds=0.1)
    assert ask(server).choices[0].message.content.startswith("Deterministic test-double summary")


def test_drop_is_a_connection_error(server: SummarizerServer) -> None:
    server.fault("drop")
    with pytest.raises(openai.APIConnectionError) as caught:
        ask(server)
    assert not isinstance(caught.value, openai.APITimeoutError)


def test_truncated_stream_delivers_some_chunks_then_fails(server: SummarizerServer) -> None:
    server.fault("truncated_stream", chunks=2)
    received: list[Any] = []
    with pytest.raises(openai.APIConnectionError):
        for chunk in ask(server, stream=True):
            received.append(chunk)

    assert len(received) == 2
    assert all(chunk.choices[0].finish_reason is None for chunk in received)


def test_truncated_plain_body_is_a_connection_error(server: SummarizerServer) -> None:
    server.fault("truncated_stream")
    with pytest.raises(openai.APIConnectionError):
        ask(server)


def test_a_fault_with_times_expires(server: SummarizerServer) -> None:
    server.fault("500", times=2)
    for _ in range(2):
        with pytest.raises(openai.InternalServerError):
            ask(server)
    assert ask(server).choices
    assert server.counts == {"500": 2, "summary": 1}


def test_a_fault_without_times_lasts_until_cleared(server: SummarizerServer) -> None:
    server.fault("no_choices")
    assert [ask(server).choices for _ in range(3)] == [[], [], []]
    server.fault(None)
    assert ask(server).choices


def test_faults_win_over_a_fixed_reply(server: SummarizerServer) -> None:
    server.reply_with("fixed")
    server.fault("empty_content", times=1)
    assert ask(server).choices[0].message.content == ""
    assert ask(server).choices[0].message.content == "fixed"


def test_bad_fault_settings_are_refused(server: SummarizerServer) -> None:
    with pytest.raises(ValueError):
        server.fault("teapot")
    with pytest.raises(ValueError):
        server.fault("500", retry_after="1")
    with pytest.raises(ValueError):
        server.fault("429", times=0)


# --- recording, counters, lifecycle ------------------------------------------------------


def test_requests_are_recorded_with_path_headers_and_body(server: SummarizerServer) -> None:
    messages = history()
    ask(server, messages, temperature=0)

    (recorded,) = server.requests
    assert recorded.method == "POST"
    assert recorded.path == "/v1/chat/completions"
    assert recorded.headers["authorization"] == "Bearer test"
    assert recorded.body == {"model": MODEL, "messages": messages, "temperature": 0}
    assert server.bodies == [recorded.body]

    server.clear()
    assert server.requests == [] and server.counts == {}


def test_unknown_paths_and_bad_bodies_are_openai_errors(server: SummarizerServer) -> None:
    with pytest.raises(openai.NotFoundError):
        client(server).models.list()
    with pytest.raises(openai.BadRequestError):
        client(server).post("/chat/completions", body={"model": MODEL}, cast_to=dict)
    assert server.counts == {"not_found": 1, "bad_request": 1}


def test_concurrent_requests_are_all_recorded_and_counted(server: SummarizerServer) -> None:
    shared = client(server)
    answers: list[str] = []
    lock = threading.Lock()

    def worker(n: int) -> None:
        completion = shared.chat.completions.create(model=MODEL, messages=sent(history(f"task number {n}")))
        with lock:
            answers.append(completion.choices[0].message.content or "")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(JOIN_TIMEOUT)

    assert len(answers) == 8
    assert len(server.requests) == 8
    assert server.counts == {"summary": 8}


def test_stop_releases_a_hanging_request() -> None:
    server = SummarizerServer().start()
    server.fault("hang", hang_seconds=3600)
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            client(server, timeout=3600).chat.completions.create(model=MODEL, messages=sent(history()))
        except BaseException as error:  # noqa: BLE001 - recorded for the assertion below
            outcome.append(error)

    caller = threading.Thread(target=call)
    caller.start()
    assert server.wait_for_requests(1, timeout=JOIN_TIMEOUT)

    server.stop()
    caller.join(JOIN_TIMEOUT)

    assert not caller.is_alive()
    assert server.in_flight == 0
    assert len(outcome) == 1 and isinstance(outcome[0], openai.APIConnectionError)
    assert server.errors == []


def test_base_url_needs_a_started_server() -> None:
    with pytest.raises(RuntimeError):
        _ = SummarizerServer().base_url
    with SummarizerServer() as server:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", server.base_url)


def test_a_scripted_chat_model_answers_in_order_with_usage_over_the_whole_request(server: SummarizerServer) -> None:
    """``script`` (an adapter replaying a history through an agent loop, SPEC FIRE-7): each chat request is
    answered with the next scripted assistant message, its usage counting the tool definitions; with none
    left, HTTP 400 with the test double's own code; a request over the window gets the overflow answer first."""
    client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
    call = {"id": "call_1", "type": "function", "function": {"name": "readFile", "arguments": '{"path": "a.py"}'}}
    tools = [{"type": "function", "function": {"name": "readFile", "description": "Read a file. " * 40, "parameters": {"type": "object", "properties": {}}}}]
    server.script([{"role": "assistant", "content": None, "tool_calls": [call]}, {"role": "assistant", "content": "done"}])
    messages: list[Any] = [{"role": "user", "content": "read a.py"}]
    first = client.chat.completions.create(model="m", messages=messages, tools=tools)  # type: ignore[arg-type]
    bare = client.chat.completions.create(model="m", messages=messages)
    assert first.choices[0].message.tool_calls[0].id == "call_1" and first.choices[0].finish_reason == "tool_calls"  # type: ignore[index]
    assert bare.choices[0].message.content == "done"
    assert first.usage.prompt_tokens - bare.usage.prompt_tokens == module.tool_tokens(tools) > 100  # type: ignore[union-attr]
    with pytest.raises(openai.BadRequestError, match=module.SCRIPT_EXHAUSTED_TEXT) as exhausted:
        client.chat.completions.create(model="m", messages=messages)
    assert exhausted.value.code == module.SCRIPT_EXHAUSTED
    server.script([{"role": "assistant", "content": "never sent"}])
    server.window(bare.usage.prompt_tokens + 50)  # type: ignore[union-attr]
    with pytest.raises(openai.BadRequestError, match="Input tokens exceed the configured limit"):
        client.chat.completions.create(model="m", messages=messages, tools=tools)  # type: ignore[arg-type]
