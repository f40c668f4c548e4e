"""Pydantic AI: the compaction capabilities of ``pydantic-ai-harness``, on ``pydantic-ai`` messages.

Targets (research, conversion and declarations in ``adapters/README.md``)::

    compaction-suite check compaction_suite.adapters.pydantic_ai:sliding_window
    compaction-suite check compaction_suite.adapters.pydantic_ai:clear_tool_results
    compaction-suite check compaction_suite.adapters.pydantic_ai:summarizing
    compaction-suite check compaction_suite.adapters.pydantic_ai:fallback   # FallbackCompaction(summarizing, sliding window)
    compaction-suite check compaction_suite.adapters.pydantic_ai:tiered     # TieredCompaction(clear tool results, summarizing)
    compaction-suite check compaction_suite.adapters.pydantic_ai:clamp_oversized   # ClampOversizedMessages (a target for reported bugs)
    compaction-suite check compaction_suite.adapters.pydantic_ai:deduplicate_file_reads   # DeduplicateFileReads (a target for reported bugs)
    compaction-suite check compaction_suite.adapters.pydantic_ai:compact_on_request   # CompactOnRequest (harness 0.62.0 on), the model's compact_context
    compaction-suite check compaction_suite.adapters.pydantic_ai:openai_compaction   # pydantic-ai's own OpenAICompaction
    compaction-suite check compaction_suite.adapters.pydantic_ai:history_processor --clause STORE-22   # history_processors, new_messages()

A harness factory with ``in_agent=True`` runs its capability inside pydantic-ai's ``Agent`` loop (the history's
last turn replayed), and ``tool_search=True`` draws the search rounds of deferred tools (`_pydantic_ai_loop`;
pydantic/pydantic-ai-harness#380); ``persisted="model_messages"`` keeps the history the capability left through
``ModelMessagesTypeAdapter`` between turns. ``clear_tool_results`` in the loop is counted in the matrix; the others
in the loop are targets for reported bugs.

Each runs as an agent runs a capability: ``await capability.before_model_request(run_context,
request_context)``, the result in ``run_context.messages``, the summarizer an ``OpenAIChatModel`` on
``settings.async_client``. Each OpenAI dict is one *part*, grouped as pydantic-ai records them
(``tool_results``); ``capability_parts`` adds the ``ToolAvailabilityDeltaPart`` pydantic-ai records
after a tool reveals others (a capability loading), which has no chat message of its own. A part the
capability kept is its original dict; one it made is rendered by pydantic-ai's ``_map_messages``.
Declarations proven by ``tests/test_adapter_loops.py`` and ``tests/test_pydantic_ai_paths.py``.

``openai_compaction`` is pydantic-ai's own ``OpenAICompaction`` (stateless: ``/responses/compact``;
stateful: ``context_management``), driven by pydantic-ai's ``Agent`` loop on the suite's Responses test
double, judged on what the model is sent after the compaction (`adapters._pydantic_ai_native`;
``tests/test_pydantic_ai_native.py``).

``history_processor`` runs the history's last user turn through pydantic-ai's ``Agent`` with a history
processor (``history_processors=``, or the ``ProcessHistory`` capability where that replaced it) that prunes
messages of the run itself, and reports what ``result.new_messages()`` and ``all_messages()`` hand back
(SPEC STORE-22; `adapters._pydantic_ai_processor`; ``tests/test_pydantic_ai_processor.py``). The processor is
user code, so the target is for STORE-22 and reported bugs, not counted in the matrix. With ``tool_search`` the
processor runs as ``ProcessHistory`` on ``OpenAIResponsesModel`` and the Responses double, the history's tools
deferred behind ``ToolSearch`` (judged by RESP-32; pydantic/pydantic-ai#7259).
"""

from __future__ import annotations

from typing import Any

from ._common import (
    CannotDrive,
    Message,
    Note,
    Notes,
    call_names,
    capabilities,
    deep,
    factory,
    make,
    options,
    release,
    requires,
    text_of_parts,
    tool_text,
)

FRAMEWORK = "Pydantic AI"
SUPPORTED: dict[str, str] = {"pydantic-ai-slim": ">=1.105,<3", "pydantic-ai-harness": ">=0.4"}
"""Agreed interface 3. The harness's compaction capabilities (``pydantic_ai_harness.compaction``) are there at 0.7
(July 2026, needing pydantic-ai-slim >=2.1; ``SlidingWindowCompaction`` then named ``SlidingWindow``), and from 0.4
(June 2026, needing pydantic-ai-slim >=1.105) to 0.6 as ``pydantic_ai_harness.experimental.compaction``, the same
classes and keywords (`_harness_compaction`); 0.18 needs pydantic-ai-slim 2.22;
``fallback`` needs harness >= 0.23 and ``capability_parts`` pydantic-ai >= 2.23 (else `CannotDrive`)."""
SUPPORTED_BY_PATH: dict[str, dict[str, str]] = {
    "openai_compaction": {"pydantic-ai-slim": ">=1.80,<3"},
    "anthropic_compaction": {"pydantic-ai-slim": ">=1.80,<3"},
    "history_processor": {"pydantic-ai-slim": ">=1.0,<3"},
}
"""pydantic-ai's own ``OpenAICompaction`` needs no harness and arrived in pydantic-ai-slim 1.80.0 (#4943),
stateless only (``/responses/compact``) until the ``stateless`` keyword came (a stateful configuration is a
contract error there)."""
SWEEP_INSTALL_BY_PATH: dict[str, tuple[str, ...]] = {
    "openai_compaction": ("pydantic-ai-slim[openai]",),
    "anthropic_compaction": ("pydantic-ai-slim[anthropic]",),
    "history_processor": ("pydantic-ai-slim[openai]",),
}
DISTRIBUTIONS = ("pydantic-ai-slim", "pydantic-ai-harness")
EXTRA = "pydantic-ai"

