"""LangChain's own shapes for an Anthropic Messages API history, both ways through ``langchain-anthropic``.

An agent built on ``ChatAnthropic`` keeps its history as LangChain messages, and that is what
LangChain's compactors see:

- an assistant turn is the ``AIMessage`` ``ChatAnthropic`` stores after the reply
  (``ChatAnthropic._format_output`` on the API's ``Message``): its ``content`` the list of blocks
  as the API returned them (``thinking`` with its ``signature``, ``redacted_thinking``, ``text``,
  ``tool_use``), or a string for a reply of one text block, and its ``tool_calls`` read from the
  ``tool_use`` blocks;
- a ``tool_result`` block is the ``ToolMessage`` the tool node records for that call
  (``status="error"`` for ``is_error``; a ``cache_control`` breakpoint on its content, where
  ``langchain-anthropic`` looks for it), one per result, in order; the other blocks of that user
  message (a reminder after the results) a ``HumanMessage`` after them;
- any other user message a ``HumanMessage`` with its content as sent.

The way back is what the model is sent: ``ChatAnthropic._get_request_payload`` on each request
message's LangChain messages (its ``_format_messages`` joins a run of tool and human messages into one
user message). Messages from different request messages stay apart, where the client would join a run
of user turns into one as the API itself does (SPEC ANTH-5 Decision): what the compactor did stays
apart from what the client does. A request message whose LangChain messages the compactor left exactly
as they were comes back as the original, as for every adapter (`adapters/_common.finish`): re-encoding
by the provider client (``"is_error": false`` added) is not the compactor's doing.
SPEC ANTH-1..ANTH-6.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ._common import requires

EXTRA = "langchain-anthropic"
MODEL = "claude-sonnet-4-5"
"""The model name ``ChatAnthropic`` is built with to format requests (never called)."""

Request = dict[str, Any]


def chat_anthropic(**settings: Any) -> Any:
    """A ``ChatAnthropic`` that formats requests; ``settings`` override the offline defaults."""
    module = requires("langchain_anthropic", "langchain")
    kwargs: dict[str, Any] = {"model": MODEL, "api_key": "unused", "max_retries": 0, **settings}
    return module.ChatAnthropic(**kwargs)


def _ai_message(model: Any, message: dict[str, Any], mid: str) -> Any:
    """The ``AIMessage`` ``ChatAnthropic`` stores for a reply whose content is ``message``'s: the API's
    ``Message`` as the SDK parses it, through ``ChatAnthropic._format_output``."""
    types = requires("anthropic.types", "langchain")
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else copy.deepcopy(content or [])
    reply = {
        "id": f"msg_{mid}", "type": "message", "role": "assistant", "model": MODEL, "content": blocks,
        "stop_reason": "tool_use" if any(b.get("type") == "tool_use" for b in blocks) else "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }  # fmt: skip
    try:
        parsed = types.Message.model_validate(reply)
    except ValueError:  # a block type this SDK release does not know: kept as it was sent
        parsed = types.Message.model_construct(**{**reply, "content": [_Block(b) for b in blocks], "usage": types.Usage(input_tokens=0, output_tokens=0)})
    ai = model._format_output(parsed).generations[0].message
    ai.id = mid
    ai.usage_metadata = None  # the history says nothing of what the provider reported: the middleware counts
    return ai


class _Block(dict[str, Any]):
    """A content block the SDK's response types do not know, dumped as it was (``model_dump``)."""

    def model_dump(self, **_: Any) -> dict[str, Any]:
        return copy.deepcopy(dict(self))


def _tool_message(lc: Any, block: dict[str, Any], mid: str, native: bool) -> Any:
    content = copy.deepcopy(block.get("content", ""))
    if "cache_control" in block:
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if parts:
            parts[-1] = {**parts[-1], "cache_control": copy.deepcopy(block["cache_control"])}
        content = parts
    extra = {"artifact": {"raw": copy.deepcopy(block.get("content"))}} if native else {}
    return lc.ToolMessage(content=content, tool_call_id=block.get("tool_use_id"), status="error" if block.get("is_error") else "success", id=mid, **extra)


@dataclass
class Conversion:
    """LangChain messages for a request, and the originals to give back for those left as they were."""

    system: Any
    messages: list[Any]
    origin: dict[str, int] = field(default_factory=dict)
    """LangChain message id -> index of the request message it came from."""
    snapshots: dict[str, Any] = field(default_factory=dict)
    """LangChain message id -> a copy of the message as converted (to tell an unchanged one)."""
    originals: list[dict[str, Any]] = field(default_factory=list)
    in_state: bool = False
    """Whether ``system`` is a leading ``SystemMessage`` of ``messages`` (else kept apart)."""


