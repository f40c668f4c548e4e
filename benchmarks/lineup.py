"""The reference strategies the cost benchmark compares, each as a factory of the plug-in contract.

Every factory takes `conformance.Settings` (whose clients point at the suite's summarizer TEST
DOUBLE during a benchmark) and returns a compactor, exactly like a third party's target, so
``compaction-suite bench replay`` treats the lineup and any ``TARGET`` the same way. The seed
presets keep their documented defaults; where a default is meant for another setting it is
named in the entry (seed 003's 4,096-token budget would compact on every call of these traces,
so its window is the 128k context of a gpt-4o-class model). `lineup` builds the same entries
with a user's thresholds and kept rounds (`Tuning`, the options of ``bench replay``). Every
summarizer an entry builds takes the operator's bound on a summary's length,
``Settings.summarizer_max_tokens`` (``bench replay --summarizer-max-tokens``, SPEC PROBE-4).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from compaction_suite.reference import (
    CODING_AGENT_TASK_LISTS,
    CharsPerFour,
    Compactor,
    EntityRule,
    IterationsOrTokens,
    MaskAndSummarize,
    MaskObservations,
    Summarize,
    Summarizer,
    TaskListTool,
    TokenBudget,
    TokenThreshold,
    presets,
)
from compaction_suite.reference.extraction import DEFAULT_RULE
from compaction_suite.reference.summarizer import STRUCTURED_PROMPT

from .prices import DEFAULT_PRICINGS, Pricing


class NoCompaction:
    """The baseline: the history as it grows, never compacted, in whatever wire format it comes."""

    profiles = frozenset({"core"})
    format_free = True
    """It returns what it gets, whatever its shape: the replay hands it a trace in its own format."""

    def compact(self, history: Any, *, iteration: int) -> Any:
        return list(history) if isinstance(history, list) else dict(history)  # an Anthropic request is a dict


@dataclass(frozen=True)
class Tuning:
    """What a user of ``bench replay`` may set on the command line; None keeps each entry's default.

    ``max_context_tokens`` is every token trigger's threshold (seed 003's window; the token
    budget drops to two thirds of it); ``threshold_iterations`` seed 000's iteration trigger;
    ``keep_rounds`` every strategy that keeps a tail of rounds (seeds 000 and 003, masking,
    the hybrid; seeds 001 and 004 keep messages). ``entity_rule`` and ``task_lists`` tell the
    structured strategies where ids and the task list are (SPEC ENT-1, ENT-2).
    """

    max_context_tokens: int | None = None
    threshold_iterations: int | None = None
    keep_rounds: int | None = None
    entity_rule: EntityRule = DEFAULT_RULE
    task_lists: tuple[TaskListTool, ...] = CODING_AGENT_TASK_LISTS


def _k(tokens: int) -> str:
    """``80k`` for round thousands, else the number itself (``1,500``)."""
    return f"{tokens // 1000}k" if tokens >= 1000 and tokens % 1000 == 0 else f"{tokens:,}"


def _clients(settings: Any) -> dict[str, Any]:
    return {"client": settings.client, "async_client": settings.async_client}


def _summarizer(settings: Any) -> Summarizer:
    return _bound(Summarizer(settings.model, prompt=STRUCTURED_PROMPT, **_clients(settings)), settings)


def _bound(summarizer: Summarizer, settings: Any) -> Summarizer:
    """``summarizer`` with the operator's bound on a summary's length (``settings.summarizer_max_tokens``,
    SPEC PROBE-4); a bound of the preset's own (seed 003's 300 tokens) stays when it is the smaller."""
    bound = settings.summarizer_max_tokens
    if bound is not None:
        summarizer.max_tokens = bound if summarizer.max_tokens is None else min(bound, summarizer.max_tokens)
    return summarizer


def _bounded(compactor: Compactor, settings: Any) -> Compactor:
    """``compactor`` with its summarizer bounded as `_bound` says (a preset builds its own summarizer)."""
    if isinstance(compactor.strategy, Summarize):
        _bound(compactor.strategy.summarizer, settings)
    return compactor


def _where(tuning: Tuning) -> dict[str, Any]:
    return {"entity_rule": tuning.entity_rule, "task_lists": tuning.task_lists}


def seed_000(settings: Any, tuning: Tuning = Tuning()) -> Compactor:
    """Seed 000's summary (PRESET-000) with the tuning's thresholds and kept rounds."""
    compactor = presets.openai_azure(
        settings.model,
        threshold_iterations=tuning.threshold_iterations or 8,
        max_context_tokens=tuning.max_context_tokens or 80_000,
        keep_recent_rounds=tuning.keep_rounds or 2,
        **_clients(settings),
    )
    return _bounded(compactor, settings)


def seed_001(settings: Any, tuning: Tuning = Tuning()) -> Compactor:
    """Seed 001's structured summary (PRESET-001) over the tuning's token threshold."""
    threshold = tuning.max_context_tokens or 60_000
    compactor = presets.structured_admin_chat(settings.model, threshold_tokens=threshold, **_where(tuning), **_clients(settings))
    return _bounded(compactor, settings)


def seed_000_structured(settings: Any, tuning: Tuning = Tuning()) -> Compactor:
    """Seed 001's structured summary (ids and tasks taken from the history) behind seed 000's trigger."""
    compactor = presets.structured_admin_chat(settings.model, **_where(tuning), **_clients(settings))
    compactor.trigger = IterationsOrTokens(tuning.threshold_iterations or 8, tuning.max_context_tokens or 80_000)
    return _bounded(compactor, settings)


def mask_and_summarize(settings: Any, tuning: Tuning = Tuning()) -> Compactor:
    """STRAT-11's hybrid, asked at every call (it masks cheaply; it summarizes only what grew large)."""
    strategy = MaskAndSummarize(_summarizer(settings), keep_rounds=tuning.keep_rounds or 2, **_where(tuning))
    return Compactor(strategy, IterationsOrTokens(threshold_iterations=1, max_context_tokens=tuning.max_context_tokens or 80_000))


