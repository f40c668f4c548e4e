"""Meta-tests of the clause index (in the spirit of JSON-Schema-Test-Suite's sanity tests and
array-api-tests' meta_tests): conformance/clauses.json validates against its JSON Schema and agrees
with SPEC.md Part A (ids, levels, profiles, order, anchors, harms); every clause has a
conformance test and a negative control (or a waiver with its reason), and the index lists
exactly those; no other module lists clause ids; a test names its clause once (its marker);
every clause id cited in the repository exists in SPEC.md.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import jsonschema
import pytest

from compaction_suite.conformance.clauses import (
    PROFILES,
    by_harm,
    clauses,
    crash_clause,
    every_output,
    failed_summary_clause,
    harm_of,
    in_flight,
    waived_by,
)

import broken_stores
from broken import compactors
from broken import formats as format_compactors
from broken.compactors import CONTROLS, SHOULD_CONTROLS
from broken.formats import CONTROLS as FORMAT_CONTROLS
from broken.formats import PROFILE_CONTROLS
from broken.shapes import SHAPE_CONTROLS
from broken.waivers import WAIVERS

ROOT = Path(__file__).resolve().parent.parent
SPEC = (ROOT / "SPEC.md").read_text(encoding="utf-8")
PART_A = SPEC[SPEC.index("# Part A") : SPEC.index("# Part B")]
CONFORMANCE_TESTS = ROOT / "conformance" / "tests"
CITED = re.compile(r"\b(?:CORE|FIRE|WIN|COST|TRIG|SUM|STRUCT|FAIL|EVT|STORE|RESP|ANTH|HIST|ROUND|TOK|RT|STRAT|SUMZ|EVENT|PRESET|DUR)-\d+(?:-[A-Z]+)?\b")
DEFINED = re.compile(r"\*\*([A-Z]+-\d+(?:-[A-Z]+)?)\*\*")
DELIBERATELY_UNKNOWN = {"CORE-99": "tests/test_cli_contract.py: check --clause with a clause that does not exist"}
SKIPPED_DIRS = {"__pycache__", "node_modules", "build", "dist"}


def part_a() -> dict[str, tuple[str, str]]:
    """SPEC Part A's clauses: id -> (profile, level), profile from the ``## <profile>`` heading."""
    found: dict[str, tuple[str, str]] = {}
    profile = None
    for line in PART_A.splitlines():
        heading = re.match(r"## (\w+)", line)
        if heading:
            profile = heading.group(1)
        item = re.match(r"- (?:<a id=\"[a-z]+-\d+\"></a>)?\*\*([A-Z]+-\d+)\*\* (MUST|SHOULD|MAY)\b", line)
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
    found |= {f"broken.shapes.{name}": c.expected for name, (c, _) in SHAPE_CONTROLS.items()}
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
    unknown = {cited: sorted(files) for cited, files in cited_ids().items() if cited not in defined and cited not in DELIBERATELY_UNKNOWN}
    assert unknown == {}


def test_the_citation_scan_sees_the_code() -> None:
    """The scan reads this repository's sources: it finds clauses cited in the reference and the verifier."""
    cited = cited_ids()
    assert "reference/points.py" in cited["STORE-3"] and "conformance/tests/test_core.py" in cited["CORE-1"]
    assert set(DELIBERATELY_UNKNOWN) <= set(cited), "an allowance for an id nothing cites any more"


# --- the clause index (issue 24 point 1): one entry per clause, everything about it one hop away

INDEX = ROOT / "conformance" / "clauses.json"
SCHEMA = ROOT / "conformance" / "schema" / "clauses.schema.json"


def test_the_index_validates_against_its_schema() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(json.loads(INDEX.read_text(encoding="utf-8")))


def test_the_schema_rejects_an_entry_missing_what_it_must_carry() -> None:
    """The schema is no formality: an entry without its tests, or with an unknown harm, is refused."""
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    entry = json.loads(INDEX.read_text(encoding="utf-8"))["clauses"][0]
    for broken in ({k: v for k, v in entry.items() if k != "tests"}, {**entry, "harm": "annoying"}, {**entry, "anchor": "SPEC.md"}):
        assert not validator.is_valid({"version": 3, "harms": json.loads(INDEX.read_text())["harms"], "clauses": [broken]})


def test_every_clause_has_its_anchor_in_spec() -> None:
    """SPEC Part A carries an HTML anchor in each clause's bullet: the index's ``anchor`` lands on it."""
    anchors = set(re.findall(r'<a id="([a-z]+-\d+)"></a>\*\*([A-Z]+-\d+)\*\*', PART_A))
    assert all(a == cid.lower() for a, cid in anchors), "an anchor names another clause"
    assert {f"SPEC.md#{cid.lower()}" for _, cid in anchors} == {c.anchor for c in clauses().values()}


