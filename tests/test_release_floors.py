"""How far back each adapter drives (SPEC Part A, "The framework matrix": supported releases, how far
back): every reported bug's release is inside its adapter's ``SUPPORTED``, and a path an older
supported release lacks is one contract error naming adapter, distribution, version and what is
missing, raised when the factory starts, while the other paths run there. An older release is
stood in for by a double of what it lacks (a release number, a class without a keyword), named so."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import pytest

from compaction_suite.adapters._common import UnsupportedRelease

BUGS = Path(__file__).resolve().parents[1] / "adapters" / "reported_bugs.json"
SETTINGS = SimpleNamespace(
    model="m", base_url="http://127.0.0.1:9/v1", api_key="k", summarizer_timeout=1.0, summary_prompt=None, async_client=None
)


def _runs() -> list[tuple[str, str, str]]:
    data = json.loads(BUGS.read_text(encoding="utf-8"))
    return [
        (bug["id"], bug["run"]["target"], pin)
        for bug in data["bugs"] if "run" in bug
        for pin in bug["run"]["reported"] + (bug["run"].get("fixed") or [])
    ]  # fmt: skip


@pytest.mark.parametrize(("bug", "target", "pin"), _runs())
def test_every_release_a_bug_runs_at_is_one_its_adapter_supports(bug: str, target: str, pin: str) -> None:
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    from compaction_suite.adapters._common import supported

    module_name, _, factory_name = target.partition(":")
    module = importlib.import_module(module_name)
    distribution, version = re.split(r"==", pin)
    spec = supported(module, factory_name).get(distribution)
    assert spec is None or SpecifierSet(spec).contains(Version(version)), f"{bug}: {pin} is outside what {target} supports ({spec})"


def _refused(factory: object, *args: object, **options: object) -> str:
    with pytest.raises(UnsupportedRelease) as raised:
        factory(*args, **options)  # type: ignore[operator]
    line = str(raised.value)
    assert "\n" not in line
    return line


@pytest.mark.parametrize("factory", ["summarization_middleware", "context_editing"])
def test_langchain_middleware_below_1_0_is_a_contract_error_while_trim_messages_runs(monkeypatch: pytest.MonkeyPatch, factory: str) -> None:
    pytest.importorskip("langchain.agents.middleware")
    from compaction_suite.adapters import langchain

    monkeypatch.setattr(langchain, "release", lambda distribution: (0, 3, 28))  # double: langchain 0.3's release number
    line = _refused(getattr(langchain, factory), SETTINGS)
    assert line.startswith(f"adapter langchain:{factory} cannot drive langchain ") and "agent middleware arrived in langchain 1.0" in line
    assert langchain.trim_messages(SETTINGS) is not None


def test_strands_structured_output_agent_is_a_contract_error_where_agent_lacks_it(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("strands.models.anthropic")
    from compaction_suite.adapters import strands

    monkeypatch.setattr(strands, "accepts", lambda callable_, keyword: keyword != "structured_output_model")  # double: Strands before 1.13
    options = {"path": "reactive", "summarization_agent": True}
    line = _refused(strands.summarizing, SETTINGS, **options, structured_output=True)
    assert "strands:summarizing cannot drive strands-agents" in line and "structured_output_model" in line
    assert strands.summarizing(SETTINGS, **options) is not None


def test_autogen_token_limited_without_a_model_client_is_a_contract_error(monkeypatch: pytest.MonkeyPatch) -> None:
    contexts = pytest.importorskip("autogen_core.model_context")
    from compaction_suite.adapters import autogen

    class TokenLimitedBefore05:  # double: 0.4's context, which took no model client
        def __init__(self, token_limit: int, initial_messages: list[object] | None = None) -> None: ...

    monkeypatch.setattr(contexts, "TokenLimitedChatCompletionContext", TokenLimitedBefore05)
    line = _refused(autogen.token_limited, SETTINGS)
    assert line.startswith("the autogen adapter cannot drive autogen-core ") and "takes no 'model_client'" in line
    assert autogen.buffered(SETTINGS) is not None


def test_autogen_without_an_assistant_thought_is_a_contract_error_not_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    """autogen-core 0.4.0's AssistantMessage has no ``thought``: the text beside a round's tool calls has
    nowhere to go, and the sweep showed an AttributeError as a CORE-1 finding there; it is one line."""
    models = pytest.importorskip("autogen_core.models")
    from compaction_suite.adapters import autogen

    class AssistantMessage040:  # double: 0.4.0's message, without the field
        model_fields: ClassVar[dict[str, None]] = {"content": None, "source": None}

    monkeypatch.setattr(models, "AssistantMessage", AssistantMessage040)
    line = _refused(autogen.buffered, SETTINGS)
    assert line.startswith("the autogen adapter cannot drive autogen-core ") and "no 'thought'" in line


def test_autogen_releases_without_the_thought_are_below_its_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweep at autogen-core 0.4.0, 0.4.6 and 0.4.7 (companions of each release's day) saw every
    configuration refuse them for the missing ``thought``; at 0.4.8 ``buffered`` and ``head_and_tail``
    ran: the floor is 0.4.8, one line below it (the release number is a double)."""
    from compaction_suite.adapters import _common, autogen

    monkeypatch.setattr(_common, "installed", lambda dist: "0.4.7")
    assert _common.release_problem(autogen) == "the autogen adapter does not support autogen-core 0.4.7 (supported: >=0.4.8,<0.8)"
    monkeypatch.setattr(_common, "installed", lambda dist: "0.4.8")
    assert _common.release_problem(autogen) is None


