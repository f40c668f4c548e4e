"""LangChain: ``trim_messages``, ``SummarizationMiddleware`` and ``ContextEditingMiddleware(ClearToolUsesEdit)``.

Targets (options in ``$COMPACTION_ADAPTER_OPTIONS``; research, conversion and declarations in
``adapters/README.md``)::

    compaction-suite check compaction_suite.adapters.langchain:trim_messages
    compaction-suite check compaction_suite.adapters.langchain:summarization_middleware
    compaction-suite check compaction_suite.adapters.langchain:context_editing
    compaction-suite check compaction_suite.adapters.langchain:langmem_summarization

Conversion follows ``langchain_openai``'s own (one ``ToolMessage`` per result; ``developer`` as a
``SystemMessage`` marked ``__openai_role__``); every message gets ``id = "oai-<index>"`` and its note
is found by that id. ``tool_messages: "native"`` gives each ``ToolMessage`` what LangChain's tool node
records beside the content the model sees (an ``artifact``; ``status="error"`` for its error text).
``format: "anthropic-messages"`` (every path) is an agent on ``ChatAnthropic``: the suite's Anthropic
histories drawn as ``ChatAnthropic`` stores them (``AIMessage`` content blocks with ``thinking``,
``redacted_thinking``, ``text``, ``tool_use`` and ``tool_calls``; a ``ToolMessage`` per ``tool_result``)
and sent back as ``langchain-anthropic`` sends them (``adapters/_langchain_anthropic.py``), the summarizer
``ChatAnthropic`` on the suite's ``/v1/messages`` (``tests/test_langchain_anthropic_loop.py``).
The middleware run where ``create_agent`` runs them: ``before_model`` (summarization) and
``wrap_model_call`` (context editing), proven by ``tests/test_adapter_loops.py`` and
``tests/test_langchain_paths.py``.
"""

from __future__ import annotations

from typing import Any

from . import _langchain_blocks as blocks
from ._common import (
    CannotDrive,
    Message,
    Note,
    Notes,
    arguments_text,
    capabilities,
    deep,
    factory,
    finish,
    make,
    options,
    parse_arguments,
    release,
    requires,
    text_of_parts,
)

FRAMEWORK = "LangChain"
SUPPORTED: dict[str, str] = {"langchain": ">=0.3,<2", "langchain-core": ">=0.3,<2", "langchain-openai": ">=0.3,<2"}
"""Agreed interface 3: the 0.3 line (September 2024 on, still run after 1.0) and the 1.x releases.
``trim_messages`` runs on both; the middleware arrived in langchain 1.0, so below it
``summarization_middleware`` and ``context_editing`` are a contract error (`CannotDrive`), as is the
``approximate`` counter on a core without ``count_tokens_approximately``. Releases whose
``SummarizationMiddleware`` takes ``max_tokens_before_summary``/``messages_to_keep`` run the token-trigger,
message-keep configurations and refuse the others (`CannotDrive`)."""
SUPPORTED_BY_PATH: dict[str, dict[str, str]] = {"langmem_summarization": {**SUPPORTED, "langmem": ">=0.0.25,<0.1"}}
"""langmem's ``SummarizationNode`` (``adapters/_langmem.py``): from 0.0.25 (April 2025), the release whose
``summarize_messages`` guarantees the summary and the remaining messages fit ``max_tokens``, to 0.0.30
(October 2025), the newest."""
DISTRIBUTIONS = ("langchain-core", "langchain", "langchain-openai", "langchain-anthropic")
SWEEP_INSTALL_BY_PATH: dict[str, tuple[str, ...]] = {"langmem_summarization": (*DISTRIBUTIONS, "langmem")}
"""``langchain-anthropic`` for ``format: anthropic-messages`` (``ChatAnthropic``'s conversion), not in
``SUPPORTED``: the chat-completions configurations run without it; an anthropic one without it fails
to start, naming the extra."""
EXTRA = "langchain"


def sweep_install(factory: str, options: dict[str, Any]) -> tuple[str, ...]:
    """What a version sweep installs for one configuration: ``SWEEP_INSTALL_BY_PATH`` for its factory (else
    `DISTRIBUTIONS`), with ``langchain-aws`` where the summarizer is ``ChatBedrockConverse``
    (``summarizer: "bedrock"``, `_langchain_models.bedrock_converse`)."""
    installs = SWEEP_INSTALL_BY_PATH.get(factory, DISTRIBUTIONS)
    return (*installs, "langchain-aws") if options.get("summarizer") == "bedrock" else installs


TRIM_DEFAULTS: dict[str, Any] = {
    "max_tokens": 1024,
    "token_counter": "approximate",  # "approximate" (count_tokens_approximately), "len" (count messages) or "model" (the agent's chat model)
    "strategy": "last",
    "start_on": "human",
    "end_on": ["human", "tool"],
    "include_system": True,
    "allow_partial": False,
    "system": "agent",  # "agent": create_agent's system_prompt (outside); "state": a SystemMessage in the state
    "tool_messages": "plain",
    "format": "chat-completions",  # or "anthropic-messages": the agent's model is ChatAnthropic
    "counter_model": None,  # token_counter "model" on chat-completions: ChatOpenAI's model name (None: the suite's model)
    "path": "direct",  # "direct": trim_messages on the history; "hook": create_react_agent's pre_model_hook replaying it (SPEC FIRE-7)
    "window": 8000,  # path "hook": the agent model's context window, its double's
}
"""LangChain's documented recipe for chat models (strategy last, start on a human message,
end on a human or tool message, keep the system message). ``counter_model``: the model the agent runs,
whose ``ChatOpenAI`` counts the tokens with ``token_counter: "model"`` (each model family its own
encoding and message framing, langchain-openai's ``get_num_tokens_from_messages``)."""

