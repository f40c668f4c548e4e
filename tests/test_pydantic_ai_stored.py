"""A harness capability's history kept between turns as pydantic-ai documents it ("Storing and loading
messages": ``ModelMessagesTypeAdapter``), ``persisted="model_messages"`` (``adapters/pydantic_ai.py``,
`_json_round_trip`). What comes back is what loads: a history the capability left in a shape pydantic-ai's own
types refuse (a typed part rewritten with a plain value, pydantic/pydantic-ai-harness#380 and #401) cannot be
loaded, and the next turn cannot start. No network."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

pytest.importorskip("pydantic_ai_harness")

from test_pydantic_ai_loop import history, settings


def _round() -> list[Any]:
    from pydantic_ai import messages as pm

    call = pm.ToolSearchCallPart(args={"queries": ["lookup_weather"]}, tool_call_id="s")
    found = pm.ToolSearchReturnPart(content={"discovered_tools": [{"name": "lookup_weather"}]}, tool_call_id="s")
    return [pm.ModelRequest(parts=[pm.UserPromptPart(content="Weather?")]), pm.ModelResponse(parts=[call]), pm.ModelRequest(parts=[found])]


def test_a_history_that_loads_as_stored_comes_back_as_the_same_objects() -> None:
    from pydantic_ai import messages as pm

    from compaction_suite.adapters.pydantic_ai import _json_round_trip

    kept = _round()
    assert _json_round_trip(pm.ModelMessagesTypeAdapter)(kept) is kept


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("rewritten", ["search return blanked", "search call clamped"])
def test_a_typed_part_rewritten_with_a_plain_value_does_not_load(rewritten: str) -> None:
    """What ``dataclasses.replace`` leaves when a capability treats a typed subclass as its base: a search return
    whose content is a placeholder (harness 0.7's ``ClearToolResults``, #380), a search call whose args are a
    clamp marker (harness 0.8's ``ClampOversizedMessages``, #401)."""
    import pydantic
    from pydantic_ai import messages as pm

    from compaction_suite.adapters.pydantic_ai import _json_round_trip

    prompt, response, request = _round()
    if rewritten == "search return blanked":
        request = pm.ModelRequest(parts=[dataclasses.replace(request.parts[0], content="[cleared]")])
    else:
        response = pm.ModelResponse(parts=[dataclasses.replace(response.parts[0], args={"_clamped": "..."})])
    with pytest.raises(pydantic.ValidationError, match="tool-search"):
        _json_round_trip(pm.ModelMessagesTypeAdapter)([prompt, response, request])


@pytest.mark.parametrize("in_agent", [False, True])
def test_the_stored_history_is_the_history_the_capability_left(in_agent: bool) -> None:
    """At the installed release ``ClearToolResults`` leaves the search rounds whole: stored and loaded, the
    output is the one kept in the process."""
    from compaction_suite.adapters import pydantic_ai

    messages = history() if in_agent else history()[:-1]
    common = {"max_tokens": 100, "keep_pairs": 1, "in_agent": in_agent, "tool_search": True}
    kept = asyncio.run(pydantic_ai.clear_tool_results(settings(), **common).compact(messages, iteration=1))
    stored = asyncio.run(pydantic_ai.clear_tool_results(settings(), **common, persisted="model_messages").compact(messages, iteration=1))
    assert stored == kept and stored != messages


def test_an_unknown_store_is_refused() -> None:
    from compaction_suite.adapters import pydantic_ai

    with pytest.raises(ValueError, match="persisted"):
        pydantic_ai.sliding_window(settings(), persisted="sqlite")


def _written_then_fixed(payload: str) -> list[dict]:
    """A first turn writing a file of ``payload`` with a tool, then a turn reading one with another."""
    from message_builders import asks, call, reply, result, user

    out = [{"role": "system", "content": "You are a coding agent."}, user("Write the module.")]
    out += [asks(call("w0", "write_file", {"path": "m.py", "content": payload})), result("w0", "written"), reply("Written.")]
    return [*out, user("Fix the build."), asks(call("r0", "read_file", {"path": "m.py"})), result("r0", "def f(): ...\n")]


def test_a_drawn_search_carries_the_words_of_the_call_it_leads_to() -> None:
    """The search round before a deferred tool's first call queries with the tool's name and the call's words
    (`_pydantic_ai_loop.keywords`), so a long call's search is as long (pydantic/pydantic-ai-harness#411)."""
    from pydantic_ai import messages as pm

    from compaction_suite.adapters._pydantic_ai_loop import every_tool, with_searches
    from compaction_suite.adapters.pydantic_ai import to_pydantic_ai

    messages = _written_then_fixed("x = 1\n" * 10)
    converted, _ = to_pydantic_ai(messages)
    searches = [p for m in with_searches(pm, converted, every_tool(messages)) for p in m.parts if isinstance(p, pm.ToolSearchCallPart)]
    assert [p.args for p in searches] == [{"queries": ["write_file m.py " + "x = 1\n" * 10]}, {"queries": ["read_file m.py"]}]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_clamp_at_the_installed_release_leaves_a_long_search_whole_and_the_history_loads() -> None:
    """``ClampOversizedMessages`` (harness >= 0.10) clamps the long plain call and never the typed search call
    before it, so the history it leaves loads back through ``ModelMessagesTypeAdapter``; at 0.8.0 the search call
    is clamped too and the load raises (#401, the bugs run)."""
    from compaction_suite.adapters import pydantic_ai

    messages = _written_then_fixed("x = 1\n" * 5000)  # 30,000 characters, past 4,000 tokens by chars/4
    out = asyncio.run(pydantic_ai.clamp_oversized(settings(), tool_search=True, persisted="model_messages").compact(messages, iteration=1))
    written = out[2]["tool_calls"][0]["function"]["arguments"]
    assert "_clamped" in written and len(written) < 6000
    assert out[:2] == messages[:2] and out[3:] == messages[3:]