def test_semantic_kernel_paths_a_release_lacks_are_contract_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("semantic_kernel.agents")
    from compaction_suite.adapters import semantic_kernel

    real = semantic_kernel.requires
    before_threads = SimpleNamespace()  # double: semantic_kernel.agents before its agent threads
    monkeypatch.setattr(
        semantic_kernel, "requires", lambda name, extra: before_threads if name == "semantic_kernel.agents" else real(name, extra)
    )
    line = _refused(semantic_kernel.truncation_reducer, SETTINGS, invoked_by="agent_thread")
    assert line.startswith("the semantic_kernel adapter cannot drive semantic-kernel ") and "ChatHistoryAgentThread" in line
    assert semantic_kernel.truncation_reducer(SETTINGS, invoked_by="reduce") is not None


def test_a_path_declared_apart_is_checked_against_its_own_releases(monkeypatch: pytest.MonkeyPatch) -> None:
    """``SUPPORTED_BY_PATH``: pydantic-ai's own ``OpenAICompaction`` needs no harness and reaches back to
    pydantic-ai-slim 1.80, while the harness paths keep the module's ``SUPPORTED``."""
    from compaction_suite.adapters import _common, pydantic_ai

    versions = {"pydantic-ai-slim": "1.81.0", "pydantic-ai-harness": None}  # double: an environment of 1.81.0 without the harness
    monkeypatch.setattr(_common, "installed", lambda distribution: versions.get(distribution))
    assert _common.release_problem(pydantic_ai, "openai_compaction") is None
    assert (
        _common.release_problem(pydantic_ai, "summarizing")
        == "the pydantic_ai adapter does not support pydantic-ai-slim 1.81.0 (supported: >=1.105,<3)"
    )
    versions["pydantic-ai-slim"] = "1.79.0"
    assert (
        _common.release_problem(pydantic_ai, "openai_compaction")
        == "the pydantic_ai:openai_compaction adapter does not support pydantic-ai-slim 1.79.0 (supported: >=1.80,<3)"
    )


