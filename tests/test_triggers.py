"""Triggers: when to compact (SPEC RT-1..RT-7): reference/triggers.py."""

from __future__ import annotations

import pytest

from compaction_suite.reference import AnyOf, ContextFraction, IterationsOrTokens, MessageCount, ObservedTokenBudget, TokenThreshold
from compaction_suite.reference.triggers import Observation, decide

T, M = 8, 80_000


def seen(iterations: int = 0, tokens: int = 0, messages: int = 0, observed: int | None = None) -> Observation:
    return Observation(iterations=iterations, estimated_tokens=tokens, messages=messages, observed_prompt_tokens=observed)


class Never:
    def check(self, seen: Observation) -> None:
        return None


class Always:
    def __init__(self, reason: str) -> None:
        self.reason = reason

    def check(self, seen: Observation) -> str:
        return self.reason


# --- RT-1: iterations >= T OR tokens >= M ------------------------------------------------

ITERATIONS = {"below": T - 1, "at": T, "above": T + 1}
TOKENS = {"below": M - 1, "at": M, "above": M + 1}


@pytest.mark.parametrize("tokens", list(TOKENS), ids=lambda k: f"tokens-{k}")
@pytest.mark.parametrize("iterations", list(ITERATIONS), ids=lambda k: f"iterations-{k}")
def test_iterations_or_tokens_truth_table(iterations: str, tokens: str) -> None:
    reason = IterationsOrTokens(T, M).check(seen(ITERATIONS[iterations], TOKENS[tokens]))
    should_fire = iterations != "below" or tokens != "below"  # OR, both inclusive
    assert (reason is not None) == should_fire
    if iterations != "below":
        assert reason == f"iterations {ITERATIONS[iterations]} >= {T}"
    elif tokens != "below":
        assert reason == f"estimated tokens {TOKENS[tokens]} >= {M}"


def test_iterations_or_tokens_defaults_are_seed_000s() -> None:
    trigger = IterationsOrTokens()
    assert (trigger.threshold_iterations, trigger.max_context_tokens) == (8, 80_000)


def test_iterations_or_tokens_is_not_and_either_alone_fires() -> None:
    trigger = IterationsOrTokens(T, M)
    assert trigger.check(seen(iterations=T, tokens=0)) is not None
    assert trigger.check(seen(iterations=0, tokens=M)) is not None
    assert trigger.check(seen(iterations=0, tokens=0)) is None


# --- RT-5: TokenThreshold, strictly above ---------------------------------------------------


@pytest.mark.parametrize(("tokens", "fires"), [(59_999, False), (60_000, False), (60_001, True)])
def test_token_threshold_fires_strictly_above_the_limit(tokens: int, fires: bool) -> None:
    reason = TokenThreshold(60_000).check(seen(tokens=tokens))
    assert (reason is not None) == fires
    if fires:
        assert reason == "estimated tokens 60001 > 60000"


def test_token_threshold_ignores_iterations_and_messages() -> None:
    assert TokenThreshold(100).check(seen(iterations=1_000, tokens=100, messages=1_000)) is None


# --- RT-2: MessageCount with hysteresis ------------------------------------------------------


@pytest.mark.parametrize(("messages", "fires"), [(24, False), (25, False), (26, True), (100, True)])
def test_message_count_fires_above_target_plus_threshold(messages: int, fires: bool) -> None:
    reason = MessageCount(20, 5).check(seen(messages=messages))
    assert (reason is not None) == fires
    if fires:
        assert reason == f"messages {messages} > 20 + 5"


def test_message_count_hysteresis_leaves_room_after_compacting_to_target() -> None:
    trigger = MessageCount(target=20, threshold=5)
    assert all(trigger.check(seen(messages=n)) is None for n in range(20, 26))
    assert trigger.check(seen(messages=26)) is not None


def test_message_count_with_no_threshold_fires_just_above_target() -> None:
    assert MessageCount(10, 0).check(seen(messages=10)) is None
    assert MessageCount(10, 0).check(seen(messages=11)) is not None


# --- RT-3: ObservedTokenBudget -----------------------------------------------------------------


def test_observed_budget_never_fires_before_a_usage_is_observed() -> None:
    trigger = ObservedTokenBudget(1_000, 100)
    assert trigger.check(seen(iterations=10**6, tokens=10**9, messages=10**6, observed=None)) is None


