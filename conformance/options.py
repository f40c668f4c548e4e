"""The options of a conformance run, defined once (the pytest-benchmark pattern).

The pytest plugin adds each as ``--compaction-<name>`` (``--compactor`` for the target);
``compaction-suite check`` offers the same option as ``--<name>`` and hands it to pytest
spelled the plugin's way, so the two can never drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .clauses import PROFILES

FAST_EXAMPLES = 10
DEFAULT_EXAMPLES = 50


@dataclass(frozen=True)
class Option:
    name: str
    """``--<name>`` in the CLI, ``--compaction-<name>`` in pytest."""
    help: str
    kind: str = "str"
    """``flag``, ``int`` (at least 1), ``str``, ``path`` (an existing file), ``output`` (a file to
    write, checked before the run: `compaction_suite.inputs.output_file`), ``dir`` or ``choice``."""
    multiple: bool = False
    metavar: str | None = None
    choices: tuple[str, ...] = ()

    @property
    def pytest_flag(self) -> str:
        return f"--compaction-{self.name}"

    @property
    def dest(self) -> str:
        return "compaction_" + self.name.replace("-", "_")


OPTIONS: tuple[Option, ...] = (
    Option("profile", "check only this profile (repeatable; default: every profile the compactor claims)",
           kind="choice", multiple=True, metavar="P", choices=PROFILES),
    Option("clause", "check only this clause, e.g. CORE-1 (repeatable)", multiple=True, metavar="ID"),
    Option("fast", f"{FAST_EXAMPLES} Hypothesis examples per test, for quick local runs", kind="flag"),
    Option("max-examples", f"Hypothesis examples per test (default {DEFAULT_EXAMPLES})", kind="int", metavar="N"),
    Option("random", "draw new examples each run (default: derandomized, the same examples every run)", kind="flag"),
    Option("xfails", "file of test ids (one a line) expected to fail; ids matching no test warn", kind="path", metavar="FILE"),
    Option("report", "write the clause report to PATH.json or PATH.md (repeatable)", kind="output", multiple=True, metavar="PATH"),
    Option("path", "put DIR on sys.path before resolving the target, for a package not installed (repeatable)",
           kind="dir", multiple=True, metavar="DIR"),
)


def by_name(name: str) -> Option:
    return next(o for o in OPTIONS if o.name == name)


def pytest_args(values: dict[str, Any]) -> list[str]:
    """The plugin's spelling of option values given by their ``name`` (CLI → pytest)."""
    args: list[str] = []
    for option in OPTIONS:
        value = values.get(option.name)
        if option.kind == "flag":
            args += [option.pytest_flag] if value else []
        elif option.multiple:
            args += [f"{option.pytest_flag}={v}" for v in _seq(value)]
        elif value is not None:
            args.append(f"{option.pytest_flag}={value}")
    return args


def _seq(value: Sequence[Any] | None) -> Sequence[Any]:
    return value or ()
