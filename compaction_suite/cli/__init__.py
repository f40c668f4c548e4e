"""The ``compaction-suite`` command: the one place that depends on every part of the project.

Nothing imports this package. Each command is a module of its own that parses its options and
calls the library (``check``, ``reproduce``, ``record``, ``bench``, ``compact-store``,
``record-errors``, ``traces``, ``matrix``, ``prune-envs``), importing what it runs only when it runs; every one
keeps the contract of `contract` (SPEC Part C).
"""

from __future__ import annotations

import click

from .check import EXIT, check, check_args
from .contract import TRACEBACK, Group

__all__ = ["EXIT", "check_args", "main"]


@click.group(cls=Group)
@click.version_option(package_name="compaction-suite")
@click.option(TRACEBACK, is_flag=True, expose_value=False, help="Show the traceback of an error (accepted anywhere before a '--').")
def main() -> None:
    """Conformance and benchmark suite for LLM-agent context compaction.

    Exit status of every command: 0 when it found no problem, 1 when it did, 2 on a usage
    error or a bad input (said in one line, before any long work), 3 on an internal error.
    """


def _attach() -> None:
    """Commands that live in their own modules (each imports its heavy parts only when run)."""
    from .bench import bench
    from .matrix import matrix
    from .prune_envs import prune_envs
    from .record import record
    from .record_errors import record_errors
    from .reproduce import reproduce
    from .store import compact_store
    from .traces import traces

    for command in (check, reproduce, record, bench, matrix, prune_envs, compact_store, record_errors, traces):
        main.add_command(command)


_attach()
