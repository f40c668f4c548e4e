"""The request and response shapes of each API the summarizer TEST DOUBLE answers (SPEC Part A,
"Wire formats"; `conformance.summarizer_server` serves them with the same modes and faults).

- ``chat``: OpenAI chat-completions, ``POST /v1/chat/completions`` (and Azure's deployment path);
  its bodies live in `summarizer_server` itself.
- ``responses``: OpenAI Responses, ``POST /v1/responses``: the summary is one output
  ``message`` with an ``output_text`` part.
- ``compact``: ``POST /v1/responses/compact``, what ``client.responses.compact(model=...,
  input=[...])`` calls (the OpenAI Agents SDK's ``OpenAIResponsesCompactionSession`` does, with
  the session's items as ``input``; openai-agents 0.24.0,
  ``agents/memory/openai_responses_compaction_session.py``). The answer is a
  ``response.compaction`` object whose ``output`` is the input's user messages followed by one
  ``compaction`` item, as OpenAI's reference describes it. The item's ``encrypted_content`` is
  NOT encrypted: it is ``testdouble-compaction:`` and the base64 of the deterministic summary, so
  a test can read what was "compacted"; a compactor must treat it as opaque.
- ``anthropic``: Anthropic Messages, ``POST /v1/messages``: the summary is one ``text`` block,
  also streamed (``"stream": true``: the Messages API's server-sent events). The Responses API
  is answered unstreamed only.

Each API turns its request into chat-like ``{"role", "content"}`` messages (`as_messages`) so the
deterministic summary and the token counts are computed one way for all of them; the counts use
``o200k_base`` for every API (an approximation for Anthropic's tokenizer, labelled as such).
Nothing here is a real model: every id says ``testdouble``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

COMPACTION_PREFIX = "testdouble-compaction:"
CREATED = 1_700_000_000


def _digest(body: Any) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")).hexdigest()[:24]


def _texts(content: Any) -> str:
    """The text of a string content or of a list of text-bearing parts/blocks."""
    if isinstance(content, str):
        return content
    texts: list[str] = []
    for part in content or []:
        if isinstance(part, Mapping) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, Mapping) and part.get("type") == "tool_result":
            texts.append(_texts(part.get("content")))
        elif isinstance(part, Mapping) and part.get("type") == "tool_use":
            texts.append(f"{part.get('name')} {json.dumps(part.get('input'), sort_keys=True)}")
    return "\n".join(texts)


# --- requests -> chat-like messages


def responses_messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``instructions`` and ``input`` (a string or items) as chat-like messages; reasoning and
    compaction items are opaque and read as nothing."""
    messages: list[dict[str, Any]] = []
    if isinstance(body.get("instructions"), str):
        messages.append({"role": "system", "content": body["instructions"]})
    items = body.get("input")
    if isinstance(items, str):
        return [*messages, {"role": "user", "content": items}]
    for item in items or []:
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            messages.append({"role": item.get("role"), "content": _texts(item.get("content"))})
        elif kind in ("function_call", "custom_tool_call"):
            messages.append({"role": "assistant", "content": f"{item.get('name')} {item.get('arguments', item.get('input'))}"})
        elif kind in ("function_call_output", "custom_tool_call_output"):
            messages.append({"role": "tool", "content": _texts(item.get("output"))})
    return messages


def anthropic_messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The top-level ``system`` and ``messages`` as chat-like messages."""
    system = body.get("system")
    messages = [{"role": "system", "content": _texts(system)}] if system else []
    return messages + [{"role": m.get("role"), "content": _texts(m.get("content"))} for m in body.get("messages") or []]


# --- validity (what the real API answers with HTTP 400)


def invalid_responses(body: Any) -> str | None:
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        return "the body must be a JSON object with a string 'model'"
    items = body.get("input")
    if not (isinstance(items, str) or (isinstance(items, list) and all(isinstance(i, dict) for i in items))):
        return "'input' must be a string or a list of items"
    return "streaming is not supported by the test double for this API" if body.get("stream") else None


def invalid_compact(body: Any) -> str | None:
    if not isinstance(body, dict) or "model" not in body:
        return "the body must be a JSON object with 'model'"
    items = body.get("input")
    if items is None and not body.get("previous_response_id"):
        return "give 'input' or 'previous_response_id'"
    if body.get("previous_response_id"):
        return "the test double keeps no responses: give 'input'"
    if not (isinstance(items, str) or (isinstance(items, list) and all(isinstance(i, dict) for i in items))):
        return "'input' must be a string or a list of items"
    return None


def invalid_anthropic(body: Any) -> str | None:
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        return "the body must be a JSON object with a string 'model'"
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens: Field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return "messages: must be a list of objects"
    return None


# --- response bodies


def _responses_usage(prompt: int, completion: int) -> dict[str, Any]:
    return {
        "input_tokens": prompt, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": completion, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + completion,
    }


def responses_body(body: Mapping[str, Any], content: str | None, prompt: int, completion: int, *, with_output: bool = True) -> dict[str, Any]:
    """A ``response`` whose output is one assistant message with ``content`` (none without output)."""
    digest = _digest(body)
    message = {
        "type": "message", "id": f"msg_testdouble_{digest}", "status": "completed", "role": "assistant",
        "content": [{"type": "output_text", "text": content, "annotations": []}],
    }
    return {
        "id": f"resp_testdouble_{digest}", "object": "response", "created_at": CREATED, "status": "completed",
        "model": body.get("model"), "output": [message] if with_output else [], "instructions": body.get("instructions"),
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "error": None, "incomplete_details": None,
        "metadata": {}, "usage": _responses_usage(prompt, completion),
    }


def compaction_item(content: str | None) -> dict[str, Any]:
    """The (unencrypted, see the module docstring) compaction item of the test double."""
    encoded = "" if not content else COMPACTION_PREFIX + base64.b64encode(content.encode("utf-8")).decode("ascii")
    return {"type": "compaction", "id": f"cmp_testdouble_{hashlib.sha256(encoded.encode()).hexdigest()[:24]}", "encrypted_content": encoded}


def compacted_text(item: Mapping[str, Any]) -> str | None:
    """What a test-double compaction item stands for (None for any other item)."""
    encoded = item.get("encrypted_content") if isinstance(item, Mapping) else None
    if not isinstance(encoded, str) or not encoded.startswith(COMPACTION_PREFIX):
        return None
    return base64.b64decode(encoded[len(COMPACTION_PREFIX) :]).decode("utf-8")


def _input_parts(content: Any) -> list[Any]:
    """A user message's content as input parts (OpenAI's compact reference shows ``input_text`` parts)."""
    return [{"type": "input_text", "text": content}] if isinstance(content, str) else list(content or [])


def compact_body(body: Mapping[str, Any], content: str | None, prompt: int, completion: int, *, with_output: bool = True) -> dict[str, Any]:
    """A ``response.compaction``: the input's user messages, then one compaction item."""
    items = body.get("input")
    contents = [items] if isinstance(items, str) else [i.get("content") for i in items or [] if i.get("type", "message") == "message" and i.get("role") == "user"]
    users = [{"type": "message", "role": "user", "content": _input_parts(c)} for c in contents]
    return {
        "id": f"resp_testdouble_{_digest(body)}", "object": "response.compaction", "created_at": CREATED,
        "output": [*users, compaction_item(content)] if with_output else [], "usage": _responses_usage(prompt, completion),
    }


