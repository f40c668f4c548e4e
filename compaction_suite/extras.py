"""The optional extras, and the command that installs one wherever the package came from.

There is no release on PyPI, so ``pip install 'compaction-suite[bench]'`` cannot work: the hint
names the extra's own requirements, read from the installed package's metadata (pyproject.toml
is their one source), which install the same way from a checkout, a wheel or an archive.
"""

from __future__ import annotations

import shlex
from importlib import metadata

from packaging.requirements import Requirement

DISTRIBUTION = "compaction-suite"


def requirements(extra: str) -> list[str]:
    """The requirements the extra ``extra`` adds, as pip takes them (``pytest-benchmark>=4``)."""
    found = []
    for line in metadata.requires(DISTRIBUTION) or []:
        requirement = Requirement(line)
        if requirement.marker is not None and requirement.marker.evaluate({"extra": extra}) and not requirement.marker.evaluate({"extra": ""}):
            found.append(f"{requirement.name}{requirement.specifier}")
    return found


def install_hint(extra: str) -> str:
    """The command that installs ``extra``: its requirements, or ``-e '.[extra]'`` from a checkout."""
    return f"pip install {shlex.join(requirements(extra))} (from a checkout: pip install -e '.[{extra}]')"
