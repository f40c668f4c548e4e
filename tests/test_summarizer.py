"""The summarizer over real HTTP (SPEC SUMZ-1, SUMZ-2, SUMZ-4): reference/summarizer.py.

Every call goes through the official ``openai`` client (plain, async and Azure) to
the summarizer test double on 127.0.0.1; nothing is patched.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from typing import Any

import openai
import pytest

from compaction_suite.conformance import summarizer_server
from compaction_suite.conformance.summarizer_server import SummarizerServer
from compaction_suite.reference import Summarizer, SummarizerError
from compaction_suite.reference.summarizer import DEFAULT_PROMPT, STRUCTURED_PROMPT, prompt_hash

MODEL = "summary-model"
TRANSCRIPT = "user:\nPlease fix the parser.\n\nassistant:\nDone."
HANG_TIMEOUT = 0.3


def summarize(summarizer: Summarizer, mode: str) -> Any:
    """``summarize`` or ``asummarize``, by ``mode``."""
    if mode == "sync":
        return summarizer.summarize(TRANSCRIPT)
    return asyncio.run(summarizer.asummarize(TRANSCRIPT))


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def summarizer(client: openai.OpenAI, async_client: openai.AsyncOpenAI) -> Summarizer:
    return Summarizer(MODEL, client=client, async_client=async_client)


# --- SUMZ-1: the request ----------------------------------------------------------------------


def test_the_request_names_the_model_prompt_transcript_and_temperature_zero(
    server: SummarizerServer, summarizer: Summarizer, mode: str
) -> None:
    summarize(summarizer, mode)
    (recorded,) = server.requests
    assert (recorded.method, recorded.path) == ("POST", "/v1/chat/completions")
    assert recorded.body == {
        "model": MODEL,
        "messages": [{"role": "system", "content": DEFAULT_PROMPT}, {"role": "user", "content": TRANSCRIPT}],
        "temperature": 0,
    }
    assert recorded.body == summarizer.request(TRANSCRIPT)


def test_max_tokens_is_sent_only_when_set(server: SummarizerServer, client: openai.OpenAI) -> None:
    Summarizer(MODEL, client=client).summarize(TRANSCRIPT)
    Summarizer(MODEL, client=client, max_tokens=300).summarize(TRANSCRIPT)
    without, with_ = server.bodies
    assert "max_tokens" not in without
    assert with_["max_tokens"] == 300


def test_the_system_message_holds_the_resolved_prompt(server: SummarizerServer, client: openai.OpenAI) -> None:
    Summarizer(MODEL, client=client, prompt="Summarize in French.").summarize(TRANSCRIPT)
    assert server.bodies[0]["messages"][0] == {"role": "system", "content": "Summarize in French."}


def test_the_summary_and_usage_come_from_the_response(server: SummarizerServer, summarizer: Summarizer, mode: str) -> None:
    server.reply_with("  - The parser is fixed.\n")
    summary = summarize(summarizer, mode)
    assert summary.text == "- The parser is fixed."
    expected = summarizer_server.usage(server.bodies[0]["messages"], "  - The parser is fixed.\n")
    assert (summary.prompt_tokens, summary.completion_tokens) == (expected["prompt_tokens"], expected["completion_tokens"])
    assert summary.prompt_tokens > 0 and summary.completion_tokens > 0


def test_the_deterministic_double_answers_the_same_request_alike(server: SummarizerServer, summarizer: Summarizer) -> None:
    assert summarizer.summarize(TRANSCRIPT) == summarizer.summarize(TRANSCRIPT)


# --- SUMZ-4: the prompt hash --------------------------------------------------------------------


def test_prompt_hash_is_the_first_8_hex_digits_of_the_sha256_of_the_prompt() -> None:
    for prompt in (DEFAULT_PROMPT, STRUCTURED_PROMPT, "Résume en français ✅"):
        expected = hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:8]
        assert prompt_hash(prompt) == Summarizer(MODEL, prompt=prompt).prompt_hash == expected
        assert re.fullmatch(r"[0-9a-f]{8}", expected)


def test_prompt_hash_is_stable_and_changes_with_the_prompt() -> None:
    assert Summarizer(MODEL).prompt_hash == Summarizer("another-model").prompt_hash
    assert Summarizer(MODEL).prompt_hash != Summarizer(MODEL, prompt=DEFAULT_PROMPT + " ").prompt_hash
    assert Summarizer(MODEL).prompt_hash != Summarizer(MODEL, prompt=STRUCTURED_PROMPT).prompt_hash


# --- SUMZ-2: every failure becomes SummarizerError ------------------------------------------------

FAULTS = [
    # (test id, fault, params, error_type, a piece of the reason)
    ("429", "429", {"retry_after": "7"}, "RateLimitError", "HTTP 429"),
    ("500", "500", {}, "InternalServerError", "HTTP 500"),
    ("503", "503", {}, "InternalServerError", "HTTP 503"),
    ("malformed-json", "malformed", {}, "JSONDecodeError", "Expecting value"),
    ("malformed-text", "malformed", {"content_type": "text/plain"}, "MalformedResponse", "expected a chat completion"),
    ("no_choices", "no_choices", {}, "MalformedResponse", "no choices"),
    ("empty_content", "empty_content", {}, "EmptySummary", "content is empty"),
    ("null_content", "null_content", {}, "EmptySummary", "content is empty"),
    ("hang", "hang", {"hang_seconds": 10}, "APITimeoutError", "timed out"),
    ("drop", "drop", {}, "APIConnectionError", "Connection error"),
]


@pytest.mark.parametrize(
    ("fault", "params", "error_type", "reason"),
    [pytest.param(*case, id=name) for name, *case in FAULTS],
)
def test_every_fault_raises_summarizer_error_with_type_and_reason(
    server: SummarizerServer,
    client: openai.OpenAI,
    async_client: openai.AsyncOpenAI,
    mode: str,
    fault: str,
    params: dict[str, str],
    error_type: str,
    reason: str,
) -> None:
    timeout = HANG_TIMEOUT if fault == "hang" else 2.0
    summarizer = Summarizer(
        MODEL, client=client.with_options(timeout=timeout), async_client=async_client.with_options(timeout=timeout)
    )
    server.fault(fault, times=1, **params)
    with pytest.raises(SummarizerError) as caught:
        summarize(summarizer, mode)
    error = caught.value
    assert error.error_type == error_type
    assert reason in error.reason
    assert str(error) == f"{error_type}: {error.reason}"
    assert error.prompt_hash == summarizer.prompt_hash
    assert len(server.requests) == 1, "no retries: the compactor decides what a failure means"


def test_a_429_carries_the_servers_retry_after(server: SummarizerServer, summarizer: Summarizer) -> None:
    server.fault("429", times=1, retry_after="7")
    with pytest.raises(SummarizerError) as caught:
        summarizer.summarize(TRANSCRIPT)
    cause = caught.value.__cause__
    assert isinstance(cause, openai.RateLimitError)
    assert cause.response.headers["retry-after"] == "7"


def test_the_summarizer_works_again_after_a_fault(server: SummarizerServer, summarizer: Summarizer) -> None:
    server.fault("500", times=1)
    with pytest.raises(SummarizerError):
        summarizer.summarize(TRANSCRIPT)
    assert summarizer.summarize(TRANSCRIPT).text


def test_a_missing_client_is_a_configuration_error_and_sends_nothing(server: SummarizerServer, mode: str) -> None:
    with pytest.raises(SummarizerError) as caught:
        summarize(Summarizer(MODEL, prompt="p"), mode)
    assert caught.value.error_type == "ConfigurationError"
    assert ("AsyncOpenAI" in caught.value.reason) == (mode == "async")
    assert caught.value.prompt_hash == prompt_hash("p")
    assert server.requests == []


# --- Azure deployments by name ------------------------------------------------------------------------


def test_an_azure_client_calls_the_deployment_by_name(server: SummarizerServer) -> None:
    with openai.AzureOpenAI(
        azure_endpoint=server.azure_endpoint, api_version="2024-06-01", api_key="test", max_retries=0, timeout=2.0
    ) as azure:
        summary = Summarizer("gpt-4o-mini-summarizer", client=azure).summarize(TRANSCRIPT)
    (recorded,) = server.requests
    assert recorded.path == "/openai/deployments/gpt-4o-mini-summarizer/chat/completions"
    assert recorded.headers["api-key"] == "test"
    assert recorded.body["model"] == "gpt-4o-mini-summarizer"
    assert recorded.body["messages"][1]["content"] == TRANSCRIPT
    assert summary.text and summary.prompt_tokens


def test_an_async_azure_client_calls_the_deployment_by_name(server: SummarizerServer) -> None:
    async def run() -> Any:
        async with openai.AsyncAzureOpenAI(
            azure_endpoint=server.azure_endpoint, api_version="2024-06-01", api_key="test", max_retries=0, timeout=2.0
        ) as azure:
            return await Summarizer("summarizer-deployment", async_client=azure).asummarize(TRANSCRIPT)

    assert asyncio.run(run()).text
    assert server.requests[0].path == "/openai/deployments/summarizer-deployment/chat/completions"


def test_an_azure_failure_is_a_summarizer_error_too(server: SummarizerServer) -> None:
    server.fault("503", times=1)
    with openai.AzureOpenAI(
        azure_endpoint=server.azure_endpoint, api_version="2024-06-01", api_key="test", max_retries=0, timeout=2.0
    ) as azure, pytest.raises(SummarizerError, match="HTTP 503"):
        Summarizer("deployment", client=azure).summarize(TRANSCRIPT)
