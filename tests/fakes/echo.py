"""A well-behaved fake: returns the history unchanged.

Declares profiles ["core"], both capabilities, and counts compactions since the
last reset in its event (so a test sees that ``reset`` drops state). Options:
``--record PATH`` appends every request line it receives to PATH;
``--no-estimate`` declares no ``estimate_tokens`` and no ``last_event``.
"""

from __future__ import annotations

import argparse
from typing import Any

from _fake import Request, serve

state = {"compacts": 0}


def text_chars(messages: list[dict[str, Any]]) -> int:
    return sum(len(m["content"]) for m in messages if isinstance(m.get("content"), str))


def compact(request: Request) -> dict[str, Any]:
    state["compacts"] += 1
    messages = request["messages"]
    return {
        "seq": request["seq"],
        "messages": messages,
        "event": {"messages_before": len(messages), "messages_after": len(messages), "compacts": state["compacts"]},
        "logs": [{"level": "INFO", "message": f"echoed {len(messages)} messages at iteration {request['iteration']}"}],
    }


def estimate(request: Request) -> dict[str, Any]:
    return {"seq": request["seq"], "tokens": text_chars(request["messages"]) // 4}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record")
    parser.add_argument("--no-estimate", action="store_true")
    options = parser.parse_args()

    def record(line: str) -> None:
        if options.record:
            with open(options.record, "a", encoding="utf-8") as log:
                log.write(line)

    serve(
        "echo",
        compact,
        on_estimate=None if options.no_estimate else estimate,
        on_reset=lambda request: state.update(compacts=0),
        on_line=record,
        last_event=not options.no_estimate,
    )


main()
