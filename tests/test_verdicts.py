"""Verdicts a maintainer can trust (issue 14): correct compactors making other legitimate choices
pass, a do-nothing compactor is flagged, declarations make clauses not-applicable (never fail),
a failure replays from the report alone, and the SPEC decisions hold (SPEC Part A)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_negative_controls import check

from compaction_suite.conformance import oracle
from compaction_suite.conformance.capabilities import CapabilityError, declared
from compaction_suite.conformance.report import ranges
from compaction_suite.conformance.reproduce import case_of, replay
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.suite import build
from compaction_suite.conformance.target import StartupFailed

ROOT = Path(__file__).resolve().parent.parent


# --- end to end: `compaction-suite check` as a user runs it (slow: one subprocess each)


@pytest.mark.parametrize("target", ["independent.truncating:factory", "independent.structured_summary:factory"])
def test_independent_correct_compactors_conform(target: str, tmp_path: Path) -> None:
    report = check(target, (), tmp_path, exit_code=0)
    assert report["verdict"] == "conforms"
    assert {c["status"] for c in report["clauses"].values()} <= {"pass", "skip"}


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_compactor_in_another_language_conforms(tmp_path: Path) -> None:
    report = check(f"cmd:node {ROOT / 'examples/node/compactor.mjs'}", ("core", "summary"), tmp_path, exit_code=0)
    assert report["verdict"] == "conforms", report["clauses"]


def test_a_compactor_that_never_compacts_is_flagged(tmp_path: Path) -> None:
    report = check("broken.compactors:never_compacts", (), tmp_path, exit_code=1)
    assert report["verdict"] == "not-shown" and report["compacted_calls"] == 0
    assert report["clauses"]["CORE-1"]["status"] == "not-exercised"


@pytest.mark.parametrize(("name", "waived"), [("declared_between_rounds", "CORE-9"), ("declared_system_outside", "CORE-3")])
def test_a_declaration_makes_its_clause_not_applicable(name: str, waived: str, tmp_path: Path) -> None:
    report = check(f"broken.compactors:{name}", ("core",), tmp_path, exit_code=0)
    clause = report["clauses"][waived]
    assert clause["status"] == "not-applicable" and "declared capabilities" in clause["reason"]
    assert report["harm_counts"] == {"rejected": 0, "loss": 0, "crash": 0, "policy": 0}


def test_a_failure_replays_from_the_report(tmp_path: Path) -> None:
    report = check("broken.compactors:strip_system", ("core",), tmp_path, exit_code=1)
    clause = report["clauses"]["CORE-3"]
    assert clause["harm"] == "loss" and report["harm_counts"]["loss"] >= 1
    assert clause["replay"].endswith("CORE-3") and clause["case"]["iteration"] >= 1
    replayed = replay(case_of(report, "CORE-3"), "broken.compactors:strip_system")
    assert "CORE-3" in replayed.problems


# --- the pieces, in process


def test_capabilities_default_to_the_strict_reading() -> None:
    assert declared(object()).waived() == {}
    assert set(declared(type("C", (), {"capabilities": {"called": "between_rounds"}})()).waived()) == {"CORE-9"}
    with pytest.raises(CapabilityError):
        declared(type("C", (), {"capabilities": {"called": "sometimes"}})())


@pytest.mark.parametrize("factory", [lambda s: None, lambda s: object(), lambda s: 1 / 0])
def test_contract_errors_are_one_line(factory) -> None:
    with pytest.raises(StartupFailed) as raised:
        build(factory, Settings(), "t")
    assert "\n" not in str(raised.value)


SYSTEM = {"role": "system", "content": "Be brief."}
MIDDLE = {"role": "developer", "content": "Answer in French."}
TURNS = [{"role": "user", "content": f"q{n}"} for n in range(4)]


def test_core3_decision_a_middle_system_message_may_stay_or_move_up() -> None:
    history = [SYSTEM, TURNS[0], TURNS[1], MIDDLE, TURNS[2], TURNS[3]]
    assert oracle.check_system_kept(history, [SYSTEM, MIDDLE, TURNS[3]], True) is None
    assert oracle.check_system_kept(history, [SYSTEM, TURNS[1], MIDDLE, TURNS[3]], True) is None
    assert oracle.check_system_kept(history, [TURNS[3], SYSTEM, MIDDLE], True) is not None
    assert oracle.check_system_kept(history, [SYSTEM, TURNS[3]], True) is not None


def test_sum1_decision_structured_claimers_keep_at_least_ten_messages() -> None:
    history = [SYSTEM] + [{"role": "user", "content": f"q{n}"} for n in range(14)]
    assert len(oracle.expected_summary_shape(history, 2)[1]) == 2
    assert len(oracle.expected_summary_shape(history, 2, 10)[1]) == 10


def test_core11_a_failed_summary_is_a_new_message_for_removed_ones() -> None:
    history = [SYSTEM, *TURNS]
    assert oracle.check_no_failed_summary(history, history) is None
    assert oracle.check_no_failed_summary(history, [SYSTEM, TURNS[3]]) is None  # a truncation fallback
    empty = {"role": "user", "content": "[Context Summary]\n"}
    assert "message 1 (user)" in oracle.check_no_failed_summary(history, [SYSTEM, empty, TURNS[3]])


def test_reasons_point_at_the_message() -> None:
    out = [{"role": "user", "content": "q"}, {"role": "tool", "tool_call_id": "x", "content": "r"}]
    assert oracle.check_tool_results_have_calls(out).startswith("message 1 (tool)")


def test_clause_ranges_read_as_runs() -> None:
    assert ranges(["CORE-1", "CORE-2", "CORE-3", "CORE-6", "TRIG-1"]) == "CORE-1..3, CORE-6, TRIG-1"
