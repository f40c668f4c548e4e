"""The plug-in contract as types a third party can check against (SPEC Part A, "The plug-in
contract" and "Declarations").

`Compactor` is what every target's factory returns: ``compact(messages, *, iteration)``, plain or
``async def``. Each optional member has a protocol of its own (`ClaimsProfiles`,
`EstimatesTokens`, `ReportsEvents`, `DeclaresCapabilities`, `ObservesUsage`, `ReportsUsage`, `ReportsRun`), so a class that
offers one can say so; `Capabilities` is the declaration's mapping, key by key. The suite itself
checks the same contract at run time (`compaction_suite.conformance.target.check_compactor`,
`compaction_suite.conformance.capabilities.declared`), because a target need not be typed.

Standard library only: importing these types imports nothing else of the suite.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence, Set
from typing import Any, Literal, Protocol, TypeAlias, TypedDict, runtime_checkable

History: TypeAlias = Sequence[Mapping[str, Any]] | Mapping[str, Any]
"""A history in the compactor's wire format: a list of chat-completions messages or Responses
items, or an Anthropic request (``{"system": ..., "messages": [...]}``)."""

Provider = Literal["openai", "anthropic", "bedrock-converse", "gemini", "dashscope-qwq"]
"""A provider whose rules the history must also meet (``Capabilities["providers"]``)."""


class Capabilities(TypedDict, total=False):
    """A compactor's declarations, each key optional with the strictest reading as its default
    (SPEC Part A, "Declarations")."""

    called: Literal["anytime", "between_rounds"]
    """``between_rounds``: the framework calls the compactor only with every tool call answered."""
    system_prompt: Literal["in_list", "leading", "outside"]
    """Where the framework keeps its system prompt: in the compacted list, only at its start, or outside it."""
    wire_format: Literal["chat-completions", "responses", "anthropic-messages"]
    """The history shape ``compact`` receives and returns."""
    providers: list[Provider]
    """The providers whose rule sets the histories must meet (default: ``["openai"]`` for
    chat-completions and responses, ``["anthropic"]`` for anthropic-messages)."""
    trigger: dict[str, int | str] | Literal["never"]
    """When the framework compacts: ``{"messages": N}`` or ``{"tokens": N}`` (``"tokenizer"``
    ``"chars/4"`` by default, ``"o200k_base"``, ``"cl100k_base"``), SPEC FIRE-1, FIRE-2; ``"never"``:
    the framework documents the configuration as never compacting, SPEC FIRE-6."""
    summarizer_providers: list[Provider]
    """The providers whose request rules the summarizer's requests keep (SPEC CORE-13 Decision)."""
    summarizer_window: int
    """The context window, in tokens (at least 1000), of the model the summarizer asks; SPEC WIN-1."""
    reactive_window: int
    """The context window, in tokens (at least 1000), of the agent's model on the reactive path: a
    request over it gets the provider's overflow answer; SPEC FIRE-5."""
    request_window: int
    """The context window, in tokens (at least 1000), of the agent's model whose whole requests (system
    prompt and tool schemas beside the history) the target's own loop sends; SPEC FIRE-7."""
    trimmed_result_chars: int
    """The most characters (at least 1) the framework states a tool result it shortens in place keeps; SPEC CORE-40."""
    kept_items: int
    """The most items (at least 1), system prompt aside, the framework states a compaction leaves (a sliding window's size); SPEC CORE-71."""
    keeps: dict[str, int]
    """The configured retention, ``{"messages": N}`` or ``{"tokens": N}``: the newest messages (or tokens)
    a compaction sends after its summary as they were; SPEC CORE-65."""
    offloads: list[str]
    """The path prefixes (each starting with ``/``) under which the framework writes what it offloads
    from the context, naming the path in the message left in its place; the compactor offers
    ``read_offload(path)`` (`ReadsOffloads`); SPEC STORE-30."""
    offload_result_tokens: int
    """The size in tokens (chars/4, at least 1) over which the framework states it offloads a tool
    result; SPEC STORE-31."""
    images: Literal["by_url", "inline"]
    """``inline``: the framework holds an image as its bytes only, so no image is drawn by URL."""
    files: Literal["any", "none"]
    """``none``: the framework's messages hold no file (PDF) part, only text and images, so none is drawn."""
    tool_calls: Literal["any", "function"]
    """``function``: the framework records only function calls, so no Responses ``custom_tool_call`` is drawn."""
    responses_items: Literal["sdk", "rebuilt"]
    """``rebuilt``: the framework holds a Responses history rebuilt item by item into its own messages
    (hosted tool calls beside reasoning, no message item ids, no custom tool call or compaction item)."""
    programs: Literal["none", "held"]
    """``held``: the framework's Responses history holds a hosted program's transcript (programmatic tool calling:
    ``program``, the calls whose ``caller`` is the program with their outputs, ``program_output``), so some are drawn."""
    session_store: Literal["files", "elsewhere"]
    """Where a framework session (profile ``session``) keeps its items; ``elsewhere`` waives STORE-13."""
    session_appends: Literal["concurrent", "sequential"]
    """``sequential``: one agent loop owns the session, so nothing appends during a compaction (waives STORE-14)."""
    session_removes: list[Literal["pop", "remove", "clear"]]
    """The session operations that remove items; SPEC STORE-18, STORE-19."""
    usage: Literal["none", "reported"]
    """``reported``: the compactor offers ``reported_usage()`` (`ReportsUsage`), its framework's own usage
    report for the last ``compact`` call; SPEC COST-1, COST-2."""
    run_messages: Literal["none", "reported"]
    """``reported``: the compactor offers ``reported_run()`` (`ReportsRun`), the messages its framework
    reports as the last ``compact`` call's run's new ones beside its history before and after; SPEC STORE-22."""
    subagents: Literal["none", "delegates"]
    """``delegates``: the compactor offers ``delegated(history, subagent_history)`` (`Delegates`), its framework's
    agent loop compacting ``history`` and, in the same run, a sub-agent's loop running ``subagent_history``; SPEC STORE-33."""


