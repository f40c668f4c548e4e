"""Semantic Kernel: ``ChatHistoryTruncationReducer`` and ``ChatHistorySummarizationReducer``.

Targets (options from ``$COMPACTION_ADAPTER_OPTIONS``, see ``DEFAULTS``)::

    compaction-suite check compaction_suite.adapters.semantic_kernel:truncation_reducer
    compaction-suite check compaction_suite.adapters.semantic_kernel:summarization_reducer

``invoked_by`` picks the path SK reduces on: ``"reduce"`` (the caller's ``await reducer.reduce()``,
as SK's samples do between agent turns), ``"add_message_async"`` (``auto_reduce=True``: the history
reduces itself as each message is added), ``"agent_thread"`` (``ChatHistoryAgentThread`` adds each
message as ``ChatCompletionAgent`` does), ``"agent_thread_reduce"`` (the same, then the caller's
``await thread.reduce()``, as SK's agent history-reducer samples do after each turn), ``"responses_thread_reduce"``
(``ResponsesAgentThread(chat_history=reducer, enable_store=False)`` as ``OpenAIResponsesAgent.invoke`` adds
each message to it without a stored response, then the caller's ``await thread.reduce()``). ``tool_results``
picks how a round's results are stored: ``"separate"`` (one TOOL message each, what ``ChatCompletionAgent``
stores) or ``"grouped"`` (one TOOL message holding the round's results, what ``OpenAIResponsesAgent`` stores:
``merge_function_results``). ``tool_message`` picks the native shape of a tool result:
``"function_result"`` (``FunctionResultContent``, what SK's function calling adds) or ``"text"`` (a
TOOL message holding text only, what ``ChatHistory.add_tool_message(str)`` built before 1.35.1).
Declarations (``called: between_rounds``, ``system_prompt: in_list``) are proven by
``tests/test_adapter_loops.py`` and ``tests/test_matrix_loops.py``; conversion, shapes and the claims
behind ``WHY`` are in ``adapters/README.md``.
"""

from __future__ import annotations

import os
from typing import Any

