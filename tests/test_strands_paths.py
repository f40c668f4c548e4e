"""Strands' reactive compaction path, proven with Strands' own agent loop (issue 21, point 1).

When its model reports a context overflow, ``Agent`` calls ``conversation_manager.reduce_context(agent,
e=ContextWindowOverflowException)`` and retries the model call. The overflow is what Strands'
``AnthropicModel`` raises for Anthropic's HTTP 400 "prompt is too long" (shown here against a stand-in
endpoint on 127.0.0.1); the loop test then runs ``Agent`` with a scripted model (a TEST DOUBLE, from
``tests/test_adapter_format_loops.py``) that raises that exception once the history grows, records every
history ``reduce_context`` receives and checks the adapter's declarations and its equivalence with the loop.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from json_endpoint import JSONEndpoint
from test_adapter_format_loops import INSTRUCTIONS, TURNS, _scripted_strands_model, _to_anthropic, read_file

from compaction_suite.conformance.formats import anthropic as anthropic_format
from compaction_suite.conformance.settings import Settings

OVERFLOW_AT = 7
"""The scripted model reports an overflow for a history of more messages than this."""


class _Overflowing(JSONEndpoint):
    """A stand-in for Anthropic's ``/v1/messages`` answering what the API answers for a prompt over the
    model's window: HTTP 400, ``invalid_request_error``, "prompt is too long: ..." (a TEST DOUBLE)."""

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}}


def test_strands_anthropic_model_maps_the_overflow_answer_to_context_window_overflow():
    """The reactive path's trigger is real: Strands' ``AnthropicModel`` turns Anthropic's HTTP 400
    "prompt is too long" into ``ContextWindowOverflowException`` (what ``Agent`` hands ``reduce_context``)."""
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    from strands import Agent
    from strands.models.anthropic import AnthropicModel
    from strands.types.exceptions import ContextWindowOverflowException

    with _Overflowing().running() as server:
        model = AnthropicModel(client_args={"base_url": server.base_url, "api_key": "test-double", "max_retries": 0}, model_id="stand-in", max_tokens=64)
        agent = Agent(model=model, callback_handler=None)
        with pytest.raises(ContextWindowOverflowException) as raised:
            agent("hello")  # the default sliding window, called reactively, cannot trim a one-message history
    assert isinstance(raised.value.__cause__, ContextWindowOverflowException) and "prompt is too long" in str(raised.value.__cause__)


def _overflowing_model():
    """The scripted Strands model, raising ``ContextWindowOverflowException`` for a long history."""
    from strands.types.exceptions import ContextWindowOverflowException

    model = _scripted_strands_model()
    stream = model.stream

    async def overflowing(messages, tool_specs=None, system_prompt=None, **kwargs):
        if tool_specs and len(messages) > OVERFLOW_AT:
            raise ContextWindowOverflowException("prompt is too long: 210000 tokens > 200000 maximum")
        async for event in stream(messages, tool_specs, system_prompt, **kwargs):
            yield event

    model.stream = overflowing
    return model


def _reactive_loop(manager_class, **manager_options):
    from strands import Agent, tool

    seen: list[tuple[list[dict], list[dict], bool]] = []

    class Recording(manager_class):
        def apply_management(self, agent, **kwargs):
            pass  # only the reactive path: the routine one is another configuration

        def reduce_context(self, agent, e=None, **kwargs):
            before = copy.deepcopy(agent.messages)
            super().reduce_context(agent, e, **kwargs)
            seen.append((before, copy.deepcopy(agent.messages), e is not None))

    model = _overflowing_model()
    agent = Agent(model=model, system_prompt=INSTRUCTIONS, tools=[tool(read_file)], conversation_manager=Recording(**manager_options), callback_handler=None)
    for turn in range(TURNS):
        agent(f"turn {turn}: read the files")
    return seen, model


def test_strands_sliding_window_reactive_path_runs_between_rounds():
    """``reduce_context`` runs only after a model call overflowed, with every toolUse answered
    (``called: between_rounds``); the adapter's reactive path gives what the loop's manager left."""
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    from strands.agent.conversation_manager import SlidingWindowConversationManager

    from compaction_suite.adapters.strands import sliding_window

    seen, model = _reactive_loop(SlidingWindowConversationManager, window_size=4)
    assert seen and all(reactive for *_, reactive in seen), "the loop never reduced reactively"
    assert any(any("toolResult" in b for b in before[-1]["content"]) for before, *_ in seen)  # mid-turn
    compactor = sliding_window(Settings(base_url="http://127.0.0.1:9/v1"), path="reactive")
    assert compactor.capabilities["called"] == "between_rounds" and compactor.capabilities["providers"] == ["anthropic", "bedrock-converse"]
    for before, after, _ in seen:
        request = {"system": INSTRUCTIONS, "messages": _to_anthropic(before)}
        assert anthropic_format.invalid(request) is None and not anthropic_format.in_flight(request), before
        window = anthropic_format.tokens({"system": INSTRUCTIONS, "messages": _to_anthropic(after)})  # what fitted after one reduction
        out = sliding_window(Settings(base_url="http://127.0.0.1:9/v1"), window_size=4, path="reactive", context_window=window, overflow_answer="adapter").compact(request, iteration=1)  # the window by the scripted model's count
        assert out["messages"] == _to_anthropic(after)
    assert all(r["system_prompt"] == INSTRUCTIONS for r in model.requests)  # system_prompt: outside


