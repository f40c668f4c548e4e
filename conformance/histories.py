"""Hypothesis strategies for agent histories (OpenAI chat-completions message lists).

These strategies are public: a compactor's own test suite may draw from them.
Every strategy builds fresh dicts for every example, so a compactor that
mutates its input (a CORE-5 violation) never corrupts a later example.

The vocabulary of a history:

- ``system_prompts()``: a ``system`` (or ``developer``) message.
- ``earlier_summaries()``: a ``user`` message starting with ``[Context Summary]``,
  as an earlier compaction leaves it (SPEC SUM-2), placed right after the system prompts.
- ``user_turns()``: questions, instructions and corrections ("No, use X instead of Y"), some pasting
  several lines (a traceback, log lines, a command's output, a document's paragraphs),
  with plain or multimodal (text and image parts) content.
- ``assistant_replies()``: a bare assistant text reply.
- ``tool_rounds()``: an assistant message with parallel ``tool_calls`` followed by one
  ``tool`` result per call, in any order (SPEC ROUND-1).
- ``histories()``: all of the above in a realistic agent order, with the labelled shapes where
  real compaction bugs lived (`SHAPES`: wide parallel rounds, long tool loops, stacked earlier
  summaries, huge results, a newest round over the budget, entity bursts) mixed in, or forced
  with ``shapes=``, and sized to a target's trigger with ``min_tokens``/``min_messages``
  (`conformance.shapes` labels, detects and measures them in every wire format).
- ``agent_shaped(strategy)``: the same histories as frameworks send them (text-part content for
  system and tool messages, optional keys, huge tool-call arguments).
- ``real_traffic()``: histories in the shapes real traffic has (reused ids across
  rounds, ``name``, refusals, text parts, empty assistant content next to tool calls,
  ids nested in records).

Tools: ``readFile``, ``search`` and ``runCommand`` return plain text (sometimes tens
of kB of it); ``createEntity`` returns a JSON object with a top-level string ``"id"``
(an entity, SPEC STRUCT-2); ``reportProgress`` takes ``{"tasks": [{"title", "status"}]}``
(SPEC STRUCT-3) and returns a short acknowledgement. Only ``createEntity`` results are
JSON objects, so `entity_ids` (SPEC ENT-1: identifier-like keys at any depth) finds exactly
the entities the generator created, plus the related ids `real_traffic` nests beside them.
That reading (`entity_ids`, `latest_task_list`, ...) is the verifier's, in `conformance.entities`
(no Hypothesis there); it is re-exported here for suites written against this module.

Tool-call ids are ``call_0001``, ``call_0002``, ... numbered in drawing order and
unique across everything drawn in one example (a counter held in ``st.shared``), so
``st.lists(tool_rounds())`` concatenated is still a valid history (SPEC HIST-6 asks less:
unique within one assistant message; `real_traffic` reuses ids across rounds).
"""

from __future__ import annotations

import base64
import functools
import itertools
import json
import random
import struct
import zlib
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any, TypeVar

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.strategies import SearchStrategy

from compaction_suite.message import Message
from compaction_suite.text import SUMMARY_PREFIX, chars_per_four

from .entities import (  # re-exported: the verifier's rules, once imported from here
    CODING_AGENT_TASK_LISTS,
    PROGRESS_TOOL,
    SEED_001_TASK_LIST,
    IdRule,
    TaskListTools,
    entity_ids,
    id_rule,
    is_id_key,
    latest_task_list,
    latest_task_titles,
)
from .oracle import is_summary

T = TypeVar("T")

GENERIC_TOOLS = ("readFile", "search", "runCommand")
ENTITY_TOOL = "createEntity"
TOOL_NAMES = (*GENERIC_TOOLS, ENTITY_TOOL, PROGRESS_TOOL)
TASK_STATUSES = ("completed", "in_progress", "pending")

__all__ = [
    "CODING_AGENT_TASK_LISTS",
    "SEED_001_TASK_LIST",
    "IdRule",
    "TaskListTools",
    "id_rule",
    "is_id_key",
    "latest_task_titles",
    "ENTITY_TOOL",
    "GENERIC_TOOLS",
    "PROGRESS_TOOL",
    "SUMMARY_PREFIX",
    "TASK_STATUSES",
    "TOOL_NAMES",
    "Message",
    "agent_shaped",
    "assistant_replies",
    "earlier_summaries",
    "entity_ids",
    "histories",
    "image_parts",
    "png",
    "file_parts",
    "media_round",
    "with_tool_media",
    "IMAGE_HOST",
    "draw_files",
    "draw_images_by_url",
    "latest_task_list",
    "long_tool_outputs",
    "multimodal_contents",
    "pasted_documents",
    "real_traffic",
    "system_prompts",
    "task_lists",
    "text",
    "tool_rounds",
    "user_turns",
]

# --- vocabulary --------------------------------------------------------------

WORDS = (
    "the", "config", "parser", "cache", "deploy", "build", "test", "service", "request",
    "handler", "database", "migration", "schema", "token", "budget", "retry", "timeout",
    "endpoint", "queue", "worker", "index", "query", "module", "release", "branch",
    "report", "invoice", "customer", "order", "dashboard", "error", "log", "latency",
    "a", "to", "for", "with", "and", "in", "is", "not", "after", "before",
)  # fmt: skip
NON_ASCII_WORDS = (
    "café", "naïve", "Zürich", "façade", "São Paulo", "crème brûlée", "Ångström",  # accents
    "e\u0301tude",  # a combining accent (not NFC)
    "日本語", "数据库连接", "東京", "設定ファイル", "こんにちは", "한국어", "검색 결과",  # CJK, kana, hangul
    "Привет", "Ελληνικά", "नमस्ते",
    "שלום", "עברית", "مرحبا", "العربية",  # RTL
    "🚀", "👍🏽", "\U0001F468\u200d\U0001F469\u200d\U0001F467", "🇯🇵", "✅",  # emoji: skin tone, ZWJ family, flag
)  # fmt: skip
ALTERNATIVES = (
    ("pytest", "unittest"), ("pnpm", "npm"), ("PostgreSQL", "SQLite"), ("httpx", "requests"),
    ("UTC", "local time"), ("ruff", "flake8"), ("the staging database", "production"),
    ("tabs", "spaces"), ("async def", "threads"), ("git rebase", "git merge"),
)  # fmt: skip
PATHS = (
    "src/app.py", "src/compactor/rounds.py", "tests/test_rounds.py", "README.md",
    "pyproject.toml", "web/src/index.ts", "config/settings.yaml", "docs/設計メモ.md",
    "src/café/menu.py",
)  # fmt: skip
CODE_LINES = (
    "import json",
    "from dataclasses import dataclass",
    "",
    "def handler(request):",
    "    payload = json.loads(request.body)",
    "    if not payload:",
    '        raise ValueError("empty payload")',
    "    return {'ok': True, 'items': payload.get('items', [])}",
    "class Settings:",
    "    timeout: float = 30.0",
    "    # TODO: make the retry budget configurable",
    "export function render(node: Node): string {",
    "  return node.children.map(render).join('');",
    "}",
    'name = "compaction-suite"',
)
COMMANDS = (
    "pytest -q", "git status", "ls -la src", "npm run build", "python -m mypy src",
    "cat /etc/os-release", "grep -rn TODO src", "docker compose ps",
)  # fmt: skip
ENTITY_TYPES = ("task", "ticket", "document", "customer", "invoice", "project", "note")
TASK_VERBS = ("Fix", "Add", "Refactor", "Document", "Test", "Migrate", "Review", "Deploy")
SYSTEM_PERSONAS = (
    "You are a coding agent working in the user's repository.",
    "You are an admin assistant for a ticketing system.",
    "You are a research agent. Cite your sources.",
)
ACKS = ("Progress updated.", "OK", "Task list saved.")

