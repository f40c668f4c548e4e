"""Speed of the reference compactor's non-model work on histories of 100 to 100,000 messages.

Run with ``.venv/bin/python -m pytest benchmarks/test_speed.py --benchmark-only``.
Sizes come from the environment variable ``COMPACTION_SPEED_SIZES`` (comma-separated,
each at least 100; default ``100,1000,10000,100000``), so a quick run is
``COMPACTION_SPEED_SIZES=100,1000 .venv/bin/python -m pytest benchmarks/test_speed.py --benchmark-only``.
`compaction_suite.benchmarks.speed` runs this file in-process and turns pytest-benchmark's JSON into
``speed.{json,md,png}``.

Histories are `compaction_suite.benchmarks.histories.build(n)`: the shipped trace tiled to at least ``n``
messages. Each bench's group is its operation, so pytest-benchmark lines the sizes up
in one table per operation; ``extra_info`` carries the operation key, its label and the
history's actual message count for `compaction_suite.benchmarks.speed`. Every bench asserts something
true of its result, outside the timed call, so none can silently time a no-op. No
timing is asserted: the machines are shared.

The per-round benches (``ledger_update``, ``trigger_check``, ``compact_warm``) time
one call after a round was appended to an ``n``-message history whose previous state
the ledger (or compactor) has already seen: pytest-benchmark's pedantic mode with a
setup, so the priming is not timed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from compaction_suite.benchmarks import histories
from compaction_suite.benchmarks.speed import sizes_from_env
from compaction_suite.reference.compactor import Compactor
from compaction_suite.reference.rounds import split_rounds
from compaction_suite.reference.strategies import Chain, DropSources, KeepLastMessages, MaskObservations, TokenBudget
from compaction_suite.reference.tokens import CharsPerFour, TokenLedger
from compaction_suite.reference.triggers import IterationsOrTokens

KEEP = 50
BUDGET = 20_000
CHAIN_BUDGET = 2_000
"""Below what ``MaskObservations(2)`` leaves of 100 messages (about 4,000), so the chain trims at every size."""
DROPPED_SOURCE = "runCommand"
NEVER = IterationsOrTokens(threshold_iterations=10**9, max_context_tokens=10**15)
"""A trigger that does not fire on any history here."""


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``size`` from ``COMPACTION_SPEED_SIZES`` at collection time (see module doc).

    Module scope makes pytest run every bench of one size before the next size, so only
    one size's history is alive at a time: the garbage collector, which stays on as in an
    agent process, then walks what an agent holding that history would hold.
    """
    if "size" in metafunc.fixturenames:
        metafunc.parametrize("size", sizes_from_env(), ids=lambda n: f"n={n}", scope="module")


@pytest.fixture(scope="module")
def history(size: int) -> list[dict[str, Any]]:
    return histories.build(size)


