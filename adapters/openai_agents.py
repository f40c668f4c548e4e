"""OpenAI Agents SDK: ``OpenAIResponsesCompactionSession``, a compactor of Responses input items.

Target (research and declarations in ``adapters/README.md``)::

    compaction-suite check compaction_suite.adapters.openai_agents:responses_compaction

``compact(items)`` stores the items in the SDK's ``SQLiteSession`` (in memory; ``session_limit`` sets its
documented read limit), wraps it in ``OpenAIResponsesCompactionSession`` with an ``AsyncOpenAI`` on the
suite's summarizer test double (``/v1/responses/compact``), calls ``run_compaction`` as the ``Runner``
does after a model response, in ``input`` mode, and returns every stored item. The ``Runner``'s other
path, compaction through ``previous_response_id`` (the chain the server stored), needs a server that keeps
chains: ``tests/test_openai_agents_paths.py`` drives it with a stand-in; the suite's double keeps none.
Declarations proven by ``tests/test_adapter_format_loops.py`` and ``tests/test_openai_agents_paths.py``.
"""

from __future__ import annotations

import inspect
import itertools
from typing import Any

from ._common import CannotDrive, factory, make, options, requires
from ._native import declared, double_refuses

FRAMEWORK = "OpenAI Agents SDK"
SUPPORTED: dict[str, str] = {"openai-agents": ">=0.6.6,<0.25"}
"""Agreed interface 3: from 0.6.6, where ``OpenAIResponsesCompactionSession`` arrived. Its ``input`` mode
(what an offline check drives) arrived in 0.6.9; at 0.6.6-0.6.8 the session compacts only by
``previous_response_id``, which the suite's double cannot answer (it keeps no response chains), so
``responses_compaction`` is a contract error there (`CannotDrive`)."""

DOCUMENTED: list[dict[str, Any]] = []
"""Agreed interface 4: the SDK documents no compaction failure behaviour (a compact endpoint error
propagates out of ``Runner.run``, undocumented)."""
DISTRIBUTIONS = ("openai-agents",)
EXTRA = "openai-agents"
COMPACT_MODEL = "gpt-4.1"
"""The SDK accepts only OpenAI model names here; the suite's double answers any name."""

DEFAULTS: dict[str, dict[str, Any]] = {"responses_compaction": {"threshold": 10, "session_limit": None}, "responses_session": {"threshold": 4}}
"""``session_limit``: the underlying session's ``SessionSettings(limit=...)`` (how many items its reads
return), a documented session setting the compaction session reads its candidates through."""
WHY = {
    "responses_compaction": (
        "core only: item-count trigger (no iteration trigger); the summary is the compact endpoint's opaque "
        "compaction item; endpoint errors propagate; session_limit: the underlying session's read limit"
    ),
    "responses_session": (
        "session only: OpenAIResponsesCompactionSession over a file SQLiteSession, its stored history under a refused "
        "write (STORE-13), appends while responses.compact is in flight (STORE-14) and reopening (STORE-15)"
    ),
}
CONFIGURATIONS: list[tuple[str, dict[str, Any]]] = [
    ("responses_compaction", {"threshold": 4}),
    ("responses_compaction", {"threshold": 10}),
    ("responses_compaction", {"threshold": 4, "session_limit": 8}),
    ("responses_session", {"threshold": 4}),
]
"""What ``compaction-suite matrix`` runs: histories as the SDK's sessions store them."""
NOT_ADAPTED = (
    "previous_response_id compaction in the check (the suite's summarizer double keeps no response chains; the "
    "Runner's previous_response_id path is proven with a stand-in in tests/test_openai_agents_paths.py); "
    "OpenAIConversationsSession (server-side history, never compacted locally)"
)

_ids = itertools.count(1)


def __getattr__(name: str) -> Any:
    """``UNAVAILABLE`` (read by ``compaction-suite matrix``), computed when asked."""
    if name == "UNAVAILABLE":
        return double_refuses("/responses/compact", {"model": COMPACT_MODEL, "input": [{"type": "message", "role": "user", "content": "hi"}]})
    raise AttributeError(name)