def test_strands_summarizing_reactive_path_summarizes_between_rounds():
    """The summarizing manager's reactive path in Strands' loop: it summarizes through the agent's model
    after an overflow, each time with every toolUse answered."""
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    from strands.agent.conversation_manager import SummarizingConversationManager

    seen, model = _reactive_loop(SummarizingConversationManager, preserve_recent_messages=2)
    assert seen and model.summaries, "the reactive path never summarized"
    for before, after, reactive in seen:
        request = {"system": INSTRUCTIONS, "messages": _to_anthropic(before)}
        assert reactive and anthropic_format.invalid(request) is None and not anthropic_format.in_flight(request), before
        assert len(after) < len(before) and after[0]["role"] == "user"  # Strands' summary message first


def test_strands_summarizing_reactive_adapter_reraises_a_failed_summary():
    """Documented (``DOCUMENTED``): on the reactive path a failed summary is re-raised; the adapter shows
    it with the suite's double answering HTTP 500 (a crash the adapter reports as CORE-10, labelled documented)."""
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    from compaction_suite.adapters.strands import DOCUMENTED, summarizing
    from compaction_suite.conformance.settings import connected
    from compaction_suite.conformance.summarizer_server import SummarizerServer

    _, _, seen = _strands_seen()
    request = {"system": INSTRUCTIONS, "messages": _to_anthropic(seen[-1])}
    with SummarizerServer() as endpoint:
        compactor = summarizing(connected(Settings(), endpoint.base_url), preserve_recent_messages=2, path="reactive", context_window_limit=200)  # a window its reduction fits (at 50 none does: UnboundedRetry)
        ok = compactor.compact(request, iteration=1)
        endpoint.fault("500")
        with pytest.raises(Exception) as raised:
            compactor.compact(request, iteration=1)
    assert len(ok["messages"]) < len(request["messages"])
    assert "500" in str(raised.value) or "500" in repr(raised.value.__cause__)
    assert any(d["factory"] == "summarizing" and d["clause"] == "CORE-10" and d["options"] == {"path": "reactive"} for d in DOCUMENTED)


def _strands_seen():
    from test_adapter_format_loops import _strands_loop

    return _strands_loop(per_turn=True, window_size=100)


def test_strands_proactive_path_is_a_contract_error_before_1_40(monkeypatch):
    """A release the adapter cannot drive is a contract error naming adapter, distribution and version."""
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    from compaction_suite.adapters import _common, strands
    from compaction_suite.adapters._common import CannotDrive

    monkeypatch.setattr(strands, "release", lambda dist: (1, 39, 0))
    monkeypatch.setattr(_common, "installed", lambda dist: "1.39.0")
    with pytest.raises(CannotDrive, match=r"adapter strands:summarizing cannot drive strands-agents 1\.39\.0: .*1\.40"):
        strands.summarizing(Settings(base_url="http://127.0.0.1:9/v1"))
    strands.summarizing(Settings(base_url="http://127.0.0.1:9/v1"), path="reactive")  # the reactive path still runs


def test_strategy_presets_are_a_contract_error_at_1_55(monkeypatch):
    """1.55.0's ``Agent(context_manager=...)`` refuses a ``ContextManagerConfig`` dict, so a strategy preset
    is a contract error there (for the context manager and its session), ``auto`` and ``agentic`` still
    build, and the matrix lists only those two at that release."""
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    from compaction_suite.adapters import _common, strands
    from compaction_suite.adapters._common import CannotDrive

    monkeypatch.setattr(strands, "release", lambda dist: (1, 55, 0))
    monkeypatch.setattr(_common, "installed", lambda dist: "1.55.0")
    settings = Settings(base_url="http://127.0.0.1:9/v1")
    for factory, options in (("context_manager", {}), ("summarizing_session", {"manager": "context_manager"})):
        with pytest.raises(CannotDrive, match=rf"adapter strands:{factory} cannot drive strands-agents 1\.55\.0: strategy presets .*1\.56"):
            getattr(strands, factory)(settings, preset="stale_tool_cleanup", **options)
    strands.context_manager(settings, preset="agentic", path="reactive")
    presets = {o.get("preset", "auto") for f, o in strands.CONFIGURATIONS if f == "context_manager" or o.get("manager") == "context_manager"}
    assert presets <= set(strands.CONTEXT_MANAGER_PRESETS) and "agentic" in presets