def test_a_harm_spec_states_is_the_harm_the_index_gives() -> None:
    """SPEC states a clause's harm where it matters (``MUST (harm `loss`)``); the index agrees, and so
    does conformance/formats/README.md's table of the format clauses."""
    stated = dict(re.findall(r"\*\*([A-Z]+-\d+)\*\* (?:MUST|SHOULD) \((?:harm )?`(\w+)`\)", PART_A))
    assert stated and {cid: harm_of(cid) for cid in stated} == stated
    table = (ROOT / "conformance" / "formats" / "README.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| ((?:RESP|ANTH)-\d+) \| (\w+) \|", table, re.M))
    assert rows and {cid: harm_of(cid) for cid in rows} == rows


def test_the_index_lists_each_clauses_tests_and_controls() -> None:
    """The ``tests`` and ``controls`` of each entry are exactly the conformance tests marked with the
    clause and the negative controls it must reject (the message names what to write)."""
    tested = conformance_test_clauses()
    by_clause: dict[str, list[str]] = {}
    for name, clause_id in controls().items():
        by_clause.setdefault(clause_id, []).append(_control_name(name))
    expected = {cid: {"tests": sorted(tested.get(cid, [])), "controls": sorted(by_clause.get(cid, []))} for cid in clauses()}
    found = {cid: {"tests": sorted(c.tests), "controls": sorted(c.controls)} for cid, c in clauses().items()}
    differ = {cid: expected[cid] for cid in clauses() if expected[cid] != found[cid]}
    assert differ == {}, "update conformance/clauses.json: " + json.dumps(differ)


def _control_name(name: str) -> str:
    """``broken.compactors:cut_through_round`` and the like, from `controls`' names."""
    if name.startswith(("broken.formats.", "broken.shapes.", "broken_stores.")):
        module, _, attr = name.rpartition(".")
        return f"{module}:{attr}" if module in ("broken.formats", "broken.shapes") else f"{name}:factory"
    return f"broken.compactors:{name}"


def test_the_index_answers_what_the_code_asks() -> None:
    """The lookups the suite, the formats and the matrix use instead of their own id lists."""
    assert every_output("chat-completions")[:5] == ("CORE-1", "CORE-2", "CORE-3", "CORE-4", "CORE-6")
    assert {"CORE-12", "CORE-14", "CORE-16", "CORE-17"} <= set(every_output("responses")) and "CORE-1" not in every_output("responses")
    assert [in_flight(f) for f in ("chat-completions", "responses", "anthropic-messages")] == ["CORE-9", "RESP-8", "ANTH-6"]
    assert waived_by("system_prompt", "outside") == ("CORE-3", "RESP-7", "ANTH-4")
    assert sum(map(len, by_harm().values())) == len(clauses()) and list(by_harm()) == ["rejected", "loss", "crash", "policy"]


CLAUSE_LITERAL = r"[\"'](?:CORE|RESP|ANTH|TRIG|SUM|STRUCT|FAIL|EVT|STORE)-\d+[\"']"
ID_TUPLE = re.compile(rf"[(\[{{]\s*{CLAUSE_LITERAL}\s*[,:][^)\]}}]*{CLAUSE_LITERAL}")


def test_no_module_lists_clause_ids_of_its_own() -> None:
    """Issue 24: a clause lives in clauses.json; code asks it (`every_output`, `waived_by`, `by_harm`)
    instead of keeping tuples of ids. A check naming the clause it implements is not a list."""
    listed = []
    for path in sorted((ROOT / "conformance").rglob("*.py")) + sorted((ROOT / "compaction_suite").rglob("*.py")):
        relative = str(path.relative_to(ROOT))
        if "/tests/" in f"/{relative}":
            continue
        listed += [f"{relative}: {m.group(0)[:60]}" for m in ID_TUPLE.finditer(path.read_text(encoding="utf-8"))]
    assert listed == []


def test_a_test_names_its_clause_once() -> None:
    """``@clause("CORE-1")`` marks the test; ``require`` reads the marker, never the id again."""
    again = [f"{path.name}:{n}" for path in sorted(CONFORMANCE_TESTS.glob("*.py")) for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if re.search(r"require\(\s*[\"'][A-Z]+-\d+", line)]
    assert again == []


def _slug(title: str, seen: dict[str, int]) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens, ``-N`` for a repeat."""
    slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
    seen[slug] = seen.get(slug, 0) + 1
    return slug if seen[slug] == 1 else f"{slug}-{seen[slug] - 1}"


def test_spec_contents_list_every_part_and_section() -> None:
    """SPEC's table of contents is its headings (parts and sections), in order, each linked to its anchor."""
    seen: dict[str, int] = {}
    body = SPEC[SPEC.index("\n# Part A") :]
    expected = [
        ("- " if hashes == "#" else "  - ") + f"[{title.replace('`', '')}](#{_slug(title, seen)})"
        for hashes, title in re.findall(r"^(#{1,2}) (.+)$", body, re.M)
    ]
    contents = SPEC[SPEC.index("## Contents\n") : SPEC.index("\n# Part A")]
    listed = [line for line in contents.splitlines() if line.lstrip().startswith("- [")]
    assert listed == expected, "SPEC.md's Contents, as they should read:\n" + "\n".join(expected)


