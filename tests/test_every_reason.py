"""Every reason a clause failed with, not the first (SPEC Part A, "Every failing test, every reason";
report format 3): the suite keeps each distinct reason a test met, the matrix keys findings by each,
and a reported bug's expected reason is matched against any of them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compaction_suite.conformance import plugin, report
from compaction_suite.conformance.assertions import CURRENT, RAISED, ClauseViolation, require
from compaction_suite.conformance.violation import MESSAGE_CHARS, PER_ID, Reasons, Violation, crashed
from compaction_suite.matrix import bugs, findings, sweep
from compaction_suite.reference.conformance_factory import seed_000

from broken.compactors import Wrapper
from checking import in_process


def test_one_reason_is_kept_once_whatever_ids_and_positions_it_quotes() -> None:
    reasons = Reasons()
    reasons.add("orphan-tool-result", "message 3 (tool): result for 'call_0001' has no matching call")
    reasons.add("orphan-tool-result", "message 7 (tool): result for 'call_0042' has no matching call\nthe rest")
    reasons.add("system-message-dropped", "system messages changed: 1 in, 0 out")
    assert reasons.items() == [
        {"reason": "message 3 (tool): result for 'call_0001' has no matching call", "reason_id": "orphan-tool-result"},
        {"reason": "system messages changed: 1 in, 0 out", "reason_id": "system-message-dropped"},
    ]


def test_a_crash_keeps_the_provider_message_it_quotes_and_each_id_keeps_a_few_texts() -> None:
    """Two 400s are two defects when their quoted messages differ; a reason id keeps at most PER_ID texts."""
    reasons = Reasons()
    reasons.add("crash:BadRequestError", "compact raised BadRequestError: 'No tool call found for function call output'")
    reasons.add("crash:BadRequestError", "compact raised BadRequestError: 'messages: roles must alternate'")
    assert len(reasons) == 2
    for n in range(PER_ID + 3):
        reasons.add("crash:BadRequestError", f"compact raised BadRequestError: 'other {n}'")
    assert len(reasons) == PER_ID


def test_a_crash_quotes_the_lines_after_a_generic_first_one() -> None:
    """A pydantic-style ``ValidationError`` names its field and rule after a generic first line: the
    crash's reason (one line) holds them, so a reported bug can be named by them; a long message is cut."""
    error = ValueError("1 validation error for list[ModelMessage]\n0.parts.1.args\n  Input should be a valid string [type=string_type]\n")
    found = crashed(error)
    assert found.reason_id == "crash:ValueError"
    assert str(found) == "compact raised ValueError: 1 validation error for list[ModelMessage] | 0.parts.1.args | Input should be a valid string [type=string_type]"
    reasons = Reasons()
    reasons.add(found.reason_id, found)
    assert "0.parts.1.args" in reasons.items()[0]["reason"]
    long = crashed(RuntimeError("x" * 1000))
    assert len(str(long)) == len("compact raised RuntimeError: ") + MESSAGE_CHARS and str(long).endswith("…")
    assert str(crashed(KeyError())) == "compact raised KeyError: (no message)"


def test_a_test_reports_every_violation_its_examples_met(monkeypatch: pytest.MonkeyPatch) -> None:
    """What Hypothesis reports (here two failures at once, ``report_multiple_bugs``) and every other
    violation `require` raised while the test ran: the reported one first."""
    monkeypatch.setattr(plugin, "HEARD", [("CORE-3", Reasons())])
    added = plugin._heard not in RAISED  # the plugin's listener, registered by any session's configure
    if added:
        RAISED.append(plugin._heard)
    CURRENT[:] = ["CORE-3"]
    try:
        for problem in (Violation("system-message-altered", "system messages changed: 1 in, 1 out"), Violation("system-message-dropped", "system messages changed: 2 in, 0 out")):
            with pytest.raises(ClauseViolation):
                require(problem)
    finally:
        CURRENT[:] = []
        if added:
            RAISED.remove(plugin._heard)
    shown = ClauseViolation("CORE-3", Violation("system-message-not-first", "system message 2 is not first"))
    other = ClauseViolation("CORE-3", Violation("system-message-dropped", "system messages changed: 2 in, 0 out"))
    found = plugin._every_reason("CORE-3", BaseExceptionGroup("two", [shown, other, KeyError("k")])).items()
    assert [r["reason_id"] for r in found] == ["system-message-not-first", "system-message-dropped", "error:KeyError", "system-message-altered"]
    assert found[1]["reason"] == "system messages changed: 2 in, 0 out"  # the same reason met again is kept once


def test_the_report_lists_every_reason_of_each_failing_test() -> None:
    """The reported reason of each test first, then its others, then the tests whose outputs broke the clause."""
    entries: list[dict[str, Any]] = [
        {"test": "t1", "outcome": "fail", "reason": "r1", "reason_id": "a", "reasons": [{"reason": "r1", "reason_id": "a"}, {"reason": "r2", "reason_id": "b"}]},
        {"test": "t2", "outcome": "pass"},
    ]  # fmt: skip
    elsewhere = Reasons()
    elsewhere.add("c", "r3")
    elsewhere.add("a", "r1")
    assert report._failing_tests(entries, {"t3": elsewhere}) == [
        {"test": "t1", "reason": "r1", "reason_id": "a"},
        {"test": "t1", "reason": "r2", "reason_id": "b"},
        {"test": "t3", "reason": "r3", "reason_id": "c"},
        {"test": "t3", "reason": "r1", "reason_id": "a"},
    ]