def cache_aware(settings: Any, tuning: Tuning = Tuning(), *, pricing: Pricing = DEFAULT_PRICINGS[0]) -> Compactor:
    """STRAT-12's cache-aware compactor, its trigger set by the pricing's write-to-read price ratio (RT-8)."""
    compactor = presets.cache_aware(
        settings.model,
        write_to_read=pricing.write_to_read,
        summarize_to_read=pricing.summarize_to_read,
        overhead_tokens=pricing.summary_overhead(CharsPerFour().estimate([{"role": "system", "content": STRUCTURED_PROMPT}])),
        keep_rounds=tuning.keep_rounds or 2, **_where(tuning), **_clients(settings)
    )
    return _bounded(compactor, settings)


def cache_aware_name(pricing: Pricing, keep_rounds: int | None = None) -> str:
    """The lineup's name for the cache-aware entry tuned to ``pricing``."""
    return (
        f"{CACHE_AWARE} for {pricing.label} (re-reads >= {pricing.write_to_read - 1:.3g}x rewritten + {pricing.summarize_to_read:.2g}x grown; "
        f"last {keep_rounds or 2} rounds)"
    )


def lineup(tuning: Tuning = Tuning(), pricings: Sequence[Pricing] = DEFAULT_PRICINGS) -> dict[str, Callable[[Any], Any]]:
    """The reference strategies, each named with the thresholds it runs with; the cache-aware
    one once per pricing, tuned to its prices."""
    m, t, k = tuning.max_context_tokens, tuning.threshold_iterations, tuning.keep_rounds
    m000, t000, m001, window = m or 80_000, t or 8, m or 60_000, m or 128_000
    k000, k003, kmask, khybrid = k or 2, k or 3, k or 10, k or 2
    budget = (2 * m) // 3 if m else 40_000
    return {
        BASELINE: lambda s: NoCompaction(),
        f"seed-000 summary (iterations>={t000} or {_k(m000)}; last {k000} rounds)": partial(seed_000, tuning=tuning),
        f"seed-001 structured (>{_k(m001)}; last 10 messages)": partial(seed_001, tuning=tuning),
        f"seed-001 structured behind seed-000 trigger ({t000} or {_k(m000)})": partial(seed_000_structured, tuning=tuning),
        f"seed-003 researcher (60% of {_k(window)}; last {k003} rounds)": lambda s: _bounded(
            presets.researcher(s.model, max_tokens=window, keep_rounds=k003, **_clients(s)), s
        ),
        "seed-004 keep last 50 messages (>20+5)": lambda s: presets.message_counting(),
        "seed-004 summarize (keep 20, re-summarize after 5)": lambda s: _bounded(presets.summarizing(s.model, **_clients(s)), s),
        f"observation masking (last {kmask} rounds verbatim)": lambda s: Compactor(
            MaskObservations(keep_rounds=kmask), IterationsOrTokens(threshold_iterations=1)
        ),
        f"token budget (drop oldest rounds to {_k(budget)}, when >{_k(m001)})": lambda s: Compactor(
            TokenBudget(budget), TokenThreshold(m001)
        ),
        f"{HYBRID} (last {khybrid} rounds; summary over 300 older tokens)": partial(mask_and_summarize, tuning=tuning),
        **{cache_aware_name(p, k): partial(cache_aware, tuning=tuning, pricing=p) for p in pricings},
    }


BASELINE = "none (baseline)"
HYBRID = "mask + structured summary"
"""The strategy of SPEC STRAT-11, held against the ceiling in the committed baseline."""
CACHE_AWARE = "cache-aware"
"""The strategy of SPEC STRAT-12, held against the cache-aware ceiling of its pricing."""

LINEUP: dict[str, Callable[[Any], Any]] = lineup()
"""The lineup with every entry's defaults."""