def anthropic_body(body: Mapping[str, Any], content: str | None, prompt: int, completion: int, *, with_output: bool = True) -> dict[str, Any]:
    """A Messages API ``message`` whose content is one text block with ``content``."""
    return {
        "id": f"msg_testdouble_{_digest(body)}", "type": "message", "role": "assistant", "model": body.get("model"),
        "content": [{"type": "text", "text": content}] if with_output else [],
        "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": prompt, "output_tokens": completion},
    }


STREAM_PIECE_CHARS = 40


def anthropic_events(body: Mapping[str, Any], content: str | None, prompt: int, completion: int, *, with_output: bool = True) -> list[tuple[str, dict[str, Any]]]:
    """The Messages API's server-sent events for `anthropic_body` (``"stream": true``):
    ``message_start``, one text block in ``text_delta`` pieces, ``message_delta``, ``message_stop``."""
    message = {**anthropic_body(body, content, prompt, completion, with_output=False), "stop_reason": None, "usage": {"input_tokens": prompt, "output_tokens": 0}}
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": message})]
    if with_output:
        text = content or ""
        events.append(("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}))
        for at in range(0, len(text), STREAM_PIECE_CHARS):
            events.append(("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text[at : at + STREAM_PIECE_CHARS]}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": completion}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def openai_error(message: str, error_type: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type, "param": None, "code": code}}


ANTHROPIC_ERRORS = {429: "rate_limit_error", 500: "api_error", 503: "overloaded_error", 400: "invalid_request_error", 404: "not_found_error", 405: "invalid_request_error"}


def anthropic_error(message: str, status: int) -> dict[str, Any]:
    return {"type": "error", "error": {"type": ANTHROPIC_ERRORS.get(status, "api_error"), "message": message}}


@dataclass(frozen=True)
class Api:
    """One API the test double answers: how to read a request and write an answer or an error."""

    name: str
    path: re.Pattern[str]
    invalid: Callable[[Any], str | None]
    as_messages: Callable[[Mapping[str, Any]], list[dict[str, Any]]]
    body: Callable[..., dict[str, Any]]
    """``body(request, content, prompt_tokens, completion_tokens, with_output=True)``; without
    output it is the API's "no choices" answer."""
    error: Callable[[str, str, str | None, int], dict[str, Any]]
    events: Callable[..., list[tuple[str, dict[str, Any]]]] | None = None
    """The streamed answer (``"stream": true``) as (event name, data) pairs, like `body`; None:
    the test double answers this API unstreamed only (HTTP 400 for a streamed request)."""


RESPONSES = Api("responses", re.compile(r"^/v1/responses$"), invalid_responses, responses_messages, responses_body, lambda m, t, c, s: openai_error(m, t, c))
COMPACT = Api("compact", re.compile(r"^/v1/responses/compact$"), invalid_compact, responses_messages, compact_body, lambda m, t, c, s: openai_error(m, t, c))
ANTHROPIC = Api("anthropic", re.compile(r"^/v1/messages$"), invalid_anthropic, anthropic_messages, anthropic_body, lambda m, t, c, s: anthropic_error(m, s), anthropic_events)
APIS = (RESPONSES, COMPACT, ANTHROPIC)
"""The APIs besides chat-completions, matched by path."""


def api_for(path: str) -> Api | None:
    return next((api for api in APIS if api.path.match(path)), None)
