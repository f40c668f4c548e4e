"""Which kind of trace file a path holds, and its history in the trace's own wire format: the one
parser `bench replay --trace` (and `--trace-format`) goes through (issue 13, replay across formats).

* ``trace``: a compaction-suite trace (FORMAT.md; its header names the format, chat-completions
  unless it says otherwise);
* ``codex``: an OpenAI Codex CLI rollout, as Responses items (`traces.codex`);
* ``claude-code``: a Claude Code session log, as an Anthropic Messages request
  (`traces.claude_code_messages`: thinking blocks kept byte-identical);
* ``claude-code-chat``: the same log as chat-completions messages (`traces.claude_code`:
  thinking blocks dropped and counted in the notes), the replay's reading before issue 13;
* ``swe-agent`` (``.traj``) and ``tau-bench`` (``.json``, one trace per record): chat-completions.

`detect` tells them apart by suffix and content and refuses to guess: a ``.jsonl`` whose lines
fit two kinds, or none, is an error naming what it saw (pass the kind explicitly then).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .format import FORMAT_NAME, Header, TraceFormatError

KINDS = ("trace", "codex", "claude-code", "claude-code-chat", "swe-agent", "tau-bench")
SNIFFED_LINES = 50
"""How many lines of a ``.jsonl`` file `detect` reads."""
CODEX_ENVELOPES = ("session_meta", "turn_context", "response_item", "event_msg", "compacted")
RESPONSES_ITEMS = ("message", "reasoning", "function_call", "function_call_output", "custom_tool_call", "local_shell_call")


class TraceKindError(ValueError):
    """A file whose kind `detect` cannot tell; the text says what it saw."""


def unreadable() -> tuple[type[Exception], ...]:
    """What `load` raises for a file it cannot read, each naming the file (and the line where
    there is one). Imported here, not at the top: the importers bring the reference and its
    openai client, which the CLI must not import before pytest starts (``check``)."""
    from .claude_code import ClaudeCodeImportError
    from .codex import CodexImportError
    from .importers import TraceImportError

    return (TraceKindError, TraceFormatError, CodexImportError, ClaudeCodeImportError, TraceImportError)


def detect(path: Path) -> str:
    """The kind of trace ``path`` holds (module docstring); raises `TraceKindError` when unsure."""
    if path.suffix == ".traj":
        return "swe-agent"
    if path.suffix == ".json":
        return "tau-bench"
    _readable_first_line(path)
    lines = _first_objects(path)
    if lines and lines[0].get("format") == FORMAT_NAME:
        return "trace"
    fits = [kind for kind, test in (("codex", _codex_line), ("claude-code", _claude_code_line)) if any(map(test, lines))]
    if len(fits) == 1:
        return fits[0]
    seen = sorted({str(line.get("type")) for line in lines})
    if not fits:
        raise TraceKindError(f"{path}: not a compaction-suite trace, Codex rollout or Claude Code session (line types seen: {seen}); pass --trace-format")
    raise TraceKindError(f"{path}: its lines fit both a Codex rollout and a Claude Code session (line types seen: {seen}); pass --trace-format")


def _readable_first_line(path: Path) -> None:
    """`TraceKindError` for a file with nothing to tell a kind by: empty, binary, or a first line
    that is not JSON (a file cut inside its header, say)."""
    with path.open("rb") as file:
        first = file.readline()
    if not first.strip():
        raise TraceKindError(f"{path}: is empty" if path.stat().st_size == 0 else f"{path}:1: the first line is empty, not a JSON object")
    try:
        json.loads(first)
    except UnicodeDecodeError:
        raise TraceKindError(f"{path}: not text (a binary file?), not a trace") from None
    except ValueError as error:
        cut = " (the file is cut inside it?)" if not first.endswith(b"\n") else ""
        raise TraceKindError(f"{path}:1: not JSON ({error}){cut}") from None


def _first_objects(path: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    with path.open(encoding="utf-8", errors="replace") as file:
        for raw in file:
            if len(found) >= SNIFFED_LINES:
                break
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            if isinstance(line, dict):
                found.append(line)
    return found


def _codex_line(line: dict[str, Any]) -> bool:
    """A rollout envelope, or a flat (older) rollout's bare Responses item."""
    if line.get("type") in CODEX_ENVELOPES and isinstance(line.get("payload"), dict):
        return True
    return line.get("type") in RESPONSES_ITEMS and "message" not in line and "uuid" not in line


def _claude_code_line(line: dict[str, Any]) -> bool:
    return line.get("type") in ("user", "assistant") and isinstance(line.get("message"), dict) and ("uuid" in line or "sessionId" in line)


def load(path: Path, kind: str = "auto") -> list[tuple[Header, Any]]:
    """``(header, history)`` of each trace in ``path``; ``header["wire_format"]`` is the history's
    format (absent: chat-completions). ``kind`` is one of `KINDS`, or ``auto`` for `detect`."""
    from .claude_code import import_claude_code
    from .claude_code_messages import import_claude_code_messages
    from .codex import import_codex
    from .format import read_trace
    from .importers import import_swe_agent, import_tau_bench

    if not path.is_file():
        raise TraceKindError(f"{path}: no such file")
    kind = detect(path) if kind == "auto" else kind
    one: dict[str, Callable[[Path], tuple[Header, Any]]] = {
        "trace": read_trace, "codex": import_codex, "claude-code": import_claude_code_messages,
        "claude-code-chat": import_claude_code, "swe-agent": import_swe_agent,
    }  # fmt: skip
    if kind == "tau-bench":
        return list(import_tau_bench(path))
    if kind not in one:
        raise TraceKindError(f"unknown trace kind {kind!r} (one of {', '.join(KINDS)})")
    return [one[kind](path)]
