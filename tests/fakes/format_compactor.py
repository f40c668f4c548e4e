"""A `cmd:` compactor of another wire format (protocol 1.2): the example compactors of
examples/python (responses_truncating, anthropic_truncating) behind the line protocol.

``python tests/fakes/format_compactor.py responses`` (or ``anthropic-messages``) declares
``capabilities.wire_format`` in its ``start`` answer and compacts what ``compact`` sends; it
answers ``rejected`` when a request lacks the ``format`` the declaration promised, so a test
sees the suite sending it. ``--record PATH`` appends every request line to PATH.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from _fake import Request, hello, serve

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "python"))

from anthropic_truncating import AnthropicTruncating
from responses_truncating import ResponsesTruncating

KINDS = {"responses": ResponsesTruncating, "anthropic-messages": AnthropicTruncating}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("wire_format", choices=sorted(KINDS))
    parser.add_argument("--record")
    options = parser.parse_args()
    state: dict[str, Any] = {}

    def reset(request: Request) -> None:
        s = SimpleNamespace(**request["settings"])
        state["compactor"] = KINDS[options.wire_format](s.threshold_iterations, s.max_context_tokens, s.keep_recent_rounds)

    def compact(request: Request) -> dict[str, Any]:
        if request.get("format") != options.wire_format:
            return {"seq": request["seq"], "rejected": {"message": f"expected format {options.wire_format!r}, got {request.get('format')!r}"}}
        return {"seq": request["seq"], "messages": state["compactor"].compact(request["messages"], iteration=request["iteration"])}

    def record(line: str) -> None:
        if options.record:
            with open(options.record, "a", encoding="utf-8") as log:
                log.write(line)

    start = hello(f"{options.wire_format}-truncating")
    start["capabilities"] = {"wire_format": options.wire_format}
    serve(f"{options.wire_format}-truncating", compact, on_reset=reset, on_start=lambda request: start, on_line=record)


main()
