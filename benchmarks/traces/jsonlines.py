"""Session logs in JSON lines, as coding agents write them: one JSON object per line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def json_objects(path: Path, error: type[Exception]) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line of ``path``; ``error`` names what is
    wrong (an unreadable file, a line that is not JSON or not an object) with the line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as problem:
        raise error(f"{path}: cannot read: {problem}") from problem
    found = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except json.JSONDecodeError as problem:
            raise error(f"{path}:{number}: not JSON: {problem.msg}") from problem
        if not isinstance(line, dict):
            raise error(f"{path}:{number}: expected a JSON object")
        found.append((number, line))
    return found
