"""Replay across wire formats: a compactor of one format on a trace of another, only where the
mapping between the two is faithful (SPEC Part A, "Wire formats"; issue 13, replay and importers).

The replay harness (`benchmarks.replay`) measures chat-completions contexts. A compactor of
another format (``capabilities["wire_format"]``) is replayed through `Bridged`: each context goes
to it in its own format (the format module's ``from_chat``), and what it returns comes back as
chat-completions messages (`to_chat`). A conversion is used only when it is faithful, and that
is checked on every history, not assumed:

* chat -> format: ``to_chat(from_chat(messages)) == messages`` (a call's ``arguments`` string
  counts as the same when it parses to the same JSON value, and the original text is restored);
* format -> chat: every item or block has a chat-completions form. A Responses ``reasoning`` or
  ``compaction`` item, an Anthropic ``thinking``/``redacted_thinking`` block, a hosted-tool item or
  a non-text tool output has none: the conversion raises `NotFaithful`, naming it, and the replay
  reports that compaction point as not comparable instead of measuring something else.

A trace imported in its native format (`benchmarks.traces.codex`, `claude_code_messages`) replays
through any compactor by `to_chat` under the same rule: a Codex rollout with reasoning items has
no faithful chat-completions form (the chat-completions importer of Claude Code drops thinking
blocks and says so in its notes; that is a different, documented trace).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from compaction_suite.adapters._common import arguments_text, parse_arguments
from compaction_suite.conformance import formats
from compaction_suite.conformance.formats import anthropic, responses
from compaction_suite.message import Message


class NotFaithful(ValueError):
    """No faithful mapping between the two formats for this history; the text says what has none."""


# --- format -> chat-completions ------------------------------------------------------------


def to_chat(history: Any, wire_format: str, *, arguments: dict[str, str] | None = None) -> list[Message]:
    """``history`` in ``wire_format`` as chat-completions messages; raises `NotFaithful`.
    ``arguments``: a call id's original ``arguments`` text, restored when it parses the same."""
    if wire_format == formats.CHAT:
        return list(history)
    if wire_format == formats.RESPONSES:
        return _responses_to_chat(history, arguments or {})
    if wire_format == formats.ANTHROPIC:
        return _anthropic_to_chat(history, arguments or {})
    raise ValueError(f"unknown wire format {wire_format!r} (known: {', '.join(formats.NAMES)})")


CARRIED = {
    "message": {"type", "role", "content"}, "function_call": {"type", "call_id", "name", "arguments"},
    "function_call_output": {"type", "call_id", "output"}, "input_text": {"type", "text"}, "output_text": {"type", "text", "annotations"},
    "input_image": {"type", "image_url", "detail"}, "text": {"type", "text"}, "image": {"type", "source"},
    "tool_use": {"type", "id", "name", "input"}, "tool_result": {"type", "tool_use_id", "content"},
}  # fmt: skip
"""The keys of each item, part or block that have a chat-completions form (Responses items' ``id``
and ``status`` are the API's bookkeeping, not content: dropped). Any other key (``is_error: true``,
``cache_control``, ``citations``, non-empty ``annotations``, an image's ``detail`` other than
``auto``) makes the conversion not faithful."""


def _carried(thing: dict[str, Any], where: str) -> None:
    kind = thing.get("type", "message")
    extra = set(thing) - CARRIED.get(kind, set()) - ({"id", "status"} if kind in ("message", "function_call", "function_call_output") else set())
    extra -= {k for k in ("is_error", "annotations") if not thing.get(k)}
    if thing.get("detail", "auto") != "auto":
        extra.add("detail")
    if extra:
        raise NotFaithful(f"{where}: {sorted(extra)} of a {kind!r} has no chat-completions form")


def _text_parts(parts: Any, kinds: Sequence[str], where: str) -> str | list[dict[str, Any]]:
    if isinstance(parts, str):
        return parts
    out: list[dict[str, Any]] = []
    for part in parts or []:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind is not None:
            _carried(part, where)
        if kind in kinds:
            out.append({"type": "text", "text": part.get("text", "")})
        elif kind == "input_image" and isinstance(part.get("image_url"), str):
            out.append({"type": "image_url", "image_url": {"url": part["image_url"]}})
        elif kind == "image" and isinstance(part.get("source"), dict) and part["source"].get("type") == "base64":
            out.append({"type": "image_url", "image_url": {"url": f"data:{part['source'].get('media_type')};base64,{part['source'].get('data')}"}})
        else:
            raise NotFaithful(f"{where}: a {kind!r} part has no chat-completions form")
    return out


