"""Supported releases and documented behaviour (SPEC Part A, "The framework matrix"; agreed
interfaces 3 and 4): a release an adapter does not drive is a contract error naming adapter,
distribution and version (exit 2, one line), never a framework finding; a finding the framework
documents as its contract is shown with its words and counted apart."""

from __future__ import annotations

import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from compaction_suite.adapters import FRAMEWORKS, _common
from compaction_suite.conformance.runner import run_check
from compaction_suite.matrix import verdicts
from compaction_suite.matrix.document import build
from compaction_suite.matrix.jobs import CONTRACT_ERROR, Job, contract_line, run_job
from compaction_suite.matrix.render import markdown

OUT_OF_RANGE = '''
from compaction_suite.adapters._common import capabilities, factory, make

SUPPORTED = {"pytest": "<1"}
DISTRIBUTIONS = ("pytest",)


@factory
def compactor(settings):
    return make("old", {"core"}, lambda messages: messages, declared=capabilities("in_list"))
'''


@pytest.fixture
def out_of_range(tmp_path: Path) -> Path:
    (tmp_path / "old_adapter.py").write_text(textwrap.dedent(OUT_OF_RANGE))
    return tmp_path


def test_a_release_outside_supported_is_a_contract_error_in_one_line(out_of_range: Path) -> None:
    done = run_check("old_adapter:compactor", ["--path", str(out_of_range), "--fast"], timeout=300)
    assert done.exit_code == 2, done.output
    assert done.report is None  # no clause ran: no verdict to report
    line = contract_line(done.output)
    assert f"the old_adapter adapter does not support pytest {metadata.version('pytest')} (supported: <1)" in line, done.output


def test_the_matrix_shows_a_contract_error_apart_from_findings(out_of_range: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(out_of_range))
    result = run_job(Job("Old", {}, "compactor", "old_adapter:compactor"), True, None, 300)
    assert result["status"] == CONTRACT_ERROR and "does not support pytest" in result["error"]
    data = build([result], [], True, None, tmp_path / "m", 1.0)
    assert not verdicts.findings(data["runs"][0])
    md = markdown(data)
    assert "contract error, not a finding: " in md and "0 of 1 configuration have a MUST violation" in md


def test_cannot_drive_names_adapter_distribution_and_version() -> None:
    error = _common.cannot_drive("compaction_suite.adapters.agent_framework", "pytest", "SummarizationStrategy has no 'max_summary_input_tokens'")
    assert str(error) == f"the agent_framework adapter cannot drive pytest {metadata.version('pytest')}: SummarizationStrategy has no 'max_summary_input_tokens'"


@pytest.mark.parametrize("name", [fw.name for fw in FRAMEWORKS])
def test_each_adapter_declares_the_releases_it_drives_and_the_installed_one_is_inside(name: str) -> None:
    fw = next(f for f in FRAMEWORKS if f.name == name)
    module = fw.adapter()
    assert module.SUPPORTED and set(module.SUPPORTED) <= {*module.DISTRIBUTIONS, *getattr(module, "RELEASED_TOGETHER", ())}
    if not fw.installed():
        pytest.skip(f"{name} is not installed")
    assert _common.release_problem(module) is None  # the pinned frameworks extra installs a supported release


def test_every_documented_entry_quotes_its_source_and_names_a_configuration() -> None:
    for fw in FRAMEWORKS:
        module = fw.adapter()
        for entry in getattr(module, "DOCUMENTED", []):
            assert set(_common.Documented.__required_keys__) <= set(entry) <= set(_common.Documented.__annotations__), entry
            assert entry["quote"] and entry["source"] and entry["clause"]
            assert any(f == entry["factory"] for f, _ in module.CONFIGURATIONS), entry  # a factory the matrix runs


def test_a_documented_finding_is_shown_with_its_words_and_counted_apart(tmp_path: Path) -> None:
    """Semantic Kernel's summarization reducer raising under a failing summarizer: documented with
    ``fail_on_error=True`` (its default), undocumented with ``False``."""
    crash = {"status": "fail", "level": "MUST", "harm": "crash", "title": "no exception escapes", "reason": "compact raised ChatHistoryReducerException"}
    runs = [
        {
            "framework": "Semantic Kernel", "versions": {}, "compactor": "summarization_reducer", "target": "x", "options": options,
            "configuration": str(options), "command": "", "why": "", "native": True, "adapter": "compaction_suite.adapters.semantic_kernel",
            "status": "fails", "passed": False, "seconds": 1.0, "clauses": {"CORE-10": dict(crash)},
        }
        for options in ({"target_count": 4}, {"target_count": 4, "fail_on_error": False})
    ]  # fmt: skip
    data = build(runs, [], True, None, tmp_path, 1.0)
    default, without = data["runs"]
    assert default["failures"][0]["documented"]["quote"].startswith("fail_on_error: Raise error if summarization fails")
    assert not verdicts.findings(default) and len(verdicts.findings(default, documented=True)) == 1
    assert "documented" not in without["failures"][0] and len(verdicts.findings(without)) == 1
    md = markdown(data)
    assert "## Documented behaviour (counted apart)" in md and "1 of 2 configurations has a MUST violation" in md


def test_a_documented_entry_naming_a_reason_covers_only_the_reasons_it_matches(tmp_path: Path) -> None:
    """A ``DOCUMENTED`` entry with ``reason`` labels a finding documented only when each reason of the
    clause matches it: the OpenAI Agents SDK's data-free placeholder for a tool output a tripped output
    guardrail rejected is documented; the same clause's other masking, or a newest round's call the
    tripped run left out of the session, is not."""
    placeholder = "the newest round's tool result for call call_1 (9 tokens) is masked in place (now 'Output withheld by an output guardrail.') while the older result for call call_0 (9 tokens) is kept verbatim"
    other = "the newest round's tool result for call call_1 (9 tokens) is masked in place (now \"[{'type': 'input_text'\") while the older result for call call_0 (9 tokens) is kept verbatim"
    dropped = "input item 9 (function_call) of the newest round is missing from the compacted output ('function_call call_1')"

    def run(*reasons: str) -> dict:
        failures = [{"reason": text, "reason_id": "x"} for text in reasons]
        failing = {"status": "fail", "level": "MUST", "harm": "loss", "title": "the newest round is kept", "reason": reasons[0], "reason_id": "x", "failures": failures}
        options = {"threshold": 100, "streamed": True, "stop_on_first_tool": True, "tripwire": True}
        return {
            "framework": "OpenAI Agents SDK", "versions": {}, "compactor": "runner", "target": "x", "options": options,
            "configuration": str(len(reasons)) + reasons[-1], "command": "", "why": "", "native": True, "adapter": "compaction_suite.adapters.openai_agents",
            "status": "fails", "passed": False, "seconds": 1.0, "clauses": {"CORE-14": failing},
        }  # fmt: skip

    shown = build([run(placeholder), run(placeholder, other), run(dropped)], [], True, None, tmp_path, 1.0)["runs"]
    assert shown[0]["failures"][0]["documented"]["quote"].startswith("Customize the data-free placeholder")
    assert ["documented" in r["failures"][0] for r in shown[1:]] == [False, False]
