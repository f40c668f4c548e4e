"""The harness's ``CompactOnRequest`` (pydantic-ai-harness 0.62.0 on), shown in pydantic-ai's own ``Agent`` loop.

``CompactOnRequest(strategy)`` registers a ``compact_context`` tool; when the model calls it, the capability accepts
the request in ``after_tool_execute`` and runs ``strategy`` (its own trigger bypassed) in the next
``before_model_request``. Here the agent's model is a TEST DOUBLE (pydantic-ai's ``FunctionModel``) whose first
answer is that call, as a model asks when a task begins. The tests show, at the installed release:

* the loop offers the model the tool, and the request after the call is compacted, the call and its return kept;
* ``compact_on_request``'s output is what the model received at that request, less the call and its return (the
  model's ask, which the chat history has no message for), so a CORE verdict on it is a verdict on the loop;
* below 0.62.0 the factory refuses in one line (`CannotDrive`).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from compaction_suite.adapters._common import CannotDrive, release

pytest.importorskip("pydantic_ai_harness", reason="pydantic-ai-harness is not installed (pip install -e '.[pydantic-ai]')")
if release("pydantic-ai-harness") < (0, 62):
    pytest.skip("CompactOnRequest arrived in pydantic-ai-harness 0.62.0", allow_module_level=True)

from compaction_suite.adapters import pydantic_ai as adapter
from compaction_suite.conformance.settings import Settings, connected
from compaction_suite.conformance.summarizer_server import SummarizerServer

KEEP = 4


def history() -> list[dict[str, Any]]:
    """A system prompt, a finished task of three tool rounds, and a new user task the model meets next."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a build assistant."}, {"role": "user", "content": "Fix the build of the payments service."}]
    for n in range(3):
        call = {"id": f"call_{n}", "type": "function", "function": {"name": "read_file", "arguments": f'{{"path": "conf{n}.yaml"}}'}}
        messages += [{"role": "assistant", "content": None, "tool_calls": [call]}, {"role": "tool", "tool_call_id": call["id"], "content": f"contents of conf{n}.yaml"}]
    return [*messages, {"role": "assistant", "content": "The build is fixed."}, {"role": "user", "content": "Now run the tests."}]


def role_of(pm: Any, message: Any) -> list[str]:
    """The chat roles of a pydantic-ai message's parts, the compaction request round left out."""
    from compaction_suite.adapters._pydantic_ai_loop import searched

    if isinstance(message, pm.ModelResponse):
        return [] if all(searched(p) for p in message.parts) else ["assistant"]
    names = {"SystemPromptPart": "system", "UserPromptPart": "user", "CompactionPart": "user", "ToolReturnPart": "tool"}  # a summary: framed user text
    return [names[type(p).__name__] for p in message.parts if not searched(p) and type(p).__name__ in names]


def run_in_loop(strategy: str) -> tuple[list[list[Any]], list[list[str]]]:
    """``Agent(capabilities=[CompactOnRequest(strategy)])`` on the history: what the model received at each request, and
    the tools offered at each."""
    import pydantic_ai
    from pydantic_ai.models.function import FunctionModel

    from compaction_suite.adapters._pydantic_ai_loop import REQUEST_ID

    pm = pytest.importorskip("pydantic_ai.messages")
    compaction = adapter._harness_compaction()
    messages = history()
    before, _ = adapter.to_pydantic_ai(messages[:-1])
    sent: list[list[Any]] = []
    offered: list[list[str]] = []

    def answer(request: list[Any], info: Any) -> Any:
        sent.append(list(request))
        offered.append([t.name for t in info.function_tools])
        if len(sent) == 1:
            return pm.ModelResponse(parts=[pm.ToolCallPart(tool_name="compact_context", args={}, tool_call_id=f"{REQUEST_ID}0")])
        return pm.ModelResponse(parts=[pm.TextPart(content="Running them.")])

    with SummarizerServer() as server:
        model = adapter._offline_model(connected(Settings(), server.base_url).async_client)
        size = {"max_messages": 1, "keep_messages": KEEP}
        wrapped = compaction.SummarizingCompaction(model=model, **size) if strategy == "summarizing" else compaction.SlidingWindowCompaction(**size)
        agent = pydantic_ai.Agent(FunctionModel(answer), capabilities=[compaction.CompactOnRequest(wrapped)])
        asyncio.run(agent.run(messages[-1]["content"], message_history=before))
    return sent, offered


@pytest.mark.parametrize("strategy", ["summarizing", "sliding_window"])
def test_the_request_after_compact_context_is_compacted_in_the_loop(strategy):
    """The model is offered ``compact_context``; the request after its call holds fewer messages than the one before,
    the call and its return among the kept ``KEEP``."""
    pm = pytest.importorskip("pydantic_ai.messages")
    sent, offered = run_in_loop(strategy)
    assert len(sent) == 2 and "compact_context" in offered[0]
    assert len(sent[1]) < len(sent[0]) + 2, (len(sent[0]), len(sent[1]))
    tail = [p for m in sent[1][-KEEP:] for p in m.parts]
    assert any(isinstance(p, pm.ToolCallPart) and p.tool_name == "compact_context" for p in tail)
    assert any(isinstance(p, pm.ToolReturnPart) and p.tool_name == "compact_context" for p in tail)


@pytest.mark.parametrize("strategy", ["summarizing", "sliding_window"])
def test_compact_on_request_returns_what_the_model_received_after_its_ask(strategy):
    """The factory's output, on the same history, has the roles of what the model received at the request after the
    ``compact_context`` call, less that round."""
    pm = pytest.importorskip("pydantic_ai.messages")
    sent, _ = run_in_loop(strategy)
    with SummarizerServer() as server:
        target = adapter.compact_on_request(connected(Settings(), server.base_url), strategy=strategy, keep_messages=KEEP)
        out = asyncio.run(target.compact(history(), iteration=1))
    assert [m["role"] for m in out] == [r for m in sent[1] for r in role_of(pm, m)]
    assert out[-1] == history()[-1]
    assert len(out) < len(history())


def test_compact_on_request_refuses_below_its_release(monkeypatch):
    """Below pydantic-ai-harness 0.62.0 the configuration is a contract error, in one line."""
    monkeypatch.setattr(adapter, "release", lambda distribution: (0, 61, 0))
    with pytest.raises(CannotDrive, match=r"CompactOnRequest arrived in pydantic-ai-harness 0\.62\.0"):
        adapter.compact_on_request(Settings())