def _joined(parts: Any, kinds: Sequence[str], where: str) -> str:
    found = _text_parts(parts, kinds, where)
    if isinstance(found, str):
        return found
    if any(p["type"] != "text" for p in found):
        raise NotFaithful(f"{where}: an image in an assistant message or a tool result has no chat-completions form")
    return "\n".join(p["text"] for p in found)


def _call(call_id: Any, name: Any, value: Any, arguments: dict[str, str]) -> dict[str, Any]:
    text = arguments_text(value, arguments.get(str(call_id)))
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def _responses_to_chat(items: Any, arguments: dict[str, str]) -> list[Message]:
    out: list[Message] = []
    for i, item in enumerate(items):
        kind, where = responses.kind(item), responses.where(items, i)
        if kind in ("message", "function_call", "function_call_output"):
            _carried(item, where)
        if kind == "message" and item.get("role") in ("system", "developer", "user"):
            out.append({"role": item["role"], "content": _text_parts(item.get("content"), ("input_text",), where)})
        elif kind == "message" and item.get("role") == "assistant":
            out.append({"role": "assistant", "content": _joined(item.get("content"), ("output_text",), where)})
        elif kind == "function_call":
            last = out[-1] if out else None
            if last is None or last["role"] != "assistant":
                last = {"role": "assistant", "content": None}
                out.append(last)
            last.setdefault("tool_calls", []).append(_call(item.get("call_id"), item.get("name"), item.get("arguments"), arguments))
        elif kind == "function_call_output":
            out.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": _joined(item.get("output"), ("input_text", "output_text"), where)})
        else:
            raise NotFaithful(f"{where} has no chat-completions form")
    return out


def _anthropic_to_chat(request: Any, arguments: dict[str, str]) -> list[Message]:
    system = request.get("system") if isinstance(request, dict) else None
    out: list[Message] = []
    if isinstance(system, str):
        out.append({"role": "system", "content": system})
    elif isinstance(system, list):
        out += [{"role": "system", "content": _joined([block], ("text",), "system")} for block in system]
    messages = anthropic.messages_of(request) or []
    for i, message in enumerate(messages):
        where = anthropic.where(messages, i)
        content = message.get("content")
        for block in anthropic.blocks(message):
            if block.get("type") in CARRIED:
                _carried(block, where)
        if message.get("role") == "assistant":
            blocks = anthropic.blocks(message)
            texts = [b for b in blocks if b.get("type") == "text"]
            uses = [b for b in blocks if b.get("type") == "tool_use"]
            if len(texts) + len(uses) < len(blocks):
                other = next(b.get("type") for b in blocks if b.get("type") not in ("text", "tool_use"))
                raise NotFaithful(f"{where}: a {other!r} block has no chat-completions form")
            chat: Message = {"role": "assistant", "content": _joined(texts, ("text",), where) if texts else None}
            if uses:
                chat["tool_calls"] = [_call(b.get("id"), b.get("name"), b.get("input"), arguments) for b in uses]
            out.append(chat)
        elif isinstance(content, str):
            out.append({"role": "user", "content": content})
        else:
            results = [b for b in anthropic.blocks(message) if b.get("type") == "tool_result"]
            out += [{"role": "tool", "tool_call_id": b.get("tool_use_id"), "content": _joined(b.get("content"), ("text",), where)} for b in results]
            rest = [b for b in anthropic.blocks(message) if b.get("type") != "tool_result"]
            if rest:
                out.append({"role": "user", "content": _text_parts(rest, ("text",), where)})
    return out


# --- chat-completions -> format ------------------------------------------------------------


def original_arguments(messages: Sequence[Message]) -> dict[str, str]:
    """Each call id's ``arguments`` text, to restore it on the way back."""
    return {str(c.get("id")): c["function"]["arguments"] for m in messages for c in m.get("tool_calls") or [] if isinstance(c, dict) and isinstance(c.get("function"), dict)}


