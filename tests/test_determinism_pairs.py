"""CORE-8's pairs of runs (`conformance.tests.common.same_pair`): a pair that differs with a run as
slow as the summarizer timeout is run again before it is judged, a quick pair that differs is
judged at once (SPEC CORE-8 Decision: a loaded machine)."""

from __future__ import annotations

import itertools
from collections.abc import Callable

from compaction_suite.conformance.tests.common import SLOW_PAIR_RETRIES, same_pair, slow_note


def counting(outputs: Callable[[int], object]) -> tuple[Callable[[], object], list[int]]:
    """A run giving ``outputs(n)`` on its n-th call, and the list of calls made."""
    calls: list[int] = []
    counter = itertools.count()

    def run() -> object:
        n = next(counter)
        calls.append(n)
        return outputs(n)

    return run, calls


def test_a_quick_pair_that_differs_is_judged_at_once() -> None:
    first, calls = counting(lambda n: n)  # every run differs from every other
    a, b, _ = same_pair(first, first, lambda x, y: x == y, timeout=3600.0)
    assert (a, b) == (0, 1) and calls == [0, 1]


def test_a_slow_pair_that_differs_is_run_again_and_the_last_pair_judged() -> None:
    run, calls = counting(lambda n: n)
    a, b, took = same_pair(run, run, lambda x, y: x == y, timeout=0.0)  # every run is as slow as a timeout of 0 s
    assert len(calls) == 2 * (SLOW_PAIR_RETRIES + 1) and a != b and (a, b) == (calls[-2], calls[-1])
    assert "summarizer timeout" in slow_note(took, 0.0) and slow_note(0.5, 2.0) == ""


def test_a_slow_pair_stops_once_it_agrees() -> None:
    run, calls = counting(lambda n: "same" if n >= 2 else n)  # the first pair differs, the second agrees
    a, b, _ = same_pair(run, run, lambda x, y: x == y, timeout=0.0)
    assert a == b == "same" and len(calls) == 4
