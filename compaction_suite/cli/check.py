"""``compaction-suite check``: the conformance suite against one compactor, run by pytest.

The options are `compaction_suite.conformance.options`, defined once for this command and the
pytest plugin; the run itself is the plugin's (`compaction_suite.conformance.plugin`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib import resources
from typing import Any

import click
import pytest

from compaction_suite.conformance.options import OPTIONS, Option
from compaction_suite.conformance.options import pytest_args as options_to_pytest

from .contract import OUTPUT_FILE, TEXT_FILE

EXIT: dict[int, int] = {pytest.ExitCode.OK: 0, pytest.ExitCode.TESTS_FAILED: 1, pytest.ExitCode.USAGE_ERROR: 2, pytest.ExitCode.NO_TESTS_COLLECTED: 2}
"""pytest's exit codes as the command contract's; anything else (INTERNALERROR, interrupted) is 3."""


def _check_options(command: Callable[..., None]) -> Callable[..., None]:
    """The options of `compaction_suite.conformance.options`, as click options of ``check``."""
    for option in reversed(OPTIONS):
        command = click.option(f"--{option.name}", option.dest, help=option.help[:1].upper() + option.help[1:] + ".", **_click(option))(command)
    return command


def _click(option: Option) -> dict[str, Any]:
    if option.kind == "flag":
        return {"is_flag": True}
    kind = {
        "int": click.IntRange(min=1), "path": TEXT_FILE, "dir": click.Path(exists=True, file_okay=False),
        "choice": click.Choice(option.choices), "output": OUTPUT_FILE,
    }.get(option.kind, click.STRING)  # fmt: skip
    return {"type": kind, "multiple": option.multiple, "metavar": option.metavar}


@click.command()
@click.argument("target", required=False)
@_check_options
@click.option("-v", "--verbose", count=True, help="Show each test (repeat for more).")
@click.argument("pytest_args", nargs=-1, type=click.UNPROCESSED)
def check(target: str | None, verbose: int, pytest_args: tuple[str, ...], **values: Any) -> None:
    """Verify the compactor TARGET clause by clause (SPEC.md Part A).

    TARGET is module:attr (a factory taking compaction_suite.conformance.Settings), a name
    registered in the entry-point group compaction_suite.compactors (e.g. "reference"), or
    cmd:<command> for a compactor in another language. Default: $COMPACTION_COMPACTOR.

    A package that is not installed is found with --path DIR. Arguments after "--" go to
    pytest as they are (e.g. -- --junitxml=results.xml).

    Exit status: 0 when every MUST clause of the claimed profiles holds, 1 when one
    fails, 2 on a usage error or when the target breaks the plug-in contract at start.
    """
    given = {o.name: values[o.dest] for o in OPTIONS}
    sys.exit(EXIT.get(pytest.main(check_args(target, given, verbose, pytest_args), plugins=[ShortPaths()]), 3))


class ShortPaths:
    """Progress and summary lines name the suite's test files from the installed package's own
    folder (``tests/test_core.py``), not by a path from the working directory into site-packages."""

    @pytest.hookimpl(trylast=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.startpath = config.rootpath
        config.cwd_relative_nodeid = lambda nodeid: nodeid  # type: ignore[method-assign]


def check_args(target: str | None, given: dict[str, Any], verbose: int = 0, extra: tuple[str, ...] = ()) -> list[str]:
    """The pytest command line that ``check`` runs."""
    ini = resources.files("compaction_suite.conformance").joinpath("pytest.ini")
    args = ["--pyargs", "compaction_suite.conformance.tests", "-c", str(ini)]
    args += ["--compactor", target] if target else []
    args += options_to_pytest(given)
    args += ["-" + "v" * verbose] if verbose else []
    return args + list(extra)
