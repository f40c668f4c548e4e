"""What a compaction offloads to its framework's store, read back (SPEC Part A, STORE-30 to STORE-32).

Some frameworks do not drop what they take out of the context: they write it to a store their agent
can read (deepagents writes a large tool result to ``/large_tool_results/<id>`` and an offloaded
history to ``/conversation_history/<session>.md``) and leave in its place a message naming the path.
A target declaring ``capabilities["offloads"]``, the path prefixes its framework writes under,
offers ``read_offload(path)``: what the store holds at ``path`` (bytes or text), or None. STORE-30
reads back every such path a message the compaction wrote names; STORE-31 judges a declared size
over which a tool result is offloaded (``capabilities["offload_result_tokens"]``); STORE-32, a session's
later compaction, which must archive as its first did.

Chat-completions only: the tool results and summaries judged are chat messages.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import urllib.parse
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from . import judges, media
from .judges import alnum, removed
from .oracle import canonical, text
from .violation import Violation

HOOK = "read_offload"
"""The compactor's member a target declaring ``offloads`` offers."""
Reader = Callable[[str], Any]

PATH = re.compile(r"(?<![\w.:/])/[A-Za-z0-9_.\-/+=]*[A-Za-z0-9_\-+=]")
"""An absolute path as a message names it (a word starting with ``/``)."""
CHARS_PER_TOKEN = 4
"""How an ``offload_result_tokens`` size is counted: characters of the result's text over 4 (the
chars/4 heuristic the frameworks state: deepagents' ``NUM_CHARS_PER_TOKEN``)."""


class OffloadHookError(ValueError):
    """A ``read_offload`` answer the suite cannot read (a contract error, not a verdict)."""


def read(reader: Reader, path: str) -> bytes | None:
    """What the store holds at ``path`` as bytes, or None; raises `OffloadHookError` for an answer
    neither None, bytes nor text."""
    got = reader(path)
    if got is None or isinstance(got, bytes):
        return got
    if isinstance(got, str):
        return got.encode("utf-8")
    raise OffloadHookError(f"{HOOK}({path!r}) returned {type(got).__name__}; expected None, bytes or str")


def named_paths(message: Any, prefixes: Sequence[str]) -> list[str]:
    """The paths under a declared prefix that ``message``'s text names, in order, each once."""
    found: list[str] = []
    for piece in _texts(message):
        for match in PATH.finditer(piece):
            path = match.group(0)
            if any(path.startswith(p) for p in prefixes) and path not in found:
                found.append(path)
    return found


def _texts(message: Any) -> Iterable[str]:
    if not isinstance(message, dict):
        return
    yield text(message)
    content = message.get("content")
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict):
            yield from (v for k, v in part.items() if k != "text" and isinstance(v, str))


def _where(j: int, message: Any) -> str:
    return f"output item {j} ({message.get('role') if isinstance(message, dict) else '?'})"


def decoded(raw: bytes) -> str:
    """What a store holds, as text (bytes that are not UTF-8 replaced, never raised on)."""
    return raw.decode("utf-8", errors="replace")


def holds(stored: str, wanted: str) -> bool:
    """Whether ``stored`` holds ``wanted``'s letters and digits in order, as written or with its markup's
    character references read (an XML transcript writes ``&`` as ``&amp;``: SPEC STORE-30 Decision)."""
    said = alnum(wanted)
    return said in alnum(stored) or said in alnum(html.unescape(stored))


def _in_place(history: Sequence[Any], out: Sequence[Any], j: int) -> Any | None:
    """The input tool result output item ``j`` replaces in place: the one at the same position when the
    output keeps the input's roles position by position (a result rewritten where it stood, whatever
    its call id), else the only input result for the same call id; None when there is none, or more
    than one (ids a provider left empty)."""
    after = out[j]
    if len(history) == len(out) and all(isinstance(a, dict) and isinstance(b, dict) and a.get("role") == b.get("role") for a, b in zip(history, out, strict=True)):
        return history[j]
    same_call = [m for m in history if isinstance(m, dict) and m.get("role") == "tool" and m.get("tool_call_id") == after.get("tool_call_id")]
    return same_call[0] if len(same_call) == 1 else None


