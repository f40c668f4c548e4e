"""AutoGen (autogen-core) model contexts: ``BufferedChatCompletionContext``,
``TokenLimitedChatCompletionContext``, ``HeadAndTailChatCompletionContext``.

Targets (options from ``$COMPACTION_ADAPTER_OPTIONS``, see ``DEFAULTS``)::

    compaction-suite check compaction_suite.adapters.autogen:buffered
    compaction-suite check compaction_suite.adapters.autogen:token_limited
    compaction-suite check compaction_suite.adapters.autogen:head_and_tail

A model context is a *view*: the adapter adds every message to a fresh context and returns
``await context.get_messages()``, as ``AssistantAgent`` does before each model call (its loop is in
``tests/test_adapter_loops.py`` and ``tests/test_matrix_loops.py``, which prove ``called:
between_rounds`` and ``system_prompt: outside``). Conversion, shapes and claims: ``adapters/README.md``.
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
    cannot_drive,
    capabilities,
    content_back,
    deep,
    factory,
    finish,
    make,
    options,
    originals_by_call,
    requires,
    text_of_parts,
    tool_result_back,
    tool_runs,
)

FRAMEWORK = "AutoGen"
DISTRIBUTIONS = ("autogen-core", "autogen-ext")
EXTRA = "autogen"

SUPPORTED = {"autogen-core": ">=0.4.8,<0.8", "autogen-ext": ">=0.4.8,<0.8"}
"""Releases this adapter drives: 0.4.8 (March 2025, the first whose ``AssistantMessage`` has ``thought``,
where an assistant's text beside its tool calls goes) to 0.7.5 (September 2025, the last release): checked
when a factory starts. 0.4.0-0.4.7 have the rewritten ``autogen_core`` and its model contexts but no
``thought``: every configuration refused them in its one line (`_context`; the sweep ``releases-autogen``
at 0.4.0, 0.4.6 and 0.4.7 with the companions of each release's day), so the floor is 0.4.8, where
``buffered`` and ``head_and_tail`` ran (SPEC Part A, "How far back"). A context the release lacks, or one
without a keyword the adapter passes, is a contract error for that factory (`_context`):
``TokenLimitedChatCompletionContext`` is missing at 0.4.8 and 0.4.9.3, so ``token_limited`` needs 0.5.0."""
RELEASED_TOGETHER = ("autogen-core", "autogen-ext", "autogen-agentchat")
"""Distributions AutoGen releases at one version: a version sweep pins them together."""
SWEEP_INSTALL = ("autogen-core", "autogen-ext[openai]", "autogen-agentchat")
"""What a version sweep installs beside the release (the loop tests need the agent package)."""

DEFAULTS: dict[str, dict[str, Any]] = {
    "buffered": {"buffer_size": 10},
    "token_limited": {"token_limit": 2000},
    "head_and_tail": {"head_size": 2, "tail_size": 8},
}
COMMON = {"system": "agent", "tool_results": "grouped", "loaded_from": None}
"""``loaded_from: "component"``: the declarative path, the context with the history as its ``initial_messages``
serialized by ``dump_component`` to JSON and loaded back by ``load_component`` before it is read (AutoGen
Studio's and a team config's path; `_reloaded`)."""

WHY = {
    "buffered": "core only: a view of the last N messages on every call; no trigger, no summary, no summarizer",
    "token_limited": "core only: a view cut to a token limit (middle messages popped); no iteration trigger, no summarizer",
    "head_and_tail": "core only: first N + 'Skipped k messages.' + last M on every call; no summarizer",
}

CONFIGURATIONS: list[tuple[str, dict[str, Any]]] = [
    ("buffered", {"buffer_size": 4}),
    ("buffered", {"buffer_size": 10}),
    ("buffered", {"buffer_size": 20}),
    ("token_limited", {"token_limit": 500}),
    ("token_limited", {"token_limit": 2000}),
    ("token_limited", {"token_limit": 8000}),
    ("head_and_tail", {"head_size": 2, "tail_size": 8}),
    ("head_and_tail", {"head_size": 1, "tail_size": 4}),
    ("buffered", {"buffer_size": 4, "loaded_from": "component"}),
    ("token_limited", {"token_limit": 500, "loaded_from": "component"}),
    ("head_and_tail", {"head_size": 2, "tail_size": 8, "loaded_from": "component"}),
]
"""What ``compaction-suite matrix`` runs and counts: shapes ``AssistantAgent`` produces."""

OTHER_SHAPES: list[tuple[str, dict[str, Any], str]] = [
    ("buffered", {"buffer_size": 10, "tool_results": "separate"}, "one FunctionExecutionResultMessage per result: AssistantAgent packs a round's results in one"),
    ("buffered", {"buffer_size": 10, "system": "context"}, "a SystemMessage inside the model context: AssistantAgent keeps its system message outside"),
]
"""Shapes AutoGen's agents never produce: checked in a labelled matrix section no headline counts."""


# --- conversion ---------------------------------------------------------------------------------


def to_autogen(messages: list[Message], *, tool_results: str = "grouped") -> tuple[list[Any], Notes]:
    """AutoGen ``LLMMessage`` objects for OpenAI dicts; ``tool_results`` is ``"grouped"`` or ``"separate"``."""
    models = requires("autogen_core.models", EXTRA)
    core = requires("autogen_core", EXTRA)
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
        content = first.get("content")
        created = None
        if role == "tool":
            results = [
                models.FunctionExecutionResult(
                    call_id=str(messages[i].get("tool_call_id")),
                    name=names.get(str(messages[i].get("tool_call_id")), ""),
                    content=messages[i].get("content") if isinstance(messages[i].get("content"), str) else text_of_parts(messages[i].get("content")),
                    is_error=False,
                )
                for i in run
            ]
            out.append(models.FunctionExecutionResultMessage(content=results))
            continue
        if role in ("system", "developer"):
            msg = models.SystemMessage(content=text_of_parts(content))
        elif role == "user":
            if isinstance(content, list):
                created = []
                for part in content:
                    if isinstance(part, dict) and part.get("type") == "image_url":
                        created.append(core.Image.from_uri((part.get("image_url") or {}).get("url", "")))
                    elif isinstance(part, dict) and part.get("type") == "text":
                        created.append(part.get("text", ""))
                    else:
                        raise ValueError(f"content part {part!r} has no AutoGen form here")
                msg = models.UserMessage(content=list(created), source=first.get("name") or "user")
            else:
                msg = models.UserMessage(content=content if content is not None else "", source=first.get("name") or "user")
        elif role == "assistant":
            calls = first.get("tool_calls") or []
            if calls:
                function_calls = [
                    core.FunctionCall(id=str(c.get("id")), arguments=(c.get("function") or {}).get("arguments", ""), name=(c.get("function") or {}).get("name", ""))
                    for c in calls
                ]
                thought = content if isinstance(content, str) or content is None else text_of_parts(content)
                msg = models.AssistantMessage(content=function_calls, thought=thought, source=first.get("name") or "assistant")
            else:
                msg = models.AssistantMessage(content=text_of_parts(content) if content is not None else "", source=first.get("name") or "assistant")
        else:
            raise ValueError(f"role {role!r} has no AutoGen message type here")
        notes.put(id(msg), Note(original=deep(first), created_parts=created), keep=msg)
        out.append(msg)
    return out, notes


def from_autogen(messages: list[Any], notes: Notes | None = None) -> list[Message]:
    """OpenAI dicts for AutoGen messages (a results message with n results gives n dicts)."""
    models = requires("autogen_core.models", EXTRA)
    core = requires("autogen_core", EXTRA)
    notes = notes or Notes()
    shared = notes.get("tool_results")
    by_call = shared.extra["by_call"] if shared else {}
    calls = shared.extra["calls"] if shared else {}
    out: list[Message] = []
    for msg in messages:
        if isinstance(msg, models.FunctionExecutionResultMessage):
            out.extend(tool_result_back(r.call_id, r.content, by_call) for r in msg.content)
            continue
        note = notes.get(id(msg))
        original_role = note.original.get("role") if note else None
        if isinstance(msg, models.SystemMessage):
            role = "developer" if original_role == "developer" else "system"
            d: Message = {"role": role, "content": content_back([PartView("text", msg.content)], note)}
        elif isinstance(msg, models.UserMessage):
            if isinstance(msg.content, str):
                views = [PartView("text", msg.content)]
            else:
                views = [PartView("text", p) if isinstance(p, str) else PartView("image", p.data_uri, p) for p in msg.content]
            d = {"role": "user", "content": content_back(views, note)}
            if msg.source not in ("user", "System") or (note and note.original.get("name") is not None):
                d["name"] = msg.source
        elif isinstance(msg, models.AssistantMessage):
            if isinstance(msg.content, list):
                views = [] if msg.thought is None else [PartView("text", msg.thought)]
                d = {"role": "assistant", "content": content_back(views, note)}
                if msg.thought is None and note is None:
                    d["content"] = None
                d["tool_calls"] = [call_back(c.id, c.name, c.arguments, calls) for c in msg.content if isinstance(c, core.FunctionCall)]
            else:
                d = {"role": "assistant", "content": content_back([PartView("text", msg.content)], note)}
            if msg.source != "assistant":
                d["name"] = msg.source
        else:
            raise ValueError(f"AutoGen message {type(msg).__name__} has no OpenAI form here")
        out.append(finish(d, note))
    return out


# --- factories ------------------------------------------------------------------------------------


def _compactor(name: str, context_of: Any, o: dict[str, Any], estimate: Any = None, trigger: dict[str, Any] | None = None) -> Any:
    """``trigger``: the size past which the context's view drops messages (SPEC FIRE-1, FIRE-2)."""
    if o["system"] not in ("agent", "context"):
        raise ValueError(f"system must be 'agent' or 'context', got {o['system']!r}")
    declared = {**capabilities("outside" if o["system"] == "agent" else "in_list", trigger), "images": "inline", "files": "none"}  # an autogen_core Image is base64 PNG/JPEG bytes: Image.from_uri refuses an https URL; a UserMessage holds no file

    if o["loaded_from"] not in (None, "component"):
        raise ValueError(f"loaded_from must be None or 'component', got {o['loaded_from']!r}")

    async def run(messages: list[Message]) -> list[Message]:
        converted, notes = to_autogen(messages, tool_results=o["tool_results"])
        context = context_of(converted)
        if o["loaded_from"] == "component":
            context = _reloaded(context, converted, notes)
        view = list(await context.get_messages())
        _as_the_client_reads(view)
        return from_autogen(view, notes)

    return make(f"autogen.{name}", {"core"}, run, declared=declared, estimate=estimate, is_async=True)


def _reloaded(context: Any, converted: list[Any], notes: Notes) -> Any:
    """``context`` as a declarative configuration loads it: ``dump_component()`` written as JSON text and
    read back by ``ComponentModel`` and ``ChatCompletionContext.load_component``. Each reloaded initial
    message takes the note of the message it was made from (same place in the list): the round trip
    makes new objects, and what a note restores is a representation, never a change."""
    core = requires("autogen_core", EXTRA)
    base = requires("autogen_core.model_context", EXTRA).ChatCompletionContext
    text = context.dump_component().model_dump_json()
    loaded = base.load_component(core.ComponentModel.model_validate_json(text))
    for before, after in zip(converted, list(getattr(loaded, "_messages", [])), strict=False):
        note = notes.get(id(before))
        if note is not None:
            created = list(after.content) if note.created_parts is not None and isinstance(getattr(after, "content", None), list) else note.created_parts
            notes.put(id(after), Note(original=note.original, created_parts=created), keep=after)
    return loaded


def _as_the_client_reads(view: list[Any]) -> None:
    """Raise what ``AssistantAgent``'s model client raises for an item of the view that is no ``LLMMessage``
    (autogen-ext's ``to_oai_type``: ``ValueError: Unknown message type``), as it does when the agent sends
    the view: a context whose ``get_messages`` returns anything else crashes the agent's next model call."""
    models = requires("autogen_core.models", EXTRA)
    kinds = (models.SystemMessage, models.UserMessage, models.AssistantMessage, models.FunctionExecutionResultMessage)
    for n, item in enumerate(view):
        if not isinstance(item, kinds):
            openai_client = requires("autogen_ext.models.openai._openai_client", EXTRA)
            openai_client.to_oai_type(item)  # the client's own error
            raise ValueError(f"get_messages() item {n} is a {type(item).__name__}, not an LLMMessage")


def _context(name: str, *keywords: str) -> Any:
    """The model context class ``name``, checked for the keywords the adapter passes (a release without the
    class or one of them cannot be driven: a contract error)."""
    from ._common import accepts

    cls = getattr(requires("autogen_core.model_context", EXTRA), name, None)
    if cls is None:
        raise cannot_drive(__name__, "autogen-core", f"autogen_core.model_context has no {name}")
    if "thought" not in getattr(requires("autogen_core.models", EXTRA).AssistantMessage, "model_fields", {"thought": None}):
        # 0.4.0-0.4.7 (below SUPPORTED): an assistant's text beside its tool calls has nowhere to go (to_autogen keeps it as ``thought``)
        raise cannot_drive(__name__, "autogen-core", "autogen_core.models.AssistantMessage has no 'thought' for the text beside its tool calls")
    for keyword in keywords:
        if not accepts(cls, keyword):
            raise cannot_drive(__name__, "autogen-core", f"{name} takes no {keyword!r}")
    return cls


@factory
def buffered(settings: Any, **given: Any) -> Any:
    o = options(DEFAULTS["buffered"] | COMMON, given)
    cls = _context("BufferedChatCompletionContext", "buffer_size", "initial_messages")
    return _compactor(
        "BufferedChatCompletionContext",
        lambda messages: cls(buffer_size=o["buffer_size"], initial_messages=messages),
        o,
        trigger={"messages": o["buffer_size"]},  # "only the last buffer_size messages" are returned
    )


@factory
def head_and_tail(settings: Any, **given: Any) -> Any:
    o = options(DEFAULTS["head_and_tail"] | COMMON, given)
    cls = _context("HeadAndTailChatCompletionContext", "head_size", "tail_size", "initial_messages")
    return _compactor(
        "HeadAndTailChatCompletionContext",
        lambda messages: cls(head_size=o["head_size"], tail_size=o["tail_size"], initial_messages=messages),
        o,
        trigger={"messages": o["head_size"] + o["tail_size"]},  # all messages while they fit head and tail
    )


MODEL_INFO = {"vision": True, "function_calling": True, "json_output": False, "family": "unknown", "structured_output": False}


@factory
def token_limited(settings: Any, **given: Any) -> Any:
    """``TokenLimitedChatCompletionContext`` counting with autogen-ext's ``OpenAIChatCompletionClient``
    (tiktoken; an unknown model falls back to ``cl100k_base``, installed offline by ``compaction_suite.bpe``)."""
    o = options(DEFAULTS["token_limited"] | COMMON, given)
    cls = _context("TokenLimitedChatCompletionContext", "model_client", "token_limit", "initial_messages")
    client_class = requires("autogen_ext.models.openai", EXTRA).OpenAIChatCompletionClient
    from compaction_suite import bpe

    bpe.install("cl100k_base")
    bpe.install("o200k_base")
    client = client_class(model=settings.model, base_url=settings.base_url, api_key=settings.api_key, model_info=MODEL_INFO, max_retries=0)

    def estimate(messages: list[Message]) -> int:
        return int(client.count_tokens(to_autogen(messages, tool_results=o["tool_results"])[0]))

    return _compactor(
        "TokenLimitedChatCompletionContext",
        lambda messages: cls(client, token_limit=o["token_limit"], initial_messages=messages),
        o,
        estimate,
        _token_trigger(settings.model, o["token_limit"]),
    )


def _token_trigger(model: str, limit: int) -> dict[str, Any] | None:
    """The context pops messages while ``client.count_tokens`` exceeds ``token_limit``; the client counts
    with tiktoken's encoding for ``model`` (``cl100k_base`` for one tiktoken does not know). None where
    that encoding is not one the suite counts exactly (`compaction_suite.text.ENCODINGS`)."""
    import tiktoken

    from compaction_suite.text import ENCODINGS

    try:
        name = tiktoken.encoding_for_model(model).name
    except KeyError:
        name = "cl100k_base"
    return {"tokens": limit, "tokenizer": name} if name in ENCODINGS else None
