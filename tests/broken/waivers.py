"""Clauses of SPEC Part A without a negative control, each with the reason none can exist.

Every clause needs a control (a broken compactor in `compactors` or a broken store in
``broken_stores``) that it rejects, or an entry here; tests/test_clause_registry.py checks
both ways, so a waiver for a clause that has a control, or for no clause at all, fails too.
Today every clause has its control.
"""

from __future__ import annotations

WAIVERS: dict[str, str] = {}
