"""An independent compactor written from SPEC Part A alone, claiming both ``summary`` and
``structured`` (with ``trigger``): the SPEC decision on SUM-1 with STRUCT-4 says its tail is the
last K rounds extended to whole rounds until it holds at least 10 messages.

It asks the suite's summarizer (``settings.client``) for the free text, and writes the entity
ids and the latest task list itself, so both survive whatever the model says. When the
summarizer fails it returns the history unchanged (CORE-10, CORE-11) without claiming
``failure``. A fixture of tests/test_independent.py.
"""

from __future__ import annotations

import json
import re
from typing import Any

SYSTEM = ("system", "developer")
PREFIX = "[Context Summary]"
KEEP_MESSAGES = 10


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return content if isinstance(content, str) else ""


def _said(message: dict) -> str:
    """What the summarizer is sent of a message: its text, and the images it refers to by URL (SPEC CORE-12 Decision: media)."""
    content = message.get("content")
    parts = content if isinstance(content, list) else []
    urls = [(p.get("image_url") or {}).get("url", "") for p in parts if isinstance(p, dict) and p.get("type") == "image_url"]
    return "\n".join([_text(message), *(f"[image: {u}]" for u in urls if u.startswith(("https://", "http://")))])


def _rounds(messages: list[dict]) -> list[list[dict]]:
    grouped: list[list[dict]] = []
    for message in messages:
        if message["role"] == "tool" and grouped:
            grouped[-1].append(message)
        else:
            grouped.append([message])
    return grouped


def _is_summary(round_: list[dict]) -> bool:
    """Whether a round is an earlier compaction's summary message."""
    return round_[0]["role"] == "user" and _text(round_[0]).startswith(PREFIX)


ID_KEY = re.compile(r"(?i:^(ids?|uuids?|guids?)$|[_.-](ids?|uuids?|guids?)$)|[a-z0-9](Ids?|IDs?|Uuids?|UUIDs?|Guids?|GUIDs?)$")
"""SPEC ENT-1's identifier-like keys: id, ids, uuid, guid alone or after _ - . in any case, or in
camel case after a lowercase letter or digit (userId, orderIDs, itemUuid)."""


def _ids(value: Any, key: str | None = None) -> list[str]:
    """ENT-1: values of identifier-like keys at any depth (one-line strings, integers, or lists of them)."""
    if isinstance(value, dict):
        return [i for k, v in value.items() for i in _ids(v, str(k))]
    if isinstance(value, list):
        return [i for v in value for i in _ids(v, key)]
    if key is None or not ID_KEY.search(key) or isinstance(value, bool):
        return []
    if isinstance(value, int) or (isinstance(value, str) and value.strip() and "\n" not in value):
        return [str(value)]
    return []


def _entity_ids(messages: list[dict]) -> list[str]:
    found: list[str] = []
    for m in messages:
        if m["role"] != "tool":
            continue
        try:
            value = json.loads(_text(m))
        except ValueError:
            continue
        found += [i for i in _ids(value) if i not in found]
    return found


def _tasks(messages: list[dict]) -> list[dict]:
    for m in reversed(messages):
        for call in reversed(m.get("tool_calls") or []):
            if call["function"]["name"] != "reportProgress":
                continue
            try:
                tasks = json.loads(call["function"]["arguments"]).get("tasks")
            except (ValueError, AttributeError):
                continue
            if isinstance(tasks, list):
                return [t for t in tasks if isinstance(t, dict)]
    return []


class StructuredSummary:
    profiles = frozenset({"core", "trigger", "summary", "structured"})

    def __init__(self, settings: Any) -> None:
        self.settings = settings

    def estimate_tokens(self, messages: list[dict]) -> int:
        return sum(len(_text(m)) + len(json.dumps(m.get("tool_calls") or [])) for m in messages) // 4

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        s = self.settings
        rounds = _rounds(messages)
        if rounds and {c["id"] for c in rounds[-1][0].get("tool_calls") or []} - {m.get("tool_call_id") for m in rounds[-1][1:]}:
            return messages  # a call in flight: unchanged (CORE-9)
        if iteration < s.threshold_iterations and self.estimate_tokens(messages) < s.max_context_tokens:
            return messages
        system = [m for m in messages if m["role"] in SYSTEM]
        others = [r for r in rounds if r[0]["role"] not in SYSTEM]
        plain = [r for r in others if not _is_summary(r)]  # an earlier summary is folded into the new one, never kept (SUM-4)
        start = max(len(plain) - s.keep_recent_rounds, 0)
        while start > 0 and sum(map(len, plain[start:])) < KEEP_MESSAGES:
            start -= 1
        folded = {id(r) for r in plain[:start]} | {id(r) for r in others if _is_summary(r)}
        older = [m for r in others if id(r) in folded for m in r]
        tail = [m for r in plain[start:] for m in r]
        if not plain[:start] and len(older) <= 1:
            return messages  # nothing older than the tail (TRIG-5)
        try:
            answer = s.client.chat.completions.create(
                model=s.model,
                messages=[
                    {"role": "system", "content": s.summary_prompt or "Summarize this conversation for the agent that continues it."},
                    {"role": "user", "content": "\n".join(f"{m['role']}: {_said(m)}" for m in older)},
                ],
            )
            free_text = (answer.choices[0].message.content or "").strip()
        except Exception:  # noqa: BLE001 - any summarizer failure: keep the full history
            return messages
        if not free_text:
            return messages
        return system + [self._summary(older, free_text)] + tail

    def _summary(self, older: list[dict], free_text: str) -> dict:
        ids = _entity_ids(older)
        tasks = _tasks(older)
        lines = [
            PREFIX,
            "## Conversation Summary (auto-compacted)",
            "### Entities Created/Modified",
            *([f"- {i}" for i in ids] or ["- (none)"]),
            "### Current Task List",
            *([f"- {t.get('title')} ({t.get('status')})" for t in tasks] or ["- (none)"]),
            "### Key Decisions",
            "- (see context)",
            "### Context",
            free_text,
        ]
        return {"role": "user", "content": "\n".join(lines)}


def factory(settings: Any) -> StructuredSummary:
    return StructuredSummary(settings)