# --- one clause id, one place (issue 24 point 1): single ids too, not only lists of them

CODE_DIRS = ("compaction_suite", "conformance", "benchmarks", "adapters", "reference")
NAMES_ITS_CLAUSE = {
    ("conformance/formats/chat.py", "structural"): "each every-output check keyed by the clause it implements",
    ("conformance/formats/responses.py", "structural"): "each every-output check keyed by the clause it implements",
    ("conformance/formats/anthropic.py", "structural"): "each every-output check keyed by the clause it implements",
    ("conformance/judges.py", "every_output"): "each every-output check keyed by the clause it implements",
    ("conformance/judges.py", "ANSWERED"): "the clause summary_stands_for_answer, beside it, judges",
    ("conformance/judges.py", "ACCEPTED"): "the clause requests_accepted, beside it, judges",
    ("conformance/judges.py", "MEDIA_AS_MEDIA"): "the clause media_as_text, beside it, judges",
    ("compaction_suite/recording/errors.py", "ERROR_CASES"): "the clause each recorded failure exchange shows, written into its cassette",
    ("adapters/*.py", "DOCUMENTED"): "the clause a framework's documented behaviour touches (agreed interface 4)",
    ("adapters/*.py", "SHOWN_IN_LOOP"): "the clause of a finding the framework's own loop shows",
}
"""Where code may spell a clause id: a check naming the clause it implements, or data about one clause.
Everything else asks `conformance.clauses` (a test: its marker)."""


def clause_literals(path: Path, known: set[str]) -> list[tuple[str, int, bool]]:
    """Each string literal of ``path`` that is exactly a clause id: (the module-level name or the
    function it is in, its line, whether it is in a decorator). A docstring citing a clause is text, not an id."""
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, scope: str, decorator: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                visit(d, scope, True)
            for child in [*node.body, node.args, *([node.returns] if node.returns else [])]:
                visit(child, node.name, decorator)
            return
        if isinstance(node, ast.Constant) and node.value in known:
            found.append((scope, node.lineno, decorator))
        for child in ast.iter_child_nodes(node):
            visit(child, _assigned(child) if scope == "<module>" else scope, decorator)

    visit(ast.parse(path.read_text(encoding="utf-8")), "<module>", False)
    return found


def _assigned(node: ast.AST) -> str:
    """The name a module-level statement assigns (``<module>`` for any other statement)."""
    target = node.targets[0] if isinstance(node, ast.Assign) else node.target if isinstance(node, ast.AnnAssign) else None
    return target.id if isinstance(target, ast.Name) else "<module>"


def _is_test(relative: str) -> bool:
    return relative.startswith("conformance/tests/") or Path(relative).name.startswith("test_")


def test_no_module_spells_a_clause_id_where_the_index_should_answer() -> None:
    """No module keeps a constant such as ``CRASH_CLAUSE = "CORE-10"``: a clause's facts come from
    clauses.json, except where code names the clause it implements (`NAMES_ITS_CLAUSE`); a test's
    clause comes from its marker (``@clause``, ``@pytest.mark.judges``), never a literal in its body."""
    known, stray, used = set(clauses()), [], set()
    for folder in CODE_DIRS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = str(path.relative_to(ROOT))
            for scope, line, decorator in clause_literals(path, known):
                allowed = next((key for key in NAMES_ITS_CLAUSE if Path(relative).match(key[0]) and key[1] == scope), None)
                if allowed:
                    used.add(allowed)
                elif not (decorator and _is_test(relative)):
                    stray.append(f"{relative}:{line} ({scope})")
    assert stray == []
    assert used == set(NAMES_ITS_CLAUSE), "an allowance nothing uses any more"


def test_the_clause_literal_scan_sees_constants_and_spares_citations(tmp_path: Path) -> None:
    """The scan's own check: a single-id constant and an id in a function are found; a docstring
    or a comment citing the clause is not."""
    module = tmp_path / "m.py"
    module.write_text('"""Implements CORE-10."""\nCRASH = "CORE-10"\n\n\ndef f():\n    """CORE-11."""\n    return "CORE-11"  # CORE-12\n')
    assert clause_literals(module, set(clauses())) == [("CRASH", 2, False), ("f", 7, False)]


def test_the_index_names_the_clauses_of_a_crash_and_of_a_failed_summary() -> None:
    """`crash_clause` and `failed_summary_clause` (what the suite and ``reproduce`` ask instead of
    keeping the ids): the clause of harm ``crash``, and the other clause every summarizer fault exercises."""
    assert crash_clause() == "CORE-10" and failed_summary_clause() == "CORE-11"