def unreadable(history: Sequence[Any], out: Sequence[Any], reader: Reader, prefixes: Sequence[str]) -> Violation | None:
    """STORE-30: each path under a declared prefix that a message the compaction wrote names reads back;
    a tool result replaced in place by a message naming paths reads back whole from one of them (its
    text's letters and digits, in order); a new message (a summary) naming paths reads back, across
    them, every part of every input message the output no longer holds (`parts`)."""
    verbatim = {canonical(m) for m in history}
    gone = removed_messages(history, out)
    for j, message in enumerate(out):
        if not isinstance(message, dict) or canonical(message) in verbatim:
            continue
        paths = named_paths(message, prefixes)
        if not paths:
            continue
        held = {p: read(reader, p) for p in paths}
        missing = [p for p, got in held.items() if got is None]
        if missing:
            return Violation("offload-path-empty", f"{_where(j, message)} names {missing[0]!r}, where the store holds nothing")
        stored = "".join(decoded(got) for got in held.values() if got is not None)
        original = _in_place(history, out, j) if message.get("role") == "tool" else None
        if original is not None:
            lost = _result_lost(original, stored)
            if lost:
                return Violation("offload-not-the-result", f"{_where(j, message)} replaces the tool result for call {_call(original, history)} and names {', '.join(map(repr, paths))}, which hold {lost}")
            continue
        for k, part in _missing_parts(gone, stored, reader, prefixes):
            return Violation("offload-archive-incomplete", f"{_where(j, message)} stands for {len(gone)} removed message(s) and names {', '.join(map(repr, paths))}, which hold nothing of {part} of removed message {k}")
    return None


SHOWN_ID = 40
"""The characters of a call id a reason quotes; a longer id is cut there and its length given."""


def _call(message: dict, history: Sequence[Any] = ()) -> str:
    """A tool result's call id as a reason shows it (SPEC STORE-31 Decision, the id in the reason): quoted
    whole up to `SHOWN_ID` characters, else cut there with its length (``(an id of 1,513 characters)``);
    and, when other results of ``history`` answer the same id, how many share it (``(the id of 3
    results)``). A by-id offload turns on these two facts, a file name over the OS limit and a path two
    results write, so a finding says which of them its result had, or that it had neither."""
    said = message.get("tool_call_id")
    if not isinstance(said, str) or len(said) <= SHOWN_ID:
        shown = repr(said)
    else:
        shown = f"{said[:SHOWN_ID] + '...'!r} (an id of {len(said):,} characters)"
    sharing = sum(1 for m in history if isinstance(m, dict) and m.get("role") == "tool" and m.get("tool_call_id") == said)
    return f"{shown} (the id of {sharing} results)" if sharing > 1 else shown


def _result_lost(original: dict, stored: str) -> str | None:
    """What of ``original``'s text ``stored`` does not hold (None: all of it, its letters and digits in order)."""
    wanted = alnum(text(original))
    if not wanted or holds(stored, text(original)):
        return None
    start = alnum(stored)[:40]
    return f"another text ({len(stored)} characters starting {start!r}), not its {len(text(original))} characters starting {wanted[:40]!r}"


def removed_messages(history: Sequence[Any], out: Sequence[Any]) -> list[dict]:
    """The input messages the output holds nothing of (system messages aside)."""
    from .formats import chat

    return [m for m in removed(chat.FORMAT, list(history), list(out)) if isinstance(m, dict) and m.get("role") not in ("system", "developer")]


def parts(message: dict) -> list[tuple[str, Any]]:
    """Every part of a message an archive must hold: each text part (or the string content), each
    tool call's arguments, each media part (image or file)."""
    found: list[tuple[str, Any]] = []
    content = message.get("content")
    if isinstance(content, str) and content:
        found.append(("text", content))
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and part.get("text"):
            found.append(("text", part["text"]))
    found.extend(("media", part) for part in media.parts(content))
    for call in message.get("tool_calls") or []:
        arguments = (call.get("function") or {}).get("arguments") if isinstance(call, dict) else None
        if isinstance(arguments, str) and alnum(arguments):
            found.append(("arguments", arguments))
    return found


