"""Verdicts a maintainer can trust (issue 14): correct compactors making other legitimate choices
pass, a do-nothing compactor is flagged, declarations make clauses not-applicable (never fail),
a failure replays from the report alone, and the SPEC decisions hold (SPEC Part A)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from compaction_suite.conformance import oracle
from compaction_suite.conformance.capabilities import CapabilityError, declared
from compaction_suite.conformance.clauses import clauses, waived_by
from compaction_suite.conformance.protocol import CommandTarget
from compaction_suite.conformance.report import ranges
from compaction_suite.conformance.reproduce import case_of, replay
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.suite import Suite
from compaction_suite.conformance.target import Target
from compaction_suite.conformance.trigger import Trigger

from checking import check, in_process
from message_builders import calls, reply, result

ROOT = Path(__file__).resolve().parent.parent


# --- end to end: `compaction-suite check`, as a user runs it (`check`: a subprocess each) or in
# this interpreter (`in_process`) where the command line itself is not what is tested


NO_REMOVALS = {cid for op in ("pop", "remove", "clear") for cid in waived_by("session_removes", f"no-{op}")}
"""The clauses a session's removals make applicable (STORE-18, STORE-19): waived where none is declared."""


@pytest.mark.parametrize("target", ["independent.truncating:factory", "independent.structured_summary:factory"])
def test_independent_correct_compactors_conform(target: str, tmp_path: Path) -> None:
    report = check(target, (), tmp_path, exit_code=0)
    assert report["verdict"] == "conforms"
    no_rules = set(waived_by("providers", "openai")) | set(waived_by("trigger", "none")) | set(waived_by("summarizer_window", "none")) | set(waived_by("reactive_window", "none")) | set(waived_by("request_window", "none")) | set(waived_by("trimmed_result_chars", "none")) | set(waived_by("kept_items", "none")) | set(waived_by("usage", "none")) | set(waived_by("run_messages", "none")) | set(waived_by("offloads", "none")) | set(waived_by("offload_result_tokens", "none")) | set(waived_by("keeps", "none"))  # the default providers add no rules (CORE-17); no trigger (FIRE-1, FIRE-2), summarizer window (WIN-1), reactive window (FIRE-5), request window (FIRE-7) tool-result cap (CORE-40), kept window (CORE-71), usage report (COST-1, COST-2), run report (STORE-22), offloads (STORE-30, STORE-31) or retention (CORE-65) declared
    no_rules |= NO_REMOVALS  # no session removal declared (STORE-18, STORE-19)
    chat = {cid: c for cid, c in report["clauses"].items() if "chat-completions" in clauses()[cid].formats and cid not in no_rules}
    assert {report["clauses"][cid]["status"] for cid in no_rules} == {"not-applicable"}
    assert {c["status"] for c in chat.values()} <= {"pass", "skip"}
    assert {c["status"] for cid, c in report["clauses"].items() if cid not in chat} == {"not-applicable"}, "other wire formats' clauses (SPEC Wire formats)"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_compactor_in_another_language_conforms(tmp_path: Path) -> None:
    report = check(f"cmd:node {ROOT / 'examples/node/compactor.mjs'}", ("core", "summary"), tmp_path, exit_code=0)
    assert report["verdict"] == "conforms", report["clauses"]


def test_a_compactor_that_never_compacts_is_flagged(tmp_path: Path) -> None:
    checked = in_process(tmp_path, "broken.compactors:never_compacts", fast=True)
    report = checked.report
    assert checked.exit_code == 1, checked.output[-3000:]
    assert report["verdict"] == "not-shown" and report["compacted_calls"] == 0
    assert report["clauses"]["CORE-1"]["status"] == "not-exercised"


@pytest.mark.parametrize(("name", "waived"), [("declared_between_rounds", "CORE-9"), ("declared_system_outside", "CORE-3")])
def test_a_declaration_makes_its_clause_not_applicable(name: str, waived: str, tmp_path: Path) -> None:
    checked = in_process(tmp_path, f"broken.compactors:{name}", profiles=("core",), fast=True)
    report = checked.report
    assert checked.exit_code == 0, checked.output[-3000:]
    clause = report["clauses"][waived]
    assert clause["status"] == "not-applicable" and "declared capabilities" in clause["reason"]
    assert report["harm_counts"] == {"rejected": 0, "loss": 0, "crash": 0, "policy": 0}


