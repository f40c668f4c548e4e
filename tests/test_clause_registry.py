"""Meta-tests of the clause registry (in the spirit of JSON-Schema-Test-Suite's sanity tests and
array-api-tests' meta_tests): SPEC.md Part A and conformance/clauses.json agree; every clause
has a conformance test and a negative control (or a waiver with its reason); every clause id
cited in the repository exists in SPEC.md.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from compaction_suite.conformance.clauses import PROFILES, clauses

import broken_stores
from broken import compactors
from broken import formats as format_compactors
from broken.compactors import CONTROLS, SHOULD_CONTROLS
from broken.formats import CONTROLS as FORMAT_CONTROLS
from broken.formats import PROFILE_CONTROLS
from broken.waivers import WAIVERS

ROOT = Path(__file__).resolve().parent.parent
SPEC = (ROOT / "SPEC.md").read_text(encoding="utf-8")
PART_A = SPEC[SPEC.index("# Part A") : SPEC.index("# Part B")]
CONFORMANCE_TESTS = ROOT / "conformance" / "tests"
CITED = re.compile(r"\b(?:CORE|TRIG|SUM|STRUCT|FAIL|EVT|STORE|RESP|ANTH|HIST|ROUND|TOK|RT|STRAT|SUMZ|EVENT|PRESET|DUR)-\d+(?:-[A-Z]+)?\b")
DEFINED = re.compile(r"\*\*([A-Z]+-\d+(?:-[A-Z]+)?)\*\*")
DELIBERATELY_UNKNOWN = {"CORE-99": "tests/test_cli_contract.py: check --clause with a clause that does not exist"}
SKIPPED_DIRS = {"__pycache__", "node_modules", "build", "dist"}
AWAITING_SUITE = {"adapters/reported_bugs.json": {f"CORE-{n}" for n in range(12, 18)}}
"""Clauses the suite branch defines (core numbers 12 to 17) that the bug list's pending entries already expect;
once that branch is merged they are defined and this allowance is moot (delete it then)."""


def part_a() -> dict[str, tuple[str, str]]:
    """SPEC Part A's clauses: id -> (profile, level), profile from the ``## <profile>`` heading."""
    found: dict[str, tuple[str, str]] = {}
    profile = None
    for line in PART_A.splitlines():
        heading = re.match(r"## (\w+)", line)
        if heading:
            profile = heading.group(1)
        item = re.match(r"- \*\*([A-Z]+-\d+)\*\* (MUST|SHOULD|MAY)\b", line)
        if item:
            found[item.group(1)] = (str(profile), item.group(2))
    return found


def test_clauses_json_and_spec_part_a_agree_on_ids_levels_profiles_and_order() -> None:
    spec = part_a()
    registry = {c.id: (c.profile, c.level) for c in clauses().values()}
    assert list(registry) == list(spec)
    assert registry == spec
    assert {profile for profile, _ in registry.values()} == set(PROFILES)


