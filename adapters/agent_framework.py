"""Microsoft Agent Framework: the compaction strategies of ``agent_framework`` (``_compaction.py``),
on the two paths AF runs them.

Targets (options from ``$COMPACTION_ADAPTER_OPTIONS``, see ``DEFAULTS``)::

    compaction-suite check compaction_suite.adapters.agent_framework:truncation           # TruncationStrategy
    compaction-suite check compaction_suite.adapters.agent_framework:sliding_window       # SlidingWindowStrategy
    compaction-suite check compaction_suite.adapters.agent_framework:selective_tool_call  # SelectiveToolCallCompactionStrategy
    compaction-suite check compaction_suite.adapters.agent_framework:tool_result          # ToolResultCompactionStrategy
    compaction-suite check compaction_suite.adapters.agent_framework:summarization        # SummarizationStrategy
    compaction-suite check compaction_suite.adapters.agent_framework:token_budget         # TokenBudgetComposedStrategy
    compaction-suite check compaction_suite.adapters.agent_framework:context_window       # ContextWindowCompactionStrategy
    compaction-suite check compaction_suite.adapters.agent_framework:compaction_provider  # CompactionProvider(before/after_strategy=...)
    compaction-suite check compaction_suite.adapters.agent_framework:agent_loop           # Agent(compaction_strategy=...)'s own tool loop
    compaction-suite check compaction_suite.adapters.agent_framework:harness_agent        # create_harness_agent(max_context_window_tokens=...)'s turn

Each strategy factory runs ``apply_compaction`` (what ``Agent(compaction_strategy=...)`` runs before
every model call inside its function-invocation loop), on chat-completions messages or, with
``history="responses"``, on a Responses history as AF's Responses hosting rebuilds it item by item
(`._agent_framework_responses`: hosted tool calls beside reasoning, messages without ids); ``compaction_provider`` runs
``CompactionProvider.before_run`` on the loaded history (``phase="before"``) or ``after_run`` on the
stored history (``phase="after"``), once per ``agent.run``; ``agent_loop`` runs ``Agent.run`` itself, its
function-invocation loop replaying the history's trailing tool rounds, and returns what the model
gets at the next call or what the next turn loads (SPEC CORE-18: a summary lost across iterations,
with a ``ChatMiddleware``, or in the stored history); ``harness_agent`` runs a turn of
``create_harness_agent`` on its documented token-budget compaction and returns what the model is sent
(SPEC FIRE-1: a before-run compaction that never fires). Declarations (``called: between_rounds``,
``system_prompt: in_list``) are proven by ``tests/test_adapter_loops.py`` and
``tests/test_matrix_loops.py``; conversion, shapes and claims are in ``adapters/README.md``.
"""

from __future__ import annotations

from typing import Any

from ._common import (
    Message,
    Note,
    Notes,
    PartView,
    accepts,
    call_back,
    calls_by_id,
    cannot_drive,
    capabilities,
    content_back,
    deep,
    factory,
    finish,
    make,
    options,
    originals_by_call,
    refusal_of,
    requires,
    tool_result_back,
    tool_runs,
    tool_text,
    without_refusal,
)

FRAMEWORK = "Microsoft Agent Framework"
DISTRIBUTIONS = ("agent-framework-core", "agent-framework-openai")
SWEEP_COMPANION_FROM = {"agent-framework-openai": "1.0.0rc6"}
"""A version sweep installs agent-framework-openai beside agent-framework-core from 1.0.0rc6, its first release
(2026-03-30); rc4 and rc5 carry the chat-completions client in core (`_chat_completions_client`)."""
EXTRA = "agent-framework"

SUPPORTED = {"agent-framework-core": ">=1.0.0rc4,<2"}
"""Releases this adapter drives (1.0.0rc4, March 2026, the first with ``_compaction``, and 1.0.0, April 2026,
to 1.23.0): checked when a factory starts. Naming ``rc4`` admits pre-releases (PEP 440); the dated betas and
rc1-rc3 have no compaction (SPEC "Supported releases", the pre-release Decision). At rc4 and rc5 the OpenAI
chat-completions client is core's ``agent_framework.openai.OpenAIChatClient`` (`_chat_completions_client`),
agent-framework-openai arriving beside rc6; a class or keyword a release lacks is a contract error."""

DEFAULTS: dict[str, dict[str, Any]] = {
    "truncation": {"max_n": 20, "compact_to": 10, "tokens": False, "preserve_system": True, "preserve_first_user_group": False},
    "sliding_window": {"keep_last_groups": 6, "preserve_system": True},
    "selective_tool_call": {"keep_last_tool_call_groups": 1},
    "tool_result": {"keep_last_tool_call_groups": 1},
    "summarization": {"target_count": 4, "threshold": 2, "max_summary_input_tokens": 8000, "summarizer_window": None},
    "token_budget": {"token_budget": 2000, "strategies": ["tool_result", "sliding_window"], "keep_last_groups": 6},
    "context_window": {"max_context_window_tokens": 4000, "max_output_tokens": 1000, "keep_last_tool_call_groups": 4},
    "compaction_provider": {"phase": "before", "strategy": "sliding_window", "keep_last_groups": 6, "token_budget": 2000, "target_count": 4, "threshold": 2},
    "agent_loop": {
        "strategy": "summarization", "target_count": 4, "threshold": 2, "keep_last_groups": 6, "token_budget": 2000,
        "middleware": False, "view": "next_call", "rounds": 3, "per_call_persistence": False, "message_ids": True,
        "approval": False, "history": "chat", "after_strategy": None, "stream": False,
        "iteration_limit": False,
    },
    "harness_agent": {"max_context_window_tokens": 2000, "max_output_tokens": 500, "rounds": 2},
    "redis_history": {"max_messages": 8, "rounds": 3},
}
"""AF's own defaults where it has them (SummarizationStrategy target 4 / threshold 2;
ContextWindow keep 4 tool groups); sizes where it requires them."""

WHY = {
    "truncation": "core only: message/token-count trigger, excludes oldest groups; no summarizer, no event",
    "sliding_window": "core only: keeps the last N non-system groups on every call; no trigger, no summarizer",
    "selective_tool_call": "core only: drops older tool-call groups; no trigger, no summarizer",
    "tool_result": "core only: collapses older tool-call groups into an assistant '[Tool results: ...]' message",
    "summarization": (
        "core + failure: documented 'Skipping summarization compaction' on summarizer errors or empty text; "
        "summary is an assistant message (not [Context Summary]); message-count trigger; no event"
    ),
    "token_budget": "core only: token-budget trigger, composed strategies then oldest-group fallback",
    "context_window": "core only: token thresholds of a context window; tool-result eviction then truncation",
    "compaction_provider": "core only: CompactionProvider runs its strategy on the loaded (before) or stored (after) history once per run",
    "agent_loop": (
        "core only: Agent(compaction_strategy=...) in its own function-invocation loop, the history's trailing tool rounds "
        "replayed as iterations; output: what the model gets at the next call, or what the session stores"
    ),
    "harness_agent": (
        "core only: a turn of create_harness_agent(max_context_window_tokens, max_output_tokens), the history loaded from its "
        "history provider; its documented before-run ContextWindowCompactionStrategy trigger declared; output: what the model is sent"
    ),
}

