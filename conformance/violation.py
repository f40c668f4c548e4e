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
