"""An independent compactor written from SPEC Part A alone (not from the reference), making
other legitimate choices: ``async def compact``, core profile only, no summarizer, and it
*rejects* a history with a tool call in flight by raising ``ValueError`` (CORE-9 allows it).

It keeps the system messages and the last ``keep_recent_rounds`` non-system rounds once the
iteration reaches ``threshold_iterations`` or chars/4 reaches ``max_context_tokens``.
A fixture of tests/test_independent.py: a correct compactor the suite must pass.
"""

from __future__ import annotations

import json
from typing import Any

SYSTEM = ("system", "developer")


def _rounds(messages: list[dict]) -> list[list[dict]]:
    grouped: list[list[dict]] = []
    for message in messages:
        if message["role"] == "tool" and grouped:
            grouped[-1].append(message)
        else:
            grouped.append([message])
    return grouped


def _open_call(last: list[dict]) -> bool:
    asked = {call["id"] for call in last[0].get("tool_calls") or []}
    return bool(asked - {m.get("tool_call_id") for m in last[1:]})


class Truncating:
    profiles = frozenset({"core"})

    def __init__(self, settings: Any) -> None:
        self.t = settings.threshold_iterations
        self.m = settings.max_context_tokens
        self.k = settings.keep_recent_rounds

    def estimate_tokens(self, messages: list[dict]) -> int:
        return len(json.dumps([m.get("content") for m in messages], ensure_ascii=False)) // 4

    async def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        rounds = _rounds(messages)
        if rounds and _open_call(rounds[-1]):
            raise ValueError(f"message {len(messages) - 1}: a tool call is still unanswered; compact between rounds")
        if iteration < self.t and self.estimate_tokens(messages) < self.m:
            return messages
        system = [m for m in messages if m["role"] in SYSTEM]
        others = [r for r in rounds if r[0]["role"] not in SYSTEM]
        if len(others) <= self.k:
            return messages
        return system + [m for r in others[-self.k :] for m in r]


def factory(settings: Any) -> Truncating:
    return Truncating(settings)
