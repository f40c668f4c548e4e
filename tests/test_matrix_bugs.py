"""The reported-bugs runner (``compaction-suite matrix --bugs``), offline, with the FAKE framework
``fakefw`` of tests/test_matrix_sweep.py (1.0 keeps the system prompt, 2.0 drops it, 3.0 fixes it).

A FAKE bug list names the fake's bug at 2.0 fixed in 3.0 (caught, then lost), the same bug
"reported" at 1.0 where it does not exist (missed), a release that does not exist (not installed,
still counted as not caught) and an entry without a run (listed, not counted).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_matrix_sweep import fake_index

from compaction_suite.matrix import bugs

EXPECT = {"clause": "CORE-3", "reason": r"system messages changed"}


def fake_list(path: Path) -> Path:
    entries = [
        {"id": "fakefw#1", "framework": "FAKE", "run": {"target": "fakefw:factory", "reported": ["fakefw==2.0"], "fixed": ["fakefw==3.0"], "expect": EXPECT}},
        {"id": "fakefw#2", "framework": "FAKE", "run": {"target": "fakefw:factory", "reported": ["fakefw==1.0"], "fixed": ["fakefw==3.0"], "expect": EXPECT}},
        {"id": "fakefw#3", "framework": "FAKE", "run": {"target": "fakefw:factory", "reported": ["fakefw==9.9"], "expect": EXPECT}},
        {"id": "fakefw#4", "framework": "FAKE", "after": {"why": "path not adapted"}},
    ]  # fmt: skip
    path.write_text(json.dumps({"about": "FAKE bug list (test double)", "bugs": entries}))
    return path


def test_bugs_are_caught_where_reported_and_lost_where_fixed(tmp_path: Path) -> None:
    from compaction_suite.cli.matrix import matrix

    links = fake_index(tmp_path / "links")
    out = tmp_path / "out"
    args = [
        "--bugs", str(fake_list(tmp_path / "bugs.json")), "--max-examples", "5", "--cache-dir", str(tmp_path / "envs"),
        "--find-links", str(links), "--no-index", "--share-suite", "--out", str(out),
    ]  # fmt: skip
    result = CliRunner().invoke(matrix, args, catch_exceptions=False)
    assert result.exit_code == 1, result.output  # two bugs not caught where reported (SPEC CLI-1)
    assert "1 of 3 reported bugs caught at their reported release (33%; 1 did not run there: not installed, refused or failed, see " in result.output
    assert "/bugs.md); 1 of 1 lost at the fixing release (100%)" in result.output  # fakefw#3: no 9.9, said in the line
    data = json.loads((out / "bugs.json").read_text())
    by_id = {e["id"]: e for e in data["bugs"]}
    caught = by_id["fakefw#1"]
    assert caught["reported"]["status"] == "caught" and caught["reported"]["installed"] == {"fakefw": "2.0"}
    assert caught["fixed"]["status"] == "lost" and caught["fixed"]["installed"] == {"fakefw": "3.0"}
    assert "compaction-suite check fakefw:factory" in caught["reported"]["command"]
    assert by_id["fakefw#2"]["reported"]["status"] == "missed"
    assert by_id["fakefw#2"]["fixed"]["status"] == "not found"  # "lost" only says what a fix did to a catch
    assert by_id["fakefw#3"]["reported"]["status"] == "not-installed" and " exited 1: " in by_id["fakefw#3"]["reported"]["error"]
    assert data["recall"] == {
        "caught": 1,
        "attempted": 3,
        "ran": 2,
        "recall": "33%",
        "lost_at_fix": 1,
        "judged_at_fix": 1,
        "lost_share": "100%",
    }
    assert data["by_framework"]["FAKE"]["recall"] == "33%"
    assert data["not_runnable"] == [{"id": "fakefw#4", "framework": "FAKE", "why": "path not adapted"}]
    assert data["complete"] is True and "Partial" not in (out / "bugs.md").read_text()
    assert (out / "releases" / "fakefw-2.0" / "matrix.json").is_file()  # each environment's own matrix
    table = (out / "bugs.md").read_text()
    assert "| fakefw#1 | CORE-3 system messages changed | fakefw==2.0 | caught | fakefw==3.0 | lost |" in table
    # The line after each run is the entry's verdict there, not the check's exit status: fakefw#1's
    # check still conforms at 3.0 ("lost"), fakefw#2's conforms at 1.0 ("missed") and at 3.0 ("not found").
    lines = result.output.splitlines()
    verdicts = [
        lines[i + 1].split(" in ")[0].strip() for i, line in enumerate(lines[:-1]) if line.startswith("fakefw#") and line.endswith(" ...")
    ]
    started = [
        line.split(":")[0] + " " + line.rsplit(" at ", 1)[1].removesuffix(" ...")
        for line in lines
        if line.startswith("fakefw#") and line.endswith(" ...")
    ]
    assert dict(zip(started, verdicts, strict=True)) == {
        "fakefw#1 fakefw==2.0": "caught", "fakefw#2 fakefw==1.0": "missed", "fakefw#1 fakefw==3.0": "lost", "fakefw#2 fakefw==3.0": "not found",
    }  # fmt: skip
    assert not any(line.strip().startswith(("fails in", "conforms in")) for line in lines)


def test_a_run_stopped_midway_leaves_what_it_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The documents are written after every run, ``complete`` false until the last: a list of a
    hundred entries takes hours, and a run stopped after the first entry keeps its verdict (SPEC,
    Reported bugs)."""
    from compaction_suite.cli.matrix import matrix

    real, calls = bugs.run_job, []

    def stopped_after_one(*args: Any, **kwargs: Any) -> dict:
        calls.append(args)
        if len(calls) > 1:
            raise KeyboardInterrupt  # the user's Ctrl-C during the second run
        return real(*args, **kwargs)

    monkeypatch.setattr(bugs, "run_job", stopped_after_one)
    links, out = fake_index(tmp_path / "links"), tmp_path / "out"
    args = [
        "--bugs", str(fake_list(tmp_path / "bugs.json")), "--max-examples", "5", "--cache-dir", str(tmp_path / "envs"),
        "--find-links", str(links), "--no-index", "--share-suite", "--out", str(out),
    ]  # fmt: skip
    stopped = CliRunner().invoke(matrix, args)  # click ends a Ctrl-C as Abort
    assert stopped.exit_code != 0 and len(calls) == 2
    data = json.loads((out / "bugs.json").read_text())
    assert data["complete"] is False and data["version"] == bugs.FORMAT_VERSION
    by_id = {e["id"]: e for e in data["bugs"]}
    assert by_id["fakefw#1"]["reported"]["status"] == "caught"
    assert by_id["fakefw#2"]["reported"]["status"] == "none" and data["recall"]["attempted"] == 1
    assert (out / "bugs.md").read_text().splitlines()[2].startswith("**Partial:**")
    assert (out / "releases" / "fakefw-2.0" / "matrix.json").is_file()


