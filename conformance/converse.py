"""The Amazon Bedrock Runtime Converse API as the summarizer TEST DOUBLE answers it (SPEC Part A,
"Wire formats"; `conformance.summarizer_apis` registers it, `conformance.summarizer_server` serves it).

``POST /model/{modelId}/converse`` answers one JSON body; ``POST /model/{modelId}/converse-stream``
answers the same text as AWS event-stream messages (`conformance.eventstream`): ``messageStart``,
``contentBlockDelta`` pieces, ``contentBlockStop``, ``messageStop``, ``metadata``. boto3 reaches it
with ``endpoint_url`` and any credentials (the double reads no signature). An error is HTTP 4xx/5xx
with ``{"message": ...}`` and the ``x-amzn-ErrorType`` header botocore reads the code from.

Each request is checked with the rules Bedrock answers ``ValidationException`` for, in Bedrock's own
words (`RULES`; SPEC CORE-13 and its Converse Decision): tool blocks without a ``toolConfig``, a first
message that is not a user message, a user message holding a ``toolUse`` or ``reasoningContent``
block, a blank text block, ``toolResult`` blocks outnumbering the ``toolUse`` blocks of the turn
before, ``toolUse`` blocks the next turn does not answer. Consecutive messages of one role are read as one turn, never rejected: what the double
plays is Claude on Bedrock, Strands' default model (SPEC, the Decision on Converse turns).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping
from typing import Any

from . import eventstream, providers
from .violation import Violation

PATH = re.compile(r"^/model/[^/]+/converse$")
STREAM_PATH = re.compile(r"^/model/[^/]+/converse-stream$")
STREAM_PIECE_CHARS = 40

EXCEPTIONS = {
    400: "ValidationException", 404: "ResourceNotFoundException", 405: "ValidationException",
    429: "ThrottlingException", 500: "InternalServerException", 503: "ServiceUnavailableException",
}  # fmt: skip
"""The error code Bedrock answers each status with (the Converse API reference, "Errors":
docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html)."""

OVER_WINDOW = "Input is too long for requested model."
"""Bedrock's ``ValidationException`` for a prompt over the model's context window, the first of the
texts Strands' ``BedrockModel`` maps to ``ContextWindowOverflowException``
(``BEDROCK_CONTEXT_WINDOW_OVERFLOW_MESSAGES``, strands-agents 1.0.0 on)."""

ORPHAN_RESULT = (
    "The number of toolResult blocks at messages.{i}.content exceeds the number of toolUse blocks of previous turn.",
    "Bedrock Converse's ValidationException, quoted in strands-agents/harness-sdk#1435, "
    "Just-Curieous/Curie#16 (after context pruning) and pydantic/pydantic-ai#2327",
)

USER_TOOL_USE = (
    "User messages cannot contain tool uses. Please remove the tool uses and try again.",
    "Bedrock Converse's ValidationException, quoted in strands-agents/harness-sdk#1160 (a summary re-roled as a user "
    "message holding the summarizer's structured-output toolUse) and its fix, PR #1805",
)
USER_REASONING = (
    "User messages cannot contain reasoning content. Please remove the reasoning content and try again.",
    "Bedrock Converse's ValidationException, quoted in strands-agents/harness-sdk#4402 (a reasoning model's summary "
    "re-roled as a user message), #651 and vercel/ai#17591",
)
MISSING_RESULTS = (
    "Expected toolResult blocks at messages.{i}.content for the following Ids: {ids}",
    "Bedrock Converse's ValidationException, quoted in agno-agi/agno#6698 (toolUse blocks the next turn does not answer)",
)
BLANK_TEXT = (
    "The text field in the ContentBlock object at messages.{i}.content.{j} is blank. Add text to the text field, and try again.",
    "Bedrock Converse's ValidationException, quoted in aws-samples/bedrock-engineer#8 and strands-agents/harness-sdk#3029",
)
USER_ONLY_IN_ASSISTANT = (("toolUse", USER_TOOL_USE), ("reasoningContent", USER_REASONING))
"""The assistant-only blocks Bedrock refuses in a user message, each with its own words."""


# --- a request


def blocks(message: Any) -> list[dict[str, Any]]:
    content = message.get("content") if isinstance(message, Mapping) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _text(block: Mapping[str, Any]) -> str:
    if isinstance(block.get("text"), str):
        return str(block["text"])
    if isinstance(block.get("toolUse"), Mapping):
        use = block["toolUse"]
        return f"{use.get('name')} {json.dumps(use.get('input'), sort_keys=True)}"
    if isinstance(block.get("toolResult"), Mapping):
        parts = block["toolResult"].get("content") or []
        return "\n".join(str(p["text"]) if isinstance(p.get("text"), str) else json.dumps(p.get("json"), sort_keys=True) for p in parts if isinstance(p, Mapping))
    return ""


def as_messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``system`` and ``messages`` as chat-like messages (reasoning, images and documents read as nothing)."""
    system = "\n".join(_text(b) for b in body.get("system") or [] if isinstance(b, Mapping) and "text" in b)
    head = [{"role": "system", "content": system}] if system else []
    return head + [{"role": m.get("role"), "content": "\n".join(t for t in map(_text, blocks(m)) if t)} for m in body.get("messages") or []]


