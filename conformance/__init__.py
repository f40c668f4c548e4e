"""compaction-suite's conformance suite: verifies any context compactor, clause by clause.

``pytest --pyargs conformance --compactor TARGET`` or ``compaction-suite check TARGET``.
A factory receives a `Settings`; `compaction_suite.conformance.histories` holds the Hypothesis strategies.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["Settings"]


def __getattr__(name: str) -> Any:
    # Settings imports openai; loaded on first use so the pytest plugin stays light.
    if name == "Settings":
        from .settings import Settings

        return Settings
    raise AttributeError(name)
