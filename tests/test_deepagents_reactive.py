"""Deep Agents' reactive summarization (SPEC FIRE-5, issue 21): its ``wrap_model_call`` summarizes when
the model call fails with a context overflow it recognises, which depends on the provider's LangChain
class (langchain-ai/langchain#37532, #37533). The TEST DOUBLE answers a request over the model's window
with each provider's real overflow answer (`conformance.overflow`): OpenAI's and Anthropic's classes
raise ``ContextOverflowError``; ``ChatGroq`` raises ``groq.BadRequestError`` (deepagents reads its
``context_length_exceeded`` from 0.7.14); ``ChatMistralAI`` raises ``httpx.HTTPStatusError``, which has no
``status_code`` for deepagents' text check, so the error ends the run; ``ChatOllama`` raises
``ollama.ResponseError``, whose words ("prompt too long; exceeded max context length", "the prompt is longer
than the context length") hold none of deepagents' nine, so it ends the run too (no report found).

Shown with LangChain's own ``create_agent`` loop holding the middleware ``create_deep_agent`` installs,
and through the adapter's ``path: "reactive"``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.summarizer_server import SummarizerServer

pytest.importorskip("deepagents")

WINDOW = 1000
CLASSES = {"openai": "langchain_openai", "anthropic": "langchain_anthropic", "groq": "langchain_groq", "mistral": "langchain_mistralai", "ollama": "langchain_ollama"}


def _history(rounds: int = 8) -> list[dict]:
    """About 1,800 tokens of tool rounds (past a 1,000-token window), a user turn last."""
    messages: list[dict] = [{"role": "system", "content": "You are a coding agent."}]
    for i in range(rounds):
        call = {"id": f"call_{i}", "type": "function", "function": {"name": "read_file", "arguments": json.dumps({"path": f"build-{i}.log"})}}
        messages += [
            {"role": "user", "content": f"turn {i}: read the build log and say what failed " * 4},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{i}", "content": "log line " * 60},
            {"role": "assistant", "content": f"round {i} read"},
        ]
    messages.append({"role": "user", "content": "what next?"})
    return messages


@pytest.fixture
def server():
    with SummarizerServer() as double:
        yield double


def _reactive(server, kind: str, answer: str | None = None):
    pytest.importorskip(CLASSES[kind])
    from compaction_suite.adapters.deepagents import summarization

    return summarization(Settings(base_url=server.base_url), path="reactive", model=kind, reactive_window=WINDOW, overflow_answer=answer)


@pytest.mark.parametrize(("kind", "answer"), [("openai", None), ("openai", "litellm-proxy"), ("anthropic", None), ("groq", None)])
def test_the_adapter_summarizes_after_each_answer_the_middleware_recognises(server, kind, answer):
    """Each class on its provider's answer; ``ChatOpenAI`` also on a LiteLLM proxy's, which it maps
    from langchain-openai 1.4.2 (langchain#39300) and deepagents reads by its text from 0.7.14."""
    compactor = _reactive(server, kind, answer)
    history = _history()
    out = compactor.compact(history, iteration=1)
    model = compactor.model_double.server()
    assert model.counts["over_window"] == 1 and server.counts["summary"] == 1
    assert compactor.capabilities["reactive_window"] == WINDOW and "trigger" not in compactor.capabilities
    assert len(out) < len(history) and out[-1] == history[-1]


def test_the_adapter_crashes_on_mistrals_answer_through_chat_mistralai(server):
    """``ChatMistralAI`` raises ``httpx.HTTPStatusError`` on Mistral's 400, which neither is a
    ``ContextOverflowError`` nor carries the ``status_code`` deepagents' text check reads (deepagents
    0.7.32, langchain-mistralai 1.1.6): the middleware never summarizes (langchain#37532)."""
    httpx = pytest.importorskip("httpx")
    compactor = _reactive(server, "mistral")
    with pytest.raises(httpx.HTTPStatusError, match="too large for model with 1000 maximum context length"):
        compactor.compact(_history(), iteration=1)
    assert server.counts.get("summary", 0) == 0


@pytest.mark.parametrize("answer", ["ollama-cloud", "context-shift-off"])
def test_the_adapter_crashes_on_ollamas_answers_through_chat_ollama(server, answer):
    """``ChatOllama`` lets ``ollama.ResponseError`` through and deepagents 0.7.32 reads neither of Ollama's
    texts as an overflow (langchain-ollama 1.1.0 maps nothing to ``ContextOverflowError``)."""
    ollama = pytest.importorskip("ollama")
    compactor = _reactive(server, "ollama", answer)
    with pytest.raises(ollama.ResponseError, match="context length"):
        compactor.compact(_history(), iteration=1)
    assert server.counts.get("summary", 0) == 0


def test_an_unknown_model_or_answer_is_refused(server):
    from compaction_suite.adapters.deepagents import summarization

    with pytest.raises(ValueError, match="model must be one of openai, anthropic, groq, mistral, ollama"):
        summarization(Settings(base_url=server.base_url), path="reactive", model="gemini")
    with pytest.raises(ValueError, match="has no overflow answer 'nope'"):
        summarization(Settings(base_url=server.base_url), path="reactive", model="openai", overflow_answer="nope")


def _agent(server, kind: str, folder):
    """LangChain's ``create_agent`` on ``kind``'s class at the double, with the middleware
    ``create_deep_agent`` installs (``create_summarization_middleware(model, backend)``), its summary
    request trimmed to 250 tokens (about 700 with the summary prompt) so that it fits the same model's window (deepagents#5913 otherwise)."""
    pytest.importorskip(CLASSES[kind])
    from deepagents.backends import FilesystemBackend
    from deepagents.middleware.summarization import create_summarization_middleware
    from langchain.agents import create_agent

    from compaction_suite.adapters._langchain_models import answers, chat_model

    server.window(WINDOW, answers(kind, None) or None)
    model = chat_model(kind, server.base_url, "k", "compaction-suite-agent", 30.0)
    middleware = create_summarization_middleware(model, FilesystemBackend(root_dir=str(folder), virtual_mode=True), trim_tokens_to_summarize=250)
    return create_agent(model, system_prompt="You are a coding agent.", middleware=[middleware])


def _messages():
    from compaction_suite.adapters.langchain import to_langchain

    return to_langchain(_history()[1:])[0]


def test_create_agent_summarizes_after_groqs_answer(server, tmp_path):
    """The loop on ``ChatGroq``: the first call gets Groq's 400 ``context_length_exceeded``, the
    middleware summarizes and calls again, and the agent answers."""
    agent = _agent(server, "groq", tmp_path)
    state = agent.invoke({"messages": _messages()})
    assert server.counts["over_window"] == 1 and server.counts["summary"] == 2  # the summary, then the agent's answer
    assert state["messages"][-1].type == "ai" and "summary of 8 messages" in state["messages"][-1].text  # the system prompt, the summary and the 6 kept


def test_create_agent_ends_in_mistrals_error_on_chat_mistralai(server, tmp_path):
    httpx = pytest.importorskip("httpx")
    agent = _agent(server, "mistral", tmp_path)
    with pytest.raises(httpx.HTTPStatusError, match="too large for model"):
        agent.invoke({"messages": _messages()})
    assert server.counts["over_window"] == 1 and server.counts.get("summary", 0) == 0


def _newest_batch(window: int) -> list[dict]:
    """FIRE-5's newest-batch history in chat-completions (`test_reactive.with_newest_batch`): build-log
    rounds past twice ``window``, then three parallel reads of 9/20 of it each."""
    import types

    from compaction_suite.conformance import formats
    from compaction_suite.conformance.tests import test_reactive, test_window

    suite: Any = types.SimpleNamespace(format=formats.get(formats.CHAT), capabilities=types.SimpleNamespace(trigger=None))
    base = [{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": "Fix the build."}, {"role": "assistant", "content": "Looking."}]
    return test_reactive.with_newest_batch(suite, test_window.oversized(suite, base, window), window)


def test_a_newest_batch_over_the_window_is_clipped_at_the_adapters_window(server):
    """SPEC FIRE-5, the newest batch: at the adapter's default window (8,000 tokens) deepagents 0.7.32
    summarizes, offloads each kept result to ``/large_tool_results/`` with a preview in its place
    (``_clip_overflow_tail``: the suite's ``readFile`` is not its ``read_file``, which it would cut to its
    first 4,000 characters) and its call comes back."""
    from compaction_suite.adapters.deepagents import summarization

    compactor = summarization(Settings(base_url=server.base_url), path="reactive", model="openai")
    assert compactor.capabilities["reactive_window"] == 8000
    history = _newest_batch(8000)
    out = compactor.compact(history, iteration=1)
    model = compactor.model_double.server()
    assert model.counts["over_window"] == 1 and server.counts["summary"] == 1
    kept = [m for m in out if m.get("role") == "tool"]
    assert len(kept) == 3 and all(m["content"].startswith("Tool result too large") for m in kept)


def test_under_its_fixed_sizes_deepagents_refuses_in_its_own_words(server):
    """At a 1,000-token window a read cut to 4,000 characters is still about a third of it, three over it:
    deepagents 0.7.32 ends the run with its own ``ContextOverflowError`` ("still does not fit after
    recovery"), not the provider's answer, which FIRE-5 reads as a refusal (SPEC FIRE-5, the newest batch)."""
    from langchain_core.exceptions import ContextOverflowError

    from compaction_suite.conformance import overflow

    compactor = _reactive(server, "openai")
    with pytest.raises(ContextOverflowError, match="still does not fit after recovery") as raised:
        compactor.compact(_newest_batch(WINDOW), iteration=1)
    assert overflow.LABEL not in str(raised.value) and overflow.LABEL in str(raised.value.__cause__)
