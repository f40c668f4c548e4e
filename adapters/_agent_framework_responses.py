"""Agent Framework's messages for a Responses history, and back (the ``history="responses"`` option of
`adapters.agent_framework`'s strategy factories).

Agent Framework rebuilds a Responses history item by item into its own messages when it hosts an
agent behind the Responses API (``agent_framework_foundry_hosting._responses._item_to_message``, read
at python-1.10.0 and python-1.13.0): one ``Message`` per item, without a ``message_id``; a reasoning
item as an assistant message of ``text_reasoning``; a hosted tool call as an assistant message of
its call content (an ``mcp_call`` with its output beside it); a function or shell call's output as a
``tool`` message. `to_agent_framework` builds that list; `from_agent_framework` gives each message
the strategy kept back as the item it was made from (an opaque reasoning blob, an image, a call's
fields are the caller's, not AF's to change), and a message AF wrote (a ``[Tool results: ...]``
digest, a summary) as a message item. SPEC Part A, Declarations: ``responses_items: rebuilt``.

A ``function_call_output`` whose output is a list of parts (a tool's image or PDF) is handed to AF as
the text of its text parts. AF's hosting writes the whole list as text instead (``_json_safe_to_str``,
``json.dumps`` at agent-framework-foundry-hosting 1.0.0b261022; ``str()`` at 1.0.0b260721), base64
data and all, so the model reads the image as text before any compaction runs: the hosting's
conversion, not the strategy's, which the suite would otherwise charge to the strategy (CORE-43 on
the ``[Tool results: ...]`` digest quoting it). The kept item comes back whole, its media with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compaction_suite.conformance.formats.responses import kind

Item = dict[str, Any]


def _text(part: Any) -> str:
    return part.get("text", "") if isinstance(part, dict) else ""


def _message(af: Any, item: Item) -> Any:
    content = item.get("content")
    if isinstance(content, str):
        return af.Message(role=item["role"], contents=[af.Content.from_text(content)])
    made = []
    for part in content or []:
        if part.get("type") in ("input_text", "output_text"):
            made.append(af.Content.from_text(_text(part)))
        elif part.get("type") == "input_image":
            url = part.get("image_url") or ""
            media = url[5 : url.index(";")] if url.startswith("data:") and ";" in url else None
            made.append(af.Content.from_uri(url, media_type=media))
        else:
            raise ValueError(f"message part {part.get('type')!r} has no Agent Framework content here")
    return af.Message(role=item["role"], contents=made)


def _reasoning(af: Any, item: Item) -> Any:
    said = "\n".join(_text(s) for s in item.get("summary") or []) or None
    return af.Message(role="assistant", contents=[af.Content.from_text_reasoning(id=item.get("id"), text=said, protected_data=item.get("encrypted_content"))])


def _mcp(af: Any, item: Item) -> Any:
    call = af.Content.from_mcp_server_tool_call(item["id"], item.get("name") or "", server_name=item.get("server_label"), arguments=item.get("arguments"))
    output = [af.Content.from_mcp_server_tool_result(call_id=item["id"], output=item["output"])] if item.get("output") is not None else []
    return af.Message(role="assistant", contents=[call, *output])


def _shell_output(af: Any, item: Item) -> Any:
    outputs = [
        af.Content.from_shell_command_output(stdout=o.get("stdout") or "", stderr=o.get("stderr") or "", exit_code=(o.get("outcome") or {}).get("exit_code"))
        for o in item.get("output") or []
    ]
    return af.Message(role="tool", contents=[af.Content.from_shell_tool_result(call_id=item.get("call_id"), outputs=outputs)])


BUILDERS: dict[str, Callable[[Any, Item], Any]] = {
    "message": _message,
    "reasoning": _reasoning,
    "function_call": lambda af, i: af.Message(role="assistant", contents=[af.Content.from_function_call(i["call_id"], i["name"], arguments=i.get("arguments"))]),
    "function_call_output": lambda af, i: af.Message(role="tool", contents=[af.Content.from_function_result(i["call_id"], result=i["output"] if isinstance(i["output"], str) else "\n".join(_text(p) for p in i["output"]))]),
    "mcp_call": _mcp,
    "code_interpreter_call": lambda af, i: af.Message(role="assistant", contents=[af.Content.from_code_interpreter_tool_call(call_id=i.get("id"))]),
    "image_generation_call": lambda af, i: af.Message(role="assistant", contents=[af.Content.from_image_generation_tool_call(image_id=i.get("id"))]),
    "shell_call": lambda af, i: af.Message(
        role="assistant", contents=[af.Content.from_shell_tool_call(call_id=i.get("call_id"), commands=(i.get("action") or {}).get("commands"), status=i.get("status"))]
    ),
    "shell_call_output": _shell_output,
}
"""Each item type AF's Responses hosting rebuilds, as it rebuilds it (its other types are not drawn here:
SPEC Part A, Declarations, ``responses_items``)."""


def to_agent_framework(af: Any, items: list[Item]) -> tuple[list[Any], dict[int, Item]]:
    """AF messages for ``items``, one each, without message ids (as AF's hosting builds them), and the
    item each message was built from, by the identity of the message object and of its first content
    (AF's agent loop sends copies of the messages it is given that share their contents: 1.23.0)."""
    messages, origin = [], {}
    for item in items:
        found = kind(item)
        if found not in BUILDERS:
            raise ValueError(f"a {found!r} item has no Agent Framework message here (responses_items: rebuilt draws none)")
        message = BUILDERS[found](af, item)
        messages.append(message)
        origin[id(message)] = item
        if message.contents:
            origin[id(message.contents[0])] = item
    return messages, origin


def _origin(message: Any, origin: dict[int, Item]) -> Item | None:
    """The item ``message`` was built from (itself, or a copy sharing its first content), if any."""
    found = origin.get(id(message))
    if found is None and message.contents:
        found = origin.get(id(message.contents[0]))
    return found


def from_agent_framework(messages: list[Any], origin: dict[int, Item]) -> list[Item]:
    """Items for the messages AF's strategy kept: the item a message was built from, or, for a message AF
    wrote, a message item of its text."""
    out = []
    for message in messages:
        built = _origin(message, origin)
        if built is not None:
            out.append(built)
            continue
        role = str(message.role)
        part = "output_text" if role == "assistant" else "input_text"
        texts = [c.text or "" for c in message.contents if c.type == "text"]
        out.append({"type": "message", "role": role, "content": [{"type": part, "text": t, **({"annotations": []} if part == "output_text" else {})} for t in texts]})
    return out
