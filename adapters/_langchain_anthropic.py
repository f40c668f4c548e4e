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

The way back is what the model is sent: ``ChatAnthropic._get_request_payload`` on the messages
(its ``_format_messages`` joins a run of tool and human messages into one user message, as the
API itself joins consecutive turns). A message the compactor left as it was (the same LangChain
messages, unchanged, in a row) comes back as the original, as for every adapter
(`adapters/_common.finish`): re-encoding by the provider client is not the compactor's doing.
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
    ``SystemMessage`` when the system prompt lives in the state, else the request's ``system`` sent
    first as ``create_agent`` sends its ``system_prompt``), each run of messages the compactor left as
    they were given back as the request message it came from."""
    lc = requires("langchain_core.messages", "langchain")
    model = model or chat_anthropic()
    kept = [m for m in messages if not isinstance(m, lc.RemoveMessage)]
    in_state = bool(kept) and isinstance(kept[0], lc.SystemMessage)
    apart = conversion.system is not None and not conversion.in_state
    head = [lc.SystemMessage(content=copy.deepcopy(conversion.system))] if apart else []
    request = sent(model, head + kept)
    if apart or (in_state and _unchanged(conversion, kept[0])):
        request["system"] = copy.deepcopy(conversion.system)
    rest = kept[1:] if in_state else kept
    request["messages"] = _originals_back(conversion, rest, request["messages"], model)
    return request


def _unchanged(conversion: Conversion, message: Any) -> bool:
    snapshot = conversion.snapshots.get(message.id) if message.id else None
    return snapshot is not None and snapshot == message


def _originals_back(conversion: Conversion, messages: list[Any], formatted: list[dict[str, Any]], model: Any) -> list[dict[str, Any]]:
    """``formatted`` with each message that is sent exactly as a row of request messages' LangChain
    messages, kept unchanged and in order, is sent alone, replaced by those request messages (a row of
    several: consecutive turns of one role, which ``langchain-anthropic`` joins as the API does)."""
    lc = requires("langchain_core.messages", "langchain")
    runs = _runs(conversion, messages)
    alone: dict[tuple[int, int], tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}

    def renderings(j: int, e: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The row sent last in a request, and sent before another turn (only the last is stripped)."""
        if (j, e) not in alone:
            row = [m for _, run in runs[j:e] for m in run]
            after = lc.HumanMessage("next") if isinstance(row[-1], lc.AIMessage) else lc.AIMessage("next")
            alone[(j, e)] = (sent(model, row)["messages"], sent(model, [*row, after])["messages"][:-1])
        return alone[(j, e)]

    def rendered(j: int, e: int) -> list[dict[str, Any]]:
        return renderings(j, e)[0]

    out: list[dict[str, Any]] = []
    position = 0
    for message in formatted:
        found = None
        for j in range(position, len(runs)):
            e = j
            while found is None and e < len(runs) and runs[e][0] is not None and len(rendered(j, e + 1)) == 1:
                e += 1
                if [message] in renderings(j, e):
                    found = (j, e)
            if found:
                break
        if found is None:
            out.append(message)
            continue
        position = found[1]
        out.extend(copy.deepcopy(conversion.originals[i]) for i, _ in runs[found[0] : found[1]] if i is not None)
    return out


def _runs(conversion: Conversion, messages: list[Any]) -> list[tuple[int | None, list[Any]]]:
    """``messages`` split into runs: ``(index, run)`` for exactly the LangChain messages request message
    ``index`` became, unchanged and in order, else ``(None, [message])``."""
    expected: dict[int, list[str]] = {}
    for mid, index in conversion.origin.items():
        expected.setdefault(index, []).append(mid)
    runs: list[tuple[int | None, list[Any]]] = []
    k = 0
    while k < len(messages):
        i = conversion.origin.get(messages[k].id) if messages[k].id else None
        ids = expected.get(i, []) if i is not None else []
        run = messages[k : k + len(ids)]
        if i is not None and ids and [m.id for m in run] == ids and all(_unchanged(conversion, m) for m in run):
            runs.append((i, run))
            k += len(ids)
        else:
            runs.append((None, [messages[k]]))
            k += 1
    return runs
