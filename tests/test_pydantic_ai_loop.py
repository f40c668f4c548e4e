"""A harness compaction capability inside pydantic-ai's ``Agent`` loop (``in_agent``), and the tool-search
rounds pydantic-ai records for deferred tools (``tool_search``; pydantic/pydantic-ai-harness#380), at the
installed release. The agent model is pydantic-ai's ``FunctionModel`` answering with the history's turn; no
network."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from message_builders import asks, call, reply, result, user

pytest.importorskip("pydantic_ai_harness")


def history() -> list[dict]:
    """A first turn calling a tool three times, then a turn of two rounds of another tool."""
    out = [{"role": "system", "content": "You are a coding agent."}, user("Look the weather up.")]
    for i in range(3):
        out += [asks(call(f"w{i}", "lookup_weather", {"city": f"c{i}"})), result(f"w{i}", "sunny " * 40)]
    out += [reply("Sunny."), user("Fix the build.")]
    for i in range(2):
        out += [asks(call(f"c{i}", "read_file", {"path": f"m{i}.py"})), result(f"c{i}", "def f(): ...\n" * 20)]
    return [*out, reply("Fixed.")]


def settings() -> SimpleNamespace:
    import openai

    return SimpleNamespace(async_client=openai.AsyncOpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1"), model="m")


def test_the_drawn_search_round_is_the_one_pydantic_ais_loop_records() -> None:
    """The round `with_searches` draws has the parts, kinds and content an ``Agent`` with a deferred tool
    records when its model calls ``search_tools``."""
    import pydantic_ai
    from pydantic_ai import messages as pm
    from pydantic_ai.models.function import FunctionModel

    from compaction_suite.adapters._pydantic_ai_loop import with_searches

    answers = iter([
        pm.ModelResponse(parts=[pm.ToolSearchCallPart(args={"queries": ["lookup_weather"]}, tool_call_id="s")]),
        pm.ModelResponse(parts=[pm.ToolCallPart(tool_name="lookup_weather", args={}, tool_call_id="w0")]),
        pm.ModelResponse(parts=[pm.TextPart(content="Sunny.")]),
    ])  # fmt: skip

    async def lookup_weather() -> str:
        return "sunny"

    agent = pydantic_ai.Agent(FunctionModel(lambda messages, info: next(answers)), tools=[pydantic_ai.Tool(lookup_weather, defer_loading=True)])
    recorded: list[Any] = list(asyncio.run(agent.run("Weather?")).all_messages())
    drawn: list[Any] = with_searches(pm, [recorded[0], recorded[3]], {"lookup_weather"})
    assert [type(p).__name__ for m in drawn for p in m.parts] == [type(p).__name__ for m in recorded[:4] for p in m.parts]
    assert drawn[2].parts[0].content == recorded[2].parts[0].content == {"discovered_tools": [{"name": "lookup_weather"}]}
    assert drawn[1].parts[0].args == recorded[1].parts[0].args


def test_clear_tool_results_in_the_agent_loop_keeps_the_search_rounds_out_of_the_output() -> None:
    from compaction_suite.adapters import pydantic_ai

    messages = history()
    target = pydantic_ai.clear_tool_results(settings(), max_tokens=100, keep_pairs=1, in_agent=True, tool_search=True)
    out = asyncio.run(target.compact(messages, iteration=1))
    assert [m["role"] for m in out] == [m["role"] for m in messages]  # no search round, every message kept
    assert [m.get("tool_call_id") for m in out if m["role"] == "tool"] == ["w0", "w1", "w2", "c0", "c1"]
    assert out[-2]["content"] == messages[-2]["content"] and out[-1]["content"] == "Fixed."  # the newest pair and the answer
    assert all(m["content"] != messages[3]["content"] for m in out if m.get("tool_call_id") == "w0")  # an old result cleared


def test_tool_search_defers_only_tools_the_turn_does_not_call() -> None:
    from compaction_suite.adapters._pydantic_ai_loop import deferred_names, last_turn

    messages = history()
    start = last_turn(messages)
    assert start is not None and deferred_names(messages[:start], messages[start:]) == ["lookup_weather"]
    turn_also = [*messages, user("Again."), asks(call("w9", "lookup_weather", {})), result("w9", "rain"), reply("Rain.")]
    again = last_turn(turn_also)
    assert again is not None and deferred_names(turn_also[:again], turn_also[again:]) == ["read_file"]


def test_in_agent_needs_grouped_results() -> None:
    from compaction_suite.adapters import pydantic_ai

    with pytest.raises(ValueError, match="grouped"):
        pydantic_ai.sliding_window(settings(), in_agent=True, tool_results="separate")


def test_a_history_ending_in_results_is_compacted_at_the_request_after_them() -> None:
    """The run is read at the model request after the history's end, where the capability compacts."""
    from compaction_suite.adapters import pydantic_ai

    messages = history()[:-1]  # ends in the second round's result
    target = pydantic_ai.clear_tool_results(settings(), max_tokens=100, keep_pairs=1, in_agent=True, tool_search=True)
    out = asyncio.run(target.compact(messages, iteration=1))
    assert [m["role"] for m in out] == [m["role"] for m in messages]
    assert out[-1]["content"] == messages[-1]["content"] and out[-3]["content"] != messages[-3]["content"]
    opening = messages[:-4]  # ends in the turn's user message: compacted before the turn's first request
    assert [m["role"] for m in asyncio.run(target.compact(opening, iteration=1))] == [m["role"] for m in opening]