_CALL_IDS = st.shared(st.builds(itertools.count, st.just(1)), key="compaction_suite.histories.call_ids")
"""One counter per example, shared by every strategy drawing tool calls in it."""

# --- drawing helpers -------------------------------------------------------------
# Generation speed is draw count: each draw costs Hypothesis some microseconds, so
# choices are drawn as one integer each and strategies are built once and cached.

_cached = functools.lru_cache(maxsize=256)
"""Memoize a strategy factory: building and validating strategies costs more than drawing."""


@_cached
def _below(n: int) -> SearchStrategy[int]:
    return st.integers(0, n - 1)


def _pick(draw: st.DrawFn, options: Sequence[T]) -> T:
    """One of ``options``; shrinks to the first."""
    return options[draw(_below(len(options)))]


def _one_in(draw: st.DrawFn, n: int) -> bool:
    """True about one time in ``n``; shrinks to False."""
    return draw(_below(n)) == n - 1


# --- text ----------------------------------------------------------------------

_WORD_POOL = WORDS * 3 + NON_ASCII_WORDS
"""English words, each three times as likely as a non-ASCII one."""

_SPICE = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=6
)
"""A few arbitrary characters; line and paragraph separators are left out so lines stay lines."""


_SEEDS = st.integers(0, 2**32 - 1)


@st.composite
def _texts(draw: st.DrawFn, count: SearchStrategy[int], non_ascii: bool) -> str:
    pool, size = (_WORD_POOL if non_ascii else WORDS), draw(count)
    seed = draw(_SEEDS) if size else 0  # one draw for all the words; seed 0, where shrinking ends, is "the the ..."
    words = [pool[0]] * size if seed == 0 else random.Random(seed).choices(pool, k=size)
    if non_ascii and words and _one_in(draw, 10):
        words[draw(_below(len(words)))] = draw(_SPICE)
    return " ".join(words)


@_cached
def text(*, min_words: int = 1, max_words: int = 12, non_ascii: bool = True) -> SearchStrategy[str]:
    """Space-separated words from a small vocabulary; never empty when ``min_words >= 1``.

    With ``non_ascii`` (the default) some words are accented (one not in NFC), CJK,
    Cyrillic, Greek, Devanagari, RTL (Hebrew, Arabic) or emoji (skin tones, ZWJ
    sequences, flags), and one text in ten has a word of arbitrary Unicode characters
    (no control characters, no line or paragraph separators). Shrinks to ``"the"``.
    """
    if not 0 <= min_words <= max_words:
        raise InvalidArgument(f"need 0 <= min_words <= max_words, got {min_words}, {max_words}")
    return _texts(st.integers(min_words, max_words), non_ascii)


# --- system, user and assistant messages ---------------------------------------


@st.composite
def _system_prompts(draw: st.DrawFn) -> Message:
    role = _pick(draw, ("system", "system", "developer"))
    rules = [f"- {draw(text(max_words=8))}" for _ in range(draw(_below(4)))]
    return {"role": role, "content": "\n".join([_pick(draw, SYSTEM_PERSONAS), *rules])}


@_cached
def system_prompts() -> SearchStrategy[Message]:
    """A ``system`` message (one in three is ``developer``): a persona and up to three rules."""
    return _system_prompts()


def _question(draw: st.DrawFn) -> str:
    """A plain request: a templated question, one about a path, free-form words, or (one in four) a
    document's paragraphs pasted with a lead sentence (`_document`)."""
    kind = draw(_below(4))
    if kind == 3:
        return _document(draw)
    if kind == 0:
        return f"How do I {draw(text(max_words=4))}?"
    if kind == 1:
        return f"Can you look at {_pick(draw, PATHS)} and {draw(text(max_words=6))}?"
    return draw(text(max_words=16))


def _correction(draw: st.DrawFn) -> str:
    """A user correcting the agent, e.g. "No, use pytest instead of unittest.", or (one in four) asking
    whether a pasted document still holds (`_document`)."""
    instead, of = _pick(draw, ALTERNATIVES)
    kind = draw(_below(4))
    if kind == 3:
        return _document(draw)
    if kind == 0:
        return f"No, use {instead} instead of {of}."
    if kind == 1:
        return f"Actually, use {instead} instead of {of}: {draw(text(max_words=6))}"
    return f"No, that's wrong. {draw(text(max_words=10))}"


PASTED_ONE_IN = 4
"""One user turn in this many (of those not a correction) pastes what the user saw: a traceback, a log
excerpt or a command's output, several lines in one string (SPEC Part A, Decision: pasted text)."""
PASTED_LEADS = (
    "I get this error when I run {command}, can you tell me what is wrong?",
    "Here is the output of {command} from the build machine, what failed?",
    "This is what the {word} {other} logged before it stopped:",
)
DOCUMENT_BREAKS = ("\u2028", "\u0085")
"""The line breaks text copied from a document carries inside a paragraph, which are not ``\n``: U+2028 LINE
SEPARATOR (a layout program's forced line break, InDesign's among them; JavaScript strings) and U+0085 NEXT
LINE (the EBCDIC line end, which text converted from a mainframe file carries). Python's ``str.splitlines``
breaks at both, as at ``\n``."""


def _pasted(draw: st.DrawFn) -> str:
    """A request pasting several lines the user copied (a Python traceback, log lines, a command's
    output, a document's paragraphs whose layout lines break at U+2028 or U+0085), as users paste them:
    a lead sentence, a blank line, then the lines (SPEC Part A)."""
    lead = _pick(draw, PASTED_LEADS).format(command=_pick(draw, COMMANDS), word=_pick(draw, WORDS), other=_pick(draw, WORDS))
    kind = draw(_below(4))
    if kind == 3:
        return _document(draw)
    if kind == 0:
        start = draw(_below(len(CODE_LINES)))
        frames = [f'  File "{_pick(draw, PATHS)}", line {1 + draw(_below(900))}, in handler\n    {CODE_LINES[(start + n) % len(CODE_LINES)].strip()}' for n in range(1 + draw(_below(3)))]
        lines = ["Traceback (most recent call last):", *frames, f"ValueError: {draw(text(max_words=6))}"]
    elif kind == 1:
        lines = [draw(_LOG_LINE) for _ in range(2 + draw(_below(4)))]
    else:
        lines = [f"$ {_pick(draw, COMMANDS)}", *(draw(_LOG_LINE) for _ in range(1 + draw(_below(4))))]
    return "\n".join([lead, "", *lines])


def _document(draw: st.DrawFn) -> str:
    """A lead sentence, a blank line, then one or two paragraphs copied from a document (`_paragraph`)."""
    return "\n".join([f"I copied this from the {_pick(draw, WORDS)} design document, does it still hold?", "", *(draw(_paragraph) for _ in range(1 + draw(_below(2))))])


@st.composite
def _paragraphs(draw: st.DrawFn) -> str:
    """A paragraph copied from a document: two or three sentences, the lines of its layout broken by one
    of `DOCUMENT_BREAKS` rather than ``\n`` (SPEC Part A, Decision: pasted text)."""
    return _pick(draw, DOCUMENT_BREAKS).join(f"{draw(text(min_words=3, max_words=9))}." for _ in range(2 + draw(_below(2))))


_paragraph = _paragraphs()


@st.composite
def _pasted_documents(draw: st.DrawFn) -> Message:
    return {"role": "user", "content": _document(draw)}


@_cached
def pasted_documents() -> SearchStrategy[Message]:
    """A ``user`` message pasting a document's paragraphs: a lead sentence, a blank line, then one or two
    paragraphs whose layout lines break at one of `DOCUMENT_BREAKS` (the kind of `_pasted` a test forces)."""
    return _pasted_documents()