def invalid(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "the body must be a JSON object"
    messages = body.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) and m.get("role") in ("user", "assistant") and isinstance(m.get("content"), list) for m in messages):
        return "messages: each must have a role 'user' or 'assistant' and a content list"
    return None


def _tool_blocks(messages: list[dict[str, Any]]) -> str | None:
    for i, m in enumerate(messages):
        for kind in ("toolUse", "toolResult"):
            if any(kind in b for b in blocks(m)):
                return f"messages.{i} ({m.get('role')}) holds a {kind} block"
    return None


def _turns(messages: list[dict[str, Any]]) -> list[list[int]]:
    """The indices of the messages of each turn: consecutive messages of one role are one turn."""
    turns: list[list[int]] = []
    for i, m in enumerate(messages):
        if turns and messages[turns[-1][-1]].get("role") == m.get("role"):
            turns[-1].append(i)
        else:
            turns.append([i])
    return turns


def rejects(body: Mapping[str, Any]) -> Violation | None:
    """The first rule ``body`` breaks, as Bedrock words its ``ValidationException``, or None."""
    messages = body["messages"]
    tools = (body.get("toolConfig") or {}).get("tools") if isinstance(body.get("toolConfig"), Mapping) else None
    held = _tool_blocks(messages)
    if held and not tools:
        return _violation(providers.TOOL_CONFIG.name, providers.TOOL_CONFIG.says, f"{held} and the request has no toolConfig", providers.TOOL_CONFIG.source)
    if messages and messages[0].get("role") != "user":
        rule = providers.FIRST_TURN_USER
        return _violation(rule.name, rule.says, f"messages.0 is {messages[0].get('role')!r}", rule.source)
    found = _misplaced(messages)
    if found is not None:
        return found
    turns = _turns(messages)
    for before, turn in zip([None, *turns], turns, strict=False):
        uses = sum("toolUse" in b for i in before or [] for b in blocks(messages[i])) if before and messages[before[0]].get("role") == "assistant" else 0
        holding = [i for i in turn if any("toolResult" in b for b in blocks(messages[i]))]
        results = sum("toolResult" in b for i in turn for b in blocks(messages[i]))
        if results > uses:
            return _violation("orphan-tool-result", ORPHAN_RESULT[0].format(i=holding[0]), f"{results} toolResult blocks after {uses} toolUse blocks", ORPHAN_RESULT[1])
    return _unanswered(messages, turns)


def _misplaced(messages: list[dict[str, Any]]) -> Violation | None:
    """A user message holding an assistant-only block, or a blank text block, as Bedrock words each."""
    for i, m in enumerate(messages):
        for j, b in enumerate(blocks(m)):
            if "text" in b and isinstance(b["text"], str) and not b["text"].strip():
                return _violation("blank-text", BLANK_TEXT[0].format(i=i, j=j), f"messages.{i}.content.{j} is a blank text block", BLANK_TEXT[1])
            for kind, (says, source) in USER_ONLY_IN_ASSISTANT if m.get("role") == "user" else ():
                if kind in b:
                    return _violation(f"user-{kind}", says, f"messages.{i} (user) holds a {kind} block", source)
    return None