SUMMARIZATION_DEFAULTS: dict[str, Any] = {
    "trigger_tokens": 4000,
    "trigger_messages": None,
    "keep_messages": 20,
    "keep_tokens": None,
    "trim_tokens_to_summarize": 4000,
    "system": "agent",  # "agent": create_agent's system_prompt (outside); "state": a SystemMessage in the state
    "tool_messages": "plain",
    "format": "chat-completions",  # or "anthropic-messages": the agent's model (and summarizer) ChatAnthropic
    "path": "state",  # "state": before_model on the state; "agent": create_agent replaying the history (SPEC FIRE-7)
    "trigger_fraction": None,  # path "agent": trigger=("fraction", f) of the model's max_input_tokens
    "window": 8000,  # path "agent": the model's max_input_tokens (its profile), the double's window
    "tools": 0,  # path "agent": tools the agent offers beside those the history calls
    "system_prompt_tokens": 0,  # path "agent": the size of create_agent's system_prompt (chars/4)
    "tokens_per_image": None,  # None: the middleware's own counter; N: count_tokens_approximately(tokens_per_image=N)
    "summarizer_window": None,  # None: the agent's model writes the summary; N: summarizer= a chat model of its own whose window is N (langchain 1.4.5 on)
}
"""``SummarizationMiddleware``'s defaults (keep 20 messages, trim 4000 tokens for the summary
call) with a token trigger, since it has no default trigger. ``path: "agent"`` replays the history
through ``create_agent`` with a system prompt and tools beside it (``adapters/_langchain_replay.py``),
the middleware's trigger a fraction of the model's window, and declares that window
(``request_window``, SPEC FIRE-7). ``tokens_per_image``: the ``token_counter`` a user passes to count each
image as N tokens (``count_tokens_approximately``'s own default is 85, what OpenAI counts a low-detail
image; a 1280x800 screenshot is 1,105 at its default detail). ``summarizer_window``: the middleware's
``summarizer=`` (langchain 1.4.5 on), documented as "Use this to summarize with a different model than the
one whose context window you're managing": a ``ChatOpenAI`` of its own on the suite's summarizer whose
profile says a window of N tokens, declared (``summarizer_window``, SPEC WIN-1), so that a summary prompt over
it meets the provider's ``context_length_exceeded`` and the middleware's retry with the middle of the
history cut out (``_overflow_retry_prompt``, langchain 1.4.4 on)."""

SUMMARIZER_FLOOR = (1, 4, 5)
"""The first langchain whose ``SummarizationMiddleware`` takes ``summarizer=`` (1.4.5, October 2026; its
retry of an overflowing summary prompt with the middle cut arrived in 1.4.4)."""

CONTEXT_EDITING_DEFAULTS: dict[str, Any] = {
    "trigger": 1000,
    "keep": 3,
    "clear_at_least": 0,
    "clear_tool_inputs": False,
    "placeholder": "[cleared]",
    "system": "agent",
    "tool_messages": "plain",
    "format": "chat-completions",  # or "anthropic-messages": the agent's model is ChatAnthropic
}
"""``ClearToolUsesEdit``'s knobs (its default trigger, 100,000 tokens, never fires on the suite's histories)."""

NOT_ADAPTED = (
    "deepagents' own SummarizationMiddleware (create_deep_agent since deepagents 0.4: wrap_model_call with backend "
    "offload) is adapters/deepagents.py's; deepagents#270 itself was in langchain's SummarizationMiddleware, adapted here; "
    "ContextEditingMiddleware edits other than ClearToolUsesEdit (none ship)"
)

DOCUMENTED: list[dict[str, Any]] = [
    {
        "factory": "summarization_middleware", "clause": "CORE-10", "options": {},
        "quote": "If a summary call still fails, the underlying error propagates rather than fabricating a summary.",
        "source": "langchain 1.5.2, langchain/agents/middleware/summarization.py (SummarizationMiddleware docstring; since langchain#39268)",
    },
]  # fmt: skip
"""Agreed interface 4 (plain dicts of the ``Documented`` keys until ``_common.Documented`` lands)."""

WHY = {
    "trim_messages": "core only: a view trimmed to max_tokens on every call; no trigger, no summary, no summarizer, no event",
    "summarization_middleware": (
        "core only: token/message trigger (no iteration trigger); summary is a 'Here is a summary of the "
        "conversation to date:' HumanMessage keeping N messages (not [Context Summary] + K rounds); "
        "summarizer errors propagate by design; no event"
    ),
    "context_editing": (
        "core only: clears old tool results (and optionally their calls' arguments) to a placeholder above a token "
        "trigger, on the model request only (a masked result, CORE-4); no summarizer, no event"
    ),
    "langmem_summarization": (
        "core only: langmem's SummarizationNode as create_react_agent's pre_model_hook: a token trigger; the older "
        "messages replaced by a 'Summary of the conversation so far:' system message in the model's input only; no event"
    ),
}