@st.composite
def _user_turns(draw: st.DrawFn, corrections: bool, multimodal: bool) -> Message:
    if corrections and _one_in(draw, 4):
        words = _correction(draw)
    else:
        words = _pasted(draw) if _one_in(draw, PASTED_ONE_IN) else _question(draw)
    if multimodal and _one_in(draw, 6):
        return {"role": "user", "content": [{"type": "text", "text": words}, *draw(multimodal_contents())]}
    return {"role": "user", "content": words}


@_cached
def user_turns(*, corrections: bool = True, multimodal: bool = True) -> SearchStrategy[Message]:
    """A ``user`` message: a question or instruction, or (one in four, with ``corrections``)
    a correction such as "No, use pytest instead of unittest."; one in `PASTED_ONE_IN` of the others
    pastes several lines (a traceback, log lines, a command's output, a document's paragraphs) in its
    string (`_pasted`), and questions and corrections may paste a document too (`_document`).

    With ``multimodal``, one in six has list content: a text part, then
    `multimodal_contents`; the others have string content.
    """
    return _user_turns(corrections, multimodal)


@st.composite
def _assistant_replies(draw: st.DrawFn) -> Message:
    body = draw(text(max_words=20))
    if _one_in(draw, 4):
        start, length = draw(_below(len(CODE_LINES))), draw(st.integers(1, 4))
        body = f"{body}\n\n```python\n{_excerpt(start, length)}\n```"
    return {"role": "assistant", "content": body}


@_cached
def assistant_replies() -> SearchStrategy[Message]:
    """A bare ``assistant`` text reply (no tool calls): prose, one in four with a code block."""
    return _assistant_replies()


# --- multimodal content -------------------------------------------------------


def png(width: int, height: int, seed: int) -> bytes:
    """A valid RGB PNG of noise pixels (noise does not compress, so big images stay big)."""
    pixels = random.Random(seed).randbytes(width * height * 3)
    return _png(width, height, b"".join(b"\x00" + pixels[y * width * 3 : (y + 1) * width * 3] for y in range(height)))


def _png(width: int, height: int, rows: bytes) -> bytes:
    """An RGB PNG of ``rows`` (each a filter byte and its pixels), compressed."""

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def flat_png(width: int, height: int, shade: int) -> bytes:
    """A valid RGB PNG of one grey ``shade`` (0-255): its header says its size, as a screenshot's does,
    and its rows compress to a few kilobytes, so a history can hold several large ones (SPEC FIRE-7
    Decision: pasted screenshots)."""
    return _png(width, height, (b"\x00" + bytes([shade % 256]) * (width * 3)) * height)


IMAGE_HOST = "https://images.example.com/"
"""Where an image referred to by URL lives (`image_parts`): a host no test fetches."""
_IMAGES_BY_URL = [True]
_FILES = [True]


def draw_files(allowed: bool) -> None:
    """Whether the tool results the histories draw from now on may hold a file (a PDF): the suite
    says not for a target declaring ``files: none``, whose framework's messages hold text and
    images only (SPEC Part A, Declarations: ``files``); `with_tool_media` then reads images only."""
    _FILES[0] = allowed


def draw_images_by_url(allowed: bool) -> None:
    """Whether the images the histories draw from now on may be referred to by URL: the suite says
    not for a target whose framework holds images as bytes only (SPEC Part A, Declarations:
    ``images``); every strategy of this module, and of the formats built on it, follows."""
    _IMAGES_BY_URL[0] = allowed


@st.composite
def _image_parts(draw: st.DrawFn) -> dict[str, Any]:
    side = _pick(draw, (1, 2, 8, 32, 64))
    seed = draw(_below(2**32))
    if _IMAGES_BY_URL[0] and seed % 3 == 0:  # one in three by URL, from the same draws as an inline one
        image_url = {"url": f"{IMAGE_HOST}{side:02d}-{seed:08x}.png"}
    else:
        image_url = {"url": "data:image/png;base64," + base64.b64encode(png(side, side, seed)).decode("ascii")}
    detail = _pick(draw, (None, "auto", "low", "high"))
    if detail is not None:
        image_url["detail"] = detail
    return {"type": "image_url", "image_url": image_url}


@_cached
def image_parts() -> SearchStrategy[dict[str, Any]]:
    """An ``image_url`` content part: ``{"type": "image_url", "image_url": {"url", "detail"?}}``.

    The url is ``data:image/png;base64,...`` holding a valid square PNG of 1 to 64
    pixels a side (up to about 16 kB of base64), or, one in three unless `draw_images_by_url`
    said otherwise, an https URL the API would fetch it from (``https://images.example.com/...png``,
    unique per draw).
    """
    return _image_parts()


@st.composite
def _multimodal_contents(draw: st.DrawFn, max_parts: int) -> list[dict[str, Any]]:
    parts = []
    for _ in range(draw(_below(max_parts))):
        parts.append(draw(image_parts()) if _one_in(draw, 2) else {"type": "text", "text": draw(text(max_words=10))})
    at = draw(_below(len(parts) + 1))
    return [*parts[:at], draw(image_parts()), *parts[at:]]


@_cached
def multimodal_contents(*, max_parts: int = 4) -> SearchStrategy[list[dict[str, Any]]]:
    """User content as a list of 1..``max_parts`` parts, ``{"type": "text", "text"}`` and
    `image_parts` mixed, with at least one image. Shrinks to a lone image."""
    if max_parts < 1:
        raise InvalidArgument(f"max_parts must be >= 1, got {max_parts}")
    return _multimodal_contents(max_parts)


