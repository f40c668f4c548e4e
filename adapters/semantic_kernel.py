"""Semantic Kernel: ``ChatHistoryTruncationReducer`` and ``ChatHistorySummarizationReducer``.

Targets::

    compaction-suite check compaction_suite.adapters.semantic_kernel:truncation_reducer
    compaction-suite check compaction_suite.adapters.semantic_kernel:summarization_reducer

Options from ``$COMPACTION_ADAPTER_OPTIONS`` (see ``TRUNCATION_DEFAULTS``, ``SUMMARIZATION_DEFAULTS``).

Conversion (OpenAI dict <-> ``ChatMessageContent``): the role maps to ``AuthorRole``
(``developer`` is ``AuthorRole.DEVELOPER``); text is ``TextContent``; an ``image_url`` part is
``ImageContent`` (``data_uri=`` for a data URL, ``uri=`` otherwise; ``detail`` has no field,
so it is in the note); each tool call is a ``FunctionCallContent(id, name, arguments=<the JSON
string>)`` after the assistant's text; a tool result is
``FunctionResultContent(id=tool_call_id, name=<the call's function>, result=content)`` in an
``AuthorRole.TOOL`` message. **Parallel tool results: several messages by default** (one per
result), as the kernel's own function invocation adds them (``frc.to_chat_message_content()``
per call); ``"tool_results": "grouped"`` puts a round's results in one TOOL message, which
the types allow, but SK's OpenAI connector then sends a malformed tool message
(``ChatMessageContent.to_dict`` gives ``content`` a list of ``{tool_call_id, content}`` and
only the first ``tool_call_id``), so the matrix runs ``separate`` only.
The note of a message is found by ``metadata["oai_index"]``.

Declared capabilities (SPEC Part A): ``called: between_rounds``, proven by
``tests/test_adapter_loops.py`` with ``ChatCompletionAgent``'s own loop (SK's OpenAI
connector on a scripted endpoint): an agent never reduces during a run; the caller reduces
the thread (``await thread.reduce()``) between ``get_response`` calls, when the kernel has
added every call's result. ``system_prompt: in_list``: SK's reducers keep the first
``system``/``developer`` message of the history they reduce (``ChatHistory(system_message=...)``);
an agent's ``instructions=`` stay outside the thread (the loop test shows that too).

Profiles claimed, and why (the matrix shows them):

* ``ChatHistoryTruncationReducer`` claims ``core`` only: it reduces when the message count
  passes ``target_count + threshold_count`` (no iteration trigger, not ``trigger``); it
  truncates (no ``summary``); it has no summarizer (no ``failure``) and no event (no ``events``).
* ``ChatHistorySummarizationReducer`` claims ``core``, and ``failure`` only with
  ``fail_on_error=False`` (its documented contract: "Summarization failed, continuing without
  summary"; with the default ``fail_on_error=True`` it raises ``ChatHistoryReducerException``).
  Its summary is an ``assistant`` message marked ``metadata["__summary__"]`` and it keeps a
  number of *messages* (not ``summary``); message-count trigger (not ``trigger``); no event.
"""

from __future__ import annotations

from typing import Any

from ._common import (
    Message,
    Note,
    Notes,
    PartView,
    call_back,
    call_names,
    calls_by_id,
    capabilities,
    content_back,
    deep,
    finish,
    make,
    options,
    originals_by_call,
    requires,
    tool_result_back,
    tool_runs,
    tool_text,
)

FRAMEWORK = "Semantic Kernel"
DISTRIBUTIONS = ("semantic-kernel",)
EXTRA = "semantic-kernel"
NOTE_KEY = "oai_index"

TRUNCATION_DEFAULTS: dict[str, Any] = {"target_count": 10, "threshold_count": 0, "tool_results": "separate"}
SUMMARIZATION_DEFAULTS: dict[str, Any] = {
    "target_count": 10,
    "threshold_count": 0,
    "fail_on_error": True,
    "use_single_summary": True,
    "include_function_content_in_summary": False,
    "tool_results": "separate",
}

