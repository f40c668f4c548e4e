"""pydantic-ai's ``history_processors``, run in its ``Agent`` loop, and what the run hands back to store
(SPEC STORE-22; ``adapters/README.md``, Pydantic AI).

The history's last user turn is replayed as one ``Agent.run``: its prompt is the run's ``user_prompt``,
everything before it the ``message_history`` (the leading system prompts the agent's ``system_prompt``
when nothing before the turn was said), the model a ``FunctionModel`` answering each request with the
turn's next assistant message, the tools answering each call with the history's result for it. The
agent has one history processor, the documented "keep only recent messages" pattern made pair-safe
(`keep_recent`): past ``max_messages`` it keeps the last ``keep_messages``, moved back so the kept
tail does not open on the results of calls it left out. It runs before every model request, so it
also prunes messages of the run itself. Standard library at import time.
"""

from __future__ import annotations

import inspect
from typing import Any

from ._common import requires
from .pydantic_ai import EXTRA


def keep_recent(pm: Any, max_messages: int, keep: int) -> Any:
    """The processor: past ``max_messages`` messages, the last ``keep`` of them, starting earlier when
    the first kept message is a request answering calls (its calls would be left out)."""

    def answers_calls(message: Any) -> bool:
        return isinstance(message, pm.ModelRequest) and any(isinstance(p, (pm.ToolReturnPart, pm.RetryPromptPart)) for p in message.parts)

    def process(messages: list[Any]) -> list[Any]:
        if len(messages) <= max_messages:
            return messages
        start = max(0, len(messages) - keep)
        while start > 0 and answers_calls(messages[start]):
            start -= 1
        return messages[start:]

    return process


def agent_with(pydantic_ai: Any, model: Any, processor: Any, tools: list[Any], system: list[str] | None) -> Any:
    """An ``Agent`` with the processor: ``history_processors=`` where the release takes it, else the
    ``ProcessHistory`` capability that replaced it."""
    accepted = inspect.signature(pydantic_ai.Agent).parameters
    options: dict[str, Any] = {"tools": tools, "system_prompt": system or ()}
    if "history_processors" in accepted:
        return pydantic_ai.Agent(model, history_processors=[processor], **options)
    capability = requires("pydantic_ai.capabilities", EXTRA).ProcessHistory
    return pydantic_ai.Agent(model, capabilities=[capability(processor)], **options)
