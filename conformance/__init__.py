"""compaction-suite's conformance suite: verifies any context compactor, clause by clause.

``pytest --pyargs conformance --compactor TARGET`` or ``compaction-suite check TARGET``.
A factory receives a `Settings`; `histories` holds the Hypothesis strategies.
"""

from .settings import Settings

__version__ = "0.1.0"
__all__ = ["Settings"]