CONFIGURATIONS: list[tuple[str, dict[str, Any]]] = [
    ("truncation", {"max_n": 8, "compact_to": 4}),
    ("truncation", {"max_n": 20, "compact_to": 10}),
    ("truncation", {"max_n": 2000, "compact_to": 1000, "tokens": True}),
    ("sliding_window", {"keep_last_groups": 2}),
    ("sliding_window", {"keep_last_groups": 6}),
    ("selective_tool_call", {"keep_last_tool_call_groups": 0}),
    ("selective_tool_call", {"keep_last_tool_call_groups": 2}),
    ("tool_result", {"keep_last_tool_call_groups": 1}),
    ("summarization", {"target_count": 4, "threshold": 2}),
    ("summarization", {"target_count": 12, "threshold": 2}),
    ("summarization", {"target_count": 4, "threshold": 2, "summarizer_window": 8000}),
    ("token_budget", {"token_budget": 500}),
    ("token_budget", {"token_budget": 2000}),
    ("token_budget", {"token_budget": 2000, "history": "responses"}),
    ("context_window", {"max_context_window_tokens": 2000, "max_output_tokens": 500}),
    ("context_window", {"max_context_window_tokens": 16000, "max_output_tokens": 4000}),
    ("compaction_provider", {"phase": "before", "strategy": "sliding_window", "keep_last_groups": 2}),
    ("compaction_provider", {"phase": "before", "strategy": "tool_result"}),
    ("compaction_provider", {"phase": "after", "strategy": "tool_result"}),
    ("compaction_provider", {"phase": "before", "strategy": "token_budget", "token_budget": 500}),
    ("compaction_provider", {"phase": "before", "strategy": "summarization"}),
    ("agent_loop", {"strategy": "summarization"}),
    ("agent_loop", {"strategy": "summarization", "middleware": True}),
    ("agent_loop", {"strategy": "summarization", "view": "persisted", "rounds": 12}),
    ("agent_loop", {"strategy": "summarization", "view": "persisted", "per_call_persistence": True}),
    ("agent_loop", {"strategy": "token_budget", "token_budget": 500}),
    ("agent_loop", {"strategy": "sliding_window", "keep_last_groups": 3, "message_ids": False}),
    ("agent_loop", {"strategy": "sliding_window", "keep_last_groups": 3, "history": "responses"}),
    ("agent_loop", {"strategy": "tool_result", "approval": True}),
    ("agent_loop", {"strategy": "tool_result", "approval": True, "view": "persisted"}),
    ("agent_loop", {"strategy": "summarization", "stream": True}),
    ("agent_loop", {"strategy": "summarization", "view": "persisted", "rounds": 12, "stream": True}),
    ("agent_loop", {"strategy": "summarization", "iteration_limit": True}),
    ("sliding_window", {"keep_last_groups": 3, "history": "responses"}),
    ("truncation", {"max_n": 8, "compact_to": 4, "history": "responses"}),
    ("tool_result", {"keep_last_tool_call_groups": 1, "history": "responses"}),
    ("harness_agent", {"max_context_window_tokens": 2000, "max_output_tokens": 500}),
]
"""What ``compaction-suite matrix`` runs and counts: shapes AF's loop produces."""

OTHER_SHAPES: list[tuple[str, dict[str, Any], str]] = [
    ("sliding_window", {"keep_last_groups": 6, "tool_results": "separate"}, "one tool message per result: AF's loop puts a round's results in one"),
]
"""Shapes AF's loop never produces: checked in a labelled matrix section no headline counts."""

SHOWN_IN_LOOP: list[dict[str, Any]] = [
    {
        "factory": "token_budget",
        "clause": "CORE-3",
        "options": {},
        "shown": "in Agent(compaction_strategy=...)'s loop, a single leading system message passed as a message is dropped",
        "test": "tests/test_matrix_loops.py::test_agent_framework_token_budget_drops_a_leading_system_message_in_its_loop",
    },
    {
        "factory": "agent_loop",
        "clause": "CORE-18",
        "options": {"view": "persisted"},
        "shown": (
            "what the next turn loads from InMemoryHistoryProvider(skip_excluded=True) lacks the summary of what the turn's compaction "
            "excluded (to 1.17.0; with per-service-call persistence at 1.23.0 too)"
        ),
        "test": "tests/test_agent_framework_paths.py::test_what_the_next_turn_loads_holds_the_summary_of_what_the_turn_excluded",
    },
    {
        "factory": "agent_loop",
        "clause": "CORE-18",
        "options": {"strategy": "summarization"},
        "shown": (
            "in Agent(compaction_strategy=SummarizationStrategy(...))'s tool loop, the summary one call obtained is not sent at the next "
            "while the rounds it replaced stay excluded (before 1.8.0; with a ChatMiddleware attached, before 1.17.0)"
        ),
        "test": "tests/test_agent_framework_paths.py::test_the_summary_of_the_first_call_reaches_the_next_in_the_tool_loop",
    },
    {
        "factory": "compaction_provider",
        "clause": "CORE-18",
        "options": {"strategy": "summarization"},
        "shown": "in the agent's run, CompactionProvider.before_run sends the model the older rounds excluded and not the summary it obtained (1.10.0..1.13.0)",
        "test": "tests/test_agent_framework_paths.py::test_compaction_provider_before_run_sends_the_summary_it_obtained",
    },
    {
        "factory": "summarization",
        "clause": "CORE-12",
        "options": {},
        "shown": (
            "in Agent(compaction_strategy=SummarizationStrategy(...))'s tool loop, the summarizer request writes each tool result as "
            "'[tool] function_result', without its text (before 1.18.0)"
        ),
        "test": "tests/test_agent_framework_paths.py::test_the_summarizer_request_holds_the_tool_results_it_summarizes",
    },
    {
        "factory": "sliding_window",
        "clause": "RESP-3",
        "options": {"history": "responses"},
        "shown": (
            "in Agent(compaction_strategy=SlidingWindowStrategy(...))'s loop given a Responses history as AF's hosting rebuilds it, the model "
            "is sent the second of two hosted calls of one response without the reasoning before it (1.11.0..1.23.0)"
        ),
        "test": "tests/test_agent_framework_shapes.py::test_agent_loop_sends_the_second_hosted_call_without_its_reasoning",
    },
    {
        "factory": "harness_agent",
        "clause": "FIRE-1",
        "options": {},
        "shown": "in a create_harness_agent turn, the model is sent the loaded history uncompacted, whatever its size (before 1.12.0)",
        "test": "tests/test_agent_framework_paths.py::test_the_harness_agent_compacts_the_loaded_history_before_its_model_call",
    },
]
"""What the framework's own loop shows for a finding, said in place of what the smallest reproducer
holds (the matrix prints it beside the finding; the first entry whose options the configuration
gives applies); each entry's test runs that loop."""