@pytest.fixture(scope="module")
def grown(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``history`` with one more agent round appended (a new list)."""
    return history + histories.new_rounds(1)[0]


@pytest.fixture
def tagged(size: int) -> list[dict[str, Any]]:
    """The history with ``source_id`` on tool results, for `DropSources` only."""
    return histories.build(size, sources=True)


def _label(benchmark: Any, op: str, label: str, messages: int) -> None:
    benchmark.group = op
    benchmark.extra_info.update(op=op, label=label, messages=messages)


def _pedantic(benchmark: Any, target: Callable[..., Any], setup: Callable[[], tuple[Any, ...]], size: int) -> Any:
    """Time ``target(*setup())`` alone, fresh state every round: more rounds for small sizes."""
    rounds = min(100, max(15, 2_000_000 // size))
    return benchmark.pedantic(target, setup=lambda: (setup(), {}), rounds=rounds, iterations=1, warmup_rounds=1)


def _is_compacted(out: list[dict[str, Any]], before: list[dict[str, Any]]) -> None:
    assert len(out) < len(before)
    assert out[0] is before[0] and out[0]["role"] == "system"
    split_rounds(out)


# --- whole-history operations ------------------------------------------------------------------


def test_split_rounds(benchmark: Any, history: list[dict[str, Any]]) -> None:
    _label(benchmark, "split_rounds", "split_rounds (validate + split)", len(history))
    rounds = benchmark(split_rounds, history)
    assert sum(len(r.messages) for r in rounds) == len(history) and rounds[0].kind == "system"


def test_estimate_from_scratch(benchmark: Any, grown: list[dict[str, Any]]) -> None:
    _label(benchmark, "estimate_from_scratch", "CharsPerFour().estimate, from scratch", len(grown))
    tokens = benchmark(CharsPerFour().estimate, grown)
    assert tokens > len(grown)  # hundreds of characters a message on average


# --- per-round checks: what the ledger saves ---------------------------------------------------


def test_ledger_update(benchmark: Any, history: list[dict[str, Any]], grown: list[dict[str, Any]]) -> None:
    _label(benchmark, "ledger_update", "TokenLedger.update, one new round", len(grown))

    def setup() -> tuple[TokenLedger, list[dict[str, Any]]]:
        ledger = TokenLedger(CharsPerFour())
        ledger.update(history)
        return ledger, grown

    tokens = _pedantic(benchmark, lambda ledger, messages: ledger.update(messages), setup, len(history))
    assert tokens == CharsPerFour().estimate(grown)


def test_trigger_check(benchmark: Any, history: list[dict[str, Any]], grown: list[dict[str, Any]]) -> None:
    _label(benchmark, "trigger_check", "Compactor.compact, trigger not firing, one new round", len(grown))

    def setup() -> tuple[Compactor, list[dict[str, Any]]]:
        compactor = Compactor(KeepLastMessages(KEEP), NEVER)
        compactor.compact(history, iteration=1)
        return compactor, grown

    def check(compactor: Compactor, messages: list[dict[str, Any]]) -> tuple[Compactor, list[dict[str, Any]]]:
        return compactor, compactor.compact(messages, iteration=2)

    compactor, out = _pedantic(benchmark, check, setup, len(history))
    assert out == grown and out is not grown
    event = compactor.last_event
    assert event.trigger is None and event.estimated_tokens_before == CharsPerFour().estimate(grown)


# --- strategies --------------------------------------------------------------------------------


def test_keep_last_messages(benchmark: Any, history: list[dict[str, Any]]) -> None:
    _label(benchmark, "keep_last_messages", f"KeepLastMessages({KEEP})", len(history))
    out = benchmark(KeepLastMessages(KEEP).compact, history)
    _is_compacted(out, history)
    assert KEEP < len(out) <= KEEP + 5


def test_mask_observations(benchmark: Any, history: list[dict[str, Any]]) -> None:
    _label(benchmark, "mask_observations", "MaskObservations(2)", len(history))
    out = benchmark(MaskObservations(2).compact, history)
    assert len(out) == len(history) and out[0] is history[0]
    masked = sum(a is not b for a, b in zip(out, history))
    assert masked > len(history) // 4 and all(m["role"] == "tool" for a, m in zip(history, out) if a is not m)


def test_token_budget(benchmark: Any, history: list[dict[str, Any]]) -> None:
    _label(benchmark, "token_budget", f"TokenBudget({BUDGET})", len(history))
    out = benchmark(TokenBudget(BUDGET).compact, history)
    _is_compacted(out, history)
    assert CharsPerFour().estimate(out) <= BUDGET


def test_drop_sources(benchmark: Any, tagged: list[dict[str, Any]]) -> None:
    history = tagged
    _label(benchmark, "drop_sources", f"DropSources({{{DROPPED_SOURCE!r}}})", len(history))
    out = benchmark(DropSources({DROPPED_SOURCE}).compact, history)
    _is_compacted(out, history)
    assert not any(m.get("source_id") == DROPPED_SOURCE for m in out)


def test_chain(benchmark: Any, history: list[dict[str, Any]]) -> None:
    _label(benchmark, "chain", f"Chain(MaskObservations(2), TokenBudget({CHAIN_BUDGET}))", len(history))
    out = benchmark(Chain(MaskObservations(2), TokenBudget(CHAIN_BUDGET)).compact, history)
    _is_compacted(out, history)
    # TokenBudget keeps the last round even when it alone is over the budget (STRAT-5)
    assert CharsPerFour().estimate(out) <= CHAIN_BUDGET or len(split_rounds(out)) == 2


# --- the compactor, compacting (the 100 ms target) ---------------------------------------------


def test_compact(benchmark: Any, history: list[dict[str, Any]]) -> None:
    """A fresh compactor's first call: validation, a from-scratch estimate, the strategy, the event."""
    _label(benchmark, "compact", f"Compactor.compact, KeepLastMessages({KEEP}), fresh compactor", len(history))

    def setup() -> tuple[Compactor, list[dict[str, Any]]]:
        return Compactor(KeepLastMessages(KEEP), IterationsOrTokens(threshold_iterations=1)), history

    def compact(compactor: Compactor, messages: list[dict[str, Any]]) -> tuple[Compactor, list[dict[str, Any]]]:
        return compactor, compactor.compact(messages, iteration=1)

    compactor, out = _pedantic(benchmark, compact, setup, len(history))
    _is_compacted(out, history)
    assert compactor.last_event.compacted and compactor.last_event.trigger.startswith("iterations")


def test_compact_warm(benchmark: Any, history: list[dict[str, Any]], grown: list[dict[str, Any]]) -> None:
    """The agent-loop case: the compactor saw ``history`` last round, one round came, it fires."""
    _label(benchmark, "compact_warm", f"Compactor.compact, KeepLastMessages({KEEP}), one new round", len(grown))

    def setup() -> tuple[Compactor, list[dict[str, Any]]]:
        compactor = Compactor(KeepLastMessages(KEEP), IterationsOrTokens(threshold_iterations=2, max_context_tokens=10**15))
        compactor.compact(history, iteration=1)  # 1 < 2 iterations: observes, does not fire
        return compactor, grown

    def compact(compactor: Compactor, messages: list[dict[str, Any]]) -> tuple[Compactor, list[dict[str, Any]]]:
        return compactor, compactor.compact(messages, iteration=2)

    compactor, out = _pedantic(benchmark, compact, setup, len(history))
    _is_compacted(out, grown)
    assert compactor.last_event.compacted and compactor.last_event.trigger.startswith("iterations")
