"""Placeholders: the words a truncating compactor writes in place of what it removed, stating how
many messages went ("Skipped 4 messages.", "[... 3 messages elided ...]"). CORE-21 judges the count
such a statement gives; CORE-11 reads a message made only of one as a truncation's marker, not as a
summary (SPEC CORE-11 Decision: placeholders)."""

from __future__ import annotations

import re
from typing import Any

_REMOVED_VERB = r"(?:skipped|removed|omitted|dropped|truncated|elided|trimmed|pruned|deleted|cleared|hidden)"
_OF_MESSAGES = r"(?:(?:earlier|older|previous|prior|more|other|intermediate|middle)\s+)?(?:(?:chat|conversation)\s+)?messages?\b"
STATED_COUNT = (
    re.compile(rf"(?i)\b{_REMOVED_VERB}\s+(\d+)\s+{_OF_MESSAGES}"),
    re.compile(rf"(?i)\b(\d+)\s+{_OF_MESSAGES}\s+(?:(?:were|was|have\s+been|has\s+been|are|got)\s+)?{_REMOVED_VERB}\b"),
)
"""How a placeholder states the number of messages it stands for: "Skipped 4 messages.", "4 earlier
messages were omitted", "[12 messages removed]" (SPEC CORE-21)."""

_LEFT_OVER = re.compile(r"[\W_]+")
"""What may surround a count statement in a placeholder and nothing else: brackets, dots, dashes, spaces."""


def stated_counts(text: str) -> list[tuple[str, int]]:
    """Each statement in ``text`` of a number of messages removed: the words, and the number."""
    return [(m.group(0), int(m.group(1))) for pattern in STATED_COUNT for m in pattern.finditer(text)]


def only_placeholder(text: str) -> bool:
    """Whether ``text`` says nothing but how many messages were removed ("[... 3 messages elided ...]")."""
    rest = text
    for pattern in STATED_COUNT:
        rest = pattern.sub(" ", rest)
    return rest != text and not _LEFT_OVER.sub("", rest)


TEXT_PARTS = ("text", "input_text", "output_text")
"""The content parts and blocks that carry text: chat-completions and Anthropic ``text``, Responses ``input_text`` and ``output_text``."""


def _placeholder_part(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") in TEXT_PARTS and isinstance(part.get("text"), str) and only_placeholder(part["text"])


def without_placeholders(message: Any) -> Any:
    """``message`` without the placeholders a compactor put in it: a string content that is one is
    emptied, a text part or block that is one (`TEXT_PARTS`) is left out."""
    if not isinstance(message, dict):
        return message
    content = message.get("content")
    if isinstance(content, str) and only_placeholder(content):
        return {**message, "content": ""}
    if isinstance(content, list):
        return {**message, "content": [part for part in content if not _placeholder_part(part)]}
    return message


def is_placeholder(message: Any) -> bool:
    """Whether ``message`` holds nothing but placeholders (a truncation's marker standing alone)."""
    bare = without_placeholders(message)
    return isinstance(message, dict) and bare != message and bare.get("content") in ("", [])