# --- conversion ---------------------------------------------------------------------------------


def _contents(af: Any, content: Any) -> tuple[list[Any], list[Any] | None]:
    if content is None:
        return [], None
    if isinstance(content, str):
        return [af.Content.from_text(content)], None
    made = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            made.append(af.Content.from_text(part.get("text", "")))
        elif kind == "image_url":
            url = (part.get("image_url") or {}).get("url", "")
            media = url[5 : url.index(";")] if url.startswith("data:") and ";" in url else None
            made.append(af.Content.from_uri(url, media_type=media))
        elif kind == "file" and str((part.get("file") or {}).get("file_data", "")).startswith("data:"):
            data = part["file"]["file_data"]
            # a PDF as AF's users attach one: a data URI of its media type; the part itself rides along
            made.append(af.Content.from_uri(data, media_type=data[5 : data.index(";")] if ";" in data else None, raw_representation=part))
        else:
            raise ValueError(f"content part {part!r} has no Agent Framework content here")
    return made, list(made)


def _chat_completions_client(settings: Any) -> Any:
    """AF's OpenAI chat-completions client on the suite's client: ``OpenAIChatCompletionClient(model=...)`` of
    agent-framework-openai (1.0.0rc6 on), and before it, at 1.0.0rc4 and rc5, where the compaction strategies
    first shipped, the same client in core as ``agent_framework.openai.OpenAIChatClient(model_id=...)``."""
    import importlib

    try:
        client_class = importlib.import_module("agent_framework_openai").OpenAIChatCompletionClient
    except ImportError:
        try:
            legacy = importlib.import_module("agent_framework.openai")
        except ImportError:
            legacy = None
        if legacy is None or not accepts(legacy.OpenAIChatClient, "model_id"):
            client_class = requires("agent_framework_openai", EXTRA).OpenAIChatCompletionClient  # the install line
        else:
            return legacy.OpenAIChatClient(model_id=settings.model, async_client=settings.async_client)
    return client_class(model=settings.model, async_client=settings.async_client)


def _refusal(af: Any, message: Message) -> list[Any]:
    """An assistant refusal as AF's chat clients parse one (``_parse_refusal_from_openai``): a text
    content holding the refusal, marked as one (``_refusal_additional_properties``) where the
    release's OpenAI package marks it, plain text before; none for a message without one. An
    assistant message with no content at all is not a shape AF's clients produce, and its function
    loop drops such a message from the list it carries."""
    import importlib

    refusal = refusal_of(message)
    if refusal is None:
        return []
    try:  # the marker's owner, where the release has it
        marker = getattr(importlib.import_module("agent_framework_openai._chat_completion_client"), "_refusal_additional_properties", None)
    except ImportError:  # 1.0.0rc4-rc5: the chat-completions client is in agent_framework.openai
        marker = getattr(importlib.import_module("agent_framework.openai._chat_client"), "_refusal_additional_properties", None)
    return [af.Content.from_text(refusal, **({"additional_properties": marker()} if marker else {}))]


def to_agent_framework(messages: list[Message], *, tool_results: str = "grouped", message_ids: bool = True) -> tuple[list[Any], Notes]:
    """AF ``Message`` objects for OpenAI dicts; ``tool_results`` is ``"grouped"`` or ``"separate"``.
    ``message_ids=False`` builds them without a ``message_id``, as AF's users build a message
    (``Message(role="user", contents=[...])``, a plain string) and as AF's loop builds a tool message:
    AF then names them itself (``_ensure_message_ids``) and the notes find them by identity."""
    af = requires("agent_framework", EXTRA)
    if tool_results not in ("separate", "grouped"):
        raise ValueError(f"tool_results must be 'separate' or 'grouped', got {tool_results!r}")
    notes = Notes()
    notes.put("tool_results", Note(original={}, extra={"by_call": originals_by_call(messages), "calls": calls_by_id(messages)}))
    out: list[Any] = []
    runs = tool_runs(messages) if tool_results == "grouped" else [[i] for i in range(len(messages))]
    for run in runs:
        first = messages[run[0]]
        role = first.get("role")
        mid = f"oai-{run[0]}"
        if role == "tool":
            results = [af.Content.from_function_result(messages[i].get("tool_call_id"), result=tool_text(messages[i].get("content"))) for i in run]
            out.append(af.Message(role="tool", contents=results, message_id=mid if message_ids else None))
            continue
        contents, created = _contents(af, first.get("content"))
        if role == "developer":
            role = "system"  # what AF's users send (the note keeps "developer")
        if role == "assistant":
            if first.get("content") == "" and first.get("tool_calls"):
                contents = []
            contents += _refusal(af, first)
            for call in first.get("tool_calls") or []:
                function = call.get("function") or {}
                contents.append(af.Content.from_function_call(call.get("id"), function.get("name"), arguments=function.get("arguments")))
        made = af.Message(role=role, contents=contents, author_name=first.get("name"), message_id=mid if message_ids else None)
        out.append(made)
        note = Note(original=deep(first), created_parts=created)
        notes.put(mid, note)
        if not message_ids:
            notes.put(("object", id(made)), note, keep=made)
    return out, notes


def _views(items: list[Any]) -> list[PartView]:
    views = []
    for item in items:
        if item.type == "text":
            views.append(PartView("text", item.text or ""))
        elif item.type in ("uri", "data") and isinstance(item.raw_representation, dict) and item.raw_representation.get("type") == "file":
            views.append(PartView("other", item.raw_representation, item))
        elif item.type in ("uri", "data"):
            views.append(PartView("image", item.uri, item))
    return views


def from_agent_framework(messages: list[Any], notes: Notes | None = None) -> list[Message]:
    """OpenAI dicts for AF messages (a ``tool`` message with n results gives n dicts)."""
    notes = notes or Notes()
    shared = notes.get("tool_results")
    by_call = shared.extra["by_call"] if shared else {}
    calls = shared.extra["calls"] if shared else {}
    out: list[Message] = []
    for msg in messages:
        results = [c for c in msg.contents if c.type == "function_result"]
        if msg.role == "tool" or results:
            for item in results:
                out.append(tool_result_back(item.call_id, deep(item.result), by_call))
            continue
        note = notes.get(msg.message_id) or notes.get(("object", id(msg)))
        role = str(msg.role)
        if role == "system" and note is not None and note.original.get("role") == "developer":
            role = "developer"
        d: Message = {"role": role, "content": content_back(without_refusal(_views(msg.contents), note), note)}
        function_calls = [c for c in msg.contents if c.type == "function_call"]
        if function_calls:
            d["tool_calls"] = [call_back(c.call_id, c.name, _arguments(c.arguments), calls) for c in function_calls]
            if d["content"] == "" and note is None:
                d["content"] = None
        if msg.author_name is not None:
            d["name"] = msg.author_name
        out.append(finish(d, note))
    return out


