"""Ollama's native chat API as the summarizer TEST DOUBLE answers it (SPEC Part A, "Wire formats";
`conformance.summarizer_apis` registers it, `conformance.summarizer_server` serves it).

``POST /api/chat`` with ``{"model", "messages", "stream", "options", "tools"}`` (Ollama's API
reference, docs/api.md "Generate a chat completion"; github.com/ollama/ollama). A message is
``{"role", "content"}`` with, on an assistant message, ``tool_calls`` (``function`` with ``name`` and
``arguments`` as an object: no call ids), on a tool message its result as ``content``, and
``images`` as base64 strings. ``stream`` defaults to true: the answer is then newline-delimited JSON
(``application/x-ndjson``), one object per piece with ``done: false``, and a last one with
``done: true``, ``done_reason`` and the counts (``prompt_eval_count``, ``eval_count``, durations in
nanoseconds); unstreamed it is that last object with the whole message. An error is
``{"error": "..."}`` with its HTTP status (what the ``ollama`` client raises as ``ResponseError``).

Ollama checks no pairing of calls and results (its messages carry no ids), so the double rejects
only a malformed body. A prompt over the context window: Ollama's default is to shorten the prompt
and answer 200 (documented: ollama/ollama#17944, ``truncate`` and ``shift`` default to true), which
no compactor can see; the double plays the servers that answer it with an error instead
(`conformance.overflow`: Ollama's cloud, and a local server whose context shift is off).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

PATH = re.compile(r"^/api/chat$")
MIMETYPE = "application/x-ndjson"
STREAM_PIECE_CHARS = 40
CREATED_AT = "2023-11-14T22:13:20Z"
"""The fixed ``created_at`` of every answer (the double's ``CREATED``, determinism)."""


def as_messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The request's messages as chat-like ``{"role", "content"}`` (a call as its name and arguments)."""
    out: list[dict[str, Any]] = []
    for message in body.get("messages") or []:
        text = str(message.get("content") or "")
        calls = [c.get("function") for c in message.get("tool_calls") or [] if isinstance(c, Mapping)]
        text += "".join(f"\n{c.get('name')} {json.dumps(c.get('arguments'), sort_keys=True)}" for c in calls if isinstance(c, Mapping))
        out.append({"role": message.get("role"), "content": text})
    return out


def invalid(body: Any) -> str | None:
    """What Ollama answers HTTP 400 for a malformed body (None: well formed)."""
    if not isinstance(body, dict) or not isinstance(body.get("model"), str) or not body["model"]:
        return "model is required"
    messages = body.get("messages")
    if messages is not None and (not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages)):
        return "messages must be a list of objects"
    return None


def _final(request: Mapping[str, Any], message: dict[str, Any], prompt: int, completion: int) -> dict[str, Any]:
    return {
        "model": request.get("model"), "created_at": CREATED_AT, "message": message, "done": True, "done_reason": "stop",
        "total_duration": 1_000_000, "load_duration": 0, "prompt_eval_count": prompt, "prompt_eval_duration": 0,
        "eval_count": completion, "eval_duration": 0,
    }  # fmt: skip


def body(request: Mapping[str, Any], content: str | None, prompt: int, completion: int, *, with_output: bool = True) -> dict[str, Any]:
    """The unstreamed answer: the assistant's whole message (empty content without output)."""
    return _final(request, {"role": "assistant", "content": (content or "") if with_output else ""}, prompt, completion)


def events(request: Mapping[str, Any], content: str | None, prompt: int, completion: int, *, with_output: bool = True) -> list[tuple[str, dict[str, Any]]]:
    """The streamed answer: the text in pieces (``done: false``), then the last object with the counts."""
    text = (content or "") if with_output else ""
    pieces = [
        ("chunk", {"model": request.get("model"), "created_at": CREATED_AT, "message": {"role": "assistant", "content": text[at : at + STREAM_PIECE_CHARS]}, "done": False})
        for at in range(0, len(text), STREAM_PIECE_CHARS)
    ]
    return [*pieces, ("done", _final(request, {"role": "assistant", "content": ""}, prompt, completion))]


def error(message: str, status: int) -> dict[str, Any]:
    """Ollama's error body (every status)."""
    return {"error": message}


def frame(name: str, data: dict[str, Any]) -> bytes:
    """One streamed object: a line of JSON."""
    return (json.dumps(data, ensure_ascii=False) + "\n").encode("utf-8")
