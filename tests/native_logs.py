"""Builders of agent session logs on disk in their own published formats, for the importer and
replay tests: a Claude Code session (``~/.claude/projects/.../<session>.jsonl``; the lines of
tests/fixtures/claude-code) and an OpenAI Codex CLI rollout (``rollout-*.jsonl``: envelopes
``{"timestamp", "type", "payload"}`` whose ``response_item`` payloads are Responses items; the
lines of tests/fixtures/codex). Written from the formats' public descriptions, no real session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def claude_code_log(path: Path, turns: int, rounds: int, *, thinking: bool = False) -> Path:
    """A Claude Code session log: ``turns`` user turns of ``rounds`` tool rounds and an answer
    each; with ``thinking``, each tool call's assistant message starts with a signed thinking block."""
    lines: list[dict] = []
    parent = None

    def add(kind: str, message: dict) -> None:
        nonlocal parent
        uuid = f"u{len(lines)}"
        lines.append({"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "native-replay", "isSidechain": False, "message": message})
        parent = uuid

    for turn in range(turns):
        add("user", {"role": "user", "content": f"Turn {turn}: read the files and fix the bug."})
        for r in range(rounds):
            n = f"{turn}_{r}"
            blocks: list[dict[str, Any]] = [{"type": "thinking", "thinking": f"Read f{n}.py next.", "signature": f"EuSig{n}"}] if thinking else []
            blocks.append({"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {"file_path": f"f{n}.py"}})
            add("assistant", {"id": f"msg_{n}", "role": "assistant", "content": blocks})
            add("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": f"contents of f{n}.py: ord_{n}"}]})
        add("assistant", {"id": f"msg_end_{turn}", "role": "assistant", "content": [{"type": "text", "text": "Fixed."}]})
    return _write(path, lines)


def codex_rollout(path: Path, turns: int, rounds: int, *, reasoning: bool = False) -> Path:
    """A Codex CLI rollout: session metadata, then ``turns`` user turns of ``rounds`` shell calls
    and an answer each, with the UI's ``event_msg`` echoes; with ``reasoning``, each call is
    preceded by a ``reasoning`` item (summary and encrypted content, as the API returns it)."""
    lines: list[dict] = [{"timestamp": "2025-10-02T10:00:00.000Z", "type": "session_meta", "payload": {"id": "native-codex", "cwd": "/repo", "originator": "codex_cli_rs"}}]

    def add(kind: str, payload: dict) -> None:
        lines.append({"timestamp": f"2025-10-02T10:00:{len(lines) % 60:02d}.000Z", "type": kind, "payload": payload})

    for turn in range(turns):
        ask = f"Turn {turn}: run the checks and fix what fails."
        add("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": ask}]})
        add("event_msg", {"type": "user_message", "message": ask, "kind": "plain"})
        add("turn_context", {"cwd": "/repo", "approval_policy": "on-request", "model": "gpt-5-codex"})
        for r in range(rounds):
            n = f"{turn}_{r}"
            if reasoning:
                add("response_item", {"type": "reasoning", "id": f"rs_{n}", "summary": [{"type": "summary_text", "text": f"Check f{n}."}], "content": None, "encrypted_content": f"gAAAAB-{n}"})
            add("response_item", {"type": "function_call", "id": f"fc_{n}", "name": "shell", "arguments": json.dumps({"command": ["cat", f"f{n}.py"]}), "call_id": f"call_{n}"})
            add("response_item", {"type": "function_call_output", "call_id": f"call_{n}", "output": json.dumps({"output": f"contents of f{n}.py: ord_{n}", "metadata": {"exit_code": 0}})})
        add("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Fixed."}]})
    return _write(path, lines)