def to_langchain(request: Request, *, system_in_state: bool = False, tool_messages: str = "plain", model: Any = None) -> Conversion:
    """The LangChain messages an agent on ``ChatAnthropic`` holds for ``request`` (its ``system`` a leading
    ``SystemMessage`` when ``system_in_state``, else kept apart as ``create_agent``'s ``system_prompt``).
    ``tool_messages="native"``: each ``ToolMessage`` also carries an ``artifact`` (the raw output a
    ``content_and_artifact`` tool returns beside its content; never sent to the model)."""
    if tool_messages not in ("plain", "native"):
        raise ValueError(f"tool_messages must be 'plain' or 'native', got {tool_messages!r}")
    lc = requires("langchain_core.messages", "langchain")
    model = model or chat_anthropic()
    out: list[Any] = []
    conversion = Conversion(system=copy.deepcopy(request.get("system")), messages=out, originals=copy.deepcopy(list(request.get("messages") or [])))
    conversion.in_state = system_in_state and "system" in request
    if conversion.in_state:
        system = lc.SystemMessage(content=copy.deepcopy(request["system"]), id="anth-system")
        conversion.snapshots[system.id] = system.model_copy(deep=True)
        out.append(system)
    for i, message in enumerate(conversion.originals):
        converted: list[Any] = []
        if message.get("role") == "assistant":
            converted.append(_ai_message(model, message, f"anth-{i}"))
        elif message.get("role") == "user":
            content = message.get("content")
            blocks = content if isinstance(content, list) else None
            results = [b for b in blocks or [] if isinstance(b, dict) and b.get("type") == "tool_result"]
            for k, block in enumerate(results):
                converted.append(_tool_message(lc, block, f"anth-{i}-{k}", tool_messages == "native"))
            rest = [b for b in blocks or [] if not (isinstance(b, dict) and b.get("type") == "tool_result")]
            if blocks is None or rest or not results:
                converted.append(lc.HumanMessage(content=copy.deepcopy(content if blocks is None else rest), id=f"anth-{i}"))
        else:
            raise ValueError(f"messages.{i}: role {message.get('role')!r} is not a Messages API role (user, assistant)")
        for m in converted:
            conversion.origin[m.id] = i
            conversion.snapshots[m.id] = m.model_copy(deep=True)
        out.extend(converted)
    return conversion


def sent(model: Any, messages: list[Any]) -> Request:
    """The ``system`` and ``messages`` of the request ``model`` (a ``ChatAnthropic``) sends for ``messages``."""
    payload = model._get_request_payload(list(messages))
    request: Request = {"messages": payload["messages"]}
    if payload.get("system") is not None:
        request["system"] = payload["system"]
    return request


def from_langchain(conversion: Conversion, messages: list[Any], *, model: Any = None) -> Request:
    """The request part the model is sent for ``messages`` (the compactor's output; a leading
    ``SystemMessage`` when the system prompt lives in the state, else the request's ``system``, sent
    first as ``create_agent`` sends its ``system_prompt``).

    Each request message's LangChain messages are sent as ``langchain-anthropic`` sends them, and the
    messages the compactor left exactly as they were come back as the request message they came from;
    messages from different request messages stay apart (``langchain-anthropic`` would join a run of user
    turns into one, as the API itself joins consecutive turns: SPEC ANTH-5 Decision; keeping them apart
    keeps what the compactor did apart from what the client does)."""
    lc = requires("langchain_core.messages", "langchain")
    model = model or chat_anthropic()
    kept = [m for m in messages if not isinstance(m, lc.RemoveMessage)]
    leading = bool(kept) and isinstance(kept[0], lc.SystemMessage)
    rest = kept[1:] if leading else kept
    if any(isinstance(m, lc.SystemMessage) for m in rest):  # a system message moved inside: the client hoists it
        return sent(model, ([lc.SystemMessage(content=copy.deepcopy(conversion.system))] if not conversion.in_state and conversion.system is not None else []) + kept)
    request: Request = {}
    if conversion.system is not None and (not conversion.in_state or (leading and _unchanged(conversion, kept[0]))):
        request["system"] = copy.deepcopy(conversion.system)
    elif leading:
        system = sent(model, [kept[0]]).get("system")
        if system is not None:
            request["system"] = system
    groups = _groups(conversion, rest)
    out: list[dict[str, Any]] = []
    for n, (origin, group) in enumerate(groups):
        if origin is not None and _whole(conversion, origin, group):
            out.append(copy.deepcopy(conversion.originals[origin]))
        elif n == len(groups) - 1:
            out.extend(sent(model, group)["messages"])
        else:  # sent before another turn: only the request's last assistant message is stripped
            after = lc.HumanMessage("next") if isinstance(group[-1], lc.AIMessage) else lc.AIMessage("next")
            out.extend(sent(model, [*group, after])["messages"][:-1])
    request["messages"] = out
    return request


def _unchanged(conversion: Conversion, message: Any) -> bool:
    snapshot = conversion.snapshots.get(message.id) if message.id else None
    return snapshot is not None and snapshot == message


def _groups(conversion: Conversion, messages: list[Any]) -> list[tuple[int | None, list[Any]]]:
    """``messages`` in runs by the request message they came from (``None``: messages the compactor made)."""
    groups: list[tuple[int | None, list[Any]]] = []
    for message in messages:
        origin = conversion.origin.get(message.id) if message.id else None
        if groups and groups[-1][0] == origin:
            groups[-1][1].append(message)
        else:
            groups.append((origin, [message]))
    return groups


def _whole(conversion: Conversion, origin: int, group: list[Any]) -> bool:
    """Whether ``group`` is exactly the LangChain messages request message ``origin`` became, unchanged."""
    ids = [mid for mid, i in conversion.origin.items() if i == origin]
    return [m.id for m in group] == ids and all(_unchanged(conversion, m) for m in group)