def two_system_defects(settings: Any) -> Wrapper:
    """A compactor with two CORE-3 defects (a TEST DOUBLE, not a negative control): when it compacts,
    it drops the system prompt from a history with an even number of messages and alters it otherwise."""

    class Two(Wrapper):
        def fix(self, messages: list[dict], out: list[dict]) -> list[dict]:
            if out == messages:
                return out
            if len(messages) % 2 == 0:
                return [m for m in out if m["role"] != "system"]
            return [{**m, "content": f"{m['content']} (edited)"} if m["role"] == "system" else m for m in out]

    return Two(seed_000(settings))


def test_a_clause_failing_for_two_defects_reports_both(tmp_path: Path) -> None:
    checked = in_process(tmp_path, "test_every_reason:two_system_defects", clauses=["CORE-3"], fast=True)
    clause = checked.clause("CORE-3")
    ids = {f["reason_id"] for f in clause["failures"]}
    assert clause["status"] == "fail" and {"system-message-dropped", "system-message-altered"} <= ids, clause["failures"]
    assert {"system-message-dropped", "system-message-altered"} <= {r for _, r in findings.keys("CORE-3", clause)}


def _failure(*reasons: tuple[str, str]) -> dict[str, Any]:
    """A failing CORE-10 as the matrix document keeps it: the first reason shown, every one kept."""
    entry = {"status": "fail", "reason": reasons[0][1], "reason_id": reasons[0][0], "failures": [{"test": "t", "reason_id": i, "reason": r} for i, r in reasons]}
    return {"clause": "CORE-10", "status": "fail", "reason": entry["reason"], "reasons": sorted(r for _, r in findings.keys("CORE-10", entry)), "every_reason": findings.every_reason(entry)}


FAULT = ("crash:RateLimitError", "compact raised RateLimitError: Error code: 429")
BUG = ("crash:BadRequestError", "compact raised BadRequestError: Error code: 400 - 'No tool call found for function call output with call_id call_0001'")


def test_a_bug_is_named_by_any_reason_its_clause_failed_with_and_lost_when_that_one_goes() -> None:
    """openai-agents-python#4322's shape: CORE-10 fails first under a summarizer fault at both releases;
    the bug's own 400 is among the reasons where reported, and gone at the fix."""
    by_text = bugs.Bug("x#1", "FAKE", "fakefw:factory", {}, ("fakefw==2.0",), ("fakefw==3.0",), "CORE-10", None, "No tool call found for")
    by_id = bugs.Bug("x#2", "FAKE", "fakefw:factory", {}, ("fakefw==2.0",), ("fakefw==3.0",), "CORE-10", "crash:BadRequestError", None)
    reported, fixed = _failure(FAULT, BUG), _failure(FAULT)
    for bug in (by_text, by_id):
        assert bug.naming(reported) == [{"reason_id": "crash:BadRequestError", "reason": BUG[1]}]
        assert not bug.names(fixed)
    failures = [{"test": "t[429]", "reason_id": FAULT[0], "reason": FAULT[1]}, {"test": "t[429]", "reason_id": BUG[0], "reason": BUG[1]}]

    def run(*kept: dict[str, str]) -> dict[str, Any]:
        return {"status": "fails", "clauses": {"CORE-10": {"status": "fail", "reason": FAULT[1], "reason_id": FAULT[0], "failures": list(kept)}}}

    assert bugs.progress(by_text, run(*failures), "reported") == "caught"
    assert bugs.progress(by_text, run(failures[0]), "fixed", "caught") == "lost"


def test_the_version_table_shows_a_fix_while_another_reason_of_the_clause_remains() -> None:
    def run(*reasons: tuple[str, str]) -> dict[str, Any]:
        return {"framework": "FAKE", "compactor": "factory", "configuration": "defaults", "target": "fakefw:factory", "status": "fails",
                "failures": [{**_failure(*reasons), "level": "MUST", "harm": "crash"}]}  # fmt: skip

    data = sweep.table(sweep.Sweep("fakefw", ["2.0", "3.0"], results={"2.0": [run(FAULT, BUG)], "3.0": [run(FAULT)]}))
    rows = {row["reason"]: row["changes"] for row in data["configurations"][0]["rows"]}
    assert rows == {"crash:BadRequestError": ["fixed in 3.0"], "crash:RateLimitError": []}


def test_the_summary_names_the_other_reasons_a_clause_failed_with() -> None:
    clause = {"reason_id": "a", "failures": [{"test": "t1", "reason": "r1", "reason_id": "a"}, {"test": "t1", "reason": "r2", "reason_id": "b"}, {"test": "t2", "reason": "r3", "reason_id": "b"}]}
    assert report.other_reasons(clause) == ["b"]
    assert report.other_reasons({"reason_id": "a", "failures": clause["failures"][:1]}) == []
