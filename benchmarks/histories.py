"""Long, valid histories for the speed benchmarks, tiled from a recorded trace.

`build(n)` returns a history of **at least** ``n`` messages: the trace's system
message, then the trace's rounds over and over (copy 0, copy 1, ...), cut at the
first round boundary at or after ``n`` messages. So the result holds ``n`` to
``n + 4`` messages (the longest round of the shipped trace has 5), never a
dangling tool call. Cutting only between rounds is what keeps it valid (SPEC
ROUND-1, HIST-3..5); tool-call ids of copy ``c >= 1`` get the suffix ``_c`` so
they stay unique (stricter than HIST-6 needs: the provider only wants them unique per message). Every message is a fresh dict; strings are shared
between copies, which costs the benchmarks nothing (``len`` of a ``str`` is O(1)).

With ``sources=True`` each tool message also carries ``source_id``, the name of
the tool that produced it, so `compaction_suite.reference.strategies.DropSources` has something
to drop (SPEC STRAT-6: a local annotation key the estimators ignore).

The result is validated with `compaction_suite.reference.rounds.split_rounds` before it is returned.
"""

from __future__ import annotations

import functools
from pathlib import Path

from compaction_suite.benchmarks.traces.format import read_trace
from compaction_suite.message import Message
from compaction_suite.reference.rounds import Round, split_rounds

TRACE = Path(__file__).resolve().parent.parent / "cassettes" / "traces" / "stdlib-explorer-seed4.jsonl"
"""The shipped trace the histories are tiled from: 1092 messages, 1 system message then 478 rounds."""
SIZES = (100, 1_000, 10_000, 100_000)


def build(n: int, *, sources: bool = False, trace: Path = TRACE) -> list[Message]:
    """A valid history of at least ``n`` messages (``n`` to ``n + 4``), starting with one system message."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    system, rounds = _material(str(trace))
    history: list[Message] = [dict(system)]
    copy = 0
    while len(history) < n:
        for round_ in rounds:
            if len(history) >= n:
                break
            history += _renamed(round_, copy, sources)
        copy += 1
    split_rounds(history)  # raises HistoryError if the tiling broke a HIST rule
    return history


def new_rounds(count: int, *, trace: Path = TRACE) -> list[list[Message]]:
    """``count`` agent rounds (an assistant message with tool calls and its results) to
    append to any history from `build`, one after the other: what an agent loop adds
    between two compaction points.

    They are the trace's ``tool_calls`` rounds in order, with ids suffixed ``_x<k>``
    (never used by `build`), so ``build(n) + r[0] + r[1] + ...`` stays valid.
    """
    _, rounds = _material(str(trace))
    calls = [r for r in rounds if r.kind == "tool_calls"]
    return [_renamed(calls[k % len(calls)], f"x{k}", False) for k in range(count)]


@functools.lru_cache(maxsize=4)
def _material(trace: str) -> tuple[Message, tuple[Round, ...]]:
    """The trace's one system message and its other rounds, all complete."""
    _, messages = read_trace(trace)
    rounds = split_rounds(messages)
    if not rounds or rounds[0].kind != "system" or any(r.kind == "system" for r in rounds[1:]):
        raise ValueError(f"{trace}: expected exactly one system message, at the start")
    if not rounds[-1].complete:
        raise ValueError(f"{trace}: the last round has a tool call in flight")
    return rounds[0].messages[0], tuple(rounds[1:])


def _renamed(round_: Round, copy: int | str, sources: bool) -> list[Message]:
    """Fresh dicts for ``round_``'s messages, tool-call ids suffixed unless ``copy == 0``."""
    suffix = "" if copy == 0 else f"_{copy}"
    names: dict[str, str] = {}
    out: list[Message] = []
    for message in round_.messages:
        fresh = dict(message)
        if message.get("tool_calls"):
            fresh["tool_calls"] = [{**call, "id": call["id"] + suffix} for call in message["tool_calls"]]
            names = {call["id"]: call["function"]["name"] for call in message["tool_calls"]}
        if message["role"] == "tool":
            fresh["tool_call_id"] = message["tool_call_id"] + suffix
            if sources:
                fresh["source_id"] = names[message["tool_call_id"]]
        out.append(fresh)
    return out
