"""Strands Agents: conversation managers, compactors of Anthropic-style messages.

What Strands ships (checked in the installed sources, ``strands-agents`` 1.62): an ``Agent`` keeps
its history in ``agent.messages`` as Bedrock Converse content blocks (``text``, ``toolUse``,
``toolResult``, ``reasoningContent`` with its ``signature``, ``image``), its system prompt apart
(``Agent(system_prompt=...)``), and a *conversation manager* edits ``agent.messages`` in place.
``SlidingWindowConversationManager`` keeps the last ``window_size`` messages, moving the cut
forward so that no ``toolResult`` loses its ``toolUse``; it runs at the end of every invocation
(``apply_management``, in the agent loop's ``finally``) and, with ``per_turn=True``, before every
model call. Strands' ``AnthropicModel`` sends these blocks as Anthropic Messages API blocks
(``tool_use``, ``tool_result``, ``thinking``/``redacted_thinking``): the mapping below is that
one, so the suite judges the request Strands would send to Anthropic.

Targets::

    compaction-suite check compaction_suite.adapters.strands:sliding_window
    compaction-suite check compaction_suite.adapters.strands:summarizing   # needs a streamed /v1/messages

Conversion (Anthropic ``{"system", "messages"}`` <-> Strands): ``text`` <-> ``{"text"}``;
``tool_use`` <-> ``{"toolUse": {toolUseId, name, input}}``; ``tool_result`` <->
``{"toolResult": {toolUseId, status ("error" when is_error), content: [{"text"} | {"image"}]}}``
(string content is one text block); ``thinking`` <-> ``{"reasoningContent": {"reasoningText":
{text, signature}}}``; ``redacted_thinking`` <-> ``{"reasoningContent": {"redactedContent":
bytes}}``; a base64 ``image`` <-> ``{"image": {format, source: {bytes}}}``; a string ``content``
is one text block. A block Strands has no type for is carried as it is (Strands' managers never
look inside one). Back: a message the manager kept (the same object, its blocks unchanged) is the
original Anthropic message, byte-identical; a block the manager made or changed is rendered by
Strands' own ``AnthropicModel`` formatter, i.e. exactly what Strands would send. The system
prompt goes to ``Agent(system_prompt=...)`` and comes back as given unless the agent's changed.

Declared capabilities (proven by ``tests/test_adapter_format_loops.py`` with Strands' own agent
loop and a scripted model): ``wire_format: anthropic-messages``; ``system_prompt: outside``
(``Agent(system_prompt=...)`` never enters ``agent.messages``). ``called``: for
``sliding_window`` ``anytime``: ``apply_management`` runs in the ``finally`` of every invocation,
and an invocation a tool stops with an interrupt (human approval, ``tool_context.interrupt``)
ends with the assistant's ``toolUse`` still unanswered, so the manager sees that history in
flight (the loop test shows it); for ``summarizing`` ``between_rounds``: its ``apply_management``
does nothing, and it summarizes only in the before-model-call hook, every call answered by then.

Profiles: ``core`` only: the trigger is a message count (not ``trigger``); no summary, no
summarizer (not ``summary``/``failure``); no events.
"""

from __future__ import annotations

import base64
import binascii
import copy
import functools
from typing import Any

from ._common import make, options, requires
from ._native import declared, double_refuses

FRAMEWORK = "Strands Agents"
DISTRIBUTIONS = ("strands-agents",)
EXTRA = "strands"
IMAGE_FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp"}

DEFAULTS: dict[str, dict[str, Any]] = {
    "sliding_window": {"window_size": 40},
    "summarizing": {"summary_ratio": 0.3, "preserve_recent_messages": 10, "context_window_limit": 4000, "compression_threshold": 0.7},
}
WHY = {
    "sliding_window": (
        "core only: message-count window (no iteration trigger); no summarizer; no events; called anytime: after a "
        "tool interrupt the window also trims a history whose toolUse is unanswered (ANTH-6, policy)"
    ),
    "summarizing": (
        "core only: proactive compression at a share of the model's context window (no iteration trigger); the "
        "summary is a user message, not [Context Summary] + K rounds; a failed summary leaves the history (best-effort)"
    ),
}
SLIDING_WINDOW: list[tuple[str, dict[str, Any]]] = [("sliding_window", {"window_size": 6}), ("sliding_window", {"window_size": 12})]
SUMMARIZING: list[tuple[str, dict[str, Any]]] = [
    ("summarizing", {"preserve_recent_messages": 4, "context_window_limit": 2000}),
    ("summarizing", {"preserve_recent_messages": 10, "context_window_limit": 4000}),
]
"""``CONFIGURATIONS`` (what ``compaction-suite matrix`` runs) is both, the summarizing ones only
while the suite's summarizer double answers Strands' streamed ``/v1/messages`` (see ``__getattr__``)."""
REACTIVE = (
    "the managers' reactive path (reduce_context after the provider reports a context overflow: SlidingWindow "
    "then truncates old tool results, Summarizing re-raises a failed summary) needs a provider overflow error "
    "the suite does not produce"
)