def _arguments(value: Any) -> str:
    import json

    return value if isinstance(value, str) else json.dumps(value if value is not None else {}, ensure_ascii=False)


# --- factories ------------------------------------------------------------------------------------


def _compactor(
    name: str, strategy_of: Any, tool_results: str, profiles: set[str], tokenizer: Any = None, trigger: dict[str, int] | None = None,
    window: int | None = None, history: str = "chat",
) -> Any:
    """``trigger``: the size past which the strategy documents it compacts (SPEC FIRE-1, FIRE-2);
    ``window``: the context window of the model its summarizer asks (SPEC WIN-1); ``history``: the
    format compacted (`_Conversion`)."""
    af = requires("agent_framework", EXTRA)
    convert = _Conversion(af, history, tool_results)

    async def run(messages: Any) -> Any:
        converted, back = convert.to(messages)
        kept = await af.apply_compaction(converted, strategy=strategy_of(), tokenizer=tokenizer)
        return back(list(kept))

    estimate = None
    if tokenizer is not None:
        compaction = requires("agent_framework._compaction", EXTRA)

        def estimate(messages: Any) -> int:
            converted, _ = convert.to(messages)
            compaction.annotate_token_counts(converted, tokenizer=tokenizer)
            return int(compaction.included_token_count(converted))

    declared = capabilities("in_list", trigger) | ({} if window is None else {"summarizer_window": window}) | convert.declared
    return make(f"agent_framework.{name}{convert.suffix}", profiles, run, declared=declared, estimate=estimate, is_async=True)


class _Conversion:
    """The history a strategy factory compacts: OpenAI chat-completions messages (``history="chat"``,
    `to_agent_framework`), or a Responses history as AF's Responses hosting rebuilds it item by item
    (``history="responses"``, `._agent_framework_responses`: hosted tool calls beside reasoning,
    messages without ids; declared ``responses_items: rebuilt``)."""

    def __init__(self, af: Any, history: str, tool_results: str) -> None:
        if history not in ("chat", "responses"):
            raise ValueError(f"history must be 'chat' or 'responses', got {history!r}")
        self.af, self.history, self.tool_results = af, history, tool_results
        responses = history == "responses"
        self.declared: dict[str, str] = {"wire_format": "responses", "responses_items": "rebuilt"} if responses else {}
        self.suffix = "[responses]" if responses else ""

    def to(self, messages: Any) -> tuple[list[Any], Any]:
        """AF's messages for ``messages``, and the function giving the kept ones back in their format."""
        if self.history == "responses":
            from . import _agent_framework_responses as rebuilt

            converted, origin = rebuilt.to_agent_framework(self.af, messages)
            return converted, lambda kept: rebuilt.from_agent_framework(kept, origin)
        converted, notes = to_agent_framework(messages, tool_results=self.tool_results)
        return converted, lambda kept: from_agent_framework(kept, notes)


def _release_kwargs(cls: Any, wanted: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """``wanted`` less the keywords ``cls`` does not take at the installed release (one added later):
    left out while the option keeps its default, a contract error when the user set it."""
    kept = {}
    for keyword, value in wanted.items():
        if accepts(cls, keyword):
            kept[keyword] = value
        elif keyword in given:
            raise cannot_drive(__name__, "agent-framework-core", f"{cls.__name__} has no {keyword!r}")
    return kept


def _strategy_class(af: Any, name: str) -> Any:
    found = getattr(af, name, None)
    if found is None:
        raise cannot_drive(__name__, "agent-framework-core", f"agent_framework has no {name}")
    return found


def _opts(kind: str, given: dict[str, Any]) -> dict[str, Any]:
    return options(DEFAULTS[kind] | {"tool_results": "grouped", "history": "chat"}, given)


@factory
def truncation(settings: Any, **given: Any) -> Any:
    o = _opts("truncation", given)
    af = requires("agent_framework", EXTRA)
    tokenizer = af.CharacterEstimatorTokenizer() if o["tokens"] else None

    preserve = _release_kwargs(af.TruncationStrategy, {"preserve_first_user_group": o["preserve_first_user_group"]}, given)  # added after 1.0.0

    def strategy() -> Any:
        return af.TruncationStrategy(max_n=o["max_n"], compact_to=o["compact_to"], tokenizer=tokenizer, preserve_system=o["preserve_system"], **preserve)

    # "Compaction triggers when the metric exceeds ``max_n``": tokens with a tokenizer, else included messages
    return _compactor(
        "TruncationStrategy", strategy, o["tool_results"], {"core"}, tokenizer, {"tokens" if o["tokens"] else "messages": o["max_n"]}, history=o["history"]
    )


@factory
def sliding_window(settings: Any, **given: Any) -> Any:
    o = _opts("sliding_window", given)
    af = requires("agent_framework", EXTRA)
    return _compactor(
        "SlidingWindowStrategy",
        lambda: af.SlidingWindowStrategy(keep_last_groups=o["keep_last_groups"], preserve_system=o["preserve_system"]),
        o["tool_results"],
        {"core"},
        history=o["history"],
    )


@factory
def selective_tool_call(settings: Any, **given: Any) -> Any:
    o = _opts("selective_tool_call", given)
    af = requires("agent_framework", EXTRA)
    return _compactor(
        "SelectiveToolCallCompactionStrategy",
        lambda: af.SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=o["keep_last_tool_call_groups"]),
        o["tool_results"],
        {"core"},
        history=o["history"],
    )


@factory
def tool_result(settings: Any, **given: Any) -> Any:
    o = _opts("tool_result", given)
    af = requires("agent_framework", EXTRA)
    return _compactor(
        "ToolResultCompactionStrategy",
        lambda: af.ToolResultCompactionStrategy(keep_last_tool_call_groups=o["keep_last_tool_call_groups"]),
        o["tool_results"],
        {"core"},
        history=o["history"],
    )


@factory
def summarization(settings: Any, **given: Any) -> Any:
    """``SummarizationStrategy`` with ``OpenAIChatCompletionClient(async_client=settings.async_client)``.

    ``summarizer_window``: the context window, in tokens, of the deployment that client asks (SPEC
    WIN-1), which AF does not know: declared as given, none by default. From 1.13.0 the strategy
    bounds what it sends by ``max_summary_input_tokens`` (AF's default 8,000, estimated as chars/4);
    before it, it sends every older message whole (agent-framework#7214)."""
    o = _opts("summarization", given)
    af = requires("agent_framework", EXTRA)
    client = _chat_completions_client(settings)

    bounded = _release_kwargs(af.SummarizationStrategy, {"max_summary_input_tokens": o["max_summary_input_tokens"]}, given)  # added in 1.13.0

    def strategy() -> Any:
        return af.SummarizationStrategy(
            client=client, target_count=o["target_count"], threshold=o["threshold"], prompt=settings.summary_prompt, **bounded,
        )  # fmt: skip

    # "that count grows beyond ``target_count + threshold``" (included non-system messages)
    return _compactor(
        "SummarizationStrategy", strategy, o["tool_results"], {"core", "failure"},
        trigger={"messages": o["target_count"] + o["threshold"]}, window=o["summarizer_window"], history=o["history"],
    )  # fmt: skip


