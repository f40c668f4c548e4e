"""A trace's history seen by the replay, whatever its wire format (issue 13, replay across formats).

The replay (`benchmarks.replay`) walks a history unit by unit: chat-completions messages,
Responses items, or Anthropic messages (the request's ``system`` as a first unit of its own, so
every call counts it). A `View` says, for one format, how the units group into rounds (a model
call's answer with its tool results, or a turn appended without a call), how to put units back
into the format's history, and how the replay measures a unit:

* its tokens are the exact o200k tokens of its chat-completions form (`ExactTokens`, chat
  overhead included) when it has a faithful one (`across_formats.to_chat`), else the o200k tokens
  of its JSON text (a ``reasoning`` or ``compaction`` item, a message with a ``thinking`` block:
  what the request carries for it; SPEC XFMT-5);
* entity ids and task lists are read from the units' chat forms; the retention text is that
  form's readable text, plus every string of a unit without one except its opaque fields.

So a trace with a faithful chat form measures the same in its own format as in chat-completions.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from compaction_suite.conformance import formats
from compaction_suite.conformance.formats import anthropic, chat, responses
from compaction_suite.message import SYSTEM_ROLES

from .across_formats import NotFaithful, to_chat

Unit = dict[str, Any]
OPAQUE = ("encrypted_content", "signature", "data", "id", "call_id", "tool_use_id", "type", "role", "status")
"""Fields of a unit with no chat form that hold no readable text (left out of the retention text)."""
MODEL_ITEMS = ("reasoning", "function_call", "custom_tool_call", "local_shell_call")
"""Responses items a model call produces, besides assistant messages."""


@dataclass
class Round:
    """Units kept or dropped as one; ``kind`` as `reference.rounds` names them (``system``,
    ``user``, ``assistant``, ``tool_calls``; ``other`` for a provider's own items)."""

    kind: str
    units: list[Unit]
    answer: int = 1
    """How many leading units the model wrote (its output tokens) in an assistant round."""


class View:
    """One wire format's units, rounds and measures (module docstring)."""

    def __init__(self, wire_format: str) -> None:
        self.wire_format = wire_format
        self.system: Any = None

    def units(self, history: Any) -> list[Unit]:
        """The history's units in order."""
        if self.wire_format != formats.ANTHROPIC:
            return list(history)
        system = history.get("system")
        head = [] if system is None else [{"role": "system", "content": system}]
        return head + list(history.get("messages") or [])

    def history(self, units: Sequence[Unit]) -> Any:
        """The format's history holding ``units`` (the inverse of `units`)."""
        if self.wire_format != formats.ANTHROPIC:
            return list(units)
        request: dict[str, Any] = {"messages": [u for u in units if u.get("role") != "system"]}
        system = [u["content"] for u in units if u.get("role") == "system"]
        if system:
            request = {"system": system[0], **request}
        return request

    def rounds(self, history: Any) -> list[Round]:
        """The history's rounds as its format's module splits them (`formats.WireFormat.rounds`:
        SPEC ROUND-1, read in each format), each system unit a round of its own where it stands."""
        units = self.units(history)
        found: list[Round] = []
        at = 0
        for group in formats.get(self.wire_format).rounds(history):
            while units[at] is not group[0]:  # a unit the format's rounds leave aside: the system prompt
                found.append(_aside(units[at]))
                at += 1
            found.append(self._round(group))
            at += len(group)
        return found + [_aside(unit) for unit in units[at:]]

    def _round(self, units: Sequence[Unit]) -> Round:
        """A round's kind and how many of its leading units the model wrote (its answer)."""
        answer = next((i for i, unit in enumerate(units) if not _by_model(unit)), len(units))
        if answer:
            kind = "tool_calls" if any(CALLS[self.wire_format](unit) for unit in units) else "assistant"
        else:
            kind = "user" if units[0].get("role") == "user" else "other"
        return Round(kind, list(units), max(answer, 1))

    def chat(self, unit: Unit) -> list[Unit] | None:
        """The unit's faithful chat-completions form, or None when it has none."""
        if self.wire_format == formats.CHAT or (unit.get("role") == "system" and self.wire_format == formats.ANTHROPIC):
            return [unit]
        try:
            native = [unit] if self.wire_format == formats.RESPONSES else {"messages": [unit]}
            return to_chat(native, self.wire_format)
        except (NotFaithful, TypeError, AttributeError):
            return None

    def text(self, units: Sequence[Unit]) -> str:
        """What the retention figures search (module docstring)."""
        parts = []
        for unit in units:
            faithful = self.chat(unit)
            parts.append(chat.readable_text(faithful) if faithful is not None else "\n".join(_strings(unit)))
        return "\n".join(parts)

    def chat_messages(self, units: Sequence[Unit]) -> list[Unit]:
        """The chat forms of the units that have one (entity ids and task lists are read there)."""
        return [m for u in units for m in (self.chat(u) or [])]

    def violations(self, before: Sequence[Unit], after: Any) -> list[str]:
        """The clauses a compaction broke, judged in this format (the format's every-output checks:
        CORE-1..4 and CORE-6 for chat-completions, RESP-1..7, ANTH-1..5), as ``"CLAUSE: reason"``."""
        checks = formats.get(self.wire_format).structural(self.history(before), after)
        return [f"{clause}: {reason}" for clause, reason in checks.items() if reason]


def unit_tokens(view: View, unit: Unit, exact: Any) -> int:
    """A unit's tokens: its chat form's exact count, else its JSON text's (SPEC XFMT-5)."""
    faithful = view.chat(unit)
    if faithful is not None:
        return sum(exact.units(m) for m in faithful)
    return exact.tokens(json.dumps(unit, ensure_ascii=False, separators=(",", ":")))


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() if k not in OPAQUE for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _by_model(unit: Unit) -> bool:
    """Whether the model wrote ``unit``: an assistant message (every format) or a Responses item a model call produces."""
    return unit.get("role") == "assistant" or responses.kind(unit) in MODEL_ITEMS


def _aside(unit: Unit) -> Round:
    """A unit outside every round of its format: a system (or developer) prompt."""
    return Round("system" if unit.get("role") in SYSTEM_ROLES else "other", [unit])


CALLS: dict[str, Callable[[Unit], Any]] = {
    formats.CHAT: chat.call_ids,
    formats.RESPONSES: lambda unit: responses.kind(unit) in MODEL_ITEMS[1:],
    formats.ANTHROPIC: anthropic.tool_uses,
}
"""Whether a unit calls a tool, per format."""
