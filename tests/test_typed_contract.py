"""The plug-in contract as types (issue 24, point 5): a third party's compactor typed against
``compaction_suite.Compactor`` and ``compaction_suite.Capabilities`` passes mypy, and one that
breaks the contract (no ``iteration``, an unknown declaration) does not."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import compaction_suite

THIRD_PARTY = textwrap.dedent(
    """
    from typing import Any

    from compaction_suite import Capabilities, Compactor
    from compaction_suite.compactor import ClaimsProfiles, DeclaresCapabilities, EstimatesTokens, Delegates, ObservesUsage, ReportsEvents, ReportsRun, ReportsUsage


    class Truncating:
        capabilities: Capabilities = {"called": "between_rounds", "system_prompt": "in_list", "providers": ["openai", "gemini"]}
        profiles = {"core", "trigger"}
        last_event: dict[str, Any] | None = None

        def compact(self, messages: list[dict[str, Any]], *, iteration: int) -> list[dict[str, Any]]:
            return messages[-4:] if iteration >= 8 else messages

        def estimate_tokens(self, messages: list[dict[str, Any]]) -> int:
            return sum(len(str(m.get("content") or "")) for m in messages) // 4

        def observe_usage(self, prompt_tokens: int) -> None:
            pass


    class AsyncAnthropic:
        capabilities: Capabilities = {"wire_format": "anthropic-messages", "usage": "reported", "files": "none"}

        async def compact(self, request: dict[str, Any], *, iteration: int) -> dict[str, Any]:
            return request

        def reported_usage(self) -> dict[str, int] | None:
            return {"input_tokens": 0, "output_tokens": 0}


    class RunReporting:
        capabilities: Capabilities = {"run_messages": "reported"}

        def compact(self, messages: list[dict[str, Any]], *, iteration: int) -> list[dict[str, Any]]:
            return messages

        def reported_run(self) -> dict[str, list[Any]] | None:
            return {"given": [], "new": [], "after": []}


    class Delegating:
        capabilities: Capabilities = {"subagents": "delegates", "offloads": ["/archive/"]}

        def compact(self, messages: list[dict[str, Any]], *, iteration: int) -> list[dict[str, Any]]:
            return messages

        def read_offload(self, path: str) -> bytes | None:
            return None

        def delegated(self, history: list[dict[str, Any]], subagent_history: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]] | None:
            return {"agent": history, "subagent": subagent_history}


    def factory(settings: object) -> Compactor:
        return Truncating()


    both: list[Compactor] = [Truncating(), AsyncAnthropic()]
    declared: DeclaresCapabilities = Truncating()
    claims: ClaimsProfiles = Truncating()
    estimates: EstimatesTokens = Truncating()
    listens: ObservesUsage = Truncating()
    reports: ReportsEvents = Truncating()
    counts: ReportsUsage = AsyncAnthropic()
    stores: ReportsRun = RunReporting()
    delegates: Delegates = Delegating()
    """
)
BROKEN = textwrap.dedent(
    """
    from typing import Any

    from compaction_suite import Capabilities, Compactor


    class NoIteration:
        def compact(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return messages


    class ReturnsText:
        def compact(self, messages: list[dict[str, Any]], *, iteration: int) -> str:
            return ""


    wrong_signature: Compactor = NoIteration()
    wrong_result: Compactor = ReturnsText()
    unknown_value: Capabilities = {"called": "sometimes"}
    unknown_provider: Capabilities = {"providers": ["mistral"]}
    unknown_usage: Capabilities = {"usage": "estimated"}
    unknown_run: Capabilities = {"run_messages": "stored"}
    """
)


def mypy(tmp_path: Path, name: str, source: str) -> subprocess.CompletedProcess[str]:
    """mypy --strict on ``source``, seeing ``compaction_suite`` where this process imports it from."""
    pytest.importorskip("mypy", reason="mypy comes with the test extra")
    (tmp_path / f"{name}.py").write_text(source)
    package_root = Path(compaction_suite.__file__).resolve().parents[1]
    args = [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--cache-dir", str(tmp_path / ".mypy_cache"), f"{name}.py"]
    env = {"MYPYPATH": str(package_root), "PATH": "", "HOME": str(tmp_path)}
    return subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)


def test_a_compactor_typed_against_the_contract_passes_mypy(tmp_path: Path) -> None:
    done = mypy(tmp_path, "third_party", THIRD_PARTY)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_compactor_that_breaks_the_contract_fails_mypy(tmp_path: Path) -> None:
    done = mypy(tmp_path, "broken_party", BROKEN)
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert done.returncode == 1 and len(errors) == 6, done.stdout + done.stderr
    for line, says in zip(errors, ("NoIteration", "ReturnsText", "'sometimes'", "'mistral'", "'estimated'", "'stored'")):
        assert says in line, line


def test_the_typed_declarations_are_the_ones_the_suite_reads() -> None:
    """One source for the declarations: every key the suite reads (the fields of
    `conformance.capabilities.Capabilities`, but ``never_compacts``, its reading of ``trigger: "never"``)
    is typed, with the values the suite accepts (`CHOICES`, `REMOVALS`, `providers.NAMES`), and nothing
    else is."""
    import dataclasses
    import typing

    from compaction_suite import compactor
    from compaction_suite.conformance import capabilities, providers

    typed = typing.get_type_hints(compactor.Capabilities)
    assert set(typed) == {field.name for field in dataclasses.fields(capabilities.Capabilities)} - {"never_compacts"}
    assert typing.Literal["never"] in typing.get_args(typed["trigger"])
    for key, values in capabilities.CHOICES.items():
        assert typing.get_args(typed[key]) == values, key
    assert typing.get_args(typing.get_args(typed["session_removes"])[0]) == capabilities.REMOVALS
    for key in ("providers", "summarizer_providers"):
        assert typing.get_args(typing.get_args(typed[key])[0]) == providers.NAMES, key