DEFAULTS: dict[str, dict[str, Any]] = {
    "sliding_window": {"max_messages": 20, "max_tokens": None, "keep_messages": 10, "preserve_first_user_message": True},
    "clear_tool_results": {"max_messages": None, "max_tokens": 1000, "keep_pairs": 3},
    "summarizing": {"max_messages": 20, "max_tokens": None, "keep_messages": 10, "preserve_first_user_message": True, "summarizer_provider": None},
}
STREAM_ONLY_SUMMARIZERS = ("dashscope-qwq",)
"""``summarizer_provider``: the provider rule set (`conformance.providers`) the summary model's endpoint answers by,
declared as ``summarizer_providers`` (SPEC CORE-13 Decision). A stream-only one (Alibaba Cloud's QwQ models answer
a request without ``stream: true`` with HTTP 400) is configured as the harness documents for "a summarizer
endpoint that rejects non-streaming requests": ``SummarizingCompaction(event_stream_handler=drain_summary_events)``
where the release has it (pydantic-ai-harness 0.29.0 on, pydantic/pydantic-ai-harness#619); before, the harness
offers no way to stream the summary request, so the capability is built as it is."""
DEFAULTS["fallback"] = {"max_tokens": 2000, "keep_messages": 10, "preserve_first_user_message": True, "summarizer_provider": None}
DEFAULTS["clamp_oversized"] = {"max_part_tokens": 4_000, "keep_head_chars": 2_000, "keep_tail_chars": 2_000}
"""``ClampOversizedMessages``: a response part (text, or a tool call's arguments, ``clamp_tool_call_args``' default)
over ``max_part_tokens`` (chars/4) is cut to its head and tail around a marker. 4,000 tokens is 16,000 characters,
four times the head and tail it keeps (the docstring: "set `keep_head_chars` + `keep_tail_chars` well below your
per-part threshold"), below the suite's large call arguments (20-60 kB, `histories.agent_shaped`) and above every
other drawn part; the harness's own example (50,000) is beyond any drawn history."""
DEFAULTS["deduplicate_file_reads"] = {"max_messages": None, "max_tokens": None, "file_tools": ("readFile",), "path_argument": "path"}
"""``DeduplicateFileReads(file_key=...)``: ``file_key`` has no default in the harness ("file-read identification is
agent-specific"), so the adapter gives the one its docstring shows, a call of a file-reading tool keyed by its path
argument, for the suite's file reader (``readFile``, ``{"path": ...}``, `conformance.histories.GENERIC_TOOLS`); both
triggers None is the harness's "runs whenever invoked"."""
DEFAULTS["tiered"] = {"target_tokens": 2000, "keep_pairs": 1, "keep_messages": 10, "preserve_first_user_message": True, "summarizer_provider": None}
"""``TieredCompaction``'s documented chain: ``ClearToolResults`` then ``SummarizingCompaction``, each given an inert
trigger (the tiered capability bypasses it), escalating until the history fits ``target_tokens``."""
DEFAULTS["openai_compaction"] = {"stateless": False, "message_count_threshold": None, "token_threshold": 500, "previous_response_id": None, "at": "any_request", "persisted": None, "tool_search": False}
"""``OpenAICompaction``'s own default mode, stateful; the threshold is given (without one the API picks its own,
which the double does not model: SPEC Decision on server-side compaction). ``previous_response_id: "auto"`` is
the model setting ``openai_previous_response_id='auto'``: each request chains to the last response's id and
sends only what came after it (server-managed state), judged on the chain the double resolves. ``at: "turn_start"``
(stateless) compacts past ``message_count_threshold`` only before a request that opens a turn (a user prompt
answering no call), through ``OpenAICompaction``'s documented ``trigger`` callable: what a user writes to keep the
compact request off a round whose calls the current request answers (refused by the API,
`tests/test_pydantic_ai_native.py`)."""
"""``FallbackCompaction`` triggers on its own token threshold (``max_tokens``); the strategies it chains
compact when it calls them (each given ``max_messages=1``, inert there, and the same ``keep_messages``)."""
DEFAULTS["compact_on_request"] = {"strategy": "summarizing", "keep_messages": 6, "preserve_first_user_message": True, "min_tokens": None, "max_per_run": None, "summarizer_provider": None}
"""``CompactOnRequest(strategy, min_tokens=..., max_per_run=...)`` as its docstring shows it: the strategy
``SummarizingCompaction(max_messages=1, keep_messages=6)`` (its trigger bypassed: the model's request runs it), or
``SlidingWindowCompaction`` sized alike (``strategy="sliding_window"``); no minimum and no per-run limit, the
capability's defaults."""
DEFAULTS["history_processor"] = {"max_messages": 6, "keep_messages": 3, "tool_search": False}
"""The pair-safe "keep only recent messages" processor: past ``max_messages`` the last ``keep_messages``, so a
run of two tool rounds after a long history prunes messages of the run itself (pydantic/pydantic-ai#3983)."""
COMMON = {"tool_results": "grouped", "capability_parts": False, "in_agent": False, "tool_search": False, "persisted": None}
"""``in_agent``: the capability inside pydantic-ai's ``Agent`` loop, the history's last turn replayed, every
request of the run passing through it (pydantic-ai re-reads the history between them); ``in_agent="responses"``:
the capability in an ``Agent`` on ``OpenAIResponsesModel`` and the Responses double, judged on the input the model
is sent after the history's last step, as ``openai_compaction`` runs (`_pydantic_ai_native.run`; with
``tool_search`` every tool the history calls is deferred behind ``ToolSearch``, pydantic/pydantic-ai#7259's class);
``tool_search``: the tools called only before the last turn are deferred, found by the local ``search_tools``
rounds pydantic-ai records (`_pydantic_ai_loop`; pydantic/pydantic-ai-harness#380); ``persisted``: the history the capability left
is kept between turns as a user keeps it (`PERSISTED`), so what comes back is what loads (a history the store
cannot load ends the next turn before it starts)."""

HISTORY_WRITTEN_FROM = (0, 54)
"""The harness release from which a compaction capability writes what it compacted into the run's history
(``ctx.messages[:] = compacted`` in each ``before_model_request``, read in the 0.54.0 and 0.62.0 wheels); up to 0.53.0
(read in the 0.4.0-0.10.0, 0.18.0, 0.20.0, 0.29.0, 0.36.0, 0.52.0 and 0.53.0 wheels) it sets only
``request_context.messages``, what the model is sent. pydantic-ai-slim 2.11.0-2.51.0 (read: ``_agent_graph``'s
``ctx.state.message_history[:] = messages`` after the hooks) wrote that list back into the history; 2.62 and later (read: 2.62.0, 2.68.0; ``HistoryMirroringMessages``) keep only what a hook appends, so
harness 0.36.0 with slim 2.68.0 compacts each request and never the history. In the ``Agent`` loop the adapter
therefore judges, below that release, what the capability handed the model at the last request
(`_pydantic_ai_loop.as_sent`), the history at that request wherever slim wrote it back."""

NOT_ADAPTED = (
    "FallbackCompaction chains other than summarizing -> sliding window, TieredCompaction chains other than clear "
    "tool results -> summarizing, RelevanceCompaction; "
    "pydantic-ai's AnthropicCompaction (the Messages API's compact_20260112 edit, whose trigger is 50,000 input "
    "tokens at least, beyond any drawn history; pydantic-ai-slim 2.62's anthropic extra needs anthropic>=1.15, which "
    "strands-agents[anthropic] (<1.0) excludes from the frameworks extra); history_processors is a hook for user "
    "code, not a compactor: its path (history_processor) is judged only on what the run hands back to store (STORE-22)"
)

WHY = {
    "sliding_window": "core only: message/token trigger (no iteration trigger); drops the oldest messages, no summarizer",
    "clear_tool_results": "core only: blanks old tool results in place (a masked result, CORE-4); token/message trigger",
    "summarizing": (
        "core only: summary is a CompactionPart sent as framed user text keeping N messages (not [Context Summary] + "
        "K rounds); summarizer errors propagate; message/token trigger"
    ),
    "fallback": (
        "core only: FallbackCompaction(SummarizingCompaction, SlidingWindowCompaction), the harness's documented "
        "fallback: a summarizer error it selects (ModelAPIError) falls back to the sliding window; others propagate"
    ),
}

WHY["tiered"] = (
    "core only: TieredCompaction(ClearToolResults, SummarizingCompaction), the harness's documented escalation: past "
    "target_tokens it blanks old tool results, then summarizes while the history still does not fit"
)

WHY["clamp_oversized"] = (
    "core only: ClampOversizedMessages cuts a response part (text or a tool call's arguments) over max_part_tokens "
    "to its head and tail around a marker; no trigger on the history's size, no summarizer"
)

