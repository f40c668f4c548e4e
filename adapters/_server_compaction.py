"""What the adapters driving the Messages API's server-side compaction through a framework's loop share
(``_langchain_server_compaction``, ``_pydantic_ai_anthropic``; SPEC Part A, "Wire formats", Decision: the
Messages API's server-side compaction): where the loop's last step is, how the request after it is read,
and the output built from it. Standard library at import time."""

from __future__ import annotations

import copy
from typing import Any

PROBE = "compaction-suite: next turn (probe)"
"""The user prompt of the next turn, sent when the history's last step made no call (taken off the output)."""


AGENT_TIMEOUT = 120.0
"""Seconds the agent's model waits for the double: a scripted request is never faulted, and one past the API's
minimum trigger (some 60,000 tokens, counted and compacted by the double) takes seconds on a loaded machine,
where the summarizer's own timeout (2 s) would end the run with an error no user meets."""


class Sent(Exception):
    """Raised by a hook on the request after the step, holding what it read: ends the run there."""

    def __init__(self, read: Any) -> None:
        super().__init__("request read")
        self.read = read


def sent_in(error: BaseException | None) -> Any:
    """What the hook read, from the exception the run ended in (a framework may wrap it), or None."""
    while error is not None:
        if isinstance(error, Sent):
            return error.read
        error = error.__cause__ or error.__context__
    return None


def blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A message's content blocks (a string content is one text block)."""
    content = message.get("content")
    return [{"type": "text", "text": content}] if isinstance(content, str) else [b for b in content or [] if isinstance(b, dict)]


def text(content: Any) -> str:
    """The text of a string content or of text blocks."""
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content or [] if isinstance(b, dict))


def last_step(messages: list[dict[str, Any]]) -> tuple[int, dict[str, dict[str, Any]], list[dict[str, Any]]] | None:
    """(the index of the last assistant message, the step a loop's model answers; its calls' results by
    ``tool_use_id``; the user turn after it, if any), or None when a loop cannot have produced the history's
    end: no assistant message after a user message, a step whose calls the next message does not answer
    exactly, or anything after a step without calls but one user turn."""
    at = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=None)
    if at is None or at == 0 or messages[at - 1].get("role") != "user":
        return None
    uses = {str(b.get("id")) for b in blocks(messages[at]) if b.get("type") == "tool_use"}
    after = messages[at + 1 :]
    if uses:
        if len(after) != 1 or after[0].get("role") != "user":
            return None
        results = {str(b.get("tool_use_id")): b for b in blocks(after[0]) if b.get("type") == "tool_result"}
        return (at, results, []) if set(results) == uses and len(results) == len(blocks(after[0])) else None
    if after and (len(after) != 1 or after[0].get("role") != "user" or any(b.get("type") == "tool_result" for b in blocks(after[0]))):
        return None
    return at, {}, after


def output(request: dict[str, Any], at: int, step: list[dict[str, Any]]) -> dict[str, Any]:
    """The request after the step as the API reads it: ``step`` (the step's assistant message as the framework
    sends it) from its compaction block on, then the history's own messages after the step; the history
    unchanged when ``step`` holds no compaction block (the request is then the history replayed)."""
    from compaction_suite.conformance.anthropic_compaction import read_from

    if not any(b.get("type") == "compaction" for m in step for b in blocks(m)):
        return copy.deepcopy(request)
    out: dict[str, Any] = {k: copy.deepcopy(v) for k, v in request.items() if k != "messages"}
    out["messages"] = read_from([*copy.deepcopy(step), *copy.deepcopy(list(request["messages"])[at + 1 :])])
    return out