CONFIGURATIONS: list[tuple[str, dict[str, Any]]] = [
    ("trim_messages", {"max_tokens": 256}),
    ("trim_messages", {"max_tokens": 1024}),
    ("trim_messages", {"max_tokens": 4096}),
    ("trim_messages", {"token_counter": "len", "max_tokens": 6}),
    ("trim_messages", {"token_counter": "len", "max_tokens": 12}),
    ("trim_messages", {"max_tokens": 1024, "allow_partial": True}),
    ("trim_messages", {"max_tokens": 1024, "strategy": "first", "start_on": None, "end_on": None}),
    ("trim_messages", {"max_tokens": 1024, "start_on": None, "end_on": None, "include_system": False}),
    ("summarization_middleware", {"trigger_tokens": 500, "keep_messages": 6}),
    ("summarization_middleware", {"trigger_tokens": 2000, "keep_messages": 20}),
    ("summarization_middleware", {"trigger_messages": 12, "trigger_tokens": None, "keep_messages": 6}),
    ("summarization_middleware", {"trigger_tokens": None}),
    ("summarization_middleware", {"trigger_tokens": 500, "keep_messages": 6, "system": "state"}),
    ("summarization_middleware", {"trigger_tokens": 500, "keep_messages": 6, "tool_messages": "native"}),
    ("summarization_middleware", {"trigger_tokens": 500, "keep_messages": 6, "summarizer_window": 2000}),
    ("context_editing", {"trigger": 500, "keep": 1}),
    ("context_editing", {"trigger": 1000, "keep": 3, "clear_tool_inputs": True}),
    ("context_editing", {"trigger": 500, "keep": 1, "tool_messages": "native"}),
    ("trim_messages", {"max_tokens": 1024, "format": "anthropic-messages"}),
    ("trim_messages", {"max_tokens": 1024, "format": "anthropic-messages", "token_counter": "model"}),
    ("summarization_middleware", {"trigger_tokens": 500, "keep_messages": 6, "format": "anthropic-messages"}),
    ("summarization_middleware", {"trigger_tokens": 2000, "keep_messages": 20, "format": "anthropic-messages"}),
    ("context_editing", {"trigger": 500, "keep": 1, "format": "anthropic-messages"}),
    ("trim_messages", {"path": "hook"}),
    ("langmem_summarization", {}),
    ("langmem_summarization", {"max_tokens": 4096, "max_tokens_before_summary": 2048, "system": "state"}),
    ("langmem_summarization", {"summarizer": "bedrock"}),
]
"""What ``compaction-suite matrix`` runs: (factory, options) pairs over the size parameters."""


# --- conversion ---------------------------------------------------------------------------------


ERROR_PREFIXES = ("Error: ", "Error executing tool ")
"""How LangGraph's ``ToolNode`` words an invalid call and a tool's exception (``TOOL_CALL_ERROR_TEMPLATE``,
``TOOL_EXECUTION_ERROR_TEMPLATE`` in ``langgraph/prebuilt/tool_node.py``) in the ``ToolMessage`` it records
with ``status="error"`` when it handles tool errors."""


def to_langchain(messages: list[Message], *, tool_messages: str = "plain") -> tuple[list[Any], Notes]:
    """LangChain messages for OpenAI dicts, and the notes to convert them back exactly.

    ``tool_messages="native"``: each ``ToolMessage`` also carries an ``artifact`` (the raw output a
    ``response_format="content_and_artifact"`` tool returns beside its content) and, when its text is
    the tool node's error wording, ``status="error"``; neither is sent to the model."""
    if tool_messages not in ("plain", "native"):
        raise ValueError(f"tool_messages must be 'plain' or 'native', got {tool_messages!r}")
    lc = requires("langchain_core.messages", EXTRA)
    notes = Notes()
    out: list[Any] = []
    results = 0
    for i, m in enumerate(messages):
        mid = f"oai-{i}"
        role = m.get("role")
        common: dict[str, Any] = {"id": mid}
        if m.get("name") is not None:
            common["name"] = m["name"]
        content = m.get("content")
        if role in ("system", "developer"):
            extra = {"__openai_role__": "developer"} if role == "developer" else {}
            msg = lc.SystemMessage(content=deep(content) if content is not None else "", additional_kwargs=extra, **common)
        elif role == "user":
            msg = lc.HumanMessage(content=deep(content) if content is not None else "", **common)
        elif role == "assistant":
            calls, invalid = [], []
            for call in m.get("tool_calls") or []:
                function = call.get("function") or {}
                raw = function.get("arguments")
                args = parse_arguments(raw)
                if isinstance(args, dict):
                    calls.append({"id": call.get("id"), "name": function.get("name"), "args": args, "type": "tool_call"})
                else:
                    invalid.append(
                        {
                            "id": call.get("id"),
                            "name": function.get("name"),
                            "args": raw,
                            "error": "arguments are not a JSON object",
                            "type": "invalid_tool_call",
                        }
                    )
            msg = lc.AIMessage(content=deep(content) if content is not None else "", tool_calls=calls, invalid_tool_calls=invalid, **common)
        elif role == "tool":
            native: dict[str, Any] = {}
            if tool_messages == "native":
                text = text_of_parts(content)
                native = {"artifact": {"raw": text}, "status": "error" if text.startswith(ERROR_PREFIXES) else "success"}
            msg = lc.ToolMessage(
                content=blocks.held(deep(content), results) if content is not None else "", tool_call_id=m.get("tool_call_id"), **native, **common
            )
            results += 1
        else:
            raise ValueError(f"message {i}: role {role!r} has no LangChain message type here")
        notes.put(mid, Note(original=deep(m)))
        out.append(msg)
    return out, notes


def from_langchain(messages: list[Any], notes: Notes | None = None) -> list[Message]:
    """OpenAI dicts for LangChain messages (a ``RemoveMessage`` is skipped)."""
    lc = requires("langchain_core.messages", EXTRA)
    notes = notes or Notes()
    out: list[Message] = []
    for msg in messages:
        if isinstance(msg, lc.RemoveMessage):
            continue
        note = notes.get(msg.id)
        content = deep(msg.content)
        if isinstance(msg, lc.SystemMessage):
            role = "developer" if msg.additional_kwargs.get("__openai_role__") == "developer" else "system"
            d: Message = {"role": role, "content": content}
        elif isinstance(msg, lc.HumanMessage):
            d = {"role": "user", "content": content}
        elif isinstance(msg, lc.AIMessage):
            d = {"role": "assistant", "content": content}
            calls = _calls_back(msg, note)
            if calls:
                d["tool_calls"] = calls
                if content == "" and note is None:
                    d["content"] = None  # as langchain_openai sends it
        elif isinstance(msg, lc.ToolMessage):
            d = {"role": "tool", "tool_call_id": msg.tool_call_id, "content": blocks.given_back(content, note.original.get("content") if note else None)}
        else:
            d = {"role": getattr(msg, "role", msg.type), "content": content}
        if msg.name is not None:
            d["name"] = msg.name
        out.append(finish(d, note))
    return out


