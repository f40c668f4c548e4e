"""What seed 001's summary takes from the history itself: entity ids and the task list.

Seed 001: "Entity IDs are critical" and "Task list is critical — extract from the latest
reportProgress call". The model may forget both, so the compactor extracts them (STRAT-2).

* Entity ids (SPEC ENT-1): the values of identifier-like keys (``id``, ``*_id``,
  ``*Id``, ``*_ids``, ...) at any depth of a tool result that is JSON, strings or
  integers, plus whatever a caller's `EntityRule` adds for its own domain.
* The task list (SPEC ENT-2): the items of the latest call of a plan or to-do tool,
  described by a `TaskListTool`; seed 001's ``reportProgress`` is the default, and
  the plan tools of common coding agents are presets.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from .rounds import Message

ID_KEY = re.compile(
    r"(?i:^(?:id|ids|uuid|guid)$)"  # id, ID, uuid ...
    r"|(?i:[_\-.](?:id|ids|uuid|guid)$)"  # user_id, order-ids, item.uuid
    r"|[a-z0-9](?:Id|Ids|ID|IDs|Uuid|UUID|Guid|GUID)$"  # userId, orderIDs
)
"""The default identifier-like keys (ENT-1)."""


@dataclass(frozen=True)
class EntityRule:
    """Which keys of a JSON tool result hold entity ids (SPEC ENT-1).

    ``keys``: extra glob patterns matched against a key (``"*_number"``, ``"sku"``);
    ``match``: a callable ``(key, value) -> bool`` for anything else. With ``default``
    off, only these count.
    """

    keys: tuple[str, ...] = ()
    match: Callable[[str, Any], bool] | None = None
    default: bool = True

    def is_id(self, key: str, value: Any) -> bool:
        if self.default and ID_KEY.search(key):
            return True
        if any(fnmatch.fnmatchcase(key, pattern) for pattern in self.keys):
            return True
        return self.match is not None and bool(self.match(key, value))


@dataclass(frozen=True)
class Entity:
    """One entity id found in a tool result, with what the object around it says."""

    id: str
    key: str
    kind: str | None = None
    title: str | None = None
    status: str | None = None

    @property
    def describes(self) -> bool:
        """Whether the object around the id is the entity itself (key ``id``), not a reference to it."""
        return self.key.lower() == "id"


DEFAULT_RULE = EntityRule()
"""Identifier-like keys only (ENT-1), the rule when a caller gives none."""


def entity_ids_in(data: Any, rule: EntityRule = DEFAULT_RULE) -> Iterator[Entity]:
    """The entity ids in a parsed JSON value, depth first, in document order (ENT-1)."""
    if isinstance(data, list):
        for item in data:
            yield from entity_ids_in(item, rule)
        return
    if not isinstance(data, dict):
        return
    for key, value in data.items():
        if rule.is_id(str(key), value):
            for scalar in value if isinstance(value, list) else [value]:
                if _id_value(scalar):
                    yield _entity(str(scalar), str(key), data)
        if isinstance(value, (dict, list)):
            yield from entity_ids_in(value, rule)


def _id_value(value: Any) -> bool:
    """Strings (one line, not blank) and integers (not booleans) can be ids."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, str) and bool(value.strip()) and "\n" not in value)


def _entity(value: str, key: str, around: dict[str, Any]) -> Entity:
    """An ``id`` describes the object holding it; a ``user_id`` only names another entity."""
    if key.lower() != "id":  # a reference: it names the entity, it does not describe it
        return Entity(value, key, kind=key)
    title = around.get("title") or around.get("name")
    status = around.get("status")
    return Entity(
        value,
        key,
        kind=str(around.get("type") or "Entity"),
        title=str(title) if title else None,
        status=str(status) if isinstance(status, str) else None,
    )


def json_value(text: str) -> Any:
    """``text`` parsed as JSON, or None when it is not JSON."""
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return None


# --- the task list (ENT-2)


@dataclass(frozen=True)
class TaskListTool:
    """A tool whose call arguments carry the agent's whole task list: ``{items: [{title, status}]}``."""

    name: str
    items: str
    title: str
    status: str = "status"


REPORT_PROGRESS = TaskListTool("reportProgress", "tasks", "title")
"""Seed 001's tool: ``reportProgress({"tasks": [{"title", "status"}]})``."""
TODO_WRITE = TaskListTool("TodoWrite", "todos", "content")
"""A to-do writer, as Claude Code's: ``TodoWrite({"todos": [{"content", "status", ...}]})``."""
UPDATE_PLAN = TaskListTool("update_plan", "plan", "step")
"""A plan updater, as OpenAI Codex CLI's: ``update_plan({"plan": [{"step", "status"}]})``."""
CODING_AGENT_TASK_LISTS = (REPORT_PROGRESS, TODO_WRITE, UPDATE_PLAN)


@dataclass(frozen=True)
class Task:
    title: str
    status: str


def tasks_of_call(call: Any, tools: Iterable[TaskListTool]) -> list[Task] | None:
    """The task list a tool call sets, or None when it is not a task-list call."""
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict):
        return None
    for tool in tools:
        if function.get("name") == tool.name:
            arguments = json_value(function.get("arguments", ""))
            items = arguments.get(tool.items) if isinstance(arguments, dict) else None
            if isinstance(items, list):
                return [_task(item, tool) for item in items if isinstance(item, dict)]
    return None


def _task(item: dict[str, Any], tool: TaskListTool) -> Task:
    return Task(str(item.get(tool.title, "")), str(item.get(tool.status, "pending")))


def latest_task_list(messages: Sequence[Message], tools: Sequence[TaskListTool]) -> list[Task] | None:
    """The tasks of the latest task-list call in ``messages`` (last message, last call), or None."""
    for message in reversed(messages):
        calls = cast(Mapping[str, Any], message).get("tool_calls") or []
        for call in reversed(calls):
            tasks = tasks_of_call(call, tools)
            if tasks is not None:
                return tasks
    return None