def test_a_redacted_thinking_block_is_held_apart_where_strands_cannot_hold_one():
    """Before 1.62.0 Strands' ``AnthropicModel`` neither makes nor formats a ``redactedContent`` block
    (``KeyError: 'reasoningText'``), so the adapter gives Strands the history without it and returns it
    with its message when the manager keeps that message unchanged; where Strands formats one (the
    installed release), it is converted as Strands holds it."""
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    from compaction_suite.adapters.strands import Conversion, _is_redacted, formats_redacted

    redacted = {"type": "redacted_thinking", "data": "cmVkYWN0ZWQ="}
    turn = {"role": "assistant", "content": [redacted, {"type": "text", "text": "Done."}]}
    messages = [{"role": "user", "content": "Go."}, turn, {"role": "user", "content": "Again."}]
    held = Conversion(copy.deepcopy(messages), holds=lambda block: not _is_redacted(block))
    assert [b for m in held.strands for b in m["content"] if "reasoningContent" in b] == []
    kept = held.back(held.strands[1:], lambda block: pytest.fail("an unchanged message is returned as it came"))
    assert kept == messages[1:]
    assert formats_redacted() is (_to_anthropic([Conversion([turn]).strands[0]])[0]["content"][0] == redacted)


def test_an_agent_on_a_model_class_that_makes_no_reasoning_holds_none():
    """``OllamaModel`` and ``MistralModel`` make no reasoning content and cannot send one ("content_type=
    <reasoningContent> | unsupported type"), so an agent on either never holds a thinking block: the adapter
    holds it apart, and returns it with its message when the manager keeps that message unchanged."""
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    from compaction_suite.adapters.strands import _conversion

    turn = {"role": "assistant", "content": [{"type": "thinking", "thinking": "plan", "signature": "c2ln"}, {"type": "text", "text": "Done."}]}
    messages = [{"role": "user", "content": "Go."}, turn, {"role": "user", "content": "Again."}]
    for kind in ("ollama", "mistral"):
        held = _conversion({"messages": copy.deepcopy(messages)}, kind)
        assert [b for m in held.strands for b in m["content"] if "reasoningContent" in b] == [], kind
        assert held.back(held.strands, lambda block: pytest.fail("an unchanged message is returned as it came")) == messages
    assert any("reasoningContent" in b for b in _conversion({"messages": messages}, "bedrock").strands[1]["content"])


def test_a_preset_acting_at_one_share_of_the_window_declares_that_share():
    """``proactive_summarization`` summarizes at 70% utilization (SPEC FIRE-1, FIRE-2); a preset acting on
    tool results' sizes or ages, and the reactive path, declare no trigger."""
    from compaction_suite.adapters import strands

    if strands.release("strands-agents") < strands.STRATEGY_PRESETS_FROM:
        pytest.skip("strategy presets arrived in 1.56.0")
    settings = Settings(base_url="http://127.0.0.1:9/v1")
    assert strands.context_manager(settings, preset="proactive_summarization", context_window_limit=2000).capabilities["trigger"] == {"tokens": 1400}
    assert "trigger" not in strands.context_manager(settings, preset="large_tool_offloading").capabilities
    assert "trigger" not in strands.context_manager(settings, preset="proactive_summarization", path="reactive").capabilities


def test_a_window_that_keeps_nothing_is_refused_on_the_routine_path_and_judged_on_the_reactive_one():
    """SPEC CORE-71, Decision on a window that keeps nothing: ``window_size=0`` (documented from 1.38.0,
    "Use 0 to clear all messages on every reduction") has no declaration on the routine path, which the
    adapter refuses in one line; on the reactive path it runs undeclared, and there the installed release
    empties the history on an overflow (what CORE-16 fails; strands-agents/harness-sdk#2205 at 1.37.0 raised
    "Unable to trim conversation context!" instead)."""
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    from strands.agent.conversation_manager import SlidingWindowConversationManager

    from compaction_suite.adapters._common import release
    from compaction_suite.adapters.strands import sliding_window

    settings = Settings(base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ValueError, match=r"window_size below 1 on path=routine: .*keeps nothing.*use path=reactive"):
        sliding_window(settings, window_size=0)
    compactor = sliding_window(settings, window_size=0, path="reactive", context_window=1000, overflow_answer="adapter")
    assert "trigger" not in compactor.capabilities and "kept_items" not in compactor.capabilities
    if release("strands-agents") < (1, 38):
        return
    assert "Use 0 to clear all messages" in (SlidingWindowConversationManager.__init__.__doc__ or "")
    history = [{"role": "user", "content": [{"type": "text", "text": "hello " * 400}]}, {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]
    request = {"system": INSTRUCTIONS, "messages": [*history, {"role": "user", "content": [{"type": "text", "text": "go on " * 400}]}]}
    assert compactor.compact(request, iteration=1)["messages"] == []
