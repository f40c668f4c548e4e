"""The factories the conformance suite calls (entry points ``reference``,
``reference-structured`` and ``reference-store`` in the group ``compaction_suite.compactors``).

They read only plain attributes of ``conformance.Settings``, so the reference
does not import the suite.
"""

from __future__ import annotations

from typing import Any

from .compactor import Compactor
from .points import DurableHistory
from .presets import openai_azure, structured_admin_chat
from .store import SQLiteStore
from .summarizer import DEFAULT_PROMPT, STRUCTURED_PROMPT
from .triggers import IterationsOrTokens

SUMMARIZER_WINDOW = 8_000
"""The context window these factories give the summary model (SUMZ-5), declared to the suite,
which answers a request over it as the provider does (SPEC WIN-1). Small, so the histories larger
than it stay cheap to draw; a deployment passes its model's own (gpt-4o-mini: 128,000)."""


def declaring_trigger(compactor: Compactor, settings: Any) -> Compactor:
    """``compactor`` declaring the token half of its trigger: it compacts once the history holds
    ``max_context_tokens`` by chars/4 (RT-1, TOK-1), which the suite checks (SPEC FIRE-1, FIRE-2).
    The iteration half is no size of the history, so it is not declared. It declares its summary
    model's window too (SPEC WIN-1)."""
    compactor.capabilities = {"trigger": {"tokens": settings.max_context_tokens}, "summarizer_window": SUMMARIZER_WINDOW}
    return compactor


def seed_000(settings: Any) -> Compactor:
    """Seed 000's compactor with the suite's thresholds, model, clients and prompt."""
    compactor = openai_azure(
        settings.model,
        client=settings.client,
        async_client=settings.async_client,
        threshold_iterations=settings.threshold_iterations,
        max_context_tokens=settings.max_context_tokens,
        keep_recent_rounds=settings.keep_recent_rounds,
        prompt=settings.summary_prompt or DEFAULT_PROMPT,
        summarizer_window=SUMMARIZER_WINDOW,
    )
    return declaring_trigger(compactor, settings)


def seed_001(settings: Any) -> Compactor:
    """Seed 001's structured summary behind seed 000's trigger, so the trigger clauses apply too."""
    compactor = structured_admin_chat(
        settings.model,
        client=settings.client,
        async_client=settings.async_client,
        prompt=settings.summary_prompt or STRUCTURED_PROMPT,
        summarizer_window=SUMMARIZER_WINDOW,
    )
    compactor.trigger = IterationsOrTokens(settings.threshold_iterations, settings.max_context_tokens)
    return declaring_trigger(compactor, settings)


class StoreTarget:
    """Seed 000's compactor plus ``store(path)``: the storage profile's target (entry point
    ``reference-store``). Everything else (``compact``, ``last_event``…) is the compactor's."""

    def __init__(self, compactor: Compactor) -> None:
        self.compactor = compactor
        self.profiles = compactor.profiles | {"storage"}

    def store(self, path: str) -> DurableHistory:
        """A durable history in the SQLite file ``path``, compacted by this target's compactor."""
        return DurableHistory(SQLiteStore(path), self.compactor)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.compactor, name)


def seed_000_store(settings: Any) -> StoreTarget:
    """Seed 000's compactor behind the embedded SQLite store (SPEC storage profile, DUR-*)."""
    return StoreTarget(seed_000(settings))
