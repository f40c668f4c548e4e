"""Chat-completions messages for the tests, built one way everywhere (plain dicts, as the API takes).

Test modules import these instead of each writing its own copy; a module that needs other
defaults passes them (``user("Please fix the parser.")``, ``calls("c1", name="search")``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from anthropic.types import MessageParam
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.responses import ResponseInputParam


def system(text: str = "You are an agent.", role: str = "system") -> dict[str, Any]:
    return {"role": role, "content": text}


def user(text: str = "Please do the thing.") -> dict[str, Any]:
    return {"role": "user", "content": text}


def reply(text: str = "Done.") -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def call(call_id: str, name: str = "readFile", arguments: Any = "{}") -> dict[str, Any]:
    """One tool call; ``arguments`` that are not a string are sent as JSON."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}


def calls(*ids: str, name: str = "readFile") -> dict[str, Any]:
    """An assistant message calling ``name`` once per id, with no text."""
    return asks(*(call(i, name) for i in ids))


def asks(*tool_calls: dict[str, Any], text: str | None = None) -> dict[str, Any]:
    """An assistant message making ``tool_calls`` (built with `call`), with ``text`` or none."""
    return {"role": "assistant", "content": text, "tool_calls": list(tool_calls)}


def result(call_id: str, content: Any = "ok") -> dict[str, Any]:
    """The tool message answering ``call_id``; ``content`` that is not a string is sent as JSON."""
    text = content if isinstance(content, str) else json.dumps(content)
    return {"role": "tool", "tool_call_id": call_id, "content": text}


# --- as the official clients take them: the dicts go out as they are (the double, like the API, judges them)


def sent(messages: Sequence[dict[str, Any]]) -> list[ChatCompletionMessageParam]:
    """chat-completions messages as ``chat.completions.create(messages=...)`` takes them."""
    return cast("list[ChatCompletionMessageParam]", list(messages))


def sent_items(items: Sequence[dict[str, Any]]) -> ResponseInputParam:
    """Responses input items as ``responses.create(input=...)`` takes them."""
    return cast("ResponseInputParam", list(items))


def sent_messages(messages: Sequence[dict[str, Any]]) -> list[MessageParam]:
    """Anthropic messages as ``messages.create(messages=...)`` takes them."""
    return cast("list[MessageParam]", list(messages))
