"""Microsoft Agent Framework's final call past its iteration budget, as ``agent_loop(iteration_limit=True)`` drives it.

``function_invocation_configuration["max_iterations"]`` (AF's documented budget of model round-trips) spent, the
function-invocation loop makes one more call with ``tool_choice="none"`` ("Maximum iterations reached (%d).
Requesting final response without tools."), its own code path, compacting before it and reconciling the summaries it
writes. The test shows, at the installed release, that ``agent_loop(iteration_limit=True)`` reaches that call with the
whole history, and that its output is what that call sent.
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from compaction_suite.adapters.agent_framework import agent_loop
from compaction_suite.conformance.settings import Settings, connected
from compaction_suite.conformance.summarizer_server import SummarizerServer

pytest.importorskip("agent_framework", reason="Agent Framework is not installed (pip install -e '.[agent-framework]')")

from test_agent_framework_paths import LOOP_ROUNDS, full_history, summaries


def test_agent_loop_iteration_limit_ends_on_the_final_no_tools_call(caplog, monkeypatch):
    """The loop spends its budget on the replayed rounds and logs its final call; that call is sent with tool_choice
    'none', holds the summary the strategy obtained, and is what the adapter returns."""
    from compaction_suite.adapters import agent_framework as adapter_module

    choices: list[object] = []
    scripted = adapter_module._scripted_client

    def recording(af, replies, sent):  # the adapter's scripted model, each call's tool_choice recorded
        client = scripted(af, replies, sent)
        inner = client._inner_get_response

        def answer(*, messages, stream, options, **kwargs):
            choices.append((options or {}).get("tool_choice"))
            return inner(messages=messages, stream=stream, options=options, **kwargs)

        client._inner_get_response = answer
        return client

    monkeypatch.setattr(adapter_module, "_scripted_client", recording)
    with caplog.at_level(logging.INFO, logger="agent_framework"), SummarizerServer() as server:
        adapter = agent_loop(connected(Settings(), server.base_url), strategy="summarization", rounds=LOOP_ROUNDS, iteration_limit=True)
        out = asyncio.run(adapter.compact(full_history(), iteration=1))
        answers = [e.answer for e in server.exchanges if e.answer]
    assert any(f"Maximum iterations reached ({LOOP_ROUNDS})" in r.getMessage() for r in caplog.records), [r.getMessage() for r in caplog.records]
    assert summaries(out, answers), out
    assert [m for m in out if m.get("role") == "tool"] == [m for m in full_history() if m.get("role") == "tool"][-LOOP_ROUNDS:]
    assert "+iteration_limit" in repr(adapter)
    assert len(choices) == LOOP_ROUNDS + 1 and choices[-1] == "none" and "none" not in choices[:-1], choices
