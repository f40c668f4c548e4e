"""The fault sweep and a target whose every summary is server-side (SPEC Part A, "Wire formats",
Decision: server-side compaction): the Messages API's compaction inside the agent's own model request is
marked on its exchange, and the fault tests skip such a target, saying why, where a target with a summarizer
of its own meets them."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from compaction_suite.conformance.tests.common import SERVER_SIDE, summarizing


def _suite(*, server_side_only: bool) -> Any:
    """A TEST DOUBLE of the suite, holding only what `summarizing` reads before it grows a history."""
    return SimpleNamespace(calls_summarizer=True, server_side_only=server_side_only, summarizer_apis={"anthropic"})


def test_a_fault_test_skips_a_target_whose_summaries_are_all_server_side() -> None:
    with pytest.raises(pytest.skip.Exception, match="server-side compaction"):
        summarizing(_suite(server_side_only=True), [], "500")
    assert "does not fail" in SERVER_SIDE


def test_a_test_without_a_fault_still_runs_on_a_server_side_target(monkeypatch: pytest.MonkeyPatch) -> None:
    """CORE-12, the cost and window clauses need a history the target summarizes, server-side or not."""
    monkeypatch.setitem(summarizing.__globals__, "asks", lambda suite, history: True)  # the module `summarizing` runs in
    assert summarizing(_suite(server_side_only=True), ["kept"]) == ["kept"]


def test_a_target_with_a_summarizer_of_its_own_meets_the_fault(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(summarizing.__globals__, "asks", lambda suite, history: True)  # the module `summarizing` runs in
    assert summarizing(_suite(server_side_only=False), ["kept"], "500") == ["kept"]
