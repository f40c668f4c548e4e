"""The reference strategies the cost benchmark compares, each as a factory of the plug-in contract.

Every factory takes `conformance.Settings` (whose clients point at the suite's summarizer TEST
DOUBLE during a benchmark) and returns a compactor, exactly like a third party's target, so
``compaction-suite bench replay`` treats the lineup and any ``TARGET`` the same way. The seed
presets keep their documented defaults; where a default is meant for another setting it is
named in the entry (seed 003's 4,096-token budget would compact on every call of these traces,
so its window is the 128k context of a gpt-4o-class model).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compaction_suite.reference import Compactor, IterationsOrTokens, MaskObservations, TokenBudget, TokenThreshold, presets


class NoCompaction:
    """The baseline: the history as it grows, never compacted."""

    profiles = frozenset({"core"})

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        return list(messages)


def _clients(settings: Any) -> dict[str, Any]:
    return {"client": settings.client, "async_client": settings.async_client}


def seed_000(settings: Any) -> Compactor:
    return presets.openai_azure(settings.model, **_clients(settings))


def seed_000_structured(settings: Any) -> Compactor:
    """Seed 001's structured summary (ids and tasks taken from the history) behind seed 000's trigger."""
    compactor = presets.structured_admin_chat(settings.model, **_clients(settings))
    compactor.trigger = IterationsOrTokens()
    return compactor


LINEUP: dict[str, Callable[[Any], Any]] = {
    "none (baseline)": lambda settings: NoCompaction(),
    "seed-000 summary (iterations>=8 or 80k; last 2 rounds)": seed_000,
    "seed-001 structured (>60k; last 10 messages)": lambda s: presets.structured_admin_chat(s.model, **_clients(s)),
    "seed-001 structured behind seed-000 trigger": seed_000_structured,
    "seed-003 researcher (60% of 128k; last 3 rounds)": lambda s: presets.researcher(s.model, max_tokens=128_000, **_clients(s)),
    "seed-004 keep last 50 messages (>20+5)": lambda settings: presets.message_counting(),
    "seed-004 summarize (keep 20, re-summarize after 5)": lambda s: presets.summarizing(s.model, **_clients(s)),
    "observation masking (last 10 rounds verbatim)": lambda settings: Compactor(
        MaskObservations(keep_rounds=10), IterationsOrTokens(threshold_iterations=1)
    ),
    "token budget (drop oldest rounds to 40k, when >60k)": lambda settings: Compactor(
        TokenBudget(40_000), TokenThreshold(60_000)
    ),
}
