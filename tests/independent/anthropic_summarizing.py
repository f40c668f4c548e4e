"""An independent compactor written from SPEC Part A alone: Anthropic Messages requests
(``{"system", "messages"}``), summarized through ``POST /v1/messages`` with the official
``anthropic`` client and its default retries.

When seed 000's trigger fires it keeps the top-level system prompt untouched and every message
from the K-th last user turn on (a user message that is not tool results: cutting there never
separates a ``tool_use`` from its ``tool_result``, and drops each thinking turn whole with its
results), and replaces the older messages with one ``[Context Summary]`` user message written by
the summarizer from those messages, sent as they are. A turn waiting for its tool result, or
any summarizer failure, leaves the request unchanged. A fixture of tests/test_independent.py: a
correct compactor the suite must pass.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

import anthropic

PREFIX = "[Context Summary]"
ASK = "Summarize the conversation so far for the agent that continues it: decisions, ids, open tasks."


def _blocks(message: dict) -> list[dict]:
    content = message.get("content")
    return [{"type": "text", "text": content}] if isinstance(content, str) else [b for b in content or [] if isinstance(b, dict)]


def _results(message: dict) -> list[Any]:
    return [b.get("tool_use_id") for b in _blocks(message) if b.get("type") == "tool_result"]


def _waiting(messages: list[dict]) -> bool:
    for i, m in enumerate(messages):
        uses = [b.get("id") for b in _blocks(m) if b.get("type") == "tool_use"]
        answered = _results(messages[i + 1]) if i + 1 < len(messages) else []
        if any(u not in answered for u in uses):
            return True
    return False


class AnthropicSummarizing:
    profiles = frozenset({"core", "trigger"})
    capabilities: ClassVar[dict[str, str]] = {"wire_format": "anthropic-messages"}

    def __init__(self, settings: Any) -> None:
        self.t, self.m, self.k = settings.threshold_iterations, settings.max_context_tokens, max(1, settings.keep_recent_rounds)
        self.model = settings.model
        root = (settings.base_url or "").removesuffix("/").removesuffix("/v1")
        self.client = anthropic.Anthropic(base_url=root, api_key=settings.api_key, timeout=settings.summarizer_timeout)

    def estimate_tokens(self, request: dict) -> int:
        return len(json.dumps(request)) // 4

    def compact(self, request: dict, *, iteration: int) -> dict:
        messages = request["messages"]
        if _waiting(messages) or (iteration < self.t and self.estimate_tokens(request) < self.m):
            return dict(request)
        turns = [i for i, m in enumerate(messages) if m["role"] == "user" and not _results(m)]
        if len(turns) <= self.k or turns[-self.k] == 0:
            return dict(request)
        cut = turns[-self.k]
        ask = {"model": self.model, "max_tokens": 1024, "messages": [*messages[:cut], {"role": "user", "content": ASK}]}
        if "system" in request:
            ask["system"] = request["system"]
        try:
            answer = self.client.messages.create(**ask)
        except anthropic.AnthropicError:
            return dict(request)
        text = "".join(b.text for b in answer.content if b.type == "text").strip()
        if not text:
            return dict(request)
        return {**request, "messages": [{"role": "user", "content": f"{PREFIX}\n{text}"}, *messages[cut:]]}


def factory(settings: Any) -> AnthropicSummarizing:
    return AnthropicSummarizing(settings)
