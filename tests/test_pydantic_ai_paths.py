"""pydantic-ai-harness's documented fallback wrapper and the parts pydantic-ai records after a capability
loads, proven with pydantic-ai's own agent loop (issue 21, points 1 and 2).

The agent model is pydantic-ai's ``FunctionModel`` (a scripted model); the summarizer is pydantic-ai's
``OpenAIChatModel`` on the suite's summarizer test double (a real HTTP server on 127.0.0.1) in the fault
under test.
"""

from __future__ import annotations

import asyncio

import pytest
from scripted_endpoint import ROUND_CALLS, ROUNDS_PER_TURN

from compaction_suite.conformance import oracle
from compaction_suite.conformance.settings import Settings, connected
from compaction_suite.conformance.summarizer_server import SummarizerServer

from message_builders import asks, call, reply, result, user

TURNS = 3


def read_file(path: str) -> str:
    """Read a file (the loop tests' tool)."""
    return f"contents of {path}\n" * 20


def conversation(turns: int) -> list[dict]:
    out: list[dict] = []
    for i in range(turns):
        out += [user(f"Question {i}"), asks(call(f"call_{i}", "read_file", {"path": f"m{i}.py"})), result(f"call_{i}", f"def f{i}(): ...\n" * 8), reply(f"Module {i}.")]
    return out


def _agent_with(capability):
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
    from pydantic_ai.models.function import FunctionModel

    ids = iter(range(1, 1000))

    def model(messages, info) -> ModelResponse:  # the scripted agent model
        rounds = 0
        for m in reversed(messages):
            if isinstance(m, ModelRequest) and any(isinstance(p, UserPromptPart) for p in m.parts):
                break
            rounds += isinstance(m, ModelResponse) and any(isinstance(p, ToolCallPart) for p in m.parts)
        if rounds < ROUNDS_PER_TURN:
            return ModelResponse(parts=[ToolCallPart("read_file", {"path": "a.py"}, tool_call_id=f"call_p{next(ids)}") for _ in range(ROUND_CALLS)])
        return ModelResponse(parts=[TextPart("done")])

    return Agent(FunctionModel(model), system_prompt="You are a coding agent. (loop test)", tools=[read_file], capabilities=[capability])


def _fallback_capability(settings, seen):
    from pydantic_ai_harness.compaction import FallbackCompaction, SlidingWindowCompaction, SummarizingCompaction

    from compaction_suite.adapters.pydantic_ai import _offline_model, from_pydantic_ai

    class Recording(FallbackCompaction):
        async def before_model_request(self, ctx, request_context):
            seen.append(from_pydantic_ai(list(ctx.messages)))
            return await super().before_model_request(ctx, request_context)

    summarizer = _offline_model(settings.async_client, settings.model)
    size = {"max_messages": 1, "keep_messages": 3}
    return Recording(fallback_chain=[SummarizingCompaction(model=summarizer, **size), SlidingWindowCompaction(**size)], max_tokens=300)


def _run(agent) -> list:
    history: list = []
    for turn in range(TURNS):
        history = agent.run_sync(f"turn {turn}: read the files", message_history=history or None).all_messages()
    return history


