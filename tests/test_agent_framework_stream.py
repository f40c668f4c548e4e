"""Microsoft Agent Framework's streaming function-invocation loop, shown as ``agent_loop(stream=True)`` drives it.

``agent.run(..., stream=True)`` is AF's own streaming loop (``_tools.py``, "Phase 2: stream each model turn"),
a code path apart from the non-streaming one, that runs ``compaction_strategy`` before each streamed model call
and reconciles the summaries it writes into the returned transcript (``_reconcile_compaction_summaries``) on its
own. Here the agent's model is a TEST DOUBLE on AF's own client layers that answers ``stream=True`` calls with
``BaseChatClient._build_response_stream`` (AF's finalizer) over one update per reply, the summarizer the suite's
double behind AF's ``OpenAIChatCompletionClient``. The tests show, at the installed release:

* every model call of ``agent_loop(stream=True)`` is a streamed call (the adapter takes the streaming path);
* its output is what the model received at the loop's last streamed call, which holds the summary the
  strategy obtained in the streaming loop (so a CORE verdict on it is a verdict on that loop).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from compaction_suite.adapters.agent_framework import agent_loop, from_agent_framework, to_agent_framework
from compaction_suite.conformance.settings import Settings, connected
from compaction_suite.conformance.summarizer_server import SummarizerServer

pytest.importorskip("agent_framework", reason="Agent Framework is not installed (pip install -e '.[agent-framework]')")

from test_agent_framework_paths import (
    CLOSING_ANSWER,
    LOOP_ROUNDS,
    full_history,
    history_before_the_loop,
    loop_calls,
    read_file,
    summaries,
)


def streaming_model(af: Any, sent: list[list[dict]], streamed: list[bool]) -> Any:
    """The agent's model, a test double on AF's own layers: ``LOOP_ROUNDS`` tool calls then text, each a
    stream of one update when AF asks for a stream; records what each call sent and whether it streamed."""
    replies = [to_agent_framework([{"role": "assistant", "content": None, "tool_calls": [call]}])[0][0] for call in loop_calls()]
    for n, reply in enumerate(replies):
        reply.message_id = f"scripted-reply-{n}"

    class StreamingAgentModel(af.FunctionInvocationLayer, af.ChatMiddlewareLayer, af.BaseChatClient):
        def _inner_get_response(self, *, messages, stream, options, **kwargs):
            sent.append(from_agent_framework(list(messages)))
            streamed.append(bool(stream))
            reply = replies.pop(0) if replies else af.Message(role="assistant", contents=[af.Content.from_text(CLOSING_ANSWER)], message_id="scripted-answer")

            async def updates():
                yield af.ChatResponseUpdate(contents=list(reply.contents), role="assistant", message_id=reply.message_id)

            async def answer():
                return af.ChatResponse(messages=[reply])

            return self._build_response_stream(updates()) if stream else answer()

    return StreamingAgentModel()


def run_streamed() -> tuple[list[list[dict]], list[bool], list[str]]:
    """``Agent(compaction_strategy=SummarizationStrategy(4, 2))`` run with ``stream=True`` on the history: what the
    model received at each call, whether each call streamed, and the summarizer's answers."""
    import agent_framework as af
    from agent_framework_openai import OpenAIChatCompletionClient

    sent: list[list[dict]] = []
    streamed: list[bool] = []
    with SummarizerServer() as server:
        settings = connected(Settings(), server.base_url)
        summarizer = OpenAIChatCompletionClient(model=settings.model, async_client=settings.async_client)
        agent = af.Agent(streaming_model(af, sent, streamed), tools=[read_file], compaction_strategy=af.SummarizationStrategy(client=summarizer, target_count=4, threshold=2))

        async def consume() -> None:
            stream = agent.run(to_agent_framework(history_before_the_loop())[0], stream=True)
            async for _ in stream:
                pass
            await stream.get_final_response()

        asyncio.run(consume())
        answers = [e.answer for e in server.exchanges if e.answer]
    return sent, streamed, answers


def test_the_streaming_loop_summarizes_before_each_streamed_call():
    """AF's streaming loop calls the model once per round plus the answer, each call streamed, and the last call
    holds the summary of the older rounds in place of the user turn it replaced."""
    sent, streamed, answers = run_streamed()
    assert streamed == [True] * (LOOP_ROUNDS + 1), streamed
    assert answers and summaries(sent[-1], answers), sent[-1]
    assert history_before_the_loop()[0] not in sent[-1]


def test_agent_loop_stream_takes_the_streaming_path_and_returns_its_last_call(monkeypatch):
    """``agent_loop(stream=True)``: every model call of its run is built by AF's streaming finalizer
    (``_build_response_stream``, only reached when AF asks for a stream), and its output is what the model
    received at the streaming loop's last call."""
    import agent_framework as af

    built: list[int] = []
    original = af.BaseChatClient._build_response_stream

    def counting(self: Any, *args: Any, **kwargs: Any) -> Any:
        built.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(af.BaseChatClient, "_build_response_stream", counting)
    sent, _, _ = run_streamed()
    built.clear()
    with SummarizerServer() as server:
        adapter = agent_loop(connected(Settings(), server.base_url), strategy="summarization", rounds=LOOP_ROUNDS, stream=True)
        out = asyncio.run(adapter.compact(full_history(), iteration=1))
        answers = [e.answer for e in server.exchanges if e.answer]
    assert len(built) == LOOP_ROUNDS + 1, built
    assert [m.get("role") for m in out] == [m.get("role") for m in sent[-1]]
    assert [m for m in out if m.get("role") == "tool"] == [m for m in sent[-1] if m.get("role") == "tool"]
    assert summaries(out, answers), out
    assert "+stream" in repr(adapter)