WHY = {
    "truncation_reducer": "core only: message-count trigger (no iteration trigger); truncates, no summarizer, no event",
    "summarization_reducer": (
        "core (+ failure with fail_on_error=False: 'continuing without summary'); summary is an assistant message "
        "marked __summary__ keeping N messages (not [Context Summary] + K rounds); message-count trigger; no event"
    ),
}

CONFIGURATIONS: list[tuple[str, dict[str, Any]]] = [
    ("truncation_reducer", {"target_count": 4}),
    ("truncation_reducer", {"target_count": 10}),
    ("truncation_reducer", {"target_count": 20}),
    ("truncation_reducer", {"target_count": 10, "threshold_count": 5}),
    ("summarization_reducer", {"target_count": 4}),
    ("summarization_reducer", {"target_count": 10}),
    ("summarization_reducer", {"target_count": 10, "fail_on_error": False}),
    ("summarization_reducer", {"target_count": 10, "include_function_content_in_summary": True}),
]


# --- conversion ---------------------------------------------------------------------------------


def _role(sk: Any, role: Any) -> Any:
    roles = {"system": "SYSTEM", "developer": "DEVELOPER", "user": "USER", "assistant": "ASSISTANT", "tool": "TOOL"}
    if role not in roles:
        raise ValueError(f"role {role!r} has no Semantic Kernel AuthorRole here")
    return getattr(sk.AuthorRole, roles[role])


def _items(sk: Any, content: Any) -> tuple[list[Any], list[Any] | None]:
    """SK items for an OpenAI content, and the items made for each part (for a list)."""
    if content is None:
        return [], None
    if isinstance(content, str):
        return [sk.TextContent(text=content)], None
    items = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            items.append(sk.TextContent(text=part.get("text", "")))
        elif kind == "image_url":
            url = (part.get("image_url") or {}).get("url", "")
            items.append(sk.ImageContent(data_uri=url) if url.startswith("data:") else sk.ImageContent(uri=url))
        else:
            raise ValueError(f"content part {part!r} has no Semantic Kernel item here")
    return items, list(items)


def to_semantic_kernel(messages: list[Message], *, tool_results: str = "separate") -> tuple[list[Any], Notes]:
    """``ChatMessageContent`` for OpenAI dicts; ``tool_results`` is ``"separate"`` or ``"grouped"``."""
    sk = requires("semantic_kernel.contents", EXTRA)
    if tool_results not in ("separate", "grouped"):
        raise ValueError(f"tool_results must be 'separate' or 'grouped', got {tool_results!r}")
    names = call_names(messages)
    notes = Notes()
    notes.put("tool_results", Note(original={}, extra={"by_call": originals_by_call(messages), "calls": calls_by_id(messages)}))
    out: list[Any] = []
    runs = tool_runs(messages) if tool_results == "grouped" else [[i] for i in range(len(messages))]
    for run in runs:
        first = messages[run[0]]
        role = first.get("role")
        metadata = {NOTE_KEY: run[0]}
        if role == "tool":
            results = [
                sk.FunctionResultContent(id=messages[i].get("tool_call_id"), name=names.get(str(messages[i].get("tool_call_id"))) or None, result=tool_text(messages[i].get("content")))
                for i in run
            ]
            out.append(sk.ChatMessageContent(role=_role(sk, "tool"), items=results, metadata=metadata))
            continue
        items, created = _items(sk, first.get("content"))
        if role == "assistant":
            if first.get("content") == "" and first.get("tool_calls"):
                items = []  # an empty preamble is no text item (the note restores "")
            for call in first.get("tool_calls") or []:
                function = call.get("function") or {}
                items.append(sk.FunctionCallContent(id=call.get("id"), name=function.get("name"), arguments=function.get("arguments")))
        kwargs: dict[str, Any] = {"role": _role(sk, role), "items": items, "metadata": metadata}
        if first.get("name") is not None:
            kwargs["name"] = first["name"]
        out.append(sk.ChatMessageContent(**kwargs))
        notes.put(run[0], Note(original=deep(first), created_parts=created))
    return out, notes


