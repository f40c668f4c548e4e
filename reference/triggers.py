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