def conformance_test_clauses() -> dict[str, list[str]]:
    """Clause id -> the conformance tests marked with it, read from the source (importing the
    test modules here would freeze their Hypothesis settings under this run's profile)."""
    found: dict[str, list[str]] = {}
    for path in sorted(CONFORMANCE_TESTS.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                for clause_id in map(_clause_mark, node.decorator_list):
                    if clause_id:
                        found.setdefault(clause_id, []).append(f"{path.name}::{node.name}")
    return found


def _clause_mark(decorator: ast.expr) -> str | None:
    """The id of ``@clause("ID")`` or ``@pytest.mark.clause("ID")``."""
    if not (isinstance(decorator, ast.Call) and decorator.args and isinstance(decorator.args[0], ast.Constant)):
        return None
    name = decorator.func.attr if isinstance(decorator.func, ast.Attribute) else getattr(decorator.func, "id", None)
    return str(decorator.args[0].value) if name == "clause" else None


def test_every_clause_has_a_conformance_test() -> None:
    tested = conformance_test_clauses()
    assert sorted(set(clauses()) - set(tested)) == []
    assert sorted(set(tested) - set(clauses())) == [], "a test is marked with a clause the registry does not know"


def controls() -> dict[str, str]:
    """Every negative control (broken compactor, store, or wire-format compactor, whose controls
    tests/test_formats.py runs) by name -> the clause it breaks."""
    found = {name: c.expected for name, c in (CONTROLS | SHOULD_CONTROLS).items()}
    found |= {f"broken.formats.{name}": c.expected for name, c in FORMAT_CONTROLS.items()}
    found |= {f"broken.formats.{name}": c.expected for name, c in PROFILE_CONTROLS.items()}
    return found | {f"broken_stores.{name}": c.expected for name, c in broken_stores.controls().items()}


def test_every_clause_has_a_negative_control_or_a_waiver() -> None:
    controlled = set(controls().values())
    assert sorted(set(clauses()) - controlled - set(WAIVERS)) == []
    assert sorted(controlled - set(clauses())) == [], "a control names a clause the registry does not know"
    ran = {cid for c in (CONTROLS | SHOULD_CONTROLS | PROFILE_CONTROLS | FORMAT_CONTROLS).values() for cid in c.clauses}
    assert sorted(ran - set(clauses())) == [], "a control runs the tests of a clause the registry does not know"


def test_a_waiver_is_for_a_clause_without_a_control_and_says_why() -> None:
    controlled = set(controls().values())
    assert [cid for cid in WAIVERS if cid not in clauses() or cid in controlled] == []
    assert [cid for cid, why in WAIVERS.items() if len(why.split()) < 5] == [], "a waiver gives its reason"


def test_a_should_clause_control_is_listed_as_one() -> None:
    """SHOULD failures exit 0 and MUST failures exit 1: each control is in the list its clause's level expects."""
    assert all(clauses()[c.expected].must for c in (CONTROLS | PROFILE_CONTROLS | FORMAT_CONTROLS).values())
    assert not any(clauses()[c.expected].must for c in SHOULD_CONTROLS.values())
    assert all(clauses()[c.expected].must for c in broken_stores.controls().values())


@pytest.mark.parametrize("name", sorted((CONTROLS | SHOULD_CONTROLS).keys()))
def test_a_broken_compactor_names_its_defect_and_the_reason_to_expect(name: str) -> None:
    assert (getattr(compactors, name).__doc__ or "").strip(), "the docstring names the defect"
    reason = (CONTROLS | SHOULD_CONTROLS)[name].reason
    assert reason and re.compile(reason), "the reason its clause must give"


@pytest.mark.parametrize("name", sorted((FORMAT_CONTROLS | PROFILE_CONTROLS).keys()))
def test_a_broken_format_compactor_names_its_defect_and_the_reason_to_expect(name: str) -> None:
    assert (getattr(format_compactors, name).__doc__ or "").strip(), "the docstring names the defect"
    reason = (FORMAT_CONTROLS | PROFILE_CONTROLS)[name].reason
    assert reason and re.compile(reason), "the reason its clause must give"


@pytest.mark.parametrize("name", sorted(broken_stores.controls()))
def test_a_broken_store_names_its_defect_and_the_reason_to_expect(name: str) -> None:
    module = __import__(f"broken_stores.{name}", fromlist=["factory"])
    assert (module.__doc__ or "").strip() and callable(module.factory)
    assert broken_stores.controls()[name].reason


def cited_ids() -> dict[str, set[str]]:
    """Every clause-like id cited in the repository's text files -> the files citing it."""
    found: dict[str, set[str]] = {}
    for path in ROOT.rglob("*"):
        parts = path.relative_to(ROOT).parts
        if any(p.startswith(".") or p in SKIPPED_DIRS for p in parts) or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for cited in set(CITED.findall(text)):
            found.setdefault(cited, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_clause_id_cited_exists_in_spec() -> None:
    defined = set(DEFINED.findall(SPEC))
    unknown = {
        cited: sorted(f for f in files if cited not in AWAITING_SUITE.get(f, ()))
        for cited, files in cited_ids().items()
        if cited not in defined and cited not in DELIBERATELY_UNKNOWN
    }
    unknown = {cited: files for cited, files in unknown.items() if files}
    assert unknown == {}


def test_the_citation_scan_sees_the_code() -> None:
    """The scan reads this repository's sources: it finds clauses cited in the reference and the verifier."""
    cited = cited_ids()
    assert "reference/points.py" in cited["STORE-3"] and "conformance/tests/test_core.py" in cited["CORE-1"]
    assert set(DELIBERATELY_UNKNOWN) <= set(cited), "an allowance for an id nothing cites any more"