WHY["deduplicate_file_reads"] = (
    "core only: DeduplicateFileReads blanks every read of a file a later read of the same file supersedes (the file "
    "keyed by the user's file_key: readFile's path), pairs kept; no summarizer"
)

WHY["history_processor"] = (
    "STORE-22 only: pydantic-ai's Agent with a pair-safe keep-recent history processor (user code) replaying the "
    "history's last turn; judged on result.new_messages() against result.all_messages(), pydantic-ai's bookkeeping"
)

WHY["compact_on_request"] = (
    "core only: the harness's CompactOnRequest (0.62.0 on) in pydantic-ai's Agent loop: the model calls compact_context "
    "as the turn begins and the wrapped strategy (SummarizingCompaction, or SlidingWindowCompaction) runs before the "
    "next request, its own trigger bypassed; no size trigger"
)

DEFAULTS["anthropic_compaction"] = {"token_threshold": 50_000}
"""``AnthropicCompaction``'s ``token_threshold`` (its default 150,000; the API's minimum 50,000, which the suite's
histories reach when grown to the target's trigger)."""

WHY["anthropic_compaction"] = (
    "core only: pydantic-ai's own AnthropicCompaction in its Agent loop on AnthropicModel: the Messages API's "
    "compact_20260112 edit on every request, the server answering a compaction block past token_threshold; judged "
    "on the request the model is sent after it, and its reported usage against the billed iterations (COST-1)"
)

WHY["openai_compaction"] = (
    "core only: pydantic-ai's own OpenAICompaction in its Agent loop (stateless: /responses/compact from "
    "before_model_request on a message count; stateful: the Responses API's context_management, the server "
    "answering a compaction item past compact_threshold); judged on the input the model is sent after it"
)

DOCUMENTED: list[dict[str, Any]] = []
"""Agreed interface 4. Not ``FallbackCompaction``'s "`fallback_on` defaults to model API errors ... so programming
errors pass through": what escapes it in the checks is ``SummarizingCompaction``'s own ``IndexError`` on a
reply with no choices (and its ``UnexpectedModelBehavior`` on empty content), replies a provider sends, not
a caller's programming error; a label by clause cannot tell them apart, so those crashes stay findings."""

CONFIGURATIONS: list[tuple[str, dict[str, Any]]] = [
    ("sliding_window", {"max_messages": 8, "keep_messages": 4}),
    ("sliding_window", {"max_messages": 20, "keep_messages": 10}),
    ("sliding_window", {"max_messages": 8, "keep_messages": 4, "preserve_first_user_message": False}),
    ("clear_tool_results", {"max_tokens": 500, "keep_pairs": 1}),
    ("clear_tool_results", {"max_tokens": 2000, "keep_pairs": 3}),
    ("clear_tool_results", {"max_tokens": 500, "keep_pairs": 1, "in_agent": True}),
    ("summarizing", {"max_messages": 8, "keep_messages": 4}),
    ("summarizing", {"max_messages": 20, "keep_messages": 10}),
    ("summarizing", {"max_messages": None, "max_tokens": 500, "keep_messages": 4, "capability_parts": True}),
    ("fallback", {"max_tokens": 500, "keep_messages": 4}),
    ("fallback", {"max_tokens": 2000, "keep_messages": 10}),
    ("openai_compaction", {"stateless": True, "message_count_threshold": 4}),
    ("openai_compaction", {"stateless": False, "message_count_threshold": None, "token_threshold": 500}),
    ("openai_compaction", {"stateless": True, "message_count_threshold": 4, "previous_response_id": "auto"}),
    ("openai_compaction", {"stateless": True, "message_count_threshold": 4, "previous_response_id": "auto", "at": "turn_start"}),
    ("compact_on_request", {"strategy": "summarizing"}),
    ("compact_on_request", {"strategy": "sliding_window"}),
]
"""What ``compaction-suite matrix`` runs and counts: histories as pydantic-ai records them. ``clear_tool_results`` in
pydantic-ai's ``Agent`` loop (``in_agent``) is counted since its first clean full check (50 examples, harness 0.62.0,
tenth session: CORE-1..8, 10, 14..16, 21, 30, 31, 43, 50 pass; it compacted in 241 of 1,309 calls, a history its
loop never records coming back unchanged); the other capabilities in the loop are targets only. ``tiered`` is a target
(for reported bugs) but not yet counted: its one ``--fast`` check (harness 0.62.0) failed CORE-12 on a tool result
that tier 1 blanked and tier 2 summarized, and that reproducer did not replay (no summarizer request), so the
finding is not established."""

OTHER_SHAPES: list[tuple[str, dict[str, Any], str]] = [
    ("sliding_window", {"max_messages": 20, "keep_messages": 10, "tool_results": "separate"}, "every part its own ModelRequest: pydantic-ai stores the system prompt with the first user prompt and a round's results together"),
]
"""Shapes pydantic-ai never records: checked in a labelled matrix section no headline counts."""


# --- conversion ---------------------------------------------------------------------------------


def _user_content(pm: Any, content: Any) -> Any:
    from ._pydantic_ai_native import binary

    if isinstance(content, str) or content is None:
        return content if content is not None else ""
    items: list[Any] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            items.append(part.get("text", ""))
        elif kind == "image_url":
            image = part.get("image_url") or {}
            url = image.get("url", "")
            meta = {"detail": image["detail"]} if "detail" in image else None
            if url.startswith("data:"):
                item = binary(pm, url)
                item.vendor_metadata = meta
            else:
                item = pm.ImageUrl(url=url, vendor_metadata=meta)
            items.append(item)
        elif kind == "file" and str((part.get("file") or {}).get("file_data", "")).startswith("data:"):
            items.append(binary(pm, part["file"]["file_data"]))  # a PDF inline, as a user attaches one
        else:
            raise ValueError(f"content part {part!r} has no pydantic-ai form here")
    return items


