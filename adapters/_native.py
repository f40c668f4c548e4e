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


# --- a Responses history's last model step (the step an adapter's scripted model answers with)

MODEL_ITEMS = ("reasoning", "function_call")
"""The Responses item types the model says, beside assistant messages."""


def item_kind(item: dict[str, Any]) -> str:
    """A Responses input item's type; an easy input message, which has none, is a ``message``."""
    return str(item.get("type", "message" if "role" in item else ""))


def said_by_model(item: dict[str, Any], model_items: tuple[str, ...] = MODEL_ITEMS) -> bool:
    """Whether the model says ``item``: an assistant message or one of ``model_items``."""
    return item_kind(item) in model_items or (item_kind(item) == "message" and item.get("role") == "assistant")


def last_model_step(items: list[dict[str, Any]], model_items: tuple[str, ...] = MODEL_ITEMS) -> tuple[int, int, dict[str, Any]] | None:
    """(where the last model step of ``items`` starts, where it ends, its calls' outputs by ``call_id``):
    the step is the run of items the model says (`said_by_model`) before the trailing
    ``function_call_output`` items, which must be the outputs of its calls, in their order. None when
    there is no such step or the trailing outputs are not its calls' (an item between a call and its
    output, a call still without its output)."""
    end = len(items)
    while end > 0 and item_kind(items[end - 1]) == "function_call_output":
        end -= 1
    start = end
    while start > 0 and said_by_model(items[start - 1], model_items):
        start -= 1
    step, outputs = items[start:end], items[end:]
    calls = [i.get("call_id") for i in step if item_kind(i) == "function_call"]
    if not step or [o.get("call_id") for o in outputs] != calls:
        return None
    return start, end, {str(o["call_id"]): o.get("output") for o in outputs}