def test_a_sweep_installs_what_the_path_needs() -> None:
    from compaction_suite.matrix.jobs import Job
    from compaction_suite.matrix.sweep import requirements

    module = "compaction_suite.adapters.pydantic_ai"
    native = Job("Pydantic AI", {}, "openai_compaction", f"{module}:openai_compaction", {}, "", True, module)
    harness = Job("Pydantic AI", {}, "summarizing", f"{module}:summarizing", {}, "", True, module)
    assert requirements([native], "pydantic-ai-slim", "1.81.0") == ["pydantic-ai-slim[openai]==1.81.0"]
    assert requirements([harness], "pydantic-ai-slim", "2.27.0") == ["pydantic-ai-harness", "pydantic-ai-slim==2.27.0"]
    chain = "compaction_suite.adapters.langchain"
    bedrock = Job("LangChain", {}, "langmem_summarization", f"{chain}:langmem_summarization", {"summarizer": "bedrock"}, "", True, chain)
    trim = Job("LangChain", {}, "trim_messages", f"{chain}:trim_messages", {}, "", True, chain)
    assert "langchain-aws" in requirements([bedrock], "langmem", "0.0.29")  # ChatBedrockConverse, the summarizer's class
    assert requirements([trim], "langchain", "1.2.0") == ["langchain==1.2.0", "langchain-anthropic", "langchain-core", "langchain-openai"]


def _bounds(spec: str) -> tuple[str | None, str | None]:
    """The floor (``>=``) and the first release refused above (``<``) of a PEP 440 specifier."""
    from packaging.specifiers import SpecifierSet

    found = {s.operator: s.version for s in SpecifierSet(spec)}
    return found.get(">="), found.get("<")


def _declared() -> list[tuple[str, str | None]]:
    from compaction_suite.adapters import FRAMEWORKS

    paths = [(fw.module, None) for fw in FRAMEWORKS]
    return paths + [(fw.module, path) for fw in FRAMEWORKS for path in getattr(fw.adapter(), "SUPPORTED_BY_PATH", {})]


@pytest.mark.parametrize(("module_name", "path"), _declared())
def test_every_declared_range_runs_at_its_floor_and_refuses_outside_it_in_one_line(
    monkeypatch: pytest.MonkeyPatch, module_name: str, path: str | None
) -> None:
    """SPEC Part A, "The framework matrix and releases": an adapter runs at each release it declares
    (`release_problem` says nothing at each distribution's floor) and a release outside, below its floor
    or at its upper bound, is one line naming the adapter, the distribution and the version (exit 2 when
    the factory starts, `_common.factory`). The installed releases are a double (`installed`)."""
    from compaction_suite.adapters import _common

    module = importlib.import_module(module_name)
    declared = _common.supported(module, path)
    floors = {dist: _bounds(spec)[0] for dist, spec in declared.items()}
    assert all(floors.values()), f"{module_name}: every declared distribution has a floor ({declared})"
    monkeypatch.setattr(_common, "installed", lambda distribution: floors.get(distribution))
    assert _common.release_problem(module, path) is None
    for dist, spec in declared.items():
        floor, above = _bounds(spec)
        outside = [v for v in (_below(str(floor)), above) if v]
        for version in outside:
            monkeypatch.setattr(
                _common, "installed", lambda distribution, d=dist, v=version: v if distribution == d else floors.get(distribution)
            )
            line = _common.release_problem(module, path)
            assert line is not None and "\n" not in line and f"does not support {dist} {version} (supported: {spec})" in line, (
                dist,
                version,
                line,
            )
            assert f"the {module_name.rsplit('.', 1)[-1]}" in line


def _below(floor: str) -> str | None:
    """A release just below ``floor`` (its last number less one, or the pre-release before it)."""
    from packaging.version import Version

    version = Version(floor)
    if version.pre:
        return f"{version.base_version}rc{version.pre[1] - 1}" if version.pre[1] > 1 else None
    numbers = list(version.release)
    while numbers and numbers[-1] == 0:
        numbers.pop()
    if not numbers:
        return None
    numbers[-1] -= 1
    return ".".join(map(str, numbers)) + (".99" if len(numbers) < len(version.release) else "")


