"""pydantic-ai's ``history_processors`` path (``pydantic_ai:history_processor``) and what its run hands
back to store (SPEC STORE-22; pydantic/pydantic-ai#3983), at the installed release: the processor prunes
messages of the run itself, and ``new_messages()`` is still the part of ``all_messages()`` the run added.
The agent model is pydantic-ai's ``FunctionModel`` answering with the history's turn; no network."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from compaction_suite.conformance import run_messages

from message_builders import asks, call, reply, result, user

pytest.importorskip("pydantic_ai")


def history(rounds: int) -> list[dict]:
    """An earlier exchange, then a turn of ``rounds`` tool rounds ending in an answer."""
    turn = [user("Fix the build.")]
    for i in range(rounds):
        turn += [asks(call(f"call_{i}", "read_file", {"path": f"m{i}.py"})), result(f"call_{i}", f"def f{i}(): ...")]
    return [{"role": "system", "content": "You are a coding agent."}, user("Hello"), reply("Hi."), *turn, reply("Fixed.")]


def compacted(messages: list[dict], **options: object) -> tuple[list[dict], dict[str, list[dict]] | None]:
    import openai

    from compaction_suite.adapters import pydantic_ai

    client = openai.AsyncOpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1")
    target = pydantic_ai.history_processor(SimpleNamespace(async_client=client, model="m"), **options)
    out = asyncio.run(target.compact(messages, iteration=1))
    return out, target.reported_run()


def test_the_processor_prunes_messages_of_the_run_and_new_messages_stay_what_the_run_added() -> None:
    messages = history(rounds=4)
    out, report = compacted(messages, max_messages=6, keep_messages=3)
    assert report is not None
    run = messages[3:]  # the turn replayed: its prompt, four rounds, the answer
    assert len(out) < len(run) - 1  # the last request held less than the run had said: the processor pruned it
    assert [run_messages.key(m) for m in report["given"]] == [run_messages.key(m) for m in messages[:3]]
    assert run_messages.split_wrong(messages, report["given"], report["new"], report["after"]) is None
    assert [run_messages.key(m) for m in report["new"]] == [run_messages.key(m) for m in report["after"][-len(report["new"]) :]]


def test_a_history_whose_turn_is_the_first_runs_with_the_system_prompt_as_the_agents() -> None:
    messages = history(rounds=1)[:1] + history(rounds=1)[3:]
    _, report = compacted(messages)
    assert report is not None and report["given"] == []
    assert [m["role"] for m in report["new"][:2]] == ["system", "user"]
    assert run_messages.split_wrong(messages, [], report["new"], report["after"]) is None


def test_a_history_not_ending_in_an_answer_runs_nothing() -> None:
    messages = history(rounds=2)[:-1]
    out, report = compacted(messages)
    assert out == messages and report is None


def test_the_judge_names_what_a_stale_index_leaves_out() -> None:
    messages = history(rounds=3)
    given, run = messages[:3], messages[3:]
    problem = run_messages.split_wrong(messages, given, run[-2:], run)
    assert problem is not None and problem.reason_id == "new-messages-lost"
    assert "6 message(s) the run added" in problem  # the prompt and three rounds
    extra = run_messages.split_wrong(messages, given, [given[-1], *run], [given[-1], *run])
    assert extra is not None and extra.reason_id == "new-messages-extra"


def test_the_judge_names_a_start_never_moved_for_what_compaction_removed() -> None:
    """STORE-22's ``new-messages-start-unmoved``: the reported slice starts at the position the run started
    at before compaction (as many messages as the run was given, in the framework's own units), the index
    pydantic-ai 1.0.7 never moved (pydantic/pydantic-ai#2914); one moved by a wrong amount stays
    ``new-messages-lost`` (#3983's)."""
    messages = history(rounds=3)
    given, run = messages[:3], messages[3:]
    after = [given[-1], *run[-4:]]  # a window kept the last given message and the run's last four
    unmoved = run_messages.split_wrong(messages, given, after[3:], after)
    assert unmoved is not None and unmoved.reason_id == "new-messages-start-unmoved"
    assert "past its first 3 message(s), as many as the run was given" in unmoved
    moved = run_messages.split_wrong(messages, given, after[4:], after)
    assert moved is not None and moved.reason_id == "new-messages-lost"
    counted = run_messages.split_wrong(messages, given, after[4:], after, {"given": 4, "after": 5, "new": 1})
    assert counted is not None and counted.reason_id == "new-messages-start-unmoved"  # in the framework's units
