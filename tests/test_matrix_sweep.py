"""The matrix's version sweep (``compaction-suite matrix --versions``), offline.

A tiny FAKE framework distribution, ``fakefw``, is built here as wheels at three versions (1.0
keeps whole rounds and the system prompt, 2.0 brings a bug that drops the system prompt, 3.0
fixes it; no 9.9 exists) into a local ``--find-links`` folder. The sweep builds one environment per release
(``python -m venv`` + pip, ``--no-index``; ``--share-suite`` lends this interpreter's
compaction-suite, as a machine without the package index needs), checks the fake's compactor in
each, and the version table must show the finding appear in 2.0 and go in 3.0, identified by its
clause and its stable reason.
"""

from __future__ import annotations

import base64
import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from compaction_suite.matrix import findings, sweep

FAKE = '''"""FAKE framework for the matrix's sweep test (compaction-suite tests/test_matrix_sweep.py)."""

VERSION = {version!r}


class Compactor:
    capabilities = {{"called": "between_rounds", "system_prompt": "in_list"}}

    def compact(self, messages, *, iteration):
        users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
        if len(users) < 2:
            return list(messages)
        kept = messages[users[-1]:]
        if VERSION == "2.0":  # the bug: the system prompt goes with the older turns
            return kept
        return [m for m in messages[: users[-1]] if m.get("role") in ("system", "developer")] + kept


def factory(settings):
    return Compactor()
'''


