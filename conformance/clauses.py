"""The clause registry: ``clauses.json`` is the data, SPEC.md the prose (SPEC Part A)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

PROFILES = ("core", "trigger", "summary", "structured", "failure", "events", "storage")


@dataclass(frozen=True)
class Clause:
    id: str
    profile: str
    level: str
    title: str

    @property
    def must(self) -> bool:
        return self.level == "MUST"


@cache
def clauses() -> dict[str, Clause]:
    """Every clause by id, in SPEC order."""
    data = json.loads(resources.files("compaction_suite.conformance").joinpath("clauses.json").read_text("utf-8"))
    return {c["id"]: Clause(**c) for c in data["clauses"]}
