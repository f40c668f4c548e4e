"""The cache-aware ceiling: the cheapest bill an ideal compactor can reach on a trace (issue 23; SPEC CEIL-1..4).

The token ceiling (`replay.ceilings`) compacts at every model call: system messages, a
150-token summary and the last K rounds. With a prompt cache that is not the cheapest way: a
compaction rewrites everything after the system messages, so the next call pays full price (or
more: Anthropic bills cache writes at 1.25x) for what the cache would have served at a tenth or a
quarter. The ideal compactor here keeps the same shape but chooses *when* to compact:

* at a compaction before call ``s`` its context is the system messages, a 150-token summary and
  the last K non-system rounds; until its next compaction, the rounds that follow are appended;
* a compaction folds at least one round not folded yet (a second summary of the same rounds would
  only cost more), and never happens before the first call, as in every replay;
* each call is billed by the provider's rules (`cache`: OpenAI's automatic prefix cache, or
  Anthropic's breakpoints at the end of the system messages and of the request, with the 20-block
  lookback), against what the previous call left in the cache; output tokens are the trace's;
* each compaction also pays its summarizer call (``summarizer=True``, the default): reading the
  previous summary and the rounds it folds, writing 150 tokens, at the summarizer model's prices
  without a cache.

The cheapest schedule is found exactly by dynamic programming over the calls: the state is the
call at which the current summary was made (or none yet); what the cache holds at a compaction
depends only on the system messages, so the cost of the calls between two compactions depends on
those two alone. O(calls²) call prices per trace.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compaction_suite.conformance import formats

from .cache import CacheUse, anthropic_use, blocks, openai_read
from .prices import OPENAI, Pricing
from .replay import ASSISTANT_KINDS, SUMMARY_TOKENS, _Tokens
from .views import View

REPLY_PRIMING = 3


@dataclass(frozen=True)
class Shape:
    """What the ideal compactor needs of a trace (cumulative sums, index 0 = nothing)."""

    system_tokens: tuple[int, ...]
    system_blocks: tuple[int, ...]
    round_tokens: tuple[int, ...]
    """Over the non-system rounds, in order."""
    round_blocks: tuple[int, ...]
    calls: tuple[tuple[int, int, int], ...]
    """Per model call: (system units before it, non-system rounds before it, its output tokens)."""


def shape(history: Any, trace_format: str = formats.CHAT) -> Shape:
    """The trace's `Shape`, measured as the replay measures it (exact o200k tokens, `cache.blocks`)."""
    view = View(trace_format)
    tokens = _Tokens(view)
    sys_t, sys_b, r_t, r_b = [0], [0], [0], [0]
    calls = []
    for round_ in view.rounds(history):
        if round_.kind in ASSISTANT_KINDS:
            answer = sum(map(tokens.message, round_.units[: round_.answer]))
            calls.append((len(sys_t) - 1, len(r_t) - 1, answer))
        units, n = sum(map(tokens.message, round_.units)), sum(map(blocks, round_.units))
        if round_.kind == "system":
            sys_t.append(sys_t[-1] + units)
            sys_b.append(sys_b[-1] + n)
        else:
            r_t.append(r_t[-1] + units)
            r_b.append(r_b[-1] + n)
    return Shape(tuple(sys_t), tuple(sys_b), tuple(r_t), tuple(r_b), tuple(calls))


@dataclass(frozen=True)
class Schedule:
    """A schedule of compactions (1-based call numbers) and its bill, with and without the cache."""

    compactions: tuple[int, ...]
    cost_with_cache: float
    cost_no_cache: float


