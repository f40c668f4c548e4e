"""A clause check's finding: its one-line reason and a stable id naming the defect (SPEC Part A,
"Reason ids").

A `Violation` is a ``str`` (the reason, which every report and assertion prints as before) that
also carries ``reason_id``: a short slug such as ``orphan-tool-result`` that stays the same across
runs and releases for the same defect, whatever ids and indices the reason quotes. The matrix
identifies a finding by (clause, reason id); the JSON report gives every failure one
(``conformance/schema/report.md``).
"""

from __future__ import annotations

import re

SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*(?::[A-Za-z0-9_.-]+)?$")
"""``orphan-tool-result``, or a family and a name after a colon: ``crash:IndexError``,
``bedrock-converse:first-turn-not-user``."""


class Violation(str):
    """The reason a clause does not hold (the string itself) and the id of the defect (``reason_id``)."""

    reason_id: str

    def __new__(cls, reason_id: str, reason: str) -> Violation:
        if not SLUG.match(reason_id):
            raise ValueError(f"reason id {reason_id!r} is not a slug (lowercase words joined by '-', optionally ':' and a name)")
        self = super().__new__(cls, reason)
        self.reason_id = reason_id
        return self

    def __reduce__(self) -> tuple[type[Violation], tuple[str, str]]:
        return (Violation, (self.reason_id, str(self)))


def reason_id(problem: str, fallback: str) -> str:
    """The reason id of ``problem``: its own when it is a `Violation`, else ``fallback``."""
    return problem.reason_id if isinstance(problem, Violation) else fallback


def crash(error: BaseException) -> str:
    """The reason id of an exception escaping ``compact`` (CORE-10): ``crash:IndexError``."""
    return f"crash:{type(error).__name__}"


MESSAGE_CHARS = 300
"""How much of an exception's message a crash's reason quotes (SPEC Part A, "Reason ids")."""


def message(error: BaseException, limit: int = MESSAGE_CHARS) -> str:
    """``error``'s message on one line: its non-blank lines joined by `` | ``, cut at ``limit``
    characters. Not its first line alone: many exceptions open with a generic line and name the
    defect after it (a pydantic ``ValidationError``'s field and rule, an exception group's parts)."""
    text = " | ".join(line.strip() for line in str(error).splitlines() if line.strip()) or "(no message)"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def crashed(error: BaseException) -> Violation:
    """CORE-10's finding for ``error`` escaping ``compact``: its type and message (`message`)."""
    return Violation(crash(error), f"compact raised {type(error).__name__}: {message(error)}")


QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")
IDENTIFIER = re.compile(r"\b(?:call|toolu|fc|rs|msg|ent|item|chatcmpl)[_-][A-Za-z0-9_-]+\b")
RANGE = re.compile(r"\b\d+\.\.\d+\b")
POSITION = re.compile(r"\b(messages?|items?|index|indices|rounds?|turns?|groups?|iterations?|positions?|examples?|tokens?|chars?|characters?)\s+\d+\b", re.IGNORECASE)
"""A number naming a position or a size (``message 3``): normalised. A count that says what went
wrong (``1 in, 0 out``, ``0 results``) is kept: it tells one defect from another."""
SPACES = re.compile(r"\s+")


def first_line(reason: str) -> str:
    """The first line of ``reason`` (what every report shows of it)."""
    return reason.strip().splitlines()[0] if reason.strip() else ""


def normalised(reason: str, *, quoted: bool = False) -> str:
    """``reason``'s first line with ids and positions replaced, and quoted values too unless
    ``quoted`` (they may be what tells two crashes apart: a provider's error message)."""
    line = first_line(reason)
    line = line if quoted else QUOTED.sub("…", line)
    line = IDENTIFIER.sub("ID", line)
    line = RANGE.sub("N..N", line)
    line = POSITION.sub(lambda m: f"{m.group(1)} N", line)
    return SPACES.sub(" ", line).strip()


CRASHES = ("crash:", "error:")
"""The reason-id families that name an exception type (`crash`, and a test's own error)."""
PER_ID = 4
"""How many texts one reason id keeps in one test (`Reasons`): a shrinking Hypothesis run meets the
same defect under many quoted values; a few texts are what a reader (or a bug's expected text) needs."""


class Reasons:
    """Every distinct reason one test failed a clause with, in the order seen (SPEC Part A, "Reason
    ids": a clause failing for several defects in one run reports each, not only the first one
    Hypothesis shrank). Two reasons are the same when their reason ids and first lines, with ids, positions
    and quoted values normalised, agree (a crash's quoted values kept: its id names only the exception
    type, and the provider's message it quotes is what tells one crash from another); each reason
    id keeps at most `PER_ID` texts."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], str] = {}

    def add(self, reason_id_: str, reason: str) -> None:
        """Keep ``reason`` (its first line) under ``reason_id_`` unless the same reason is kept."""
        key = (reason_id_, normalised(reason, quoted=reason_id_.startswith(CRASHES)))
        if key in self._seen or sum(k[0] == reason_id_ for k in self._seen) >= PER_ID:
            return
        self._seen[key] = first_line(reason)

    def items(self) -> list[dict[str, str]]:
        """``[{"reason": first line, "reason_id": id}, ...]`` in the order first seen."""
        return [{"reason": line, "reason_id": rid} for (rid, _), line in self._seen.items()]

    def __len__(self) -> int:
        return len(self._seen)