def _missing_parts(gone: Sequence[dict], stored: str, reader: Reader, prefixes: Sequence[str]) -> Iterable[tuple[int, str]]:
    """(index among ``gone``, what) for each part ``stored`` does not hold."""
    for k, message in enumerate(gone):
        for kind, part in parts(message):
            if kind in ("text", "arguments"):
                if not holds(stored, part):
                    yield k, f"its {kind} ({len(part)} characters starting {part[:40]!r})"
            elif not _media_held(part, stored, reader, prefixes):
                yield k, f"its {media.kind(part)} part ({_media_said(part)})"


def _media_said(part: dict) -> str:
    url = _url(part)
    return f"{url[:40]}..." if len(url) > 40 else url


def _url(part: dict) -> str:
    """The part's data URL, else its longest string (a URL or a file id)."""
    found = [s for s in judges.strings(part) if s != part.get("type")]
    inline = [s for s in found if s.startswith("data:")]
    return (inline or sorted(found, key=len, reverse=True) or [""])[0]


def _media_held(part: dict, stored: str, reader: Reader, prefixes: Sequence[str]) -> bool:
    """Whether an archive holds a media part: its URL (an https image), its inline data as written, or a
    path under a declared prefix whose bytes are the data decoded."""
    url = _url(part)
    if not url.startswith("data:"):
        return holds(stored, url)
    data = _data(url)
    payload = media.payload(part)
    if alnum(payload) and alnum(payload) in alnum(stored):
        return True
    for path in named_paths({"role": "user", "content": stored}, prefixes):
        got = read(reader, path)
        if got is not None and data is not None and got == data:
            return True
    return False


def _data(url: str) -> bytes | None:
    header, _, payload = url.partition(",")
    try:
        return base64.b64decode(payload, validate=False) if header.endswith(";base64") else urllib.parse.unquote_to_bytes(payload)
    except (binascii.Error, ValueError):
        return None


def archived(history: Sequence[Any], out: Sequence[Any], prefixes: Sequence[str]) -> list[str]:
    """The paths under a declared prefix that a message standing for removed ones names (a summary the
    compaction wrote, not a tool result replaced in place), in order, each once."""
    verbatim = {canonical(m) for m in history}
    found: list[str] = []
    for message in out:
        if isinstance(message, dict) and message.get("role") != "tool" and canonical(message) not in verbatim:
            found.extend(p for p in named_paths(message, prefixes) if p not in found)
    return found


def not_continued(session: Sequence[Any], history: Sequence[Any], out: Sequence[Any], reader: Reader, prefixes: Sequence[str]) -> Violation | None:
    """STORE-32: a later compaction of a session whose first one archived what it replaced (``session``:
    the messages that session was given, in the history or earlier) archives too: what it writes names a
    path under a declared prefix, and the paths hold every part of every session message it removed (the
    earlier compaction's own messages aside: their archive is the earlier one)."""
    given = {canonical(m) for m in session}
    gone = [m for m in removed_messages(history, out) if canonical(m) in given]
    if not gone:
        return None
    paths = archived(session, out, prefixes)  # a compaction's message, this one's or one it kept naming the archive it appends to
    if not paths:
        return Violation("archive-not-continued", f"the session's first compaction archived what it replaced; this one removed {len(gone)} more message(s) and names no path under {', '.join(map(repr, prefixes))}: they are in neither the context nor an archive")
    stored = "".join(decoded(got) for p in paths if (got := read(reader, p)) is not None)
    for k, part in _missing_parts(gone, stored, reader, prefixes):
        return Violation("archive-not-continued", f"the session's later compaction removed {len(gone)} message(s) and names {', '.join(map(repr, paths))}, which hold nothing of {part} of removed message {k}")
    return None


def kept_over_limit(history: Sequence[Any], out: Sequence[Any], tokens: int) -> Violation | None:
    """STORE-31: no input tool result over ``tokens`` (characters of its text over `CHARS_PER_TOKEN`)
    is in the output verbatim: the framework states it offloads such a result."""
    after = {canonical(m) for m in out}
    for i, message in enumerate(history):
        if not isinstance(message, dict) or message.get("role") != "tool":
            continue
        size = len(text(message)) // CHARS_PER_TOKEN
        if size > tokens and canonical(message) in after:
            return Violation(
                "large-result-not-offloaded",
                f"input item {i} (tool, call {_call(message, history)}): a result of about {size} tokens is kept whole in the output, over the {tokens} tokens past which the framework states it offloads a result",
            )
    return None