def from_chat(messages: list[Message], wire_format: str) -> Any:
    """``messages`` in ``wire_format``; raises `NotFaithful` unless the way back gives ``messages``."""
    if wire_format == formats.CHAT:
        return list(messages)
    module = responses if wire_format == formats.RESPONSES else anthropic
    try:
        converted = module.from_chat(messages)
    except (KeyError, TypeError, ValueError) as error:
        raise NotFaithful(f"no {wire_format} form: {type(error).__name__}: {error}") from error
    back = to_chat(converted, wire_format, arguments=original_arguments(messages))
    if _normal(back) != _normal(messages):
        first = next((i for i, (a, b) in enumerate(zip(back, messages)) if _normal([a]) != _normal([b])), min(len(back), len(messages)))
        raise NotFaithful(f"the {wire_format} form of message {first} does not convert back to it")
    return converted


def _normal(messages: Sequence[Message]) -> str:
    """Messages for comparison: parsed call arguments; keys of no meaning to the API (none yet) kept."""
    shown = []
    for m in messages:
        m = dict(m)
        if m.get("tool_calls"):
            m["tool_calls"] = [{**c, "function": {**c["function"], "arguments": parse_arguments(c["function"].get("arguments"))}} for c in m["tool_calls"]]
        shown.append(m)
    return json.dumps(shown, sort_keys=True, default=str)


# --- the replay's view of a compactor of another format ----------------------------------------


class Bridged:
    """A compactor of one wire format seen as a compactor of the trace's format (faithful both
    ways through chat-completions, else `NotFaithful` from ``compact``, which the replay reports
    for that compaction point as not comparable)."""

    def __init__(self, compactor: Any, wire_format: str, trace_format: str = formats.CHAT) -> None:
        self.inner = compactor
        self.wire_format = wire_format
        self.trace_format = trace_format
        self.exchange: tuple[Any, Any] | None = None
        """The last call in the compactor's own format, (what it was given, what it returned),
        before any conversion back: where the replay judges its clauses (SPEC XFMT-6)."""

    def compact(self, history: Any, *, iteration: int) -> Any:
        self.exchange = None
        chat = to_chat(history, self.trace_format)
        arguments = original_arguments(chat)
        sent = from_chat(chat, self.wire_format)
        result = self.inner.compact(sent, iteration=iteration)
        if hasattr(result, "__await__"):
            return self._finish_async(history, sent, result, arguments)
        return self._back(history, sent, result, arguments)

    def _back(self, history: Any, sent: Any, result: Any, arguments: dict[str, str]) -> Any:
        """The result in the trace's format. A compactor that returned what it was given (in its own
        format) changed nothing, so the trace's history comes back as it was: the way back through
        chat-completions can differ from the recorded history in form alone (a tool result's single
        text block as a string), which must not count as a compaction (SPEC XFMT-7)."""
        self.exchange = (sent, result)
        if result == sent:
            return history
        return from_chat(to_chat(result, self.wire_format, arguments=arguments), self.trace_format)

    async def _finish_async(self, history: Any, sent: Any, pending: Any, arguments: dict[str, str]) -> Any:
        return self._back(history, sent, await pending, arguments)

    def violations(self) -> list[str]:
        """The clauses the last output broke, judged in the compactor's own format (its
        structural clauses and its in-flight clause), as ``"CLAUSE: reason"``; none when the
        compactor was not called (its input had no faithful form)."""
        if self.exchange is None:
            return []
        found = formats.get(self.wire_format).findings(*self.exchange)
        return [f"{clause}: {reason}" for clause, reason in found.items()]

    @property
    def capabilities(self) -> dict[str, Any]:
        return {**(getattr(self.inner, "capabilities", None) or {}), formats.KEY: self.trace_format}

    def __getattr__(self, name: str) -> Any:  # last_event, observe_usage, profiles, ...
        return getattr(self.inner, name)


def for_replay(compactor: Any, trace_format: str = formats.CHAT) -> Any:
    """``compactor`` itself when it compacts the trace's format, else `Bridged` over it."""
    wire_format = formats.declared(compactor)
    return compactor if wire_format == trace_format else Bridged(compactor, wire_format, trace_format)
