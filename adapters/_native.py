"""The compactor object of an adapter whose framework speaks another wire format than
chat-completions (SPEC Part A, "Wire formats"; ``conformance/formats/README.md``).

Such an adapter hands the framework the history exactly as the suite gives it (Responses
input items, or the Anthropic ``{"system", "messages"}`` request part), converted only where
the framework's own types require it, and declares ``wire_format`` beside the other
capabilities it declares (each proven by ``tests/test_adapter_format_loops.py``).
Standard library only.
"""

from __future__ import annotations

from typing import Any

from ._common import BETWEEN_ROUNDS


def declared(wire_format: str, *, system_prompt: str, called: str = BETWEEN_ROUNDS) -> dict[str, str]:
    """The capabilities an adapter declares: its wire format, when its framework calls it and
    where the framework keeps the system prompt (``outside`` the compacted history or ``in_list``).
    The compactor object itself is `._common.make`, as for every adapter."""
    return {"wire_format": wire_format, "called": called, "system_prompt": system_prompt}


def double_refuses(path: str, body: dict[str, Any]) -> str | None:
    """None when the suite's summarizer test double answers ``POST {base_url}{path}`` with ``body``;
    else its refusal (status and message). An adapter whose framework needs a request the double
    does not answer is reported unavailable by ``compaction-suite matrix`` (``UNAVAILABLE``): every
    compaction would fail on an error no user meets, and the matrix must not count that."""
    import json
    import urllib.error
    import urllib.request

    from compaction_suite.conformance.summarizer_server import SummarizerServer

    with SummarizerServer() as server:
        request = urllib.request.Request(f"{server.base_url}{path}", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(request, timeout=10).close()
        except urllib.error.HTTPError as error:
            if 400 <= error.code < 500:
                detail = error.read().decode("utf-8", "replace")[:200]
                return f"the suite's summarizer test double refuses POST /v1{path} as the framework sends it (HTTP {error.code}: {detail})"
    return None