def test_a_declaration_rules_out_a_shape_variant_not_its_clause(tmp_path: Path) -> None:
    """SPEC Part A, Declarations: ``system_prompt: leading`` rules out the ``system-in-the-middle``
    variant only. The same defect fails CORE-3 undeclared; declared, CORE-3 still runs (and
    passes on the leading system messages it keeps) and names what it did not run."""
    undeclared = in_process(tmp_path, "broken.compactors:drops_later_system", clauses=["CORE-3"], fast=True)
    assert undeclared.exit_code == 1 and undeclared.clause("CORE-3")["status"] == "fail"
    assert "test_system_message_in_the_middle" in undeclared.clause("CORE-3")["test"]
    (tmp_path / "leading").mkdir()
    declared_leading = in_process(tmp_path / "leading", "broken.compactors:declared_system_leading", clauses=["CORE-3"], fast=True)
    clause = declared_leading.clause("CORE-3")
    assert declared_leading.exit_code == 0 and clause["status"] == "pass" and clause["exercised"] > 0
    assert clause["ruled_out"] == ["declared capabilities {'system_prompt': 'leading'}: the framework never produces the shape 'system-in-the-middle'"]
    assert "not run: declared capabilities {'system_prompt': 'leading'}" in declared_leading.output


def test_a_failure_replays_from_the_report(tmp_path: Path) -> None:
    checked = in_process(tmp_path, "broken.compactors:strip_system", profiles=("core",), clauses=("CORE-3",))
    report = checked.report
    assert checked.exit_code == 1, checked.output[-3000:]
    clause = report["clauses"]["CORE-3"]
    assert clause["harm"] == "loss" and report["harm_counts"]["loss"] >= 1
    assert clause["replay"].endswith("CORE-3") and clause["case"]["iteration"] >= 1
    replayed = replay(case_of(report, "CORE-3"), "broken.compactors:strip_system")
    assert "CORE-3" in replayed.problems


# --- the pieces, in process


def test_capabilities_default_to_the_strict_reading() -> None:
    other_formats = {cid for cid, c in clauses().items() if "chat-completions" not in c.formats}  # SPEC "Wire formats": the registry's formats (CORE-62 is Anthropic's only)
    other_formats |= set(waived_by("providers", "openai"))  # CORE-17: the default providers add no rules
    other_formats |= set(waived_by("trigger", "none"))  # FIRE-1, FIRE-2: no trigger declared
    other_formats |= set(waived_by("summarizer_window", "none"))  # WIN-1: no summarizer window declared
    other_formats |= NO_REMOVALS  # STORE-18, STORE-19: no session removal declared
    other_formats |= set(waived_by("reactive_window", "none"))  # FIRE-5: no reactive window declared
    other_formats |= set(waived_by("request_window", "none"))  # FIRE-7: no request window declared
    other_formats |= set(waived_by("trimmed_result_chars", "none"))  # CORE-40: no tool-result cap declared
    other_formats |= set(waived_by("kept_items", "none"))  # CORE-71: no kept window declared
    other_formats |= set(waived_by("usage", "none"))  # COST-1, COST-2: no usage report declared
    other_formats |= set(waived_by("run_messages", "none"))  # STORE-22: no run report declared
    other_formats |= set(waived_by("offloads", "none")) | set(waived_by("offload_result_tokens", "none"))  # STORE-30, STORE-31: no offload declared
    other_formats |= set(waived_by("keeps", "none"))  # CORE-65: no retention declared
    assert set(declared(object()).waived()) == other_formats
    assert set(declared(type("C", (), {"capabilities": {"called": "between_rounds"}})()).waived()) - other_formats == {"CORE-9"}
    with pytest.raises(CapabilityError):
        declared(type("C", (), {"capabilities": {"called": "sometimes"}})())


SYSTEM = {"role": "system", "content": "Be brief."}
MIDDLE = {"role": "developer", "content": "Answer in French."}
TURNS = [{"role": "user", "content": f"q{n}"} for n in range(4)]


def test_core3_decision_a_middle_system_message_may_stay_or_move_up() -> None:
    history = [SYSTEM, TURNS[0], TURNS[1], MIDDLE, TURNS[2], TURNS[3]]
    assert oracle.check_system_kept(history, [SYSTEM, MIDDLE, TURNS[3]], True) is None
    assert oracle.check_system_kept(history, [SYSTEM, TURNS[1], MIDDLE, TURNS[3]], True) is None
    assert oracle.check_system_kept(history, [TURNS[3], SYSTEM, MIDDLE], True) is not None
    assert oracle.check_system_kept(history, [SYSTEM, TURNS[3]], True) is not None


def test_sum1_decision_structured_claimers_keep_at_least_ten_messages() -> None:
    history = [SYSTEM] + [{"role": "user", "content": f"q{n}"} for n in range(14)]
    assert len(oracle.expected_summary_shape(history, 2)[1]) == 2
    assert len(oracle.expected_summary_shape(history, 2, 10)[1]) == 10


