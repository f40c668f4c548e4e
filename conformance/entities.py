"""The verifier's reading of entity ids and task lists (SPEC ENT-1, ENT-2): what STRUCT-2,
STRUCT-3 and the benchmark replay count as an entity id and as the task list.

Written apart from the reference's ``reference/extraction.py`` (SPEC ENT-3) and apart from the
history generators (`conformance.histories`): judging imports no Hypothesis (issue 24).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Sequence
from typing import Any

from compaction_suite.message import Message

PROGRESS_TOOL = "reportProgress"
"""Seed 001's task-list tool (SPEC STRUCT-3)."""

__all__ = [
    "CODING_AGENT_TASK_LISTS",
    "PROGRESS_TOOL",
    "SEED_001_TASK_LIST",
    "IdRule",
    "TaskListTools",
    "entity_ids",
    "id_rule",
    "is_id_key",
    "latest_task_list",
    "latest_task_titles",
]


def _text_of(content: Any) -> str:
    """A message's text: string content, or its text parts joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = (part.get("text") for part in content if isinstance(part, dict) and part.get("type") == "text")
        return "\n".join(t for t in texts if isinstance(t, str))
    return ""


def _json_object(text: Any) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return None
    return value if isinstance(value, dict) else None


IdRule = Callable[[str, Any], bool]
"""A caller's own entity-id rule: ``(key, value) -> bool`` (SPEC ENT-1)."""

_ID_WORDS = ("id", "ids", "uuid", "guid")
_CAMEL_ENDINGS = ("Id", "Ids", "ID", "IDs", "Uuid", "UUID", "Guid", "GUID")
_LOWER_OR_DIGIT = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def is_id_key(key: str) -> bool:
    """SPEC ENT-1's default identifier-like keys, written apart from the reference's regex:
    ``id``/``ids``/``uuid``/``guid`` (any case), those words after ``_``, ``-`` or ``.``
    (``user_id``, ``order-ids``), or camel case after a lowercase ASCII letter or a digit
    (``userId``, ``orderIDs``, ``itemUuid``)."""
    lower = key.lower()
    if lower in _ID_WORDS:
        return True
    if any(lower.endswith(sep + word) for word in _ID_WORDS for sep in "_-."):
        return True
    return any(key.endswith(end) and key[: -len(end)][-1:] in _LOWER_OR_DIGIT for end in _CAMEL_ENDINGS)


def id_rule(keys: Sequence[str] = (), match: IdRule | None = None, default: bool = True) -> IdRule:
    """ENT-1 with a caller's additions: glob ``keys`` (``"*_number"``) and/or a ``match`` callable."""

    def rule(key: str, value: Any) -> bool:
        return (
            (default and is_id_key(key))
            or any(fnmatch.fnmatchcase(key, pattern) for pattern in keys)
            or (match is not None and bool(match(key, value)))
        )

    return rule


class _Emit(list):
    """Ids met at a key, waiting on the stack for their turn."""


def _ids_in(value: Any, rule: IdRule) -> list[str]:
    """Entity ids in a parsed JSON value, in document order (an explicit stack, depth first:
    a key's ids come before the ids nested in its value, and both before the next key's)."""
    found: list[str] = []
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, _Emit):
            found += node
            continue
        entries: list[Any] = []
        if isinstance(node, list):
            entries = [item for item in node if isinstance(item, (dict, list))]
        elif isinstance(node, dict):
            for key, item in node.items():
                if rule(str(key), item):
                    entries.append(_Emit(str(v) for v in (item if isinstance(item, list) else [item]) if _scalar_id(v)))
                if isinstance(item, (dict, list)):
                    entries.append(item)
        stack.extend(reversed(entries))
    return found


def _scalar_id(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, str) and value.strip() != "" and "\n" not in value


def entity_ids(history: Sequence[Message], rule: IdRule | None = None) -> list[str]:
    """The entity ids ``history``'s tool results carry, in order of first appearance, without
    repeats (SPEC ENT-1, STRUCT-2).

    An entity id is the value (a string on one line, or an integer, or each such item of a
    list) of an identifier-like key (`is_id_key`, or ``rule``) at any depth of a ``tool``
    message whose text parses as JSON. The text is the string content, or the text parts
    joined by newlines. Summary messages are not tool messages, so ids they mention do
    not count.
    """
    rule = rule or id_rule()
    found: dict[str, None] = {}
    for message in history:
        if isinstance(message, dict) and message.get("role") == "tool":
            try:
                value = json.loads(_text_of(message.get("content")))
            except (TypeError, ValueError):
                continue
            for entity in _ids_in(value, rule):
                found.setdefault(entity)
    return list(found)


TaskListTools = dict[str, tuple[str, str]]
"""Task-list tools by name: ``{tool name: (key of the list in the arguments, key of a title)}``."""

SEED_001_TASK_LIST: TaskListTools = {PROGRESS_TOOL: ("tasks", "title")}
"""Seed 001's ``reportProgress({"tasks": [{"title", "status"}]})`` (SPEC STRUCT-3)."""
CODING_AGENT_TASK_LISTS: TaskListTools = {
    **SEED_001_TASK_LIST,
    "TodoWrite": ("todos", "content"),  # a to-do writer, as Claude Code's
    "update_plan": ("plan", "step"),  # a plan updater, as OpenAI Codex CLI's
}
"""SPEC ENT-2's presets: seed 001's tool and the plan tools of common coding agents."""


def _tasks_of(call: Any, tools: TaskListTools = SEED_001_TASK_LIST) -> tuple[list[dict[str, Any]], str] | None:
    """(the task items, their title key) of a task-list call, or None for another call or unreadable arguments."""
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or function.get("name") not in tools:
        return None
    items_key, title_key = tools[function["name"]]
    tasks = (_json_object(function.get("arguments")) or {}).get(items_key)
    return ([task for task in tasks if isinstance(task, dict)], title_key) if isinstance(tasks, list) else None


def _latest(history: Sequence[Message], tools: TaskListTools) -> tuple[list[dict[str, Any]], str] | None:
    for message in reversed(history):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        for call in reversed(message.get("tool_calls") or []):
            tasks = _tasks_of(call, tools)
            if tasks is not None:
                return tasks
    return None


def latest_task_list(history: Sequence[Message]) -> list[dict[str, Any]] | None:
    """The tasks of the latest ``reportProgress`` call in ``history``, or None if there is none (SPEC STRUCT-3).

    The latest call is the last one in message order (and, among parallel calls of
    one message, in call order) whose ``arguments`` parse as a JSON object with a
    list ``"tasks"``; calls with unreadable arguments are passed over. Whether the call
    was answered does not matter. The result keeps the dict items of ``"tasks"``
    (``{"title", "status"}`` in generated histories) in their order. Task lists in
    earlier summaries are not calls and do not count.
    """
    latest = _latest(history, SEED_001_TASK_LIST)
    return latest[0] if latest else None


def latest_task_titles(history: Sequence[Message], tools: TaskListTools = SEED_001_TASK_LIST) -> list[str] | None:
    """The titles of the latest task-list call's items (SPEC ENT-2), or None when there is no such call.

    Like `latest_task_list`, for any of ``tools`` (``CODING_AGENT_TASK_LISTS``: seed 001's
    ``reportProgress``, a to-do writer's ``todos[].content``, a plan updater's ``plan[].step``).
    """
    latest = _latest(history, tools)
    return [str(task.get(latest[1], "")) for task in latest[0]] if latest else None
