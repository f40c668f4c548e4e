"""Claude Code session logs (``~/.claude/projects/<project>/<session>.jsonl``) as traces.

The mapping (FORMAT.md, "Claude Code sessions") follows the format's public descriptions
(Anthropic's Agent SDK session docs; community schema notes, see FORMAT.md): every line is
a JSON object with a ``type``; ``user`` and ``assistant`` lines carry ``message``, an
Anthropic Messages API message, and link to their parent by ``uuid``/``parentUuid``.

* The conversation is the active branch: from the last ``user``/``assistant`` line that is
  not a sidechain (a subagent's), back through ``parentUuid`` to the root. Lines off that
  branch (rewound turns, sidechains) are left out and counted in ``notes``.
* ``assistant`` lines sharing ``message.id`` (one API response written block by block) make
  one assistant message: text blocks become its content (one string, blocks joined by a blank
  line), ``tool_use`` blocks its ``tool_calls`` (``id`` kept, ``input`` JSON-encoded as
  ``arguments``); ``thinking`` blocks have no chat-completions field and are dropped (counted).
* A ``user`` line's ``tool_result`` blocks become ``tool`` messages (``tool_use_id`` is the
  ``tool_call_id``; text kept, string or text parts; images dropped and counted); its text and
  image blocks become one ``user`` message (images as ``image_url`` data URLs).
* Other line types (``system`` notices, ``summary`` titles, ``file-history-snapshot``, ...)
  are the harness's, not the model's, and are dropped with their counts. The log holds no
  system prompt and no tool definitions.
* Only what the chat-completions API would reject is changed, and ``notes`` says so: a
  ``tool_use`` left without a result before the next message (an interrupted call) gets a
  ``tool`` message ``[no result recorded]``; a ``tool_result`` answering no call of its round
  is dropped. A call still unanswered at the end stays in flight (SPEC ROUND-3).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from compaction_suite.reference.errors import HistoryError
from compaction_suite.reference.rounds import split_rounds

from .format import Header, Message, make_header
from .jsonlines import json_objects

NO_RESULT = "[no result recorded]"
CONVERSATION = ("user", "assistant")


class ClaudeCodeImportError(ValueError):
    """A session log the importer cannot read; the text names the file and the line."""


def import_claude_code(path: str | Path, *, created: str | None = None) -> tuple[Header, list[Message]]:
    """One Claude Code session log as ``(header, messages)``; see the module docstring."""
    path = Path(path)
    lines = _read_lines(path)
    branch, off_branch = _active_branch(lines, path)
    converter = _Converter()
    for number, line in branch:
        converter.line(line, number)
    messages = converter.finish()
    try:
        split_rounds(messages)
    except HistoryError as error:  # a bug here, not in the log: the converter makes valid histories
        raise ClaudeCodeImportError(f"{path}: converted history is invalid: {error}") from error
    skipped = Counter(str(line.get("type")) for _, line in lines if line.get("type") not in CONVERSATION)
    notes = [f"Claude Code session {path.stem}: {len(branch)} conversation lines of {len(lines)}."]
    if off_branch:
        notes.append(f"Left out {off_branch} user/assistant line(s) off the active branch (rewound turns, sidechains).")
    if skipped:
        notes.append("Dropped harness lines: " + ", ".join(f"{k} ({v})" for k, v in sorted(skipped.items())) + ".")
    notes += converter.notes()
    session = str(next((line.get("sessionId") for _, line in lines if line.get("sessionId")), path.stem))
    header = make_header(
        f"claude-code:{session}",
        f"imported from Claude Code session log {path.name} by benchmarks.traces.claude_code",
        created=created,
        notes=" ".join(notes),
    )
    return header, messages


def _read_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    return json_objects(path, ClaudeCodeImportError)


def _active_branch(lines: list[tuple[int, dict[str, Any]]], path: Path) -> tuple[list[tuple[int, dict[str, Any]]], int]:
    """The user/assistant lines from the root to the last main-chain one, and how many were left out."""
    talk = [(n, line) for n, line in lines if line.get("type") in CONVERSATION]
    main = [(n, line) for n, line in talk if not line.get("isSidechain")]
    if not main:
        return [], len(talk)
    by_uuid = {line["uuid"]: (n, line) for n, line in lines if isinstance(line.get("uuid"), str)}
    chain, seen = [], set()
    current: tuple[int, dict[str, Any]] | None = main[-1]
    while current is not None:
        number, line = current
        if line.get("uuid") in seen:
            raise ClaudeCodeImportError(f"{path}:{number}: parentUuid chain loops")
        seen.add(line.get("uuid"))
        if line.get("type") in CONVERSATION:
            chain.append(current)
        current = by_uuid.get(line.get("parentUuid"))
    chain.reverse()
    return chain, len(talk) - len(chain)


class _Converter:
    """Builds the chat-completions history line by line; counts what it dropped or added."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.response_id: str | None = None
        """``message.id`` of the assistant message being assembled (None after any user line)."""
        self.pending: list[str] = []
        self.dropped: Counter[str] = Counter()

    def line(self, line: dict[str, Any], number: int) -> None:
        message = line.get("message")
        if not isinstance(message, dict):
            raise ClaudeCodeImportError(f"line {number}: a {line.get('type')} line without a 'message' object")
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            raise ClaudeCodeImportError(f"line {number}: message content must be a string or a list of blocks")
        if line["type"] == "assistant":
            self._assistant(message.get("id"), blocks)
        else:
            self._user(blocks, plain=isinstance(content, str))

    # assistant lines

    def _assistant(self, response_id: Any, blocks: list[Any]) -> None:
        if response_id is None or response_id != self.response_id:
            self._answer_pending()
            self.messages.append({"role": "assistant", "content": None})
            self.response_id = response_id
        current = self.messages[-1]
        for block in blocks:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                current["content"] = "\n\n".join(filter(None, [current["content"], block.get("text", "")])) or ""
            elif kind == "tool_use":
                arguments = json.dumps(block.get("input", {}), ensure_ascii=False)
                call_id = str(block["id"])
                function = {"name": str(block["name"]), "arguments": arguments}
                current.setdefault("tool_calls", []).append({"id": call_id, "type": "function", "function": function})
                self.pending.append(call_id)
            else:
                self.dropped[f"assistant {kind} block"] += 1

    # user lines

    def _user(self, blocks: list[Any], plain: bool) -> None:
        self.response_id = None
        parts: list[dict[str, Any]] = []
        for block in blocks:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "tool_result":
                self._tool_result(block)
            elif kind == "text":
                parts.append({"type": "text", "text": str(block.get("text", ""))})
            elif kind == "image" and _image_url(block):
                parts.append({"type": "image_url", "image_url": {"url": _image_url(block)}})
            else:
                self.dropped[f"user {kind} block"] += 1
        if parts:
            self._answer_pending()
            only_text = plain or (len(parts) == 1 and parts[0]["type"] == "text")
            self.messages.append({"role": "user", "content": parts[0]["text"] if only_text else parts})

    def _tool_result(self, block: dict[str, Any]) -> None:
        call_id = str(block.get("tool_use_id"))
        if call_id not in self.pending:
            self.dropped["tool_result answering no call of its round"] += 1
            return
        self.pending.remove(call_id)
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": self._result_content(block.get("content"))})

    def _result_content(self, content: Any) -> str | list[dict[str, Any]]:
        if isinstance(content, str):
            return content
        texts = []
        for item in content if isinstance(content, list) else []:
            if isinstance(item, dict) and item.get("type") == "text":
                texts.append({"type": "text", "text": str(item.get("text", ""))})
            else:
                self.dropped["non-text tool_result part"] += 1
        if len(texts) == 1:
            return texts[0]["text"]
        return texts or ""

    def _answer_pending(self) -> None:
        """Calls left unanswered before the next message: the API rejects that, so say so."""
        for call_id in self.pending:
            self.messages.append({"role": "tool", "tool_call_id": call_id, "content": NO_RESULT})
            self.dropped["added: result for an unanswered call"] += 1
        self.pending = []

    def finish(self) -> list[Message]:
        """The history; a call unanswered at the very end stays in flight (ROUND-3)."""
        for message in self.messages:
            if message["role"] == "assistant" and message["content"] is None and not message.get("tool_calls"):
                message["content"] = ""  # only thinking blocks: the API needs content or tool_calls
                self.dropped["added: empty content for an assistant message of thinking only"] += 1
        return self.messages

    def notes(self) -> list[str]:
        added = {k: v for k, v in self.dropped.items() if k.startswith("added: ")}
        dropped = {k: v for k, v in self.dropped.items() if k not in added}
        notes = []
        if dropped:
            notes.append("Dropped: " + ", ".join(f"{k} ({v})" for k, v in sorted(dropped.items())) + ".")
        if added:
            what = ", ".join(f"{k[len('added: '):]} ({v}, content {NO_RESULT!r})" if "unanswered" in k else f"{k[len('added: '):]} ({v})" for k, v in sorted(added.items()))
            notes.append(f"Changed only what the API would reject: {what}.")
        return notes


def _image_url(block: dict[str, Any]) -> str | None:
    source: dict[str, Any] = block["source"] if isinstance(block.get("source"), dict) else {}
    if source.get("type") == "base64" and source.get("data"):
        return f"data:{source.get('media_type', 'image/png')};base64,{source['data']}"
    if source.get("type") == "url" and source.get("url"):
        return str(source["url"])
    return None