class Ideal:
    """The ideal compactor's calls on one trace, for K kept rounds and one pricing (module docstring)."""

    def __init__(self, shape: Shape, keep_rounds: int, pricing: Pricing, *, summarizer: bool = True) -> None:
        self.s, self.k, self.pricing, self.summarizer = shape, keep_rounds, pricing, summarizer

    def tail(self, call: int) -> int:
        """The first non-system round a compaction before ``call`` keeps (1-based call)."""
        return max(self.s.calls[call - 1][1] - self.k, 0)

    def can_compact(self, call: int, tail: int) -> bool:
        """A compaction before ``call`` folds a round the current summary (kept from ``tail``) does not."""
        return call > 1 and self.tail(call) > tail

    def price(self, tail: int, call: int, shared: int, entries: frozenset[int], *, cache: bool = True) -> tuple[float, frozenset[int]]:
        """USD of ``call`` when the current context keeps rounds from ``tail`` (with a summary when
        ``tail > 0``), shares ``shared`` leading units with the previous call, whose cache left
        ``entries``; and what this call leaves in the cache."""
        systems, rounds, output = self.s.calls[call - 1]
        summary = 1 if tail else 0
        end = systems + summary + rounds - tail

        def at(p: int, system: tuple[int, ...], tail_sums: tuple[int, ...], size: int) -> int:
            if p <= systems:
                return system[p]
            return system[systems] + size * summary + tail_sums[tail + p - systems - summary] - tail_sums[tail]

        def tokens(p: int) -> int:
            return at(p, self.s.system_tokens, self.s.round_tokens, SUMMARY_TOKENS)

        def count(p: int) -> int:
            return at(p, self.s.system_blocks, self.s.round_blocks, 1)

        use, left = CacheUse(0, 0), entries
        if cache and self.pricing.provider == OPENAI:
            use = CacheUse(openai_read(tokens(shared), self.pricing.agent.min_cached_tokens), 0)
        elif cache:
            marks = tuple(sorted({systems, end} - {0}))
            use, left = anthropic_use(tokens, count, marks, shared, entries, self.pricing.agent.min_cached_tokens)
        prompt = tokens(end) + (REPLY_PRIMING if end else 0)
        return self.pricing.agent.price.cost(prompt, use.read, output, use.written), left

    def shared(self, tail: int, call: int, compacting: bool) -> int:
        """Leading units ``call`` shares with the call before it: the system messages after a
        compaction (the summary is new) or a new system message; else the whole previous context."""
        if call == 1:
            return 0
        systems, rounds, _ = self.s.calls[call - 2]
        if compacting or self.s.calls[call - 1][0] != systems:
            return systems
        return systems + (1 if tail else 0) + rounds - tail

    def summary_cost(self, old_tail: int, new_tail: int) -> float:
        """The summarizer call of a compaction moving the kept tail from ``old_tail`` to ``new_tail``."""
        if not self.summarizer:
            return 0.0
        folded = self.s.round_tokens[new_tail] - self.s.round_tokens[old_tail] + (SUMMARY_TOKENS if old_tail else 0)
        return self.pricing.summarizer.price.cost(folded + REPLY_PRIMING, 0, SUMMARY_TOKENS)

    def priced(self, compactions: Sequence[int]) -> Schedule:
        """The bill of a given schedule (each compaction must fold a new round)."""
        costs = []
        for cache in (True, False):
            tail, entries, total = 0, frozenset[int](), 0.0
            for call in range(1, len(self.s.calls) + 1):
                compacting = call in compactions
                if compacting:
                    assert self.can_compact(call, tail), f"a compaction before call {call} folds nothing new"
                    new_tail = self.tail(call)
                    total += self.summary_cost(tail, new_tail)
                    tail = new_tail
                cost, entries = self.price(tail, call, self.shared(tail, call, compacting), entries, cache=cache)
                total += cost
            costs.append(total)
        return Schedule(tuple(sorted(compactions)), costs[0], costs[1])

    def cheapest(self) -> Schedule:
        """The cheapest schedule with the cache, by dynamic programming (module docstring)."""
        n = len(self.s.calls)
        if not n:
            return Schedule((), 0.0, 0.0)
        # best[s]: the cheapest bill of calls 1..s when the current summary was made before call s
        # (s = 1: no summary yet); start[s]: what call s leaves in the cache; parent[s]: the state before.
        first, first_entries = self.price(0, 1, 0, frozenset())
        best: dict[int, float] = {1: first}
        start: dict[int, frozenset[int]] = {1: first_entries}
        parent: dict[int, int] = {}
        total, last = math.inf, 1
        for state in range(1, n + 1):
            if state not in best:
                continue
            tail = 0 if state == 1 else self.tail(state)
            run, entries = best[state], start[state]
            for call in range(state + 1, n + 1):
                if self.can_compact(call, tail):
                    cost, left = self.price(self.tail(call), call, self.shared(tail, call, True), entries)
                    candidate = run + self.summary_cost(tail, self.tail(call)) + cost
                    if candidate < best.get(call, math.inf):
                        best[call], start[call], parent[call] = candidate, left, state
                cost, entries = self.price(tail, call, self.shared(tail, call, False), entries)
                run += cost
            if run < total:
                total, last = run, state
        schedule = []
        while last != 1:
            schedule.append(last)
            last = parent[last]
        return Schedule(tuple(sorted(schedule)), total, self.priced(schedule).cost_no_cache)

    def every_call(self) -> Schedule:
        """The token ceiling's schedule: a compaction before every call that folds a new round."""
        schedule, tail = [], 0
        for call in range(2, len(self.s.calls) + 1):
            if self.can_compact(call, tail):
                schedule.append(call)
                tail = self.tail(call)
        return self.priced(schedule)
