"""Tool results the provider marks as errors (SPEC CORE-62).

A provider may carry, beside a tool result's content, a mark that the call failed: the Messages API's
``tool_result`` block takes ``is_error: true`` ("Set to true if the tool execution resulted in an
error", the API reference for ``ToolResultBlockParam``), which LangChain keeps as
``ToolMessage.status="error"``, Strands as a ``toolResult``'s ``status: "error"`` and Bedrock's
Converse API as the same field. A compaction that replaces such a result's content in place
(clearing it, shortening it, offloading it to a file and leaving a notice) keeps the call's answer
in the context; without the mark the model reads that answer as the tool having succeeded.

Of the wire formats the suite draws only the Messages API marks a result (a chat-completions
``tool`` message and a Responses ``function_call_output`` carry no such field), so only it has
marked results here; the judge reads any format through `marked` and `results`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .formats import ANTHROPIC
from .formats.anthropic import blocks
from .oracle import canonical, same
from .violation import Violation

if TYPE_CHECKING:
    from .formats import WireFormat

REASON = "error-mark-dropped"


def results(fmt: WireFormat, item: Any) -> list[dict[str, Any]]:
    """The tool results ``item`` (one item of ``fmt``) holds that can carry an error mark."""
    if fmt.name != ANTHROPIC:
        return []
    return [b for b in blocks(item) if b.get("type") == "tool_result"]


def is_marked(result: dict[str, Any]) -> bool:
    """Whether a tool result says its call failed (``is_error: true``)."""
    return result.get("is_error") is True


def call_of(result: dict[str, Any]) -> Any:
    return result.get("tool_use_id")


def content(result: dict[str, Any]) -> str:
    """What a tool result says, as the model reads it: its content as blocks (a string is one text
    block), ``cache_control`` breakpoints aside (they change what is cached, not what is read)."""
    value = result.get("content")
    parts = [{"type": "text", "text": value}] if isinstance(value, str) else value if isinstance(value, list) else []
    return canonical([{k: v for k, v in p.items() if k != "cache_control"} if isinstance(p, dict) else p for p in parts])


def marked(fmt: WireFormat, history: Any) -> dict[Any, dict[str, Any]]:
    """The results of ``history`` marked as errors, by the call they answer; a call answered more
    than once in the history (a reused id) is left out, since which result the output keeps cannot
    be told."""
    answers: dict[Any, list[dict[str, Any]]] = {}
    for item in fmt.items(history):
        for result in results(fmt, item):
            answers.setdefault(call_of(result), []).append(result)
    return {call: found[0] for call, found in answers.items() if call is not None and len(found) == 1 and is_marked(found[0])}


def _in_output(fmt: WireFormat, out: Any) -> Iterable[tuple[int, dict[str, Any]]]:
    for j, item in enumerate(fmt.items(out)):
        for result in results(fmt, item):
            yield j, result


def _mark(result: dict[str, Any]) -> str:
    return f"is_error: {json.dumps(result['is_error'])}" if "is_error" in result else "no is_error"


def _preview(value: str, limit: int = 60) -> str:
    text = " ".join(value.split())
    return repr(text[:limit] + ("…" if len(text) > limit else ""))


def error_mark_kept(fmt: WireFormat, history: Any, out: Any) -> Violation | None:
    """CORE-62: a result of ``out`` answering a call whose one result in ``history`` is marked as an
    error, and whose content the compaction changed (cleared, shortened, offloaded: replaced in
    place), is still marked. A result whose content is unchanged is not judged (Decision: what
    the compaction did), nor one the compaction removed."""
    if not fmt.well_formed(out) or same(history, out):
        return None
    errors = marked(fmt, history)
    if not errors:
        return None
    for j, result in _in_output(fmt, out):
        before = errors.get(call_of(result))
        if before is None or is_marked(result) or content(result) == content(before):
            continue
        said = " ".join(p.get("text", "") for p in blocks({"content": result.get("content")}) if p.get("type") == "text")
        return Violation(
            REASON,
            f"output item {j} ({fmt.role(fmt.items(out)[j])}) sends the result of call {call_of(result)!r}, which the input marks as an error "
            f"(is_error: true), with its content replaced ({_preview(said)}) and without the mark ({_mark(result)}): "
            "the model reads the failed call as one that succeeded",
        )
    return None
