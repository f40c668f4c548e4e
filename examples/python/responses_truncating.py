"""A Responses-items compactor written from SPEC.md alone (SPEC Part A, "Wire formats", RESP-1..8).

It works on the list of items the OpenAI Responses API takes as ``input``. When seed 000's
trigger fires (``iteration >= T or estimated tokens >= M``) it keeps the system and developer
messages, the latest provider ``compaction`` item (an earlier summary), and every item from
the K-th last user message on; everything older is dropped. Cutting only in front of a user
message keeps each ``reasoning`` item with the item it precedes, and a user message counts only
where no output after it answers a call before it (a user may write while a tool runs), so each
``function_call`` stays with its output. A history still waiting for a function's output comes
back unchanged.

    compaction-suite check --path examples/python responses_truncating:factory
"""

from __future__ import annotations

import json
from typing import Any

Item = dict[str, Any]
SYSTEM_ROLES = ("system", "developer")


def factory(settings: Any) -> ResponsesTruncating:
    return ResponsesTruncating(settings.threshold_iterations, settings.max_context_tokens, settings.keep_recent_rounds)


def _kind(item: Item) -> str | None:
    return item.get("type", "message" if "role" in item else None)


class ResponsesTruncating:
    profiles = {"core", "trigger"}
    capabilities = {"wire_format": "responses"}

    def __init__(self, threshold_iterations: int, max_context_tokens: int, keep_turns: int) -> None:
        self.threshold_iterations = threshold_iterations
        self.max_context_tokens = max_context_tokens
        self.keep_turns = max(1, keep_turns)

    def estimate_tokens(self, items: list[Item]) -> int:
        return len(json.dumps(items)) // 4

    def compact(self, items: list[Item], *, iteration: int) -> list[Item]:
        fires = iteration >= self.threshold_iterations or self.estimate_tokens(items) >= self.max_context_tokens
        if not fires or _pending(items):
            return list(items)
        starts = [i for i, item in enumerate(items) if _kind(item) == "message" and item.get("role") == "user" and _keeps_pairs(items, i)]
        if len(starts) <= self.keep_turns:
            return list(items)
        cut = starts[-self.keep_turns]
        system = [item for item in items[:cut] if _kind(item) == "message" and item.get("role") in SYSTEM_ROLES]
        summaries = [item for item in items[:cut] if _kind(item) == "compaction"][-1:]
        return system + summaries + items[cut:]


def _pending(items: list[Item]) -> bool:
    """A function or custom tool call whose output has not arrived yet (RESP-8)."""
    answered = {item.get("call_id") for item in items if _kind(item) in ("function_call_output", "custom_tool_call_output")}
    return any(_kind(item) in ("function_call", "custom_tool_call") and item.get("call_id") not in answered for item in items)


def _keeps_pairs(items: list[Item], cut: int) -> bool:
    """Whether cutting in front of item ``cut`` keeps every output with its call (RESP-1): an
    output may follow its call after other items, such as a message sent while the tool ran."""
    dropped = {item.get("call_id") for item in items[:cut] if _kind(item) in ("function_call", "custom_tool_call")}
    return not any(_kind(item) in ("function_call_output", "custom_tool_call_output") and item.get("call_id") in dropped for item in items[cut:])
