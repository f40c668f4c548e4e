"""What users pay (SPEC COST-1, COST-2): the double's ledger of billed answers, the judges that read a
framework's reported usage against it, the ``usage`` declaration, and the OpenAI Agents SDK's own
``Runner`` reporting the usage of a run that compacted (openai-agents-python#4434)."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import httpx
import pytest

from compaction_suite.conformance import usage
from compaction_suite.conformance.capabilities import CapabilityError, declared
from compaction_suite.conformance.summarizer_server import Served, SummarizerServer

AGENT = Served("/v1/responses", "model", 300, 20)
COMPACT = Served("/v1/responses/compact", "compact", 900, 40)


def test_a_report_that_leaves_out_the_compact_request_names_it() -> None:
    found = usage.left_out([AGENT, COMPACT], usage.Tokens(300, 20))
    assert found is not None and found.reason_id == "usage-left-out"
    assert "900 input and 40 output tokens left out: exactly the usage of the compact request(s) POST /v1/responses/compact" in str(found)


def test_a_report_covering_every_billed_answer_passes_both_clauses() -> None:
    assert usage.left_out([AGENT, COMPACT], usage.Tokens(1200, 60)) is None
    assert usage.counted_twice([AGENT, COMPACT], usage.Tokens(1200, 60)) is None


def test_a_report_counting_the_compact_request_twice_names_it() -> None:
    found = usage.counted_twice([AGENT, COMPACT], usage.Tokens(2100, 100))
    assert found is not None and found.reason_id == "usage-counted-twice"
    assert "exactly the usage of the compact request(s)" in str(found)


def test_no_report_for_a_billed_run_leaves_everything_out() -> None:
    found = usage.left_out([COMPACT], None)
    assert found is not None and "reported no usage" in str(found)


def test_an_answer_that_did_not_state_its_usage_is_owed_by_no_report_but_bounds_it() -> None:
    """COST-1 Decision: a streamed chat answer without include_usage told the client nothing, so
    leaving it out is no failure; counting it is no excess either."""
    unstated = Served("/v1/chat/completions", "chat", 500, 30, stated=False)
    assert usage.left_out([AGENT, unstated], usage.Tokens(300, 20)) is None
    assert usage.counted_twice([AGENT, unstated], usage.Tokens(800, 50)) is None


class _Reports:
    capabilities: ClassVar[dict[str, str]] = {"usage": "reported"}

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def compact(self, messages: Any, *, iteration: int) -> Any:
        return messages

    def reported_usage(self) -> Any:
        return self.answer


@pytest.mark.parametrize("answer", [{"input_tokens": 1}, {"input_tokens": -1, "output_tokens": 0}, {"input_tokens": True, "output_tokens": 0}, [1, 2]])
def test_an_unreadable_report_is_a_contract_error(answer: Any) -> None:
    with pytest.raises(usage.UsageHookError):
        usage.reported(_Reports(answer))


def test_declaring_usage_makes_the_cost_clauses_applicable_and_needs_the_hook() -> None:
    assert {"COST-1", "COST-2"} <= set(declared(object()).waived())
    assert not {"COST-1", "COST-2"} & set(declared(_Reports(None)).waived())
    assert declared(_Reports(None)).as_dict()["usage"] == "reported"

    class NoHook:
        capabilities: ClassVar[dict[str, str]] = {"usage": "reported"}

    with pytest.raises(CapabilityError, match="reported_usage"):
        declared(NoHook())


def test_the_double_bills_each_answer_with_the_usage_it_states() -> None:
    with SummarizerServer() as server:
        plain = httpx.post(f"{server.base_url}/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "hello there"}]}).json()
        httpx.post(f"{server.base_url}/chat/completions", json={"model": "m", "stream": True, "messages": [{"role": "user", "content": "hello again"}]}).read()
        billed = server.served
    first = billed[0]
    assert (first.api, first.input_tokens, first.output_tokens, first.stated) == ("chat", plain["usage"]["prompt_tokens"], plain["usage"]["completion_tokens"], True)
    assert billed[1].api == "chat" and billed[1].stated is False and billed[1].input_tokens > 0


def test_a_scripted_agent_model_answer_bills_its_prompt_and_output() -> None:
    with SummarizerServer() as server:
        answer = httpx.post(
            f"{server.base_url}/responses",
            json={"model": "m", "input": [{"role": "user", "content": "read the log"}], "testdouble_output": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}]},
        ).json()
        billed = server.served
    assert [(s.api, s.input_tokens, s.output_tokens) for s in billed] == [("model", answer["usage"]["input_tokens"], answer["usage"]["output_tokens"])]
    assert answer["usage"]["input_tokens"] > 0 and answer["usage"]["output_tokens"] > 0


def test_the_sdk_runner_reports_the_usage_of_its_compaction_at_the_installed_release() -> None:
    """The SDK's own ``Runner.run`` with ``OpenAIResponsesCompactionSession`` (the adapter's ``runner``
    path) compacts; the usage the SDK reports for the run is exactly what the double billed, the
    ``responses.compact`` call included (0.21.1 on; 0.21.0 left it out, openai-agents-python#4434,
    shown by ``compaction-suite matrix --bugs``)."""
    pytest.importorskip("agents.memory", reason="the OpenAI Agents SDK is not installed (pip install -e '.[openai-agents]')")
    from compaction_suite.adapters import openai_agents
    from compaction_suite.conformance import formats
    from compaction_suite.conformance.capabilities import Capabilities
    from compaction_suite.conformance.settings import Settings, connected
    from compaction_suite.conformance.suite import probe_history

    history = formats.get("responses").from_chat(probe_history(Capabilities(system_prompt="outside"), 6))
    with SummarizerServer() as server:
        compactor = openai_agents.runner(connected(Settings(), server.base_url), threshold=4)
        asyncio.run(compactor.compact(history, iteration=1))
        billed = server.served
        report = usage.reported(compactor)
    assert {s.api for s in billed} == {"model", "compact"}
    assert report == usage.billed(billed, stated_only=True)


def test_strands_summarizing_reports_none_of_its_summary_usage() -> None:
    """Strands' ``SummarizingConversationManager`` on its proactive path (the manager's before-model-call
    hook, as the agent's invocation fires it) summarizes through the agent's model by ``model.stream()``
    directly, bypassing the agent's metrics as its docstring says: ``accumulated_usage`` holds none of the
    billed summary request (COST-1, documented; strands-agents/harness-sdk#4300)."""
    pytest.importorskip("strands.agent.conversation_manager", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    from compaction_suite.adapters import strands
    from compaction_suite.conformance import formats
    from compaction_suite.conformance.capabilities import Capabilities
    from compaction_suite.conformance.settings import Settings, connected
    from compaction_suite.conformance.suite import probe_history

    history = formats.get("anthropic-messages").from_chat(probe_history(Capabilities(system_prompt="outside"), 12))
    with SummarizerServer() as server:
        compactor = strands.summarizing(connected(Settings(), server.base_url), preserve_recent_messages=4, context_window_limit=2000)
        compactor.compact(history, iteration=1)
        billed = server.served
        report = usage.reported(compactor)
    assert [s.api for s in billed] == ["anthropic"] and billed[0].input_tokens > 0
    found = usage.left_out(billed, report)
    assert report == usage.Tokens(0, 0) and found is not None and "exactly the usage of the anthropic request(s) POST /v1/messages" in str(found)