@pytest.mark.parametrize("fault", [None, "500"])
def test_pydantic_ai_fallback_compaction_runs_between_rounds_and_falls_back_on_http_errors(fault):
    """``FallbackCompaction`` in ``Agent``'s loop: called before every model request with every call
    answered; a summarizer HTTP 500 (the client's retries spent) falls back to the sliding window."""
    pytest.importorskip("pydantic_ai_harness.compaction", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    seen: list[list[dict]] = []
    with SummarizerServer() as endpoint:
        settings = connected(Settings(), endpoint.base_url)
        if fault:
            endpoint.fault(fault)
        history = _run(_agent_with(_fallback_capability(settings, seen)))
        summarized = len(endpoint.bodies)
    assert seen and all(oracle.check_calls_have_one_result(h) is None for h in seen)
    assert any(h[-1]["role"] == "tool" for h in seen)  # mid-turn, right after a round's results
    assert summarized, "the summarizer was never called"
    kinds = {type(p).__name__ for m in history for p in m.parts}
    assert ("CompactionPart" in kinds) is (fault is None), kinds  # a summary only when the summarizer answered


def test_pydantic_ai_fallback_compaction_lets_index_error_escape_on_no_choices():
    """Crash, shown with ``Agent``'s loop: a summarizer reply with no choices raises ``IndexError`` inside
    ``SummarizingCompaction``; it is not a ``ModelAPIError``, so ``FallbackCompaction`` does not fall back
    and the agent run raises (``fallback_on`` is documented; a provider's reply is not a programming error)."""
    pytest.importorskip("pydantic_ai_harness.compaction", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from compaction_suite.adapters.pydantic_ai import fallback

    seen: list[list[dict]] = []
    with SummarizerServer() as endpoint:
        settings = connected(Settings(), endpoint.base_url)
        endpoint.fault("no_choices")
        with pytest.raises(IndexError):
            _run(_agent_with(_fallback_capability(settings, seen)))
        with pytest.raises(IndexError):  # the adapter shows the same through its factory
            asyncio.run(fallback(settings, max_tokens=200, keep_messages=4).compact(conversation(6), iteration=1))


def test_pydantic_ai_adapter_fallback_matches_the_loop_under_http_500():
    pytest.importorskip("pydantic_ai_harness.compaction", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from compaction_suite.adapters.pydantic_ai import fallback, sliding_window

    history = conversation(6)
    with SummarizerServer() as endpoint:
        settings = connected(Settings(), endpoint.base_url)
        healthy = asyncio.run(fallback(settings, max_tokens=200, keep_messages=4).compact(history, iteration=1))
        endpoint.fault("500")
        failed = asyncio.run(fallback(settings, max_tokens=200, keep_messages=4).compact(history, iteration=1))
    window = asyncio.run(sliding_window(Settings(base_url="http://127.0.0.1:9/v1"), max_messages=1, keep_messages=4).compact(history, iteration=1))
    assert healthy != window and len(healthy) < len(history)
    assert failed == window  # fell back to the sliding window


def test_pydantic_ai_capability_parts_are_drawn_where_pydantic_ai_records_them():
    """``capability_parts``: a ``ToolAvailabilityDeltaPart`` in the request holding the first result of each
    tool name (as ``pydantic_ai/_tool_execution.py`` appends it after the revealing call's return), and
    nothing of it in the OpenAI dicts on the way back."""
    pm = pytest.importorskip("pydantic_ai.messages", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    if not hasattr(pm, "ToolAvailabilityDeltaPart"):
        pytest.skip("pydantic-ai before 2.23 has no ToolAvailabilityDeltaPart")
    from compaction_suite.adapters.pydantic_ai import from_pydantic_ai, to_pydantic_ai

    history = conversation(3)
    objs, notes = to_pydantic_ai(history, capability_parts=True)
    deltas = [(i, p) for i, m in enumerate(objs) for p in m.parts if isinstance(p, pm.ToolAvailabilityDeltaPart)]
    assert [p.tools_added for _, p in deltas] == [["read_file"]] and deltas[0][1].tool_call_id == "call_0"
    assert any(isinstance(p, pm.ToolReturnPart) for p in objs[deltas[0][0]].parts)
    assert from_pydantic_ai(objs, notes) == history


def test_pydantic_ai_capability_parts_run_through_summarizing():
    """The summarizing capability's token estimate meets the delta part and it still compacts (at harness
    0.18.0 with pydantic-ai 2.27.0 the estimator raised AttributeError on it, pydantic/pydantic-ai-harness#577)."""
    pm = pytest.importorskip("pydantic_ai.messages", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    if not hasattr(pm, "ToolAvailabilityDeltaPart"):
        pytest.skip("pydantic-ai before 2.23 has no ToolAvailabilityDeltaPart")
    from compaction_suite.adapters.pydantic_ai import summarizing

    history = conversation(6)
    with SummarizerServer() as endpoint:
        compactor = summarizing(connected(Settings(), endpoint.base_url), max_messages=None, max_tokens=200, keep_messages=4, capability_parts=True)
        out = asyncio.run(compactor.compact(history, iteration=1))  # a token trigger: the estimator meets the part
    assert len(out) < len(history) and oracle.check_calls_have_one_result(out) is None


def test_pydantic_ai_tiered_compaction_clears_then_summarizes_past_its_target():
    """``pydantic_ai:tiered``: ``TieredCompaction(ClearToolResults, SummarizingCompaction)`` escalates past its target:
    under it the history is kept whole; past it the summarizer is asked and the newest turn is kept."""
    pytest.importorskip("pydantic_ai_harness.compaction", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from compaction_suite.adapters.pydantic_ai import tiered

    history = conversation(6)
    with SummarizerServer() as endpoint:
        settings = connected(Settings(), endpoint.base_url)
        assert asyncio.run(tiered(settings, target_tokens=100_000).compact(history, iteration=1)) == history
        out = asyncio.run(tiered(settings, target_tokens=50, keep_pairs=1, keep_messages=4).compact(history, iteration=1))
        assert endpoint.exchanges, "the summarizing tier was never reached"
    assert len(out) < len(history) and out[-4:] == history[-4:]


def test_pydantic_ai_harness_factory_refuses_options_the_harness_refuses_as_it_starts():
    """Options the harness's own validation refuses are the configuration's contract error when the factory starts
    (SPEC "The framework matrix and releases", Supported releases), never a crash of the framework's at ``compact``;
    the documented configurations build."""
    pytest.importorskip("pydantic_ai_harness.compaction", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from compaction_suite.adapters import pydantic_ai
    from compaction_suite.adapters.pydantic_ai import CONFIGURATIONS, clear_tool_results

    settings = Settings(base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ValueError, match="max_messages, max_tokens"):
        clear_tool_results(settings, max_messages=None, max_tokens=None)
    for name, given in CONFIGURATIONS:
        if name not in ("openai_compaction",):
            assert getattr(pydantic_ai, name)(settings, **given) is not None


def test_pydantic_ai_summarizing_on_a_stream_only_summary_model(monkeypatch):
    """``summarizer_provider="dashscope-qwq"`` (SPEC CORE-13 Decision): the double answers a summary request without
    ``stream: true`` as Alibaba Cloud's stream-only QwQ models do (HTTP 400). Where the harness has the documented
    ``event_stream_handler=drain_summary_events`` (0.29.0 on) the adapter passes it and every summary request streams;
    without it (a release before 0.29.0, here the name taken away) the request goes unstreamed and is refused
    (pydantic/pydantic-ai-harness#619). ``fallback`` and ``tiered``, which chain a ``SummarizingCompaction``, stream it alike."""
    compaction = pytest.importorskip("pydantic_ai_harness.compaction", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    if not hasattr(compaction, "drain_summary_events"):
        pytest.skip("pydantic-ai-harness before 0.29 cannot stream its summary request")
    from pydantic_ai.exceptions import ModelHTTPError

    from compaction_suite.adapters.pydantic_ai import fallback, summarizing, tiered

    history = conversation(6)
    with SummarizerServer() as endpoint:
        settings = connected(Settings(), endpoint.base_url)
        endpoint.answer_as(["dashscope-qwq"])
        compactor = summarizing(settings, max_messages=8, keep_messages=4, summarizer_provider="dashscope-qwq")
        assert compactor.capabilities["summarizer_providers"] == ["dashscope-qwq"]
        out = asyncio.run(compactor.compact(history, iteration=1))
        assert endpoint.exchanges and all(e.request.body.get("stream") is True and e.rejected is None for e in endpoint.exchanges)
        assert len(out) < len(history)
        for chained in (fallback(settings, max_tokens=200, keep_messages=4, summarizer_provider="dashscope-qwq"), tiered(settings, target_tokens=50, keep_messages=4, summarizer_provider="dashscope-qwq")):
            asked = len(endpoint.exchanges)
            assert len(asyncio.run(chained.compact(history, iteration=1))) < len(history)
            assert len(endpoint.exchanges) > asked and all(e.request.body.get("stream") is True and e.rejected is None for e in endpoint.exchanges[asked:])
        monkeypatch.delattr(compaction, "drain_summary_events")
        with pytest.raises(ModelHTTPError, match="only support stream mode"):
            asyncio.run(summarizing(settings, max_messages=8, keep_messages=4, summarizer_provider="dashscope-qwq").compact(history, iteration=1))
        refused = endpoint.exchanges[-1].rejected
    assert refused is not None and refused.reason_id == "dashscope-qwq:non-streaming-request"


def test_the_harness_compaction_before_0_7_is_its_experimental_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """pydantic-ai-harness 0.4.0-0.6.0 hold the compaction capabilities as ``pydantic_ai_harness.experimental.compaction``
    (same classes and keywords, ``SlidingWindow`` by its old name); 0.7.0 moved them to ``pydantic_ai_harness.compaction``.
    The adapter takes the one the release has, so its harness factories run from 0.4.0."""
    import sys
    import types

    from compaction_suite.adapters import pydantic_ai

    experimental = types.ModuleType("pydantic_ai_harness.experimental.compaction")
    monkeypatch.setitem(sys.modules, "pydantic_ai_harness.compaction", None)  # the import fails, as below 0.7.0
    monkeypatch.setitem(sys.modules, "pydantic_ai_harness.experimental.compaction", experimental)
    assert pydantic_ai._harness_compaction() is experimental
    monkeypatch.setitem(sys.modules, "pydantic_ai_harness.experimental.compaction", None)  # below 0.4.0: neither
    with pytest.raises(ImportError, match=r"pydantic_ai_harness\.compaction is not installed"):
        pydantic_ai._harness_compaction()
    assert pydantic_ai.SUPPORTED["pydantic-ai-harness"] == ">=0.4"