@runtime_checkable
class Compactor(Protocol):
    """``compact(messages, *, iteration) -> messages``, plain or ``async def``: ``iteration`` is the
    1-based number of the agent-loop iteration that just completed. ``messages`` is passed by
    position, so the parameter may have any name."""

    def compact(self, messages: Any, /, *, iteration: int) -> History | Awaitable[History]: ...


class ClaimsProfiles(Protocol):
    """``profiles``: the profiles the compactor claims (default ``{"core"}``)."""

    @property
    def profiles(self) -> Set[str]: ...


class EstimatesTokens(Protocol):
    """``estimate_tokens(messages)``: the estimate the compactor's trigger uses."""

    def estimate_tokens(self, messages: Any, /) -> int: ...


class ReportsEvents(Protocol):
    """``last_event``: the last compaction's event (a mapping, a dataclass or an object with
    ``as_dict``; SPEC EVT-1), or None before any."""

    @property
    def last_event(self) -> object: ...


class DeclaresCapabilities(Protocol):
    """``capabilities``: how the framework around the compactor calls it."""

    @property
    def capabilities(self) -> Capabilities: ...


class ObservesUsage(Protocol):
    """``observe_usage(prompt_tokens)``: told each model call's ``usage.prompt_tokens`` (the
    reference's trigger counts them; the benchmark replay reports them when the compactor listens)."""

    def observe_usage(self, prompt_tokens: int, /) -> None: ...


class ReportsUsage(Protocol):
    """``reported_usage()``: the input and output tokens the framework itself reports (its run result's
    usage, its metrics) for everything the last ``compact`` call ran, ``{"input_tokens": I,
    "output_tokens": O}``, or None when it ran nothing (declared as ``Capabilities["usage"] = "reported"``;
    SPEC COST-1, COST-2)."""

    def reported_usage(self) -> Mapping[str, int] | None: ...


class ReportsRun(Protocol):
    """``reported_run()``: for the last ``compact`` call's run of the framework's loop, in the wire format,
    ``{"given": the history the run was given, "after": the framework's history after the run, "new":
    what the framework reports as the run's new messages}``, or None when no run completed (declared as
    ``Capabilities["run_messages"] = "reported"``; SPEC STORE-22). It may also hold ``"counts"``: the
    three lists' lengths in the framework's own message units (`conformance.run_messages.COUNTS`)."""

    def reported_run(self) -> Mapping[str, Any] | None: ...


class ReadsOffloads(Protocol):
    """``read_offload(path)``: what the framework's store holds at ``path`` (bytes or text), read as its
    agent's file tool would, or None when it holds nothing there (declared as ``Capabilities["offloads"]``,
    the prefixes it writes under; SPEC STORE-30)."""

    def read_offload(self, path: str, /) -> bytes | str | None: ...


class Delegates(Protocol):
    """``delegated(history, subagent_history)``: the framework's agent loop given ``history`` (in the wire
    format), compacting as it does, that in the same run hands a sub-agent ``subagent_history``'s first
    user message as its task, the sub-agent's loop answered by that history's assistant messages and tool
    results and compacting as it does; ``{"agent": ..., "subagent": ...}``, what each agent's model was
    sent last, or None when the run never reached the sub-agent (declared as ``Capabilities["subagents"] =
    "delegates"``; SPEC STORE-33)."""

    def delegated(self, history: Any, subagent_history: Any, /) -> Mapping[str, Any] | None: ...