def _named(af: Any, name: str, o: dict[str, Any]) -> Any:
    if name == "token_budget":
        return af.TokenBudgetComposedStrategy(
            token_budget=o["token_budget"], tokenizer=af.CharacterEstimatorTokenizer(),
            strategies=[_named(af, "tool_result", o), _named(af, "sliding_window", o)],
        )  # fmt: skip
    if name == "tool_result":
        return af.ToolResultCompactionStrategy(keep_last_tool_call_groups=1)
    if name == "sliding_window":
        return af.SlidingWindowStrategy(keep_last_groups=o["keep_last_groups"])
    if name == "selective_tool_call":
        return af.SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=1)
    raise ValueError(f"strategies here are tool_result, sliding_window, selective_tool_call, token_budget; got {name!r}")


@factory
def token_budget(settings: Any, **given: Any) -> Any:
    o = _opts("token_budget", given)
    af = requires("agent_framework", EXTRA)
    tokenizer = af.CharacterEstimatorTokenizer()

    def strategy() -> Any:
        return af.TokenBudgetComposedStrategy(
            token_budget=o["token_budget"], tokenizer=tokenizer, strategies=[_named(af, n, o) for n in o["strategies"]]
        )

    # "if included_token_count(messages) <= self.token_budget": nothing to do
    return _compactor("TokenBudgetComposedStrategy", strategy, o["tool_results"], {"core"}, tokenizer, {"tokens": o["token_budget"]}, history=o["history"])


@factory
def context_window(settings: Any, **given: Any) -> Any:
    o = _opts("context_window", given)
    af = requires("agent_framework", EXTRA)
    tokenizer = af.CharacterEstimatorTokenizer()
    window = _strategy_class(af, "ContextWindowCompactionStrategy")  # added after 1.0.0

    def strategy() -> Any:
        return window(
            max_context_window_tokens=o["max_context_window_tokens"], max_output_tokens=o["max_output_tokens"],
            tokenizer=tokenizer, keep_last_tool_call_groups=o["keep_last_tool_call_groups"],
        )  # fmt: skip

    # "Tool result eviction ... when included tokens exceed ``tool_eviction_threshold`` of the input budget"
    evicts = getattr(window, "DEFAULT_TOOL_EVICTION_THRESHOLD", 0.5) * (o["max_context_window_tokens"] - o["max_output_tokens"])
    return _compactor("ContextWindowCompactionStrategy", strategy, o["tool_results"], {"core"}, tokenizer, {"tokens": int(evicts)}, history=o["history"])


@factory
def compaction_provider(settings: Any, **given: Any) -> Any:
    """``CompactionProvider(before_strategy=...)`` run by its ``before_run`` on the loaded history, or
    ``CompactionProvider(after_strategy=...)`` run by its ``after_run`` on the stored history (what the
    next turn loads, excluded messages skipped)."""
    o = _opts("compaction_provider", given)
    if o["history"] != "chat":
        raise ValueError("compaction_provider compacts chat-completions histories (history='chat')")
    if o["phase"] not in ("before", "after"):
        raise ValueError(f"phase must be 'before' or 'after', got {o['phase']!r}")
    af = requires("agent_framework", EXTRA)
    compaction = requires("agent_framework._compaction", EXTRA)
    sessions = requires("agent_framework._sessions", EXTRA)
    provider_class = getattr(af, "CompactionProvider", None) or getattr(compaction, "CompactionProvider", None)
    if provider_class is None or not accepts(provider_class, f"{o['phase']}_strategy"):
        raise cannot_drive(__name__, "agent-framework-core", f"no CompactionProvider({o['phase']}_strategy=...)")
    tokenizer = af.CharacterEstimatorTokenizer()

    async def run(messages: list[Message]) -> list[Message]:
        converted, notes = to_agent_framework(messages, tool_results=o["tool_results"])
        provider = provider_class(**{f"{o['phase']}_strategy": _strategy_for(af, settings, o)}, tokenizer=tokenizer)
        if o["phase"] == "before":
            context = sessions.SessionContext(input_messages=[], context_messages={"in_memory": converted})
            await provider.before_run(agent=None, session=None, context=context, state={})
            return from_agent_framework(context.get_messages(), notes)
        session = sessions.AgentSession()
        session.state["in_memory"] = {"messages": converted}
        await provider.after_run(agent=None, session=session, context=sessions.SessionContext(input_messages=[]), state={})
        stored = session.state["in_memory"]["messages"]
        return from_agent_framework(compaction.project_included_messages(stored), notes)

    trigger = {"tokens": o["token_budget"]} if o["strategy"] == "token_budget" else None  # the other strategies count groups
    return make(f"agent_framework.CompactionProvider.{o['phase']}_run", {"core"}, run, declared=capabilities("in_list", trigger), is_async=True)


# --- the agent's own loop (SPEC CORE-18: a summary lost across tool-loop iterations) ----------------

CLOSING = "(the scripted agent model ends its turn)"
"""The text of the reply that ends the scripted turn: the adapter's own, never part of its output."""
PERMISSIVE = {"type": "object", "properties": {}, "additionalProperties": True}
"""The JSON schema of every replayed tool: any arguments (the history's own) reach it unchanged."""


def _replayable(af: Any, converted: list[Any], most: int) -> int:
    """Where the replayed suffix starts: the input's trailing tool rounds (an assistant message of
    calls, then AF's one tool message answering each in order, every call's arguments a JSON
    object), at most ``most`` of them, leaving at least one message as the run's input."""
    import json

    start = len(converted)
    for _ in range(most):
        if start < 3:
            break
        calls, results = converted[start - 2], converted[start - 1]
        asked = [c for c in calls.contents if c.type == "function_call"]
        answered = [c.call_id for c in results.contents if c.type == "function_result"]
        if str(calls.role) != "assistant" or not asked or str(results.role) != "tool" or answered != [c.call_id for c in asked]:
            break
        if len(results.contents) != len(answered) or not all(c.name for c in asked):
            break
        try:
            parsed = [json.loads(c.arguments) if isinstance(c.arguments, str) else c.arguments for c in asked]
        except ValueError:
            break
        if not all(isinstance(a, dict) for a in parsed):
            break
        start -= 2
    return start


