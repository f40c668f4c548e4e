"""Agent Framework's native shapes: a Responses history rebuilt item by item into its messages, with
hosted tool calls beside reasoning (SPEC Part A, Declarations: ``responses_items``; RESP-3), and
messages its users build without ids, which AF names as it re-annotates a growing list (CORE-30).

The rebuilt history is what AF's Responses hosting makes of a conversation's items
(``_item_to_message``: one message per item); the strategies run on it through the adapter's
``history="responses"`` option. What each test shows of AF is at the installed release; the matrix's
``--bugs`` runs put each report at its reported and fixing release (``adapters/reported_bugs.json``:
agent-framework#6907, #6299, #7212).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compaction_suite.conformance import formats, judges, responses_histories
from compaction_suite.conformance.capabilities import CapabilityError, declared
from compaction_suite.conformance.formats import responses
from compaction_suite.conformance.summarizer_apis import responses_messages

CHAT = formats.get("chat-completions")
RESPONSES = formats.get("responses")


@pytest.fixture
def rebuilt() -> Iterator[None]:
    responses_histories.draw_rebuilt_items(True)
    try:
        yield
    finally:
        responses_histories.draw_rebuilt_items(False)


def reasoning(n: str) -> dict[str, Any]:
    return {"type": "reasoning", "id": f"rs_{n}", "summary": [{"type": "summary_text", "text": "Look it up."}], "encrypted_content": f"gAAAAA{n}"}


def mcp(n: str) -> dict[str, Any]:
    return {"type": "mcp_call", "id": f"mcp_{n}", "server_label": "docs", "name": "search", "arguments": json.dumps({"q": n}), "output": f"found {n}", "status": "completed"}


def said(text: str, role: str = "assistant") -> dict[str, Any]:
    part = {"type": "output_text", "text": text, "annotations": []} if role == "assistant" else {"type": "input_text", "text": text}
    return {"type": "message", "role": role, "content": [part]}


# --- the histories and the rules (no framework needed)


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_rebuilt_histories_hold_hosted_calls_beside_reasoning(data):
    """Each drawn rebuilt history is one the API accepts (RESP-6, RESP-1, RESP-3 hold on itself), holds
    no compaction item or custom tool call, and carries an item id where AF keeps one (a hosted call's
    id is its call id there) and none where it keeps none (a message, a function or shell call)."""
    responses_histories.draw_rebuilt_items(True)
    try:
        items = data.draw(responses_histories.histories(min_rounds=4, max_rounds=10, reasoning=True))
    finally:
        responses_histories.draw_rebuilt_items(False)
    assert responses.invalid(items) is None
    assert responses.check_outputs_have_calls(items) is None
    assert responses.check_reasoning_precedes(items, items) is None
    kinds = [responses.kind(i) for i in items]
    assert "compaction" not in kinds and "custom_tool_call" not in kinds
    assert not any("id" in i for i in items if responses.kind(i) in ("message", "function_call", "shell_call"))
    assert all(i["id"] for i in items if responses.kind(i) in ("mcp_call", "code_interpreter_call", "image_generation_call"))
    hosted = [n for n, i in enumerate(items) if responses.kind(i) in responses_histories.HOSTED_KINDS]
    assert all(responses.kind(items[n - 1]) == "reasoning" for n in hosted)  # a reasoning model reasons before each one


def test_a_hosted_call_in_a_parallel_round_follows_its_own_reasoning(rebuilt):
    """The server runs a hosted call and samples the model again, so a reasoning model reasons before
    every hosted call, the second of a round too (agent-framework#6907's shape: RESP-3)."""
    seen: list[int] = []

    @settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck), database=None)
    @given(items=responses_histories.histories(min_rounds=4, max_rounds=10, reasoning=True))
    def draw(items):
        kinds = [responses.kind(i) for i in items]
        seen.extend(n for n in range(2, len(kinds)) if kinds[n] in responses_histories.HOSTED_KINDS and kinds[n - 2] == "function_call")
        assert all(kinds[n - 1] == "reasoning" for n in range(len(kinds)) if kinds[n] in responses_histories.HOSTED_KINDS)

    draw()
    assert seen, "no hosted call drawn after another call of its round"