def test_core11_a_failed_summary_is_a_new_message_for_removed_ones() -> None:
    history = [SYSTEM, *TURNS]
    assert oracle.check_no_failed_summary(history, history) is None
    assert oracle.check_no_failed_summary(history, [SYSTEM, TURNS[3]]) is None  # a truncation fallback
    empty = {"role": "user", "content": "[Context Summary]\n"}
    assert "message 1 (user)" in str(oracle.check_no_failed_summary(history, [SYSTEM, empty, TURNS[3]]))


def test_reasons_point_at_the_message() -> None:
    out = [{"role": "user", "content": "q"}, {"role": "tool", "tool_call_id": "x", "content": "r"}]
    assert str(oracle.check_tool_results_have_calls(out)).startswith("message 1 (tool)")


def test_clause_ranges_read_as_runs() -> None:
    assert ranges(["CORE-1", "CORE-2", "CORE-3", "CORE-6", "TRIG-1"]) == "CORE-1..3, CORE-6, TRIG-1"


def test_core4_leaves_system_messages_to_core3() -> None:
    history = [SYSTEM, TURNS[0], TURNS[1], MIDDLE, TURNS[2], TURNS[3]]
    assert oracle.check_rounds_whole(history, [SYSTEM, MIDDLE, TURNS[2], TURNS[3]]) is None
    assert oracle.check_rounds_whole(history, [SYSTEM, TURNS[3], TURNS[2]]) is not None


def test_core4_replaced_in_place_means_where_the_round_is() -> None:
    """A masked result replaces its message in its own round: a later round reusing the id
    (CORE-6 allows it) does not stand in for a result the compactor dropped."""
    first = [TURNS[0], calls("call_1"), result("call_1", "long output"), reply("read it")]
    later = [TURNS[1], calls("call_1"), result("call_1", "second output"), reply("read it again")]
    history = [SYSTEM, *first, *later]
    masked = [SYSTEM, TURNS[0], calls("call_1"), result("call_1", "[output cleared]"), reply("read it"), *later]
    assert oracle.check_rounds_whole(history, masked) is None
    dropped = [SYSTEM, TURNS[0], calls("call_1"), reply("read it"), *later]
    assert "is missing while the rest of its round" in (oracle.check_rounds_whole(history, dropped) or "")


def test_core4_reads_a_kept_round_equal_to_an_older_one_as_the_newer() -> None:
    """Real traffic repeats a call with a reused id (CORE-6): keeping the newest round after a
    summary is whole, though its call message equals the older round's."""
    history = [SYSTEM, TURNS[0], calls("call_1"), result("call_1", "x"), TURNS[1], calls("call_1"), result("call_1", "y")]
    kept_newest = [SYSTEM, reply("summary of the earlier rounds"), calls("call_1"), result("call_1", "y")]
    assert oracle.check_rounds_whole(history, kept_newest) is None
    cut = [SYSTEM, reply("summary of the earlier rounds"), calls("call_1")]
    assert "is missing while the rest of its round" in (oracle.check_rounds_whole(history, cut) or "")


def test_a_cmd_target_declares_in_its_start_answer() -> None:
    target = CommandTarget(f"{sys.executable} {ROOT / 'tests' / 'fakes' / 'declares.py'}")
    try:
        capabilities = declared(target(Settings()))
    finally:
        target.close()
    other_formats = {cid for cid, c in clauses().items() if "chat-completions" not in c.formats}  # SPEC "Wire formats": the registry's formats (CORE-62 is Anthropic's only)
    other_formats |= set(waived_by("providers", "openai"))  # CORE-17: the default providers add no rules
    other_formats |= set(waived_by("summarizer_window", "none"))  # WIN-1: no summarizer window declared
    other_formats |= NO_REMOVALS  # STORE-18, STORE-19: no session removal declared
    other_formats |= set(waived_by("reactive_window", "none"))  # FIRE-5: no reactive window declared
    other_formats |= set(waived_by("request_window", "none"))  # FIRE-7: no request window declared
    other_formats |= set(waived_by("trimmed_result_chars", "none"))  # CORE-40: no tool-result cap declared
    other_formats |= set(waived_by("kept_items", "none"))  # CORE-71: no kept window declared
    other_formats |= set(waived_by("usage", "none"))  # COST-1, COST-2: no usage report declared
    other_formats |= set(waived_by("run_messages", "none"))  # STORE-22: no run report declared
    other_formats |= set(waived_by("offloads", "none")) | set(waived_by("offload_result_tokens", "none"))  # STORE-30, STORE-31: no offload declared
    other_formats |= set(waived_by("keeps", "none"))  # CORE-65: no retention declared
    other_formats |= set(waived_by("trigger", "size"))  # FIRE-6: a size declared, not "never"
    assert set(capabilities.waived()) - other_formats == {"CORE-9", "CORE-3"}
    assert capabilities.trigger == Trigger("messages", 20)  # declared: FIRE-1 and FIRE-2 apply