@factory
def responses_compaction(settings: Any, **given: Any) -> Any:
    """``OpenAIResponsesCompactionSession`` over an in-memory ``SQLiteSession``, compacting through
    the suite's summarizer (``/v1/responses/compact``) when ``threshold`` candidate items are stored."""
    o = options(DEFAULTS["responses_compaction"], given)
    memory = requires("agents.memory", EXTRA)
    openai = requires("openai", EXTRA)
    threshold = int(o["threshold"])
    parameters = inspect.signature(memory.OpenAIResponsesCompactionSession.__init__).parameters
    if "compaction_mode" not in parameters:
        raise CannotDrive("openai_agents:responses_compaction", "openai-agents", "OpenAIResponsesCompactionSession has no compaction_mode='input' before 0.6.9")
    if o["session_limit"] is not None and not hasattr(memory, "SessionSettings"):
        raise CannotDrive("openai_agents:responses_compaction", "openai-agents", "SessionSettings (session_limit) is missing")

    def should_compact(context: dict[str, Any]) -> bool:
        return len(context["compaction_candidate_items"]) >= threshold

    async def run(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        n = next(_ids)
        client = openai.AsyncOpenAI(base_url=settings.base_url, api_key=settings.api_key, timeout=settings.summarizer_timeout, max_retries=0)
        limit = o["session_limit"]
        extra = {"session_settings": memory.SessionSettings(limit=int(limit))} if limit is not None else {}
        store = memory.SQLiteSession(f"compaction-suite-{n}", **extra)
        try:
            await store.add_items(items)
            session = memory.OpenAIResponsesCompactionSession(
                f"compaction-suite-{n}", store, client=client, model=COMPACT_MODEL,
                compaction_mode="input", should_trigger_compaction=should_compact,
            )  # fmt: skip
            await session.run_compaction({"response_id": f"resp_compaction_suite_{n}", "store": False})
            return list(await store.get_items(limit=10**9) if limit is not None else await session.get_items())  # every stored item, past the read limit
        finally:
            store.close()
            await client.close()

    capabilities: dict[str, Any] = {**declared("responses", system_prompt="outside"), "trigger": {"messages": threshold}}  # candidate items <= items
    return make("openai_agents.OpenAIResponsesCompactionSession", {"core"}, run, declared=capabilities, is_async=True)


class _Session:
    """The SDK's stored session as a user builds it (profile ``session``, SPEC STORE-13..15): a file
    ``SQLiteSession`` at ``path`` under ``OpenAIResponsesCompactionSession``, compacting in ``input``
    mode through the suite's ``/v1/responses/compact``. ``append`` is the session's ``add_items`` (what
    ``Runner`` writes), ``load`` its ``get_items`` (what ``Runner`` gives the model), ``compact`` its
    ``run_compaction`` after a response, as ``Runner`` calls it."""

    def __init__(self, memory: Any, openai: Any, settings: Any, path: str, threshold: int) -> None:
        self._client = openai.AsyncOpenAI(base_url=settings.base_url, api_key=settings.api_key, timeout=settings.summarizer_timeout, max_retries=0)
        self._store = memory.SQLiteSession("compaction-suite", path)
        self._session = memory.OpenAIResponsesCompactionSession(
            "compaction-suite", self._store, client=self._client, model=COMPACT_MODEL, compaction_mode="input",
            should_trigger_compaction=lambda context: len(context["compaction_candidate_items"]) >= threshold,
        )  # fmt: skip
        self._closed = False

    async def append(self, items: list[dict[str, Any]]) -> None:
        await self._session.add_items(items)

    async def load(self) -> list[Any]:
        return list(await self._session.get_items())

    async def compact(self) -> None:
        await self._session.run_compaction({"response_id": f"resp_compaction_suite_{next(_ids)}", "store": False})

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._store.close()
            await self._client.close()


@factory
def responses_session(settings: Any, **given: Any) -> Any:
    """``OpenAIResponsesCompactionSession`` over a file ``SQLiteSession`` (`_Session`): ``session(path)``
    for profile ``session``; ``compact`` is `responses_compaction`'s (the profile's tests do not call it)."""
    o = options(DEFAULTS["responses_session"], given)
    memory = requires("agents.memory", EXTRA)
    openai = requires("openai", EXTRA)
    threshold = int(o["threshold"])
    compactor = responses_compaction(settings, threshold=threshold)
    compactor.profiles = frozenset({"session"})
    compactor.session = lambda path: _Session(memory, openai, settings, path, threshold)
    return compactor