def _pdf(pages: int, seed: int, embedded: int = 0) -> bytes:
    """A small valid PDF of ``pages`` pages, each saying one line of text (a report's page), with an
    embedded stream of ``embedded`` bytes drawn from ``seed`` (a font program or a scan's image data,
    which make most real PDFs tens of kB) where given."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", ""]
    kids = []
    for n in range(pages):
        stream = f"BT /F1 12 Tf 72 720 Td (Quarterly report {seed:08x}, page {n + 1}) Tj ET".encode()
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {len(objects) + 2} 0 R /Resources << /Font << /F1 {2 * pages + 3} 0 R >> >> >>")
        kids.append(f"{len(objects)} 0 R")
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream.decode()}\nendstream")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {pages} >>"
    objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    if embedded:
        data = random.Random(seed).randbytes(embedded).replace(b"/Type", b"/Typf")  # no stray object type
        objects.append(f"<< /Length {embedded} >>\nstream\n{data.decode('latin-1')}\nendstream")
    body, offsets = b"%PDF-1.4\n", []
    for n, obj in enumerate(objects, 1):
        offsets.append(len(body))
        body += f"{n} 0 obj\n{obj}\nendobj\n".encode("latin-1")
    xref = len(body)
    body += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode() + b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    return body + f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()


def pdf_part(seed: int, embedded: int = 0) -> dict[str, Any]:
    """A chat-completions ``file`` part holding a one-page PDF (`_pdf`) inline."""
    data = "data:application/pdf;base64," + base64.b64encode(_pdf(1, seed, embedded)).decode("ascii")
    return {"type": "file", "file": {"filename": f"report-{seed:08x}.pdf", "file_data": data}}


@st.composite
def _file_parts(draw: st.DrawFn) -> dict[str, Any]:
    seed, pages = draw(_below(2**32)), draw(st.integers(1, 3))
    data = "data:application/pdf;base64," + base64.b64encode(_pdf(pages, seed)).decode("ascii")
    return {"type": "file", "file": {"filename": f"report-{seed:08x}.pdf", "file_data": data}}


@_cached
def file_parts() -> SearchStrategy[dict[str, Any]]:
    """A chat-completions ``file`` part: ``{"type": "file", "file": {"filename", "file_data"}}``, a
    valid PDF of 1 to 3 pages inline (a ``data:application/pdf;base64,`` URL), as the API takes a
    file in a user turn."""
    return _file_parts()


MEDIA_PATHS = {"image": "assets/chart-{:04x}.png", "file": "docs/report-{:04x}.pdf"}
"""Where a tool reads an image or a file from (`with_tool_media`): names that say no kind word but
the extension (SPEC CORE-31 Decision: what names media)."""


@st.composite
def _media_result(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]]]:
    """(path, content parts) of a tool that read an image or a PDF (an image only where files are
    not drawn, `draw_files`): the media part, one in two after a line of text saying what was read."""
    part = draw(file_parts()) if _one_in(draw, 4) and _FILES[0] else draw(image_parts())
    path = MEDIA_PATHS["file" if part["type"] == "file" else "image"].format(draw(_below(2**16)))
    lead = [{"type": "text", "text": f"Read {path}"}] if _one_in(draw, 2) else []
    return path, [*lead, part]


def _set_path(call: dict[str, Any], path: str) -> dict[str, Any]:
    return {**call, "function": {**call["function"], "arguments": json.dumps({"path": path}, ensure_ascii=False)}}


@st.composite
def _with_tool_media(draw: st.DrawFn, history: list[Message], one_in: int) -> list[Message]:
    out = [dict(m) for m in history]
    calls = {c["id"]: (i, k) for i, m in enumerate(out) for k, c in enumerate(m.get("tool_calls") or []) if c["function"]["name"] == "readFile"}
    for m in out:
        found = calls.get(m.get("tool_call_id")) if m.get("role") == "tool" else None
        if found is None or str(m["tool_call_id"]).startswith("call_fill_") or len(str(m.get("content"))) > 400 or not _one_in(draw, one_in):
            continue
        path, m["content"] = draw(_media_result())
        at, k = found
        out[at]["tool_calls"] = [_set_path(c, path) if n == k else c for n, c in enumerate(out[at]["tool_calls"])]
    return out


def with_tool_media(history: list[Message], *, one_in: int = 5) -> SearchStrategy[list[Message]]:
    """``history`` with some short ``readFile`` results (one in ``one_in``) reading an image or a PDF
    instead: the call's path names one, its result is a list of content parts holding it.

    NOT a valid chat-completions history: a ``tool`` message takes text parts only (openai-python's
    ``ChatCompletionToolMessageParam``). It is what the Anthropic and Responses histories map from,
    where a tool result holds images and documents (``tool_result`` content blocks;
    ``function_call_output``'s ``input_image``/``input_file`` list) (SPEC CORE-31)."""
    return _with_tool_media(history, one_in)


def media_round(media: list[dict[str, Any]], long_output: str, *, in_tool: bool) -> list[Message]:
    """A newest turn where media meets a long output (SPEC CORE-31's forced shape): a user turn,
    then two parallel ``readFile`` calls, one reading the ``media`` parts, one ``long_output``; where
    a tool result cannot hold media (``in_tool`` False: chat-completions) the user turn carries them."""
    path = MEDIA_PATHS["file" if media[-1]["type"] == "file" else "image"].format(len(long_output) % 2**16)
    ask = "Compare what the attached media shows with the build log." if not in_tool else f"Compare {path} with the build log."
    user = {"role": "user", "content": [{"type": "text", "text": ask}, *media]} if not in_tool else {"role": "user", "content": ask}
    calls = [
        {"id": "call_media_0001", "type": "function", "function": {"name": "readFile", "arguments": json.dumps({"path": path if in_tool else PATHS[0]})}},
        {"id": "call_media_0002", "type": "function", "function": {"name": "readFile", "arguments": json.dumps({"path": "build/output.log"})}},
    ]
    first = [{"type": "text", "text": f"Read {path}"}, *media] if in_tool else _excerpt(0, 8)
    return [
        user,
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "call_media_0001", "content": first},
        {"role": "tool", "tool_call_id": "call_media_0002", "content": long_output},
    ]


# --- tool outputs --------------------------------------------------------------


def _excerpt(start: int, length: int) -> str:
    """``length`` consecutive lines of `CODE_LINES` from ``start``, wrapping around."""
    return "\n".join(CODE_LINES[(start + i) % len(CODE_LINES)] for i in range(length))


@st.composite
def _log_lines(draw: st.DrawFn) -> str:
    """One line of command or log output."""
    kind = draw(_below(4))
    if kind == 0:
        second, level = draw(_below(60)), _pick(draw, ("INFO", "DEBUG", "WARNING", "ERROR"))
        return f"2025-03-14T09:26:{second:02d}Z {level} {draw(text(max_words=8))}"
    if kind == 1:
        return f"PASSED tests/test_{_pick(draw, WORDS)}.py::test_{_pick(draw, WORDS)}"
    if kind == 2:
        return f'  File "{_pick(draw, PATHS)}", line {draw(_below(1000))}, in handler'
    return draw(text(max_words=12))


_LOG_LINE = _log_lines()
_CODE_LINE = st.sampled_from(CODE_LINES)
_SEARCH_HIT = st.builds("{}:1: {}".format, st.sampled_from(PATHS), _CODE_LINE)


