"""The one contract every command keeps (SPEC Part C, "The command contract").

* A usage error or a bad input (a file that is missing, empty or not what the command reads, a
  place it cannot write, a target that cannot be imported or whose factory fails) exits 2 with
  one line naming it, checked before any long work starts.
* A run that finds a problem (a failing clause, a compactor that raised, a failure that still
  reproduces) exits 1; 0 means it found none.
* Anything else is a bug of the suite: one line and exit 3. No traceback reaches the user unless
  asked for with ``--traceback`` (anywhere before a ``--``).
* Nothing is written except under the paths the user named (`compaction_suite.inputs`).
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from compaction_suite.conformance.target import StartupFailed, TargetError
from compaction_suite.inputs import InputError, input_file, output_dir, output_file, text_file

OK, FOUND, BAD_INPUT, INTERNAL = 0, 1, 2, 3
"""The exit statuses of every command."""
TRACEBACK = "--traceback"
BAD_INPUTS: tuple[type[Exception], ...] = (InputError, TargetError, StartupFailed)
"""Library errors that are the user's input, not the suite's bug: exit 2 wherever they come from."""


class BadInput(click.UsageError):
    """A bad input, said in one line (exit 2)."""


class Group(click.Group):
    """The ``compaction-suite`` group: runs a command under the contract (module docstring)."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:  # fmt: skip
        given = list(sys.argv[1:] if args is None else args)
        show = _take(given, TRACEBACK)
        try:
            result = super().main(given, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as error:
            sys.exit(_fail(error, show, _usage_message(error), error.exit_code))
        except click.exceptions.Abort as error:
            sys.exit(_fail(error, show, "aborted", FOUND))
        except BAD_INPUTS as error:
            sys.exit(_fail(error, show, str(error), BAD_INPUT))
        except Exception as error:  # noqa: BLE001 - the contract: one line, the traceback on request
            hint = "" if show else f" (run again with {TRACEBACK} to see where)"
            sys.exit(_fail(error, show, f"internal error: {type(error).__name__}: {error}{hint}", INTERNAL))
        sys.exit(result if isinstance(result, int) else OK)


def _take(args: list[str], flag: str) -> bool:
    """Remove ``flag`` from ``args`` before any ``--``; whether it was there."""
    end = args.index("--") if "--" in args else len(args)
    found = flag in args[:end]
    if found:
        args.remove(flag)
    return found


def _usage_message(error: click.ClickException) -> str:
    message = error.format_message()
    context = getattr(error, "ctx", None)
    if isinstance(error, click.UsageError) and context is not None and not isinstance(error, BadInput):
        message += f" (see {context.command_path} --help)"
    return message


def _fail(error: BaseException, show: bool, message: str, status: int) -> int:
    if show:
        traceback.print_exception(error)
    click.echo(f"Error: {' '.join(message.split())}", err=True)
    return status


# --- options and parameter types every command shares ------------------------------------------


class _Checked(click.ParamType):
    """A path checked by `compaction_suite.inputs` when the command line is parsed."""

    def __init__(self, name: str, check: Callable[[str], Path]) -> None:
        self.name, self._check = name, check

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        try:
            return self._check(value)
        except InputError as error:
            self.fail(str(error), param, ctx)


INPUT_FILE = _Checked("file", input_file)
"""An existing, readable file (its content is checked by the command's library before any work)."""
TEXT_FILE = _Checked("file", text_file)
"""An existing file of UTF-8 text."""
OUTPUT_FILE = _Checked("file", output_file)
"""A file to write at the end: in an existing folder, never a directory."""
OUTPUT_DIR = _Checked("directory", output_dir)
"""A folder to create (with its parents) and write into at the end."""


def path_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--path DIR``: folders put on ``sys.path`` before the target is resolved (a package not installed)."""
    return click.option(
        "--path", "paths", multiple=True, metavar="DIR", type=click.Path(exists=True, file_okay=False),
        help="Put DIR on sys.path before resolving the target, for a package not installed (repeatable).",
    )(command)  # fmt: skip


def use_paths(paths: Sequence[str]) -> None:
    """Put ``paths`` first on ``sys.path`` (``--path``)."""
    sys.path[:0] = [str(Path(p).resolve()) for p in paths]


def finish(problems: int) -> None:
    """Exit 1 when the run found problems, else 0."""
    sys.exit(FOUND if problems else OK)
