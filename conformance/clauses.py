"""The clause registry: ``clauses.json`` is the data, SPEC.md the prose (SPEC Part A)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

PROFILES = ("core", "trigger", "summary", "structured", "failure", "events", "storage")
HARMS = ("rejected", "loss", "crash", "policy")
"""How bad a broken clause is for a user (SPEC Part A, "Harm classes"), worst first."""
STRUCTURAL = ("CORE-1", "CORE-2", "CORE-3", "CORE-4", "CORE-6")
"""Clauses judged on every output the suite sees, in any test (SPEC Part A, "Every output")."""
EXERCISED_BY_CHECK = ("CORE-9", "RESP-8", "ANTH-6", "TRIG-1", "TRIG-5")
"""Clauses about histories that must come back unchanged: an example exercises them when their
check ran on it. Every other clause (storage aside, whose checks run on stored branches) is
exercised by an example only when the compactor compacted in it (SPEC Part A, "Exercised")."""
CRASH = "CORE-10"
LOSS_ON_FAILURE = "CORE-11"


@dataclass(frozen=True)
class Clause:
    id: str
    profile: str
    level: str
    title: str
    harm: str
    formats: tuple[str, ...] = ("chat-completions",)
    """The wire formats whose targets this clause is checked on (SPEC Part A, "Wire formats")."""

    @property
    def must(self) -> bool:
        return self.level == "MUST"

    @property
    def exercised_by_check(self) -> bool:
        return self.id in EXERCISED_BY_CHECK or self.profile == "storage"


def _data() -> dict[str, Any]:
    return json.loads(resources.files("compaction_suite.conformance").joinpath("clauses.json").read_text("utf-8"))


@cache
def clauses() -> dict[str, Clause]:
    """Every clause by id, in SPEC order."""
    return {c["id"]: Clause(**{**c, "formats": tuple(c.get("formats", ("chat-completions",)))}) for c in _data()["clauses"]}


@cache
def harms() -> dict[str, str]:
    """Each harm class and what it means."""
    return dict(_data()["harms"])