def _repeat_lines(lines: Sequence[str], size: int) -> str:
    """Number and repeat ``lines`` until the text is ``size`` characters long, cut exactly there."""
    cycle = sum(9 + len(line) for line in lines)  # a numbered line is at least 9 characters longer than its text
    count = len(lines) * (size // cycle + 1)  # enough numbered lines, and not many more
    numbered: Iterator[str] = (f"{n:>6}  {line}\n" for n, line in zip(range(1, count + 1), itertools.cycle(lines)))
    return "".join(numbered)[:size]


@st.composite
def _long_outputs(draw: st.DrawFn, size: SearchStrategy[int], lines: SearchStrategy[str]) -> str:
    pattern = [draw(lines) for _ in range(1 + draw(_below(6)))]
    return _repeat_lines(pattern, draw(size))


@_cached
def long_tool_outputs(
    *, min_size: int = 2_000, max_size: int = 40_000, lines: SearchStrategy[str] = _LOG_LINE
) -> SearchStrategy[str]:
    """A long tool output of exactly ``min_size..max_size`` characters.

    One to six drawn ``lines`` (log lines by default) are numbered and repeated, so
    even 40 kB cost only a few draws; the text is cut at the drawn size, possibly
    mid-line as a truncated output would be. Shrinks to ``min_size``.
    """
    if not 1 <= min_size <= max_size:
        raise InvalidArgument(f"need 1 <= min_size <= max_size, got {min_size}, {max_size}")
    return _long_outputs(st.integers(min_size, max_size), lines)


def _maybe_long(draw: st.DrawFn, short: str, long_outputs: bool, lines: SearchStrategy[str]) -> str:
    """``short``, or one time in eight (with ``long_outputs``) a long output of ``lines``."""
    if long_outputs and _one_in(draw, 8):
        return draw(long_tool_outputs(lines=lines))
    return short


# --- tools: each draws (arguments, result content) ---------------------------

ToolCall = tuple[dict[str, Any], str]


@st.composite
def _read_file(draw: st.DrawFn, long_outputs: bool) -> ToolCall:
    path = _pick(draw, PATHS)
    if _one_in(draw, 6):
        return {"path": path}, f"Error: ENOENT: no such file or directory, open '{path}'"
    start, length = draw(_below(len(CODE_LINES))), draw(st.integers(1, 12))
    short = "\n".join(f"{n}\t{line}" for n, line in enumerate(_excerpt(start, length).split("\n"), 1))
    return {"path": path}, _maybe_long(draw, short, long_outputs, _CODE_LINE)


@st.composite
def _search(draw: st.DrawFn, long_outputs: bool) -> ToolCall:
    query = draw(text(max_words=3))
    hits = [
        f"{_pick(draw, PATHS)}:{1 + draw(_below(500))}: {_pick(draw, CODE_LINES)}" for _ in range(draw(_below(5)))
    ]
    return {"query": query}, _maybe_long(draw, "\n".join(hits) or "No matches found.", long_outputs, _SEARCH_HIT)


@st.composite
def _run_command(draw: st.DrawFn, long_outputs: bool) -> ToolCall:
    command = _pick(draw, COMMANDS)
    exit_code = _pick(draw, (0, 0, 0, 1, 2, 127))
    output = "\n".join(draw(_LOG_LINE) for _ in range(draw(_below(5))))
    output = _maybe_long(draw, output, long_outputs, _LOG_LINE)
    return {"command": command}, f"$ {command}\n{output}\n[exit code {exit_code}]"


def _entity_id(draw: st.DrawFn) -> str:
    """``ent-`` and 12 hex digits, or a UUID."""
    if _one_in(draw, 2):
        return str(draw(st.uuids()))
    return f"ent-{draw(_below(2**48)):012x}"


@st.composite
def _create_entity(draw: st.DrawFn, long_outputs: bool) -> ToolCall:
    """``createEntity``: the result is a JSON object with a top-level string ``"id"``."""
    kind, title = _pick(draw, ENTITY_TYPES), draw(text(max_words=6))
    entity = {"id": _entity_id(draw), "type": kind, "title": title}
    if _one_in(draw, 2):
        entity["status"] = _pick(draw, ("open", "draft", "active"))
    indent, ensure_ascii = _pick(draw, (None, 2)), _one_in(draw, 2)
    return {"type": kind, "title": title}, json.dumps(entity, indent=indent, ensure_ascii=ensure_ascii)


@st.composite
def _tasks(draw: st.DrawFn) -> dict[str, str]:
    title = f"{_pick(draw, TASK_VERBS)} {draw(text(max_words=5))}"
    return {"title": title, "status": _pick(draw, TASK_STATUSES)}


@_cached
def task_lists(*, max_tasks: int = 5) -> SearchStrategy[list[dict[str, str]]]:
    """1..``max_tasks`` tasks ``{"title": str, "status": "completed"|"in_progress"|"pending"}``, titles unique."""
    if max_tasks < 1:
        raise InvalidArgument(f"max_tasks must be >= 1, got {max_tasks}")
    return st.lists(_tasks(), min_size=1, max_size=max_tasks, unique_by=lambda task: task["title"])


@st.composite
def _report_progress(draw: st.DrawFn, long_outputs: bool) -> ToolCall:
    """``reportProgress``: arguments ``{"tasks": [...]}``, a short acknowledgement as result."""
    return {"tasks": draw(task_lists())}, _pick(draw, ACKS)


_TOOLS = {
    long_outputs: {
        "readFile": _read_file(long_outputs),
        "search": _search(long_outputs),
        "runCommand": _run_command(long_outputs),
        ENTITY_TOOL: _create_entity(long_outputs),
        PROGRESS_TOOL: _report_progress(long_outputs),
    }
    for long_outputs in (False, True)
}
"""Per tool name, the strategy for (arguments, result content), with and without long outputs."""


# --- tool rounds -----------------------------------------------------------------


@st.composite
def _tool_rounds(
    draw: st.DrawFn, calls: SearchStrategy[int], tools: tuple[str, ...], long_outputs: bool, in_flight: bool
) -> list[Message]:
    ids = draw(_CALL_IDS)
    tool_calls, results = [], []
    for _ in range(draw(calls)):
        name = _pick(draw, tools)
        arguments, content = draw(_TOOLS[long_outputs][name])
        call_id = f"call_{next(ids):04d}"
        function = {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}
        tool_calls.append({"id": call_id, "type": "function", "function": function})
        results.append({"role": "tool", "tool_call_id": call_id, "content": content})
    order = draw(_permutations(len(results)))
    answered = len(results) - 1 - draw(_below(len(results))) if in_flight else len(results)
    preamble = draw(text(max_words=10)) if _one_in(draw, 3) else None
    assistant = {"role": "assistant", "content": preamble, "tool_calls": tool_calls}
    return [assistant, *(results[i] for i in order[:answered])]


@_cached
def _permutations(n: int) -> SearchStrategy[list[int]]:
    return st.permutations(range(n))


def _check_tools(tools: Sequence[str]) -> tuple[str, ...]:
    unknown = set(tools) - set(TOOL_NAMES)
    if not tools or unknown:
        raise InvalidArgument(f"tools must be a non-empty subset of {TOOL_NAMES}, got {tools!r}")
    return tuple(tools)


def tool_rounds(
    *,
    min_calls: int = 1,
    max_calls: int = 3,
    tools: Sequence[str] = TOOL_NAMES,
    long_outputs: bool = True,
    in_flight: bool = False,
) -> SearchStrategy[list[Message]]:
    """One tool round: an assistant message with ``min_calls..max_calls`` parallel calls, then the results.

    Each call is ``{"id", "type": "function", "function": {"name", "arguments"}}`` with
    ``arguments`` a JSON string; each result is ``{"role": "tool", "tool_call_id", "content"}``
    with string content. The results come in any order (shrinking to call order). The
    assistant's ``content`` is ``None`` (two in three) or a short preamble. Tools are
    drawn uniformly from ``tools``; with ``long_outputs``, one generic tool result in
    eight is `long_tool_outputs`. With ``in_flight``, at least one call has no result
    yet (SPEC ROUND-3) and the others' results are present, in any order.
    """
    if not 1 <= min_calls <= max_calls:
        raise InvalidArgument(f"need 1 <= min_calls <= max_calls, got {min_calls}, {max_calls}")
    return _tool_round_strategy(min_calls, max_calls, _check_tools(tools), long_outputs, in_flight)


@_cached
def _tool_round_strategy(
    min_calls: int, max_calls: int, tools: tuple[str, ...], long_outputs: bool, in_flight: bool
) -> SearchStrategy[list[Message]]:
    return _tool_rounds(st.integers(min_calls, max_calls), tools, long_outputs, in_flight)


# --- earlier summaries -------------------------------------------------------------


@st.composite
def _earlier_summaries(draw: st.DrawFn) -> Message:
    bullets = [f"- {draw(text(max_words=10))}" for _ in range(1 + draw(_below(4)))]
    if not _one_in(draw, 2):
        return {"role": "user", "content": "\n".join([SUMMARY_PREFIX, *bullets])}
    entities = [
        f'- [{_pick(draw, ENTITY_TYPES)}] "{draw(text(max_words=4))}" (id: {_entity_id(draw)})'
        for _ in range(draw(_below(4)))
    ]
    tasks = [
        f"- [{'x' if task['status'] == 'completed' else ' '}] {task['title']} ({task['status']})"
        for task in draw(task_lists(max_tasks=3))
    ]
    lines = [
        SUMMARY_PREFIX,
        "## Conversation Summary (auto-compacted)",
        "### Entities Created/Modified",
        *(entities or ["- (none)"]),
        "### Current Task List",
        *tasks,
        "### Key Decisions",
        *bullets[:1],
        "### Context",
        *(bullets[1:] or ["- (none)"]),
    ]
    return {"role": "user", "content": "\n".join(lines)}


@_cached
def earlier_summaries() -> SearchStrategy[Message]:
    """A ``user`` message whose content starts with ``[Context Summary]`` (SPEC SUM-2).

    Either bullet points (seed 000's format, what shrinking prefers) or the structured
    sections of seed 001: entities with their ids, a task list, key decisions, context.
    """
    return _earlier_summaries()


# --- the shapes where real bugs live (issue 20) ------------------------------------------

SHAPES = ("wide-round", "long-tool-loop", "summary-chain", "huge-result", "newest-over-budget", "entity-burst")
"""The labelled shapes `histories` draws (``shapes=``), each where a reported compaction bug lived
(SPEC Part A, "Histories the suite draws"):

- ``wide-round``: one of the two newest rounds is an assistant message with 6 to 16 parallel
  calls, so a cut by message count lands deep inside it (langchain-ai/deepagents#270);
- ``long-tool-loop``: the only user turn comes first, every later round is a tool round;
- ``summary-chain``: two or three earlier summaries stacked after the system prompts;
- ``huge-result``: an older round holds one tool result of 20,000 to 30,000 chars/4 tokens;
- ``newest-over-budget``: the newest round holds a tool result larger than `BUDGET_TOKENS`;
- ``entity-burst``: three older tool rounds create 8 to 12 entities each (dozens of ids, ENT-1).
"""
MIXED_ONE_IN = {
    "wide-round": 3,
    "long-tool-loop": 4,
    "summary-chain": 2,
    "huge-result": 4,
    "newest-over-budget": 4,
    "entity-burst": 4,
}
"""With ``shapes=None`` (the default) each shape is drawn in one history in N where it fits (a
``summary-chain`` in one in N of the histories holding an earlier summary); SPEC gives the
measured shares."""
WIDE_CALLS = (6, 16)
"""Calls in a ``wide-round``: from the six parallel calls of deepagents#270 to sixteen."""
BUDGET_TOKENS = 80_000
"""The suite's default ``max_context_tokens`` (`conformance.Settings`): what a ``newest-over-budget``
round outgrows, by chars/4 (SPEC TOK-1)."""
HUGE_CHARS = (80_000, 120_000)
"""A ``huge-result``: 20,000 to 30,000 chars/4 tokens (tens of thousands, and no larger: every
example's size costs every clause's checks time)."""
OVER_BUDGET_CHARS = (4 * BUDGET_TOKENS + 4_000, 4 * BUDGET_TOKENS + 40_000)
"""A ``newest-over-budget`` result: 1,000 to 10,000 chars/4 tokens more than `BUDGET_TOKENS`."""
BURST_ROUNDS, BURST_CALLS = 3, (8, 12)
"""An ``entity-burst``: three consecutive rounds of 8 to 12 ``createEntity`` calls (24 to 36 ids)."""
_LINES_OF = {"readFile": _CODE_LINE, "search": _SEARCH_HIT, "runCommand": _LOG_LINE}


def _fits(shape: str, tools: tuple[str, ...], long_outputs: bool, in_flight: bool, summary: bool | None) -> bool:
    """Whether ``shape`` can be drawn with these options at all."""
    if shape in ("huge-result", "newest-over-budget") and not (long_outputs and set(tools) & set(GENERIC_TOOLS)):
        return False
    if shape == "newest-over-budget" and in_flight:
        return False  # the newest round is the one in flight
    if shape == "summary-chain" and summary is False:
        return False
    return shape != "entity-burst" or ENTITY_TOOL in tools


def _rounds_needed(active: frozenset[str]) -> int:
    """Complete rounds a set of shapes needs: the first round stays as drawn, a ``wide-round`` and a
    ``newest-over-budget`` round take the newest places, a ``huge-result`` and an ``entity-burst``
    places older than the two newest rounds."""
    newest = ("wide-round" in active) + ("newest-over-budget" in active)
    older = BURST_ROUNDS * ("entity-burst" in active) + ("huge-result" in active)
    return max(1 + newest if newest else 0, 3 + older if older else 0, 4 if "long-tool-loop" in active else 0)


def _plan(draw: st.DrawFn, fitting: tuple[str, ...], forced: bool, summary: bool, room: int) -> frozenset[str]:
    """The shapes this history takes: all of ``fitting`` when forced, else each one in
    `MIXED_ONE_IN` (shrinking to none), as many as ``room`` complete rounds hold."""
    if forced:
        return frozenset(fitting)
    active: set[str] = set()
    for shape in fitting:
        wanted = (shape != "summary-chain" or summary) and _one_in(draw, MIXED_ONE_IN[shape])
        if wanted and _rounds_needed(frozenset(active | {shape})) <= room:
            active.add(shape)
    return frozenset(active)


def _kinds(draw: st.DrawFn, count: int, active: frozenset[str], summary: bool) -> list[str]:
    """The kind of each complete round: seed order (`_NEXT_KIND`), then the shapes' rounds in their places."""
    previous, kinds = ("summary" if summary else "start"), []
    for n in range(count):
        kind = "tool_calls" if "long-tool-loop" in active and n > 0 else _pick(draw, _NEXT_KIND[previous])
        if "long-tool-loop" in active and n == 0:
            kind = "user"
        kinds.append(kind)
        previous = kind
    newest = [s for s in ("newest-over-budget", "wide-round") if s in active]
    for at, shape in zip(range(count - 1, 0, -1), newest):
        kinds[at] = shape
    older = count - 2  # places 1 .. count - 3
    if "entity-burst" in active:
        start = 1 + draw(_below(older - BURST_ROUNDS - int("huge-result" in active)))
        kinds[start : start + BURST_ROUNDS] = ["entity-burst"] * BURST_ROUNDS
    if "huge-result" in active:
        free = [i for i in range(1, older) if kinds[i] != "entity-burst"]
        kinds[free[draw(_below(len(free)))]] = "huge-result"
    return kinds


@st.composite
def _sized_round(draw: st.DrawFn, tools: tuple[str, ...], sizes: tuple[int, int]) -> list[Message]:
    """A tool round of one generic call whose result is ``sizes`` characters long."""
    name = _pick(draw, [t for t in tools if t in GENERIC_TOOLS])
    arguments, _ = draw(_TOOLS[False][name])
    content = draw(long_tool_outputs(min_size=sizes[0], max_size=sizes[1], lines=_LINES_OF[name]))
    call_id = f"call_{next(draw(_CALL_IDS)):04d}"
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}
    preamble = draw(text(max_words=10)) if _one_in(draw, 3) else None
    return [{"role": "assistant", "content": preamble, "tool_calls": [call]}, {"role": "tool", "tool_call_id": call_id, "content": content}]


