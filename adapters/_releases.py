"""The installed release of a framework, and the one-line contract error for a release an adapter
cannot drive (agreed interface 3: exit 2 naming adapter, distribution and version, never a
framework finding). Standard library only.

Each adapter declares ``SUPPORTED`` (distribution -> PEP 440 specifier); the range check itself is
the version machinery's (``adapters/_common.py``). This module holds what an adapter's *shims* need:
the installed version as a comparable tuple, and `CannotDrive` when a path needs a hook the installed
release lacks (e.g. Strands' proactive compression before 1.40).
"""

from __future__ import annotations

import re
from importlib import metadata


class CannotDrive(RuntimeError):
    """The installed release lacks what this adapter path drives: a contract error, not a finding."""

    def __init__(self, adapter: str, distribution: str, why: str) -> None:
        super().__init__(f"adapter {adapter} cannot drive {distribution} {installed(distribution) or '(not installed)'}: {why}")


def installed(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def release(distribution: str) -> tuple[int, ...]:
    """The installed release as a tuple of its leading numbers (``1.3.0a2`` -> ``(1, 3, 0)``); ``()`` when absent."""
    found = installed(distribution)
    if found is None:
        return ()
    return tuple(int(n) for n in re.findall(r"\d+", found.split("a")[0].split("b")[0].split("rc")[0])[:3])