def test_rebuilt_histories_draw_every_hosted_kind(rebuilt):
    """Across a few draws each hosted kind appears right after a reasoning item."""
    found: set[str] = set()

    @settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck), database=None)
    @given(items=responses_histories.histories(min_rounds=6, max_rounds=10, reasoning=True))
    def draw(items):
        found.update(responses.kind(b) or "" for a, b in itertools.pairwise(items) if responses.kind(a) == "reasoning")

    draw()
    assert {"mcp_call", "code_interpreter_call", "image_generation_call", "shell_call"} <= found


def test_resp3_names_a_hosted_call_split_from_its_reasoning():
    history = [said("Find the docs.", "user"), reasoning("1"), mcp("1"), said("Found them.")]
    dropped_reasoning = [history[0], history[2], history[3]]
    dropped_call = [history[0], history[1], history[3]]
    assert responses.check_reasoning_precedes(history, dropped_reasoning).reason_id == "hosted-call-without-its-reasoning"
    assert responses.check_reasoning_precedes(history, dropped_call).reason_id == "reasoning-without-its-hosted-call"
    assert responses.check_reasoning_precedes(history, [history[0], history[3]]) is None
    message = {**said("Found them."), "id": "msg_1"}
    assert responses.check_reasoning_precedes([reasoning("2"), message], [message]).reason_id == "item-without-its-reasoning"


def test_resp3_names_the_second_of_two_hosted_calls_kept_without_its_reasoning():
    """The second of two hosted calls in a row, kept without the reasoning between them, is named apart
    from a single call split from its reasoning; the first of them kept alone keeps the general name."""
    history = [said("Find both.", "user"), reasoning("a"), mcp("a"), reasoning("b"), mcp("b"), said("Both found.")]
    second_alone = [history[0], history[4], history[5]]
    first_alone = [history[0], history[2], history[3], history[4], history[5]]
    found = responses.check_reasoning_precedes(history, second_alone)
    assert found.reason_id == "hosted-call-without-its-reasoning-after-a-call", found
    assert "(item 2 (mcp_call mcp_a) before its reasoning)" in found
    assert responses.check_reasoning_precedes(history, first_alone).reason_id == "hosted-call-without-its-reasoning"
    after_a_message = [said("Find it.", "user"), said("Looking."), reasoning("c"), mcp("c")]
    assert responses.check_reasoning_precedes(after_a_message, [after_a_message[0], after_a_message[3]]).reason_id == "hosted-call-without-its-reasoning"


def test_two_equal_messages_without_ids_are_placed_by_position():
    """Messages without ids may repeat; a reasoning item is kept with the one right after it."""
    history = [said("Go on.", "user"), reasoning("1"), said("OK"), said("Go on.", "user"), reasoning("2"), said("OK")]
    assert responses.check_reasoning_precedes(history, history) is None
    assert responses.check_reasoning_precedes(history, history[3:]) is None


def test_the_model_reads_a_hosted_call_and_its_output():
    read = responses_messages({"input": [mcp("1"), {"type": "code_interpreter_call", "id": "ci_1", "code": "print(2)", "outputs": [{"type": "logs", "logs": "2"}]}]})
    assert [m["content"] for m in read] == ['search {"q": "1"}', "found 1", "print(2)", "2"]


def test_responses_items_is_a_declaration():
    found = declared(SimpleNamespace(capabilities={"wire_format": "responses", "responses_items": "rebuilt"}))
    assert found.responses_items == "rebuilt"
    assert {"RESP-4", "RESP-5"} <= set(found.waived())

    with pytest.raises(CapabilityError):
        declared(SimpleNamespace(capabilities={"responses_items": "all"}))


# --- CORE-30 (no framework needed)


def _call(n: int) -> list[dict[str, Any]]:
    call = {"id": f"call_{n}", "type": "function", "function": {"name": "read", "arguments": json.dumps({"path": f"f{n}.py"})}}
    return [{"role": "assistant", "content": None, "tool_calls": [call]}, {"role": "tool", "tool_call_id": call["id"], "content": f"contents of f{n}.py"}]


def tool_loop(rounds: int = 4) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = [{"role": "system", "content": "You fix builds."}, {"role": "user", "content": "Fix the build."}]
    for n in range(rounds):
        history += _call(n)
    return history