@pytest.mark.parametrize("end", [None, -1, -5])
def test_a_history_the_capability_leaves_alone_comes_back_as_it_was(end: int | None) -> None:
    """Below the trigger the run's own messages (the prompt, the scripted answers, the tools' returns) go back
    as the turn's messages, and two leading system prompts stay two."""
    from compaction_suite.adapters import pydantic_ai

    messages = [{"role": "system", "content": "Be brief."}, *history()[:end]]
    target = pydantic_ai.clear_tool_results(settings(), max_tokens=100_000, keep_pairs=1, in_agent=True, tool_search=True)
    assert asyncio.run(target.compact(messages, iteration=1)) == messages
    first = [*messages[:3], reply("Hi.")]  # the turn is the first: the system prompts are the agent's own
    assert asyncio.run(target.compact(first, iteration=1)) == first


def test_a_turn_holding_an_empty_answer_is_no_run_of_the_loop() -> None:
    """pydantic-ai answers a response with neither text nor calls with a retry prompt ("Please return text."),
    a request the history does not hold: such a turn is not one its loop records, and comes back unchanged."""
    from compaction_suite.adapters import pydantic_ai
    from compaction_suite.adapters._pydantic_ai_loop import recorded

    messages = history()
    empty = {"role": "assistant", "content": ""}
    turn = [*messages[:-1], empty, reply("Fixed.")]
    assert not recorded(turn, turn[-8:]) and recorded(messages, messages[-6:])
    target = pydantic_ai.clear_tool_results(settings(), max_tokens=100, keep_pairs=1, in_agent=True)
    assert asyncio.run(target.compact(turn[:-1], iteration=1)) == turn[:-1]


def test_a_harness_compacting_only_the_request_is_judged_on_what_the_model_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    """Harness releases before `HISTORY_WRITTEN_FROM` (0.54.0) set only ``request_context.messages``; pydantic-ai
    from 2.62 (the one installed here) no longer writes that list back into the run's history, so the history
    after the run is uncompacted and the loop is judged on what the capability handed the model (`as_sent`).
    The capability here is the installed ``ClearToolResults`` run on a copy of the run's history, as 0.53.0 ran."""
    import dataclasses

    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai_harness import compaction

    from compaction_suite.adapters import pydantic_ai

    @dataclasses.dataclass
    class RequestOnly(AbstractCapability[Any]):
        inner: Any = None

        async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
            return await self.inner.before_model_request(dataclasses.replace(ctx, messages=list(ctx.messages)), request_context)

    def request_only(**keywords: Any) -> Any:
        return RequestOnly(inner=compaction.ClearToolResults(**keywords))

    monkeypatch.setattr(pydantic_ai, "_harness_compaction", lambda: SimpleNamespace(ClearToolResults=request_only))
    # ending in the second round's result (compacted at the request after it), and in the run's answer (the
    # request before it, then the answer)
    for messages in (history()[:-1], history()):
        for harness, cleared in (((0, 53), True), ((0, 62), False)):
            monkeypatch.setattr(pydantic_ai, "release", lambda _name, harness=harness: harness)
            target = pydantic_ai.clear_tool_results(settings(), max_tokens=100, keep_pairs=1, in_agent=True)
            out = asyncio.run(target.compact(messages, iteration=1))
            assert [m["role"] for m in out] == [m["role"] for m in messages]
            assert (out[3]["content"] != messages[3]["content"]) is cleared  # the oldest result, cleared in the request only
            assert out[-1] == messages[-1]