def _calls_back(msg: Any, note: Note | None) -> list[dict[str, Any]]:
    originals = {c.get("id"): c for c in (note.original.get("tool_calls") or [])} if note else {}
    found: list[dict[str, Any]] = []
    for call in msg.tool_calls:
        original = originals.get(call["id"])
        raw = ((original or {}).get("function") or {}).get("arguments")
        found.append(_call(original, call["id"], call["name"], arguments_text(call["args"], raw)))
    for call in msg.invalid_tool_calls:
        found.append(_call(originals.get(call.get("id")), call.get("id"), call.get("name"), call.get("args") or ""))
    order = [c.get("id") for c in (note.original.get("tool_calls") or [])] if note else []
    if sorted(map(str, order)) == sorted(str(c["id"]) for c in found):
        found.sort(key=lambda c: order.index(c["id"]))
    return found


def _call(original: dict[str, Any] | None, call_id: Any, name: Any, arguments: str) -> dict[str, Any]:
    function = (original or {}).get("function") or {}
    if original is not None and function.get("name") == name and function.get("arguments") == arguments:
        return deep(original)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


CHAT, ANTHROPIC, RESPONSES = "chat-completions", "anthropic-messages", "responses"
FORMATS = (CHAT, ANTHROPIC, RESPONSES)
"""The ``format`` option: the history an agent on ``ChatOpenAI`` keeps (``to_langchain``), one on
``ChatAnthropic`` (``_langchain_anthropic``: ``AIMessage`` content blocks with thinking and
``tool_use``, ``ToolMessage`` per ``tool_result``, sent back as ``langchain-anthropic`` sends it), or
one on ``ChatOpenAI(use_responses_api=True, output_version="responses/v1")`` (``_langchain_responses``:
``AIMessage`` Responses blocks with ``reasoning`` and ``function_call``, user content in Responses parts,
sent back as ``langchain-openai`` sends it)."""


def _format(o: dict[str, Any]) -> str:
    if o["format"] not in FORMATS:
        raise ValueError(f"format must be one of {list(FORMATS)}, got {o['format']!r}")
    return str(o["format"])


def _anthropic() -> Any:
    from . import _langchain_anthropic

    requires("langchain_anthropic", EXTRA)
    return _langchain_anthropic


def compacting(o: dict[str, Any], compact: Any) -> Any:
    """The adapter's ``run`` for the configuration's ``format``: the history as the LangChain messages
    the agent holds, ``compact`` (LangChain messages in, LangChain messages out) on them, and back as
    the model is sent them."""
    if _format(o) == RESPONSES:
        return _responses_run(compact)
    if _format(o) == ANTHROPIC:
        anthropic = _anthropic()
        model = anthropic.chat_anthropic()

        def run_anthropic(request: dict[str, Any]) -> dict[str, Any]:
            conversion = anthropic.to_langchain(
                request, system_in_state=o.get("system") == "state", tool_messages=o["tool_messages"], model=model
            )
            return anthropic.from_langchain(conversion, compact(conversion.messages), model=model)

        return run_anthropic

    def run(messages: list[Message]) -> list[Message]:
        converted, notes = to_langchain(messages, tool_messages=o["tool_messages"])
        return from_langchain(compact(converted), notes)

    return run


