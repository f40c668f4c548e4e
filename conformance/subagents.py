"""A sub-agent compacting inside its parent's run, and the archives each names (SPEC Part A, STORE-33).

A target declaring ``capabilities["subagents"] = "delegates"`` offers ``delegated(history,
subagent_history)``: its framework's agent loop compacting ``history`` that, in the same run, delegates
to a sub-agent whose loop runs ``subagent_history`` (its first user message the task the parent hands
over, its last assistant message the answer handed back), each compacting as its loop does. It returns
``{"agent": ..., "subagent": ...}``, what each agent's model was sent last, or None when the run never
reached the sub-agent. Seed 004 scopes a compaction's state to its branch ("CompactionStateData |
Branch-scoped persistent middleware state") and leaves the source unchanged when another branch is made
from it: an archive one agent's summary names holds that agent's messages, never the other's.

Chat-completions only, as the other offload clauses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .judges import alnum
from .offloads import Reader, archived, decoded, holds, parts, read
from .violation import Violation

HOOK = "delegated"
"""The compactor's member a target declaring ``subagents: delegates`` offers."""
SIDES = ("agent", "subagent")
LEAST = 24
"""The fewest letters and digits a part must have to be looked for in another agent's archive, so that
a short common text ("ok") is never taken for the other agent's message."""


class DelegatedHookError(ValueError):
    """A ``delegated()`` answer the suite cannot read (a contract error, not a verdict)."""


def delegated(compactor: Any, history: list[dict], subagent_history: list[dict]) -> tuple[list[Any], list[Any]] | None:
    """(what the agent's model was sent last, what the sub-agent's was), or None when the run never
    reached the sub-agent. Raises `DelegatedHookError` for anything but a mapping of `SIDES` to lists."""
    answer = getattr(compactor, HOOK)(history, subagent_history)
    if answer is None:
        return None
    if not isinstance(answer, Mapping) or not all(isinstance(answer.get(side), list) for side in SIDES):
        raise DelegatedHookError(f"{HOOK}() returned {answer!r:.200}; expected None or a mapping of {' and '.join(SIDES)} to lists")
    return list(answer["agent"]), list(answer["subagent"])


def handed_over(subagent_history: Sequence[Any]) -> list[Any]:
    """The sub-agent's messages both agents hold: its task (its first user message, which the parent's
    call carries) and its answer (its last assistant message, which the parent is handed back)."""
    users = [m for m in subagent_history if isinstance(m, dict) and m.get("role") == "user"]
    answers = [m for m in subagent_history if isinstance(m, dict) and m.get("role") == "assistant"]
    return [*users[:1], *answers[-1:]]


def own_parts(messages: Sequence[Any], other: Sequence[Any], skip: Sequence[Any] = ()) -> list[tuple[int, str, str]]:
    """(index, kind, text) for each text or call's arguments of ``messages`` (those in ``skip`` aside) of at
    least `LEAST` letters and digits that no message of ``other`` holds."""
    theirs = [alnum(p) for m in other if isinstance(m, dict) for kind, p in parts(m) if kind != "media"]
    found: list[tuple[int, str, str]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message in skip:
            continue
        for kind, part in parts(message):
            said = alnum(part) if kind != "media" else ""
            if len(said) >= LEAST and not any(said in t for t in theirs):
                found.append((i, kind, part))
    return found


def foreign_in_archive(own: Sequence[Any], out: Sequence[Any], other: Sequence[Any], reader: Reader, prefixes: Sequence[str], whose: str, shared: Sequence[Any] = ()) -> Violation | None:
    """STORE-33 for one side: the paths a message ``out`` holds, written by the compaction and standing for
    removed ones (`offloads.archived`), hold no part of ``other`` (the other agent's messages, ``shared``
    aside) that ``own`` does not hold too."""
    paths = archived(own, out, prefixes)
    if not paths:
        return None
    stored = "".join(decoded(got) for p in paths if (got := read(reader, p)) is not None)
    for i, kind, part in own_parts(other, own, shared):
        if holds(stored, part):
            return Violation(
                "archive-holds-another-agent",
                f"the {whose}'s summary names {', '.join(map(repr, paths))}, which hold{'s' if len(paths) == 1 else ''} the {kind} of the other agent's message {i} ({len(part)} characters starting {part[:40]!r}), a message the {whose} never had",
            )
    return None


def mixed(history: list[dict], subagent_history: list[dict], agent_out: list[Any], subagent_out: list[Any], reader: Reader, prefixes: Sequence[str]) -> Violation | None:
    """STORE-33: neither agent's archive holds the other's messages (the task and the answer handed
    between them aside, `handed_over`)."""
    shared = handed_over(subagent_history)
    return foreign_in_archive([*history, *shared], agent_out, subagent_history, reader, prefixes, "agent", shared) or foreign_in_archive(
        subagent_history, subagent_out, history, reader, prefixes, "sub-agent"
    )
