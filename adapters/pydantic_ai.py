"""Pydantic AI: the compaction capabilities of ``pydantic-ai-harness``, on ``pydantic-ai`` messages.

What runs offline and what does not (checked in the installed sources):

* ``pydantic-ai`` itself ships only *provider-native* compaction: ``OpenAICompaction``
  (server-side ``context_management`` on the Responses API, or the stateless
  ``/responses/compact`` endpoint, returning an *encrypted* ``CompactionPart``) and
  ``AnthropicCompaction`` (Anthropic's API). Neither can run against the suite's summarizer,
  a chat-completions test double, and the encrypted item has no chat-message form to check:
  **not adapted**. Its ``history_processors`` hook is a mechanism for the user's own function,
  not a compactor.
* ``pydantic-ai-harness`` ("the official capability library and harness for Pydantic AI")
  ships model-agnostic strategies as capabilities that edit the history in
  ``before_model_request``: ``SlidingWindowCompaction``, ``ClearToolResults`` and
  ``SummarizingCompaction`` are adapted here, run exactly as an agent runs them
  (``await capability.before_model_request(run_context, request_context)``, the result in
  ``run_context.messages``), the summarizer an ``OpenAIChatModel`` on ``settings.async_client``.

Targets::

    compaction-suite check compaction_suite.adapters.pydantic_ai:sliding_window
    compaction-suite check compaction_suite.adapters.pydantic_ai:clear_tool_results
    compaction-suite check compaction_suite.adapters.pydantic_ai:summarizing

Conversion (OpenAI dict <-> ``ModelMessage``): each dict is one *part*. ``system`` and
``developer`` are ``SystemPromptPart`` (which role a system prompt is sent with is a model
profile setting in pydantic-ai, so the note keeps ``developer``); ``user`` is
``UserPromptPart`` (a string, or a list of strings and ``BinaryContent.from_data_uri`` images
with ``vendor_metadata={"detail": ...}``, as pydantic-ai's OpenAI model sends ``detail``);
``assistant`` is a ``ModelResponse`` of a ``TextPart`` and ``ToolCallPart(tool_name,
args=<the JSON string>, tool_call_id)``; ``tool`` is ``ToolReturnPart(tool_name,
content, tool_call_id)``. Requests are grouped as pydantic-ai records them by default
(``"tool_results": "grouped"``): the leading system prompts and the first user prompt in
one ``ModelRequest``, and **a round's parallel tool results in one ``ModelRequest``**;
``"separate"`` gives every part its own ``ModelRequest``, splitting the system prompt from
the first user prompt it is stored with: a shape pydantic-ai never records, run only in
``OTHER_SHAPES``, a labelled matrix section that no headline counts. Back: a part the
capability kept (the same object) is its original dict; a part or message the capability
made (a summary ``CompactionPart``, a cleared tool result) is rendered by pydantic-ai's own
``OpenAIChatModel._map_messages``, i.e. exactly what pydantic-ai would send.

Declared capabilities (SPEC Part A): ``called: between_rounds``, proven by
``tests/test_adapter_loops.py`` with ``Agent(capabilities=[...])``'s own loop and
pydantic-ai's ``FunctionModel``: ``before_model_request`` runs after the round's
``ToolReturnPart``s were recorded. ``system_prompt: leading``: ``Agent(system_prompt=...)``
and its ``@agent.system_prompt`` functions store their ``SystemPromptPart``s in the first
``ModelRequest`` with the first user prompt, the history the capabilities see, and never later
in a run or when the history is passed back (``instructions=`` stay outside; the loop test
shows all three).

Profiles claimed, and why (the matrix shows them): each claims ``core`` only. Triggers are
message/token counts, never iterations (not ``trigger``); ``SummarizingCompaction``'s summary
is a ``CompactionPart`` sent as framed user text, keeping N messages (not ``summary``), and a
summarizer error propagates (the harness offers ``FallbackCompaction`` to fall back to a
truncation, which changes the history: not ``failure``); no ``last_event`` (not ``events``).
"""

from __future__ import annotations

from typing import Any

from ._common import Message, Note, Notes, call_names, capabilities, deep, make, options, requires, text_of_parts, tool_text

FRAMEWORK = "Pydantic AI"
DISTRIBUTIONS = ("pydantic-ai-slim", "pydantic-ai-harness")
EXTRA = "pydantic-ai"

DEFAULTS: dict[str, dict[str, Any]] = {
    "sliding_window": {"max_messages": 20, "max_tokens": None, "keep_messages": 10, "preserve_first_user_message": True},
    "clear_tool_results": {"max_messages": None, "max_tokens": 1000, "keep_pairs": 3},
    "summarizing": {"max_messages": 20, "max_tokens": None, "keep_messages": 10, "preserve_first_user_message": True},
}
COMMON = {"tool_results": "grouped"}

NOT_ADAPTED = (
    "pydantic-ai's own OpenAICompaction (OpenAI Responses server-side compaction or /responses/compact, an "
    "encrypted CompactionPart) and AnthropicCompaction (Anthropic API) cannot run against the suite's "
    "chat-completions test double offline; history_processors is a hook for user code, not a compactor"
)

WHY = {
    "sliding_window": "core only: message/token trigger (no iteration trigger); drops the oldest messages, no summarizer",
    "clear_tool_results": "core only: blanks old tool results in place (a masked result, CORE-4); token/message trigger",
    "summarizing": (
        "core only: summary is a CompactionPart sent as framed user text keeping N messages (not [Context Summary] + "
        "K rounds); summarizer errors propagate; message/token trigger"
    ),
}

