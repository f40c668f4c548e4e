"""Claude Code session logs as Anthropic Messages API requests (wire format ``anthropic-messages``).

The same reader as the chat-completions importer (`benchmarks.traces.claude_code`: the file's
lines, the active branch through ``parentUuid``); here the messages stay in their own format
(this docstring documents it):

* ``assistant`` lines sharing ``message.id`` (one API response written block by block) make one
  assistant message whose blocks are the lines' blocks in order, byte-identical: ``thinking``
  with its ``signature``, ``redacted_thinking``, ``text``, ``tool_use``.
* Consecutive ``user`` lines make one user message (Claude Code writes each ``tool_result`` on
  its own line; the API takes a turn's results in the one user message after the call), their
  blocks in order; a string content alone stays a string.
* The log holds no system prompt: the request has no ``system``.
* Only what the API rejects is changed, and ``notes`` says so: a ``tool_use`` whose result is not
  in the next user message gets a ``tool_result`` ``[no result recorded]`` (``is_error``) there;
  a ``tool_result`` answering no ``tool_use`` of the assistant message before it is dropped;
  ``tool_result`` blocks are moved before the other blocks of their user message. A call
  unanswered at the very end stays in flight. A ``tool_use`` id used twice in the session (the
  API wants them unique in a request) gets a suffix ``_2`` (ids are letters, digits, ``_`` and ``-``), and so do the results answering it.
"""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path
from typing import Any

from .claude_code import NO_RESULT, ClaudeCodeImportError, _active_branch, _read_lines
from .format import Header, make_header

Request = dict[str, Any]


def import_claude_code_messages(path: str | Path, *, created: str | None = None) -> tuple[Header, Request]:
    """One Claude Code session log as ``(header, {"messages": [...]})`` (module docstring)."""
    path = Path(path)
    lines = _read_lines(path)
    branch, off_branch = _active_branch(lines, path)
    builder = _Builder()
    for number, line in branch:
        message = line.get("message")
        if not isinstance(message, dict):
            raise ClaudeCodeImportError(f"{path}:{number}: a {line.get('type')} line without a 'message' object")
        builder.line(line["type"], message)
    messages = builder.finish()
    notes = [f"Claude Code session {path.stem}: {len(branch)} conversation lines of {len(lines)} as {len(messages)} messages."]
    if off_branch:
        notes.append(f"Left out {off_branch} user/assistant line(s) off the active branch (rewound turns, sidechains).")
    notes += [f"{what[0].upper()}{what[1:]} ({n})." for what, n in sorted(builder.counts.items()) if n]
    session = str(next((line.get("sessionId") for _, line in lines if line.get("sessionId")), path.stem))
    header = make_header(
        f"claude-code:{session}", f"imported from Claude Code session log {path.name} by benchmarks.traces.claude_code_messages",
        created=created, notes=" ".join(notes), wire_format="anthropic-messages",
    )  # fmt: skip
    return header, {"messages": messages}


def _blocks(content: Any) -> list[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else copy.deepcopy(list(content or []))


class _Builder:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.response_id: Any = None
        self.counts: Counter[str] = Counter()
        self.seen_ids: set[Any] = set()
        self.renamed: dict[Any, str] = {}
        """A repeated tool_use id of the last assistant message -> its new id (for its results)."""

    def line(self, kind: str, message: dict[str, Any]) -> None:
        message = self._unique_ids(kind, copy.deepcopy(message))
        last = self.messages[-1] if self.messages else None
        if kind == "assistant":
            if last is not None and last["role"] == "assistant" and message.get("id") is not None and message.get("id") == self.response_id:
                last["content"] = _blocks(last["content"]) + _blocks(message.get("content"))
            else:
                self.messages.append({"role": "assistant", "content": copy.deepcopy(message.get("content"))})
            self.response_id = message.get("id")
        else:
            self.response_id = None
            if last is not None and last["role"] == "user":
                last["content"] = _blocks(last["content"]) + _blocks(message.get("content"))
            else:
                self.messages.append({"role": "user", "content": copy.deepcopy(message.get("content"))})

    def _unique_ids(self, kind: str, message: dict[str, Any]) -> dict[str, Any]:
        """The API rejects a tool_use id used twice in one request: a repeat gets a suffix, and
        the results that answer it the same id."""
        if kind == "assistant" and message.get("id") != self.response_id:
            self.renamed = {}
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if kind == "assistant" and block.get("type") == "tool_use":
                old = block.get("id")
                if old in self.seen_ids:
                    n = 2
                    while f"{old}_{n}" in self.seen_ids:
                        n += 1
                    block["id"] = self.renamed[old] = f"{old}_{n}"
                    self.counts["renamed: a tool_use id used twice in the session"] += 1
                self.seen_ids.add(block["id"])
            elif kind == "user" and block.get("type") == "tool_result" and block.get("tool_use_id") in self.renamed:
                block["tool_use_id"] = self.renamed[block["tool_use_id"]]
        return message

    def finish(self) -> list[dict[str, Any]]:
        """Pair every tool_result with the tool_use right before it (module docstring)."""
        out: list[dict[str, Any]] = []
        for message in self.messages:
            calls = _tool_uses(out[-1]) if out and out[-1]["role"] == "assistant" else []
            if message["role"] == "user":
                self._pair(message, calls)
            elif calls:  # an assistant message right after calls nobody answered
                out.append({"role": "user", "content": self._missing(calls, set())})
            out.append(message)
        return out  # a call unanswered at the very end stays in flight

    def _missing(self, calls: list[Any], answered: set[Any]) -> list[dict[str, Any]]:
        added = [{"type": "tool_result", "tool_use_id": c, "content": NO_RESULT, "is_error": True} for c in calls if c not in answered]
        self.counts["added: tool_result for an unanswered tool_use"] += len(added)
        return added

    def _pair(self, message: dict[str, Any], calls: list[Any]) -> None:
        blocks = _blocks(message["content"])
        results = [b for b in blocks if _is_result(b)]
        others = [b for b in blocks if not _is_result(b)]
        kept = [b for b in results if b.get("tool_use_id") in calls]
        if len(kept) < len(results):
            self.counts["dropped: tool_result answering no tool_use of the message before"] += len(results) - len(kept)
        new = kept + self._missing(calls, {b.get("tool_use_id") for b in kept}) + others
        if results and blocks[: len(results)] != results:
            self.counts["moved: tool_result blocks first in their user message"] += 1
        if new != blocks:
            message["content"] = new


def _is_result(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_result"


def _tool_uses(message: dict[str, Any]) -> list[Any]:
    return [b.get("id") for b in _blocks(message["content"]) if isinstance(b, dict) and b.get("type") == "tool_use"]
