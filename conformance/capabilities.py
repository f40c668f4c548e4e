"""Declared capabilities: how the framework around a compactor calls it (SPEC Part A, "Declarations").

A compactor may carry ``capabilities``, a mapping (the ``cmd:`` protocol's ``start`` answer
may carry the same keys in its ``capabilities`` object). Each key defaults to the strictest
reading, so a compactor that declares nothing is checked as before:

- ``called``: ``"anytime"`` (default) or ``"between_rounds"``: the framework calls the
  compactor only with every tool call answered, so CORE-9 (a call in flight) cannot happen.
- ``system_prompt``: ``"in_list"`` (default), ``"leading"`` or ``"outside"``. ``"leading"``: the
  framework stores system messages in the list it compacts, but only before its first other
  message, so the suite draws no system message later in a history (the shape variant
  ``system-in-the-middle``). ``"outside"``: the framework keeps its system prompt outside the list
  it compacts, so the suite passes no system message and CORE-3 cannot happen.
- ``wire_format``: ``"chat-completions"`` (default), ``"responses"`` or ``"anthropic-messages"``:
  the history shape ``compact`` receives and returns (SPEC Part A, "Wire formats";
  `conformance.formats`). The clauses of the other formats are not applicable.
- ``providers``: a list of provider rule sets (`conformance.providers.NAMES`: ``"openai"``,
  ``"anthropic"``, ``"bedrock-converse"``, ``"gemini"``) whose rules the outputs must keep besides
  the format's own (SPEC CORE-17); default ``["openai"]`` for chat-completions and responses,
  ``["anthropic"]`` for anthropic-messages. An unknown name is a contract error.
- ``summarizer_providers``: the provider rule sets whose request rules the summarizer requests must
  keep besides their API's own (SPEC CORE-13 Decision), for a target whose summarizer client sends
  its requests to that provider as the test double sees them; default none. Same names as ``providers``.
- ``trigger``: when the framework compacts (`conformance.trigger`): ``{"messages": N}`` or
  ``{"tokens": N}`` (with an optional ``"tokenizer"``); FIRE-1 and FIRE-2 judge it. ``"never"``: the
  framework documents the configuration as never compacting; FIRE-6 judges it. Default: none
  declared, and those clauses are not applicable. Anything else is a contract error.
- ``images``: ``"by_url"`` (default) or ``"inline"``: the framework holds an image as its bytes
  only, so the suite draws every image inline (a ``data:`` URL), none referred to by an https URL;
  a target declaring the ``bedrock-converse`` provider is drawn so too (Converse takes image bytes).
- ``files``: ``"any"`` (default) or ``"none"``: the framework's messages hold no file (a PDF) part,
  only text and images (AutoGen's ``UserMessage`` takes strings and ``Image``s; Semantic Kernel's OpenAI
  connector sends a ``BinaryContent`` as a ``binary`` part the API refuses), so the suite draws no file.
- ``summarizer_window``: the context window, in tokens, of the model the target's summarizer
  asks (an integer of at least 1000); WIN-1 judges a history larger than it. Default: none
  declared, and WIN-1 is not applicable. Anything else is a contract error.
- ``session_removes``: the operations a framework session (profile ``session``) has that remove
  items (`REMOVALS`: ``"pop"`` the newest item, ``"remove"`` an item by its position, ``"clear"``
  everything), as the framework's session API has them; STORE-18 and STORE-19 judge a compaction
  after them. Default: none declared, and those clauses are not applicable. Anything else is a
  contract error.
- ``reactive_window``: the context window, in tokens, of the agent's model on the target's reactive
  path (an integer of at least 1000): a request over it gets the provider's overflow answer, after which
  the target reduces and retries; FIRE-5 judges a history larger than it. Default: none declared, and
  FIRE-5 is not applicable. Anything else is a contract error.
- ``request_window``: the context window, in tokens, of the agent's model whose requests the target's
  own agent loop sends, its system prompt and tool schemas beside the history, for a trigger the
  framework states relative to that window (an integer of at least 1000); FIRE-7 judges a history
  replayed turn by turn through that loop. Default: none declared, and FIRE-7 is not applicable.
- ``trimmed_result_chars``: the most characters the framework states a tool result it shortens in
  place keeps (a trimming filter's documented cap, an integer of at least 1); CORE-40 judges every
  result the compaction changed against it. Default: none declared, and CORE-40 is not applicable.
- ``kept_items``: the most items the framework states a compaction leaves of the list it compacts,
  its system prompt aside (a sliding window's documented size, an integer of at least 1); CORE-71
  judges every compaction of a longer history against it. Default: none declared, and CORE-71 is not
  applicable.
- ``offloads``: the path prefixes (each starting with ``/``) under which the framework writes what it
  takes out of the context, naming the path in the message it leaves in its place; the compactor offers
  ``read_offload(path)`` (`conformance.offloads`) and STORE-30 reads every such path back. Default: none
  declared, and STORE-30 is not applicable. A declaration without the member is a contract error.
- ``offload_result_tokens``: the size in tokens (chars/4, an integer of at least 1) over which the
  framework states it offloads a tool result; STORE-31 judges it. Default: none declared, and STORE-31
  is not applicable.
- ``keeps``: the configured retention, ``{"messages": N}`` or ``{"tokens": N}``: the newest messages (or
  tokens) a compaction sends after its summary as they were (`conformance.retention`); CORE-65 judges it.
  Default: none declared, and CORE-65 is not applicable.
- ``tool_calls``: ``"any"`` (default) or ``"function"``: the framework records only function calls,
  never a Responses ``custom_tool_call`` (pydantic-ai's Responses model drops them), so the suite
  draws none.
- ``responses_items``: ``"sdk"`` (default) or ``"rebuilt"``: the framework holds a Responses history
  rebuilt item by item into its own messages (Agent Framework's Responses hosting,
  ``_item_to_message``), so the suite draws what such a history holds: function calls and hosted
  tool calls (MCP, code interpreter, shell, image generation) beside reasoning items, assistant
  message items without the item ``id`` its messages do not keep, and no custom tool call or
  compaction item (it has no content for them: "Unsupported Item type"), which waives RESP-4 and RESP-5.
- ``programs``: ``"none"`` (default) or ``"held"``: the framework's Responses history holds a hosted program's
  transcript (programmatic tool calling: a ``program``, the function calls whose ``caller`` is that program with
  their outputs, its ``program_output``), so the suite draws one in some histories (`formats.responses.PROGRAM_ITEMS`).

- ``usage``: ``"none"`` (default) or ``"reported"``: the compactor offers ``reported_usage()``, the
  input and output tokens the framework itself reports (its run result's usage, its metrics) for
  everything its last ``compact`` call ran (`conformance.usage`); COST-1 and COST-2 judge it against
  what the suite's test double billed. A declaration without the member is a contract error.
- ``run_messages``: ``"none"`` (default) or ``"reported"``: the compactor offers ``reported_run()``, the
  history its framework's run was given, the framework's history after the run and what it reports
  as the run's new messages (`conformance.run_messages`); STORE-22 judges them. A declaration without
  the member is a contract error.
- ``subagents``: ``"none"`` (default) or ``"delegates"``: the compactor offers ``delegated(history,
  subagent_history)``, its framework's agent loop compacting ``history`` and, in the same run, delegating to a
  sub-agent whose own loop runs ``subagent_history`` (`conformance.subagents`); STORE-33 judges the
  archives each names. A declaration without the member is a contract error.

A clause a declaration makes unreachable is reported ``not-applicable`` with the declaration
as the reason: never a failure, never counted as conforming.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import formats, providers, retention
from .clauses import waived_by
from .trigger import NEVER, Trigger, TriggerError, never, parse

CHOICES: dict[str, tuple[str, ...]] = {
    "called": ("anytime", "between_rounds"),
    "system_prompt": ("in_list", "leading", "outside"),
    formats.KEY: formats.NAMES,
    "session_store": ("files", "elsewhere"),
    "session_appends": ("concurrent", "sequential"),
    "images": ("by_url", "inline"),
    "files": ("any", "none"),
    "tool_calls": ("any", "function"),
    "responses_items": ("sdk", "rebuilt"),
    "programs": ("none", "held"),
    "usage": ("none", "reported"),
    "run_messages": ("none", "reported"),
    "subagents": ("none", "delegates"),
}
"""Each declaration and its values, the default first."""
RULES_OUT: dict[tuple[str, str], tuple[str, ...]] = {
    ("system_prompt", "leading"): ("system-in-the-middle",),
}
"""The shape variants (a test's ``shape`` marker) each declared value makes unreachable; the
clause itself stays applicable and is checked by its other tests."""


REMOVALS = ("pop", "remove", "clear")
"""The session operations that remove items (SPEC Part A, "session", STORE-18, STORE-19): the newest
item (the OpenAI Agents SDK's ``Session.pop_item``), one item by its position in what the session
gives (LangGraph's ``RemoveMessage`` by the message's id), everything (``Session.clear_session``)."""


class CapabilityError(ValueError):
    """A ``capabilities`` declaration the suite cannot read (a contract error)."""


UNDECLARED: dict[str, tuple[str, str]] = {
    "reactive_window": ("no reactive window declared", "the target reduces after no provider overflow answer"),
    "usage": ("no usage report declared", "the target offers no reported_usage() of its framework's own usage"),
    "run_messages": ("no run report declared", "the target offers no reported_run() of the messages its framework reports as a run's new ones"),
    "subagents": ("no sub-agent run declared", "the target offers no delegated() run of a sub-agent inside its agent's run"),
    "request_window": ("no request window declared", "the target replays no history through its agent loop's model requests"),
    "trimmed_result_chars": ("no tool-result cap declared", "the framework states no size for a result it shortens"),
    "kept_items": ("no kept window declared", "the framework states no number of items a compaction leaves"),
    "keeps": ("no retention declared", "the configuration states no number of newest messages or tokens a compaction keeps"),
    "offloads": ("no offload declared", "the framework writes nothing it takes out of the context where its agent reads it back"),
    "offload_result_tokens": ("no offload size declared", "the framework states no size past which it offloads a tool result"),
}
"""The declarations whose absence (None, ``"none"`` or nothing) makes clauses `not-applicable`
(`Capabilities.waived`): what is not declared, and why the clauses cannot be judged without it."""


@dataclass(frozen=True)
class Capabilities:
    called: str = "anytime"
    system_prompt: str = "in_list"
    wire_format: str = formats.CHAT
    providers: tuple[str, ...] = ()
    """The provider rule sets declared (SPEC CORE-17); empty: the format's default (`providers.DEFAULT`)."""
    trigger: Trigger | None = None
    """When the framework compacts (SPEC FIRE-1, FIRE-2); None: not declared, or `never_compacts`."""
    never_compacts: bool = False
    """The framework documents the configuration as never compacting (``trigger: "never"``, SPEC FIRE-6)."""
    session_store: str = "files"
    """Where a framework session (profile ``session``) keeps its items: ``elsewhere`` waives STORE-13."""
    session_appends: str = "concurrent"
    """``sequential``: one agent loop owns the session, so no task appends during a compaction (waives STORE-14)."""
    summarizer_providers: tuple[str, ...] = ()
    """The provider sets whose request rules the summarizer requests keep (SPEC CORE-13 Decision); empty: none."""
    summarizer_window: int | None = None
    """The context window of the model the summarizer asks, in tokens (SPEC WIN-1); None: not declared."""
    reactive_window: int | None = None
    """The context window of the agent's model on the target's reactive path, in tokens: a request over it
    gets the provider's overflow answer, which the target reduces after (SPEC FIRE-5); None: not declared."""
    request_window: int | None = None
    """The context window of the agent's model whose whole requests (system prompt and tool schemas
    beside the history) the target's own loop sends, replaying a history turn by turn (SPEC FIRE-7); None: not declared."""
    trimmed_result_chars: int | None = None
    """The most characters a tool result the framework shortens in place keeps, as it states (SPEC CORE-40); None: not declared."""
    kept_items: int | None = None
    """The most items, system prompt aside, a compaction leaves, as the framework states (SPEC CORE-71); None: not declared."""
    offloads: tuple[str, ...] = ()
    """The path prefixes the framework writes offloaded parts under (SPEC STORE-30); empty: none declared."""
    keeps: tuple[str, int] | None = None
    """The configured retention, ``("messages", N)`` or ``("tokens", N)`` (SPEC CORE-65); None: not declared."""
    offload_result_tokens: int | None = None
    """The size over which the framework states it offloads a tool result, in tokens (SPEC STORE-31); None: not declared."""
    images: str = "by_url"
    """``inline``: the framework holds an image as its bytes only, so the suite draws no image referred to by URL."""
    files: str = "any"
    """``none``: the framework's messages hold no file (PDF) part, so the suite draws none."""
    session_removes: tuple[str, ...] = ()
    """The session operations that remove items (`REMOVALS`; SPEC STORE-18, STORE-19); empty: none declared."""
    tool_calls: str = "any"
    """``function``: the framework records only function calls (no Responses ``custom_tool_call``), so the suite draws none."""
    responses_items: str = "sdk"
    """``rebuilt``: a Responses history rebuilt item by item into framework messages (hosted tool calls, no compaction items)."""
    programs: str = "none"
    """``held``: the framework's Responses history holds hosted programs' transcripts, so the suite draws them."""
    usage: str = "none"
    """``reported``: the compactor offers ``reported_usage()``, its framework's own usage report (SPEC COST-1, COST-2)."""
    run_messages: str = "none"
    """``reported``: the compactor offers ``reported_run()``, the run's new messages as its framework reports them (SPEC STORE-22)."""
    subagents: str = "none"
    """``delegates``: the compactor offers ``delegated(history, subagent_history)``, a sub-agent run inside its agent's (SPEC STORE-33)."""

    def __post_init__(self) -> None:
        if not self.providers:
            object.__setattr__(self, "providers", providers.DEFAULT[self.wire_format])

    @property
    def between_rounds(self) -> bool:
        return self.called == "between_rounds"

    @property
    def system_outside(self) -> bool:
        return self.system_prompt == "outside"

    @property
    def image_urls(self) -> bool:
        """Whether the suite draws images referred to by URL: unless declared ``inline``, or a
        declared provider takes image bytes only (Bedrock Converse: an image block's source is
        ``bytes`` or an S3 location)."""
        return self.images == "by_url" and "bedrock-converse" not in self.providers

    def waived(self) -> dict[str, str]:
        """{clause id: the declaration that makes it unreachable}."""
        found: dict[str, str] = {}
        for key, value in self.choices().items():
            for clause_id in waived_by(key, value):
                found[clause_id] = f"declared capabilities {{'{key}': '{value}'}}"
        for clause_id in set.intersection(*(set(waived_by("providers", name)) for name in self.providers)):
            found[clause_id] = f"declared capabilities {{'providers': {list(self.providers)}}}: they add no rules beyond the wire format's own clauses"
        found |= self._trigger_waived()
        if self.summarizer_window is None:
            for clause_id in waived_by("summarizer_window", "none"):
                found[clause_id] = "no summarizer window declared (capabilities['summarizer_window']): the summarizer model's context window is not known"
        for clause_id, operations in _removal_clauses().items():
            if not set(operations) & set(self.session_removes):
                said = f"declared capabilities {{'session_removes': {list(self.session_removes)}}}" if self.session_removes else "no session removal declared (capabilities['session_removes'])"
                found[clause_id] = f"{said}: the session has no {' or '.join(operations)} to run before a compaction"
        for key, (missing, why) in UNDECLARED.items():
            if getattr(self, key) in (None, "none", ()):
                for clause_id in waived_by(key, "none"):
                    found[clause_id] = f"{missing} (capabilities[{key!r}]): {why}"
        for clause_id in formats.other_formats_clauses(self.wire_format):
            found.setdefault(clause_id, f"{self._format_said()}: checked on another wire format's histories")
        return found

    def _trigger_waived(self) -> dict[str, str]:
        """The clauses the trigger declaration makes unreachable (SPEC FIRE-1, FIRE-2, FIRE-6)."""
        if self.never_compacts:
            said = f"declared capabilities {{'trigger': '{NEVER}'}}: the configuration never compacts, so no size is one it compacts past"
            return dict.fromkeys(waived_by("trigger", NEVER), said)
        if self.trigger is None:
            return dict.fromkeys(waived_by("trigger", "none"), "no trigger declared (capabilities['trigger']): when the framework should compact is not known")
        said = f"declared capabilities {{'trigger': {self.trigger.as_dict()}}}: the configuration compacts past a size"
        return dict.fromkeys(waived_by("trigger", "size"), said)

    def ruled_out(self, shape: str) -> str | None:
        """Why the shape variant ``shape`` cannot reach this target, or None when it can."""
        for key, value in self.choices().items():
            if shape in RULES_OUT.get((key, value), ()):
                return f"declared capabilities {{'{key}': '{value}'}}: the framework never produces the shape {shape!r}"
        return None

    def _format_said(self) -> str:
        if self.wire_format == formats.CHAT:
            return f"the target compacts {formats.CHAT} (no {formats.KEY} declared)"
        return f"declared capabilities {{'{formats.KEY}': '{self.wire_format}'}}"

    def choices(self) -> dict[str, str]:
        """The declarations that take one value of `CHOICES`."""
        found = {"called": self.called, "system_prompt": self.system_prompt, formats.KEY: self.wire_format}
        made = {"session_store": self.session_store, "session_appends": self.session_appends, "images": self.images, "tool_calls": self.tool_calls}
        made["responses_items"] = self.responses_items
        made["programs"] = self.programs
        made["files"] = self.files
        made["usage"] = self.usage
        made["run_messages"] = self.run_messages
        made["subagents"] = self.subagents
        return found | {key: value for key, value in made.items() if value != CHOICES[key][0]}  # a session's declarations and images, where made

    def _trigger_said(self) -> Any:
        return NEVER if self.never_compacts else self.trigger.as_dict() if self.trigger else None

    def as_dict(self) -> dict[str, Any]:
        found = {**self.choices(), "providers": list(self.providers), "trigger": self._trigger_said(), "summarizer_window": self.summarizer_window}
        found |= {"summarizer_providers": list(self.summarizer_providers)} if self.summarizer_providers else {}
        found |= {"reactive_window": self.reactive_window} if self.reactive_window is not None else {}  # written where declared
        found |= {"request_window": self.request_window} if self.request_window is not None else {}  # written where declared
        found |= {"trimmed_result_chars": self.trimmed_result_chars} if self.trimmed_result_chars is not None else {}  # written where declared
        found |= {"kept_items": self.kept_items} if self.kept_items is not None else {}  # written where declared
        found |= {"offloads": list(self.offloads)} if self.offloads else {}
        found |= {"keeps": dict([self.keeps])} if self.keeps else {}
        found |= {"offload_result_tokens": self.offload_result_tokens} if self.offload_result_tokens is not None else {}
        return found | ({"session_removes": list(self.session_removes)} if self.session_removes else {})


def declared(compactor: Any) -> Capabilities:
    """The capabilities ``compactor`` declares; raises `CapabilityError` on an unknown key or value."""
    raw = getattr(compactor, "capabilities", None)
    if raw is None:
        return Capabilities()
    if not isinstance(raw, Mapping):
        raise CapabilityError(f"capabilities must be a mapping, got {type(raw).__name__}")
    known = {k: v for k, v in raw.items() if k in CHOICES}
    for key, value in known.items():
        if value not in CHOICES[key]:
            raise CapabilityError(f"capabilities[{key!r}] is {value!r}; expected one of {', '.join(CHOICES[key])}")
    if known.get("usage") == "reported" and not callable(getattr(compactor, "reported_usage", None)):
        raise CapabilityError("capabilities['usage'] is 'reported' but the compactor has no reported_usage() (SPEC COST-1)")
    if known.get("run_messages") == "reported" and not callable(getattr(compactor, "reported_run", None)):
        raise CapabilityError("capabilities['run_messages'] is 'reported' but the compactor has no reported_run() (SPEC STORE-22)")
    if known.get("subagents") == "delegates" and not callable(getattr(compactor, "delegated", None)):
        raise CapabilityError("capabilities['subagents'] is 'delegates' but the compactor has no delegated(history, subagent_history) (SPEC STORE-33)")
    offloads = _offloads(raw.get("offloads"))
    try:
        keeps = retention.parse(raw.get("keeps"))
    except retention.RetentionError as error:
        raise CapabilityError(str(error)) from error
    if offloads and not callable(getattr(compactor, "read_offload", None)):
        raise CapabilityError("capabilities['offloads'] is declared but the compactor has no read_offload(path) (SPEC STORE-30)")
    try:
        trigger = parse(raw.get("trigger"))
    except TriggerError as error:
        raise CapabilityError(str(error)) from error
    summarizer = _providers(raw.get("summarizer_providers"), "summarizer_providers")
    removes = _removals(raw.get("session_removes"))
    return Capabilities(**known, providers=_providers(raw.get("providers")), trigger=trigger, never_compacts=never(raw.get("trigger")), summarizer_providers=summarizer, summarizer_window=_window(raw.get("summarizer_window")),
        reactive_window=_window(raw.get("reactive_window"), "reactive_window", "the context window of the agent's model on its reactive path"), session_removes=removes,
        request_window=_window(raw.get("request_window"), "request_window", "the context window of the agent's model its loop sends whole requests to"),
        trimmed_result_chars=_positive(raw.get("trimmed_result_chars"), "trimmed_result_chars", "the characters a shortened tool result keeps"),
        kept_items=_positive(raw.get("kept_items"), "kept_items", "the items a compaction leaves"), offloads=offloads, keeps=keeps,
        offload_result_tokens=_positive(raw.get("offload_result_tokens"), "offload_result_tokens", "the tokens past which a tool result is offloaded"),
    )  # fmt: skip


def _removal_clauses() -> dict[str, tuple[str, ...]]:
    """{clause id: the removal operations any one of which it runs by} (``clauses.json``'s
    ``session_removes=no-<operation>`` waivers: a clause is waived when none of them is declared)."""
    found: dict[str, tuple[str, ...]] = {}
    for operation in REMOVALS:
        for clause_id in waived_by("session_removes", f"no-{operation}"):
            found[clause_id] = (*found.get(clause_id, ()), operation)
    return found


def _removals(raw: Any) -> tuple[str, ...]:
    """The declared session removal operations (SPEC STORE-18, STORE-19); raises `CapabilityError` for
    anything but a list of `REMOVALS`."""
    if raw is None:
        return ()
    if not isinstance(raw, (list, tuple)) or not all(isinstance(op, str) and op in REMOVALS for op in raw) or len(set(raw)) != len(raw):
        raise CapabilityError(f"capabilities['session_removes'] is {raw!r}; expected a list of distinct operations among {', '.join(REMOVALS)}")
    return tuple(raw)


SMALLEST_WINDOW = 1000
"""The smallest ``summarizer_window`` declared: no chat model has less, and a summarizer's own prompt needs room."""


def _window(raw: Any, key: str = "summarizer_window", what: str = "the summarizer model's context window") -> int | None:
    """A declared window (SPEC WIN-1, FIRE-5); raises `CapabilityError` for anything but an integer >= `SMALLEST_WINDOW`."""
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < SMALLEST_WINDOW:
        raise CapabilityError(f"capabilities[{key!r}] is {raw!r}; expected {what}, an integer of at least {SMALLEST_WINDOW} tokens")
    return raw


def _positive(raw: Any, key: str, what: str) -> int | None:
    """A declared count or size (SPEC CORE-40, CORE-71, STORE-31), or None when not declared; raises
    `CapabilityError` for anything but a positive integer."""
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise CapabilityError(f"capabilities[{key!r}] is {raw!r}; expected {what}, a positive integer")
    return raw


def _offloads(raw: Any) -> tuple[str, ...]:
    """The declared offload path prefixes (SPEC STORE-30); raises `CapabilityError` for anything but a
    non-empty list of distinct strings starting with ``/``."""
    if raw is None:
        return ()
    if not isinstance(raw, (list, tuple)) or not raw or not all(isinstance(p, str) and p.startswith("/") and len(p) > 1 for p in raw) or len(set(raw)) != len(raw):
        raise CapabilityError(f"capabilities['offloads'] is {raw!r}; expected a non-empty list of distinct path prefixes, each starting with '/'")
    return tuple(raw)


def _providers(raw: Any, key: str = "providers") -> tuple[str, ...]:
    """The declared provider rule sets; raises `CapabilityError` for anything but a list of known names."""
    if raw is None:
        return ()
    if not isinstance(raw, (list, tuple)) or not raw or not all(isinstance(name, str) for name in raw):
        raise CapabilityError(f"capabilities[{key!r}] is {raw!r}; expected a non-empty list of {', '.join(providers.NAMES)}")
    unknown = providers.unknown(raw)
    if unknown:
        raise CapabilityError(f"capabilities[{key!r}] names {', '.join(map(repr, unknown))}; known: {', '.join(providers.NAMES)}")
    return tuple(raw)