def _responses_run(compact: Any) -> Any:
    """``compacting``'s run for ``format: responses``: the items as the LangChain messages an agent on
    ``ChatOpenAI``'s Responses API holds, and back as ``langchain-openai`` sends them."""
    from . import _langchain_responses

    def run_responses(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        conversion = _langchain_responses.to_langchain(items)
        return _langchain_responses.from_langchain(conversion, compact(conversion.messages))

    return run_responses


def langchain_messages(o: dict[str, Any], history: Any) -> list[Any]:
    """The LangChain messages the agent holds for ``history`` in the configuration's ``format``."""
    if _format(o) == RESPONSES:
        from . import _langchain_responses

        return _langchain_responses.to_langchain(history).messages
    if _format(o) == ANTHROPIC:
        return _anthropic().to_langchain(history, system_in_state=o.get("system") == "state").messages
    return to_langchain(history)[0]


def chat_model(settings: Any, o: dict[str, Any], **extra: Any) -> Any:
    """The agent's chat model on the suite's server: ``ChatOpenAI`` (its ``/v1/chat/completions``), or for
    ``format: anthropic-messages`` ``ChatAnthropic`` (its ``/v1/messages``; the Anthropic client adds ``/v1``),
    for ``format: responses`` ``ChatOpenAI`` on its ``/v1/responses`` with ``output_version="responses/v1"``."""
    if _format(o) == RESPONSES:
        extra = {"use_responses_api": True, "output_version": "responses/v1", **extra}
    if _format(o) == ANTHROPIC:
        base_url = (settings.base_url or "").removesuffix("/v1") or None
        return requires("langchain_anthropic", EXTRA).ChatAnthropic(
            model=settings.model, base_url=base_url, api_key=settings.api_key, timeout=settings.summarizer_timeout, max_retries=0, **extra
        )
    given = {"model": settings.model, "base_url": settings.base_url, "api_key": settings.api_key, "timeout": settings.summarizer_timeout, "max_retries": 0}
    return requires("langchain_openai", EXTRA).ChatOpenAI(**{**given, **extra})


# --- factories ------------------------------------------------------------------------------------


def _counter(name: str, settings: Any = None, o: dict[str, Any] | None = None) -> Any:
    """``trim_messages``'s ``token_counter``: ``count_tokens_approximately``, ``len``, or ``model``: the
    agent's chat model, whose ``get_num_tokens_from_messages`` LangChain documents as a counter; for
    ``format: anthropic-messages`` ``ChatAnthropic``, which asks the provider's token counting endpoint
    (the suite's double judges those requests as the API does, `summarizer_apis.COUNT_TOKENS`); else
    ``ChatOpenAI`` named ``counter_model`` (the agent's model; None: the suite's), which counts with
    tiktoken: its encodings are installed offline by ``compaction_suite.bpe``."""
    if name == "model":
        if o is None:
            raise ValueError("token_counter 'model' needs the configuration's options")
        if _format(o) == ANTHROPIC:
            return chat_model(settings, o)
        from compaction_suite import bpe

        bpe.install("cl100k_base")
        bpe.install("o200k_base")
        return chat_model(settings, o, **({"model": o["counter_model"]} if o.get("counter_model") else {}))
    if name == "approximate":
        utils = requires("langchain_core.messages", EXTRA).utils
        if not hasattr(utils, "count_tokens_approximately"):
            raise CannotDrive("langchain:trim_messages", "langchain-core", "no count_tokens_approximately (use token_counter 'len')")
        return utils.count_tokens_approximately
    if name == "len":
        return len
    raise ValueError(f"token_counter must be 'approximate', 'len' or 'model', got {name!r}")


def _types(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


@factory
def trim_messages(settings: Any, **given: Any) -> Any:
    """``trim_messages`` with ``TRIM_DEFAULTS`` (updated by the options) on every call."""
    o = options(TRIM_DEFAULTS, given)
    lc = requires("langchain_core.messages", EXTRA)
    counter = _counter(o["token_counter"], settings, o)
    kwargs: dict[str, Any] = {"max_tokens": o["max_tokens"], "token_counter": counter, "strategy": o["strategy"]}
    if o["strategy"] == "last":
        kwargs.update(include_system=o["include_system"], allow_partial=o["allow_partial"])
        if o["start_on"] is not None:
            kwargs["start_on"] = _types(o["start_on"])
    elif o["allow_partial"]:
        kwargs["allow_partial"] = True
    if o["end_on"] is not None:
        kwargs["end_on"] = _types(o["end_on"])

    # Without start_on/end_on, trim_messages returns a history its counter says fits max_tokens as it is;
    # with them it also cuts to a human turn below the budget, so no size says when it changes the history.
    trimmed_by_size = o["start_on"] is None and o["end_on"] is None
    declared = _declared(o, {"messages" if o["token_counter"] == "len" else "tokens": o["max_tokens"]} if trimmed_by_size else None)

    def estimate(history: Any) -> int:
        if o["token_counter"] == "model":
            return int(counter.get_num_tokens_from_messages(langchain_messages(o, history)))
        return int(counter(langchain_messages(o, history)))

    if o["path"] == "hook":
        return _trimming_hook(settings, o, lambda converted: lc.trim_messages(converted, **kwargs), estimate)
    if o["path"] != "direct":
        raise ValueError(f"path must be 'direct' or 'hook', got {o['path']!r}")
    run = compacting(o, lambda converted: lc.trim_messages(converted, **kwargs))
    return make("langchain.trim_messages", {"core"}, run, declared=declared, estimate=estimate)


def _trimming_hook(settings: Any, o: dict[str, Any], trim: Any, estimate: Any) -> Any:
    """``path: "hook"``: each ``compact`` replays the history through langgraph's ``create_react_agent``
    whose ``pre_model_hook`` is ``trim`` handed back as ``llm_input_messages`` (LangGraph's documented
    recipe; ``adapters/_langgraph_hook.py``), its model ``ChatOpenAI`` on a double of its own whose window
    is ``window``; the output is the thread's messages (the hook leaves the state as it was), and what the
    loop sends is judged by FIRE-7 against the declared ``request_window``."""
    from . import _langchain_replay as replaying
    from . import _langgraph_hook as hooking
    from ._model_double import ModelDouble

    if _format(o) != CHAT or o["system"] != "agent":
        raise ValueError("path 'hook' takes format chat-completions and system 'agent'")
    window = int(o["window"])
    double = ModelDouble(window)
    hook = hooking.trimming_hook(trim)

    def run(messages: list[Message]) -> list[Message]:
        converted, notes = to_langchain(messages, tool_messages=o["tool_messages"])
        model = requires("langchain_openai", EXTRA).ChatOpenAI(
            model=settings.model, base_url=double.server().base_url, api_key="scripted", max_retries=0
        )
        state = hooking.replayed(model, double, hook, messages, converted)
        return from_langchain(state, replaying.noted(state, messages, notes))

    compactor = make("langchain.trim_messages[pre_model_hook]", {"core"}, run, declared={**_declared(o), "request_window": window}, estimate=estimate)
    compactor.model_double = double  # the agent model's double lives as long as the compactor
    return compactor


def _declared(o: dict[str, Any], trigger: dict[str, int] | str | None = None) -> dict[str, Any]:
    """``system`` "agent" (create_agent's ``system_prompt=``) or "state" (a ``SystemMessage`` in the state);
    ``trigger`` the size past which the configuration compacts (SPEC FIRE-1, FIRE-2), or ``"never"`` for
    one documented as never compacting (SPEC FIRE-6); ``wire_format`` for ``format: anthropic-messages``
    (SPEC Part A, "Wire formats")."""
    system = o["system"]
    if system not in ("agent", "state"):
        raise ValueError(f"system must be 'agent' or 'state', got {system!r}")
    declared = capabilities("outside" if system == "agent" else "in_list", trigger if isinstance(trigger, dict) else None)
    declared |= {"trigger": trigger} if isinstance(trigger, str) else {}
    if _format(o) == RESPONSES:  # custom tools are langchain-openai's own decorator: function calls only drawn
        return {**declared, "wire_format": RESPONSES, "tool_calls": "function"}
    return {**declared, "wire_format": ANTHROPIC} if _format(o) == ANTHROPIC else declared


def _summarization(
    cls: Any, model: Any, o: dict[str, Any], trigger: list[tuple[str, int]], keep: tuple[str, int], summarizer: Any = None
) -> Any:
    """``SummarizationMiddleware`` as the installed release takes its sizes: ``trigger=``/``keep=`` (1.0.x's
    later releases and on), or 1.0's ``max_tokens_before_summary=``/``messages_to_keep=``, which hold only a
    token trigger and a message count (anything else is a contract error); ``summarizer`` (`_summarizer`)
    passed as ``summarizer=`` when given."""
    import inspect

    if "trigger" in inspect.signature(cls.__init__).parameters:
        counter = {} if o["tokens_per_image"] is None else {"token_counter": _image_counter(int(o["tokens_per_image"]))}
        counter |= {} if summarizer is None else {"summarizer": summarizer}
        return cls(model, trigger=trigger or None, keep=keep, trim_tokens_to_summarize=o["trim_tokens_to_summarize"], **counter)
    if o["tokens_per_image"] is not None:
        raise CannotDrive("langchain:summarization_middleware", "langchain", "this release takes no token_counter")
    if o["trigger_messages"] is not None or o["keep_tokens"] is not None or o["trigger_fraction"] is not None:
        raise CannotDrive(
            "langchain:summarization_middleware",
            "langchain",
            "this release takes only a token trigger and a message count (trigger_tokens, keep_messages)",
        )
    return cls(model, max_tokens_before_summary=o["trigger_tokens"], messages_to_keep=int(o["keep_messages"]))


def _image_counter(tokens: int) -> Any:
    """``count_tokens_approximately`` counting each image as ``tokens`` (its ``tokens_per_image``, whose
    default is 85), the counter a user passes as ``token_counter`` to count images as the provider does
    (SPEC FIRE-7 Decision: pasted screenshots)."""
    import functools
    import inspect

    counter = requires("langchain_core.messages", EXTRA).utils.count_tokens_approximately
    if "tokens_per_image" not in inspect.signature(counter).parameters:
        raise CannotDrive("langchain:summarization_middleware", "langchain-core", "count_tokens_approximately takes no tokens_per_image")
    return functools.partial(counter, tokens_per_image=tokens)


NEVER = "never"
"""The declared trigger of the configuration without one (SPEC FIRE-6): langchain 1.0 documents
``max_tokens_before_summary=None`` as "If `None`, summarization is disabled." (1.0.0-1.0.8,
``SummarizationMiddleware.__init__``); from 1.1.0 (langchain-ai/langchain#33825) ``trigger`` defaults to
``None``, which ``_should_summarize`` reads as never, and the deprecated ``max_tokens_before_summary=None``
maps to it."""


def _trigger_said(trigger: list[tuple[str, int]]) -> dict[str, int] | str | None:
    """The trigger the configuration declares: none given, `NEVER`; one, the size it summarizes at
    (``count_tokens_approximately`` or ``len(messages)`` reaching it, ``_should_summarize``); two are
    either one, which no single size says."""
    if not trigger:
        return NEVER
    return dict(trigger) if len(trigger) == 1 else None


def _middleware(path: str) -> Any:
    """``langchain.agents.middleware``, which arrived in langchain 1.0: below it a contract error, and a
    contract error naming the release where it is there but does not import beside what is installed with
    it (langchain 1.1.1 in a fresh environment: its langgraph is below 1.1, today's langgraph-prebuilt
    imports ``ExecutionInfo`` from a newer one)."""
    if release("langchain") < (1, 0):
        raise CannotDrive(f"langchain:{path}", "langchain", "agent middleware arrived in langchain 1.0")
    try:
        return requires("langchain.agents.middleware", EXTRA)
    except ImportError as error:
        if isinstance(error.__cause__, ModuleNotFoundError):
            raise
        raise CannotDrive(
            f"langchain:{path}",
            "langchain",
            f"langchain.agents.middleware does not import beside what is installed with it ({error.__cause__ or error})",
        ) from error


@factory
def summarization_middleware(settings: Any, **given: Any) -> Any:
    """``SummarizationMiddleware`` with its summarizer the agent's model on the suite's server (``ChatOpenAI``,
    or ``ChatAnthropic`` for ``format: anthropic-messages``)."""
    o = options(SUMMARIZATION_DEFAULTS, given)
    middleware_module = _middleware("summarization_middleware")
    lc = requires("langchain_core.messages", EXTRA)
    fraction = _fraction(o)
    model = chat_model(settings, o, **({"profile": {"max_input_tokens": int(o["window"])}} if fraction is not None else {}))
    trigger: list[tuple[str, Any]] = []
    if o["trigger_tokens"] is not None:
        trigger.append(("tokens", int(o["trigger_tokens"])))
    if o["trigger_messages"] is not None:
        trigger.append(("messages", int(o["trigger_messages"])))
    if fraction is not None:
        trigger.append(("fraction", fraction))
    keep = ("tokens", int(o["keep_tokens"])) if o["keep_tokens"] is not None else ("messages", int(o["keep_messages"]))
    middleware = _summarization(middleware_module.SummarizationMiddleware, model, o, trigger, keep, _summarizer(settings, o))
    if o["path"] == "agent":
        return _replaying(settings, o, middleware)
    declared = _declared(o, _trigger_said(trigger) if fraction is None else None)
    declared["keeps"] = {keep[0]: keep[1]}  # the configured retention (SPEC CORE-65)
    if o["summarizer_window"] is not None:
        declared["summarizer_window"] = int(o["summarizer_window"])

    def summarized(converted: list[Any]) -> list[Any]:
        update = middleware.before_model({"messages": converted}, None)
        return converted if update is None else [m for m in update["messages"] if not isinstance(m, lc.RemoveMessage)]

    def estimate(history: Any) -> int:
        return int(middleware.token_counter(langchain_messages(o, history)))

    run = compacting(o, summarized)
    return make("langchain.SummarizationMiddleware", {"core"}, run, declared=declared, estimate=estimate)


def _summarizer(settings: Any, o: dict[str, Any]) -> Any:
    """``summarizer_window`` given: the chat model passed as ``summarizer=``, the agent's model class on the
    suite's summarizer with a profile of that window (the middleware reads it to bound its overflow retry);
    none given, None (the agent's model writes the summary). Below `SUMMARIZER_FLOOR` a contract error."""
    window = o["summarizer_window"]
    if window is None:
        return None
    if isinstance(window, bool) or not isinstance(window, int) or window < 1000:
        raise ValueError(f"summarizer_window must be an integer of at least 1000, got {window!r}")
    if o["path"] != "state":
        raise ValueError("summarizer_window takes path 'state'")
    if release("langchain") < SUMMARIZER_FLOOR:
        raise CannotDrive("langchain:summarization_middleware", "langchain", "SummarizationMiddleware takes summarizer= from 1.4.5 on")
    return chat_model(settings, o, profile={"max_input_tokens": int(window)})


def _fraction(o: dict[str, Any]) -> float | None:
    """``trigger_fraction`` checked: a fraction of the model's window below 1, required on ``path: "agent"``
    (SPEC FIRE-7 is judged for a trigger stated relative to the window the agent's requests must fit)."""
    if o["path"] not in ("state", "agent"):
        raise ValueError(f"path must be 'state' or 'agent', got {o['path']!r}")
    f = o["trigger_fraction"]
    if f is None:
        if o["path"] == "agent":
            raise ValueError("path 'agent' needs trigger_fraction, a fraction of the model's window below 1")
        return None
    if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0 < f < 1:
        raise ValueError(f"trigger_fraction must be a number between 0 and 1, got {f!r}")
    if o["path"] == "agent" and (
        o["trigger_tokens"] is not None or o["trigger_messages"] is not None or _format(o) != CHAT or o["system"] != "agent"
    ):
        raise ValueError(
            "path 'agent' takes trigger_fraction alone (trigger_tokens and trigger_messages null), format chat-completions and system 'agent'"
        )
    return float(f)


def _replaying(settings: Any, o: dict[str, Any], middleware: Any) -> Any:
    """``path: "agent"``: each ``compact`` replays the history through ``create_agent`` with ``middleware``,
    a system prompt of ``system_prompt_tokens`` and ``tools`` more tools beside the history's, its model
    ``ChatOpenAI`` on a double of its own whose window is ``window`` (``adapters/_langchain_replay.py``);
    the output is the thread's messages. Declares that window (``request_window``, SPEC FIRE-7), and as
    the summarizer's (``summarizer_window``, SPEC WIN-1): the summarizer is the agent's model, given the
    same profile, as ``SummarizationMiddleware(model=...)`` is given the agent's model."""
    from . import _langchain_replay as replaying
    from ._model_double import ModelDouble

    create_agent = requires("langchain.agents", EXTRA).create_agent
    window = int(o["window"])
    double = ModelDouble(window)
    prompt = replaying.system_prompt(int(o["system_prompt_tokens"])) or None

    def run(messages: list[Message]) -> list[Message]:
        converted, notes = to_langchain(messages, tool_messages=o["tool_messages"])
        results: dict[str, Any] = {}
        model = requires("langchain_openai", EXTRA).ChatOpenAI(
            model=settings.model, base_url=double.server().base_url, api_key="scripted", max_retries=0, profile={"max_input_tokens": window}
        )
        tools = replaying.tools_for(messages, int(o["tools"]))

        def build(checkpointer: Any) -> Any:
            return create_agent(
                model,
                tools=tools,
                system_prompt=prompt,
                middleware=[middleware, replaying.recorded_results(results)],
                checkpointer=checkpointer,
            )

        state = replaying.replay(build, double, messages, converted, results)
        return from_langchain(state, replaying.noted(state, messages, notes))

    def estimate(history: Any) -> int:
        return int(middleware.token_counter(to_langchain(history)[0]))

    declared = {**_declared(o), "request_window": window, "summarizer_window": window}
    compactor = make("langchain.SummarizationMiddleware", {"core"}, run, declared=declared, estimate=estimate)
    compactor.model_double = double  # the agent model's double lives as long as the compactor
    return compactor


@factory
def context_editing(settings: Any, **given: Any) -> Any:
    """``ContextEditingMiddleware(edits=[ClearToolUsesEdit(...)])`` run as ``create_agent`` runs it: its
    ``wrap_model_call`` edits a copy of the model request's messages and hands them to the model call,
    whose messages are the adapter's output (the state itself is left as it was: the edit is per request)."""
    o = options(CONTEXT_EDITING_DEFAULTS, given)
    middleware_module = _middleware("context_editing")
    edit = middleware_module.ClearToolUsesEdit(
        trigger=int(o["trigger"]), keep=int(o["keep"]), clear_at_least=int(o["clear_at_least"]),
        clear_tool_inputs=bool(o["clear_tool_inputs"]), placeholder=str(o["placeholder"]),
    )  # fmt: skip
    middleware = middleware_module.ContextEditingMiddleware(edits=[edit])
    model = chat_model(settings, o)
    declared = _declared(o)
    run = compacting(o, lambda converted: model_sees(middleware, model, converted, {}))

    def estimate(history: Any) -> int:
        return approximate_tokens(langchain_messages(o, history))

    return make("langchain.ContextEditingMiddleware", {"core"}, run, declared=declared, estimate=estimate)


def model_sees(middleware: Any, model: Any, converted: list[Any], state: dict[str, Any]) -> list[Any]:
    """The messages ``middleware.wrap_model_call`` passes on to the model for a request holding
    ``converted`` (LangChain messages), the agent's ``state`` besides its messages: what the model
    is sent on this call (the model itself answers nothing)."""
    lc = requires("langchain_core.messages", EXTRA)
    module = requires("langchain.agents.middleware", EXTRA)
    sent: list[Any] = []

    def model_call(request: Any) -> Any:
        sent.extend(request.messages)
        return lc.AIMessage("")

    # Every field named: 1.0's ModelRequest has no defaults for them.
    request = module.ModelRequest(
        model=model, messages=list(converted), system_prompt=None, tool_choice=None, tools=[], response_format=None,
        state={"messages": list(converted), **state}, runtime=None,
    )  # fmt: skip
    middleware.wrap_model_call(request, model_call)
    return sent


def approximate_tokens(messages: list[Any]) -> int:
    """LangChain's ``count_tokens_approximately`` over the LangChain messages: a middleware's own estimate."""
    return int(requires("langchain_core.messages", EXTRA).utils.count_tokens_approximately(messages))


@factory
def langmem_summarization(settings: Any, **given: Any) -> Any:
    """langmem's ``SummarizationNode`` as ``create_react_agent``'s ``pre_model_hook`` (``adapters/_langmem.py``),
    its summarizer the agent's model on the suite's server (``summarizer: "agent"``) or ``ChatBedrockConverse``
    on its Bedrock Converse API (``"bedrock"``); the output is the hook's ``llm_input_messages``."""
    from . import _langchain_models, _langmem

    o = options(_langmem.DEFAULTS, given)
    requires("langmem.short_term", EXTRA)
    if o["summarizer"] == "agent":
        summarizer = chat_model(settings, o)
    elif o["summarizer"] == "bedrock":
        summarizer = _langchain_models.bedrock_converse(settings.base_url or "", settings.summarizer_timeout)
    else:
        raise ValueError(f"summarizer must be 'agent' or 'bedrock', got {o['summarizer']!r}")
    hook = _langmem.node(summarizer, o)
    declared = _declared(o, _langmem.trigger(o))
    if o["summarizer"] == "bedrock":  # Converse takes an image as its bytes (langchain-aws refuses an image URL): a Bedrock agent holds them so
        declared["images"] = "inline"

    def estimate(history: Any) -> int:
        return _langmem.counted(langchain_messages(o, history))

    run = compacting(o, lambda converted: _langmem.hooked(hook, converted))
    return make("langmem.SummarizationNode", {"core"}, run, declared=declared, estimate=estimate)


SERVER_COMPACTION_DEFAULTS: dict[str, Any] = {
    "trigger_tokens": 50_000,  # the compact_20260112 edit's trigger (the API's minimum, 50,000 input tokens)
    "stream": False,  # True: the agent run with stream_mode="messages", ChatAnthropic answering from the stream
}
"""The Messages API's server-side compaction on the agent's ``ChatAnthropic`` (``betas=["compact-2026-01-12"]``,
``context_management={"edits": [{"type": "compact_20260112", "trigger": ...}]}``)."""


@factory
def server_compaction(settings: Any, **given: Any) -> Any:
    """``create_agent`` on ``ChatAnthropic`` whose requests ask the Messages API to compact server-side
    (``adapters/_langchain_server_compaction.py``): the output is the agent's next request after the
    history's last step, from the compaction block on (SPEC ANTH-7; Part A, "Wire formats", Decision: the
    Messages API's server-side compaction)."""
    from compaction_suite.conformance import anthropic_compaction
    from compaction_suite.conformance.summarizer_apis import SCRIPTED

    from . import _langchain_server_compaction as server
    from ._server_compaction import AGENT_TIMEOUT

    o = options(SERVER_COMPACTION_DEFAULTS, given)
    _anthropic()
    if "context_management" not in requires("langchain_anthropic", EXTRA).ChatAnthropic.model_fields:
        raise CannotDrive("langchain:server_compaction", "langchain-anthropic", "its ChatAnthropic has no context_management")
    edit = {"type": anthropic_compaction.EDIT, "trigger": {"type": "input_tokens", "value": int(o["trigger_tokens"])}}
    agent_settings = settings.with_(summarizer_timeout=max(settings.summarizer_timeout, AGENT_TIMEOUT))
    model = chat_model(agent_settings, {"format": ANTHROPIC}, betas=[anthropic_compaction.BETA], context_management={"edits": [edit]}, streaming=bool(o["stream"]))
    declared = _declared({"system": "agent", "format": ANTHROPIC})

    def run(request: dict[str, Any]) -> dict[str, Any]:
        return server.run(request, model, stream=bool(o["stream"]), scripted_key=SCRIPTED)

    def estimate(history: Any) -> int:
        return approximate_tokens(langchain_messages({"format": ANTHROPIC, "system": "agent"}, history))

    return make("langchain.ChatAnthropic(context_management=compact_20260112)", {"core"}, run, declared=declared, estimate=estimate)
