"""Images and files in a history, in every wire format (SPEC CORE-31, SUM-6): which content parts
carry media, what each one is (its kind and its payload), whether words name it, and what a
provider counts for it.

A media part is a content part or block of one of `KINDS`' types wherever it sits: a user turn's
parts, an Anthropic ``tool_result``'s content, a Responses ``function_call_output``'s output list.
Its payload is what makes it that image or file (a URL, base64 data, a file id), so one image
re-encoded from a chat ``data:`` URL into an Anthropic base64 block is the same payload.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from collections.abc import Iterable
from typing import Any

KINDS = {
    "image_url": "image", "input_image": "image", "image": "image",
    "file": "file", "input_file": "file", "document": "file",
    "input_audio": "audio", "audio": "audio",
}  # fmt: skip
"""Part type -> kind: chat-completions ``image_url``, ``file``, ``input_audio``; Responses
``input_image``, ``input_file``, ``input_audio``; Anthropic ``image``, ``document``."""
CARRIERS = frozenset({"image_url", "file", "input_audio", "file_id", "file_data", "file_url", "source", "data"})
"""The keys that hold a media part's payload in every format: a dict of a `KINDS` type without one (a
tool's input ``{"type": "document", "title": ...}``) is data, not media."""

NAMES = {
    "image": re.compile(r"\b(image|images|img|picture|photo|screenshot|input_image|image_url)s?\b|image/", re.IGNORECASE),
    "file": re.compile(r"\b(file|files|document|documents|pdf|attachment|attachments|input_file)\b|application/", re.IGNORECASE),
    "audio": re.compile(r"\b(audio|recording|sound|input_audio)\b|audio/", re.IGNORECASE),
}
"""The words that name a part of each kind (SPEC CORE-31 Decision: what "says so" means), a part's
own type among them: "dropped 1 input_image" (the OpenAI Agents SDK's ``ToolOutputTrimmer`` from
0.20.0) names the image it dropped."""

DATA_URL = re.compile(r"^data:[^,;]*(;[^,]*)?,")


def parts(value: Any) -> list[dict[str, Any]]:
    """Every media part inside ``value`` (an item, a message, a request), outermost first."""
    found: list[dict[str, Any]] = []

    def walk(inner: Any) -> None:
        if isinstance(inner, dict):
            if isinstance(inner.get("type"), str) and inner["type"] in KINDS and CARRIERS & inner.keys():  # a JSON schema's "type" may be a list
                found.append(inner)
                return
            for v in inner.values():
                walk(v)
        elif isinstance(inner, list):
            for v in inner:
                walk(v)

    walk(value)
    return found


def kind(part: dict[str, Any]) -> str:
    """``image``, ``file`` or ``audio``."""
    return KINDS[part["type"]]


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def payload(part: dict[str, Any]) -> str:
    """What makes ``part`` that image or file: its longest string (the URL, the base64 data or the
    file id) without a ``data:`` URL's header, so a re-encoding between formats keeps it."""
    longest = max((s for s in _strings(part) if s != part.get("type")), key=len, default="")
    return DATA_URL.sub("", longest)


def named(text: str, of: str) -> int:
    """How many times ``text`` names media of kind ``of``."""
    return len(NAMES[of].findall(text))


# --- what a provider counts (SPEC SUM-6)

UNSEEN_SIDE = 512
"""The side of an image the test double cannot see (one referred to by URL, one not a PNG): it
fetches nothing, so it counts a typical one-tile image (SPEC SUM-6 Decision)."""
PDF_PAGE_TOKENS = 1_500
"""What a PDF page costs Anthropic, at least (its PDF support guide: "each page typically uses
1,500-3,000 tokens"); the test double counts files so, for every provider."""


def image_size(part: dict[str, Any]) -> tuple[int, int] | None:
    """A PNG's width and height from its inline base64 data, else None."""
    data = payload(part)
    try:
        head = base64.b64decode(data[:64] + "=" * (-len(data[:64]) % 4), validate=False)
    except (binascii.Error, ValueError):
        return None
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def openai_image_tokens(width: int, height: int, detail: str = "auto") -> int:
    """OpenAI's count for a GPT-4o-class model (its vision guide, "Calculating costs"): 85 at
    ``low``; else the image scaled to fit 2048x2048, then its shorter side to 768, and 85 plus 170
    for each 512-pixel tile."""
    if detail == "low":
        return 85
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def anthropic_image_tokens(width: int, height: int) -> int:
    """Anthropic's count (its vision guide: "tokens = (width px * height px)/750"), the image first
    scaled so its long edge is at most 1,568 pixels."""
    scale = min(1.0, 1568 / max(width, height))
    return math.ceil(width * scale * height * scale / 750)


def part_tokens(part: dict[str, Any], provider: str) -> int:
    """What ``provider`` (``openai`` or ``anthropic``) counts for one media part."""
    if kind(part) == "file":
        raw = payload(part)
        try:
            pages = base64.b64decode(raw + "=" * (-len(raw) % 4)).count(b"/Type /Page") if len(raw) > 40 else 0
        except (binascii.Error, ValueError):
            pages = 0
        return PDF_PAGE_TOKENS * max(1, pages - 1)  # the /Type /Pages tree names itself too
    if kind(part) == "audio":
        return 0
    width, height = image_size(part) or (UNSEEN_SIDE, UNSEEN_SIDE)
    if provider == "anthropic":
        return anthropic_image_tokens(width, height)
    detail = (part.get("image_url") or {}).get("detail") if isinstance(part.get("image_url"), dict) else part.get("detail")
    return openai_image_tokens(width, height, detail if isinstance(detail, str) else "auto")


def tokens(value: Any, provider: str) -> int:
    """What ``provider`` counts for every media part of ``value`` (a request body)."""
    return sum(part_tokens(part, provider) for part in parts(value))
