"""Real harm in the installed frameworks, each shown with the framework's own code path.

Every test runs an adapter factory (the framework's compactor exactly as the matrix runs it)
on a history in the framework's native shapes, with the suite's summarizer test double
(``compaction_suite.conformance.summarizer_server``) in the failing mode where one is
involved, and asserts the harm the matrix reports:

* LangChain ``SummarizationMiddleware`` and pydantic-ai-harness ``SummarizingCompaction``
  raise ``IndexError`` when the summarizer answers with no choices (crash);
* LangChain ``SummarizationMiddleware`` and Semantic Kernel's
  ``ChatHistorySummarizationReducer`` (with its default ``fail_on_error=True``) replace the
  oldest messages with an empty summary when the summarizer's content is empty (loss);
* Agent Framework ``TokenBudgetComposedStrategy(token_budget=2000)`` drops a system message
  passed in the list when the system prompt and the last round exceed the budget (loss);
* AutoGen ``TokenLimitedChatCompletionContext`` (2000, 8000) and LangChain
  ``trim_messages(strategy="first")`` keep a call without its result (CORE-2: the provider
  rejects the next request) and cut a round (CORE-4).

These pin the installed versions' behaviour: when a framework fixes one, its test fails and
says so, and the matrix and README must be re-run and updated. Each framework's tests skip
when it is not installed.
"""

from __future__ import annotations

import asyncio
import inspect

import pytest

from compaction_suite.conformance import oracle

from message_builders import asks, call, reply, result, system, user


def _read(call_id: str, path: str) -> dict:
    return call(call_id, "readFile", {"path": path})


SYSTEM = system("You are a coding agent working in the user's repository.")


def conversation(turns: int) -> list[dict]:
    """``turns`` user questions, each answered by a tool round and a reply (no system message)."""
    out: list[dict] = []
    for i in range(turns):
        out += [
            user(f"Question {i}: what does module {i} do?"),
            asks(_read(f"call_{i}", f"src/m{i}.py")),
            result(f"call_{i}", f"def f{i}():\n    return {i}\n" * 8),
            reply(f"Module {i} defines f{i}, which returns {i}. " * 3),
        ]
    return out


def big_last_round(result_chars: int, answered: bool = True) -> list[dict]:
    """A user turn, then parallel calls whose last result is ``result_chars`` long, then (``answered``) a reply."""
    return [
        user("Read the three files."),
        asks(_read("call_a", "a.py"), _read("call_b", "b.py"), _read("call_c", "big.log")),
        result("call_a", "import json\n"),
        result("call_b", "import os\n"),
        result("call_c", "log line\n" * (result_chars // 9)),
    ] + ([reply("The log is long.")] if answered else [])


@pytest.fixture(scope="module")
def server():
    from compaction_suite.conformance.summarizer_server import SummarizerServer

    srv = SummarizerServer()
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def settings(server):
    from compaction_suite.conformance.settings import Settings, connected

    server.reset()
    return connected(Settings(), server.base_url)


def compact(compactor, history: list[dict]) -> list[dict]:
    out = compactor.compact(history, iteration=20)
    return asyncio.run(out) if inspect.iscoroutine(out) else out


def added(history: list[dict], out: list[dict]) -> list[dict]:
    """The messages of ``out`` that are not messages of ``history`` (JSON equality): what the compactor wrote."""
    return [m for m in out if not any(oracle.same(m, h) for h in history)]


# --- crash: no choices ---------------------------------------------------------------------------------


def test_langchain_summarization_middleware_raises_index_error_on_no_choices(server, settings):
    pytest.importorskip("langchain.agents.middleware", reason="LangChain is not installed (pip install -e '.[langchain]')")
    from compaction_suite.adapters.langchain import summarization_middleware

    compactor = summarization_middleware(settings, trigger_tokens=200, keep_messages=6)
    server.fault("no_choices")
    with pytest.raises(IndexError):
        compact(compactor, conversation(6))
    assert server.requests, "the summarizer was never called"


def test_pydantic_ai_summarizing_compaction_raises_index_error_on_no_choices(server, settings):
    pytest.importorskip("pydantic_ai_harness", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from compaction_suite.adapters.pydantic_ai import summarizing

    compactor = summarizing(settings, max_messages=8, keep_messages=4)
    server.fault("no_choices")
    with pytest.raises(IndexError):
        compact(compactor, conversation(6))
    assert server.requests, "the summarizer was never called"


# --- loss: empty summary replacing history ----------------------------------------------------------------


def test_langchain_summarization_middleware_replaces_history_with_an_empty_summary(server, settings):
    pytest.importorskip("langchain.agents.middleware", reason="LangChain is not installed (pip install -e '.[langchain]')")
    from compaction_suite.adapters.langchain import summarization_middleware

    history = conversation(6)
    server.fault("empty_content")
    out = compact(summarization_middleware(settings, trigger_tokens=200, keep_messages=6), history)
    new = added(history, out)
    assert len(out) < len(history) and len(new) == 1, out[:2]
    assert new[0]["content"].strip() == "Here is a summary of the conversation to date:"  # LangChain's framing, nothing after it


def test_semantic_kernel_summarization_reducer_replaces_history_with_an_empty_summary(server, settings):
    pytest.importorskip("semantic_kernel", reason="Semantic Kernel is not installed (pip install -e '.[semantic-kernel]')")
    from compaction_suite.adapters.semantic_kernel import summarization_reducer

    history = conversation(6)
    compactor = summarization_reducer(settings, target_count=4)  # fail_on_error=True, SK's default
    assert compactor.profiles == {"core"}
    server.fault("empty_content")
    out = compact(compactor, history)
    new = added(history, out)
    assert len(out) < len(history) and [(m["role"], m["content"]) for m in new] == [("assistant", "")], out[:2]


# --- loss: system message dropped ----------------------------------------------------------------------------


def test_agent_framework_token_budget_drops_the_system_message_in_the_list(settings):
    pytest.importorskip("agent_framework", reason="Agent Framework is not installed (pip install -e '.[agent-framework]')")
    from compaction_suite.adapters.agent_framework import token_budget

    history = [SYSTEM, *conversation(2), *big_last_round(12_000, answered=False)]  # before the model reads the results
    out = compact(token_budget(settings, token_budget=2000), history)
    assert oracle.check_system_kept(history, out, True), out[:2]  # AF's strict fallback excludes the system group
    assert all(m["role"] != "system" for m in out)


# --- rejected: a call kept without its result ----------------------------------------------------------------


@pytest.mark.parametrize("limit", [2000, 8000])
def test_autogen_token_limited_keeps_calls_without_results(settings, limit):
    pytest.importorskip("autogen_core", reason="AutoGen is not installed (pip install -e '.[autogen]')")
    from compaction_suite.adapters.autogen import token_limited

    history = [*conversation(1), *big_last_round(limit * 5)]
    out = compact(token_limited(settings, token_limit=limit), history)
    assert oracle.check_calls_have_one_result(out), out  # CORE-2: the next request is an HTTP 400
    assert oracle.check_rounds_whole(history, out), out  # CORE-4, the same output


def test_langchain_trim_first_keeps_calls_without_results(settings):
    pytest.importorskip("langchain_core", reason="LangChain is not installed (pip install -e '.[langchain]')")
    from compaction_suite.adapters.langchain import trim_messages

    history = big_last_round(8_000)
    out = compact(trim_messages(settings, max_tokens=1024, strategy="first", start_on=None, end_on=None), history)
    assert oracle.check_calls_have_one_result(out), out  # CORE-2
    assert oracle.check_rounds_whole(history, out), out  # CORE-4, the same output
