"""LangChain's own shapes for an OpenAI Responses history, both ways through ``langchain-openai``.

An agent built on ``ChatOpenAI(use_responses_api=True, output_version="responses/v1")`` keeps its
history as LangChain messages, and that is what LangChain's compactors see:

- each run of output items the model returned (``reasoning`` with its ``encrypted_content``, an
  assistant ``message``, ``function_call``, ``compaction``) is the ``AIMessage`` ``ChatOpenAI`` stores
  after that response (``_construct_lc_result_from_responses_api`` on the SDK's ``Response``): its
  ``content`` the Responses blocks (``reasoning`` as returned, ``text`` with the item id, the
  ``function_call`` item), its ``tool_calls`` read from the calls;
- a ``function_call_output`` is the ``ToolMessage`` the tool node records for that call, its content
  the output as given (a string, or Responses ``input_text``/``input_image`` parts);
- a user, system or developer message a ``HumanMessage``/``SystemMessage`` holding the item's content
  as the caller gives it: Responses parts (``input_text``, ``input_image``, ``input_file``), which
  ``ChatOpenAI`` sends as they are (langchain-ai/langchain#40741's ``input_image`` block).

The way back is what the model is sent: ``_construct_responses_api_input`` on each message the
compactor changed or made; a message it left exactly as it was comes back as the items it came from
(the client's re-encoding is not the compactor's doing). SPEC RESP-1..RESP-8.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from compaction_suite.conformance.formats.responses import kind

from . import _langchain_blocks as blocks
from ._common import requires

Item = dict[str, Any]
MODEL = "gpt-5"
"""The model name of the ``Response`` each output run is parsed as (never called)."""
OUTPUT = ("reasoning", "function_call", "compaction")
"""Item kinds ``ChatOpenAI`` keeps in an ``AIMessage``'s content beside an assistant message."""
CALL_ANSWERS = ("function_call_output",)


def _is_output(item: Item) -> bool:
    return kind(item) in OUTPUT or (kind(item) == "message" and item.get("role") == "assistant")


def _ai_message(run: list[Item], mid: str) -> Any:
    """The ``AIMessage`` ``ChatOpenAI`` stores for a response whose output is ``run``."""
    base = requires("langchain_openai.chat_models.base", "langchain")
    types = requires("openai.types.responses", "langchain")
    output = [{**copy.deepcopy(i), "type": kind(i)} for i in run]
    for item in output:
        if item["type"] == "message":
            item.setdefault("id", "msg_unset")
            item.setdefault("status", "completed")
            item["content"] = [{"annotations": [], **p} if p.get("type") == "output_text" else p for p in item.get("content") or []]
        if item["type"] == "function_call":
            item.setdefault("status", "completed")
    response = {
        "id": f"resp_{mid}", "object": "response", "created_at": 0, "model": MODEL, "output": output, "status": "completed",
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
    }  # fmt: skip
    ai = (
        base._construct_lc_result_from_responses_api(types.Response.model_validate(response), output_version="responses/v1")
        .generations[0]
        .message
    )
    ai.id = mid
    ai.usage_metadata = None  # the history says nothing of what the provider reported
    for block in ai.content:  # an item id the history did not give is not LangChain's to keep
        if isinstance(block, dict) and block.get("id") == "msg_unset":
            block.pop("id")
    return ai


def _tool_message(lc: Any, item: Item, mid: str, k: int) -> Any:
    """The ``ToolMessage`` of an output item, the ``k``-th of the history (`_langchain_blocks.held`)."""
    return lc.ToolMessage(content=blocks.held(copy.deepcopy(item.get("output", "")), k), tool_call_id=item.get("call_id"), id=mid)


def _input_message(lc: Any, item: Item, mid: str) -> Any:
    content = copy.deepcopy(item.get("content", ""))
    if item.get("role") in ("system", "developer"):
        extra = {"__openai_role__": "developer"} if item.get("role") == "developer" else {}
        return lc.SystemMessage(content=content, additional_kwargs=extra, id=mid)
    if item.get("role") == "user":
        return lc.HumanMessage(content=content, id=mid)
    raise ValueError(f"item {mid}: a {kind(item)!r} item has no LangChain message here")


@dataclass
class Conversion:
    """LangChain messages for a Responses input, and the items to give back for those left as they were."""

    messages: list[Any]
    origin: dict[str, list[int]] = field(default_factory=dict)
    """LangChain message id -> the indices of the items it came from."""
    snapshots: dict[str, Any] = field(default_factory=dict)
    originals: list[Item] = field(default_factory=list)


def to_langchain(items: list[Item]) -> Conversion:
    """The LangChain messages an agent on ``ChatOpenAI`` (Responses API, ``responses/v1``) holds for ``items``."""
    lc = requires("langchain_core.messages", "langchain")
    conversion = Conversion(messages=[], originals=copy.deepcopy(list(items)))
    run: list[int] = []

    def add(message: Any, indices: list[int]) -> None:
        conversion.origin[message.id] = indices
        conversion.snapshots[message.id] = message.model_copy(deep=True)
        conversion.messages.append(message)

    def flush() -> None:
        if run:
            add(_ai_message([conversion.originals[i] for i in run], f"resp-{run[0]}"), list(run))
            run.clear()

    for i, item in enumerate(conversion.originals):
        if _is_output(item):
            run.append(i)
            continue
        flush()
        if kind(item) in CALL_ANSWERS:
            add(_tool_message(lc, item, f"resp-{i}", sum(kind(o) in CALL_ANSWERS for o in items[:i])), [i])
        else:
            add(_input_message(lc, item, f"resp-{i}"), [i])
    flush()
    return conversion


def sent(messages: list[Any]) -> list[Item]:
    """The input items ``ChatOpenAI`` sends for ``messages`` on the Responses API."""
    base = requires("langchain_openai.chat_models.base", "langchain")
    return list(base._construct_responses_api_input(list(messages)))


def from_langchain(conversion: Conversion, messages: list[Any]) -> list[Item]:
    """The input the model is sent for ``messages`` (the compactor's output): each message left exactly
    as it was the items it came from, any other as ``langchain-openai`` sends it."""
    lc = requires("langchain_core.messages", "langchain")
    out: list[Item] = []
    for message in messages:
        if isinstance(message, lc.RemoveMessage):
            continue
        indices = conversion.origin.get(message.id) if message.id else None
        if indices is not None and conversion.snapshots[message.id] == message:
            out.extend(copy.deepcopy(conversion.originals[i]) for i in indices)
        else:
            out.extend(sent([message]))
    return out