def test_core30_passes_a_window_and_flags_a_hole():
    history = tool_loop()
    window = history[:2] + history[-4:]
    assert judges.oldest_tool_rounds_first(CHAT, history, window) is None
    hole = history[:2] + history[2:4] + history[-2:]  # keeps round 0, drops rounds 1 and 2
    found = judges.oldest_tool_rounds_first(CHAT, history, hole)
    assert found is not None and found.reason_id == "newer-tool-round-removed"
    assert "input item 4" in str(found) and "input item 2" in str(found)


def test_core30_judges_only_outputs_that_only_remove():
    history = tool_loop()
    digest = history[:2] + history[2:4] + [{"role": "assistant", "content": "[Tool results: read: ...]"}] + history[-2:]
    assert judges.oldest_tool_rounds_first(CHAT, history, digest) is None  # a digest stands for the rounds: CORE-12/18's
    pinned = [history[0], history[1], *history[-2:]]
    assert judges.oldest_tool_rounds_first(CHAT, history, pinned) is None


def test_core30_reads_responses_items():
    history = [said("Fix it.", "user"), mcp("1"), mcp("2"), mcp("3")]
    assert judges.oldest_tool_rounds_first(RESPONSES, history, [history[0], history[1], history[3]]).reason_id == "newer-tool-round-removed"
    assert judges.oldest_tool_rounds_first(RESPONSES, history, [history[0], history[3]]) is None


# --- Agent Framework itself

af = pytest.importorskip("agent_framework", reason="Agent Framework is not installed (pip install -e '.[agent-framework]')")

from compaction_suite.adapters import _agent_framework_responses as rebuilt_af  # noqa: E402
from compaction_suite.adapters._common import release  # noqa: E402
from compaction_suite.adapters.agent_framework import agent_loop, sliding_window  # noqa: E402

AF = release("agent-framework-core")


def test_a_rebuilt_history_comes_back_as_it_went_in():
    items = [said("Find the docs.", "user"), reasoning("1"), mcp("1"), {"type": "function_call", "call_id": "c1", "name": "read", "arguments": "{}"},
             {"type": "function_call_output", "call_id": "c1", "output": "x"}, said("Done.")]  # fmt: skip
    messages, origin = rebuilt_af.to_agent_framework(af, items)
    assert [m.message_id for m in messages] == [None] * len(items)  # AF's hosting gives its messages no id
    assert [c.type for c in messages[2].contents] == ["mcp_server_tool_call", "mcp_server_tool_result"]
    assert rebuilt_af.from_agent_framework(messages, origin) == items


def test_agent_framework_keeps_a_hosted_call_with_the_reasoning_before_it():
    """From 1.11.0 (agent-framework#6907) a reasoning item and the hosted call after it are one group."""
    if AF < (1, 11, 0):
        pytest.skip(f"agent-framework-core {AF}: reasoning and a hosted call are grouped apart before 1.11.0")
    history = [said("Find the docs.", "user"), reasoning("1"), mcp("1"), said("Found them."), said("Thanks.", "user")]
    out = asyncio.run(sliding_window(None, history="responses", keep_last_groups=3).compact(history, iteration=1))
    assert responses.check_reasoning_precedes(history, out) is None, out


def test_resp3_names_a_hosted_call_after_a_function_call_kept_without_its_reasoning():
    """A hosted call whose reasoning follows a function call of its round, kept without that reasoning,
    is named as after a call (the same grouping defect), not as #6907's hosted call split from its reasoning."""
    call = {"type": "function_call", "call_id": "c1", "name": "read", "arguments": "{}"}
    history = [said("Find both.", "user"), reasoning("a"), call, reasoning("b"), mcp("b"), {"type": "function_call_output", "call_id": "c1", "output": "x"}, said("Both found.")]
    found = responses.check_reasoning_precedes(history, [history[0], history[4], history[6]])
    assert found.reason_id == "hosted-call-without-its-reasoning-after-a-call", found
    assert "(item 2 (function_call c1) before its reasoning)" in found


