"""CORE-21 on Strands' context manager, shown in Strands' own loop (issue 21, point 4: labels from the loop).

The matrix reports CORE-21 (SHOULD, policy) on Strands' context manager: "[... 2 messages elided ...]"
where more messages are gone. This file shows where it comes from with Strands' ``Agent``: a scripted
model (a TEST DOUBLE) reports a context overflow while the history holds more than ``OVERFLOW_AT``
messages, as a provider does while a request is over its window. Each overflow makes the context
manager's emergency truncation drop the oldest fifth of the messages and write a marker into the
assistant message beside the gap; the next pass drops that message too, marker and all, and writes a
marker counting only its own pass. The request the model is finally sent tells it of two messages
where more were removed, and the suite's CORE-21 check judges that request against the history before
the first overflow.
"""

from __future__ import annotations

import copy
import inspect

import pytest
from test_adapter_format_loops import INSTRUCTIONS, _to_anthropic
from test_strands_open_turn_loop import text_events

from compaction_suite.conformance import formats, judges, placeholders

pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")

OVERFLOW_AT = 5
"""The scripted model reports a context overflow for a history of more messages than this."""
TURNS = 4
"""Plain question-and-answer turns before the overflow: nine messages with the next prompt, two passes over the limit."""


def _overflowing_model():
    """A TEST DOUBLE of a Strands ``Model``: answers each prompt with one text block, and raises
    Strands' ``ContextWindowOverflowException`` (what ``AnthropicModel`` raises for "prompt is too
    long") while it is handed more than ``OVERFLOW_AT`` messages; ``limit`` is None until the test
    turns the window on, so the history can first grow."""
    from strands.models.model import Model
    from strands.types.exceptions import ContextWindowOverflowException

    class OverflowingModel(Model):
        def __init__(self) -> None:
            self.requests: list[list[dict]] = []
            self.limit: int | None = None

        def update_config(self, **config):
            pass

        def get_config(self):
            return {}

        def structured_output(self, *args, **kwargs):
            raise NotImplementedError("not used by the loop test")

        async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
            if self.limit is not None and len(messages) > self.limit:
                raise ContextWindowOverflowException("prompt is too long: 210000 tokens > 200000 maximum")
            self.requests.append(copy.deepcopy(messages))
            for event in text_events(f"answer {len(self.requests)}", "end_turn"):
                yield event

    return OverflowingModel()


def _request(messages: list[dict]) -> dict:
    return {"system": INSTRUCTIONS, "messages": _to_anthropic([{"role": m["role"], "content": m["content"]} for m in messages])}


def test_repeated_emergency_truncation_leaves_a_marker_counting_its_last_pass_only():
    """In Strands' loop two overflows in a row make two truncation passes; the request the model is
    then sent holds one marker, stating the second pass's count, while more messages are gone: a
    CORE-21 finding on what the model was really sent."""
    from strands import Agent

    if "context_manager" not in inspect.signature(Agent.__init__).parameters:
        pytest.skip("Agent(context_manager=...) arrived in Strands 1.55")
    model = _overflowing_model()
    agent = Agent(model=model, system_prompt=INSTRUCTIONS, context_manager={"strategies": ["stale_tool_cleanup"]}, callback_handler=None)
    for turn in range(TURNS):
        agent(f"question {turn}: how do I run the tests?")
    before = _request([*agent.messages, {"role": "user", "content": [{"text": "one more question"}]}])
    model.limit = OVERFLOW_AT
    agent("one more question")
    sent = _request(model.requests[-1])
    stated = [count for m in sent["messages"] for _, count in placeholders.stated_counts("\n".join(judges.strings(m)))]
    assert len(stated) == 1, sent["messages"]  # one marker is left: the earlier pass's marker went with its carrier
    gone = judges.removed(formats.get(formats.ANTHROPIC), before, sent)
    assert stated[0] < len(gone), (stated, len(gone))
    found = judges.count_stated(formats.get(formats.ANTHROPIC), before, sent)
    assert found is not None and found.reason_id == "placeholder-count-wrong"
