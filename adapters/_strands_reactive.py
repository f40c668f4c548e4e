"""Strands' reactive path with the overflow coming from the provider (SPEC FIRE-5): the agent's model
class itself calls a context-window TEST DOUBLE on 127.0.0.1 that answers a request over the model's
window with that provider's real overflow answer (`conformance.overflow`), and what the model class
makes of it decides what happens next, as in ``Agent._execute_event_loop_cycle``: a
``ContextWindowOverflowException`` has the conversation manager reduce the history and the call
retried; any other error ends the agent's invocation (a crash: the model class did not recognise its
provider's overflow answer, strands-agents/harness-sdk#1528, #1712, #3718, #3969).

The agent's main call goes to its own double (`ModelEndpoint`, the model's window and answer), apart
from the suite's summarizer double, which the same model class reaches for the summaries the
manager asks for: the suite's faults and records stay the summarizer's alone.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import importlib
import inspect
from collections.abc import Callable
from typing import Any

from compaction_suite.conformance.overflow import UnboundedReduction

from ._model_double import ModelDouble

API = {"anthropic": "anthropic", "bedrock": "converse", "openai": "chat", "openai-responses": "responses", "ollama": "ollama", "mistral": "chat", "litellm": "chat"}
"""The wire API each ``model`` kind's class calls (`conformance.overflow.ANSWERS` names its answers)."""
DEFAULT_ANSWER = {"mistral": "mistral"}
"""A model kind whose provider's overflow answer is not its API's default: ``MistralModel`` calls
chat-completions, answered as Mistral's own API answers (`conformance.overflow.MISTRAL`)."""
ADAPTER = "adapter"
"""``overflow_answer="adapter"``: the adapter raises ``ContextWindowOverflowException`` itself (the path
as driven before FIRE-5; the session path still is)."""


def answer_option(kind: str, value: Any) -> str | None:
    """The ``overflow_answer`` option checked against the model's API: None (the API's default answer),
    one of its answers' names, or ``"adapter"``."""
    from compaction_suite.conformance import overflow

    if value is None or value == ADAPTER:
        return value
    overflow.chosen(API[kind], str(value))
    return str(value)


class ModelEndpoint(ModelDouble):
    """The agent model's own TEST DOUBLE (`ModelDouble`), with a context window of ``window`` tokens
    answered as ``answer`` says (the API's default when None)."""

    def __init__(self, kind: str, window: int, answer: str | None) -> None:
        self.api, self.answer = API[kind], answer or DEFAULT_ANSWER.get(kind)
        super().__init__(window, {self.api: self.answer} if self.answer else None)

    def outcome(self, since: int) -> str:
        """What the double did with the requests after the first ``since``: ``"over-window"`` when one
        was answered with the overflow, ``"rejected"`` when one broke a provider rule, else ``""``."""
        exchanges = self.server().exchanges[since:]
        if any(e.over_window is not None for e in exchanges):
            return "over-window"
        return "rejected" if any(e.rejected is not None for e in exchanges) else ""


