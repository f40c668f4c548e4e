"""An Anthropic-messages compactor written from SPEC.md alone (SPEC Part A, "Wire formats", ANTH-1..6).

It works on ``{"system": ..., "messages": [...]}``, the part of a Messages API request a
compaction may touch. When seed 000's trigger fires (``iteration >= T or estimated tokens >=
M``) it keeps the top-level ``system`` as it is and the messages from the K-th last user turn
on (a user message that is not a tool-result message); everything older is dropped. Cutting in
front of a user turn keeps each ``tool_use`` with the ``tool_result`` in the next message and
each assistant turn, thinking blocks included, whole. A turn still waiting for a tool result
comes back unchanged.

    compaction-suite check --path examples/python anthropic_truncating:factory
"""

from __future__ import annotations

import json
from typing import Any

Request = dict[str, Any]


def factory(settings: Any) -> AnthropicTruncating:
    return AnthropicTruncating(settings.threshold_iterations, settings.max_context_tokens, settings.keep_recent_rounds)


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def _is_turn(message: dict[str, Any]) -> bool:
    """A user message the person wrote (not the tool results the agent loop sends back)."""
    return message["role"] == "user" and not any(b.get("type") == "tool_result" for b in _blocks(message))


class AnthropicTruncating:
    profiles = {"core", "trigger"}
    capabilities = {"wire_format": "anthropic-messages"}

    def __init__(self, threshold_iterations: int, max_context_tokens: int, keep_turns: int) -> None:
        self.threshold_iterations = threshold_iterations
        self.max_context_tokens = max_context_tokens
        self.keep_turns = max(1, keep_turns)

    def estimate_tokens(self, request: Request) -> int:
        return len(json.dumps(request)) // 4

    def compact(self, request: Request, *, iteration: int) -> Request:
        messages = request["messages"]
        fires = iteration >= self.threshold_iterations or self.estimate_tokens(request) >= self.max_context_tokens
        if not fires or _pending(messages):
            return dict(request)
        starts = [i for i, m in enumerate(messages) if _is_turn(m)]
        if len(starts) <= self.keep_turns:
            return dict(request)
        return {**request, "messages": messages[starts[-self.keep_turns] :]}


def _pending(messages: list[dict[str, Any]]) -> bool:
    """The last assistant turn used a tool whose result is not in the next message (ANTH-6)."""
    last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=None)
    if last is None:
        return False
    uses = {b.get("id") for b in _blocks(messages[last]) if b.get("type") == "tool_use"}
    answered = {b.get("tool_use_id") for b in _blocks(messages[last + 1])} if last + 1 < len(messages) else set()
    return bool(uses - answered)
