"""The ``compaction-suite`` command."""

from __future__ import annotations

import sys
from importlib import resources

import click
import pytest

from .clauses import PROFILES

EXIT = {pytest.ExitCode.OK: 0, pytest.ExitCode.TESTS_FAILED: 1, pytest.ExitCode.USAGE_ERROR: 2, pytest.ExitCode.NO_TESTS_COLLECTED: 2}


@click.group()
@click.version_option(package_name="compaction-suite")
def main() -> None:
    """Conformance and benchmark suite for LLM-agent context compaction."""


@main.command()
@click.argument("target", required=False)
@click.option("--profile", "profiles", multiple=True, type=click.Choice(PROFILES), help="Check only this profile (repeatable).")
@click.option("--report", "reports", multiple=True, type=click.Path(dir_okay=False), help="Write the clause report to PATH.json or PATH.md (repeatable).")
@click.option("--fast", is_flag=True, help="Few examples per clause, for quick local runs.")
@click.option("--max-examples", type=click.IntRange(min=1), help="Hypothesis examples per test.")
@click.option("--random", "randomize", is_flag=True, help="Draw new examples (default: the same examples every run).")
@click.option("--xfails", type=click.Path(exists=True, dir_okay=False), help="File of test ids expected to fail.")
@click.option("-v", "--verbose", count=True, help="Show each test (repeat for more).")
def check(target, profiles, reports, fast, max_examples, randomize, xfails, verbose) -> None:
    """Verify the compactor TARGET clause by clause (SPEC.md Part A).

    TARGET is module:attr (a factory taking conformance.Settings), a name registered
    in the entry-point group compaction_suite.compactors (e.g. "reference"), or
    cmd:<command> for a compactor in another language. Default: $COMPACTION_COMPACTOR.
    Exit status: 0 when every MUST clause of the claimed profiles holds, 1 when one
    fails, 2 on a usage error.
    """
    sys.exit(EXIT.get(pytest.main(pytest_args(target, profiles, reports, fast, max_examples, randomize, xfails, verbose)), 3))


def pytest_args(target, profiles, reports, fast, max_examples, randomize, xfails, verbose) -> list[str]:
    """The pytest command line that ``check`` runs."""
    ini = resources.files("conformance").joinpath("pytest.ini")
    args = ["--pyargs", "conformance.tests", "-c", str(ini)]
    args += ["--compactor", target] if target else []
    args += [f"--compaction-profile={p}" for p in profiles]
    args += [f"--compaction-report={r}" for r in reports]
    args += ["--compaction-fast"] if fast else []
    args += [f"--compaction-max-examples={max_examples}"] if max_examples else []
    args += ["--compaction-random"] if randomize else []
    args += [f"--compaction-xfails={xfails}"] if xfails else []
    args += ["-" + "v" * verbose] if verbose else []
    return args