def _views(sk: Any, items: list[Any]) -> list[PartView]:
    views = []
    for item in items:
        if isinstance(item, sk.TextContent):
            views.append(PartView("text", item.text or ""))
        elif isinstance(item, sk.ImageContent):
            views.append(PartView("image", item.data_uri if item.data else str(item.uri), item))
    return views


def from_semantic_kernel(messages: list[Any], notes: Notes | None = None) -> list[Message]:
    """OpenAI dicts for ``ChatMessageContent`` (a TOOL message with n results gives n dicts)."""
    sk = requires("semantic_kernel.contents", EXTRA)
    notes = notes or Notes()
    shared = notes.get("tool_results")
    by_call = shared.extra["by_call"] if shared else {}
    calls = shared.extra["calls"] if shared else {}
    out: list[Message] = []
    for msg in messages:
        role = msg.role.value if hasattr(msg.role, "value") else str(msg.role)
        results = [i for i in msg.items if isinstance(i, sk.FunctionResultContent)]
        if role == "tool" or results:
            for item in results:
                out.append(tool_result_back(item.id, deep(item.result), by_call))
            continue
        note = notes.get((msg.metadata or {}).get(NOTE_KEY))
        d: Message = {"role": role, "content": content_back(_views(sk, msg.items), note)}
        function_calls = [i for i in msg.items if isinstance(i, sk.FunctionCallContent)]
        if function_calls:
            d["tool_calls"] = [
                call_back(i.id, i.name, i.arguments if isinstance(i.arguments, str) else _json(i.arguments), calls) for i in function_calls
            ]
            if d["content"] == "" and note is None:
                d["content"] = None
        if msg.name is not None:
            d["name"] = msg.name
        out.append(finish(d, note))
    return out


def _json(value: Any) -> str:
    import json

    return json.dumps(value if value is not None else {}, ensure_ascii=False)


# --- factories ------------------------------------------------------------------------------------


def _runner(reducer_of: Any, tool_results: str) -> Any:
    async def run(messages: list[Message]) -> list[Message]:
        converted, notes = to_semantic_kernel(messages, tool_results=tool_results)
        reducer = reducer_of()
        reducer.messages = converted
        await reducer.reduce()
        return from_semantic_kernel(list(reducer.messages), notes)

    return run


def truncation_reducer(settings: Any, **given: Any) -> Any:
    """``ChatHistoryTruncationReducer(target_count, threshold_count)``, reduced once per call."""
    o = options(TRUNCATION_DEFAULTS, given)
    reducers = requires("semantic_kernel.contents.history_reducer.chat_history_truncation_reducer", EXTRA)

    def reducer() -> Any:
        return reducers.ChatHistoryTruncationReducer(target_count=o["target_count"], threshold_count=o["threshold_count"])

    return make("semantic_kernel.ChatHistoryTruncationReducer", {"core"}, _runner(reducer, o["tool_results"]), declared=capabilities("in_list"), is_async=True)


def summarization_reducer(settings: Any, **given: Any) -> Any:
    """``ChatHistorySummarizationReducer`` with ``OpenAIChatCompletion(async_client=settings.async_client)``."""
    o = options(SUMMARIZATION_DEFAULTS, given)
    reducers = requires("semantic_kernel.contents.history_reducer.chat_history_summarization_reducer", EXTRA)
    open_ai = requires("semantic_kernel.connectors.ai.open_ai", EXTRA)
    service = open_ai.OpenAIChatCompletion(ai_model_id=settings.model, async_client=settings.async_client)
    extra = {} if settings.summary_prompt is None else {"summarization_instructions": settings.summary_prompt}

    def reducer() -> Any:
        return reducers.ChatHistorySummarizationReducer(
            service=service,
            target_count=o["target_count"],
            threshold_count=o["threshold_count"],
            fail_on_error=o["fail_on_error"],
            use_single_summary=o["use_single_summary"],
            include_function_content_in_summary=o["include_function_content_in_summary"],
            **extra,
        )

    profiles = {"core"} | (set() if o["fail_on_error"] else {"failure"})
    return make("semantic_kernel.ChatHistorySummarizationReducer", profiles, _runner(reducer, o["tool_results"]), declared=capabilities("in_list"), is_async=True)
