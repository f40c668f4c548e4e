"""The cache-aware reference compactor: RT-8's trigger, what the compactor tells it, STRAT-12 on a steady trace."""

from __future__ import annotations

import json

import pytest

from compaction_suite.benchmarks.ceiling import Ideal, shape
from compaction_suite.benchmarks.lineup import NoCompaction, cache_aware
from compaction_suite.benchmarks.prices import DEFAULT_PRICINGS
from compaction_suite.benchmarks.replay import replay
from compaction_suite.conformance.settings import Settings, connected
from compaction_suite.conformance.summarizer_server import SummarizerServer
from compaction_suite.reference import CacheBreakEven, CharsPerFour, Compactor, KeepLastMessages, presets
from compaction_suite.reference.triggers import Observation

from message_builders import asks, call, reply, result, system, user


def seen(**fields) -> Observation:
    return Observation(**{"iterations": 3, "estimated_tokens": 5000, "messages": 10, **fields})


def test_it_fires_once_the_re_reads_cost_what_a_compaction_costs():
    trigger = CacheBreakEven(write_to_read=4.0, summarize_to_read=0.3, overhead_tokens=100.0, keep_rounds=2)
    due = 3 * 1000 + 0.3 * 600 + 100  # the kept rounds' estimate, 2 x 600 / 3, is below what was rewritten
    assert trigger.check(seen(rewritten_tokens=1000, grown_tokens=600, resent_tokens=int(due) - 1)) is None
    assert trigger.check(seen(rewritten_tokens=1000, grown_tokens=600, resent_tokens=int(due))) is not None
    early = seen(rewritten_tokens=100, grown_tokens=3000, resent_tokens=4000)  # before any compaction: the kept rounds count
    assert trigger.check(early) is None and 3 * (2 * 3000 / 3) + 900 + 100 > 4000
    assert trigger.check(seen(rewritten_tokens=0, grown_tokens=0, resent_tokens=0)) is None


class Recording:
    """A trigger double: remembers what it was shown and fires on the iterations it is told to."""

    def __init__(self, fire_at: tuple[int, ...] = ()) -> None:
        self.fire_at = fire_at
        self.seen: list[Observation] = []

    def check(self, observation: Observation) -> str | None:
        self.seen.append(observation)
        return "told to" if observation.iterations in self.fire_at else None


def grow(messages: list[dict], n: int) -> list[dict]:
    return messages + [asks(call(f"c{n}")), result(f"c{n}", "x" * 400)]


def test_the_compactor_tells_the_trigger_what_was_rewritten_grown_and_re_read():
    trigger = Recording()
    compactor = Compactor(KeepLastMessages(2), trigger)
    messages = [system("s" * 400), user("u" * 200)]
    estimates = []
    for n in range(1, 5):
        messages = grow(messages, n)
        compactor.compact(messages, iteration=n)
        estimates.append(CharsPerFour().estimate(messages))
    base = 100  # the system message: a run starts as if compacted down to it, nothing rewritten yet
    assert [o.rewritten_tokens for o in trigger.seen] == [0] * 4
    assert [o.grown_tokens for o in trigger.seen] == [e - base for e in estimates]
    assert [o.resent_tokens for o in trigger.seen] == [sum(e - base for e in estimates[: i + 1]) for i in range(4)]


def test_a_compaction_starts_a_new_cycle_and_a_new_run_forgets_the_old_one():
    trigger = Recording(fire_at=(3,))
    compactor = Compactor(KeepLastMessages(2), trigger)
    messages = [system("s" * 400), user("u" * 200)]
    for n in range(1, 5):
        messages = grow(messages, n)
        messages = compactor.compact(messages, iteration=n)
    points = [o for o in trigger.seen if o.iterations]  # the compactor also asks, after compacting, if it is still too large
    after = CharsPerFour().estimate(messages[:-2])  # what the compaction at iteration 3 left
    assert points[3].rewritten_tokens == after - 100 and points[3].resent_tokens == points[3].grown_tokens > 0
    compactor.compact([system("s" * 400), user("new run")], iteration=1)
    fresh = CharsPerFour().estimate([user("new run")])
    assert trigger.seen[-1].resent_tokens == trigger.seen[-1].grown_tokens == fresh and trigger.seen[-1].rewritten_tokens == 0


def test_the_preset_claims_what_it_implements():
    compactor = presets.cache_aware("m")
    assert isinstance(compactor.trigger, CacheBreakEven) and "trigger" not in compactor.profiles
    assert {"core", "structured", "failure", "events"} <= compactor.profiles


def steady_trace(rounds: int = 40) -> list[dict]:
    """A long system prompt, then rounds of similar size: files read, findings filed, a task list kept."""
    out = [system("You audit code. " + "Rules: be precise. " * 300), user("Audit the package and file findings.")]
    for n in range(rounds):
        out += [asks(call(f"r{n}", "readFile", {"path": f"pkg/mod{n}.py"})), result(f"r{n}", f"line {n}: " + "code = value  # comment\n" * 60)]
        if n % 4 == 3:
            out += [asks(call(f"e{n}", "createEntity", {"title": f"finding {n}"})), result(f"e{n}", json.dumps({"id": f"ent-{n:04d}"}))]
        if n % 10 == 9:
            out += [asks(call(f"p{n}", "reportProgress", {"tasks": [{"title": f"Audit part {n // 10}", "status": "completed"}]})), result(f"p{n}", "ok")]
    return out + [reply("Audit done.")]


@pytest.fixture(scope="module")
def settings():
    with SummarizerServer() as server:
        yield connected(Settings(summarizer_timeout=30.0), server.base_url)


@pytest.mark.parametrize("pricing", DEFAULT_PRICINGS, ids=lambda p: p.provider)
def test_on_a_steady_trace_it_reaches_80_percent_of_the_cache_aware_ceiling_keeping_ids_and_tasks(settings, pricing):
    messages = steady_trace()
    base = replay(messages, NoCompaction(), pricings=(pricing,)).cost(cache=True)
    run = replay(messages, cache_aware(settings, pricing=pricing), pricings=(pricing,))
    ceiling = Ideal(shape(messages), 2, pricing).cheapest().cost_with_cache
    cut, best = 1 - run.cost(cache=True) / base, 1 - ceiling / base
    assert best > 0.3 and cut >= 0.8 * best, (cut, best)
    summary = run.summary()
    assert summary["min_entity_id_retention"] == 1.0 and summary["task_list_always_kept"] is True
    assert not run.violations and not run.errors and 0 < run.compactions < len(run.calls) / 3