def _scripted_client(af: Any, replies: list[Any], sent: list[list[Any]]) -> Any:
    """A chat client with AF's own function-invocation and chat-middleware layers over a TEST DOUBLE
    of the agent's model: it answers each call with the next of ``replies`` (then `CLOSING`) and
    records the messages every call sent it, as the provider would receive them."""

    class ScriptedAgentModel(af.FunctionInvocationLayer, af.ChatMiddlewareLayer, af.BaseChatClient):
        def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> Any:
            sent.append(list(messages))
            reply = replies.pop(0) if replies else af.Message(role="assistant", contents=[af.Content.from_text(CLOSING)], message_id="compaction-suite-closing")
            if stream:  # ``agent.run(stream=True)``: the reply as one streamed update, finalized by AF's own finalizer
                return self._build_response_stream(_updates(af, reply))

            async def answer() -> Any:
                return af.ChatResponse(messages=[reply])

            return answer()

    return ScriptedAgentModel()


async def _updates(af: Any, reply: Any) -> Any:
    """A scripted reply as a streaming provider sends it: one ``ChatResponseUpdate`` holding the whole
    message (a provider may send a tool call whole in one chunk), with the message's id and role."""
    yield af.ChatResponseUpdate(contents=list(reply.contents), role="assistant", message_id=reply.message_id, author_name=reply.author_name)


async def _run(agent: Any, messages: Any, session: Any, stream: bool) -> Any:
    """One ``agent.run``; with ``stream`` the streamed run (``agent.run(..., stream=True)``) consumed update by
    update as a streaming caller does, then its final response (``ResponseStream.get_final_response``)."""
    if not stream:
        return await agent.run(messages, session=session)
    streamed = agent.run(messages, session=session, stream=True)
    async for _ in streamed:
        pass
    return await streamed.get_final_response()


def _replayed_tools(af: Any, rounds: list[Any], gated: frozenset[str] = frozenset()) -> list[Any]:
    """One ``FunctionTool`` per name the replayed calls use, each returning the history's own result
    for its call (by name and arguments, in order); a name in ``gated`` is built with
    ``approval_mode="always_require"`` (AF asks approval for the whole round that calls it)."""
    import json

    results: dict[str, list[Any]] = {}
    names: list[str] = []
    for calls, answers in zip(rounds[::2], rounds[1::2], strict=True):
        by_id = {c.call_id: c.result for c in answers.contents}
        for call in (c for c in calls.contents if c.type == "function_call"):
            arguments = json.loads(call.arguments) if isinstance(call.arguments, str) else call.arguments
            results.setdefault(f"{call.name}\n{json.dumps(arguments, sort_keys=True)}", []).append(by_id[call.call_id])
            names += [call.name] if call.name not in names else []

    def answering(name: str) -> Any:
        def run(**arguments: Any) -> Any:
            answers = results[f"{name}\n{json.dumps(arguments, sort_keys=True)}"]
            return answers.pop(0) if len(answers) > 1 else answers[0]  # a call AF runs again gets its last result again

        return run

    def made(n: str) -> Any:
        gate = {"approval_mode": "always_require"} if n in gated else {}
        return af.FunctionTool(name=n, description=f"{n} (replayed from the history)", func=answering(n), input_model=PERMISSIVE, **gate)

    return [made(n) for n in names]


def _first_round_tools(replayed: list[Any]) -> frozenset[str]:
    """The names the first replayed round calls, when no later replayed round calls one of them
    (`agent_loop`'s ``approval=True`` gates them all, so one run ends on AF's approval requests for
    the whole round and exactly one next run answers them); none otherwise, the loop then runs
    without approval. Gating a round only in part, or a name a later round calls again, meets AF's
    own approval defects apart from compaction: at 1.12.0 the result of a round's ungated call is
    not stored; at 1.13.0-1.17.0 two approval runs in a row misplace or lose the first approved results."""
    if not replayed:
        return frozenset()
    first = frozenset(c.name for c in replayed[0].contents if c.type == "function_call")
    later = {c.name for m in replayed[2::2] for c in m.contents if c.type == "function_call"}
    return frozenset() if first & later else first


async def _approved_runs(af: Any, agent: Any, session: Any, first: list[Any], rounds: int, stream: bool = False) -> None:
    """``agent.run`` on ``first``, then, while a run ends on AF's function-approval requests, a next
    run of the same session whose input is a user message approving each (``to_function_approval_response``,
    AF's documented way to answer them): at most one approval run per replayed round (`_first_round_tools`
    gates so that there is one)."""
    response = await _run(agent, first, session, stream)
    for _ in range(rounds):
        requests = [c for m in response.messages for c in m.contents if c.type == "function_approval_request"]
        if not requests:
            return
        answer = af.Message(role="user", contents=[r.to_function_approval_response(approved=True) for r in requests])
        response = await _run(agent, [answer], session, stream)
    if any(c.type == "function_approval_request" for m in response.messages for c in m.contents):
        raise RuntimeError(f"the scripted loop still asks approval after {rounds} approval runs")


def _without_approval_items(messages: list[Any]) -> list[Any]:
    """A stored history as AF's loop replays it to the model (``_replace_approval_contents_with_results``):
    a function-approval request becomes its call unless the message already holds that call, a
    function-approval response is left out, and a message that held nothing else (the user's
    approval answer) with it. The stored messages are left as they are."""
    import copy

    kept = []
    for message in messages:
        held = {c.call_id for c in message.contents if c.type == "function_call"}
        contents = []
        for content in message.contents:
            if content.type == "function_approval_request" and content.function_call is not None:
                contents += [] if content.function_call.call_id in held else [content.function_call]
            elif content.type != "function_approval_response":
                contents.append(content)
        if not contents and message.contents:
            continue
        if len(contents) != len(message.contents) or any(a is not b for a, b in zip(contents, message.contents, strict=False)):
            message = copy.copy(message)
            message.contents = contents
        kept.append(message)
    return kept


class _PassThrough:
    """A ChatMiddleware that only passes each call on (what any attached middleware does at least)."""

    @staticmethod
    def make(af: Any) -> Any:
        middleware = getattr(af, "ChatMiddleware", None)
        if middleware is None:
            raise cannot_drive(__name__, "agent-framework-core", "agent_framework has no ChatMiddleware")

        class PassThrough(middleware):  # type: ignore[misc, valid-type]
            async def process(self, context: Any, call_next: Any) -> None:
                await call_next()

        return PassThrough()


def _strategy_for(af: Any, settings: Any, o: dict[str, Any]) -> Any:
    """The strategy named by ``o["strategy"]``: `_named`'s, or ``SummarizationStrategy`` asking the
    suite's summarizer (``target_count``, ``threshold``)."""
    if o["strategy"] != "summarization":
        return _named(af, o["strategy"], o)
    client = _chat_completions_client(settings)
    return af.SummarizationStrategy(client=client, target_count=o["target_count"], threshold=o["threshold"], prompt=settings.summary_prompt)


