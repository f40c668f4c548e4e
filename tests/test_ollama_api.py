"""The summarizer test double answers Ollama's ``/api/chat`` (issue 21: Strands' ``OllamaModel``, the shape
of strands-agents/harness-sdk#2052), checked with the ``ollama`` client pointed at it, offline: streamed
(newline-delimited JSON, Ollama's default) and whole, its ``{"error"}`` answers, each real overflow answer
as the client raises it, and no fault Ollama is not known to send. Mistral's chat API (chat-completions
with Mistral's own overflow answer) is checked with the ``mistralai`` client."""

from __future__ import annotations

from typing import Any

import pytest

from compaction_suite.conformance import overflow
from compaction_suite.conformance.summarizer_server import SummarizerServer

ASK: list[Any] = [{"role": "system", "content": "Summarize."}, {"role": "user", "content": "Please fix the failing build"}]
LONG: list[Any] = [{"role": "user", "content": "read the build log and say what failed " * 20}]


@pytest.fixture
def ollama_client(server: SummarizerServer):
    ollama = pytest.importorskip("ollama", reason="the ollama client comes with strands-agents[ollama] (the strands extra)")
    return ollama.Client(server.base_url.removesuffix("/v1"))


def test_streamed_and_whole_answer_the_same_text(server: SummarizerServer, ollama_client) -> None:
    streamed = list(ollama_client.chat(model="llama3.2", messages=ASK, stream=True))
    whole = ollama_client.chat(model="llama3.2", messages=ASK, stream=False)
    assert [p.done for p in streamed][-1] is True and not any(p.done for p in streamed[:-1])
    assert "".join(p.message.content for p in streamed) == whole.message.content
    assert whole.message.content.startswith("Deterministic test-double summary of 2 messages")
    assert whole.prompt_eval_count > 0 and whole.eval_count > 0 and streamed[-1].prompt_eval_count == whole.prompt_eval_count
    assert [e.api for e in server.exchanges] == ["ollama", "ollama"]


def test_calls_and_results_without_ids_are_accepted(server: SummarizerServer, ollama_client) -> None:
    """Ollama's messages carry no call ids and it checks no pairing: a call with no result is answered."""
    call = {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "run", "arguments": {"cmd": "make"}}}]}
    answer = ollama_client.chat(model="m", messages=[*ASK, call], stream=False)
    assert answer.message.content and server.exchanges[-1].rejected is None


def test_a_body_without_stream_is_answered_streamed(server: SummarizerServer) -> None:
    """Ollama's ``stream`` defaults to true: newline-delimited JSON, the last line ``done``."""
    import httpx

    answer = httpx.post(server.base_url.removesuffix("/v1") + "/api/chat", json={"model": "m", "messages": ASK})
    lines = [line for line in answer.text.splitlines() if line]
    assert answer.headers["content-type"].startswith("application/x-ndjson") and len(lines) > 1
    assert '"done": true' in lines[-1] and all('"done": false' in line for line in lines[:-1])


def test_a_malformed_body_is_ollamas_error(server: SummarizerServer) -> None:
    import httpx

    answer = httpx.post(server.base_url.removesuffix("/v1") + "/api/chat", json={"messages": ASK})
    assert answer.status_code == 400 and answer.json()["error"].startswith("model is required [compaction-suite test double]")


@pytest.mark.parametrize("name", overflow.names("ollama"))
@pytest.mark.parametrize("stream", [True, False])
def test_each_overflow_answer_reaches_the_client_as_sent(server: SummarizerServer, ollama_client, name: str, stream: bool) -> None:
    import ollama

    server.window(10, {"ollama": name})
    with pytest.raises(ollama.ResponseError) as raised:
        answer = ollama_client.chat(model="m", messages=LONG, stream=stream)
        list(answer) if stream else None
    assert raised.value.status_code == 400 and raised.value.error.startswith(overflow.chosen("ollama", name).text.split("{")[0])
    assert server.exchanges[-1].over_window is not None and server.counts["over_window"] == 1


def test_the_cloud_answer_names_the_tokens_past_the_window(server: SummarizerServer, ollama_client) -> None:
    import ollama

    server.window(10)
    with pytest.raises(ollama.ResponseError, match=r"exceeded max context length by \d+ tokens") as raised:
        ollama_client.chat(model="m", messages=LONG, stream=False)
    from compaction_suite.conformance.ollama import as_messages
    from compaction_suite.text import prompt_tokens

    over = int(raised.value.error.split(" by ")[1].split()[0])
    assert over == prompt_tokens(as_messages(server.exchanges[-1].request.body)) - 10 > 0


def test_faults_ollama_is_not_known_to_send_are_not_sent(server: SummarizerServer, ollama_client) -> None:
    server.fault("500")
    assert ollama_client.chat(model="m", messages=ASK, stream=False).message.content
    assert server.counts["unsent:500"] == 1


def test_mistral_answers_its_own_overflow_to_the_mistral_client(server: SummarizerServer) -> None:
    mistralai = pytest.importorskip("mistralai", reason="the mistralai client comes with strands-agents[mistral] (the strands extra)")
    from mistralai.client import Mistral

    server.window(10, {"chat": "mistral"})
    client = Mistral(api_key="k", server_url=server.base_url.removesuffix("/v1"))
    with pytest.raises(Exception) as raised:
        client.chat.complete(model="mistral-small-latest", messages=LONG)
    assert "too large for model with 10 maximum context length" in str(raised.value) and "400" in str(raised.value)
    server.window(None)
    streamed = "".join(e.data.choices[0].delta.content or "" for e in client.chat.stream(model="mistral-small-latest", messages=ASK) if e.data.choices)
    assert streamed.startswith("Deterministic test-double summary") and mistralai is not None
