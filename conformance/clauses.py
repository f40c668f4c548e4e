"""The clause index: ``clauses.json`` is the data (validated by ``schema/clauses.schema.json``),
SPEC.md the prose (SPEC Part A, each clause at its ``anchor``).

Everything the code needs to know about a clause (its level, harm, the formats it is checked in,
whether it is judged on every output, the declaration that waives it, its tests and negative
controls) is read from here: no other module lists clause ids.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

PROFILES = ("core", "trigger", "summary", "structured", "failure", "events", "storage", "session")
HARMS = ("rejected", "loss", "crash", "policy")
"""How bad a broken clause is for a user (SPEC Part A, "Harm classes"), worst first."""
JUDGED = ("every-output", "every-call", "in-flight", "test")
"""Where a clause is judged: on every output the suite sees (SPEC Part A, "Every output"), on every
``compact`` call (a crash, the summarizer requests it made), on in-flight histories, or in its
own tests only."""
EXERCISED = ("compaction", "check", "fault")
"""What counts as an example exercising a clause (SPEC Part A, "Exercised"): a compaction during
its test, its check having run (clauses about histories that come back unchanged), or a
summarizer fault that reached the summarizer (SPEC CORE-10, CORE-11: summarizer reach)."""


@dataclass(frozen=True)
class Clause:
    id: str
    profile: str
    level: str
    title: str
    harm: str
    formats: tuple[str, ...] = ("chat-completions",)
    """The wire formats whose targets this clause is checked on (SPEC Part A, "Wire formats")."""
    anchor: str = ""
    """Where SPEC.md states it (``SPEC.md#core-1``)."""
    judged: str = "test"
    exercised: str = "compaction"
    waived_by: tuple[str, ...] = ()
    """Declarations (``key=value``) that make the clause unreachable (SPEC Part A, "Declarations")."""
    tests: tuple[str, ...] = ()
    """The conformance tests marked with it (``file::function``)."""
    controls: tuple[str, ...] = ()
    """The negative controls it must reject (``module:factory``)."""

    @property
    def must(self) -> bool:
        return self.level == "MUST"

    @property
    def exercised_by_check(self) -> bool:
        return self.exercised == "check"


def _data() -> dict[str, Any]:
    return json.loads(resources.files("compaction_suite.conformance").joinpath("clauses.json").read_text("utf-8"))


_TUPLES = ("formats", "waived_by", "tests", "controls")


@cache
def clauses() -> dict[str, Clause]:
    """Every clause by id, in SPEC order."""
    return {c["id"]: Clause(**{**c, **{k: tuple(c[k]) for k in _TUPLES if k in c}}) for c in _data()["clauses"]}


@cache
def harms() -> dict[str, str]:
    """Each harm class and what it means."""
    return dict(_data()["harms"])


def by_harm() -> dict[str, list[Clause]]:
    """The clauses of each harm class, worst class first (the matrix and the reports count by it)."""
    return {harm: [c for c in clauses().values() if c.harm == harm] for harm in HARMS}


def unknown_ids(ids: Iterable[str]) -> str | None:
    """The one-line usage error for ``--clause`` ids the index does not know (case-insensitive),
    None when it knows them all (SPEC Part C: a bad input is said before any long work)."""
    unknown = sorted({i.upper() for i in ids} - set(clauses()))
    return f"unknown clause(s) {', '.join(unknown)}; known: {', '.join(clauses())}" if unknown else None


def harm_of(clause_id: str) -> str | None:
    """The harm class of ``clause_id``, None for an id the index does not know."""
    found = clauses().get(clause_id)
    return found.harm if found else None


def in_format(format_name: str) -> list[Clause]:
    """The clauses checked on targets of ``format_name``."""
    return [c for c in clauses().values() if format_name in c.formats]


def every_output(format_name: str) -> tuple[str, ...]:
    """The clauses judged on every output of a target of ``format_name`` (SPEC Part A, "Every
    output"): its format's structural clauses and the format-independent ones."""
    return tuple(c.id for c in in_format(format_name) if c.judged == "every-output")


def every_call(format_name: str) -> tuple[str, ...]:
    """The clauses judged on every ``compact`` call: a crash (CORE-10), the summarizer requests it made (CORE-13)."""
    return tuple(c.id for c in in_format(format_name) if c.judged == "every-call")


def in_flight(format_name: str) -> str:
    """The clause that a history waiting for a tool result comes back unchanged, in ``format_name``."""
    return next(c.id for c in in_format(format_name) if c.judged == "in-flight")


def fault_clauses() -> tuple[str, ...]:
    """The clauses every summarizing target meets under every summarizer fault (SPEC CORE-10, CORE-11)."""
    return tuple(c.id for c in clauses().values() if c.exercised == "fault")


def crash_clause() -> str:
    """The clause an exception escaping ``compact`` breaks: the one of harm ``crash`` (SPEC CORE-10)."""
    return next(c.id for c in clauses().values() if c.harm == "crash")


def failed_summary_clause() -> str:
    """The clause a summary written for a failed summarizer call breaks: the fault clause that is
    not the crash clause (SPEC CORE-11)."""
    return next(c for c in fault_clauses() if c != crash_clause())


def waived_by(key: str, value: str) -> tuple[str, ...]:
    """The clauses the declaration ``capabilities[key] = value`` makes unreachable."""
    said = f"{key}={value}"
    return tuple(c.id for c in clauses().values() if said in c.waived_by)

