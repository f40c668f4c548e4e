"""The shared loop of the fake implementations: tiny `cmd:` compactors that test the runner itself.

Each fake is a script in this folder (run as ``python tests/fakes/<name>.py``) that
answers ``start``, ``reset`` and ``stop`` correctly and misbehaves, on purpose, in
one way when asked to ``compact``. Python puts a script's folder first on
``sys.path``, so the fakes import this module by name.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

Request = dict[str, Any]
Answer = dict[str, Any] | None
"""A JSON answer, or None to answer nothing."""


def send(answer: dict[str, Any]) -> None:
    """Write one answer line and flush (a pipe is block-buffered otherwise)."""
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()


def say(text: str) -> None:
    """Write a line to standard error, where the runner keeps the tail for its messages."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def hello(name: str, profiles: tuple[str, ...] = ("core",), **capabilities: bool) -> dict[str, Any]:
    """The answer to ``start`` for protocol version 1."""
    return {
        "ok": True,
        "version": 1,
        "implementation": {"name": name, "version": "0.0.0", "language": "python"},
        "profiles": list(profiles),
        "capabilities": capabilities,
    }


def serve(
    name: str,
    on_compact: Callable[[Request], Answer],
    *,
    on_estimate: Callable[[Request], Answer] | None = None,
    on_reset: Callable[[Request], None] | None = None,
    on_start: Callable[[Request], Answer] | None = None,
    on_line: Callable[[str], None] | None = None,
    profiles: tuple[str, ...] = ("core",),
    last_event: bool = False,
) -> None:
    """Answer requests from standard input until ``stop`` or its end, then exit 0."""
    for line in sys.stdin:
        if on_line is not None:
            on_line(line)
        request = json.loads(line)
        command = request["cmd"]
        if command == "stop":
            break
        if command == "start":
            answer = on_start(request) if on_start else hello(
                name, profiles, estimate_tokens=on_estimate is not None, last_event=last_event
            )
        elif command == "reset":
            if on_reset is not None:
                on_reset(request)
            answer = {"ok": True}
        elif command == "estimate_tokens" and on_estimate is not None:
            answer = on_estimate(request)
        else:
            answer = on_compact(request)
        if answer is not None:
            send(answer)
    sys.exit(0)
