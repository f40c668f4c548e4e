"""The shared shape of the broken stores: the reference target with another history or store class."""

from __future__ import annotations

from typing import Any

from compaction_suite.reference.conformance_factory import StoreTarget, seed_000
from compaction_suite.reference.points import DurableHistory
from compaction_suite.reference.store import SQLiteStore


def target(settings: Any, history: type[DurableHistory] = DurableHistory, store: type[SQLiteStore] = SQLiteStore) -> StoreTarget:
    made = StoreTarget(seed_000(settings))
    made.store = lambda path: history(store(path), made.compactor)  # type: ignore[method-assign]
    return made
