"""The compaction-suite trace format: one JSONL file per agent episode (see FORMAT.md).

Line 1 is a header object; every further line is one OpenAI chat-completions
message dict. `write_trace` and `read_trace` both validate: the header's fields,
and the messages as a history (through `compaction_suite.reference.rounds.split_rounds`). Errors
are `TraceFormatError`, whose text names the file and the 1-based line.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from compaction_suite.message import Message
from compaction_suite.reference.errors import HistoryError
from compaction_suite.reference.rounds import split_rounds

FORMAT_NAME = "compaction-suite-trace"
FORMAT_VERSION = 1
HEADER_LINE = 1
"""Messages start on line 2, so message ``i`` sits on line ``i + 2``."""

REQUIRED_FIELDS: dict[str, type] = {
    "format": str,
    "version": int,
    "id": str,
    "source": str,
    "created": str,
    "notes": str,
    "planted_facts": list,
    "entity_ids": list,
}
OPTIONAL_LIST_FIELDS = ("corrections", "tools")

Header = dict[str, Any]


class TraceFormatError(ValueError):
    """A trace file (or a trace about to be written) breaks the format.

    ``path`` is the file, ``line`` the 1-based line at fault (``None`` when the
    file as a whole is wrong) and ``detail`` what is wrong.
    """

    def __init__(self, path: str | Path, line: int | None, detail: str) -> None:
        self.path = str(path)
        self.line = line
        self.detail = detail
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {detail}")


def today() -> str:
    """Today's UTC date as ``YYYY-MM-DD``, the default ``created`` value."""
    return _dt.datetime.now(_dt.UTC).date().isoformat()


def make_header(
    trace_id: str,
    source: str,
    *,
    created: str | None = None,
    notes: str = "",
    planted_facts: Sequence[str] = (),
    entity_ids: Sequence[str] = (),
    **extra: Any,
) -> Header:
    """Build a header dict with the required fields first, then ``extra`` ones."""
    header: Header = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "id": trace_id,
        "source": source,
        "created": created or today(),
        "notes": notes,
        "planted_facts": list(planted_facts),
        "entity_ids": list(entity_ids),
    }
    header.update(extra)
    return header


def validate_header(header: Any, path: str | Path = "<trace>") -> None:
    """Raise `TraceFormatError` (line 1) unless ``header`` is a valid header."""

    def fail(detail: str) -> None:
        raise TraceFormatError(path, HEADER_LINE, f"header: {detail}")

    if not isinstance(header, dict):
        fail(f"expected a JSON object, got {type(header).__name__}")
    for field, kind in REQUIRED_FIELDS.items():
        if field not in header:
            fail(f"missing field {field!r}")
        value = header[field]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            fail(f"field {field!r} must be {kind.__name__}, got {type(value).__name__}")
    if header["format"] != FORMAT_NAME:
        fail(f"'format' is {header['format']!r}, expected {FORMAT_NAME!r}")
    if header["version"] != FORMAT_VERSION:
        fail(f"unsupported version {header['version']!r}; this reader knows {FORMAT_VERSION}")
    if not header["id"]:
        fail("'id' is empty")
    for field in ("planted_facts", "entity_ids", "corrections"):
        if not all(isinstance(item, str) for item in header.get(field, [])):
            fail(f"every item of {field!r} must be a string")
    for field in OPTIONAL_LIST_FIELDS:
        if field in header and not isinstance(header[field], list):
            fail(f"optional field {field!r} must be a list")


def validate_messages(messages: Any, path: str | Path = "<trace>") -> None:
    """Raise `TraceFormatError` naming the message's line unless ``messages`` is a valid history."""
    try:
        split_rounds(messages)
    except HistoryError as error:
        line = None if error.index is None else error.index + HEADER_LINE + 1
        raise TraceFormatError(path, line, str(error)) from error
    for index, message in enumerate(messages):
        _check_content(message, path, index + HEADER_LINE + 1)


def _check_content(message: Message, path: str | Path, line: int) -> None:
    """Content is a string or a list of parts; ``null`` only on an assistant message."""
    content = message.get("content")
    if isinstance(content, (str, list)):
        return
    if content is None and message["role"] == "assistant":
        return
    raise TraceFormatError(path, line, f"{message['role']} message content must be a string or a list of parts")


def write_trace(path: str | Path, header: Header, messages: Sequence[Message]) -> None:
    """Validate, then write the header and messages as JSONL (UTF-8, one object per line)."""
    messages = list(messages)
    validate_header(header, path)
    validate_messages(messages, path)
    lines = [json.dumps(header, ensure_ascii=False)]
    lines += [json.dumps(message, ensure_ascii=False) for message in messages]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def read_trace(path: str | Path) -> tuple[Header, list[Message]]:
    """Read and validate a trace; return ``(header, messages)``."""
    objects = list(_read_objects(path))
    if not objects:
        raise TraceFormatError(path, HEADER_LINE, "empty file: expected a header line")
    header, messages = objects[0], objects[1:]
    validate_header(header, path)
    validate_messages(messages, path)
    return header, messages


def _read_objects(path: str | Path) -> list[Any]:
    """Parse every line as JSON; a blank line is an error except at the very end."""
    text = Path(path).read_text(encoding="utf-8")
    raw_lines = text.split("\n")
    if raw_lines and raw_lines[-1] == "":
        raw_lines.pop()
    objects = []
    for number, raw in enumerate(raw_lines, start=1):
        if not raw.strip():
            raise TraceFormatError(path, number, "blank line")
        try:
            objects.append(json.loads(raw))
        except json.JSONDecodeError as error:
            raise TraceFormatError(path, number, f"invalid JSON: {error.msg} (column {error.colno})") from error
    return objects
