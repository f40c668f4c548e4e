"""The summarizer's context window (SPEC WIN-1, SUMZ-5): the test double answers a request over
its window as each provider does, a target declares its summarizer's window, and the reference
summarizes a transcript over the window in pieces. Offline, through the official clients."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from compaction_suite.conformance.capabilities import Capabilities, CapabilityError, declared
from compaction_suite.conformance.summarizer_server import SummarizerServer
from compaction_suite.reference.summarizer import Summarizer, SummarizerError
from compaction_suite.text import prompt_tokens

from message_builders import sent_items, sent_messages

WINDOW = 1000
LONG = "The build log of the parser module shows every test passed without warnings.\n" * 200
"""About 3,000 tokens: three windows."""


@pytest.fixture(scope="module")
def server() -> Iterator[SummarizerServer]:
    with SummarizerServer() as srv:
        yield srv
    assert srv.errors == []


@pytest.fixture(autouse=True)
def _clean(server: SummarizerServer) -> None:
    server.reset()


def oai(server: SummarizerServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0, timeout=10)


def ask(server: SummarizerServer, api: str, text: str) -> Any:
    if api == "chat":
        return oai(server).chat.completions.create(model="m", messages=[{"role": "user", "content": text}])
    if api == "responses":
        return oai(server).responses.create(model="m", input=sent_items([{"type": "message", "role": "user", "content": text}]))
    if api == "compact":
        return oai(server).responses.compact(model="m", input=sent_items([{"type": "message", "role": "user", "content": text}]))
    claude = anthropic.Anthropic(base_url=server.base_url.removesuffix("/v1"), api_key="test", max_retries=0, timeout=10)
    return claude.messages.create(model="claude-x", max_tokens=256, messages=sent_messages([{"role": "user", "content": text}]))


@pytest.mark.parametrize("api", ["chat", "responses", "compact"])
def test_openai_apis_answer_context_length_exceeded(server: SummarizerServer, api: str) -> None:
    server.window(WINDOW)
    with pytest.raises(openai.BadRequestError) as raised:
        ask(server, api, LONG)
    error: Any = raised.value.body
    assert error["code"] == "context_length_exceeded" and error["type"] == "invalid_request_error"
    tokens = prompt_tokens([{"role": "user", "content": LONG}])
    if api == "chat":
        assert error["param"] == "messages"
        assert error["message"].startswith(f"Input tokens exceed the configured limit of {WINDOW} tokens. Your messages resulted in {tokens} tokens.")
    else:
        assert error["param"] == "input" and error["message"].startswith("Your input exceeds the context window of this model.")
    assert "test double" in error["message"]
    (exchange,) = server.exchanges
    assert exchange.over_window is not None and exchange.over_window.reason_id == "summarizer-request-over-window"
    assert exchange.answer is None and exchange.rejected is None and server.counts == {"over_window": 1}


def test_anthropic_answers_prompt_is_too_long(server: SummarizerServer) -> None:
    server.window(WINDOW)
    with pytest.raises(anthropic.BadRequestError) as raised:
        ask(server, "anthropic", LONG)
    body: Any = raised.value.body
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert body["error"]["message"].startswith("prompt is too long: ") and f"tokens > {WINDOW} maximum" in body["error"]["message"]


@pytest.mark.parametrize("api", ["chat", "responses", "compact", "anthropic"])
def test_a_request_within_the_window_is_answered(server: SummarizerServer, api: str) -> None:
    server.window(WINDOW)
    ask(server, api, "Please summarize the build.")
    assert server.exchanges[0].over_window is None and server.exchanges[0].answer is not None


def test_the_window_is_part_of_the_mode_and_reset_clears_it(server: SummarizerServer) -> None:
    server.window(WINDOW)
    assert server.mode()["window"] == WINDOW
    mode = server.mode()
    server.reset()
    assert server.mode()["window"] is None
    server.set_mode(mode)
    assert server.context_window == WINDOW
    with pytest.raises(ValueError):
        server.window(0)


class _Declares:
    def __init__(self, window: Any) -> None:
        self.capabilities = {"summarizer_window": window}


def test_a_declared_window_makes_win1_applicable() -> None:
    assert "WIN-1" in Capabilities().waived()
    found = declared(_Declares(128_000))
    assert found.summarizer_window == 128_000 and "WIN-1" not in found.waived()
    assert found.as_dict()["summarizer_window"] == 128_000


@pytest.mark.parametrize("window", [0, 999, "8000", 8000.0, True, {"tokens": 8000}])
def test_a_window_that_is_not_a_token_count_is_a_contract_error(window: Any) -> None:
    with pytest.raises(CapabilityError, match="summarizer_window"):
        declared(_Declares(window))


def test_the_reference_summarizes_a_transcript_over_its_window_in_pieces(server: SummarizerServer) -> None:
    """SUMZ-5: every request fits; the last one summarizes the pieces' summaries; usage adds up."""
    server.window(WINDOW)
    summarizer = Summarizer("m", client=oai(server), window=WINDOW, max_tokens=100)
    summary = summarizer.summarize(LONG)
    bodies = server.bodies
    assert len(bodies) >= 4 and all(e.over_window is None and e.answer for e in server.exchanges)
    assert all(prompt_tokens(b["messages"]) + 100 <= WINDOW for b in bodies)
    assert "summary of part 1:" in bodies[-1]["messages"][1]["content"]
    assert summary.text == server.exchanges[-1].answer
    assert summary.prompt_tokens == sum(prompt_tokens(b["messages"]) for b in bodies)
    sent = "".join(b["messages"][1]["content"] + "\n" for b in bodies[:-1])
    assert sent == LONG + "\n", "the pieces hold the whole transcript, in order"


def test_the_reference_sends_a_transcript_that_fits_whole(server: SummarizerServer) -> None:
    Summarizer("m", client=oai(server), window=WINDOW).summarize("user: fix the build")
    assert len(server.bodies) == 1


def test_a_window_too_small_for_any_transcript_is_a_summarizer_error(server: SummarizerServer) -> None:
    with pytest.raises(SummarizerError, match="WindowTooSmall"):
        Summarizer("m", client=oai(server), window=300, max_tokens=100).summarize(LONG)
    assert server.bodies == []


def test_the_reference_async_summarizer_chunks_alike(server: SummarizerServer) -> None:
    import asyncio

    server.window(WINDOW)
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0, timeout=10)
    summary = asyncio.run(Summarizer("m", async_client=client, window=WINDOW, max_tokens=100).asummarize(LONG))
    assert len(server.bodies) >= 4 and all(e.over_window is None for e in server.exchanges)
    assert summary.text == server.exchanges[-1].answer