from ._common import (
    Documented,
    Message,
    Note,
    Notes,
    PartView,
    call_back,
    call_names,
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

FRAMEWORK = "Semantic Kernel"
DISTRIBUTIONS = ("semantic-kernel",)
EXTRA = "semantic-kernel"
NOTE_KEY = "oai_index"

SUPPORTED = {"semantic-kernel": ">=1.20,<2"}
"""Releases this adapter drives (1.20.0, February 2025, the first with the Python history reducers, to
1.45.0): checked when a factory starts. The ``agent_thread`` path needs ``ChatHistoryAgentThread``, which
later releases added; without it that configuration is a contract error (`_reducer_class`)."""

SWEEP_INSTALL = ("semantic-kernel", "httpx")
"""What a version sweep installs: SK's OpenAI connector imports httpx, which releases before 1.3x left
to openai 1.x to bring (openai 3.x brings httpx2 instead)."""

PATHS = ("reduce", "add_message_async", "agent_thread", "agent_thread_reduce", "responses_thread_reduce")
CALLER_REDUCES = ("reduce", "agent_thread_reduce", "responses_thread_reduce")
"""The paths where the caller's ``await ....reduce()`` reduces (``auto_reduce`` off); on the others the
history reduces itself as messages are added."""
SHAPE = {"tool_results": "separate", "tool_message": "function_result", "invoked_by": "reduce"}
TRUNCATION_DEFAULTS: dict[str, Any] = {"target_count": 10, "threshold_count": 0, **SHAPE}
SUMMARIZATION_DEFAULTS: dict[str, Any] = {
    "target_count": 10,
    "threshold_count": 0,
    "fail_on_error": True,
    "use_single_summary": True,
    "include_function_content_in_summary": False,
    "summarizer_window": None,
    **SHAPE,
}
SESSION_DEFAULTS: dict[str, Any] = {"reducer": "summarization", "target_count": 4, "threshold_count": 0, "fail_on_error": True}
DEFAULTS = {"truncation_reducer": TRUNCATION_DEFAULTS, "summarization_reducer": SUMMARIZATION_DEFAULTS, "history_session": SESSION_DEFAULTS}

DOCUMENTED: list[Documented] = [
    {
        "factory": "summarization_reducer",
        "clause": "CORE-10",
        "options": {"fail_on_error": True},
        "quote": "fail_on_error: Raise error if summarization fails, default is True.",
        "source": "semantic_kernel/contents/history_reducer/chat_history_summarization_reducer.py@1.45.0",
    },
]
"""SK documents that its summarization reducer raises when the summarizer fails unless
``fail_on_error=False``: the matrix shows that crash as *documented* and counts it apart."""

WHY = {
    "truncation_reducer": "core only: message-count trigger (no iteration trigger); truncates, no summarizer, no event",
    "summarization_reducer": (
        "core (+ failure with fail_on_error=False: 'continuing without summary'); summary is an assistant message "
        "marked __summary__ keeping N messages (not [Context Summary] + K rounds); message-count trigger; no event"
    ),
    "history_session": (
        "session (+ core): a reducer stored with store_chat_history_to_file and loaded with load_chat_history_from_file "
        "between turns, as SK's sample does; message-count trigger; no event"
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
    ("summarization_reducer", {"target_count": 4, "fail_on_error": False, "summarizer_window": 8000}),
    ("truncation_reducer", {"target_count": 4, "tool_message": "text"}),
    ("truncation_reducer", {"target_count": 4, "invoked_by": "add_message_async"}),
    ("summarization_reducer", {"target_count": 4, "invoked_by": "add_message_async"}),
    ("truncation_reducer", {"target_count": 4, "invoked_by": "agent_thread"}),
    ("summarization_reducer", {"target_count": 4, "invoked_by": "agent_thread"}),
    ("truncation_reducer", {"target_count": 4, "invoked_by": "agent_thread_reduce"}),
    ("summarization_reducer", {"target_count": 4, "invoked_by": "agent_thread_reduce"}),
    ("truncation_reducer", {"target_count": 4, "invoked_by": "responses_thread_reduce", "tool_results": "grouped"}),
    ("summarization_reducer", {"target_count": 4, "invoked_by": "responses_thread_reduce", "tool_results": "grouped", "include_function_content_in_summary": True}),
    ("history_session", {"reducer": "summarization", "target_count": 4}),
    ("history_session", {"reducer": "truncation", "target_count": 4}),
]
"""What ``compaction-suite matrix`` runs and counts: each path and native shape SK reduces (the loop
tests show where each arises)."""


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


def to_semantic_kernel(messages: list[Message], *, tool_results: str = "separate", tool_message: str = "function_result") -> tuple[list[Any], Notes]:
    """``ChatMessageContent`` for OpenAI dicts; ``tool_results`` is ``"separate"`` or ``"grouped"``,
    ``tool_message`` is ``"function_result"`` or ``"text"`` (a TOOL message holding text only)."""
    sk = requires("semantic_kernel.contents", EXTRA)
    if tool_results not in ("separate", "grouped"):
        raise ValueError(f"tool_results must be 'separate' or 'grouped', got {tool_results!r}")
    if tool_message not in ("function_result", "text"):
        raise ValueError(f"tool_message must be 'function_result' or 'text', got {tool_message!r}")
    names = call_names(messages)
    notes = Notes()
    notes.put("tool_results", Note(original={}, extra={"by_call": originals_by_call(messages), "calls": calls_by_id(messages)}))
    out: list[Any] = []
    runs = tool_runs(messages) if tool_results == "grouped" else [[i] for i in range(len(messages))]
    for run in runs:
        first = messages[run[0]]
        role = first.get("role")
        metadata = {NOTE_KEY: run[0]}
        if role == "tool" and tool_message == "text":
            text = "\n".join(str(tool_text(messages[i].get("content"))) for i in run)
            out.append(sk.ChatMessageContent(role=_role(sk, "tool"), items=[sk.TextContent(text=text)], metadata=metadata))
            notes.put(run[0], Note(original=deep(first), extra={"run": [deep(messages[i]) for i in run], "text": text}))
            continue
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
            if (refusal := refusal_of(first)) is not None:  # as SK's OpenAI connector parses one: a TextContent of it
                items.append(sk.TextContent(text=refusal))
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
        note = notes.get((msg.metadata or {}).get(NOTE_KEY))
        if role == "tool" and not results and note is not None and "run" in note.extra:
            if _text_of(sk, msg) == note.extra["text"]:
                out.extend(deep(note.extra["run"]))  # the plain-text TOOL message the converter made, as it was
            else:
                out.append({"role": "tool", "tool_call_id": note.original.get("tool_call_id"), "content": _text_of(sk, msg)})
            continue
        if role == "tool" or results:
            for item in results:
                out.append(tool_result_back(item.id, deep(item.result), by_call))
            continue
        d: Message = {"role": role, "content": content_back(without_refusal(_views(sk, msg.items), note), note)}
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


def _text_of(sk: Any, msg: Any) -> str:
    return "".join(i.text or "" for i in msg.items if isinstance(i, sk.TextContent))


def _json(value: Any) -> str:
    import json

    return json.dumps(value if value is not None else {}, ensure_ascii=False)


# --- factories ------------------------------------------------------------------------------------


def _runner(reducer_of: Any, o: dict[str, Any]) -> Any:
    if o["invoked_by"] not in PATHS:
        raise ValueError(f"invoked_by must be one of {PATHS}, got {o['invoked_by']!r}")

    async def run(messages: list[Message]) -> list[Message]:
        converted, notes = to_semantic_kernel(messages, tool_results=o["tool_results"], tool_message=o["tool_message"])
        reducer = reducer_of(auto_reduce=o["invoked_by"] not in CALLER_REDUCES)
        if o["invoked_by"] == "reduce":
            reducer.messages = converted
            await reducer.reduce()
        elif o["invoked_by"] == "add_message_async":
            for message in converted:  # ChatHistoryReducer.add_message_async reduces after each add (auto_reduce)
                await reducer.add_message_async(message)
        else:
            thread = _responses_thread(reducer) if o["invoked_by"] == "responses_thread_reduce" else _agent_thread(reducer)
            for message in converted:  # how ChatCompletionAgent (OpenAIResponsesAgent.invoke) adds each message to its thread
                await thread.on_new_message(message)
            if o["invoked_by"] in ("agent_thread_reduce", "responses_thread_reduce"):
                await thread.reduce()  # python/samples/concepts/agents/chat_completion_agent/*_history_reducer_single_agent.py
            reducer = thread._chat_history
        return from_semantic_kernel(list(reducer.messages), notes)

    return run


def _agent_thread(reducer: Any) -> Any:
    agents = requires("semantic_kernel.agents", EXTRA)
    return agents.ChatHistoryAgentThread(chat_history=reducer)


def _responses_thread(reducer: Any) -> Any:
    """The thread ``OpenAIResponsesAgent`` keeps without a stored response (``store_enabled=False``): its
    ``_on_new_message`` adds every message to ``chat_history`` while it has no ``response_id``. The client
    is never asked (the thread holds no response id), so it points nowhere."""
    responses = requires("semantic_kernel.agents.open_ai.openai_responses_agent", EXTRA)
    openai = requires("openai", EXTRA)
    client = openai.AsyncOpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1")
    return responses.ResponsesAgentThread(client=client, chat_history=reducer, enable_store=False)


def _has_responses_thread() -> bool:
    from importlib.util import find_spec

    from ._common import accepts

    if find_spec("semantic_kernel.agents.open_ai.openai_responses_agent") is None:
        return False
    thread = getattr(requires("semantic_kernel.agents.open_ai.openai_responses_agent", EXTRA), "ResponsesAgentThread", None)
    return thread is not None and accepts(thread, "chat_history") and accepts(thread, "enable_store")


def _reducer_class(module: str, name: str, keywords: tuple[str, ...], invoked_by: str) -> Any:
    """The reducer class, checked for the keywords the adapter passes and, on ``agent_thread`` and
    ``responses_thread_reduce``, SK's agent thread (a release without one cannot be driven)."""
    from ._common import accepts

    if invoked_by.startswith("agent_thread") and not hasattr(requires("semantic_kernel.agents", EXTRA), "ChatHistoryAgentThread"):
        raise cannot_drive(__name__, "semantic-kernel", f"no ChatHistoryAgentThread (invoked_by {invoked_by})")
    if invoked_by == "responses_thread_reduce" and not _has_responses_thread():
        raise cannot_drive(__name__, "semantic-kernel", "no ResponsesAgentThread(chat_history=..., enable_store=...) (invoked_by responses_thread_reduce)")
    cls = getattr(requires(module, EXTRA), name)
    for keyword in keywords:
        if not accepts(cls, keyword) and keyword not in getattr(cls, "model_fields", {}):
            raise cannot_drive(__name__, "semantic-kernel", f"{name} has no {keyword!r}")
    return cls


def _declared(o: dict[str, Any]) -> dict[str, Any]:
    """Both reducers reduce once the history holds more than ``target_count + threshold_count``
    messages ("if len(history) <= self.target_count + (self.threshold_count or 0): return None",
    ``ChatHistoryTruncationReducer.reduce``; the summarization reducer tests the same), on every path
    (SPEC FIRE-1: ``agent_thread`` is where it does not, microsoft/semantic-kernel#12303)."""
    return {**capabilities("in_list", trigger={"messages": o["target_count"] + o["threshold_count"]}), "files": "none"}  # SK sends a BinaryContent as a 'binary' part OpenAI refuses: no PDF in an SK history


@factory
def truncation_reducer(settings: Any, **given: Any) -> Any:
    """``ChatHistoryTruncationReducer(target_count, threshold_count)`` on the path ``invoked_by`` names."""
    o = options(TRUNCATION_DEFAULTS, given)
    cls = _reducer_class(
        "semantic_kernel.contents.history_reducer.chat_history_truncation_reducer", "ChatHistoryTruncationReducer",
        ("target_count", "threshold_count", "auto_reduce"), o["invoked_by"],
    )  # fmt: skip

    def reducer(auto_reduce: bool) -> Any:
        return cls(target_count=o["target_count"], threshold_count=o["threshold_count"], auto_reduce=auto_reduce)

    return make("semantic_kernel.ChatHistoryTruncationReducer", {"core"}, _runner(reducer, o), declared=_declared(o), is_async=True)


@factory
def summarization_reducer(settings: Any, **given: Any) -> Any:
    """``ChatHistorySummarizationReducer`` with ``OpenAIChatCompletion(async_client=settings.async_client)``.

    ``summarizer_window``: the context window, in tokens, of the deployment that service asks (SPEC
    WIN-1), which SK does not know: declared as given, none by default. The reducer sends every
    message it summarizes in one request, unbounded."""
    o = options(SUMMARIZATION_DEFAULTS, given)
    cls = _reducer_class(
        "semantic_kernel.contents.history_reducer.chat_history_summarization_reducer", "ChatHistorySummarizationReducer",
        ("service", "target_count", "threshold_count", "fail_on_error", "use_single_summary", "include_function_content_in_summary", "auto_reduce"), o["invoked_by"],
    )  # fmt: skip
    open_ai = requires("semantic_kernel.connectors.ai.open_ai", EXTRA)
    service = open_ai.OpenAIChatCompletion(ai_model_id=settings.model, async_client=settings.async_client)
    extra = {} if settings.summary_prompt is None else {"summarization_instructions": settings.summary_prompt}

    def reducer(auto_reduce: bool) -> Any:
        return cls(
            service=service,
            target_count=o["target_count"],
            threshold_count=o["threshold_count"],
            fail_on_error=o["fail_on_error"],
            use_single_summary=o["use_single_summary"],
            include_function_content_in_summary=o["include_function_content_in_summary"],
            auto_reduce=auto_reduce,
            **extra,
        )

    profiles = {"core"} | (set() if o["fail_on_error"] else {"failure"})
    declared = _declared(o) | ({} if o["summarizer_window"] is None else {"summarizer_window": o["summarizer_window"]})
    return make("semantic_kernel.ChatHistorySummarizationReducer", profiles, _runner(reducer, o), declared=declared, is_async=True)


# --- the history stored between turns (profile session) ---------------------------------------------------


class _Session:
    """A reducer kept in a file between turns, as SK's sample stores a ``ChatHistory``
    (python/samples/concepts/chat_history/serialize_chat_history.py: ``load_chat_history_from_file`` when a
    turn starts, ``store_chat_history_to_file`` when it ends): profile ``session``, SPEC STORE-13..20.
    Opened on a file that exists, the history is the reducer class's ``load_chat_history_from_file`` (its
    ``restore_chat_history``); else ``fresh()``. ``append`` adds the messages and stores, ``compact`` is the
    caller's ``await history.reduce()`` and stores, ``load`` gives the stored messages as OpenAI dicts."""

    def __init__(self, cls: Any, fresh: Any, path: str) -> None:
        self._path = path
        self._history = cls.load_chat_history_from_file(path) if os.path.exists(path) else fresh()

    def append(self, messages: list[Message]) -> None:
        converted, _ = to_semantic_kernel(messages)
        for message in converted:
            self._history.add_message(message)
        self._history.store_chat_history_to_file(self._path)

    def load(self) -> list[Message]:
        return from_semantic_kernel(list(self._history.messages))

    async def compact(self) -> None:
        await self._history.reduce()
        self._history.store_chat_history_to_file(self._path)


@factory
def history_session(settings: Any, **given: Any) -> Any:
    """A ``ChatHistoryTruncationReducer`` or ``ChatHistorySummarizationReducer`` (``reducer``) stored in a
    file between turns (`_Session`): ``session(path)`` for profile ``session``. The summarization reducer
    asks ``OpenAIChatCompletion(async_client=settings.async_client)``, as `summarization_reducer` does."""
    o = options(SESSION_DEFAULTS, given)
    if o["reducer"] not in ("summarization", "truncation"):
        raise ValueError(f"reducer must be 'summarization' or 'truncation', got {o['reducer']!r}")
    counts = {"target_count": o["target_count"], "threshold_count": o["threshold_count"]}
    if o["reducer"] == "truncation":
        shape = TRUNCATION_DEFAULTS | counts
        cls = _reducer_class("semantic_kernel.contents.history_reducer.chat_history_truncation_reducer", "ChatHistoryTruncationReducer", ("target_count", "threshold_count"), "reduce")
        fresh = lambda auto_reduce=False: cls(**counts, auto_reduce=auto_reduce)  # noqa: E731
    else:
        shape = SUMMARIZATION_DEFAULTS | counts | {"fail_on_error": o["fail_on_error"]}
        cls = _reducer_class("semantic_kernel.contents.history_reducer.chat_history_summarization_reducer", "ChatHistorySummarizationReducer", ("service", "target_count", "fail_on_error"), "reduce")
        service = requires("semantic_kernel.connectors.ai.open_ai", EXTRA).OpenAIChatCompletion(ai_model_id=settings.model, async_client=settings.async_client)
        extra = {} if settings.summary_prompt is None else {"summarization_instructions": settings.summary_prompt}
        fresh = lambda auto_reduce=False: cls(service=service, fail_on_error=o["fail_on_error"], **counts, auto_reduce=auto_reduce, **extra)  # noqa: E731
    if not hasattr(cls, "load_chat_history_from_file"):
        raise cannot_drive(__name__, "semantic-kernel", f"{cls.__name__} has no load_chat_history_from_file")
    declared = {**_declared(shape), "session_appends": "sequential"}  # one turn at a time owns the history, as in SK's sample
    compactor = make(f"semantic_kernel.{cls.__name__}[store_chat_history_to_file]", {"session"}, _runner(fresh, shape), declared=declared, is_async=True)
    compactor.session = lambda path: _Session(cls, fresh, path)
    return compactor
