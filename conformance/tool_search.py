"""The Responses API's client-executed tool search, as the TEST DOUBLE answers it for a scripted agent model
(SPEC Part A, "Wire formats", Decision: a deferred tool is searched for before it is called; RESP-32).

A function tool declared with ``"defer_loading": true`` is withheld from the model until a tool search loads it
(OpenAI's tool search guide, developers.openai.com/api/docs/guides/tools-tool-search, as pydantic-ai 2.25.0's
``profiles/openai.py`` cites it; the API refuses ``defer_loading`` without a ``tool_search`` tool: "Deferred tools
require tools.tool_search", quoted there). With a ``{"type": "tool_search", "execution": "client"}`` tool the
model asks for the search as a ``tool_search_call`` item (``execution: "client"``, its ``arguments`` of the
``parameters`` the tool declares) and the client answers with a ``tool_search_output`` item whose ``tools`` are
the definitions it loads (openai 3.57.0, ``types/responses/response_tool_search_call.py`` and
``response_tool_search_output_item.py``). So a scripted answer calling a deferred function the input has not
loaded is not what the model can send: it first searches for it (`search_first`), and, once its search loaded
nothing, it says so instead of calling it (`not_found`; the search tool pydantic-ai declares ends "If no tools
are found, do not retry"). Server-executed search is not answered here (the script is answered as written).
Standard library only.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

NOT_FOUND = "No tool named {names} could be found; I cannot call it. (compaction-suite test double)"
"""The model's words when its search loaded none of the tools it needed."""


def _client_search(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for tool in body.get("tools") or []:
        if isinstance(tool, Mapping) and tool.get("type") == "tool_search" and tool.get("execution") == "client":
            return tool
    return None


def _deferred(body: Mapping[str, Any]) -> set[str]:
    return {
        str(t.get("name")) for t in body.get("tools") or []
        if isinstance(t, Mapping) and t.get("type") == "function" and t.get("defer_loading") is True
    }  # fmt: skip


def loaded(item: Mapping[str, Any]) -> set[str]:
    """The function names a ``tool_search_output`` or ``additional_tools`` item makes callable (a namespace's too)."""
    names: set[str] = set()
    for tool in item.get("tools") or []:
        if isinstance(tool, Mapping):
            names.add(str(tool.get("name")))
            names.update(str(t.get("name")) for t in tool.get("tools") or [] if isinstance(t, Mapping))
    return names


def words(value: Any) -> set[str]:
    """The whitespace-separated words of every string in ``value`` (a search call's ``arguments``)."""
    if isinstance(value, str):
        return set(value.split())
    parts = value.values() if isinstance(value, Mapping) else value if isinstance(value, list) else ()
    return set().union(*(words(v) for v in parts))


def _state(body: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """(the deferred names the input loaded, the names the input's client searches asked for and did not load)."""
    found: set[str] = set()
    asked: dict[str, set[str]] = {}  # call_id -> the words it searched for
    missed: set[str] = set()
    for item in body.get("input") or []:
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type")
        if kind in ("tool_search_output", "additional_tools"):
            found |= loaded(item)
        if kind == "tool_search_call" and item.get("execution") == "client":
            asked[str(item.get("call_id"))] = words(item.get("arguments"))
        elif kind == "tool_search_output" and str(item.get("call_id")) in asked:
            missed.update(n for n in _deferred(body) if n in asked[str(item.get("call_id"))] and n not in loaded(item))
    return found, missed - found


def _arguments(tool: Mapping[str, Any], names: list[str]) -> dict[str, Any]:
    """The search's arguments in the schema the client declared: the tools' names, as a list where its first
    property is an array (pydantic-ai's ``queries``), else as one string."""
    properties = (tool.get("parameters") or {}).get("properties") or {}
    first = next(iter(properties), "query")
    kind = properties.get(first, {}).get("type") if isinstance(properties.get(first), Mapping) else None
    return {first: names if kind == "array" else " ".join(names)}


def search_first(body: Mapping[str, Any], output: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]] | None:
    """What the model sends instead of ``output`` (a scripted answer) when ``output`` calls a deferred function the
    request's input has not loaded and the request offers client tool search: a ``tool_search_call`` for those
    tools, or, when its search for them already loaded nothing, an assistant message saying so. None: ``output``
    stands."""
    tool = _client_search(body)
    if tool is None:
        return None
    deferred = _deferred(body)
    found, missed = _state(body)
    names = list(dict.fromkeys(
        str(o.get("name")) for o in output
        if o.get("type") == "function_call" and str(o.get("name")) in deferred and str(o.get("name")) not in found
    ))  # fmt: skip
    if not names:
        return None
    digest = hashlib.sha256(json.dumps([body.get("input"), names], sort_keys=True, default=str).encode()).hexdigest()[:24]
    if set(names) <= missed:
        text = NOT_FOUND.format(names=", ".join(names))
        content = [{"type": "output_text", "text": text, "annotations": []}]
        return [{"type": "message", "id": f"msg_testdouble_{digest}", "role": "assistant", "status": "completed", "content": content}]
    return [{
        "type": "tool_search_call", "id": f"tsc_testdouble_{digest}", "call_id": f"call_testdouble_{digest}",
        "execution": "client", "status": "completed", "arguments": _arguments(tool, names),
    }]  # fmt: skip