def to_pydantic_ai(messages: list[Message], *, tool_results: str = "grouped", capability_parts: bool = False) -> tuple[list[Any], Notes]:
    """pydantic-ai ``ModelMessage`` objects for OpenAI dicts; ``tool_results`` is ``"grouped"`` or ``"separate"``.

    With ``capability_parts``, the first result of each tool name is followed (in the same request) by
    the ``ToolAvailabilityDeltaPart(tools_added=[name], tool_call_id=...)`` pydantic-ai records when a
    call reveals tools (a deferred capability loading): a part with no chat message of its own, so it
    is dropped on the way back (`NO_CHAT_FORM`)."""
    pm = requires("pydantic_ai.messages", EXTRA)
    delta: Any = getattr(pm, "ToolAvailabilityDeltaPart", None)
    if capability_parts and delta is None:
        raise CannotDrive("pydantic_ai (capability_parts)", "pydantic-ai-slim", "ToolAvailabilityDeltaPart arrived in pydantic-ai 2.23")
    revealed: set[str] = set()
    if tool_results not in ("separate", "grouped"):
        raise ValueError(f"tool_results must be 'separate' or 'grouped', got {tool_results!r}")
    names = call_names(messages)
    notes = Notes()
    out: list[Any] = []
    pending: list[Any] = []  # parts of the ModelRequest being built

    def flush() -> None:
        if pending:
            out.append(pm.ModelRequest(parts=list(pending)))
            pending.clear()

    started = False  # the first user prompt joins the leading system prompts
    for i, m in enumerate(messages):
        role = m.get("role")
        content = m.get("content")
        if role == "assistant":
            flush()
            parts: list[Any] = []
            if isinstance(content, str) and content != "":
                parts.append(pm.TextPart(content=content))
            elif isinstance(content, list):
                parts.append(pm.TextPart(content=text_of_parts(content)))
            for call in m.get("tool_calls") or []:
                function = call.get("function") or {}
                parts.append(pm.ToolCallPart(tool_name=function.get("name", ""), args=function.get("arguments"), tool_call_id=str(call.get("id"))))
            response = pm.ModelResponse(parts=parts, model_name=None)
            notes.put(id(response), Note(original=deep(m), extra={"parts": list(parts)}), keep=response)
            if parts:  # found by its first part too: pydantic-ai merges two responses in a row (`_kept_responses`)
                notes.put((FIRST_PART, id(parts[0])), Note(original=deep(m), extra={"parts": list(parts)}))
            out.append(response)
            started = True
            continue
        if role in ("system", "developer"):
            part = pm.SystemPromptPart(content=text_of_parts(content))
            if tool_results == "separate" or started:
                flush()
        elif role == "user":
            part = pm.UserPromptPart(content=_user_content(pm, content))
            if tool_results == "separate" or started or (pending and not all(isinstance(p, pm.SystemPromptPart) for p in pending)):
                flush()
            started = True
        elif role == "tool":
            part = pm.ToolReturnPart(tool_name=names.get(str(m.get("tool_call_id")), ""), content=tool_text(content), tool_call_id=str(m.get("tool_call_id")))
            if tool_results == "separate" or (pending and not isinstance(pending[-1], pm.ToolReturnPart)):
                flush()
            started = True
        else:
            raise ValueError(f"message {i}: role {role!r} has no pydantic-ai part here")
        notes.put(id(part), Note(original=deep(m)), keep=part)
        pending.append(part)
        if capability_parts and role == "tool" and part.tool_name not in revealed:
            revealed.add(part.tool_name)
            reveal = delta(tools_added=[part.tool_name], tool_call_id=part.tool_call_id)
            notes.put(id(reveal), Note(original={}, extra={NO_CHAT_FORM: True}), keep=reveal)
            pending.append(reveal)
        if tool_results == "separate":
            flush()
    flush()
    return out, notes


NO_CHAT_FORM = "no_chat_form"
"""A note's mark for a part the adapter added that pydantic-ai never sends as a chat message."""


FIRST_PART = "first part"
"""A note's key beside a response's first part (``(FIRST_PART, id(part))``)."""


def _kept_responses(parts: list[Any], notes: Notes) -> list[Message] | None:
    """The assistant messages a response's parts are, when they are the very parts of one or more responses the
    conversion made, in order (pydantic-ai merges two responses in a row into one); else None."""
    out: list[Message] = []
    at = 0
    while at < len(parts):
        note = notes.get((FIRST_PART, id(parts[at])))
        own = note.extra["parts"] if note is not None else []
        if note is None or not own or len(parts) - at < len(own) or any(a is not b for a, b in zip(own, parts[at:], strict=False)):
            return None
        out.append(note.original)
        at += len(own)
    return out


def from_pydantic_ai(messages: list[Any], notes: Notes | None = None, *, model: Any = None) -> list[Message]:
    """OpenAI dicts for pydantic-ai messages: kept parts as their original dicts, new ones as pydantic-ai sends them."""
    pm = requires("pydantic_ai.messages", EXTRA)
    notes = notes or Notes()
    out: list[Message] = []
    for msg in messages:
        if isinstance(msg, pm.ModelResponse):
            note = notes.get(id(msg))
            if note is not None and len(note.extra["parts"]) == len(msg.parts) and all(a is b for a, b in zip(note.extra["parts"], msg.parts, strict=True)):
                out.append(deep(note.original))
            else:
                out.extend(_render(msg, model))
            continue
        for part in msg.parts:
            note = notes.get(id(part))
            if note is not None and note.extra.get(NO_CHAT_FORM):
                continue
            if note is not None:
                out.append(deep(note.original))
            else:
                out.extend(_render(pm.ModelRequest(parts=[part]), model))
    return out


def _render(message: Any, model: Any) -> list[Message]:
    """What pydantic-ai's OpenAI chat model sends for ``message``."""
    import asyncio
    import json

    models = requires("pydantic_ai.models", EXTRA)
    if model is None:
        model = _offline_model()
    coroutine = model._map_messages([message], models.ModelRequestParameters())
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        mapped = asyncio.run(coroutine)
    else:  # called from inside the adapter's own event loop: run the mapping in a fresh thread
        import concurrent.futures

        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            mapped = pool.submit(asyncio.run, coroutine).result()
    return [json.loads(json.dumps(dict(m), default=str)) for m in mapped]


def _offline_model(client: Any = None, name: str = "compaction-suite-summarizer") -> Any:
    openai_models = requires("pydantic_ai.models.openai", EXTRA)
    providers = requires("pydantic_ai.providers.openai", EXTRA)
    if client is None:
        import openai

        client = openai.AsyncOpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1")
    return openai_models.OpenAIChatModel(name, provider=providers.OpenAIProvider(openai_client=client))


# --- factories ------------------------------------------------------------------------------------


