"""An independent compactor written from SPEC Part A alone, with the defect of Strands' sliding
window on Bedrock (strands-agents/sdk-typescript#727): Anthropic-shaped messages sent to Bedrock
Converse (it declares ``providers: ["anthropic", "bedrock-converse"]``), trimmed to the last
``WINDOW`` messages, the cut moved back only as far as needed to keep each ``tool_result`` with
its ``tool_use``, so the window may start with an assistant turn: Bedrock answers "A
conversation must start with a user message" (SPEC CORE-17).

No summarizer; seed 000's trigger; the top-level system prompt is never touched. A fixture of
tests/test_independent.py: a defective compactor the suite must reject, with CORE-17.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

WINDOW = 6


def _results(message: dict) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def _uses(message: dict) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content)


class BedrockSlidingWindow:
    profiles = frozenset({"core"})
    capabilities: ClassVar[dict[str, Any]] = {"wire_format": "anthropic-messages", "providers": ["anthropic", "bedrock-converse"]}

    def __init__(self, settings: Any) -> None:
        self.t, self.m = settings.threshold_iterations, settings.max_context_tokens

    def estimate_tokens(self, request: dict) -> int:
        return len(json.dumps(request)) // 4

    def compact(self, request: dict, *, iteration: int) -> dict:
        messages = request["messages"]
        if messages and _uses(messages[-1]):
            return dict(request)  # a tool_use waiting for its result
        if (iteration < self.t and self.estimate_tokens(request) < self.m) or len(messages) <= WINDOW:
            return dict(request)
        start = len(messages) - WINDOW
        while start > 0 and _results(messages[start]):
            start -= 1  # keep the tool_use its results answer
        return {**request, "messages": messages[start:]}


def factory(settings: Any) -> BedrockSlidingWindow:
    return BedrockSlidingWindow(settings)
