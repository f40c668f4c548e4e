"""What a summary looks like and what the compactor itself extracts for it.

SPEC STRAT-1 (seed 000's ``[Context Summary]`` message) and STRAT-2 (seed 001's
structured format, whose entity ids and task list come from the history, not
from the model: `reference.extraction` finds them).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from compaction_suite.text import SUMMARY_PREFIX

from .extraction import DEFAULT_RULE, REPORT_PROGRESS, Entity, EntityRule, Task, TaskListTool, entity_ids_in, json_value, latest_task_list
from .rounds import Message

STRUCTURED_HEADING = "## Conversation Summary (auto-compacted)"
TRUNCATE_CHARS = 200
"""Seed 003's fallback keeps the first 200 characters of each entry (SUMZ-3)."""


def text_of(message: Message) -> str:
    """The text of a message's content: a string, or its text parts joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def image_urls(message: Message) -> list[str]:
    """The URLs of the images a message refers to by URL; an inline ``data:`` image has no
    reference to keep, and its bytes are no text for the summarizer to read (SPEC CORE-12 Decision: media)."""
    content = message.get("content")
    parts = content if isinstance(content, list) else []
    urls = [(p.get("image_url") or {}).get("url", "") for p in parts if isinstance(p, dict) and p.get("type") == "image_url"]
    return [url for url in urls if url.startswith(("https://", "http://"))]


def is_summary(message: Message) -> bool:
    """A summary is a user message whose text starts with ``[Context Summary]`` (SUM-2)."""
    return message.get("role") == "user" and text_of(message).startswith(SUMMARY_PREFIX)


def summary_message(body: str) -> Message:
    """The one user message that replaces the summarized prefix (STRAT-1)."""
    return {"role": "user", "content": f"{SUMMARY_PREFIX}\n{body.strip()}"}


def transcript(messages: Iterable[Message]) -> str:
    """Render messages as plain text for the summarizer, one block per message."""
    blocks = []
    for message in messages:
        role = message["role"]
        if role == "tool":
            blocks.append(f"tool result ({message['tool_call_id']}):\n{text_of(message)}")
            continue
        lines = [f"{role}:"] + ([text_of(message)] if text_of(message) else []) + [f"[image: {url}]" for url in image_urls(message)]
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            lines.append(f"called {function.get('name')}({function.get('arguments')}) [{call['id']}]")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def truncated(messages: Iterable[Message]) -> str:
    """Seed 003's fallback summary: the first 200 characters of each entry (SUMZ-3)."""
    return "\n".join(transcript([m])[:TRUNCATE_CHARS] for m in messages)


# --- seed 001: extracted by the compactor, so they survive whatever the model writes


def entities(messages: Sequence[Message], rule: EntityRule = DEFAULT_RULE) -> list[dict[str, Any]]:
    """Entities whose ids ``messages``' tool results carry, by ``rule`` (STRUCT-2, ENT-1).

    Each is ``{"id", "line"}``, ``line`` being its line in the summary. Entities listed
    by an earlier structured summary are carried forward.
    """
    found: dict[str, dict[str, Any]] = {}
    for message in messages:
        if is_summary(message):
            for line in _section(text_of(message), "Entities Created/Modified"):
                if match := re.search(r"\(id: ([^)]+)\)", line):
                    found.setdefault(match.group(1), {"id": match.group(1), "line": line})
        elif message.get("role") == "tool":
            for entity in entity_ids_in(json_value(text_of(message)), rule):
                # The latest object an id describes wins; a mere reference (``user_id``) only
                # lists an id nothing described yet.
                if entity.describes or entity.id not in found:
                    found[entity.id] = {"id": entity.id, "line": _entity_line(entity)}
    return list(found.values())


def latest_tasks(messages: Sequence[Message], tools: Sequence[TaskListTool] = (REPORT_PROGRESS,)) -> list[str] | None:
    """Task-list lines from the latest task-list call (STRUCT-3, ENT-2), or None.

    An earlier structured summary's task list counts as the latest when no
    newer call follows it.
    """
    for message in reversed(messages):
        if is_summary(message):
            lines = _section(text_of(message), "Current Task List")
            if lines:
                return lines
        tasks = latest_task_list([message], tools)
        if tasks is not None:
            return [_task_line(task) for task in tasks]
    return None


def structured_body(found: list[dict[str, Any]], tasks: list[str] | None, model_text: str) -> str:
    """Seed 001's markdown: entities and tasks from the history, decisions and context from the model."""
    decisions, context = _split_model_text(model_text)
    entity_lines = [e.get("line") or _entity_line(_described(e)) for e in found] or ["- (none)"]
    return "\n".join(
        [
            STRUCTURED_HEADING,
            "### Entities Created/Modified",
            *entity_lines,
            "### Current Task List",
            *(tasks or ["- (no task list yet)"]),
            "### Key Decisions",
            decisions or "- (none reported)",
            "### Context",
            context,
        ]
    )


def _entity_line(entity: Entity) -> str:
    title = f' "{entity.title}"' if entity.title else ""
    status = f" — {entity.status}" if entity.status else ""
    return f"- [{entity.kind}]{title} (id: {entity.id}){status}"


def _described(found: dict[str, Any]) -> Entity:
    """An entity given as its JSON object (``id``, ``type``, ``title`` or ``name``, ``status``)."""
    title = found.get("title") or found.get("name")
    return Entity(str(found["id"]), "id", str(found.get("type", "Entity")), title and str(title), found.get("status"))


def _task_line(task: Task) -> str:
    box = "x" if task.status == "completed" else " "
    return f"- [{box}] {task.title} ({task.status.replace('_', ' ')})"


def _split_model_text(text: str) -> tuple[str, str]:
    """Split the model's answer into (Key Decisions, Context) at its headings, if it wrote them."""
    match = re.search(r"^#*\s*Key Decisions\s*:?\s*$(.*?)^#*\s*Context\s*:?\s*$(.*)", text, re.M | re.S | re.I)
    if match is None:
        return "", text.strip()
    return match.group(1).strip(), match.group(2).strip()


def _section(text: str, title: str) -> list[str]:
    """The non-empty lines under ``### title`` in a structured summary."""
    match = re.search(rf"^### {re.escape(title)}\n(.*?)(?=^### |\Z)", text, re.M | re.S)
    return [line for line in match.group(1).splitlines() if line.strip()] if match else []