@pytest.mark.parametrize(("observed", "fires"), [(1_099, False), (1_100, False), (1_101, True)])
def test_observed_budget_fires_strictly_above_target_plus_threshold(observed: int, fires: bool) -> None:
    reason = ObservedTokenBudget(1_000, 100).check(seen(observed=observed))
    assert (reason is not None) == fires
    if fires:
        assert reason == "observed prompt tokens 1101 > 1000 + 100"


def test_observed_budget_ignores_the_estimate() -> None:
    assert ObservedTokenBudget(1_000).check(seen(tokens=5_000, observed=999)) is None


# --- RT-4: ContextFraction --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("window", "fraction", "limit"),
    [(4096, 0.6, 2457), (100_000, 0.6, 60_000), (10, 0.35, 3), (128_000, 0.8, 102_400)],
)
def test_context_fraction_limit_is_the_floor_of_window_times_fraction(window: int, fraction: float, limit: int) -> None:
    assert ContextFraction(window, fraction).limit == limit == int(window * fraction)


@pytest.mark.parametrize("source", ["estimate", "observed"])
@pytest.mark.parametrize(("delta", "fires"), [(-1, False), (0, False), (1, True)], ids=["below", "at", "above"])
def test_context_fraction_fires_strictly_above_its_limit_from_either_source(source: str, delta: int, fires: bool) -> None:
    trigger = ContextFraction(4096, 0.6, source=source)  # type: ignore[arg-type]
    tokens = trigger.limit + delta
    observation = seen(tokens=tokens) if source == "estimate" else seen(observed=tokens)
    reason = trigger.check(observation)
    assert (reason is not None) == fires
    if fires:
        assert reason == f"{source} tokens {tokens} > 60% of 4096"


def test_context_fraction_reads_only_its_own_source() -> None:
    estimate = ContextFraction(1_000, 0.5, source="estimate")
    observed = ContextFraction(1_000, 0.5, source="observed")
    assert estimate.check(seen(tokens=10, observed=10_000)) is None
    assert observed.check(seen(tokens=10_000, observed=10)) is None
    assert observed.check(seen(tokens=10_000, observed=None)) is None, "never before a usage is observed"


def test_context_fraction_defaults_to_sixty_percent_of_the_estimate() -> None:
    trigger = ContextFraction(4096)
    assert (trigger.fraction, trigger.source) == (0.6, "estimate")


# --- RT-6: AnyOf ------------------------------------------------------------------------------


def test_any_of_fires_when_any_child_fires_and_the_first_reason_wins() -> None:
    trigger = AnyOf(Never(), Always("second"), Always("third"))
    assert trigger.check(seen()) == "second"


def test_any_of_combines_real_triggers() -> None:
    trigger = AnyOf(MessageCount(20, 5), TokenThreshold(1_000))
    assert trigger.check(seen(messages=30, tokens=5_000)) == "messages 30 > 20 + 5"
    assert trigger.check(seen(messages=3, tokens=5_000)) == "estimated tokens 5000 > 1000"
    assert trigger.check(seen(messages=3, tokens=10)) is None


@pytest.mark.parametrize("children", [(), (Never(), Never())], ids=["no-children", "none-fire"])
def test_any_of_does_not_fire_when_no_child_does(children: tuple[Never, ...]) -> None:
    assert AnyOf(*children).check(seen(iterations=99, tokens=10**9, messages=99, observed=10**9)) is None


# --- RT-7: skip and force -------------------------------------------------------------------------


def test_decide_returns_the_triggers_reason_without_controls() -> None:
    assert decide(Always("because"), seen()) == "because"
    assert decide(Never(), seen()) is None


def test_decide_force_fires_even_when_the_trigger_does_not() -> None:
    assert decide(Never(), seen(), force=True) == "forced for this run"


def test_decide_force_replaces_a_firing_triggers_reason() -> None:
    assert decide(Always("because"), seen(), force=True) == "forced for this run"


@pytest.mark.parametrize("force", [False, True])
def test_decide_skip_wins_over_trigger_and_force(force: bool) -> None:
    assert decide(Always("because"), seen(), skip=True, force=force) is None
