"""Removals before a compaction (SPEC STORE-18, STORE-19): the ``session_removes`` declaration, and the
clauses passing on a session that keeps the rules (their negative controls, in
``tests/broken_stores/session_*_keeps_chain.py``, show each can fail: tests/test_negative_controls.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compaction_suite.conformance.capabilities import CapabilityError, declared

from checking import in_process


class Declares:
    def __init__(self, removes: Any) -> None:
        self.capabilities = {"session_removes": removes}


@pytest.mark.parametrize(
    ("removes", "waived"),
    [
        (None, {"STORE-18", "STORE-19"}),
        (["pop"], {"STORE-19"}),
        (["remove"], {"STORE-19"}),
        (["clear"], {"STORE-18"}),
        (["pop", "clear"], set()),
        (["pop", "remove", "clear"], set()),
    ],
)
def test_each_clause_applies_where_one_of_its_operations_is_declared(removes: Any, waived: set[str]) -> None:
    found = declared(Declares(removes)).waived()
    assert {c for c in ("STORE-18", "STORE-19") if c in found} == waived
    assert all("session_removes" in found[c] for c in waived)


def test_the_declared_removals_are_reported() -> None:
    assert declared(Declares(["pop", "clear"])).as_dict()["session_removes"] == ["pop", "clear"]
    assert "session_removes" not in declared(Declares(None)).as_dict()


@pytest.mark.parametrize("removes", ["pop", ["undo"], ["pop", "pop"], [1], {"pop": True}])
def test_anything_but_a_list_of_known_operations_is_a_contract_error(removes: Any) -> None:
    with pytest.raises(CapabilityError, match="session_removes"):
        declared(Declares(removes))


def test_a_session_that_keeps_the_rules_passes_both(tmp_path: Path) -> None:
    checked = in_process(tmp_path, "broken_stores._session:factory", profiles=("session",), clauses=("STORE-18", "STORE-19"), fast=True)
    assert checked.exit_code == 0, checked.output[-3000:]
    assert {c: checked.clause(c)["status"] for c in ("STORE-18", "STORE-19")} == {"STORE-18": "pass", "STORE-19": "pass"}