# --- sized to a target's trigger (agreed interface 5) -------------------------------------

Measure = Callable[[list[Message]], tuple[int, int]]
"""A history's size as a target's trigger reads it: (tokens, messages)."""
FILL_CHARS = 60_000
"""At most this many characters in one filler result."""


def chat_size(history: list[Message]) -> tuple[int, int]:
    """(chars/4 tokens, messages) of a chat-completions history (SPEC TOK-1)."""
    return chars_per_four(history), len(history)


def _fill_at(history: list[Message]) -> int:
    """Where filler rounds go: after the first round of the conversation (system prompts and
    earlier summaries aside), so they are older than the tail; before it when it is the only
    round and waits for a tool result."""
    at = 0
    while at < len(history) and (history[at].get("role") in ("system", "developer") or is_summary(history[at])):
        at += 1
    if at == len(history):
        return at
    end = at + 1
    while end < len(history) and history[end].get("role") == "tool":
        end += 1
    return at if end >= len(history) and history[at].get("role") != "user" else end


def padded(history: list[Message], *, tokens: int = 0, messages: int = 0, measure: Measure = chat_size, tool: str = "readFile") -> list[Message]:
    """``history`` grown until ``measure`` says it holds at least ``tokens`` tokens and ``messages``
    messages: rounds of one ``tool`` call (ids ``call_fill_0001``, ...) whose result is numbered
    source lines, inserted after the first round of the conversation (`_fill_at`), so the tail a
    compactor keeps stays as drawn. Deterministic: no draw, the same history grows the same way."""
    out, n, at = list(history), 0, _fill_at(history)
    have_tokens, have_messages = measure(out)
    while have_tokens < tokens or have_messages < messages:
        n += 1
        size = min(max(4 * (tokens - have_tokens) + 64, 64), FILL_CHARS)
        call = {"id": f"call_fill_{n:04d}", "type": "function", "function": {"name": tool, "arguments": json.dumps({"path": PATHS[n % len(PATHS)]}, ensure_ascii=False)}}
        out[at:at] = [{"role": "assistant", "content": None, "tool_calls": [call]}, {"role": "tool", "tool_call_id": call["id"], "content": _repeat_lines(CODE_LINES, size)}]
        at += 2
        have_tokens, have_messages = measure(out)
    return out