def tool_specs(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tools an agent holding ``messages`` offers its model: one spec per tool its history calls
    (Bedrock rejects a history with tool blocks and no toolConfig, SPEC CORE-13)."""
    seen = sorted(
        {
            str(b["toolUse"].get("name"))
            for m in messages
            for b in m.get("content", [])
            if isinstance(b, dict) and isinstance(b.get("toolUse"), dict)
        }
    )
    return [
        {"name": name, "description": f"the history's tool {name}", "inputSchema": {"json": {"type": "object", "properties": {}}}}
        for name in seen
    ]


def call(model: Any, messages: list[dict[str, Any]], system_prompt: str | None) -> None:
    """One model call as the event loop makes it (``model.stream``, read to its end) in a fresh event
    loop of its own thread, or, on the 0.1 releases, their ``model.converse`` (read to its end); raises
    what the model class raises."""

    specs = tool_specs(messages) or None
    if hasattr(model, "converse"):  # the 0.1 releases: a synchronous ``converse(messages, tool_specs, system_prompt)``
        for _ in model.converse(copy.deepcopy(messages), specs, system_prompt):
            pass
        return

    async def drain() -> None:
        async for _ in model.stream(copy.deepcopy(messages), specs, system_prompt):
            pass

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, drain()).result()


class UnboundedRetry(UnboundedReduction):
    """The loop's end where ``Agent`` has none: every reduction left the request over the model's window
    and ``Agent._execute_event_loop_cycle`` calls ``reduce_context`` and the model again after each
    overflow, with no attempt bound and no check that anything shrank (strands-agents 1.0 to 1.62 at
    least), so the agent would go on calling until Python's recursion limit ends it."""


def unbounded(reductions: int, window: int | None) -> UnboundedRetry:
    """What `reactively` raises after ``reductions`` reductions in a row each followed by the overflow again
    (``window``: the model double's, None for a double without one, `ModelDouble`)."""
    said = f"the model's {window}-token window" if window is not None else "the model's window"
    return UnboundedRetry(
        f"the agent's call never came back: {reductions} reductions in a row each left the request over {said}, "
        "and Agent retries after every reduction without a bound (the next reduction and overflow would follow, until the recursion limit)"
    )


def reactively(agent: Any, main: Any, endpoint: ModelEndpoint, reduce: Callable[[Exception], bool]) -> None:
    """``Agent``'s reactive loop: call ``main`` (the agent's model class on ``endpoint``) with the agent's
    messages; on ``ContextWindowOverflowException`` ``reduce(error)`` (the manager's reduction: False when
    it asked for no retry or changed nothing) and call again. Another error is the agent's crash, re-raised,
    unless the double refused the request for a provider rule (what the history then breaks is the
    suite's to judge on the output, never hidden by this loop). More reductions than the history has
    messages, each followed by the overflow again, end in `UnboundedRetry`: ``Agent`` would not stop."""
    from strands.types.exceptions import ContextWindowOverflowException

    attempts = len(agent.messages) + 2
    for _ in range(attempts):
        since = len(endpoint.server().exchanges)
        try:
            call(main, agent.messages, agent.system_prompt)
            return
        except ContextWindowOverflowException as error:
            if not reduce(error):
                return
        except Exception as error:
            if endpoint.outcome(since) == "rejected":
                return
            if not reduce(error):
                raise
    raise unbounded(attempts, endpoint.window_tokens)


def subject(method: Callable[..., Any], agent: Any) -> Any:
    """What a conversation manager's ``apply_management`` or ``reduce_context`` takes: the ``agent`` (Strands
    0.1.9 on) or, where its first parameter is ``messages`` (the 0.1 releases before, whose ``Agent`` calls
    ``apply_management(self.messages)`` and ``reduce_context(self.messages, e=e)``), the agent's ``messages``."""
    first = next(iter(inspect.signature(method).parameters), None)
    return agent.messages if first == "messages" else agent


def reduced_by(manager: Any, agent: Any) -> Callable[[Exception], bool]:
    """What ``Agent`` does after its model's overflow, for `reactively`, on an overflow only (the event
    loop reduces after nothing else): True when it retries. From 0.1.8 that is the conversation
    manager's ``reduce_context(agent, e=error)``, retried when it changed the history; before it, the
    event loop's own reduction first (`event_loop_reduction`)."""
    from strands.types.exceptions import ContextWindowOverflowException

    def reduce(error: Exception) -> bool:
        if not isinstance(error, ContextWindowOverflowException):
            return False
        before = copy.deepcopy(agent.messages)
        manager.reduce_context(subject(manager.reduce_context, agent), e=error)
        return bool(agent.messages != before)

    first = event_loop_reduction(agent)
    return reduce if first is None else (lambda error: first(error) or reduce(error))


def event_loop_reduction(agent: Any) -> Callable[[Exception], bool] | None:
    """The event loop's own reduction of Strands 0.1.0 to 0.1.7 (None from 0.1.8, which has none): on
    an overflow ``handle_input_too_long_error`` (``strands/event_loop/error_handler.py``) replaces the
    tool results of the newest message holding any with "The tool result was too large!"
    (``message_processor.truncate_tool_results``) and calls the event loop again, whether or not that
    changed anything; only a history with no tool result reaches the manager's ``reduce_context``.
    True when it truncated (the loop retries), False when there was nothing to truncate."""
    from strands.types.exceptions import ContextWindowOverflowException

    try:  # modules of the 0.1 releases only
        error_handler = importlib.import_module("strands.event_loop.error_handler")
        message_processor = importlib.import_module("strands.event_loop.message_processor")
    except ImportError:
        return None
    if not hasattr(error_handler, "handle_input_too_long_error"):
        return None

    def truncate(error: Exception) -> bool:
        index = message_processor.find_last_message_with_tool_results(agent.messages)
        if not isinstance(error, ContextWindowOverflowException) or index is None:
            return False
        message_processor.truncate_tool_results(agent.messages, index)
        return True

    return truncate


def retried_by(agent: Any, events: Any, run_async: Any) -> Callable[[Exception], bool]:
    """The context manager's path for `reactively` (Strands >= 1.55): ``AfterModelCallEvent(exception=error)``
    through the agent's hooks, as the event loop fires it after a failed model call; True when a hook
    asked for a retry."""

    def retry(error: Exception) -> bool:
        event = events.AfterModelCallEvent(agent=agent, exception=error)
        run_async(lambda: agent.hooks.invoke_callbacks_async(event))
        return bool(event.retry)

    return retry
