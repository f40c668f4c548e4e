"""Negative controls: every deliberately broken compactor (tests/broken/) and store
(tests/broken_stores/) is rejected by the clause its defect breaks, with a reason that names
the defect, and the references pass every clause they claim (the suite is worth what it
catches).

Each control runs in this interpreter, narrowed to its own clause, without shrinking, with the
command's default number of examples (`checking.in_process`): a failing test stops at its first
failure, so this costs little more than ``--fast``, and a defect that 10 examples miss (a task
list summarized away, STRUCT-3) is still caught, as a user's default run catches it; the tests named "as a user runs check" run the command itself for a few
targets, exit codes and shrinking included.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from compaction_suite.conformance.clauses import clauses

import broken_stores
from broken.compactors import CONTROLS, SHOULD_CONTROLS, Control
from broken.formats import PROFILE_CONTROLS
from broken.shapes import SHAPE_CONTROLS
from checking import Checked, as_user, assert_caught, in_process

MUST: dict[str, Control] = {f"broken.compactors:{name}": c for name, c in CONTROLS.items()}
MUST |= {f"broken_stores.{name}:factory": c for name, c in broken_stores.controls().items()}
MUST |= {f"broken.formats:{name}": c for name, c in PROFILE_CONTROLS.items()}
SHOULD: dict[str, Control] = {f"broken.compactors:{name}": c for name, c in SHOULD_CONTROLS.items()}


@pytest.mark.parametrize("target", sorted(MUST))
def test_broken_target_is_rejected_by_its_clause(target: str, tmp_path: Path) -> None:
    control = MUST[target]
    checked = in_process(tmp_path, target, profiles=control.profiles, clauses=control.clauses)
    assert checked.exit_code == 1, checked.output[-3000:]
    assert_caught(checked, control)


@pytest.mark.parametrize("target", sorted(SHOULD))
def test_should_clause_is_reported_without_failing(target: str, tmp_path: Path) -> None:
    control = SHOULD[target]
    checked = in_process(tmp_path, target, profiles=control.profiles, clauses=control.clauses)
    assert checked.exit_code == 0, checked.output[-3000:]
    assert assert_caught(checked, control)["level"] == "SHOULD"


@pytest.mark.parametrize("target", ["reference-structured", "reference-store"])
def test_reference_passes_every_claimed_clause(target: str, tmp_path: Path) -> None:
    """Seed 001's compactor, and seed 000's behind the durable store, on every profile they claim."""
    assert_conforms(in_process(tmp_path, target, fast=True))


def test_reference_store_conforms_on_storage_alone(tmp_path: Path) -> None:
    assert_conforms(in_process(tmp_path, "reference-store", profiles=("storage",), fast=True), ("storage",))


def assert_conforms(checked: Checked, profiles: tuple[str, ...] = ()) -> None:
    """Exit 0, and every clause of SPEC Part A in ``profiles`` (default: those claimed) passes,
    or does not apply (another wire format's clause: RESP-*, ANTH-* on a chat-completions target)."""
    ran = set(profiles or checked.report["profiles_claimed"])
    statuses = {cid: c["status"] for cid, c in checked.report["clauses"].items() if c["profile"] in ran}
    assert checked.exit_code == 0, checked.output[-3000:]
    assert set(statuses) == {cid for cid, c in clauses().items() if c.profile in ran}
    assert {cid: s for cid, s in statuses.items() if s not in ("pass", "not-applicable")} == {}
    assert "pass" in statuses.values()


def test_reference_conforms_as_a_user_runs_check() -> None:
    """The command in a fresh interpreter: exit 0, every clause of every profile it claims passes."""
    checked = as_user("reference")
    assert_conforms(checked)
    assert set(checked.report["profiles_claimed"]) == {"core", "trigger", "summary", "failure", "events"}


@pytest.mark.parametrize("target", ["broken.compactors:cut_through_round", "broken.compactors:pads_summary"])
def test_broken_compactor_as_a_user_runs_check(target: str, tmp_path: Path) -> None:
    """The command in a fresh interpreter, as a user narrows it to one clause: exit 1 for a MUST
    clause failing, 0 for a SHOULD clause failing, the clause named on the terminal, and the
    failing history shrunk (not the one found first, which the in-process run reports)."""
    control = MUST.get(target) or SHOULD[target]
    checked = as_user(target, "--clause", control.expected)
    assert checked.exit_code == (1 if target in MUST else 0), checked.output[-3000:]
    shrunk = assert_caught(checked, control)["history"]
    assert re.search(rf"^{control.expected}\s+fail", checked.output, re.M), "the terminal summary names the failing clause"
    if target in MUST:  # the summary names the suite's test file from its own folder, not a path from the working directory
        assert re.search(r"^FAILED tests/test_\w+\.py::", checked.output, re.M), checked.output[-1500:]
    first = in_process(tmp_path, target, clauses=control.clauses, fast=True).clause(control.expected)["history"]
    assert shrunk != first, "Hypothesis shrank the failing history it found first"


@pytest.mark.parametrize("name", sorted(SHAPE_CONTROLS))
def test_a_shape_defect_is_caught_by_the_test_forcing_its_shape(name: str, tmp_path: Path) -> None:
    """Each control of `broken.shapes` has the defect a real report found in one shape (SPEC Part
    A, "Histories the suite draws"): its clause fails with a reason naming it, and the test that
    forces the shape is among those that caught it (whatever the general tests drew)."""
    control, shape_test = SHAPE_CONTROLS[name]
    checked = in_process(tmp_path, f"broken.shapes:{name}", profiles=control.profiles, clauses=control.clauses)
    assert checked.exit_code == 1, checked.output[-3000:]
    found = assert_caught(checked, control)
    caught_by = {found.get("test"), *(f["test"] for f in found.get("failures", []))}
    assert any(str(test).endswith(f"::{shape_test}") for test in caught_by), caught_by