def _unanswered(messages: list[dict[str, Any]], turns: list[list[int]]) -> Violation | None:
    """An assistant turn's toolUse blocks that the next turn's toolResult blocks do not all answer.
    The last turn is left alone: a request ending on a toolUse is not one this rule words."""
    for turn, after in itertools.pairwise(turns):
        if messages[turn[0]].get("role") != "assistant":
            continue
        ids = [str(b["toolUse"].get("toolUseId")) for i in turn for b in blocks(messages[i]) if isinstance(b.get("toolUse"), Mapping)]
        answered = {str(b["toolResult"].get("toolUseId")) for i in after for b in blocks(messages[i]) if isinstance(b.get("toolResult"), Mapping)}
        missing = [x for x in ids if x not in answered]
        if missing:
            says = MISSING_RESULTS[0].format(i=after[0], ids=", ".join(missing))
            return _violation("tool-use-without-result", says, f"{len(missing)} toolUse blocks of messages.{turn[0]} unanswered", MISSING_RESULTS[1])
    return None


PROVIDER = "bedrock-converse"
"""The provider rule set whose reason ids the double's rejections carry (``bedrock-converse:<rule>``)."""


def _violation(rule: str, says: str, where: str, source: str) -> Violation:
    return Violation(f"{PROVIDER}:{rule}", f"{says} ({PROVIDER}: {where}; {source})")


# --- answers


def _usage(prompt: int, completion: int) -> dict[str, int]:
    return {"inputTokens": prompt, "outputTokens": completion, "totalTokens": prompt + completion}


def body(request: Mapping[str, Any], content: str | None, prompt: int, completion: int, *, with_output: bool = True) -> dict[str, Any]:
    """A ``Converse`` answer whose message is one text block with ``content``."""
    return {
        "output": {"message": {"role": "assistant", "content": [{"text": content}] if with_output else []}},
        "stopReason": "end_turn", "usage": _usage(prompt, completion), "metrics": {"latencyMs": 0},
    }  # fmt: skip


def events(request: Mapping[str, Any], content: str | None, prompt: int, completion: int, *, with_output: bool = True) -> list[tuple[str, dict[str, Any]]]:
    """``ConverseStream``'s events for `body`: the text in ``contentBlockDelta`` pieces (Bedrock sends
    no ``contentBlockStart`` for text), then ``messageStop`` and ``metadata``."""
    found: list[tuple[str, dict[str, Any]]] = [("messageStart", {"role": "assistant"})]
    if with_output:
        text = content or ""
        found += [("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": text[at : at + STREAM_PIECE_CHARS]}}) for at in range(0, len(text), STREAM_PIECE_CHARS)]
        found.append(("contentBlockStop", {"contentBlockIndex": 0}))
    return [*found, ("messageStop", {"stopReason": "end_turn"}), ("metadata", {"usage": _usage(prompt, completion), "metrics": {"latencyMs": 0}})]


def tool_call_events(call: Mapping[str, Any], prompt: int) -> list[tuple[str, dict[str, Any]]]:
    """``ConverseStream``'s events of an answer calling a tool (``contentBlockStart`` names it, a
    ``contentBlockDelta`` carries its input as a JSON string), stop reason ``tool_use``."""
    use = call["toolUse"]
    return [
        ("messageStart", {"role": "assistant"}),
        ("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": json.dumps(use["input"])}}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("messageStop", {"stopReason": "tool_use"}),
        ("metadata", {"usage": _usage(prompt, 0), "metrics": {"latencyMs": 0}}),
    ]


def error(message: str, status: int) -> dict[str, Any]:
    return {"message": message}


def error_headers(status: int) -> dict[str, str]:
    """The header botocore reads an error's code from."""
    return {"x-amzn-ErrorType": EXCEPTIONS.get(status, "InternalServerException")}


def frame(name: str, data: dict[str, Any]) -> bytes:
    return eventstream.event(name, data)
