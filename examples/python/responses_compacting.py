"""A Responses-items compactor that summarizes through OpenAI's compact endpoint, written from
SPEC.md (SPEC Part A, "Wire formats", RESP-1..8; CORE-10).

When seed 000's trigger fires it sends every item older than the K-th last user message (one
that no later output answers a call before: a user may write while a tool runs) to
``client.responses.compact`` and puts what comes back (the older user messages, maybe the
assistant ones, and one opaque ``compaction`` item, which folds any earlier one) between the
system/developer messages and the kept items. If the endpoint fails in any way, the history comes back unchanged and the
failure is logged at WARNING with its error type (SPEC FAIL-1..5): a compaction is worth less
than a crash. A history waiting for a function's output is never
compacted.

    compaction-suite check --path examples/python responses_compacting:factory
"""

from __future__ import annotations

import logging
from typing import Any

import openai

log = logging.getLogger(__name__)

Item = dict[str, Any]
SYSTEM_ROLES = ("system", "developer")


def factory(settings: Any) -> ResponsesCompacting:
    client = openai.OpenAI(base_url=settings.base_url, api_key=settings.api_key, timeout=settings.summarizer_timeout, max_retries=0)
    return ResponsesCompacting(client, settings.model, settings.threshold_iterations, settings.keep_recent_rounds)


def _kind(item: Item) -> str | None:
    return item.get("type", "message" if "role" in item else None)


def _is_system(item: Item) -> bool:
    return _kind(item) == "message" and item.get("role") in SYSTEM_ROLES


class ResponsesCompacting:
    profiles = {"core", "failure", "summary"}
    capabilities = {"wire_format": "responses"}

    def __init__(self, client: openai.OpenAI, model: str, threshold_iterations: int, keep_turns: int) -> None:
        self.client = client
        self.model = model
        self.threshold_iterations = threshold_iterations
        self.keep_turns = max(1, keep_turns)

    def compact(self, items: list[Item], *, iteration: int) -> list[Item]:
        if iteration < self.threshold_iterations or _pending(items):
            return list(items)
        starts = [i for i, item in enumerate(items) if _kind(item) == "message" and item.get("role") == "user" and _keeps_pairs(items, i)]
        if len(starts) <= self.keep_turns:
            return list(items)
        cut = starts[-self.keep_turns]
        older = [item for item in items[:cut] if not _is_system(item)]
        try:
            compacted = self.client.responses.compact(model=self.model, input=older)
            summary = [item.model_dump(exclude_none=True, warnings=False) for item in compacted.output]
        except (openai.OpenAIError, ValueError) as error:
            log.warning("compaction skipped: the compact endpoint failed: %s: %s", type(error).__name__, error)
            return list(items)
        if not any(item.get("type") == "compaction" and item.get("encrypted_content") for item in summary):
            log.warning("compaction skipped: the compact endpoint answered no compaction item")
            return list(items)  # no compaction item, or an empty one: nothing to stand for the older items
        return [item for item in items[:cut] if _is_system(item)] + _unpaired(summary) + items[cut:]


def _unpaired(output: list[Item]) -> list[Item]:
    """The compact endpoint's output with the ids of its assistant messages removed where the reasoning
    item before them is not returned: gpt-5.4 returns them with their ids and without their reasoning,
    and the API refuses an id sent without its reasoning item (RESP-3, openai/openai-agents-python#2727);
    without an id the message is plain input."""
    return [
        {k: v for k, v in item.items() if k != "id"} if _kind(item) == "message" and item.get("role") == "assistant" and (i == 0 or _kind(output[i - 1]) != "reasoning") else item
        for i, item in enumerate(output)
    ]


def _pending(items: list[Item]) -> bool:
    answered = {item.get("call_id") for item in items if _kind(item) in ("function_call_output", "custom_tool_call_output")}
    return any(_kind(item) in ("function_call", "custom_tool_call") and item.get("call_id") not in answered for item in items)


def _keeps_pairs(items: list[Item], cut: int) -> bool:
    """Whether cutting in front of item ``cut`` keeps every output with its call (RESP-1): an
    output may follow its call after other items, such as a message sent while the tool ran."""
    dropped = {item.get("call_id") for item in items[:cut] if _kind(item) in ("function_call", "custom_tool_call")}
    return not any(_kind(item) in ("function_call_output", "custom_tool_call_output") and item.get("call_id") in dropped for item in items[cut:])
