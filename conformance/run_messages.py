"""What a run hands the application to store after it compacted in the run (SPEC Part A, STORE-22).

A target declaring ``capabilities["run_messages"] = "reported"`` offers ``reported_run()``: for the
last ``compact`` call, in the target's wire format, the history its framework's run was given
(``given``), the framework's own history after the run (``after``: pydantic-ai's ``all_messages()``)
and what the framework reports as the run's new messages (``new``: ``new_messages()``), or None when
no run of its loop completed. The run answers the history after ``given`` (its last user turn,
replayed), compacting inside the run as its hook or processor does. An application that stores each
run's new messages after what it already holds (what ``new_messages()`` is for) stores the
conversation only when ``new`` is exactly the part of ``after`` the run added: STORE-22.

The answer may also hold ``counts``: ``{"given": ..., "after": ..., "new": ...}``, the number of
messages of each in the framework's own units (pydantic-ai's ``ModelMessage``: one request holds a
system prompt and a user prompt, or a round's tool results, that the wire format writes as several
messages). Absent, the wire lists' lengths stand for them (`positions`). They tell a run's start the
framework never moved for what compaction removed (``new-messages-start-unmoved``) from one moved by
a wrong amount (``new-messages-lost``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .violation import Violation

HOOK = "reported_run"
"""The compactor's member a target declaring ``run_messages: reported`` offers."""
FIELDS = ("given", "new", "after")
COUNTS = "counts"
"""The answer's optional member: the three lists' lengths in the framework's own message units."""


class RunHookError(ValueError):
    """A ``reported_run()`` answer the suite cannot read (a contract error, not a verdict)."""


def reported(compactor: Any) -> tuple[list[Any], list[Any], list[Any]] | None:
    """(given, new, after) for the last ``compact`` call (`HOOK`), or None when no run completed. Raises
    `RunHookError` for anything but a mapping of `FIELDS` to lists."""
    answer = getattr(compactor, HOOK)()
    if answer is None:
        return None
    if not isinstance(answer, Mapping) or not all(isinstance(answer.get(f), list) for f in FIELDS):
        raise RunHookError(f"{HOOK}() returned {answer!r:.200}; expected None or a mapping of {' and '.join(FIELDS)} to lists")
    return list(answer["given"]), list(answer["new"]), list(answer["after"])


def counts(compactor: Any) -> dict[str, int] | None:
    """The last answer's `COUNTS` (the framework's own message units), or None when it gives none.
    Raises `RunHookError` for one that is not a mapping of `FIELDS` to counts."""
    answer = getattr(compactor, HOOK)()
    found = answer.get(COUNTS) if isinstance(answer, Mapping) else None
    if found is None:
        return None
    if not isinstance(found, Mapping) or not all(isinstance(found.get(f), int) and found[f] >= 0 for f in FIELDS):
        raise RunHookError(f"{HOOK}()[{COUNTS!r}] is {found!r:.200}; expected a mapping of {' and '.join(FIELDS)} to counts")
    return {f: int(found[f]) for f in FIELDS}


def start_unmoved(given: int, new: int, after: int) -> bool:
    """Whether the ``new`` messages reported are the framework's ``after``-message history after the run
    sliced at ``given``, the position the run started at before compaction removed any of its history:
    a run's start recorded as a position and never moved for what compaction removed before it."""
    return new == max(0, after - given)


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return json.dumps(content, sort_keys=True, default=str)


def key(message: Any) -> tuple[str, str, str, str]:
    """What identifies a chat message across a framework's rendering of it: role, the ids of its
    tool calls (or the call it answers) and its text. Field order, an empty ``content`` written as
    ``null`` and the split of a text into parts are representation, not content."""
    if not isinstance(message, dict):
        return ("?", "", "", json.dumps(message, sort_keys=True, default=str))
    calls = ",".join(str(c.get("id")) for c in message.get("tool_calls") or [] if isinstance(c, dict))
    return (str(message.get("role")), calls, str(message.get("tool_call_id") or ""), _text(message.get("content")))


def _said(message: Any) -> str:
    role, calls, answers, text = key(message)
    said = f"{role}" + (f" calling {calls}" if calls else "") + (f" answering {answers}" if answers else "")
    return f"{said}: {text[:60]!r}" if text else said


def _of(messages: Sequence[Any], keys: set[tuple[str, str, str, str]]) -> list[int]:
    return [i for i, m in enumerate(messages) if key(m) in keys]


def split_wrong(history: Sequence[Any], given: Sequence[Any], new: Sequence[Any], after: Sequence[Any], counts: Mapping[str, int] | None = None) -> Violation | None:
    """STORE-22: the framework's history after the run (``after``: pydantic-ai's ``all_messages()``)
    ends in what it reports as the run's new messages (``new``), and only there does it hold messages
    the run added: none of the run's messages it still holds is left out of ``new``, and ``new`` holds
    nothing the run did not add. The run's messages are those of ``history`` after ``given``; one
    whose key a given message shares is not told apart, so not required among ``new``. ``counts``
    (`COUNTS`, else the lists' lengths) names a loss whose slice starts where the run started before
    compaction (`start_unmoved`) ``new-messages-start-unmoved``."""
    said = {key(m) for m in history[len(given) :]}
    run = said - {key(m) for m in given}
    outside = [m for m in new if key(m) not in said]
    if len(new) > len(after) or [key(m) for m in after[len(after) - len(new) :]] != [key(m) for m in new]:
        return Violation(
            "new-messages-not-a-suffix",
            f"the framework's {len(new)} new messages for the run are not the end of its {len(after)}-message history after "
            f"the run, so a store of the history the run was given followed by them is not that history",
        )
    before = after[: len(after) - len(new)]
    left_out = _of(before, run)
    if left_out:
        first = before[left_out[0]]
        n = counts or {"given": len(given), "new": len(new), "after": len(after)}
        if start_unmoved(n["given"], n["new"], n["after"]):
            return Violation(
                "new-messages-start-unmoved",
                f"{len(left_out)} message(s) the run added, still in the framework's {len(after)}-message history after the run, "
                f"are not among the {len(new)} it reports as the run's new messages (the first: {_said(first)}): what it reports "
                f"is its history after the run past its first {n['given']} message(s), as many as the run was given "
                f"({n['after']} after the run, in its own units), though compaction in the run removed messages before "
                f"that position: the run's start was not moved for what compaction removed; an application storing the "
                f"{len(given)} messages the run was given followed by the new messages loses them",
            )
        return Violation(
            "new-messages-lost",
            f"{len(left_out)} message(s) the run added, still in the framework's {len(after)}-message history after the run, "
            f"are not among the {len(new)} it reports as the run's new messages (the first: {_said(first)}); an application "
            f"storing the {len(given)} messages the run was given followed by the new messages loses them",
        )
    if outside:
        return Violation(
            "new-messages-extra",
            f"the framework's new messages for the run hold {len(outside)} message(s) the run did not add (the first: "
            f"{_said(outside[0])}); a store of the history the run was given followed by them holds it twice or holds what no one said",
        )
    return None