def sized_chat(options: dict[str, Any], measure: Measure) -> SearchStrategy[list[Message]]:
    """`histories` with ``options``, ``min_tokens`` and ``min_messages`` counted by ``measure``
    (another wire format's size of the history the chat one maps to)."""
    tokens, messages = options.pop("min_tokens", 0), options.pop("min_messages", 0)
    drawn = histories(**options)
    if tokens <= 0 and messages <= 0:
        return drawn
    tool = filler_tool(options.get("tools", TOOL_NAMES))
    return drawn.map(lambda history: padded(history, tokens=tokens, messages=messages, measure=measure, tool=tool))


def filler_tool(tools: Sequence[str]) -> str:
    """The tool filler rounds call: the first generic one among ``tools`` (its results are plain
    text, so fillers add no entity ids, SPEC ENT-1)."""
    generic = [t for t in GENERIC_TOOLS if t in tools]
    if not generic:
        raise InvalidArgument(f"min_tokens and min_messages need one of {GENERIC_TOOLS} among the tools, got {tuple(tools)!r}")
    return generic[0]


# --- histories -----------------------------------------------------------------

_NEXT_KIND = {
    "start": ("user",),
    "summary": ("user", "tool_calls", "assistant"),
    "user": ("assistant", "tool_calls", "tool_calls", "tool_calls", "user"),
    "tool_calls": ("assistant", "assistant", "tool_calls", "tool_calls", "tool_calls", "user"),
    "assistant": ("user", "user", "user", "tool_calls", "assistant"),
}
"""Which round may follow which, weighted by repetition; shrinking prefers the first."""


def _presence(draw: st.DrawFn, wanted: bool | None) -> bool:
    """``wanted``, or drawn when it is None (shrinking to absent)."""
    return _one_in(draw, 2) if wanted is None else wanted


@st.composite
def _histories(
    draw: st.DrawFn,
    min_rounds: int,
    max_rounds: int,
    system: bool | None,
    earlier_summary: bool | None,
    in_flight: bool,
    rounds_of: dict[str, SearchStrategy[list[Message]]],
    multimodal: bool,
    fitting: tuple[str, ...],
    forced: bool,
) -> list[Message]:
    messages: list[Message] = []
    if _presence(draw, system):
        messages += [draw(system_prompts()) for _ in range(1 + int(_one_in(draw, 4)))]
    summary = _presence(draw, earlier_summary)
    least = (1 if summary else 2) if in_flight else 1  # at least one user turn: never system-only
    active = _plan(draw, fitting, forced, summary, max_rounds - int(in_flight))
    if summary:
        stacked = 1 + (1 + draw(_below(2)) if "summary-chain" in active else 0)
        messages += [draw(earlier_summaries()) for _ in range(stacked)]
    least = max(least, _rounds_needed(active) + int(in_flight))
    rounds = draw(st.integers(max(min_rounds, least), max_rounds))
    kinds = _kinds(draw, rounds - int(in_flight), active, summary)
    previous = "summary" if summary else "start"
    for kind in kinds:
        if kind == "user":
            messages.append(draw(user_turns(corrections=previous != "start", multimodal=multimodal)))
        elif kind == "assistant":
            messages.append(draw(assistant_replies()))
        else:
            messages += draw(rounds_of[kind])
        previous = kind
    if in_flight:
        messages += draw(rounds_of["in_flight"])
    return messages


def _shape_options(
    shapes: Collection[str] | None, min_rounds: int, max_rounds: int, in_flight: bool, tools: tuple[str, ...], long_outputs: bool, summary: bool | None
) -> tuple[tuple[str, ...], bool]:
    """(the shapes to draw, whether they are forced), checked against the other options."""
    if shapes is None:
        return tuple(s for s in SHAPES if _fits(s, tools, long_outputs, in_flight, summary)), False
    unknown = set(shapes) - set(SHAPES)
    if unknown:
        raise InvalidArgument(f"unknown shapes {sorted(unknown)}; known: {', '.join(SHAPES)}")
    for shape in shapes:
        if not _fits(shape, tools, long_outputs, in_flight, summary):
            raise InvalidArgument(f"shape {shape!r} cannot be drawn with these options (tools, long_outputs, in_flight, earlier_summary)")
    if _rounds_needed(frozenset(shapes)) + int(in_flight) > max_rounds:
        raise InvalidArgument(f"shapes {sorted(shapes)} need max_rounds >= {_rounds_needed(frozenset(shapes)) + int(in_flight)}")
    return tuple(s for s in SHAPES if s in shapes), True


def histories(
    min_rounds: int = 0,
    max_rounds: int = 10,
    *,
    system: bool | None = True,
    earlier_summary: bool | None = None,
    in_flight: bool = False,
    max_parallel_calls: int = 3,
    tools: Sequence[str] = TOOL_NAMES,
    multimodal: bool = True,
    long_outputs: bool = True,
    shapes: Collection[str] | None = None,
    min_tokens: int = 0,
    min_messages: int = 0,
) -> SearchStrategy[list[Message]]:
    """A valid agent history: the messages a compactor is handed between two agent-loop iterations.

    Layout: one or (one in four) two system/developer prompts (``system=True``;
    ``None`` = maybe; ``False`` = none), then an earlier ``[Context Summary]``
    (``earlier_summary``: ``True`` always, ``False`` never, ``None`` maybe), then
    ``min_rounds..max_rounds`` rounds, at least one (an agent's history always holds a user
    turn or a summary standing for them: never system prompts alone) (SPEC ROUND-1; prompts and summary are not
    counted). Without a summary the first round is a user turn; tool rounds,
    assistant replies and further user turns and corrections follow in a realistic
    agent order.

    ``shapes`` draws the labelled shapes of `SHAPES`: ``None`` (the default) each where it fits,
    in one history in `MIXED_ONE_IN`; a collection exactly those, in every history (an
    `InvalidArgument` when the other options exclude one); ``()`` none. A shape's rounds count
    among the rounds, and may raise their number to what the shape needs.

    Every history passes ``compaction_suite.reference.rounds.split_rounds``. With ``in_flight=True`` the
    last round is a tool round with at least one unanswered call, so ``call_in_flight``
    is true; it counts as one of the rounds, and a user turn or summary precedes it.
    Otherwise every call is answered. ``max_parallel_calls`` bounds the calls per tool
    round (a ``wide-round``'s and an ``entity-burst``'s aside), ``tools`` restricts the tools
    used, ``multimodal`` allows image parts in user turns (some referred to by URL unless
    `draw_images_by_url` said otherwise) and ``long_outputs`` tool outputs of tens of kB (and the
    ``huge-result`` and ``newest-over-budget`` shapes).

    ``min_tokens`` and ``min_messages`` size every history to a target's own trigger (so a
    summarizing target really summarizes): `padded` inserts filler tool rounds after the first
    round until the history holds at least ``min_tokens`` chars/4 tokens (SPEC TOK-1) and
    ``min_messages`` messages. For at least R rounds, pass ``min_rounds=R`` (and a ``max_rounds``
    above it). `conformance.shapes.sized` does the same in every wire format.
    """
    if not 0 <= min_rounds <= max_rounds:
        raise InvalidArgument(f"need 0 <= min_rounds <= max_rounds, got {min_rounds}, {max_rounds}")
    if in_flight and max_rounds < (1 if earlier_summary else 2):
        raise InvalidArgument("in_flight needs max_rounds >= 2 (a user turn, then the call), or 1 with a summary")
    if max_parallel_calls < 1:
        raise InvalidArgument(f"max_parallel_calls must be >= 1, got {max_parallel_calls}")
    tools = _check_tools(tools)
    fitting, forced = _shape_options(shapes, min_rounds, max_rounds, in_flight, tools, long_outputs, earlier_summary)
    if forced and "summary-chain" in fitting:
        earlier_summary = True
    rounds_of = {
        "tool_calls": tool_rounds(max_calls=max_parallel_calls, tools=tools, long_outputs=long_outputs),
        "in_flight": tool_rounds(max_calls=max_parallel_calls, tools=tools, long_outputs=long_outputs, in_flight=True),
        "wide-round": tool_rounds(min_calls=WIDE_CALLS[0], max_calls=WIDE_CALLS[1], tools=tools, long_outputs=False),
        "entity-burst": tool_rounds(min_calls=BURST_CALLS[0], max_calls=BURST_CALLS[1], tools=(ENTITY_TOOL,), long_outputs=False),
        "huge-result": _sized_round(tools, HUGE_CHARS),
        "newest-over-budget": _sized_round(tools, OVER_BUDGET_CHARS),
    }
    drawn = _histories(min_rounds, max_rounds, system, earlier_summary, in_flight, rounds_of, multimodal, fitting, forced)
    if min_tokens <= 0 and min_messages <= 0:
        return drawn
    tool = filler_tool(tools)
    return drawn.map(lambda history: padded(history, tokens=min_tokens, messages=min_messages, tool=tool))


