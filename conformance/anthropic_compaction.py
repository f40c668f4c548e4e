"""The Messages API's server-side compaction in the summarizer TEST DOUBLE (SPEC Part A, "Wire formats",
Decision: the Messages API's server-side compaction; ANTH-7, COST-1).

A ``POST /v1/messages`` request turns it on with the ``compact_20260112`` edit in
``context_management.edits`` (beta ``compact-2026-01-12``). Anthropic's compaction guide
(platform.claude.com/docs/en/build-with-claude/compaction) says what the API then does, and the double
does the same:

- the edit's ``trigger`` is ``{"type": "input_tokens", "value": N}``, 150,000 by default, "Must be at
  least 50,000 tokens" (a smaller value is refused here with HTTP 400, `invalid_edit`);
- when the request's input tokens reach the trigger, the API "Generates a summary of the current
  conversation", "Creates a compaction block containing the summary" and "Continues the response with the
  compacted context": the answer's content opens with ``{"type": "compaction", "content": summary}``
  (`compaction_block`), then the model's blocks; with ``pause_after_compaction`` it stops there
  (``stop_reason: "compaction"``);
- its ``usage.iterations`` lists a ``compaction`` iteration, then the ``message`` iteration, and "the
  top-level input_tokens and output_tokens do not include compaction iteration usage" (the guide's
  "Understanding usage", quoted in pydantic/pydantic-ai#5065; `iterations`);
- streamed, the block arrives as a ``content_block_start`` of type ``compaction`` and one
  ``compaction_delta`` holding the whole summary (the guide; withceleste/celeste-python#430 read it the
  same way), then ``content_block_stop`` (`events`);
- "On subsequent requests ... The API automatically drops all message blocks prior to the compaction
  block": a request holding a compaction block is read (its prompt counted) from its last one on
  (`read_from`).

A compaction block sent back must be as the API accepts it (`rejects`): its fields ``type``,
``content`` and ``cache_control`` only. The API answers HTTP 400 ``messages.N.content.M.compaction.KEY:
Extra inputs are not permitted`` for any other: ``index``, the stream position LangChain kept from the
stream (langchain-ai/langchain#36976, the API's text quoted there), and ``encrypted_content``, which the
anthropic SDK's types carry but "the live API" rejects (anthropics/anthropic-sdk-python#1828, quoting the
same text). Its ``content`` is a non-empty string or null: "When content is None, the block represents a
failed compaction. The server treats these as no-ops. Empty string content is not allowed." (the SDK's
``BetaCompactionBlockParam``, anthropic-java 2.17.0's javadoc of it).

The summary is the double's deterministic one; nothing here is a real model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from compaction_suite.text import count_tokens

EDIT = "compact_20260112"
BETA = "compact-2026-01-12"
DEFAULT_TRIGGER = 150_000
MIN_TRIGGER = 50_000
FIELDS = ("type", "content", "cache_control")
"""The fields of a compaction block the API accepts in a request (``BetaCompactionBlockParam`` without the
``encrypted_content`` the live API refuses, anthropics/anthropic-sdk-python#1828)."""
ITERATION = "compaction"
"""The billing kind of a compaction iteration (`SummarizerServer.served`; SPEC COST-1)."""


def edit(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The request's ``compact_20260112`` edit, or None when it asks for no server-side compaction."""
    management = body.get("context_management")
    edits = management.get("edits") if isinstance(management, Mapping) else None
    for found in edits if isinstance(edits, list) else []:
        if isinstance(found, Mapping) and found.get("type") == EDIT:
            return dict(found)
    return None


def trigger(found: Mapping[str, Any]) -> int:
    """The edit's trigger in input tokens (150,000 when it names none)."""
    given = found.get("trigger")
    value = given.get("value") if isinstance(given, Mapping) else None
    return int(value) if isinstance(value, int) else DEFAULT_TRIGGER


def invalid_edit(body: Mapping[str, Any]) -> str | None:
    """Why the API refuses the request's compaction edit, or None (the guide: the trigger "Must be at least
    50,000 tokens"; the words are the double's, the API's own text for it was not found)."""
    found = edit(body)
    if found is None:
        return None
    given = found.get("trigger")
    if given is not None and not (isinstance(given, Mapping) and given.get("type") == "input_tokens" and isinstance(given.get("value"), int)):
        return "context_management.edits.0.trigger: expected {'type': 'input_tokens', 'value': <int>}"
    if trigger(found) < MIN_TRIGGER:
        return f"context_management.edits.0.trigger.value: must be at least {MIN_TRIGGER} input tokens, got {trigger(found)}"
    return None


def read_from(messages: Sequence[Any]) -> list[Any]:
    """The messages the API reads: from the last compaction block on (that message keeps the block and the
    blocks after it), all of them when none holds one."""
    for i in range(len(messages) - 1, -1, -1):
        content = messages[i].get("content") if isinstance(messages[i], Mapping) else None
        blocks = content if isinstance(content, list) else []
        at = [j for j, b in enumerate(blocks) if isinstance(b, Mapping) and b.get("type") == "compaction"]
        if at:
            return [{**messages[i], "content": blocks[at[-1] :]}, *messages[i + 1 :]]
    return list(messages)


def rejects(messages: Sequence[Any]) -> str | None:
    """The API's HTTP 400 text for a compaction block it does not accept, or None (module docstring)."""
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, Mapping) else None
        for j, block in enumerate(content if isinstance(content, list) else []):
            if not (isinstance(block, Mapping) and block.get("type") == "compaction"):
                continue
            extra = [k for k in block if k not in FIELDS]
            if extra:
                return f"messages.{i}.content.{j}.compaction.{extra[0]}: Extra inputs are not permitted"
            if "content" not in block:
                return f"messages.{i}.content.{j}.compaction.content: Field required"
            if block["content"] is not None and (not isinstance(block["content"], str) or not block["content"]):
                return f"messages.{i}.content.{j}.compaction.content: must be a non-empty string or null"
    return None


def compaction_block(summary: str) -> dict[str, Any]:
    """The block the API answers with when it compacts."""
    return {"type": "compaction", "content": summary}


def iterations(compaction: tuple[int, int], message: tuple[int, int]) -> list[dict[str, Any]]:
    """``usage.iterations`` of an answer that compacted: the compaction iteration, then the message one."""
    return [
        {"type": ITERATION, "input_tokens": compaction[0], "output_tokens": compaction[1], "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        {"type": "message", "input_tokens": message[0], "output_tokens": message[1], "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    ]


def blocks_tokens(blocks: Sequence[Mapping[str, Any]]) -> int:
    """The output tokens of scripted content blocks: exact ``o200k_base`` counts of their JSON (an
    approximation of what the model generates, labelled so, as for scripted Responses items)."""
    return count_tokens(json.dumps([dict(b) for b in blocks], ensure_ascii=False, sort_keys=True)) if blocks else 0


PIECE = 40


def events(message: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The server-sent events of a Messages API answer ``message`` whose content blocks are any of
    ``compaction`` (one ``compaction_delta``), ``thinking`` (``thinking_delta``, ``signature_delta``),
    ``text`` (``text_delta`` pieces) and ``tool_use`` (one ``input_json_delta``): ``message_start`` without
    content, each block, ``message_delta`` with the stop reason and the usage (its ``iterations`` too), and
    ``message_stop``."""
    usage = dict(message.get("usage") or {})
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": usage.get("input_tokens", 0), "output_tokens": 0}}
    out: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message.get("content") or []):
        opened, deltas = _stream_block(block)
        out.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": opened}))
        out += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
        out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta = {"stop_reason": message.get("stop_reason"), "stop_sequence": None}
    out.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    out.append(("message_stop", {"type": "message_stop"}))
    return out


def _stream_block(block: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    kind = block.get("type")
    if kind == "compaction":
        return {"type": "compaction", "content": None}, [{"type": "compaction_delta", "content": block.get("content")}]
    if kind == "thinking":
        return {"type": "thinking", "thinking": "", "signature": ""}, [
            {"type": "thinking_delta", "thinking": block.get("thinking", "")},
            {"type": "signature_delta", "signature": block.get("signature", "")},
        ]
    if kind == "tool_use":
        return {"type": "tool_use", "id": block.get("id"), "name": block.get("name"), "input": {}}, [
            {"type": "input_json_delta", "partial_json": json.dumps(block.get("input") or {})}
        ]
    text = str(block.get("text", ""))
    return {"type": "text", "text": ""}, [{"type": "text_delta", "text": text[at : at + PIECE]} for at in range(0, len(text), PIECE)]