# --- conversion ------------------------------------------------------------------------------


def _bytes(data: str) -> bytes:
    """The bytes of an opaque base64 string (its UTF-8 bytes when it is not base64)."""
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return data.encode("utf-8")


def _block(block: Any) -> Any:
    """One Anthropic content block as a Strands content block."""
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text":
        return {"text": block.get("text", "")}
    if kind == "tool_use":
        return {"toolUse": {"toolUseId": block.get("id"), "name": block.get("name"), "input": copy.deepcopy(block.get("input"))}}
    if kind == "tool_result":
        content = block.get("content", "")
        parts = [{"text": content}] if isinstance(content, str) else [_block(part) for part in content or []]
        return {"toolResult": {"toolUseId": block.get("tool_use_id"), "status": "error" if block.get("is_error") else "success", "content": parts}}
    if kind == "thinking":
        return {"reasoningContent": {"reasoningText": {"text": block.get("thinking", ""), "signature": block.get("signature", "")}}}
    if kind == "redacted_thinking":
        return {"reasoningContent": {"redactedContent": _bytes(str(block.get("data", "")))}}
    source = block.get("source") if kind == "image" else None
    if isinstance(source, dict) and source.get("type") == "base64" and source.get("media_type") in IMAGE_FORMATS:
        return {"image": {"format": IMAGE_FORMATS[source["media_type"]], "source": {"bytes": _bytes(str(source.get("data", "")))}}}
    return copy.deepcopy(block)


def _blocks(content: Any) -> list[Any]:
    return [{"text": content}] if isinstance(content, str) else [_block(b) for b in content or []]


class Conversion:
    """Anthropic messages as Strands messages, remembering each original for the way back."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.strands: list[dict[str, Any]] = []
        self._originals: dict[int, tuple[dict[str, Any], dict[str, Any], list[Any]]] = {}
        for message in messages:
            converted: dict[str, Any] = {"role": message.get("role"), "content": _blocks(message.get("content"))}
            self._originals[id(converted)] = (message, converted, copy.deepcopy(converted["content"]))
            self.strands.append(converted)

    def back(self, messages: list[dict[str, Any]], render: Any) -> list[dict[str, Any]]:
        """The Anthropic messages for Strands' ``messages`` after the manager ran."""
        out = []
        for message in messages:
            original = self._originals.get(id(message))
            if original is not None and original[1] is message and message.get("content") == original[2] and message.get("role") == original[0].get("role"):
                out.append(copy.deepcopy(original[0]))
            else:
                out.append({"role": message.get("role"), "content": [b for b in (render(block) for block in message.get("content", [])) if b is not None]})
        return out


def _system_text(system: Any) -> str | None:
    if system is None or isinstance(system, str):
        return system
    return "\n".join(str(b.get("text", "")) for b in system if isinstance(b, dict))


# --- the compactor ---------------------------------------------------------------------------


def _agent(settings: Any, system: Any, messages: list[dict[str, Any]], manager: Any, **config: Any) -> Any:
    """A Strands ``Agent`` whose model is Strands' ``AnthropicModel`` on the suite's summarizer
    (its ``/v1/messages``; the Anthropic client adds ``/v1`` itself)."""
    strands = requires("strands", EXTRA)
    anthropic_model = requires("strands.models.anthropic", EXTRA)
    base_url = (settings.base_url or "").removesuffix("/v1") or None
    model = anthropic_model.AnthropicModel(
        client_args={"base_url": base_url, "api_key": settings.api_key, "max_retries": 0, "timeout": settings.summarizer_timeout},
        model_id=settings.model, max_tokens=1024, **config,
    )  # fmt: skip
    return strands.Agent(model=model, system_prompt=_system_text(system), messages=messages, conversation_manager=manager, callback_handler=None)


