"""ANTH-3 on Strands' managers, shown in Strands' own loop (issue 21, point 4: labels from the loop).

The matrix reports ANTH-3 ``final-turn-without-thinking`` (rejected) on Strands' conversation managers:
a reduction inside a tool loop whose turn opened with a thinking block leaves a request whose open turn
starts with a ``tool_use``, which the Messages API refuses while thinking is on ("a final `assistant`
message must start with a thinking block", SPEC ANTH-3). This file shows it with Strands' ``Agent``: a
scripted model (a TEST DOUBLE) opens each turn with a thinking block and then calls a tool once per
round for six rounds, as a model with extended thinking and no interleaved thinking does; every
reduction Strands makes on its way is recorded with the history it started from, the model is shown to
be sent what the reduction left, and the suite's ANTH-3 check judges that request.
"""

from __future__ import annotations

import copy
import json

import pytest
from test_adapter_format_loops import INSTRUCTIONS, _to_anthropic, read_file

from compaction_suite.conformance.formats import anthropic as anthropic_format

pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")

ROUNDS_PER_TURN = 6
"""Tool rounds in each turn: longer than the windows below, so a reduction must cut into the turn."""
OVERFLOW_AT = 9
"""The scripted model reports a context overflow for a history of more messages than this."""


def text_events(text: str, stop: str) -> list[dict]:
    """The stream events of a Strands model answering one text block and stopping for ``stop``."""
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {}}},
        {"contentBlockDelta": {"delta": {"text": text}}},
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": stop}},
    ]


def _long_turn_model(*, overflow_at: int | None = None, context_window_limit: int | None = None):
    """A TEST DOUBLE of a Strands ``Model`` streaming the events Strands' providers emit: a turn opens
    with a thinking block (text and signature) and one ``toolUse``; each later round of the turn is one
    ``toolUse`` without thinking; after ``ROUNDS_PER_TURN`` calls, a text answer. A request without tools
    is a summary request. With ``overflow_at``, a longer history raises Strands'
    ``ContextWindowOverflowException`` (what ``AnthropicModel`` raises for "prompt is too long")."""
    from strands.models.model import Model
    from strands.types.exceptions import ContextWindowOverflowException

    class LongTurnModel(Model):
        def __init__(self) -> None:
            self.requests: list[list[dict]] = []
            self.in_turn = 0
            self.calls = 0

        def update_config(self, **config):
            pass

        def get_config(self):
            return {"context_window_limit": context_window_limit} if context_window_limit else {}

        def structured_output(self, *args, **kwargs):
            raise NotImplementedError("not used by the loop test")

        async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
            if not tool_specs:
                for event in text_events(f"summary of {len(messages)} messages", "end_turn"):
                    yield event
                return
            if overflow_at is not None and len(messages) > overflow_at:
                raise ContextWindowOverflowException("prompt is too long: 210000 tokens > 200000 maximum")
            self.requests.append(copy.deepcopy(messages))
            if not any("toolResult" in block for block in messages[-1]["content"]):
                self.in_turn = 0  # a new user prompt opens a turn
            if self.in_turn >= ROUNDS_PER_TURN:
                for event in text_events("done", "end_turn"):
                    yield event
                return
            yield {"messageStart": {"role": "assistant"}}
            if self.in_turn == 0:
                yield {"contentBlockStart": {"start": {}}}
                yield {"contentBlockDelta": {"delta": {"reasoningContent": {"text": "Read the files one by one."}}}}
                yield {"contentBlockDelta": {"delta": {"reasoningContent": {"signature": f"c2lnbmF0dXJl{self.calls:04d}"}}}}
                yield {"contentBlockStop": {}}
            self.in_turn += 1
            self.calls += 1
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": f"tooluse_{self.calls}", "name": "read_file"}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps({"path": f"f{self.calls}.py"})}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
            prompt = len(json.dumps(messages, default=str)) // 4
            yield {
                "metadata": {"usage": {"inputTokens": prompt, "outputTokens": 5, "totalTokens": prompt + 5}, "metrics": {"latencyMs": 0}}
            }

    return LongTurnModel()


def _sent(messages: list[dict]) -> list[dict]:
    """Role and content of each message: what a request holds (newer releases also keep a ``tracking_id``)."""
    return [{"role": m["role"], "content": m["content"]} for m in messages]


def _run(manager, model, *, hook: str) -> list[tuple[list[dict], list[dict]]]:
    """Two turns of ``Agent`` with ``manager``; every call of its ``hook`` (``reduce_context`` or
    ``apply_management``) recorded as (history before, history after)."""
    from strands import Agent, tool

    seen: list[tuple[list[dict], list[dict]]] = []
    method = getattr(manager, hook)

    def recording(agent, *args, **kwargs):
        before = copy.deepcopy(agent.messages)
        result = method(agent, *args, **kwargs)
        if agent.messages != before:
            seen.append((before, copy.deepcopy(agent.messages)))
        return result

    setattr(manager, hook, recording)
    agent = Agent(model=model, system_prompt=INSTRUCTIONS, tools=[tool(read_file)], conversation_manager=manager, callback_handler=None)
    for turn in range(2):
        agent(f"turn {turn}: read the files")
    return seen


def _sliding(**options):
    from strands.agent.conversation_manager import SlidingWindowConversationManager

    return SlidingWindowConversationManager(window_size=4, **options)


def _summarizing(**options):
    from strands.agent.conversation_manager import SummarizingConversationManager

    return SummarizingConversationManager(preserve_recent_messages=2, **options)


def _proactive_summarizing():
    import inspect

    from strands.agent.conversation_manager import SummarizingConversationManager

    if "proactive_compression" not in inspect.signature(SummarizingConversationManager.__init__).parameters:
        pytest.skip("proactive_compression arrived in Strands 1.40")
    return _summarizing(proactive_compression={"compression_threshold": 0.5})


def _per_turn_sliding():
    import inspect

    from strands.agent.conversation_manager import SlidingWindowConversationManager

    if "per_turn" not in inspect.signature(SlidingWindowConversationManager.__init__).parameters:
        pytest.skip("this Strands release's sliding window has no per_turn")
    return _sliding(per_turn=True)


CASES = {
    "sliding_window, reactive": (lambda: _sliding(), {"overflow_at": OVERFLOW_AT}, "reduce_context"),
    "sliding_window, per_turn": (_per_turn_sliding, {}, "apply_management"),
    "summarizing, reactive": (lambda: _summarizing(), {"overflow_at": OVERFLOW_AT}, "reduce_context"),
    "summarizing, proactive": (_proactive_summarizing, {"context_window_limit": 400}, "reduce_context"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_reduction_inside_a_thinking_turn_sends_a_turn_without_its_thinking(case):
    """In Strands' loop the manager cuts the open turn's first assistant message, the one holding the
    thinking block, and the model is then sent the rest of the turn: a request the API refuses (ANTH-3)."""
    build, model_options, hook = CASES[case]
    manager = build()
    model = _long_turn_model(**model_options)
    seen = _run(manager, model, hook=hook)
    refused = []
    for before, after in seen:
        request = {"system": INSTRUCTIONS, "messages": _to_anthropic(before)}
        assert anthropic_format.invalid(request) is None, before  # the history Strands kept was valid
        violation = anthropic_format.check_final_turn_opens_with_thinking(request, _to_anthropic(after))
        if violation is not None:
            assert _sent(after) in [_sent(r) for r in model.requests], "the model was not sent what the reduction left"
            refused.append(violation)
    assert refused, f"no reduction in {len(seen)} cut into a thinking turn"
    assert {v.reason_id for v in refused} == {"final-turn-without-thinking"}