def test_a_reason_that_does_not_name_the_bug_is_not_a_catch() -> None:
    bug = bugs.Bug("x", "FAKE", "fakefw:factory", {}, ("fakefw==2.0",), (), "CORE-1", "orphan-tool-result", None)
    finding = {"clause": "CORE-1", "status": "fail", "reason": "message 3 (tool): no call", "reasons": ["unanswered-tool-call"]}
    assert not bug.names(finding)
    assert bug.names({**finding, "reasons": ["orphan-tool-result"]})
    assert not bug.names({**finding, "clause": "CORE-2", "reasons": ["orphan-tool-result"]})  # another clause
    assert not bug.names({**finding, "status": "pass", "reasons": ["orphan-tool-result"]})
    by_text = bugs.Bug("y", "FAKE", "fakefw:factory", {}, ("fakefw==2.0",), (), "CORE-1", None, r"\(tool\): no call")
    assert by_text.names(finding)


def test_an_entry_giving_an_id_and_a_text_is_named_only_by_a_reason_holding_both() -> None:
    """A generic reason id (FIRE-5's ``overflow-answer-not-recovered``) is narrowed to the bug by its
    text: another defect failing the clause with the same id does not name it (strands#2052 was
    counted kept at its fix on a ``TypeError`` of a shape its model cannot send, SPEC Decision)."""
    bug = bugs.Bug("z", "FAKE", "fakefw:factory", {}, ("fakefw==2.0",), (), "FIRE-5", "overflow-answer-not-recovered", "exceeded max context length")
    other = {"reason_id": "overflow-answer-not-recovered", "reason": "ended in TypeError: content_type=<document> | unsupported type"}
    ours = {"reason_id": "overflow-answer-not-recovered", "reason": "ended in ResponseError: prompt too long; exceeded max context length by 9 tokens"}
    text_elsewhere = {"reason_id": "crash:ResponseError", "reason": ours["reason"]}
    finding = {"clause": "FIRE-5", "status": "fail", "reason": other["reason"]}
    assert not bug.names({**finding, "every_reason": [other, text_elsewhere]})
    assert bug.naming({**finding, "every_reason": [other, ours]}) == [ours]
    old_format = {**finding, "reasons": ["overflow-answer-not-recovered"]}  # format 2: the shown text and the ids apart
    assert not bug.names(old_format)
    assert bug.names({**old_format, "reason": ours["reason"]})


def test_nothing_to_measure_is_na() -> None:
    assert bugs.recall([])["recall"] == "n/a" and bugs.recall([])["lost_share"] == "n/a"


def test_environment_requirements_pin_every_named_distribution() -> None:
    bug = bugs.Bug(
        "p",
        "Pydantic AI",
        "compaction_suite.adapters.pydantic_ai:summarizing",
        {},
        ("pydantic-ai-harness==0.18.0", "pydantic-ai-slim==2.27.0"),
        (),
        "CORE-10",
        None,
        "x",
    )
    assert bugs.environment_requirements(bug.job(), bug.reported) == ["pydantic-ai-harness==0.18.0", "pydantic-ai-slim==2.27.0"]