def _after_run(af: Any, settings: Any, o: dict[str, Any], history: Any) -> list[Any]:
    """``CompactionProvider(after_strategy=...)`` beside the history provider when ``after_strategy``
    names a strategy (`_strategy_for`'s names): its ``after_run`` compacts the stored history after each
    run, the pairing AF's harness builds beside its call-level strategy (``create_harness_agent``)."""
    if o["after_strategy"] is None:
        return []
    provider = getattr(af, "CompactionProvider", None) or getattr(requires("agent_framework._compaction", EXTRA), "CompactionProvider", None)
    if provider is None or not accepts(provider, "after_strategy"):
        raise cannot_drive(__name__, "agent-framework-core", "no CompactionProvider(after_strategy=...)")
    strategy = _strategy_for(af, settings, {**o, "strategy": o["after_strategy"]})
    return [provider(after_strategy=strategy, tokenizer=af.CharacterEstimatorTokenizer(), history_source_id=history.source_id)]


@factory
def agent_loop(settings: Any, **given: Any) -> Any:
    """``Agent(compaction_strategy=...)`` driven through its own function-invocation loop: the
    history's trailing tool rounds (at most ``rounds``) are replayed as the loop's own iterations
    (the scripted model answers with the history's calls, AF runs tools that return the history's
    results), so the strategy runs before every model call on the list the loop carries. The output
    is what the framework sends the model at the call that holds the whole history
    (``view="next_call"``), or what the next turn loads from the session's
    ``InMemoryHistoryProvider(skip_excluded=True)`` (compaction beside a history provider, as AF
    documents it), less the reply that closed the scripted turn (``view="persisted"``).
    ``middleware=True`` attaches a pass-through ``ChatMiddleware``; ``per_call_persistence=True`` sets
    ``require_per_service_call_history_persistence`` (the history provider stores after every model call).
    ``message_ids=False`` gives the agent the history's messages and its model's replies without a
    ``message_id``, as users build them and as a provider reply may come (`to_agent_framework`): AF names
    them as it annotates the growing list at each iteration (agent-framework#6299). ``approval=True``
    builds the tools of the first replayed round with ``approval_mode="always_require"``: the run ends
    on AF's approval request and each request is answered (approved) in a next run of the same
    session, as AF documents its approval flow, so a tool round spans two runs (`_approved_runs`).
    ``after_strategy`` adds ``CompactionProvider(after_strategy=...)`` beside the history (`_after_run`).
    ``stream=True`` runs ``agent.run(..., stream=True)``, AF's streaming function-invocation loop (its own
    code path, compacting before each streamed model call; every release the adapter supports has it), each
    scripted reply streamed as one update (`_updates`) and the stream consumed as a streaming caller does.
    ``iteration_limit=True`` sets ``function_invocation_configuration["max_iterations"]`` (AF's documented budget of
    model round-trips) to the replayed rounds, so the loop spends its budget on them and the call that holds the whole
    history is AF's final call past the budget (``tool_choice="none"``, compacted on its own code path)."""
    o = options(DEFAULTS["agent_loop"], given)
    if o["view"] not in ("next_call", "persisted"):
        raise ValueError(f"view must be 'next_call' or 'persisted', got {o['view']!r}")
    if o["history"] == "responses" and (o["view"] != "next_call" or o["approval"]):
        raise ValueError("history='responses' gives what the model is sent (view='next_call'), without approval")
    af = requires("agent_framework", EXTRA)
    sessions = requires("agent_framework._sessions", EXTRA)
    for needed in ("FunctionInvocationLayer", "ChatMiddlewareLayer", "BaseChatClient", "FunctionTool"):
        _strategy_class(af, needed)
    middleware = [_PassThrough.make(af)] if o["middleware"] else []
    persistence = {"require_per_service_call_history_persistence": True} if o["per_call_persistence"] else {}
    if persistence and not accepts(af.Agent, "require_per_service_call_history_persistence"):
        raise cannot_drive(__name__, "agent-framework-core", "Agent has no 'require_per_service_call_history_persistence'")

    convert = _Conversion(af, o["history"], "grouped")

    async def run(messages: Any) -> Any:
        if o["history"] == "responses":  # hosted calls ran at the provider: nothing to replay, one model call
            converted, back = convert.to(messages)
            start, notes = len(converted), None
        else:
            converted, notes = to_agent_framework(messages, message_ids=o["message_ids"])
            start = _replayable(af, converted, o["rounds"])
        replayed = converted[start:]
        sent: list[list[Any]] = []
        client = _scripted_client(af, replayed[::2], sent)
        if o["iteration_limit"]:  # the call holding the whole history is the final no-tools call past the budget
            client.function_invocation_configuration["max_iterations"] = max(1, len(replayed) // 2)
        history = sessions.InMemoryHistoryProvider(skip_excluded=True)  # compaction beside a history, as AF documents it
        gated = _first_round_tools(replayed) if o["approval"] else frozenset()
        agent = af.Agent(
            client, tools=_replayed_tools(af, replayed, gated), compaction_strategy=_strategy_for(af, settings, o),
            context_providers=[history, *_after_run(af, settings, o, history)],
            **({"middleware": middleware} if middleware else {}), **persistence,
        )  # fmt: skip
        session = agent.create_session()
        named = [(m, m.author_name) for m in replayed[::2]]
        await _approved_runs(af, agent, session, converted[:start], len(replayed) // 2, stream=bool(o["stream"]))
        for reply, name in named:  # the agent stamps its name on its model's replies: not the history's
            reply.author_name = name
        if len(sent) != len(replayed) // 2 + 1:
            raise RuntimeError(f"the scripted loop made {len(sent)} model calls for {len(replayed) // 2} replayed rounds")
        if o["history"] == "responses":
            return back(sent[-1])
        if o["view"] == "next_call":
            return from_agent_framework(sent[-1], notes)
        loaded = await history.get_messages(None, state=session.state.get(history.source_id, {}))  # what the next turn loads
        return from_agent_framework(_without_approval_items([m for m in loaded if m.message_id != "compaction-suite-closing"]), notes)

    if o["approval"] and not accepts(af.FunctionTool, "approval_mode"):
        raise cannot_drive(__name__, "agent-framework-core", "FunctionTool has no 'approval_mode'")
    extras = ("+ChatMiddleware" if o["middleware"] else "") + ("+per_call_persistence" if o["per_call_persistence"] else "")
    extras += ("" if o["message_ids"] else "+no_message_ids") + ("+approval" if o["approval"] else "")
    extras += f"+after_run:{o['after_strategy']}" if o["after_strategy"] else ""
    extras += "+stream" if o["stream"] else ""
    extras += "+iteration_limit" if o["iteration_limit"] else ""
    name = f"agent_framework.Agent.{o['strategy']}{extras}.{o['view']}{convert.suffix}"
    return make(name, {"core"}, run, declared=capabilities("in_list") | convert.declared, is_async=True)



# --- the harness agent (SPEC FIRE-1: a before-run compaction that never fires) ----------------------

HARNESS_OFF = ("disable_web_search", "disable_memory", "disable_file_memory", "disable_file_access", "disable_todo", "disable_mode")
"""The harness features switched off where the release has them: web search (the scripted model has
no such tool), the file stores (by default folders under the working directory, which the suite must
not write), and the todo and mode providers (the todo list adds a user message of its own,
"### Current todo list", to every request: not the history's, not the compaction's). Compaction,
per-service-call persistence and tool approval stay as the harness builds them."""


def _harness_agent(af: Any, client: Any, o: dict[str, Any], history: Any, tools: list[Any]) -> Any:
    """``create_harness_agent`` with its documented token-budget compaction: the default strategies
    built from ``max_context_window_tokens`` and ``max_output_tokens``."""
    create = getattr(af, "create_harness_agent", None)
    if create is None:
        raise cannot_drive(__name__, "agent-framework-core", "agent_framework has no create_harness_agent")
    off = {keyword: True for keyword in HARNESS_OFF if accepts(create, keyword)}
    return create(
        client, history_provider=history, tools=tools or None,
        max_context_window_tokens=o["max_context_window_tokens"], max_output_tokens=o["max_output_tokens"], **off,
    )  # fmt: skip


@factory
def harness_agent(settings: Any, **given: Any) -> Any:
    """A turn of ``create_harness_agent(max_context_window_tokens=..., max_output_tokens=...)``: the
    history but its last message is what the session's history provider holds from earlier turns,
    the last message is the turn's input, and the history's trailing tool rounds (at most
    ``rounds``) are replayed as the turn's own tool loop (`agent_loop`'s way). The output is what the
    model is sent at the call that holds the whole history. The harness documents its before-run
    compaction (``ContextWindowCompactionStrategy``) as compacting the loaded history before each
    model call, so the trigger declared is that strategy's (SPEC FIRE-1: microsoft/agent-framework#7011,
    its ``CompactionProvider.before_run`` handed a context without the loaded history)."""
    o = options(DEFAULTS["harness_agent"], given)
    af = requires("agent_framework", EXTRA)
    sessions = requires("agent_framework._sessions", EXTRA)
    _strategy_class(af, "create_harness_agent")  # from 1.7.0
    window = _strategy_class(af, "ContextWindowCompactionStrategy")

    async def run(messages: list[Message]) -> list[Message]:
        converted, notes = to_agent_framework(messages)
        start = _replayable(af, converted, o["rounds"])
        replayed = converted[start:]
        sent: list[list[Any]] = []
        history = sessions.InMemoryHistoryProvider()
        agent = _harness_agent(af, _scripted_client(af, replayed[::2], sent), o, history, _replayed_tools(af, replayed))
        session = agent.create_session()
        session.state.setdefault(history.source_id, {})["messages"] = converted[: start - 1]  # earlier turns, as loaded
        named = [(m, m.author_name) for m in replayed[::2]]
        await agent.run(converted[start - 1 : start], session=session)
        for reply, name in named:
            reply.author_name = name
        if len(sent) != len(replayed) // 2 + 1:
            raise RuntimeError(f"the scripted harness turn made {len(sent)} model calls for {len(replayed) // 2} replayed rounds")
        return from_agent_framework(sent[-1], notes)

    # the harness's before-run default: ContextWindowCompactionStrategy, evicting tool results past
    # its tool-eviction share of the input budget (as `context_window` declares it)
    evicts = getattr(window, "DEFAULT_TOOL_EVICTION_THRESHOLD", 0.5) * (o["max_context_window_tokens"] - o["max_output_tokens"])
    return make("agent_framework.create_harness_agent", {"core"}, run, declared=capabilities("in_list", {"tokens": int(evicts)}), is_async=True)


# --- a Redis-backed history (agent-framework-redis; a real Redis server on 127.0.0.1) --------------------------

REDIS_EXTRA = "agent-framework-redis"


@factory
def redis_history(settings: Any, **given: Any) -> Any:
    """A turn of ``Agent(context_providers=[RedisHistoryProvider(redis_url=..., max_messages=...)])`` with no
    compaction strategy: the provider's retention (after each save, ``LTRIM`` to the last ``max_messages``
    stored messages) is the compaction, run by a real Redis server on 127.0.0.1 (`_redis_server`, the
    ``agent-framework-redis`` extra). The history's trailing tool rounds (at most ``rounds``) are replayed
    as the turn's tool loop (`agent_loop`'s way); the output is what the next turn loads (the provider's
    ``get_messages`` for the session), less the reply that closed the scripted turn. The trigger declared is
    the retention AF documents ("Maximum number of messages to retain per session"): past ``max_messages``
    stored messages, at least one (a retention of 0 keeps none; microsoft/agent-framework#7469: before
    agent-framework-redis 1.0.0b260813 ``max_messages=0`` kept every message, ``LTRIM key 0 -1``)."""
    import uuid

    from . import _redis_server

    o = options(DEFAULTS["redis_history"], given)
    af = requires("agent_framework", EXTRA)
    provider = requires("agent_framework_redis", REDIS_EXTRA).RedisHistoryProvider
    for needed in ("FunctionInvocationLayer", "ChatMiddlewareLayer", "BaseChatClient", "FunctionTool"):
        _strategy_class(af, needed)
    url = _redis_server.url()
    scoped = {"application_id": "compaction-suite"} if accepts(provider, "application_id") else {}  # later releases key by application (required)

    async def run(messages: list[Message]) -> list[Message]:
        converted, notes = to_agent_framework(messages)
        start = _replayable(af, converted, o["rounds"])
        replayed = converted[start:]
        sent: list[list[Any]] = []
        history = provider(redis_url=url, key_prefix=f"compaction-suite-{uuid.uuid4().hex}", max_messages=o["max_messages"], **scoped)
        agent = af.Agent(_scripted_client(af, replayed[::2], sent), tools=_replayed_tools(af, replayed), context_providers=[history])
        session = agent.create_session()
        named = [(m, m.author_name) for m in replayed[::2]]
        try:
            await agent.run(converted[:start], session=session)
            loaded = await history.get_messages(session.session_id)  # what the next turn loads
        finally:
            await history.clear(session.session_id)
        for reply, name in named:  # the agent stamps its name on its model's replies: not the history's
            reply.author_name = name
        return from_agent_framework([m for m in loaded if m.message_id != "compaction-suite-closing"], notes)

    trigger = {"messages": max(1, int(o["max_messages"]))}
    return make(f"agent_framework.RedisHistoryProvider(max_messages={o['max_messages']})", {"core"}, run, declared=capabilities("in_list", trigger), is_async=True)
