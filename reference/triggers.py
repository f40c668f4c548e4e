"""Triggers: when to compact (SPEC RT-1..RT-7).

A trigger looks at an `Observation` of the history between two rounds and
answers with the reason it fires, or ``None``. Reasons end up in the event,
so an operator can see *why* a compaction happened.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol


@dataclass(frozen=True)
class Observation:
    """What a trigger may look at, gathered by the compactor between rounds."""

    iterations: int
    """Loop iterations since the last compaction (SPEC RT-1 decision)."""
    estimated_tokens: int
    """The compactor's estimate for the whole history (chars/4 by default)."""
    messages: int
    """Non-system messages in the history."""
    observed_prompt_tokens: int | None = None
    """``usage.prompt_tokens`` of the last model response, if one was reported."""
    rewritten_tokens: int = 0
    """What the last compaction left after the leading system messages (0 before the first: a run
    starts as if compacted down to its system messages): what a compaction writes anew, its system
    messages staying cached (RT-8)."""
    grown_tokens: int = 0
    """What the history grew by since then: about what a compaction now would give the summarizer (RT-8)."""
    resent_tokens: int = 0
    """Summed over the compaction points since then, what each history held beyond what that
    compaction left: what the provider re-read from its prompt cache that a compaction would have spared (RT-8)."""


class Trigger(Protocol):
    def check(self, seen: Observation) -> str | None:
        """The reason to compact now, or None."""
        ...


@dataclass(frozen=True)
class IterationsOrTokens:
    """Seed 000: ``iterations >= T OR estimated tokens >= M``, both inclusive (RT-1)."""

    threshold_iterations: int = 8
    max_context_tokens: int = 80_000

    def check(self, seen: Observation) -> str | None:
        if seen.iterations >= self.threshold_iterations:
            return f"iterations {seen.iterations} >= {self.threshold_iterations}"
        if seen.estimated_tokens >= self.max_context_tokens:
            return f"estimated tokens {seen.estimated_tokens} >= {self.max_context_tokens}"
        return None


@dataclass(frozen=True)
class TokenThreshold:
    """Seed 001: the estimate exceeds a fixed limit (strictly), e.g. 60k (RT-5)."""

    limit: int = 60_000

    def check(self, seen: Observation) -> str | None:
        if seen.estimated_tokens > self.limit:
            return f"estimated tokens {seen.estimated_tokens} > {self.limit}"
        return None


@dataclass(frozen=True)
class MessageCount:
    """Seed 004: the message count exceeds ``target + threshold`` (RT-2).

    The gap between the two is hysteresis: after compacting down to about
    ``target`` messages, ``threshold`` new ones may arrive before it fires again.
    """

    target: int = 20
    threshold: int = 5

    def check(self, seen: Observation) -> str | None:
        if seen.messages > self.target + self.threshold:
            return f"messages {seen.messages} > {self.target} + {self.threshold}"
        return None


@dataclass(frozen=True)
class ObservedTokenBudget:
    """Seed 004: last observed prompt tokens exceed ``target + threshold`` (RT-3).

    Uses usage from prior turns only; it never fires before one was observed.
    """

    target: int
    threshold: int = 0

    def check(self, seen: Observation) -> str | None:
        observed = seen.observed_prompt_tokens
        if observed is not None and observed > self.target + self.threshold:
            return f"observed prompt tokens {observed} > {self.target} + {self.threshold}"
        return None


@dataclass(frozen=True)
class ContextFraction:
    """Seeds 003 and 004: tokens exceed a fraction of the context window (RT-4).

    ``source="estimate"`` is seed 003 (chars/4 over 60% of max_tokens);
    ``source="observed"`` is seed 004's context-window trigger.
    """

    window: int
    fraction: float = 0.6
    source: Literal["estimate", "observed"] = "estimate"

    @property
    def limit(self) -> int:
        return int(self.window * self.fraction)

    def check(self, seen: Observation) -> str | None:
        tokens = seen.estimated_tokens if self.source == "estimate" else seen.observed_prompt_tokens
        if tokens is not None and tokens > self.limit:
            return f"{self.source} tokens {tokens} > {self.fraction:.0%} of {self.window}"
        return None


@dataclass(frozen=True)
class CacheBreakEven:
    """Compact when keeping the grown prefix has cost, in cache reads, what a compaction costs (RT-8).

    Between compactions a history only grows, so the provider's prompt cache serves all of it but
    the newest round, at its read price per token. A compaction instead writes what it keeps after
    the system messages anew (at the write price, less the read it replaces: at least the last
    ``keep_rounds`` rounds, estimated from the growth per iteration, and at least what the last
    compaction wrote), and pays the summarizer to read what it folds and to answer. Each call since
    the last compaction re-read what the history grew by; once those re-reads, summed, have cost as
    much as a compaction now would, the compaction pays for itself: rent-or-buy, which for a
    steadily growing history is also the cheapest cycle (the economic order quantity). In tokens,
    it fires when

        resent >= (write_to_read - 1) * rewritten + summarize_to_read * grown + overhead_tokens

    with the provider's price ratios: ``write_to_read`` a cache write over a cache read (4 for
    GPT-4.1: writes are billed as input, $2.00, reads $0.50; 12.5 for Claude: 1.25x and 0.1x input),
    ``summarize_to_read`` the summarizer's input price over the agent's cache read (0.3 for GPT-4o
    mini summarizing for GPT-4.1), ``overhead_tokens`` the summarizer call's own cost (its
    instructions and its answer) in cache-read tokens.
    """

    write_to_read: float
    summarize_to_read: float = 0.0
    overhead_tokens: float = 0.0
    keep_rounds: int = 2

    def check(self, seen: Observation) -> str | None:
        per_round = seen.grown_tokens / seen.iterations if seen.iterations > 0 else 0
        rewritten = max(seen.rewritten_tokens, self.keep_rounds * per_round)
        due = (self.write_to_read - 1) * rewritten + self.summarize_to_read * seen.grown_tokens + self.overhead_tokens
        if seen.resent_tokens > 0 and seen.resent_tokens >= due:
            return f"tokens re-read since the last compaction {seen.resent_tokens} >= what compacting now costs in reads ({due:.0f})"
        return None


class AnyOf:
    """Fires when any child fires; the first child's reason wins (RT-6)."""

    def __init__(self, *triggers: Trigger) -> None:
        self.triggers = triggers

    def check(self, seen: Observation) -> str | None:
        return next((r for t in self.triggers if (r := t.check(seen)) is not None), None)


def decide(trigger: Trigger, seen: Observation, *, skip: bool = False, force: bool = False) -> str | None:
    """Apply the per-run controls around a trigger; ``skip`` wins over ``force`` (RT-7)."""
    if skip:
        return None
    if force:
        return "forced for this run"
    return trigger.check(seen)
