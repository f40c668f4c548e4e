"""Compactors written independently from SPEC Part A alone (tests/independent/), correct ones and
ones with a defect of issue 20's classes, are judged correctly: every correct one conforms in its
own wire format, every defective one fails with the clause its defect breaks and the reason id that
names it. Each runs in this interpreter (`checking.in_process`, ``--fast``'s 10 examples a test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from checking import in_process

ISSUE_20 = ("CORE-10", "CORE-11", "CORE-12", "CORE-13", "CORE-14", "CORE-16", "CORE-18")
"""The clauses every summarizing compactor meets in the fault sweep and on every output (issue 20's, and
CORE-18: the summary obtained is kept)."""


@pytest.mark.parametrize(
    ("target", "wire_format"),
    [
        ("independent.responses_summarizing:factory", "responses"),
        ("independent.anthropic_summarizing:factory", "anthropic-messages"),
    ],
)
def test_correct_summarizing_compactors_conform_in_their_format(target: str, wire_format: str, tmp_path: Path) -> None:
    """Each summarizes in its own provider's API, meets every fault that API sends and keeps its
    format's rules: the clauses of issue 20, the fault sweep and the format's own clauses (the
    others, mutation, determinism, size and triggers, are judged alike for every compactor)."""
    family = "RESP" if wire_format == "responses" else "ANTH"
    own = [f"{family}-{n}" for n in range(1, 10 if family == "RESP" else 7)]
    checked = in_process(tmp_path, target, profiles=("core",), clauses=[*ISSUE_20, *own], fast=True)
    report = checked.report
    assert checked.exit_code == 0 and report["verdict"] == "conforms", checked.output[-3000:]
    assert report["capabilities"]["wire_format"] == wire_format and report["calls_summarizer"] is True
    for clause_id in ISSUE_20:
        assert report["clauses"][clause_id]["status"] == "pass" and report["clauses"][clause_id]["exercised"] > 0, (clause_id, report["clauses"][clause_id])


@pytest.mark.parametrize(
    ("target", "clause", "reason_ids"),
    [
        # its placeholder stands for no answer; its real summaries for messages their request never held
        ("independent.trimmed_window_summary:factory", "CORE-12", {"summary-without-summarizer-answer", "summary-of-unsent-messages"}),
        ("independent.bedrock_sliding_window:factory", "CORE-17", {"bedrock-converse:first-turn-not-user"}),
    ],
)
def test_defective_independent_compactors_fail_with_their_clause(target: str, clause: str, reason_ids: set[str], tmp_path: Path) -> None:
    checked = in_process(tmp_path, target, clauses=[clause], fast=True)
    found = checked.clause(clause)
    assert checked.exit_code == 1 and found["status"] == "fail", checked.output[-3000:]
    assert {found.get("reason_id"), *(f["reason_id"] for f in found.get("failures", []))} & reason_ids, found
