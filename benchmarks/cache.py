"""What each provider's prompt cache reads and writes on a model call (issue 23; SPEC CACHE-1..4).

Both providers cache the *prefix* of a prompt: a request that starts with the same content as a
recent one reads that part from the cache. They differ in what they cache and how it is billed:

* **OpenAI** caches automatically (its prompt-caching guide): a prompt of at least 1,024 tokens
  reads the longest prefix it shares with a recent request, in steps of 128 tokens ("the number of
  cached tokens ... will always fall within the following sequence: 1024, 1152, 1280, 1408");
  writing costs nothing extra. `openai_read`.
* **Anthropic** caches what a request marks (its prompt-caching page): a ``cache_control``
  breakpoint on a block caches the prefix up to and including it, once that prefix reaches the
  model's minimum (1,024 tokens for Sonnet 4.5). On a later request, from each breakpoint the API
  checks that block and the 19 before it ("a 20-block lookback window") for a cached prefix, and
  bills: cache reads for the highest hit ``A``, cache writes (1.25x input) from ``A`` to the last
  breakpoint ``C``, plain input after ``C``; at most 4 breakpoints. `anthropic_use`.

Where the breakpoints are: the ones a compactor's output carries (``cache_control`` on a message,
an Anthropic block or a content part, as Anthropic-bound gateways read it from chat messages),
plus the two an agent loop sets as Anthropic documents for multi-turn conversations: the end of
the system prompt and the end of the request (the "automatic caching" mode moves that last one
forward as the conversation grows). More than 4 in all: the 4 last are kept.

What is in the cache: what the *previous* request of the run left there (SPEC CACHE-2). An agent
calls its model every few seconds, so its previous request is always within the cache's lifetime
(5 minutes by default for both providers, refreshed by every hit); the lifetime is not modelled,
and neither are older requests, whose prefixes a compactor that moves forward never returns to.
A prefix is counted in whole units (messages, items): the leading tokens a rewritten message may
still share with its old self are not counted, so OpenAI's reads are a lower bound by less than
one message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from compaction_suite.message import SYSTEM_ROLES
from compaction_suite.reference.tokens import REPLY_PRIMING

from .prices import ANTHROPIC, OPENAI, Pricing

OPENAI_STEP = 128
"""OpenAI's cache hits come in 128-token increments."""
LOOKBACK_BLOCKS = 20
"""Anthropic checks a breakpoint's block and the 19 before it."""
MAX_BREAKPOINTS = 4


class CacheUse(NamedTuple):
    """Input tokens of one call read from the cache and written to it (the rest is plain input)."""

    read: int
    written: int


def openai_read(prefix_tokens: int, min_tokens: int = 1024) -> int:
    """Tokens OpenAI reads from its cache for a prompt sharing ``prefix_tokens`` with a recent one."""
    if prefix_tokens < min_tokens:
        return 0
    return prefix_tokens - prefix_tokens % OPENAI_STEP


Position = Callable[[int], int]
"""Cumulative tokens (or blocks) of a request's first ``p`` units."""


def anthropic_use(
    tokens: Position, blocks: Position, marks: Sequence[int], shared: int, entries: frozenset[int], min_tokens: int
) -> tuple[CacheUse, frozenset[int]]:
    """Anthropic's bill for a request, and the cache entries it leaves (module docstring).

    ``marks`` are the request's breakpoints (unit counts: a mark ``m`` ends the prefix of its first
    ``m`` units); ``shared`` how many leading units it has in common with the previous request,
    whose cached prefixes are ``entries`` (unit counts). A hit is an entry within the shared
    prefix, at or at most 19 blocks before one of the marks; the highest hit ``A`` is read, the
    tokens from ``A`` to the last mark whose prefix is cacheable are written.
    """
    hit = 0
    for mark in marks:
        for entry in entries:
            if hit < entry <= min(mark, shared) and blocks(mark) - blocks(entry) < LOOKBACK_BLOCKS:
                hit = entry
    cacheable = [m for m in marks if tokens(m) >= min_tokens]
    last = max(cacheable, default=0)
    written = tokens(last) - tokens(hit) if last > hit else 0
    left = frozenset(cacheable) | ({hit} if hit else frozenset())
    return CacheUse(tokens(hit), written), left


def blocks(unit: dict[str, Any]) -> int:
    """The content blocks a unit is sent as: its content parts (or one for text), one per tool call."""
    content = unit.get("content")
    count = len(content) if isinstance(content, list) else int(bool(content))
    return max(count + len(unit.get("tool_calls") or ()), 1)


def marked(unit: dict[str, Any]) -> bool:
    """Whether the unit carries a ``cache_control`` breakpoint, on itself or on a content block."""
    content = unit.get("content")
    parts = content if isinstance(content, list) else ()
    return "cache_control" in unit or any(isinstance(p, dict) and "cache_control" in p for p in parts)


def breakpoints(units: Sequence[dict[str, Any]], marks: Sequence[bool]) -> tuple[int, ...]:
    """The request's breakpoints: the units it marks, the end of its leading system units and its
    end (the agent loop's, as Anthropic documents for multi-turn conversations); the last 4."""
    system = next((i for i, u in enumerate(units) if u.get("role") not in SYSTEM_ROLES), len(units))
    points = {i + 1 for i, m in enumerate(marks) if m} | {system, len(units)}
    return tuple(sorted(points - {0}))[-MAX_BREAKPOINTS:]


@dataclass
class Meter:
    """The cache use of each call of one replayed run, for each pricing (module docstring)."""

    pricings: Sequence[Pricing]
    _entries: dict[str, frozenset[int]] = field(default_factory=dict)
    _memo: dict[int, tuple[dict[str, Any], int, bool]] = field(default_factory=dict)

    def use(self, units: Sequence[dict[str, Any]], shared: int, unit_tokens: Callable[[dict[str, Any]], int]) -> dict[str, CacheUse]:
        """Each pricing's use for a request of ``units``, ``shared`` of them leading the previous one."""
        tokens = [0]
        for unit in units:
            tokens.append(tokens[-1] + unit_tokens(unit))
        facts = [self._facts(u) for u in units]
        counts = [0]
        for _, n, _ in facts:
            counts.append(counts[-1] + n)
        marks = breakpoints(units, [m for _, _, m in facts])
        out = {}
        for p in self.pricings:
            if p.provider == OPENAI:
                out[p.label] = CacheUse(openai_read(tokens[shared], p.agent.min_cached_tokens), 0)
            elif p.provider == ANTHROPIC:
                key = p.label
                out[key], self._entries[key] = anthropic_use(
                    tokens.__getitem__, counts.__getitem__, marks, shared, self._entries.get(key, frozenset()), p.agent.min_cached_tokens
                )
        return out

    def _facts(self, unit: dict[str, Any]) -> tuple[dict[str, Any], int, bool]:
        held = self._memo.get(id(unit))
        if held is None or held[0] is not unit:
            held = (unit, blocks(unit), marked(unit))
            self._memo[id(unit)] = held  # holding the unit keeps its id from being reused
        return held


def input_tokens(prefix_tokens: int, units: int) -> int:
    """A request's input tokens from its units' tokens (the reply priming added once, SPEC TOK-2)."""
    return prefix_tokens + REPLY_PRIMING if units else 0