def _compactor(name: str, capability_of: Any, settings: Any, o: dict[str, Any]) -> Any:
    """A harness capability as an agent runs it: its ``before_model_request`` on the history, or with
    ``in_agent`` inside pydantic-ai's ``Agent`` loop replaying the history's last turn (`_pydantic_ai_loop`),
    every request of the run passing through it; ``tool_search`` draws the search rounds of deferred tools."""
    from . import _pydantic_ai_loop as loop

    models = requires("pydantic_ai.models", EXTRA)
    tools = requires("pydantic_ai.tools", EXTRA)
    usage = requires("pydantic_ai.usage", EXTRA)
    pm = requires("pydantic_ai.messages", EXTRA)
    model = _offline_model(settings.async_client, settings.model)
    between_turns = _persisted(o["persisted"], f"pydantic_ai:{name}")

    def stored(messages: list[Any]) -> list[Any]:
        return between_turns(messages) if between_turns is not None else messages

    async def direct(messages: list[Message]) -> list[Message]:
        converted, notes = to_pydantic_ai(messages, tool_results=o["tool_results"], capability_parts=bool(o["capability_parts"]))
        if o["tool_search"]:  # nothing is replayed here, so every tool the history calls is deferred (`loop.every_tool`)
            deferred = loop.every_tool(messages)
            converted = loop.with_searches(pm, converted, deferred) if deferred else converted
        ctx = tools.RunContext(deps=None, model=model, usage=usage.RunUsage(), messages=list(converted))
        request = models.ModelRequestContext(model=model, messages=list(converted), model_settings=None, model_request_parameters=models.ModelRequestParameters())
        sent = await capability_of(model).before_model_request(ctx, request)
        # What the model is sent: the returned request context's messages, at every release; from
        # `HISTORY_WRITTEN_FROM` the capability writes the same list into ``ctx.messages`` too.
        return await _back(stored(list(sent.messages)), notes, model)

    async def in_agent(messages: list[Message]) -> list[Message]:
        pydantic_ai = requires("pydantic_ai", EXTRA)
        handed: list[loop.Handed] = []

        def agent_of(function_model: Any, replayed: list[Any], system: list[str] | None) -> Any:
            capability = loop.recording(capability_of(model), handed)
            return pydantic_ai.Agent(function_model, capabilities=[capability], tools=replayed, system_prompt=system or ())

        run = await loop.replay(messages, agent_of, tool_search=bool(o["tool_search"]), pending=True, handed=handed)
        if run is None:
            return messages  # no run of pydantic-ai's loop ends this history
        # A history ending in a request: what the model is sent next. One ending in an answer: the history
        # after the run (what the capability left at the last request, and the answer). Where the harness
        # leaves the history as it was and hands only the model its compacted request (`HISTORY_WRITTEN_FROM`),
        # that request stands for the history at it.
        kept = run.kept if release("pydantic-ai-harness") >= HISTORY_WRITTEN_FROM else loop.as_sent(run, handed)
        return await _back(stored(kept), run.notes, model)

    async def on_responses(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        from . import _pydantic_ai_native as native

        return await native.run(items, settings, capability_of(model), tool_search=bool(o["tool_search"]))

    if o["in_agent"] not in (False, True, "responses"):
        raise ValueError(f"in_agent must be a bool or 'responses', got {o['in_agent']!r}")
    if o["in_agent"] and o["tool_results"] != "grouped":
        raise ValueError("in_agent replays the turn as pydantic-ai records it: tool_results must be 'grouped'")
    _built(name, capability_of, model)
    if o["in_agent"] == "responses":  # the Agent on OpenAIResponsesModel and the Responses double (`_pydantic_ai_native.run`)
        from ._native import declared as declared_native

        if o["persisted"] is not None:
            raise ValueError("in_agent 'responses' keeps no history between turns: persisted must be None")
        on_wire: dict[str, Any] = {**declared_native("responses", system_prompt="outside"), "tool_calls": "function"}
        return make(f"pydantic_ai_harness.{name}", {"core"}, on_responses, declared=on_wire, is_async=True)
    # In the loop a history pydantic-ai never records comes back unchanged, so no size is declared (FIRE-1, FIRE-2).
    trigger = None if o["in_agent"] else _trigger(o)
    declared = capabilities("leading", trigger)
    if o.get("summarizer_provider") is not None:
        declared["summarizer_providers"] = [o["summarizer_provider"]]
    return make(f"pydantic_ai_harness.{name}", {"core"}, in_agent if o["in_agent"] else direct, declared=declared, is_async=True)


COMPACT_ON_REQUEST_FROM = (0, 62)
"""``CompactOnRequest`` arrived in pydantic-ai-harness 0.62.0 (``compaction/_compact_on_request.py``; absent from the
0.52.0-0.61.0 wheels, read)."""


@factory
def compact_on_request(settings: Any, **given: Any) -> Any:
    """``CompactOnRequest`` (pydantic-ai-harness 0.62.0 on) in pydantic-ai's ``Agent`` loop, the history's last turn
    replayed (`_pydantic_ai_loop.replay`): the scripted model's first answer of the turn is a ``compact_context`` call
    (the tool the capability registers), as a model asks when a new task begins; the harness runs the tool, accepts the
    request in ``after_tool_execute`` and runs ``strategy`` in the next ``before_model_request``, writing what it
    compacted into the run's history; the turn then replays on it. What comes back is the history after the run (or at
    the model request after a history ending in a request), less the drawn request round (`_pydantic_ai_loop.REQUEST_ID`),
    which the chat history has no message for. A request no trigger drives: no size is declared (FIRE-1, FIRE-2)."""
    from . import _pydantic_ai_loop as loop

    o = options(DEFAULTS["compact_on_request"], given)
    compaction = _harness_compaction()
    if release("pydantic-ai-harness") < COMPACT_ON_REQUEST_FROM or not hasattr(compaction, "CompactOnRequest"):
        raise CannotDrive("pydantic_ai:compact_on_request", "pydantic-ai-harness", "CompactOnRequest arrived in pydantic-ai-harness 0.62.0")
    if o["strategy"] not in ("summarizing", "sliding_window"):
        raise ValueError(f"strategy must be 'summarizing' or 'sliding_window', got {o['strategy']!r}")
    pm = requires("pydantic_ai.messages", EXTRA)
    function = requires("pydantic_ai.models.function", EXTRA)
    model = _offline_model(settings.async_client, settings.model)
    size = {"max_messages": 1, "keep_messages": o["keep_messages"], "preserve_first_user_message": o["preserve_first_user_message"]}
    streamed = _streamed_summary(compaction, o["summarizer_provider"])

    def capability_of(model: Any) -> Any:
        if o["strategy"] == "summarizing":
            strategy = compaction.SummarizingCompaction(model=model, **size, **streamed)
        else:
            strategy = compaction.SlidingWindowCompaction(**size)
        return compaction.CompactOnRequest(strategy, min_tokens=o["min_tokens"], max_per_run=o["max_per_run"])

    async def run(messages: list[Message]) -> list[Message]:
        pydantic_ai = requires("pydantic_ai", EXTRA)
        handed: list[loop.Handed] = []

        def agent_of(function_model: Any, replayed: list[Any], system: list[str] | None) -> Any:
            scripted = function_model.function
            asked: list[Any] = []

            def answer(request: list[Any], info: Any) -> Any:
                if not asked:  # the turn's first answer: the model asks for a compaction
                    asked.append(request)
                    return pm.ModelResponse(parts=[pm.ToolCallPart(tool_name="compact_context", args={}, tool_call_id=f"{loop.REQUEST_ID}0")])
                return scripted(request, info)

            capability = loop.recording(capability_of(model), handed)
            return pydantic_ai.Agent(function.FunctionModel(answer), capabilities=[capability], tools=replayed, system_prompt=system or ())

        replayed = await loop.replay(messages, agent_of, pending=True, handed=handed)
        if replayed is None:
            return messages  # no run of pydantic-ai's loop ends this history
        return await _back(replayed.kept, replayed.notes, model)

    _built("CompactOnRequest", capability_of, model)
    declared = capabilities("leading", None)
    if o["summarizer_provider"] is not None:
        declared["summarizer_providers"] = [o["summarizer_provider"]]
    name = f"pydantic_ai_harness.CompactOnRequest[{o['strategy']}]"
    return make(name, {"core"}, run, declared=declared, is_async=True)


def _built(name: str, capability_of: Any, model: Any) -> None:
    """Build the capability once as the factory starts (SPEC "The framework matrix and releases", Supported
    releases): a keyword the release lacks is `CannotDrive`, and the harness's refusal of the options given
    (``ValueError: At least one of max_messages, max_tokens, or max_fraction must be set.``) stays the
    configuration's contract error, not a crash of the framework's at ``compact`` (CORE-10). The harness
    refuses only options its docstrings call invalid; no configuration the adapter builds from documented
    arguments is refused at a release it supports (harness 0.4-0.62), so none is deferred to ``compact``."""
    try:
        capability_of(model)
    except TypeError as error:
        raise CannotDrive(f"pydantic_ai:{name}", "pydantic-ai-harness", f"{name} refuses the adapter's keywords: {error}") from error


def _trigger(o: dict[str, Any]) -> dict[str, int] | None:
    """The harness compacts when ``len(messages) > max_messages`` or its chars/4 estimate ``> max_tokens``
    (``compaction._shared.exceeds``): one of them set is the declared trigger (SPEC FIRE-1, FIRE-2);
    both are either one, which no single size says."""
    sizes = {kind: o.get(f"max_{kind}") for kind in ("messages", "tokens")}
    set_ = {kind: int(value) for kind, value in sizes.items() if value is not None}
    return set_ if len(set_) == 1 else None


async def _back(messages: list[Any], notes: Notes, model: Any) -> list[Message]:
    """`from_pydantic_ai` inside the running loop (renders new parts with ``await``)."""
    import dataclasses
    import json

    from ._pydantic_ai_loop import searched

    pm = requires("pydantic_ai.messages", EXTRA)
    models = requires("pydantic_ai.models", EXTRA)
    out: list[Message] = []

    async def render(message: Any) -> list[Message]:
        prepare = getattr(model, "prepare_messages", None)  # pydantic-ai 2.x: retry parts translated as Agent does
        prepared = prepare([message]) if prepare is not None else [message]
        try:
            mapped = await model._map_messages(prepared, models.ModelRequestParameters())
        except TypeError:  # pydantic-ai 1.x: _map_messages takes the messages only
            mapped = await model._map_messages(prepared)
        return [json.loads(json.dumps(dict(m), default=str)) for m in mapped]

    for msg in messages:
        if any(searched(p) for p in msg.parts):  # a drawn tool-search round has no chat message of its own
            msg = dataclasses.replace(msg, parts=[p for p in msg.parts if not searched(p)])
            if not msg.parts:
                continue
        if isinstance(msg, pm.ModelResponse):
            kept = _kept_responses(msg.parts, notes)
            out.extend([deep(m) for m in kept] if kept is not None else await render(msg))
            continue
        for part in msg.parts:
            note = notes.get(id(part))
            if (note is not None and note.extra.get(NO_CHAT_FORM)) or searched(part):
                continue
            out.extend([deep(note.original)] if note is not None else await render(pm.ModelRequest(parts=[part])))
    return out


def _harness_compaction() -> Any:
    """The harness's compaction capabilities: ``pydantic_ai_harness.compaction`` from 0.7.0 (July 2026), and before
    it, from 0.4.0 (June 2026) to 0.6.0, ``pydantic_ai_harness.experimental.compaction``, the same classes with the
    same keywords (``SlidingWindow``, ``ClearToolResults``, ``SummarizingCompaction``, ``TieredCompaction``,
    ``ClampOversizedMessages``, ``DeduplicateFileReads``) that the harness announced as experimental
    (``HarnessExperimentalWarning`` at import, left as users see it). Below 0.4.0 the harness has no compaction."""
    import importlib

    try:
        return importlib.import_module("pydantic_ai_harness.compaction")
    except ImportError:
        pass
    try:
        return importlib.import_module("pydantic_ai_harness.experimental.compaction")
    except ImportError:
        return requires("pydantic_ai_harness.compaction", EXTRA)  # the install line, or the harness before 0.4.0


@factory
def sliding_window(settings: Any, **given: Any) -> Any:
    o = options(DEFAULTS["sliding_window"] | COMMON, given)
    compaction = _harness_compaction()

    window = getattr(compaction, "SlidingWindowCompaction", None) or compaction.SlidingWindow  # its name before harness 0.1x

    def capability(model: Any) -> Any:
        return window(
            max_messages=o["max_messages"], max_tokens=o["max_tokens"], keep_messages=o["keep_messages"],
            preserve_first_user_message=o["preserve_first_user_message"],
        )  # fmt: skip

    return _compactor("SlidingWindowCompaction", capability, settings, o)


@factory
def clear_tool_results(settings: Any, **given: Any) -> Any:
    o = options(DEFAULTS["clear_tool_results"] | COMMON, given)
    compaction = _harness_compaction()

    def capability(model: Any) -> Any:
        return compaction.ClearToolResults(max_messages=o["max_messages"], max_tokens=o["max_tokens"], keep_pairs=o["keep_pairs"])

    return _compactor("ClearToolResults", capability, settings, o)


@factory
def summarizing(settings: Any, **given: Any) -> Any:
    o = options(DEFAULTS["summarizing"] | COMMON, given)
    compaction = _harness_compaction()

    streamed = _streamed_summary(compaction, o["summarizer_provider"])

    def capability(model: Any) -> Any:
        return compaction.SummarizingCompaction(
            model=model, max_messages=o["max_messages"], max_tokens=o["max_tokens"], keep_messages=o["keep_messages"],
            preserve_first_user_message=o["preserve_first_user_message"], **streamed,
        )  # fmt: skip

    return _compactor("SummarizingCompaction", capability, settings, o)


def _streamed_summary(compaction: Any, provider: str | None) -> dict[str, Any]:
    """The keywords a user of a stream-only summary model gives ``SummarizingCompaction`` (`STREAM_ONLY_SUMMARIZERS`):
    the documented ``event_stream_handler=drain_summary_events`` where the release has it, none before."""
    drain = getattr(compaction, "drain_summary_events", None)
    return {"event_stream_handler": drain} if provider in STREAM_ONLY_SUMMARIZERS and drain is not None else {}


@factory
def fallback(settings: Any, **given: Any) -> Any:
    """``FallbackCompaction(fallback_chain=[SummarizingCompaction, SlidingWindowCompaction])`` with its default
    ``fallback_on``, both strategies sized alike: the harness's documented fallback wrapper around a summarizer."""
    o = options(DEFAULTS["fallback"] | COMMON, given)
    compaction = _harness_compaction()
    if not hasattr(compaction, "FallbackCompaction"):
        raise CannotDrive("pydantic_ai:fallback", "pydantic-ai-harness", "FallbackCompaction arrived in pydantic-ai-harness 0.23")
    size = {"max_messages": 1, "keep_messages": o["keep_messages"], "preserve_first_user_message": o["preserve_first_user_message"]}
    streamed = _streamed_summary(compaction, o["summarizer_provider"])

    def capability(model: Any) -> Any:
        chain = [compaction.SummarizingCompaction(model=model, **size, **streamed), compaction.SlidingWindowCompaction(**size)]
        return compaction.FallbackCompaction(fallback_chain=chain, max_tokens=o["max_tokens"])

    return _compactor("FallbackCompaction", capability, settings, o)


@factory
def tiered(settings: Any, **given: Any) -> Any:
    """``TieredCompaction(tiers=[ClearToolResults, SummarizingCompaction], target_tokens=...)``, the chain its
    docstring shows: each tier's own trigger inert (``max_tokens=1``, ``max_messages=1``), as the capability
    drives the tiers itself until the chars/4 estimate fits the target."""
    o = options(DEFAULTS["tiered"] | COMMON, given)
    compaction = _harness_compaction()
    streamed = _streamed_summary(compaction, o["summarizer_provider"])

    def capability(model: Any) -> Any:
        tiers = [
            compaction.ClearToolResults(max_tokens=1, keep_pairs=o["keep_pairs"]),
            compaction.SummarizingCompaction(
                model=model, max_messages=1, keep_messages=o["keep_messages"], preserve_first_user_message=o["preserve_first_user_message"],
                **streamed,
            ),
        ]
        return compaction.TieredCompaction(tiers=tiers, target_tokens=o["target_tokens"])

    return _compactor("TieredCompaction", capability, settings, o)


@factory
def clamp_oversized(settings: Any, **given: Any) -> Any:
    """``ClampOversizedMessages(max_part_tokens=..., keep_head_chars=..., keep_tail_chars=...)`` with its default
    ``clamp_tool_call_args=True``. With ``tool_search`` the drawn search calls carry the words of the calls they lead
    to (`_pydantic_ai_loop.keywords`), so a long call's search is as long; with ``persisted="model_messages"`` what
    the capability left must load back (pydantic/pydantic-ai-harness#401: a typed search call clamped to
    ``{'_clamped': ...}`` does not)."""
    o = options(DEFAULTS["clamp_oversized"] | COMMON, given)
    compaction = _harness_compaction()
    if not hasattr(compaction, "ClampOversizedMessages"):
        raise CannotDrive("pydantic_ai:clamp_oversized", "pydantic-ai-harness", "its compaction has no ClampOversizedMessages")

    def capability(model: Any) -> Any:
        return compaction.ClampOversizedMessages(
            max_part_tokens=o["max_part_tokens"], keep_head_chars=o["keep_head_chars"], keep_tail_chars=o["keep_tail_chars"]
        )

    return _compactor("ClampOversizedMessages", capability, settings, o)


@factory
def deduplicate_file_reads(settings: Any, **given: Any) -> Any:
    """``DeduplicateFileReads(file_key=..., max_messages=..., max_tokens=...)`` with its default placeholder: a read
    of a file (a call of one of ``file_tools``, keyed by its ``path_argument``) that a later read of the same file
    supersedes is blanked in place, its call kept. A target for reported bugs (not counted): the harness's own
    zero-cost strategy, driven directly, in pydantic-ai's ``Agent`` loop (``in_agent``), with tool search
    (``tool_search``) and with the history kept between turns (``persisted``) as the other capabilities are."""
    o = options(DEFAULTS["deduplicate_file_reads"] | COMMON, given)
    compaction = _harness_compaction()
    if not hasattr(compaction, "DeduplicateFileReads"):
        raise CannotDrive("pydantic_ai:deduplicate_file_reads", "pydantic-ai-harness", "its compaction has no DeduplicateFileReads")
    tools_read = frozenset(str(name) for name in o["file_tools"])
    argument = str(o["path_argument"])

    def file_key(call: Any) -> str | None:
        if call.tool_name not in tools_read:
            return None
        path = call.args_as_dict().get(argument)
        return path if isinstance(path, str) else None

    def capability(model: Any) -> Any:
        return compaction.DeduplicateFileReads(file_key=file_key, max_messages=o["max_messages"], max_tokens=o["max_tokens"])

    return _compactor("DeduplicateFileReads", capability, settings, o)


ANSWERS_CALLS = ("tool-return", "retry-prompt")
"""The request parts that answer a call of the response before them (pydantic-ai's ``part_kind``)."""


def _at_turn_start(threshold: int) -> Any:
    """An ``OpenAICompaction`` trigger: more than ``threshold`` messages, the current request a user prompt
    answering no call. A request holding a call's output beside the next prompt (a user message sent after a
    round with no answer between) is not a turn start: compacting everything before it would send the compact
    endpoint the call without its output, which it refuses."""

    def trigger(messages: list[Any]) -> bool:
        kinds = {getattr(p, "part_kind", "") for p in getattr(messages[-1] if messages else None, "parts", ())}
        return len(messages) > threshold and "user-prompt" in kinds and not kinds & set(ANSWERS_CALLS)

    return trigger


PERSISTED = ("vercel_ai", "model_messages")
"""Where a user keeps the history between turns (``persisted``): ``vercel_ai``, the Vercel AI UI protocol a
``useChat`` frontend holds (``VercelAIAdapter.dump_messages`` at a turn's end, ``load_messages`` at the
next turn's start); ``model_messages``, JSON through ``ModelMessagesTypeAdapter`` (``dump_json``, then
``validate_json``), pydantic-ai's documented way to store and load messages ("Storing and loading messages").
None: in the process, as ``result.all_messages()``."""


def _persisted(where: Any, path: str = "pydantic_ai:openai_compaction") -> Any:
    """The round trip a history makes between two turns when kept ``where`` (`PERSISTED`), or None. A
    history that does not load raises (the next turn cannot start); one that loads as it was stored comes
    back as the very objects (their notes kept, `_back`)."""
    if where is None:
        return None
    if where not in PERSISTED:
        raise ValueError(f"persisted must be None or one of {PERSISTED}, got {where!r}")
    if where == "model_messages":
        return _json_round_trip(requires("pydantic_ai.messages", EXTRA).ModelMessagesTypeAdapter)
    adapter = getattr(requires("pydantic_ai.ui.vercel_ai", EXTRA), "VercelAIAdapter", None)
    if adapter is None or not hasattr(adapter, "dump_messages"):
        raise CannotDrive(path, "pydantic-ai-slim", "its VercelAIAdapter has no dump_messages (persisted='vercel_ai')")

    def round_trip(messages: list[Any]) -> list[Any]:
        return list(adapter.load_messages(adapter.dump_messages(messages)))

    return round_trip


def _json_round_trip(adapter: Any) -> Any:
    """``messages`` stored as JSON and loaded back through ``adapter`` (``ModelMessagesTypeAdapter``): the loaded
    messages, or the given ones when the load stores the same JSON again (nothing lost)."""

    def round_trip(messages: list[Any]) -> list[Any]:
        stored = adapter.dump_json(messages)
        loaded = list(adapter.validate_json(stored))
        return messages if adapter.dump_json(loaded) == stored else loaded

    return round_trip


@factory
def openai_compaction(settings: Any, **given: Any) -> Any:
    """pydantic-ai's ``OpenAICompaction(stateless=..., message_count_threshold=... | token_threshold=...)`` in an
    ``Agent`` on ``OpenAIResponsesModel`` and the suite's Responses double (`_pydantic_ai_native.run`).
    ``persisted``: where the history is kept between the turn that ends the history and the next one
    (`PERSISTED`; pydantic/pydantic-ai#6123: before 2.27.0 the Vercel AI adapter dropped ``CompactionPart``).
    ``tool_search``: the tools the history calls are deferred and found by the provider's client-executed tool
    search, each found before its first call (`_pydantic_ai_native.searchable`; pydantic/pydantic-ai#7189)."""
    from . import _pydantic_ai_native as native
    from ._common import accepts
    from ._native import declared

    o = options(DEFAULTS["openai_compaction"], given)
    if o["previous_response_id"] not in (None, "auto"):
        raise ValueError(f"previous_response_id must be None or 'auto', got {o['previous_response_id']!r}")
    if o["previous_response_id"] == "auto" and not o["stateless"]:  # SPEC Decision: pydantic-ai's native compaction
        raise ValueError("previous_response_id 'auto' is adapted with stateless compaction only: what the API reads of a chain through a server-side compaction item is not modelled")
    openai_models = requires("pydantic_ai.models.openai", EXTRA)
    if not hasattr(openai_models, "OpenAICompaction"):
        raise CannotDrive("pydantic_ai:openai_compaction", "pydantic-ai-slim", "OpenAICompaction is missing")
    stateless = bool(o["stateless"])
    size: dict[str, Any] = {"message_count_threshold": o["message_count_threshold"]} if stateless else {"token_threshold": o["token_threshold"]}
    if o["at"] not in ("any_request", "turn_start") or (o["at"] == "turn_start" and not (stateless and o["message_count_threshold"])):
        raise ValueError(f"at must be 'any_request' or 'turn_start' (stateless, with a message_count_threshold), got {o['at']!r}")
    if o["at"] == "turn_start":
        size = {"trigger": _at_turn_start(int(o["message_count_threshold"]))}
    if accepts(openai_models.OpenAICompaction, "stateless"):
        size = {"stateless": stateless, **size}
    elif not stateless:  # the first releases compact only through /responses/compact
        raise CannotDrive("pydantic_ai:openai_compaction", "pydantic-ai-slim", "its OpenAICompaction is stateless only (no 'stateless' keyword, no context_management)")
    try:
        openai_models.OpenAICompaction(**size)
    except TypeError as error:  # a release whose OpenAICompaction takes other keywords
        raise CannotDrive("pydantic_ai:openai_compaction", "pydantic-ai-slim", f"OpenAICompaction({', '.join(size)}=...) is refused: {error}") from error
    chained = {"openai_previous_response_id": "auto"} if o["previous_response_id"] == "auto" else {}
    between_turns = _persisted(o["persisted"])

    async def run(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return await native.run(items, settings, openai_models.OpenAICompaction(**size), chained, between_turns=between_turns, tool_search=bool(o["tool_search"]))

    capabilities: dict[str, Any] = {**declared("responses", system_prompt="outside"), "tool_calls": "function"}  # its Responses model records no custom tool call
    return make("pydantic_ai.OpenAICompaction", {"core"}, run, declared=capabilities, is_async=True)


@factory
def history_processor(settings: Any, **given: Any) -> Any:
    """pydantic-ai's ``Agent`` with a history processor keeping recent messages (`_pydantic_ai_processor`),
    the history's last user turn replayed as one run on a ``FunctionModel``; ``compact`` returns what the
    model was sent last, ``reported_run()`` what ``result.new_messages()`` and ``all_messages()`` hand back
    (SPEC STORE-22). The processor is user code (pydantic-ai ships none): only STORE-22 judges the framework."""
    from . import _pydantic_ai_loop as loop
    from . import _pydantic_ai_processor as processing

    o = options(DEFAULTS["history_processor"], given)
    pm = requires("pydantic_ai.messages", EXTRA)
    pydantic_ai = requires("pydantic_ai", EXTRA)
    processor = processing.keep_recent(pm, int(o["max_messages"]), int(o["keep_messages"]))
    if o["tool_search"]:
        return _processor_with_tool_search(settings, processor)
    model = _offline_model(settings.async_client, settings.model)
    report: list[dict[str, Any]] = []

    def agent_of(function_model: Any, tools: list[Any], system: list[str] | None) -> Any:
        return processing.agent_with(pydantic_ai, function_model, processor, tools, system)

    async def run(messages: list[Message]) -> list[Message]:
        report.clear()
        run = await loop.replay(messages, agent_of)
        if run is None:
            return messages  # no finished run of pydantic-ai's loop ends this history
        after, new = list(run.result.all_messages()), list(run.result.new_messages())
        report.append({
            "given": await _back(list(run.history), run.notes, model),
            "after": await _back(after, run.notes, model),
            "new": await _back(new, run.notes, model),
            "counts": {"given": _merged_count(run.history), "after": len(after), "new": len(new)},
        })  # fmt: skip
        return await _back(run.sent[-1], run.notes, model)

    compactor = make("pydantic_ai.history_processors", {"core"}, run, declared={**capabilities("leading", None), "run_messages": "reported"}, is_async=True)
    compactor.reported_run = lambda: report[-1] if report else None
    return compactor


def _merged_count(messages: list[Any]) -> int:
    """How many messages pydantic-ai counts in a ``message_history`` it is given: consecutive requests (or
    responses) merged into one, as its ``_clean_message_history`` does before it sets ``new_message_index``
    (the units of STORE-22's ``counts``, `conformance.run_messages.COUNTS`)."""
    return sum(1 for i, m in enumerate(messages) if i == 0 or type(m) is not type(messages[i - 1]))


def _processor_with_tool_search(settings: Any, processor: Any) -> Any:
    """``history_processor`` with ``tool_search``: the processor as the ``ProcessHistory`` capability of an
    ``Agent`` on ``OpenAIResponsesModel`` and the suite's Responses double, every tool the history calls deferred
    and found by the provider's client-executed tool search before its first call (`_pydantic_ai_native.run`,
    `searchable`). A keep-recent window cuts the search rounds of earlier turns with the turns; pydantic-ai must
    then still let the model find a tool it reaches for again (pydantic/pydantic-ai#7259: before 2.26.0 the reveal
    state was read from the processed history and the search corpus from the unprocessed one, so a re-search
    found nothing). Judged on the input the model is sent after the history's last step (RESP-32)."""
    from . import _pydantic_ai_native as native
    from ._native import declared

    capabilities_module = requires("pydantic_ai.capabilities", EXTRA)
    if not hasattr(capabilities_module, "ProcessHistory") or not hasattr(capabilities_module, "ToolSearch"):
        raise CannotDrive("pydantic_ai:history_processor (tool_search)", "pydantic-ai-slim", "ProcessHistory or ToolSearch is missing")

    async def run(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return await native.run(items, settings, capabilities_module.ProcessHistory(processor), tool_search=True)

    declared_here: dict[str, Any] = {**declared("responses", system_prompt="outside"), "tool_calls": "function"}
    return make("pydantic_ai.ProcessHistory", {"core"}, run, declared=declared_here, is_async=True)


@factory
def anthropic_compaction(settings: Any, **given: Any) -> Any:
    """pydantic-ai's ``AnthropicCompaction(token_threshold=...)`` in an ``Agent`` on ``AnthropicModel`` and the
    suite's Messages API double (`_pydantic_ai_anthropic.run`; SPEC Part A, "Wire formats", Decision: the Messages
    API's server-side compaction). Declares ``usage: reported``: ``AgentRun.usage()`` of the call's runs (COST-1)."""
    from . import _pydantic_ai_anthropic as server
    from ._native import declared

    o = options(DEFAULTS["anthropic_compaction"], given)
    anthropic_models = requires("pydantic_ai.models.anthropic", EXTRA)
    if not hasattr(anthropic_models, "AnthropicCompaction"):
        raise CannotDrive("pydantic_ai:anthropic_compaction", "pydantic-ai-slim", "AnthropicCompaction is missing")
    threshold = int(o["token_threshold"])
    usage = server.Usage()

    async def run(request: dict[str, Any]) -> dict[str, Any]:
        return await server.run(request, settings, anthropic_models.AnthropicCompaction(token_threshold=threshold), usage)

    capabilities: dict[str, Any] = {**declared("anthropic-messages", system_prompt="outside"), "usage": "reported"}
    compactor = make("pydantic_ai.AnthropicCompaction", {"core"}, run, declared=capabilities, is_async=True)
    compactor.reported_usage = usage.reported
    return compactor