@pytest.mark.parametrize(
    ("entries", "said"),
    [
        ("not json", "not a bug list"),
        ([{"framework": "x"}], "has no id"),
        ([{"id": "a", "run": {"target": "nocolon", "reported": ["x==1"], "expect": EXPECT}}], "MODULE:FACTORY"),
        ([{"id": "a", "run": {"target": "m:f", "reported": ["x>=1"], "expect": EXPECT}}], "DIST==VERSION"),
        ([{"id": "a", "run": {"target": "m:f", "reported": [], "expect": EXPECT}}], "at least one"),
        ([{"id": "a", "run": {"target": "m:f", "reported": ["x==1"], "expect": {"clause": "CORE-1"}}}], "reason_id or reason"),
        (
            [{"id": "a", "run": {"target": "m:f", "reported": ["x==1"], "expect": {"clause": "CORE-1", "reason": "("}}}],
            "regular expression",
        ),
        ([{"id": "a", "after": {"why": "x"}}], "no entry with a run"),
    ],
)
def test_a_bad_bug_list_is_a_usage_error(tmp_path: Path, entries: object, said: str) -> None:
    from compaction_suite.cli.matrix import matrix

    path = tmp_path / "bugs.json"
    path.write_text(entries if isinstance(entries, str) else json.dumps({"bugs": entries}))
    out = tmp_path / "never"
    result = CliRunner().invoke(matrix, ["--bugs", str(path), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert said in result.output
    assert not out.exists()  # nothing written (SPEC CLI-4)


def test_bugs_do_not_mix_with_a_sweep(tmp_path: Path) -> None:
    from compaction_suite.cli.matrix import matrix

    result = CliRunner().invoke(
        matrix, ["--bugs", str(fake_list(tmp_path / "b.json")), "--versions", "fakefw==1.0", "--out", str(tmp_path / "never")]
    )
    assert result.exit_code == 2 and "--bugs" in result.output
    assert not (tmp_path / "never").exists()


def test_the_projects_bug_list_is_runnable_where_it_says_so() -> None:
    """The project's own list (adapters/reported_bugs.json) reads, and every run names an adapter
    factory that exists."""
    import importlib

    listed = bugs.load(Path(__file__).parents[1] / "adapters" / "reported_bugs.json")
    assert listed.bugs
    for bug in listed.bugs:
        module, _, factory = bug.target.partition(":")
        assert callable(getattr(importlib.import_module(module), factory)), bug.id


def test_another_environment_imports_its_own_suite_not_the_working_directorys(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run in a release's environment must import that environment's compaction-suite: ``python -m``
    would put a checkout in the working directory first (PYTHONSAFEPATH keeps it out)."""
    from compaction_suite.conformance import runner
    from compaction_suite.matrix import jobs

    seen: list[dict[str, str]] = []

    def fake_run_check(target: str, args: object, *, env: dict[str, str], **kwargs: object) -> runner.CheckRun:
        seen.append(env)
        return runner.CheckRun(2, None, "ERROR: FAKE run (test double)", 0.0)

    monkeypatch.setattr(jobs, "run_check", fake_run_check)
    job = jobs.Job("FAKE", {}, "factory", "fakefw:factory")
    jobs.run_job(job, True, None, 10, python="/elsewhere/bin/python")
    jobs.run_job(job, True, None, 10)
    assert seen[0].get("PYTHONSAFEPATH") == "1"
    assert seen[1].get("PYTHONSAFEPATH") == os.environ.get("PYTHONSAFEPATH")


def test_the_progress_line_is_the_verdict_not_the_exit_status() -> None:
    """agent-framework#8348 at its fixing release printed "fails" (another clause's finding) while the
    entry was lost there: the line reads the bug's own finding."""
    bug = bugs.Bug("x#1", "FAKE", "fakefw:factory", {}, ("fakefw==2.0",), ("fakefw==3.0",), "CORE-1", "orphan-tool-result", None)
    other = {"status": "fails", "clauses": {"CORE-1": {"status": "fail", "reason": "no call", "reason_id": "unanswered-tool-call"}}}
    named = {"status": "fails", "clauses": {"CORE-1": {"status": "fail", "reason": "no call", "reason_id": "orphan-tool-result"}}}
    passed = {"status": "conforms", "clauses": {"CORE-1": {"status": "pass"}}}
    assert bugs.progress(bug, named, "reported") == "caught" and bugs.progress(bug, other, "reported") == "missed"
    assert bugs.progress(bug, other, "fixed", "caught") == "lost" and bugs.progress(bug, named, "fixed", "caught") == "kept"
    assert bugs.progress(bug, passed, "fixed", "missed") == "not found" and bugs.progress(bug, named, "fixed", "missed") == "found"
    assert bugs.progress(bug, {"status": "contract-error", "clauses": {}}, "reported") == "contract-error"
