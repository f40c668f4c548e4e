"""An independent compactor written from SPEC Part A alone: OpenAI Responses items, summarized
through ``POST /v1/responses`` (not the compact endpoint), with the official ``openai`` client's
default retries (two), so a transient 429 or 5xx costs a retry, not the compaction.

When seed 000's trigger fires it keeps the system/developer messages and every item from the
K-th last user message on that no later output answers a call before (the API pairs an output
with its call by ``call_id``, so a message sent while a tool ran may stand between them: SPEC
Part A, "Histories the suite draws"), and asks the summarizer for a summary
of the older items, sent as they are (the model reads an earlier compaction item too, so the new
summary stands for it: SPEC RESP-5). The summary is a user message starting with
``[Context Summary]``. A history waiting for a tool output, or any summarizer failure (an error
status, a dropped connection, a body that is not JSON), leaves the items unchanged. A fixture of tests/test_independent.py: a correct compactor the suite must pass.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, cast

import openai
from openai.types.responses import ResponseInputParam

PREFIX = "[Context Summary]"
ASK = "Summarize the conversation above for the agent that continues it: decisions, ids, open tasks."


def _kind(item: dict) -> str | None:
    return item.get("type", "message" if "role" in item else None)


def _waiting(items: list[dict]) -> bool:
    answered = {i.get("call_id") for i in items if _kind(i) in ("function_call_output", "custom_tool_call_output")}
    return any(_kind(i) in ("function_call", "custom_tool_call") and i.get("call_id") not in answered for i in items)


def _keeps_pairs(items: list[dict], cut: int) -> bool:
    """Whether no output at or after ``cut`` answers a call before it."""
    called = {i.get("call_id") for i in items[:cut] if _kind(i) in ("function_call", "custom_tool_call")}
    return not any(_kind(i) in ("function_call_output", "custom_tool_call_output") and i.get("call_id") in called for i in items[cut:])


def _answer_text(response: Any) -> str:
    parts = [c.text for item in response.output if item.type == "message" for c in item.content if getattr(c, "type", "") == "output_text"]
    return "".join(parts).strip()


class ResponsesSummarizing:
    profiles = frozenset({"core", "trigger"})
    capabilities: ClassVar[dict[str, str]] = {"wire_format": "responses"}

    def __init__(self, settings: Any) -> None:
        self.t, self.m, self.k = settings.threshold_iterations, settings.max_context_tokens, max(1, settings.keep_recent_rounds)
        self.model = settings.model
        self.client = openai.OpenAI(base_url=settings.base_url, api_key=settings.api_key, timeout=settings.summarizer_timeout)

    def estimate_tokens(self, items: list[dict]) -> int:
        return len(json.dumps(items)) // 4

    def compact(self, items: list[dict], *, iteration: int) -> list[dict]:
        if _waiting(items) or (iteration < self.t and self.estimate_tokens(items) < self.m):
            return list(items)
        users = [i for i, item in enumerate(items) if _kind(item) == "message" and item.get("role") == "user" and _keeps_pairs(items, i)]
        if len(users) <= self.k:
            return list(items)
        cut = users[-self.k]
        system = [item for item in items[:cut] if _kind(item) == "message" and item.get("role") in ("system", "developer")]
        older = [item for item in items[:cut] if item not in system]
        if not older:
            return list(items)
        try:
            text = _answer_text(self.client.responses.create(model=self.model, input=cast("ResponseInputParam", [*older, {"role": "user", "content": ASK}])))
        except (openai.OpenAIError, ValueError):  # ValueError: a body that is not JSON
            return list(items)
        if not text:
            return list(items)
        return [*system, {"role": "user", "content": f"{PREFIX}\n{text}"}, *items[cut:]]


def factory(settings: Any) -> ResponsesSummarizing:
    return ResponsesSummarizing(settings)
