"""A compactor written from SPEC.md alone, the way a user of compaction-suite writes one.

It keeps the system messages and the last K complete rounds, and drops the rest when seed
000's trigger fires (``iteration >= T or estimated tokens >= M``). No summarizer, so it
claims ``core`` and ``trigger`` only. Check it from the repository's root with

    compaction-suite check --path examples/python truncating:factory

(``--path`` puts the folder on ``sys.path``; an installed package needs no ``--path``).
"""

from __future__ import annotations

import json
from typing import Any

Message = dict[str, Any]
SYSTEM_ROLES = ("system", "developer")


def factory(settings: Any) -> TruncatingCompactor:
    """The target: ``compaction-suite`` calls it with its ``Settings`` for every example."""
    return TruncatingCompactor(settings.threshold_iterations, settings.max_context_tokens, settings.keep_recent_rounds)


class TruncatingCompactor:
    profiles = {"core", "trigger"}

    def __init__(self, threshold_iterations: int, max_context_tokens: int, keep_rounds: int) -> None:
        self.threshold_iterations = threshold_iterations
        self.max_context_tokens = max_context_tokens
        self.keep_rounds = keep_rounds

    def estimate_tokens(self, messages: list[Message]) -> int:
        """A quarter of the characters the model reads (SPEC TOK-1)."""
        return sum(len(text) for message in messages for text in _texts(message)) // 4

    def compact(self, messages: list[Message], *, iteration: int) -> list[Message]:
        fires = iteration >= self.threshold_iterations or self.estimate_tokens(messages) >= self.max_context_tokens
        if not fires or _in_flight(messages):
            return list(messages)  # CORE-9: never with a tool call unanswered
        system = [m for m in messages if m["role"] in SYSTEM_ROLES]
        rounds = _rounds([m for m in messages if m["role"] not in SYSTEM_ROLES])
        if len(rounds) <= self.keep_rounds:
            return list(messages)  # TRIG-5: nothing older than the kept tail
        kept = rounds[len(rounds) - self.keep_rounds :] if self.keep_rounds else []
        return system + [m for r in kept for m in r]


def _rounds(messages: list[Message]) -> list[list[Message]]:
    """ROUND-1: a tool result belongs to the round of the assistant message that called it."""
    rounds: list[list[Message]] = []
    for message in messages:
        if message["role"] == "tool" and rounds:
            rounds[-1].append(message)
        else:
            rounds.append([message])
    return rounds


def _in_flight(messages: list[Message]) -> bool:
    """Whether the last assistant message with tool calls still waits for one of its results."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message["role"] == "assistant" and message.get("tool_calls"):
            answered = {m.get("tool_call_id") for m in messages[index + 1 :] if m["role"] == "tool"}
            return any(call["id"] not in answered for call in message["tool_calls"])
        if message["role"] != "tool":
            return False
    return False


def _texts(message: Message) -> list[str]:
    content = message.get("content")
    texts = [content] if isinstance(content, str) else [p.get("text", "") for p in content or [] if isinstance(p, dict)]
    texts += [message.get("refusal") or "", message.get("name") or ""]
    for call in message.get("tool_calls") or []:
        texts += [call["function"]["name"], call["function"]["arguments"]]
    return texts


if __name__ == "__main__":  # a quick look without the suite
    history = [{"role": "system", "content": "Be brief."}] + [{"role": "user", "content": f"question {i}"} for i in range(6)]
    print(json.dumps(TruncatingCompactor(4, 80_000, 2).compact(history, iteration=4), indent=1))