def _back(request: dict[str, Any], agent: Any, conversion: Conversion) -> dict[str, Any]:
    """The request with the agent's messages after the manager ran, as Strands would send them."""
    out = {k: copy.deepcopy(v) for k, v in request.items() if k != "messages"}
    out["messages"] = conversion.back(agent.messages, agent.model._format_request_message_content)
    if agent.system_prompt != _system_text(request.get("system")):
        out["system"] = agent.system_prompt  # never seen: Strands' managers leave the system prompt alone
    return out


def sliding_window(settings: Any, **given: Any) -> Any:
    """``SlidingWindowConversationManager(window_size)``, run as the agent loop runs it:
    ``apply_management(agent)`` (at the end of an invocation, and with ``per_turn`` before each model
    call: the same method on the same history, so ``per_turn`` is no option here)."""
    o = options(DEFAULTS["sliding_window"], given)
    managers = requires("strands.agent.conversation_manager", EXTRA)

    def run(request: dict[str, Any]) -> dict[str, Any]:
        conversion = Conversion(list(request.get("messages") or []))
        manager = managers.SlidingWindowConversationManager(window_size=int(o["window_size"]))
        agent = _agent(settings, request.get("system"), conversion.strands, manager)
        manager.apply_management(agent)
        return _back(request, agent, conversion)

    capabilities = declared("anthropic-messages", system_prompt="outside", called="anytime")
    return make("strands.SlidingWindowConversationManager", {"core"}, run, declared=capabilities)


def summarizing(settings: Any, **given: Any) -> Any:
    """``SummarizingConversationManager(summary_ratio, preserve_recent_messages,
    proactive_compression={"compression_threshold": ...})``, run as the agent loop runs it before a
    model call: Strands' own estimate of the next call's input tokens, then the manager's
    before-model-call hook, which summarizes the oldest messages through the agent's model (Strands'
    ``AnthropicModel`` on the suite's ``/v1/messages``) when the estimate reaches the threshold of
    ``context_window_limit``."""
    o = options(DEFAULTS["summarizing"], given)
    managers = requires("strands.agent.conversation_manager", EXTRA)
    events = requires("strands.hooks", EXTRA)
    event_loop = requires("strands.event_loop.event_loop", EXTRA)
    run_async = requires("strands._async", EXTRA).run_async

    def run(request: dict[str, Any]) -> dict[str, Any]:
        conversion = Conversion(list(request.get("messages") or []))
        manager = managers.SummarizingConversationManager(
            summary_ratio=float(o["summary_ratio"]), preserve_recent_messages=int(o["preserve_recent_messages"]),
            proactive_compression={"compression_threshold": float(o["compression_threshold"])},
        )  # fmt: skip
        agent = _agent(settings, request.get("system"), conversion.strands, manager, context_window_limit=int(o["context_window_limit"]))
        projected = run_async(lambda: event_loop._estimate_input_tokens(agent))
        manager._on_before_model_call_threshold(events.BeforeModelCallEvent(agent=agent, projected_input_tokens=projected))
        return _back(request, agent, conversion)

    capabilities = declared("anthropic-messages", system_prompt="outside")
    return make("strands.SummarizingConversationManager", {"core"}, run, declared=capabilities)


@functools.cache
def summarizer_refused() -> str | None:
    """Why ``summarizing`` cannot run against the suite's summarizer double (None when it can):
    Strands' ``AnthropicModel`` always streams ``/v1/messages``."""
    return double_refuses("/messages", {"model": "m", "max_tokens": 16, "stream": True, "messages": [{"role": "user", "content": "hi"}]})


def __getattr__(name: str) -> Any:
    """``CONFIGURATIONS`` and ``NOT_ADAPTED`` (read by ``compaction-suite matrix``), computed when asked."""
    if name == "CONFIGURATIONS":
        return SLIDING_WINDOW + ([] if summarizer_refused() else SUMMARIZING)
    if name == "NOT_ADAPTED":
        refused = summarizer_refused()
        return REACTIVE + (f"; summarizing not run: {refused}" if refused else "")
    raise AttributeError(name)
