"""The cache-aware ceiling (benchmarks/ceiling.py, SPEC CEIL-1..4): exact, and monotone where it must be.

The dynamic programme is checked against brute force: every schedule of compactions on small
traces, each priced by building the ideal compactor's contexts as real message lists and
measuring them with the replay's own cache meter (`cache.Meter`), so the DP's arithmetic on
cumulative sums is checked against an independent walk. Prices use a model whose cache starts
at 64 tokens so that small traces reach it.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compaction_suite.benchmarks.cache import Meter
from compaction_suite.benchmarks.ceiling import Ideal, shape
from compaction_suite.benchmarks.lineup import NoCompaction
from compaction_suite.benchmarks.prices import DEFAULT_PRICINGS, MODELS, Model, Price, Pricing
from compaction_suite.benchmarks.replay import ASSISTANT_KINDS, SUMMARY_TOKENS, common_prefix, replay
from compaction_suite.reference import split_rounds
from compaction_suite.reference.rounds import flatten
from compaction_suite.reference.tokens import ExactTokens

from message_builders import asks, call, reply, result, system, user

EXACT = ExactTokens("o200k_base")


def small_cache(provider: str) -> Pricing:
    """A pricing whose cache starts at 64 tokens (the providers' price ratios, smaller texts)."""
    base = next(p for p in DEFAULT_PRICINGS if p.provider == provider)
    return replace(base, agent=replace(base.agent, min_cached_tokens=64))


PRICINGS = [small_cache("openai"), small_cache("anthropic")]


def words(n: int) -> str:
    return " ".join(f"w{i % 7}" for i in range(n))


@st.composite
def traces(draw: st.DrawFn, max_calls: int = 6) -> list[dict]:
    """A system prompt, a task, then rounds: tool calls (some with many parallel results, past
    Anthropic's 20-block lookback), bare replies and user turns; texts of 0 to 300 words."""
    size = st.integers(0, 300)
    messages = [system(words(draw(size))), user(words(draw(size)))]
    for n in range(draw(st.integers(2, max_calls))):
        kind = draw(st.sampled_from(["calls", "calls", "reply", "user"]))
        if kind == "user" and messages[-1]["role"] != "user":
            messages.append(user(words(draw(size))))
        if kind == "reply":
            messages.append(reply(words(draw(size))))
            continue
        ids = [f"c{n}_{i}" for i in range(draw(st.sampled_from([1, 1, 2, 12])))]
        messages.append(asks(*(call(i) for i in ids)))
        messages += [result(i, words(draw(size))) for i in ids]
    return messages


def brute_force(messages: list[dict], k: int, pricing: Pricing) -> float:
    """The cheapest bill over every schedule, each built as real contexts and metered by the replay's meter."""
    rounds = split_rounds(messages)
    call_rounds = [i for i, r in enumerate(rounds) if r.kind in ASSISTANT_KINDS]
    best = float("inf")
    for size in range(len(call_rounds)):
        for schedule in itertools.combinations(range(2, len(call_rounds) + 1), size):
            cost = bill(rounds, call_rounds, set(schedule), k, pricing)
            best = min(best, cost)
    return best


def bill(rounds, call_rounds, schedule: set[int], k: int, pricing: Pricing) -> float:
    meter = Meter((pricing,))
    summary_tokens: dict[int, int] = {}
    tail, summary, total = 0, None, 0.0
    previous: list[dict] = []
    for number, at in enumerate(call_rounds, start=1):
        system_units = [r.messages[0] for r in rounds[:at] if r.kind == "system"]
        others = [r for r in rounds[:at] if r.kind != "system"]
        if number in schedule:
            new_tail = max(len(others) - k, 0)
            if new_tail <= tail:
                return float("inf")  # folds nothing new: not a schedule the ceiling allows
            folded = sum(EXACT.units(m) for m in flatten(others[tail:new_tail])) + (SUMMARY_TOKENS if summary else 0)
            total += pricing.summarizer.price.cost(folded + 3, 0, SUMMARY_TOKENS)
            summary = {"role": "user", "content": f"[Context Summary] {number}"}
            summary_tokens[id(summary)] = SUMMARY_TOKENS
            tail = new_tail
        context = system_units + ([summary] if summary else []) + flatten(others[tail:])
        tokens = [summary_tokens.get(id(m)) or EXACT.units(m) for m in context]
        use = meter.use(context, common_prefix(context, previous), lambda m: summary_tokens.get(id(m)) or EXACT.units(m))[pricing.label]
        answer = rounds[at]
        output = EXACT.units(answer.messages[0])
        total += pricing.agent.price.cost(sum(tokens) + 3, use.read, output, use.written)
        previous = context
    return total


@settings(max_examples=25, deadline=None)
@given(traces(), st.integers(0, 2))
def test_the_dynamic_programme_finds_the_cheapest_schedule(messages, k):
    for pricing in PRICINGS:
        ideal = Ideal(shape(messages), k, pricing)
        best = ideal.cheapest()
        assert best.cost_with_cache == pytest.approx(brute_force(messages, k, pricing), rel=1e-12, abs=1e-15)
        assert ideal.priced(best.compactions).cost_with_cache == pytest.approx(best.cost_with_cache, rel=1e-12, abs=1e-15)


@settings(max_examples=15, deadline=None)
@given(traces(max_calls=8))
def test_never_compacting_is_the_baseline_and_the_ceiling_beats_both_schedules(messages):
    for pricing in PRICINGS:
        ideal = Ideal(shape(messages), 2, pricing)
        baseline = replay(messages, NoCompaction(), pricings=(pricing,))
        never = ideal.priced(())
        assert never.cost_with_cache == pytest.approx(baseline.cost(cache=True, pricing=pricing), rel=1e-12)
        assert never.cost_no_cache == pytest.approx(baseline.cost(cache=False, pricing=pricing), rel=1e-12)
        best = ideal.cheapest().cost_with_cache
        assert best <= never.cost_with_cache + 1e-15
        assert best <= ideal.every_call().cost_with_cache + 1e-15


@settings(max_examples=15, deadline=None)
@given(traces(max_calls=8))
def test_the_ceiling_grows_with_the_trace_and_with_prices(messages):
    rounds = split_rounds(messages)
    cuts = [i for i, r in enumerate(rounds) if r.kind in ASSISTANT_KINDS]
    for pricing in PRICINGS:
        whole = Ideal(shape(messages), 2, pricing).cheapest().cost_with_cache
        if len(cuts) > 1:  # the same trace up to the answer of its next-to-last call
            shorter = flatten(rounds[: cuts[-2] + 1])
            assert Ideal(shape(shorter), 2, pricing).cheapest().cost_with_cache <= whole + 1e-15
        cheaper_reads = replace(pricing, agent=replace(pricing.agent, price=replace(pricing.agent.price, cached_input=pricing.agent.price.cached_input / 2)))
        assert Ideal(shape(messages), 2, cheaper_reads).cheapest().cost_with_cache <= whole + 1e-15
        assert Ideal(shape(messages), 2, pricing, summarizer=False).cheapest().cost_with_cache <= whole + 1e-15


def test_a_compaction_that_folds_nothing_new_is_refused():
    messages = [system("s"), user("go"), asks(call("a")), result("a"), asks(call("b")), result("b"), reply("done")]
    ideal = Ideal(shape(messages), 2, DEFAULT_PRICINGS[0])
    assert not ideal.can_compact(2, 0)  # two rounds so far (the task and the first call): nothing older than K=2
    with pytest.raises(AssertionError, match="folds nothing new"):
        ideal.priced((2,))


def test_on_a_long_append_only_trace_the_cache_makes_compacting_at_every_call_costly():
    """The reason for the ceiling: with a cache, compacting at every call is not the cheapest bill."""
    messages = [system(words(400)), user(words(50))]
    for n in range(30):
        messages += [asks(call(f"c{n}")), result(f"c{n}", words(250))]
    messages.append(reply("done"))
    for pricing in DEFAULT_PRICINGS:
        ideal = Ideal(shape(messages), 2, pricing)
        every, best = ideal.every_call(), ideal.cheapest()
        assert best.cost_with_cache < every.cost_with_cache
        assert 0 < len(best.compactions) < len(every.compactions)


def test_models_in_the_tables_cache_from_their_published_minimum():
    assert MODELS["claude-sonnet-4-5"].min_cached_tokens == 1024 and MODELS["claude-haiku-4-5"].min_cached_tokens == 4096
    assert Model("x", "openai", Price(1, 0.1, 1)).min_cached_tokens == 1024


def test_a_ceiling_that_never_compacts_reports_the_baselines_bill_to_the_digit():
    """The report's ceiling and runs are rounded alike (`replay.usd`): a ceiling whose cheapest
    schedule never compacts sends the baseline's contexts, so its cut must be exactly 0, not a
    rounding's remainder that turned a share into 0% or -5,876,000% (SPEC CEIL-4)."""
    from compaction_suite.benchmarks.jobs import Job, cache_ceilings

    messages = [system(words(900)), user(words(40)), asks(call("a")), result("a", words(333)), asks(call("b")), result("b", words(77)), reply("ok")]
    for pricing in DEFAULT_PRICINGS:
        row = cache_ceilings(messages, "chat-completions", Job({}, ceiling_rounds=(9,), pricings=(pricing,)))[f"{pricing.label} K=9"]
        base = replay(messages, NoCompaction(), pricings=(pricing,)).costs()[pricing.label]
        assert row["cache_aware"]["compactions"] == []
        assert row["cache_aware"]["cost_usd_with_cache"] == base["cost_usd_with_cache"]
        assert row["cache_aware"]["cost_usd_no_cache"] == base["cost_usd_no_cache"]