class _Returns:
    """A compactor returning a fixed output whatever it is given (to feed the suite's judge)."""

    def __init__(self, out: list[dict]) -> None:
        self.out = out

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        return self.out if self.out else messages


CALL = calls("c1", name="search")


def _suite_judging(out: list[dict]) -> Suite:
    return Suite(Target("t", lambda settings: _Returns(out), "test double", None), None)


def test_core2_decision_an_in_flight_history_returned_unchanged_is_core9s() -> None:
    in_flight = [SYSTEM, TURNS[0], CALL]
    suite = _suite_judging([])
    try:
        suite.new().compact(in_flight, 8)
        assert "CORE-2" not in suite.observed.findings
        Suite.judge(suite, [SYSTEM, *TURNS, CALL, result("c1", "r")], [SYSTEM, CALL], {}, "k")
        assert "CORE-2" in suite.observed.findings and suite.observed.count("CORE-1") == 1
    finally:
        suite.close()


def test_an_output_breaking_two_clauses_fails_both() -> None:
    history = [SYSTEM, *TURNS, CALL, result("c1", "r")]
    suite = _suite_judging([result("c1", "r"), TURNS[3]])
    try:
        suite.new().compact(history, 8)
        assert {"CORE-1", "CORE-3", "CORE-4"} <= set(suite.observed.findings)
        assert (suite.observed.findings["CORE-1"].case or {}).get("iteration") == 8
    finally:
        suite.close()


def test_a_clause_failing_in_several_tests_lists_each(tmp_path: Path) -> None:
    """A clause broken in several tests (here every summarizer fault crashes the compactor) lists
    each failing test with its reasons, each once, so the first one found does not hide the others."""
    checked = in_process(tmp_path, "broken.compactors:crashes_without_claiming_failure", clauses=["CORE-10"], fast=True)
    clause = checked.clause("CORE-10")
    assert clause["status"] == "fail" and len({f["test"] for f in clause["failures"]}) > 1
    assert len({(f["test"], f["reason_id"], f["reason"]) for f in clause["failures"]}) == len(clause["failures"])
    assert all("raised" in f["reason"] for f in clause["failures"])


def test_an_entity_id_is_found_whole_not_inside_a_longer_one() -> None:
    """STRUCT-2 and the replay's retention: an id counts as kept only where the text names it whole."""
    assert oracle.mentions("created ent-1 and 7 others", "ent-1") and oracle.mentions("ids: 7, 8", "7")
    assert not oracle.mentions("created ent-12", "ent-1") and not oracle.mentions("17 files", "7")
    assert not oracle.mentions("user_7", "7") and oracle.mentions('{"id": "u-1"}', "u-1")


def test_a_matrix_reproducer_replays_on_its_own(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure written on its own (the matrix's reproducer: clause, target, case, env) replays
    without the report it came from."""
    from compaction_suite.conformance import reproduce

    clause = in_process(tmp_path, "broken.compactors:strip_system", clauses=["CORE-3"], fast=True).clause("CORE-3")
    monkeypatch.delenv("COMPACTION_REPLAY_PROBE", raising=False)
    path = tmp_path / "reproducer.json"
    path.write_text(json.dumps({"clause": "CORE-3", "target": "broken.compactors:strip_system", "case": clause["case"], "env": {"COMPACTION_REPLAY_PROBE": "1"}}))
    assert reproduce.main([str(path)]) == 1  # the failure still reproduces (SPEC Part C, reproduce)
    printed = capsys.readouterr().out
    assert printed.startswith("CORE-3: replayed against broken.compactors:strip_system") and "'CORE-3'" in printed
    assert "COMPACTION_REPLAY_PROBE" not in os.environ, "the reproducer's env is set for the replay only"


@pytest.mark.parametrize("control", ["summarizes_last_round_only", "placeholder_without_summarizer"])
def test_a_core12_failure_replays_with_the_summarizer_exchanges(control: str, tmp_path: Path) -> None:
    """CORE-12 is judged from what the summarizer was asked: the replay records the call's
    exchanges and judges them as the suite does, so a summary standing for messages its request
    never held (or for no request at all) still fails when replayed (SPEC Part C, reproduce)."""
    from compaction_suite.conformance import reproduce

    target = f"broken.compactors:{control}"
    clause = in_process(tmp_path, target, clauses=["CORE-12"], fast=True).clause("CORE-12")
    assert clause["status"] == "fail", clause
    path = tmp_path / "reproducer.json"
    path.write_text(json.dumps({"clause": "CORE-12", "target": target, "case": clause["case"], "output": clause.get("output")}))
    assert reproduce.main([str(path)]) == 1
    done = replay(clause["case"], target, summarizes=True)
    assert "CORE-12" in done.problems, done.problems
