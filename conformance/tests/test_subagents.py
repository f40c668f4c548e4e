"""STORE-33: an agent and the sub-agent it delegates to in one run each archive only their own messages.

Applicable to a target declaring ``capabilities["subagents"] = "delegates"`` (its ``delegated(history,
subagent_history)``, `conformance.subagents`) and ``capabilities["offloads"]`` (its ``read_offload``): the
framework's loop compacts the agent's history and, in the same run, the sub-agent's, each grown to where
the target summarizes; every archive a summary names is read back after the run.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given

from compaction_suite.conformance import subagents
from compaction_suite.conformance.assertions import require
from compaction_suite.conformance.oracle import SYSTEM_ROLES

from .common import clause, summarizing
from .test_offloads import FEW, plain

ANSWER = "Worker thread: the task is done and everything found is above."


def tagged(history: list[dict[str, Any]], tag: str) -> list[dict[str, Any]]:
    """``history`` with every text (a string content or a text part) starting with ``tag``, so that no text
    of one agent's history is one of the other's (the drawn histories share a vocabulary)."""
    out = copy.deepcopy(history)
    for message in out:
        content = message.get("content")
        if isinstance(content, str) and content:
            message["content"] = f"{tag} {content}"
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and part.get("type") == "text" and part.get("text"):
                part["text"] = f"{tag} {part['text']}"
    return out


def as_task(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``history`` as a sub-agent's run of one task: its first user message the task, then its tool rounds
    (each assistant message with calls and their results) in order, ending in an answer without calls
    (the sub-agent's report); no system message (the sub-agent has its own), no other user turn and no
    answer before the last (either would end the sub-agent's run there)."""
    rest = [m for m in history if m.get("role") not in SYSTEM_ROLES]
    first = next((i for i, m in enumerate(rest) if m.get("role") == "user"), len(rest))
    rounds = [m for m in rest[first + 1 :] if m.get("role") == "tool" or (m.get("role") == "assistant" and m.get("tool_calls"))]
    return [*rest[first : first + 1], *rounds, {"role": "assistant", "content": ANSWER}]


def to_trigger(suite: Any, task: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``task`` with its tool rounds repeated (each copy's call ids its own) until the history is a quarter
    past the declared trigger, so that the sub-agent's own loop reaches it inside its run; as it is when no
    trigger is declared or it has no tool round."""
    trigger = suite.capabilities.trigger
    rounds = task[1:-1]
    if trigger is None or not rounds:
        return task
    out, copy_number = list(task[:-1]), 0
    while trigger.size(suite.format, [*out, task[-1]], system=False) <= trigger.limit * 5 // 4 and copy_number < 50:
        copy_number += 1
        out += [_renamed(m, f"_again{copy_number}") for m in rounds]
    return [*out, task[-1]]


def _renamed(message: dict[str, Any], suffix: str) -> dict[str, Any]:
    """``message`` with its calls' ids, or the id it answers, ending in ``suffix``."""
    out = copy.deepcopy(message)
    for call in out.get("tool_calls") or []:
        call["id"] = f"{call['id']}{suffix}"
    if out.get("role") == "tool":
        out["tool_call_id"] = f"{out['tool_call_id']}{suffix}"
    return out


@clause("STORE-33")
@FEW
@given(
    history=plain(min_rounds=8, max_rounds=12, multimodal=False, in_flight=False, long_outputs=False, shapes=()),
    worker=plain(min_rounds=8, max_rounds=12, multimodal=False, in_flight=False, long_outputs=False, shapes=()),
)
def test_each_agents_archive_is_its_own(suite, history, worker):
    """The archive the agent's summary names holds none of the sub-agent's messages and the sub-agent's
    none of the agent's, the task and the answer handed between them aside (deepagents#5470: the
    summarization named its file after the run config's thread_id, which the sub-agent's run inherits,
    so both appended to one file and each summary named an archive holding the other's history)."""
    if suite.calls_summarizer:
        history = summarizing(suite, history)
    history, worker = tagged(history, "Main thread:"), tagged(to_trigger(suite, as_task(worker)), "Worker thread:")
    suite.reset_server()
    subject = suite.new(max_context_tokens=1)
    got = subagents.delegated(subject.compactor, copy.deepcopy(history), copy.deepcopy(worker))
    if got is not None:
        agent_out, worker_out = got
        require(subagents.mixed(history, worker, agent_out, worker_out, subject.compactor.read_offload, suite.capabilities.offloads), history, agent_out)