def test_deepagents_before_the_trim_keyword_refuses_only_the_configuration_that_passes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """deepagents 0.4.5-0.6.7: ``create_summarization_middleware(model, backend)`` takes no
    ``trim_tokens_to_summarize`` (0.6.8 on); the factory's own configuration, the one ``create_deep_agent``
    builds, runs there (the sweep at 0.4.5, 0.5.9 and 0.6.12, README "Framework matrix")."""
    summarization = pytest.importorskip("deepagents.middleware.summarization")
    from compaction_suite.adapters import deepagents

    real = summarization.create_summarization_middleware

    def before_0_6_8(model: object, backend: object) -> object:  # double: 0.4.5's signature, the release's own middleware
        return real(model, backend)

    monkeypatch.setattr(summarization, "create_summarization_middleware", before_0_6_8)
    line = _refused(deepagents.summarization, SETTINGS, trim_tokens_to_summarize=4000)
    assert line.startswith("adapter deepagents:summarization cannot drive deepagents ") and "trim_tokens_to_summarize from 0.6.8" in line
    assert deepagents.summarization(SETTINGS) is not None


def test_deepagents_refusing_the_documented_user_middleware_is_its_crash_not_a_contract_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """deepagents 0.5.4-0.6.12: ``create_deep_agent`` given LangChain's ``SummarizationMiddleware`` fails in
    ``create_agent`` ("Please remove duplicate middleware instances."). The factory still builds (no
    contract error) and every compaction raises that error, CORE-10's crash (SPEC, "The framework matrix and
    releases", Decision on a documented configuration the framework refuses); another error building the
    agent stays the factory's own."""
    deepagents_module = pytest.importorskip("deepagents")
    from compaction_suite.adapters import deepagents

    def refusing(**given: object) -> object:  # double: 0.6.12's create_agent on the pair of middlewares
        raise AssertionError("Please remove duplicate middleware instances.")

    monkeypatch.setattr(deepagents_module, "create_deep_agent", refusing)
    compactor = deepagents.user_summarization(SETTINGS)
    history = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    with pytest.raises(AssertionError, match="Please remove duplicate middleware instances"):
        compactor.compact(history, iteration=1)

    def broken(**given: object) -> object:  # double: an error that is not the named refusal
        raise TypeError("create_deep_agent() got an unexpected keyword argument 'backend'")

    monkeypatch.setattr(deepagents_module, "create_deep_agent", broken)
    with pytest.raises(TypeError, match="unexpected keyword"):
        deepagents.user_summarization(SETTINGS)


def test_langchain_middleware_that_does_not_import_beside_its_dependencies_is_a_contract_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """langchain 1.1.1 installed today: langgraph below 1.1 beside a newer langgraph-prebuilt, so
    ``langchain.agents.middleware`` raises ImportError on a name; the factory says so in one line naming
    the release, not "not installed"."""
    pytest.importorskip("langchain.agents.middleware")
    from compaction_suite.adapters import langchain

    def skewed(module: str, extra: str) -> object:  # double: the import as it fails in that environment
        try:
            raise ImportError("cannot import name 'ExecutionInfo' from 'langgraph.runtime'")
        except ImportError as error:
            raise ImportError(f"{module} is not installed: pip install ... ({error})") from error

    monkeypatch.setattr(langchain, "requires", skewed)
    line = _refused(langchain.summarization_middleware, SETTINGS)
    assert line.startswith("adapter langchain:summarization_middleware cannot drive langchain ") and "ExecutionInfo" in line


def test_langchain_summarizer_of_its_own_below_1_4_5_refuses_only_the_configuration_that_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """langchain before 1.4.5: ``SummarizationMiddleware`` takes no ``summarizer=``; the configuration with a
    summarizer of its own (``summarizer_window``) is refused in one line, the others run."""
    pytest.importorskip("langchain.agents.middleware")
    from compaction_suite.adapters import langchain

    monkeypatch.setattr(langchain, "release", lambda distribution: (1, 4, 4))  # double: langchain 1.4.4's release number
    line = _refused(langchain.summarization_middleware, SETTINGS, summarizer_window=2000)
    assert line.startswith("adapter langchain:summarization_middleware cannot drive langchain ") and "summarizer= from 1.4.5" in line
    assert langchain.summarization_middleware(SETTINGS) is not None
