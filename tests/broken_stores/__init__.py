"""Deliberately broken durable stores: negative controls for the storage profile.

Each module's ``factory`` is the reference store target with one behaviour broken (its
docstring names the defect); ``compaction-suite check broken_stores.<name>:factory
--profile storage`` (with ``tests/`` on the path) must fail the clause named in its
``EXPECTED``, with a reason matching its ``REASON``.
"""

from __future__ import annotations

import importlib
import pkgutil

from broken.compactors import Control


def controls() -> dict[str, Control]:
    """Every broken store by module name, as a `Control` of the storage profile (or the profiles its
    ``PROFILES`` names: the broken sessions, profile ``session``)."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            module = importlib.import_module(f"{__name__}.{info.name}")
            found[info.name] = Control(module.EXPECTED, getattr(module, "PROFILES", ("storage",)), module.REASON)
    return found