def fake_wheel(folder: Path, version: str) -> Path:
    """A wheel of ``fakefw`` at ``version`` (pure Python; RECORD with sha256 as pip expects)."""
    files = {
        "fakefw/__init__.py": FAKE.format(version=version),
        f"fakefw-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: fakefw\nVersion: {version}\nSummary: FAKE framework (test double)\n",
        f"fakefw-{version}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: compaction-suite-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    files[f"fakefw-{version}.dist-info/RECORD"] = "\n".join([*record, f"fakefw-{version}.dist-info/RECORD,,"]) + "\n"
    path = folder / f"fakefw-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)
    return path


def fake_index(folder: Path) -> Path:
    """A folder of FAKE releases 1.0, 2.0 and 3.0 for ``--find-links`` (9.9 is never published)."""
    folder.mkdir()
    for version in ("1.0", "2.0", "3.0"):
        fake_wheel(folder, version)
    return folder


def test_the_version_table_shows_a_finding_appear_and_go(tmp_path: Path) -> None:
    from compaction_suite.cli.matrix import matrix

    links = fake_index(tmp_path / "links")
    out = tmp_path / "out"
    args = [
        "--no-adapters", "--target", "fakefw:factory", "--versions", "fakefw==3.0,1.0,2.0,9.9", "--clause", "CORE-3", "--max-examples", "5",
        "--cache-dir", str(tmp_path / "envs"), "--find-links", str(links), "--no-index", "--share-suite", "--out", str(out),
    ]  # fmt: skip
    result = CliRunner().invoke(matrix, args, catch_exceptions=False)
    assert result.exit_code == 1, result.output  # a finding at some release: the sweep found a problem (SPEC CLI-1, CLI-4)
    data = json.loads((out / "versions.json").read_text())
    assert [r["version"] for r in data["releases"]] == ["1.0", "2.0", "3.0", "9.9"]  # in version order, as given in any order
    assert [r["installed"] for r in data["releases"][:3]] == [{"fakefw": v} for v in ("1.0", "2.0", "3.0")]  # each in its own environment
    assert " exited 1: " in data["releases"][3]["not_installed"]  # no 9.9: said so (by pip, or uv where on PATH), never a finding
    (configuration,) = data["configurations"]
    rows = [row for row in configuration["rows"] if row["clause"] == "CORE-3"]
    assert rows, configuration
    for row in rows:
        assert row["cells"] == {"1.0": "absent", "2.0": "present", "3.0": "absent", "9.9": "not-installed"}, row
        assert row["changes"] == ["appears in 2.0", "fixed in 3.0"]
        assert row["reason"]
    table = (out / "versions.md").read_text()
    assert "| CORE-3 |" in table and "appears in 2.0; fixed in 3.0" in table and " exited 1: " in table
    assert (out / "releases" / "fakefw-2.0" / "matrix.json").is_file()  # each release's own matrix
    assert "| fakefw:factory `factory` (defaults) | – | 1.0, 2.0, 3.0 | none | 9.9: not installed |" in table  # releases driven
    assert not list(Path.cwd().glob("compaction-suite-env.json"))  # nothing written where the user did not ask


def test_a_release_not_installed_is_named_in_the_summary_line_and_never_exits_0(tmp_path: Path) -> None:
    """SPEC "Version sweeps", Decision (a release not installed): 1 beside a release that ran with
    no finding, 2 when no release could be installed, and the line names the release either way."""
    from compaction_suite.cli.matrix import matrix

    links = fake_index(tmp_path / "links")
    common = ["--no-adapters", "--target", "fakefw:factory", "--clause", "CORE-3", "--max-examples", "3", "--cache-dir", str(tmp_path / "envs"),
              "--find-links", str(links), "--no-index", "--share-suite"]  # fmt: skip
    some = CliRunner().invoke(matrix, [*common, "--versions", "fakefw==1.0,9.9", "--out", str(tmp_path / "some")], catch_exceptions=False)
    assert some.exit_code == 1 and "not installed at 9.9" in some.output, some.output  # 1.0 has no CORE-3 finding
    none = CliRunner().invoke(matrix, [*common, "--versions", "fakefw==9.8,9.9", "--out", str(tmp_path / "none")], catch_exceptions=False)
    lines = none.output.strip().splitlines()
    assert none.exit_code == 2 and "no release of fakefw could be installed (9.8, 9.9" in lines[-1], none.output


@pytest.mark.parametrize(
    "spec",
    ["semantic-kernel", "semantic-kernel>=1.0", "==1.0", "semantic-kernel==1.x,,"],
)
def test_a_malformed_versions_option_is_a_usage_error(spec: str) -> None:
    from compaction_suite.cli.matrix import matrix

    result = CliRunner().invoke(
        matrix, ["--no-adapters", "--target", "reference", "--versions", spec, "--out", "/nonexistent/never-written"]
    )
    assert result.exit_code == 2, result.output
    assert "--versions" in result.output
    assert not Path("/nonexistent/never-written").exists()


def test_sweep_requirements_pin_the_release_and_what_is_released_with_it() -> None:
    from compaction_suite.adapters import FRAMEWORKS
    from compaction_suite.matrix.jobs import Job

    autogen = next(fw for fw in FRAMEWORKS if fw.name == "AutoGen")
    job = Job("AutoGen", {}, "buffered", f"{autogen.module}:buffered", {}, module=autogen.module)
    assert sweep.requirements([job], "autogen-core", "0.5.7") == [
        "autogen-agentchat==0.5.7",
        "autogen-core==0.5.7",
        "autogen-ext[openai]==0.5.7",
    ]
    af = next(fw for fw in FRAMEWORKS if fw.name == "Microsoft Agent Framework")
    job = Job("AF", {}, "truncation", f"{af.module}:truncation", {}, module=af.module)
    assert sweep.requirements([job], "agent-framework-core", "1.0.0") == ["agent-framework-core==1.0.0", "agent-framework-openai"]
    assert sweep.applies(job, "agent-framework-core") and not sweep.applies(job, "semantic-kernel")
    # beside a pre-release, a companion may be one too (agent-framework-openai had no final release to go with 1.0.0rc6)
    assert sweep.requirements([job], "agent-framework-core", "1.0.0rc6") == [
        "agent-framework-core==1.0.0rc6",
        "agent-framework-openai>=0.0.0a0",
    ]
    # below a companion's first release it is not asked for (agent-framework-openai starts beside 1.0.0rc6)
    assert sweep.requirements([job], "agent-framework-core", "1.0.0rc4") == ["agent-framework-core==1.0.0rc4"]
    assert sweep._older("1.0.0rc5", "1.0.0rc6") and not sweep._older("1.0.0", "1.0.0rc6") and not sweep._older("x", "1.0")


def test_a_finding_is_identified_by_clause_and_stable_reason() -> None:
    a = {"reason": "message 3 (assistant): tool call 'call_0002' has 0 results in its round"}
    b = {"reason": "message 7 (assistant): tool call 'call_9' has 0 results in its round"}
    c = {"reason": "system messages changed: 1 in, 0 out (or their text or order differs); input message 0 (system) is missing"}
    d = {"reason": "system messages changed: 2 in, 1 out (or their text or order differs); input message 1 (system) is missing"}
    assert findings.reason_key(a) == findings.reason_key(b) != findings.reason_key(c)
    assert findings.reason_key(c) != findings.reason_key(d)  # all system messages lost is not the second of two lost
    assert findings.reason_key({"reason": "input message 4 (tool) is missing while the rest of its round (messages 3..4) was kept"}) == (
        "input message N (tool) is missing while the rest of its round (messages N..N) was kept"
    )
    assert (
        findings.reason_key({"reason_id": "unanswered-tool-call", "reason": "anything"}) == "unanswered-tool-call"
    )  # the report's id wins
    entry = {"status": "fail", "reason": "x", "failures": [a, c]}
    assert findings.keys("CORE-2", entry) == {("CORE-2", findings.reason_key(a)), ("CORE-2", findings.reason_key(c))}


def test_sweep_requirements_keep_the_extras_an_adapter_installs_the_release_with() -> None:
    from compaction_suite.adapters import FRAMEWORKS
    from compaction_suite.matrix.jobs import Job

    strands = next(fw for fw in FRAMEWORKS if fw.name == "Strands Agents")
    job = Job("Strands", {}, "sliding_window", f"{strands.module}:sliding_window", {}, module=strands.module)
    assert sweep.requirements([job], "strands-agents", "1.35.0") == ["strands-agents[anthropic]==1.35.0"]
    # a model whose client the anthropic extra does not bring is installed through Strands' own extra, joined with the rest
    mistral = Job("Strands", {}, "sliding_window", f"{strands.module}:sliding_window", {"model": "mistral"}, module=strands.module)
    ollama = Job("Strands", {}, "sliding_window", f"{strands.module}:sliding_window", {"model": "ollama"}, module=strands.module)
    assert sweep.requirements([mistral], "strands-agents", "1.62.0") == ["strands-agents[anthropic,mistral]==1.62.0"]
    assert sweep.requirements([job, mistral, ollama], "strands-agents", "1.62.0") == ["strands-agents[anthropic,mistral,ollama]==1.62.0"]


def test_a_held_environment_waits_for_the_run_holding_it(tmp_path: Path) -> None:
    """Two runs sharing a cache (another checkout's sweep) take an environment one after the other:
    the second is held out until the first's block ends, so it cannot replace the suite under it."""
    import threading

    from compaction_suite.matrix.environments import held

    lock, order = tmp_path / "env.lock", []
    first_in, second_tried = threading.Event(), threading.Event()

    def first() -> None:
        with held(lock):
            order.append("first in")
            first_in.set()
            second_tried.wait(5)
            order.append("first out")

    def second() -> None:
        first_in.wait(5)
        second_tried.set()
        with held(lock):
            order.append("second in")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert order == ["first in", "first out", "second in"]


def test_each_builder_builds_its_wheel_in_a_folder_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A builder's wheel of the checkout lives in its own folder, so another builder sharing the
    cache (another checkout's run) neither deletes nor replaces it."""
    from compaction_suite.matrix import environments

    def pretend_build(command: list[str], log: Path, name: str | None = None) -> None:  # a TEST DOUBLE of `pip wheel`
        folder = Path(command[command.index("-w") + 1])
        (folder / "compaction_suite-0.2.0-py3-none-any.whl").write_bytes(folder.name.encode())

    monkeypatch.setattr(environments, "_run", pretend_build)
    one = environments.Builder(tmp_path)._wheel(tmp_path)
    two = environments.Builder(tmp_path)._wheel(tmp_path)
    assert one.parent != two.parent and one.exists() and two.exists()
    assert one.parent.parent == two.parent.parent == tmp_path / "wheels"


def test_releases_driven_say_where_each_configuration_ran_and_where_its_adapter_refused() -> None:
    """SPEC Part A, "The framework matrix and releases": a release an adapter cannot drive is its one
    contract line in the summary, apart from the releases it ran at (whatever it found there)."""
    from compaction_suite.adapters import pydantic_ai

    refusal = "the pydantic_ai:openai_compaction adapter does not support pydantic-ai-slim 1.79.0 (supported: >=1.80,<3)"
    data = sweep.table(sweep.Sweep("pydantic-ai-slim", ["1.79.0", "1.80.0", "2.0.0"], results={
        "1.79.0": [_run("contract-error", error=refusal)], "1.80.0": [_run("fails")], "2.0.0": [_run("error")],
    }))  # fmt: skip
    (said,) = sweep.driven(data)
    assert said["declared"] == pydantic_ai.SUPPORTED_BY_PATH["openai_compaction"]
    assert said["ran"] == ["1.80.0"] and said["refused"] == {"1.79.0": refusal} and said["other"] == {"2.0.0": "error"}
    row = sweep.driven_markdown(data)[-1]
    assert row.startswith(
        "| Pydantic AI `openai_compaction` (stateless=true) | pydantic-ai-slim >=1.80,<3 | 1.80.0 | 1.79.0: the pydantic_ai:"
    )
    assert row.endswith("| 2.0.0: ! |")


def _run(status: str, error: str = "") -> dict[str, object]:
    """One run as `document.build` keeps it (a TEST DOUBLE of a sweep's result)."""
    return {
        "framework": "Pydantic AI", "compactor": "openai_compaction", "configuration": "stateless=true",
        "target": "compaction_suite.adapters.pydantic_ai:openai_compaction", "adapter": "compaction_suite.adapters.pydantic_ai",
        "status": status, "failures": [], **({"error": error} if error else {}),
    }  # fmt: skip


class _NoBuilder:
    """A TEST DOUBLE of `environments.Builder` that fails the test if the sweep builds an environment."""

    def as_of(self, distribution: str, version: str) -> None:
        raise AssertionError(f"no environment is wanted for {distribution} {version}")

    def using(self, *args: object, **kwargs: object) -> None:
        raise AssertionError("no environment is wanted")


def test_a_release_outside_what_the_adapter_declares_is_refused_in_one_line_before_any_install(tmp_path: Path) -> None:
    """SPEC Part A, "The framework matrix and releases": every adapter runs at each release it declares,
    or says in one line that it cannot. A release below the floor is refused from the adapter's own
    declaration, without building an environment whose companions may not exist at its date (agent-framework-core
    1.0.0b260116 predates agent-framework-openai, so pip failed and the line said only "not installed")."""
    from compaction_suite.matrix.jobs import Job

    job = Job(
        "Microsoft Agent Framework", {}, "truncation", "compaction_suite.adapters.agent_framework:truncation",
        {"max_n": 6}, module="compaction_suite.adapters.agent_framework",
    )  # fmt: skip
    builder: Any = _NoBuilder()
    done = sweep.run(
        [job], "agent-framework-core", ["1.0.0b260116"], builder, tmp_path, fast=True, max_examples=None, timeout=60, echo=print
    )
    (result,) = done.results["1.0.0b260116"]
    assert result["status"] == "contract-error" and not done.problems
    assert result["error"] == (
        "compaction_suite.adapters.agent_framework:truncation: UnsupportedRelease: the agent_framework adapter does not support "
        "agent-framework-core 1.0.0b260116 (supported: >=1.0.0rc4,<2); not installed"
    )
    (said,) = sweep.driven(sweep.table(done))
    assert said["refused"] == {"1.0.0b260116": result["error"]} and not said["ran"]
    assert sweep.refused(job, "agent-framework-core", "1.13.0") is None  # inside: installed and run as before