# --- as agents send them: variants of a drawn history -----------------------------------


def _text_parts(text_value: Any) -> Any:
    return [{"type": "text", "text": text_value}] if isinstance(text_value, str) else text_value


@st.composite
def _agent_shaped(draw: st.DrawFn, base: SearchStrategy[list[Message]]) -> list[Message]:
    history = draw(base)
    system_parts, tool_parts, optional_keys = (_one_in(draw, 3) for _ in range(3))
    huge_arguments = draw(long_tool_outputs(min_size=20_000, max_size=60_000)) if _one_in(draw, 6) else None
    shaped = []
    for message in history:
        message = dict(message)
        role = message.get("role")
        if (role in ("system", "developer") and system_parts) or (role == "tool" and tool_parts):
            message["content"] = _text_parts(message.get("content"))
        if optional_keys and role == "assistant":
            message.setdefault("refusal", None)
        if huge_arguments is not None and message.get("tool_calls"):
            message["tool_calls"] = [_with_content(message["tool_calls"][0], huge_arguments), *message["tool_calls"][1:]]
            huge_arguments = None
        if optional_keys and role == "user" and not is_summary(message):
            message.setdefault("name", "operator")
        shaped.append(message)
    return shaped


def _with_content(call: dict[str, Any], content: str) -> dict[str, Any]:
    """``call`` with a ``"content"`` argument added (a file an agent writes, say)."""
    arguments = json.loads(call["function"]["arguments"])  # drawn here: always a JSON object
    function = dict(call["function"], arguments=json.dumps(arguments | {"content": content}, ensure_ascii=False))
    return dict(call, function=function)


def agent_shaped(base: SearchStrategy[list[Message]]) -> SearchStrategy[list[Message]]:
    """``base``'s histories as agent frameworks send them: in one example in three each,
    system and tool content as a list of text parts instead of a string, and the optional
    keys real messages carry (``refusal: null`` on assistant messages, a ``name`` on user
    turns); in one in six, the first tool call's arguments carry a huge ``"content"``
    (20 to 60 kB, as a file an agent writes). The provider accepts every variant (SPEC CORE-6)."""
    return _agent_shaped(base)


# --- real-traffic shapes ----------------------------------------------------------
# What real agents send and the chat-completions API accepts (SPEC HIST-* Decision):
# a tool-call id reused by a later round, ``name`` on messages, refusals, text parts on
# every role, an assistant ``content`` that is empty or absent next to ``tool_calls``,
# and entity ids nested in records (SPEC ENT-1). `real_traffic` dresses a valid history
# in them; the result is still valid.

NAMES = ("alice", "ops_bot", "planner-1", "Reviewer")
REFUSALS = ("I can't help with that.", "I'm not able to share those credentials.")


def _as_parts(message: Message) -> Message:
    """String content as one text part (a summary keeps its string, SPEC SUM-2)."""
    content = message.get("content")
    if not isinstance(content, str) or content.startswith(SUMMARY_PREFIX):
        return message
    return {**message, "content": [{"type": "text", "text": content}]}


def _nested_record(draw: st.DrawFn, content: str) -> str:
    """A ``createEntity`` result as a real API returns records: the entity nested, with
    related ids beside it (``*_id``, ``*Ids``, integers), as tau-bench's tools do."""
    entity = json.loads(content)
    record = {
        "data": {**entity, "owner_id": f"usr_{draw(_below(10**6)):06d}"},
        "linkedIds": [draw(_below(10**5)) + 1 for _ in range(draw(_below(3)))],
        "meta": {"request_id": f"req-{draw(_below(2**32)):08x}", "ok": True},
    }
    return json.dumps(record, ensure_ascii=False)


def _reuse_ids(draw: st.DrawFn, messages: list[Message]) -> list[Message]:
    """Give some later tool rounds ids an earlier round used (unique within each message)."""
    used: list[str] = []
    out: list[Message] = []
    renames: dict[str, str] = {}
    for message in messages:
        if message.get("role") == "tool":
            out.append({**message, "tool_call_id": renames.get(message["tool_call_id"], message["tool_call_id"])})
            continue
        calls = message.get("tool_calls")
        renames = {}
        if calls and used and _one_in(draw, 2):
            pool = list(dict.fromkeys(used))
            for call in calls[: len(pool)]:
                renames[call["id"]] = pool.pop(draw(_below(len(pool))))
            message = {**message, "tool_calls": [{**c, "id": renames.get(c["id"], c["id"])} for c in calls]}
        used += [c["id"] for c in message.get("tool_calls") or []]
        out.append(message)
    return out


def _dress(draw: st.DrawFn, message: Message, entity_results: set[str]) -> Message:
    """One message in one of the real shapes of its role, or as it was."""
    role, shape = message.get("role"), draw(_below(4))
    if role == "tool" and message["tool_call_id"] in entity_results and isinstance(message["content"], str) and shape == 0:
        message = {**message, "content": _nested_record(draw, message["content"])}
    elif role == "assistant" and message.get("tool_calls") and shape == 0:
        message = {key: value for key, value in message.items() if key != "content"}  # content absent
    elif role == "assistant" and message.get("tool_calls") and shape == 1:
        message = {**message, "content": ""}
    elif role == "assistant" and not message.get("tool_calls") and shape == 0:
        message = {"role": "assistant", "content": None, "refusal": _pick(draw, REFUSALS)}
    if role in ("system", "developer", "user", "assistant") and _one_in(draw, 4):
        message = {**message, "name": _pick(draw, NAMES)}
    return _as_parts(message) if _one_in(draw, 3) else message


@st.composite
def _real_traffic(draw: st.DrawFn, base: SearchStrategy[list[Message]]) -> list[Message]:
    messages = draw(base)
    entity_results = {
        call["id"]
        for m in messages
        for call in m.get("tool_calls") or []
        if call["function"]["name"] == ENTITY_TOOL
    }
    dressed = [_dress(draw, m, entity_results) for m in messages]
    return _reuse_ids(draw, dressed)


def real_traffic(base: SearchStrategy[list[Message]] | None = None) -> SearchStrategy[list[Message]]:
    """Histories from ``base`` (default `histories`) in the shapes real traffic has.

    Each message may take a shape of its role that the chat-completions API accepts:
    ``name`` on system/user/assistant messages; a refusal (``content: None`` and
    ``refusal``) instead of a bare reply; text parts instead of string content on any
    role (summaries keep their string); ``content`` empty or absent next to
    ``tool_calls``; a ``createEntity`` result as a nested record carrying more ids
    (``owner_id``, ``linkedIds`` integers, ``request_id``). Later tool rounds may reuse
    ids of earlier rounds (never twice in one message). The result passes
    ``reference.rounds.split_rounds`` (SPEC HIST-*), like ``base``'s.
    """
    return _real_traffic(base if base is not None else histories())