CONFIGURATIONS: list[tuple[str, dict[str, Any]]] = [
    ("sliding_window", {"max_messages": 8, "keep_messages": 4}),
    ("sliding_window", {"max_messages": 20, "keep_messages": 10}),
    ("sliding_window", {"max_messages": 8, "keep_messages": 4, "preserve_first_user_message": False}),
    ("clear_tool_results", {"max_tokens": 500, "keep_pairs": 1}),
    ("clear_tool_results", {"max_tokens": 2000, "keep_pairs": 3}),
    ("summarizing", {"max_messages": 8, "keep_messages": 4}),
    ("summarizing", {"max_messages": 20, "keep_messages": 10}),
]
"""What ``compaction-suite matrix`` runs and counts: histories as pydantic-ai records them."""

OTHER_SHAPES: list[tuple[str, dict[str, Any], str]] = [
    ("sliding_window", {"max_messages": 20, "keep_messages": 10, "tool_results": "separate"}, "every part its own ModelRequest: pydantic-ai stores the system prompt with the first user prompt and a round's results together"),
]
"""Shapes pydantic-ai never records: checked in a labelled matrix section no headline counts."""


# --- conversion ---------------------------------------------------------------------------------


def _user_content(pm: Any, content: Any) -> Any:
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
                item = pm.BinaryContent.from_data_uri(url)
                item.vendor_metadata = meta
            else:
                item = pm.ImageUrl(url=url, vendor_metadata=meta)
            items.append(item)
        else:
            raise ValueError(f"content part {part!r} has no pydantic-ai form here")
    return items


def to_pydantic_ai(messages: list[Message], *, tool_results: str = "grouped") -> tuple[list[Any], Notes]:
    """pydantic-ai ``ModelMessage`` objects for OpenAI dicts; ``tool_results`` is ``"grouped"`` or ``"separate"``."""
    pm = requires("pydantic_ai.messages", EXTRA)
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
        if tool_results == "separate":
            flush()
    flush()
    return out, notes


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


def _compactor(name: str, capability_of: Any, settings: Any, tool_results: str) -> Any:
    models = requires("pydantic_ai.models", EXTRA)
    tools = requires("pydantic_ai.tools", EXTRA)
    usage = requires("pydantic_ai.usage", EXTRA)
    model = _offline_model(settings.async_client, settings.model)

    async def run(messages: list[Message]) -> list[Message]:
        converted, notes = to_pydantic_ai(messages, tool_results=tool_results)
        ctx = tools.RunContext(deps=None, model=model, usage=usage.RunUsage(), messages=list(converted))
        request = models.ModelRequestContext(model=model, messages=list(converted), model_settings=None, model_request_parameters=models.ModelRequestParameters())
        await capability_of(model).before_model_request(ctx, request)
        return await _back(list(ctx.messages), notes, model)

    return make(f"pydantic_ai_harness.{name}", {"core"}, run, declared=capabilities("leading"), is_async=True)


async def _back(messages: list[Any], notes: Notes, model: Any) -> list[Message]:
    """`from_pydantic_ai` inside the running loop (renders new parts with ``await``)."""
    import json

    pm = requires("pydantic_ai.messages", EXTRA)
    models = requires("pydantic_ai.models", EXTRA)
    out: list[Message] = []

    async def render(message: Any) -> list[Message]:
        mapped = await model._map_messages([message], models.ModelRequestParameters())
        return [json.loads(json.dumps(dict(m), default=str)) for m in mapped]

    for msg in messages:
        if isinstance(msg, pm.ModelResponse):
            note = notes.get(id(msg))
            if note is not None and len(note.extra["parts"]) == len(msg.parts) and all(a is b for a, b in zip(note.extra["parts"], msg.parts, strict=True)):
                out.append(deep(note.original))
            else:
                out.extend(await render(msg))
            continue
        for part in msg.parts:
            note = notes.get(id(part))
            out.extend([deep(note.original)] if note is not None else await render(pm.ModelRequest(parts=[part])))
    return out


def sliding_window(settings: Any, **given: Any) -> Any:
    o = options(DEFAULTS["sliding_window"] | COMMON, given)
    compaction = requires("pydantic_ai_harness.compaction", EXTRA)

    def capability(model: Any) -> Any:
        return compaction.SlidingWindowCompaction(
            max_messages=o["max_messages"], max_tokens=o["max_tokens"], keep_messages=o["keep_messages"],
            preserve_first_user_message=o["preserve_first_user_message"],
        )  # fmt: skip

    return _compactor("SlidingWindowCompaction", capability, settings, o["tool_results"])


def clear_tool_results(settings: Any, **given: Any) -> Any:
    o = options(DEFAULTS["clear_tool_results"] | COMMON, given)
    compaction = requires("pydantic_ai_harness.compaction", EXTRA)

    def capability(model: Any) -> Any:
        return compaction.ClearToolResults(max_messages=o["max_messages"], max_tokens=o["max_tokens"], keep_pairs=o["keep_pairs"])

    return _compactor("ClearToolResults", capability, settings, o["tool_results"])


def summarizing(settings: Any, **given: Any) -> Any:
    o = options(DEFAULTS["summarizing"] | COMMON, given)
    compaction = requires("pydantic_ai_harness.compaction", EXTRA)

    def capability(model: Any) -> Any:
        return compaction.SummarizingCompaction(
            model=model, max_messages=o["max_messages"], max_tokens=o["max_tokens"], keep_messages=o["keep_messages"],
            preserve_first_user_message=o["preserve_first_user_message"],
        )  # fmt: skip

    return _compactor("SummarizingCompaction", capability, settings, o["tool_results"])
