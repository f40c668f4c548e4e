"""A summarizer's answer that is a tool call, as each API sends it (SPEC Part A, "Faults": the
``tool_call`` answer; SPEC CORE-11 Decision: a tool call is not a summary).

A request that offers tools may be answered with a call of one of them instead of text, and a
request that forces one (``tool_choice``) always is: OpenAI's function-calling guide
(platform.openai.com/docs/guides/function-calling: ``finish_reason: "tool_calls"``, the message's
``content`` null; ``tool_choice: "required"`` or a named function forces a call), Anthropic's
tool-use guide (docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use:
``stop_reason: "tool_use"`` and a ``tool_use`` block; ``tool_choice`` ``any`` or ``tool`` forces
one), and a summarizer doing it in the wild: strands-agents/harness-sdk#1947 (claude-3-haiku
calling the no-op tool its summarization request offered). The test double answers a tool call
only with a tool the request itself offers, with empty arguments; the call's id names the test
double.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

CALL_ID_PREFIX = "call_testdouble_"


def _names(api: str, body: Mapping[str, Any]) -> list[str]:
    """The names of the function tools ``body`` offers, in order (``api``: ``chat``, ``responses``, ``anthropic``,
    ``converse``: its ``toolConfig.tools[].toolSpec``)."""
    names: list[str] = []
    if api == "converse":
        config = body.get("toolConfig")
        tools = config.get("tools") if isinstance(config, Mapping) else None
        specs = [t.get("toolSpec") for t in tools or [] if isinstance(t, Mapping)]
        return [str(spec["name"]) for spec in specs if isinstance(spec, Mapping) and isinstance(spec.get("name"), str) and spec["name"]]
    for tool in body.get("tools") or []:
        if not isinstance(tool, Mapping):
            continue
        if api == "chat" and isinstance(tool.get("function"), Mapping):
            name = tool["function"].get("name")
        elif (api == "responses" and tool.get("type") == "function") or (api == "anthropic" and "name" in tool):
            name = tool.get("name")
        else:
            continue
        if isinstance(name, str) and name:
            names.append(name)
    return names


def offered(api: str, body: Mapping[str, Any]) -> str | None:
    """The tool a tool-call answer to ``body`` calls: the one ``tool_choice`` names, else the
    first offered; None when the request offers none (or forbids calls: ``tool_choice: "none"``)."""
    names = _names(api, body)
    if not names or _choice(api, body) == "none":
        return None
    named = _named(api, body)
    return named if named in names else names[0]


def forced(api: str, body: Mapping[str, Any]) -> str | None:
    """The tool ``body`` forces the model to call (the API then always answers a call), or None."""
    choice = _choice(api, body)
    if choice in ("required", "any") or _named(api, body) is not None:
        return offered(api, body)
    return None


def _choice(api: str, body: Mapping[str, Any]) -> str | None:
    """The kind of tool choice: a string, an object's ``type``, or Converse's ``toolChoice`` key
    (``auto``, ``any``, ``tool``)."""
    if api == "converse":
        config = body.get("toolConfig")
        chosen = config.get("toolChoice") if isinstance(config, Mapping) else None
        return next(iter(chosen), None) if isinstance(chosen, Mapping) else None
    choice = body.get("tool_choice")
    if isinstance(choice, str):
        return choice
    return str(choice.get("type")) if isinstance(choice, Mapping) else None


def _named(api: str, body: Mapping[str, Any]) -> str | None:
    if api == "converse":
        config = body.get("toolConfig")
        chosen = config.get("toolChoice") if isinstance(config, Mapping) else None
        tool = chosen.get("tool") if isinstance(chosen, Mapping) else None
        return str(tool.get("name")) if isinstance(tool, Mapping) and tool.get("name") else None
    choice = body.get("tool_choice")
    if not isinstance(choice, Mapping):
        return None
    if api == "chat" and choice.get("type") == "function" and isinstance(choice.get("function"), Mapping):
        return choice["function"].get("name")
    if api == "responses" and choice.get("type") == "function":
        return choice.get("name")
    if api == "anthropic" and choice.get("type") == "tool":
        return choice.get("name")
    return None


def call_id(body: Mapping[str, Any]) -> str:
    canonical = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return CALL_ID_PREFIX + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:24]


# --- chat-completions


def chat_message(body: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The assistant message of a ``chat.completion`` calling ``name`` (content null)."""
    call = {"id": call_id(body), "type": "function", "function": {"name": name, "arguments": "{}"}}
    return {"role": "assistant", "content": None, "refusal": None, "tool_calls": [call]}


def chat_deltas(body: Mapping[str, Any], name: str) -> list[dict[str, Any]]:
    """The ``delta`` objects of the same answer streamed (the final chunk's ``finish_reason`` is ``tool_calls``)."""
    call = {"index": 0, "id": call_id(body), "type": "function", "function": {"name": name, "arguments": ""}}
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]},
    ]


# --- Responses


def responses_item(body: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The ``function_call`` output item of a response calling ``name``."""
    cid = call_id(body)
    return {"type": "function_call", "id": "fc_" + cid, "call_id": cid, "name": name, "arguments": "{}", "status": "completed"}


# --- Anthropic Messages


def anthropic_block(body: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The ``tool_use`` block of a message calling ``name`` (``stop_reason: "tool_use"``)."""
    return {"type": "tool_use", "id": "toolu_" + call_id(body)[len("call_") :], "name": name, "input": {}}


def anthropic_events(block: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The content-block events of ``block`` streamed: start with empty input, the input as JSON, stop."""
    start = {**block, "input": {}}
    return [
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}},
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    ]


# --- Bedrock Converse


def converse_block(body: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The ``toolUse`` block of a Converse answer calling ``name`` (``stopReason: "tool_use"``)."""
    return {"toolUse": {"toolUseId": "tooluse_" + call_id(body)[len("call_") :], "name": name, "input": {}}}