def test_a_hosted_call_after_a_function_call_loses_its_reasoning_to_the_call_before():
    """What the matrix shows at 1.11.0 beside the back-to-back case (run there, 2026-11-27): the group of a
    function call ends before the next call of its response and takes the reasoning before it (the rule
    that gives a call's trailing reasoning to its group), so the window keeps that hosted call without
    its reasoning. From 1.13.0 the function call's group reaches its outputs after the round (#7212), so
    the reasoning and the hosted call stay inside it; before 1.11.0 the hosted call is no tool call (#6907)."""
    if AF < (1, 11, 0):
        pytest.skip(f"agent-framework-core {AF}: every hosted call is grouped apart from its reasoning here")
    call = {"type": "function_call", "call_id": "c1", "name": "read", "arguments": "{}"}
    history = [said("Find both.", "user"), reasoning("a"), call, reasoning("b"), mcp("b"), {"type": "function_call_output", "call_id": "c1", "output": "x"}, said("Both found."), said("Thanks.", "user")]
    out = asyncio.run(sliding_window(None, history="responses", keep_last_groups=3).compact(history, iteration=1))
    found = responses.check_reasoning_precedes(history, out)
    if AF < (1, 13, 0):
        assert found is not None and found.reason_id == "hosted-call-without-its-reasoning-after-a-call", out
    else:
        assert found is None and out == history[1:], out


def test_back_to_back_hosted_calls_lose_their_reasoning_to_the_call_before():
    """What the matrix shows at 1.11.0 (and 1.23.0): a group that ends with a hosted call (no tool
    message after it) takes the next reasoning item as its own, so of two hosted calls of one response
    the window can keep the second without the reasoning before it."""
    if AF < (1, 11, 0):
        pytest.skip(f"agent-framework-core {AF}: every hosted call is grouped apart from its reasoning here")
    history = [said("Find both.", "user"), reasoning("a"), mcp("a"), reasoning("b"), mcp("b"), said("Both found."), said("Thanks.", "user")]
    out = asyncio.run(sliding_window(None, history="responses", keep_last_groups=3).compact(history, iteration=1))
    found = responses.check_reasoning_precedes(history, out)
    assert found is not None and found.reason_id == "hosted-call-without-its-reasoning-after-a-call", out


def test_agent_loop_sends_the_second_hosted_call_without_its_reasoning():
    """The same in ``Agent(compaction_strategy=SlidingWindowStrategy(...))``'s own loop given the history
    as AF's Responses hosting rebuilds it (``agent_loop(history="responses")``): the model's first call is
    sent the second of two hosted calls without the reasoning before it (1.11.0..1.23.0; before 1.11.0
    each hosted call is grouped apart from its reasoning, #6907's reason). The loop sends copies of the
    messages it is given (1.23.0), which the adapter maps back to their items by their shared contents."""
    history = [said("Find both.", "user"), reasoning("a"), mcp("a"), reasoning("b"), mcp("b"), said("Both found."), said("Thanks.", "user")]
    loop = agent_loop(None, strategy="sliding_window", keep_last_groups=3, history="responses")
    out = asyncio.run(loop.compact(history, iteration=1))
    assert out == [history[4], history[5], history[6]], out
    found = responses.check_reasoning_precedes(history, out)
    expected = "hosted-call-without-its-reasoning-after-a-call" if AF >= (1, 11, 0) else "hosted-call-without-its-reasoning"
    assert found is not None and found.reason_id == expected, found
    assert declared(loop).responses_items == "rebuilt"


def test_agent_loop_without_message_ids_windows_the_newest_rounds():
    """``Agent(compaction_strategy=SlidingWindowStrategy(...))``'s tool loop given id-less messages: from
    1.8.0 (agent-framework#6299) the ids AF assigns as it re-annotates the grown list do not collide, and
    the window keeps the newest rounds; before it an older round stays while newer ones go (CORE-30)."""
    history = tool_loop(6)
    out = asyncio.run(agent_loop(None, strategy="sliding_window", keep_last_groups=3, rounds=4, message_ids=False).compact(history, iteration=1))
    found = judges.oldest_tool_rounds_first(CHAT, history, out)
    if AF < (1, 8, 0):
        assert found is not None and found.reason_id == "newer-tool-round-removed", out
    else:
        assert found is None, found
        stamped = asyncio.run(agent_loop(None, strategy="sliding_window", keep_last_groups=3, rounds=4).compact(history, iteration=1))
        assert out == stamped
