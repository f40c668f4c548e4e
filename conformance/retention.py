"""What a compaction keeps of the newest messages, against what its configuration says it keeps
(SPEC Part A, CORE-65; the ``keeps`` declaration).

A summarizing compactor configured to keep the newest N messages (LangChain's and deepagents'
``keep=("messages", N)``) or the newest N tokens (``keep=("tokens", N)``, a fraction of a known window)
sends those after its summary as they were. Chat-completions only: messages are counted as the format
holds them, one per tool result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .oracle import SYSTEM_ROLES, same
from .violation import Violation

KINDS = ("messages", "tokens")
TOKEN_MARGIN = 2
"""A token retention is judged on the newest messages that hold at most half the declared tokens by
the suite's count (chars/4): how a framework counts (per-message framing, its tool schemas) is never
why a message is missing (SPEC CORE-65 Decision)."""


class RetentionError(ValueError):
    """A ``keeps`` declaration the suite cannot read (a contract error)."""


def parse(raw: Any) -> tuple[str, int] | None:
    """``{"messages": N}`` or ``{"tokens": N}`` as ``(kind, N)``; None when not declared."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping) or len(raw) != 1:
        raise RetentionError(f"capabilities['keeps'] is {raw!r}; expected {{'messages': N}} or {{'tokens': N}}")
    ((kind, value),) = raw.items()
    if kind not in KINDS or isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RetentionError(f"capabilities['keeps'] is {raw!r}; expected {{'messages': N}} or {{'tokens': N}} with N a positive integer")
    return kind, value


def _others(messages: Sequence[Any]) -> list[Any]:
    return [m for m in messages if not (isinstance(m, dict) and m.get("role") in SYSTEM_ROLES)]


def kept_tail(history: Sequence[Any], out: Sequence[Any]) -> int:
    """How many of the input's newest messages (system messages aside) the output ends with, as they were."""
    before, after = _others(history), _others(out)
    n = 0
    while n < min(len(before), len(after)) and same(before[-1 - n], after[-1 - n]):
        n += 1
    return n


def wanted(history: Sequence[Any], kind: str, value: int, tokens: Any) -> int:
    """How many newest messages a retention of ``value`` ``kind`` must keep: N messages (all there are,
    when fewer; less the results a cut inside a round's results moves past), or the most newest messages holding at most ``value`` / `TOKEN_MARGIN` tokens by
    ``tokens`` (the suite's count of a list of messages)."""
    before = _others(history)
    if kind == "messages":
        return _to_round_edge(before, min(value, len(before)))
    n = 0
    while n < len(before) and tokens(before[len(before) - n - 1 :]) <= value // TOKEN_MARGIN:
        n += 1
    return n


def _to_round_edge(before: Sequence[Any], n: int) -> int:
    """``n`` newest messages, less the tool results at the cut when it falls inside a round's results: a
    boundary may move forward past them rather than split the round (SPEC CORE-65 Decision)."""
    cut = len(before) - n
    while cut < len(before) and isinstance(before[cut], dict) and before[cut].get("role") == "tool":
        cut += 1
    return len(before) - cut


def kept_fewer(history: Sequence[Any], out: Sequence[Any], keeps: tuple[str, int], tokens: Any) -> Violation | None:
    """CORE-65: a compacted output ends with at least the newest messages its declared retention keeps."""
    if same(list(history), list(out)):
        return None
    kind, value = keeps
    need, kept = wanted(history, kind, value, tokens), kept_tail(history, out)
    if kept >= need:
        return None
    said = f"{value} messages" if kind == "messages" else f"{value} tokens ({need} newest message(s) hold at most half of them)"
    return Violation("kept-fewer-than-declared", f"the output ends with {kept} of the input's newest messages as they were, fewer than the {need} its declared retention of {said} keeps")
