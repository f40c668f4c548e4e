"""OpenAI Agents SDK: ``OpenAIResponsesCompactionSession``, a compactor of Responses input items.

What the SDK ships (checked in the installed sources, ``openai-agents`` 0.24):
``agents.memory.OpenAIResponsesCompactionSession`` wraps any ``Session`` (the store of a
conversation's Responses input items) and, when its decision hook says so (default: 10 or more
*candidate* items, i.e. items that are neither user messages nor ``compaction`` items), sends the
stored items to OpenAI's ``/v1/responses/compact`` endpoint and replaces the stored history with
what it returns (a ``compaction`` item with the kept user messages). It normalizes what it sends
and what it stores (SDK-only keys out; an assistant message ``id`` dropped when no reasoning item
is left to pair with it).

How the SDK's ``Runner`` calls it (``run_internal/session_persistence.py``): after it saves a
model response to the session. When that save carries local tool outputs, the session only
*defers* (marks that a compaction is owed); the compaction runs after the next response without
local tool outputs, i.e. at the end of a turn. So the session never compacts while a local tool
output is pending (the fix users asked for after the SDK compacted a round away mid-turn).
``tests/test_adapter_format_loops.py`` shows it with the SDK's own ``Runner`` and ``ScriptedModel``.

Target::

    compaction-suite check compaction_suite.adapters.openai_agents:responses_compaction

``compact(items)`` stores the items in the SDK's ``SQLiteSession`` (in memory), wraps it in
``OpenAIResponsesCompactionSession`` with an ``AsyncOpenAI`` on the suite's summarizer test double
(its ``/v1/responses/compact`` endpoint), calls ``run_compaction({"response_id": ...})`` as the
Runner does, and returns the session's items. Mode ``input`` (the SDK's mode when a response is
not stored): in ``previous_response_id`` mode the history that is compacted is the one stored on
OpenAI's servers, which no offline double holds. The Runner's automatic call additionally matches
the stored suffix against the last model exchange and skips a history with pending calls; for a
complete history it compacts the same items, which the loop test checks (same request to the
compact endpoint, same history after).

Declared capabilities: ``wire_format: responses``; ``called: between_rounds`` (deferred while
local tool outputs are pending, shown by the loop test); ``system_prompt: outside`` (the agent's
``instructions`` go to the model as ``instructions``, never into the session's items).

Profiles: ``core`` only: the trigger is an item count (not an iteration: not ``trigger``); the
summary is the provider's opaque ``compaction`` item, not a ``[Context Summary]`` message (not
``summary``); no events. An error of the compact endpoint propagates: in the SDK's own loop a
compact endpoint that keeps failing makes ``Runner.run`` raise after the model answered the turn
(a crash every user of the session meets when the endpoint is down; shown by
``test_openai_agents_failing_compact_endpoint_makes_the_run_raise_after_its_answer``).
"""

from __future__ import annotations

import itertools
from typing import Any

from ._common import make, options, requires
from ._native import declared, double_refuses

FRAMEWORK = "OpenAI Agents SDK"
DISTRIBUTIONS = ("openai-agents",)
EXTRA = "openai-agents"
COMPACT_MODEL = "gpt-4.1"
"""The SDK accepts only OpenAI model names here; the suite's double answers any name."""

DEFAULTS: dict[str, dict[str, Any]] = {"responses_compaction": {"threshold": 10}}
WHY = {
    "responses_compaction": (
        "core only: item-count trigger (no iteration trigger); the summary is the compact endpoint's opaque "
        "compaction item; endpoint errors propagate"
    ),
}
CONFIGURATIONS: list[tuple[str, dict[str, Any]]] = [
    ("responses_compaction", {"threshold": 4}),
    ("responses_compaction", {"threshold": 10}),
]
"""What ``compaction-suite matrix`` runs: histories as the SDK's sessions store them."""
NOT_ADAPTED = (
    "previous_response_id mode (the history compacted is the one stored on OpenAI's servers); "
    "OpenAIConversationsSession (server-side history, never compacted locally)"
)

_ids = itertools.count(1)


def __getattr__(name: str) -> Any:
    """``UNAVAILABLE`` (read by ``compaction-suite matrix``), computed when asked."""
    if name == "UNAVAILABLE":
        return double_refuses("/responses/compact", {"model": COMPACT_MODEL, "input": [{"type": "message", "role": "user", "content": "hi"}]})
    raise AttributeError(name)


def responses_compaction(settings: Any, **given: Any) -> Any:
    """``OpenAIResponsesCompactionSession`` over an in-memory ``SQLiteSession``, compacting through
    the suite's summarizer (``/v1/responses/compact``) when ``threshold`` candidate items are stored."""
    o = options(DEFAULTS["responses_compaction"], given)
    memory = requires("agents.memory", EXTRA)
    openai = requires("openai", EXTRA)
    threshold = int(o["threshold"])

    def should_compact(context: dict[str, Any]) -> bool:
        return len(context["compaction_candidate_items"]) >= threshold

    async def run(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        n = next(_ids)
        client = openai.AsyncOpenAI(base_url=settings.base_url, api_key=settings.api_key, timeout=settings.summarizer_timeout, max_retries=0)
        store = memory.SQLiteSession(f"compaction-suite-{n}")
        try:
            await store.add_items(items)
            session = memory.OpenAIResponsesCompactionSession(
                f"compaction-suite-{n}", store, client=client, model=COMPACT_MODEL,
                compaction_mode="input", should_trigger_compaction=should_compact,
            )  # fmt: skip
            await session.run_compaction({"response_id": f"resp_compaction_suite_{n}", "store": False})
            return list(await session.get_items())
        finally:
            store.close()
            await client.close()

    capabilities = declared("responses", system_prompt="outside")
    return make("openai_agents.OpenAIResponsesCompactionSession", {"core"}, run, declared=capabilities, is_async=True)
