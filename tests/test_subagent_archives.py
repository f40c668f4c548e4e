"""The judge of SPEC STORE-33 on hand-made runs, and deepagents' ``delegated`` hook at the installed release
(PR #5470's fix: the agent and its sub-agent each archive to a file of their own)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from compaction_suite.conformance import offloads, subagents

PREFIX = "/archive/"


def _history(tag: str, rounds: int) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = [{"role": "user", "content": f"{tag} look into the failing build of the parser module"}]
    for i in range(rounds):
        call_id = f"call_{tag[:4].lower()}_{i}"
        found.append({"role": "assistant", "content": None, "tool_calls": [{"id": call_id, "type": "function", "function": {"name": "readFile", "arguments": json.dumps({"path": f"src/{tag.lower()}_{i}.py"})}}]})
        found.append({"role": "tool", "tool_call_id": call_id, "content": f"{tag} file {i}: " + "def parse(tokens): return tokens " * 40})
    return [*found, {"role": "assistant", "content": f"{tag} answer: the parser drops the last token of each line"}]


AGENT, WORKER = _history("Mainthread", 4)[:-1], _history("Workerthread", 4)


def _summary(path: str) -> dict[str, Any]:
    return {"role": "user", "content": f"The conversation so far is archived at {path}."}


def _transcript(messages: list[dict[str, Any]]) -> bytes:
    return "\n".join(json.dumps(m) for m in messages).encode()


def test_an_archive_holding_the_other_agents_messages_fails() -> None:
    store = {"/archive/thread.md": _transcript(AGENT[:5] + WORKER[1:5])}
    found = subagents.mixed(AGENT, WORKER, [_summary("/archive/thread.md"), *AGENT[5:]], [_summary("/archive/thread.md"), *WORKER[5:]], store.get, [PREFIX])
    assert found is not None and found.reason_id == "archive-holds-another-agent"
    assert "the agent's summary names '/archive/thread.md'" in str(found)


def test_archives_of_their_own_pass_and_the_handed_over_task_may_be_in_both() -> None:
    store = {"/archive/a.md": _transcript([*AGENT[:5], WORKER[0]]), "/archive/w.md": _transcript(WORKER[:5])}
    found = subagents.mixed(AGENT, WORKER, [_summary("/archive/a.md"), *AGENT[5:]], [_summary("/archive/w.md"), *WORKER[5:]], store.get, [PREFIX])
    assert found is None


def test_a_hook_answer_that_is_not_two_lists_is_a_contract_error() -> None:
    class Wrong:
        def delegated(self, history: Any, subagent_history: Any) -> Any:
            return {"agent": history}

    with pytest.raises(subagents.DelegatedHookError):
        subagents.delegated(Wrong(), AGENT, WORKER)


def test_deepagents_archives_the_agent_and_its_subagent_apart(server: Any) -> None:
    """deepagents' own loop (``create_deep_agent`` with a sub-agent run by its ``task`` tool) at the installed
    release: each summary names an archive of its own agent's history."""
    pytest.importorskip("deepagents")
    from compaction_suite.adapters import _deepagents_offloads, deepagents
    from compaction_suite.conformance.settings import Settings

    compactor = deepagents.summarization(Settings(base_url=server.base_url, model="compaction-suite-summarizer"))
    prefixes = [_deepagents_offloads.HISTORY_PREFIX]
    agent, worker = _history("Mainthread", 14)[:-1], _history("Workerthread", 14)
    got = subagents.delegated(compactor, agent, worker)
    assert got is not None
    agent_out, worker_out = got
    named = [p for out, own in ((agent_out, agent), (worker_out, worker)) for p in offloads.archived(own, out, prefixes)]
    assert len(named) == 2 and named[0] != named[1], named
    assert subagents.mixed(agent, worker, agent_out, worker_out, compactor.read_offload, prefixes) is None
