"""Sanity tests of the code's layout (issue 24's Done-when, rerunnable): each fact written once.

The system roles are defined once for the package; a history is split into rounds once per wire
format, in that format's module (the reference and the standalone examples keep their own, as
they are read alone: SPEC ENT-3); no CLI module grows past 200 lines (a command parses options and
calls the library). Each scan is exact (the places it finds are listed), so it also shows that it
still sees the code.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CODE = ("compaction_suite", "conformance", "benchmarks", "adapters", "reference", "examples")
READ_ALONE = {
    "reference/rounds.py": "the reference keeps its own (SPEC ENT-3), for readers learning the subject",
    "examples/python/truncating.py": "a standalone example compactor, as a third party writes one",
    "examples/python/responses_truncating.py": "a standalone example compactor, as a third party writes one",
    "examples/python/responses_compacting.py": "a standalone example compactor, as a third party writes one",
}
CLI_MODULE_LINES = 200


def sources() -> dict[str, ast.Module]:
    """Every Python module of the code (tests aside), parsed, by its path from the root."""
    found = {}
    for folder in CODE:
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = str(path.relative_to(ROOT))
            if "/tests/" not in relative and not path.name.startswith("test_"):
                found[relative] = ast.parse(path.read_text(encoding="utf-8"))
    return found


def assigned(tree: ast.Module, name: str) -> bool:
    """Whether the module assigns ``name`` at its top level."""
    targets = [t for node in tree.body if isinstance(node, ast.Assign) for t in node.targets]
    targets += [node.target for node in tree.body if isinstance(node, ast.AnnAssign)]
    return any(isinstance(t, ast.Name) and t.id == name for t in targets)


def test_system_roles_are_defined_once() -> None:
    """`compaction_suite.message.SYSTEM_ROLES` for the verifier, the formats, the adapters and the
    benchmarks; only what is read alone keeps its own."""
    defining = sorted(path for path, tree in sources().items() if assigned(tree, "SYSTEM_ROLES"))
    assert defining == sorted(["compaction_suite/message.py", *READ_ALONE])


def splitters(tree: ast.Module) -> list[str]:
    """The functions of a module that split a history into rounds: named for rounds, returning a list
    of them (``list[list[...]]``, ``list[Round]`` or the reference's ``Rounds``), and calling no other such function (a view of a
    split, such as ``non_system_rounds`` or the benchmarks' `View.rounds`, is not a second split)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not node.name.endswith("rounds") or node.returns is None:
            continue
        returns = ast.unparse(node.returns)
        if not (returns.startswith(("list[list[", "list[Round")) or returns == "Rounds"):
            continue
        called = {ast.unparse(call.func).rpartition(".")[2] for call in ast.walk(node) if isinstance(call, ast.Call)}
        if not any(name.lower().endswith("rounds") or name == "_material" for name in called):  # Rounds(...): a view of a split
            found.append(node.name)
    return found


def test_each_format_splits_rounds_in_its_own_module_only() -> None:
    """One round splitter per wire format, in `conformance.formats`; ``_material`` is how the
    benchmarks' synthetic histories read the reference's split."""
    found = {path: names for path, tree in sources().items() if (names := splitters(tree))}
    assert found == {
        "conformance/formats/chat.py": ["rounds"],
        "conformance/formats/responses.py": ["rounds"],
        "conformance/formats/anthropic.py": ["rounds"],
        "reference/rounds.py": ["split_rounds"],
        "examples/python/truncating.py": ["_rounds"],
    }


def test_the_splitter_scan_tells_a_split_from_a_view_of_one() -> None:
    own = ast.parse("def rounds(h) -> list[list[int]]:\n    return [[i] for i in range(len(h))]\n")
    view = ast.parse("def non_system_rounds(h) -> list[list[int]]:\n    return [r for r in rounds(h) if r]\n")
    assert splitters(own) == ["rounds"] and splitters(view) == []


def test_no_cli_module_holds_library_logic() -> None:
    """Every module of `compaction_suite.cli` is at most 200 lines: it parses options and calls the library."""
    sizes = {str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines()) for p in (ROOT / "compaction_suite" / "cli").rglob("*.py")}
    assert sizes and {path: n for path, n in sizes.items() if n > CLI_MODULE_LINES} == {}
