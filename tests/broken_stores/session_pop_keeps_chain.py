"""A session that compacts the conversation its model last answered, as a server stored it, not
what the session holds: a message the user popped since comes back with the compaction
(openai/openai-agents-python#4867: ``pop_item`` kept the response id, and the next compaction by
``previous_response_id`` compacted the stored chain)."""

from __future__ import annotations

from typing import Any

from ._session import JsonSession, Target

EXPECTED = "STORE-18"
REASON = r"after the next compaction the session holds them again"
PROFILES = ("session",)


class ChainKept(JsonSession):
    chain: list[dict[str, Any]] | None = None
    """The conversation as the model last answered it (stored when an append ends with its answer)."""

    async def append(self, messages: list[dict[str, Any]]) -> None:
        await super().append(messages)
        if messages and messages[-1].get("role") == "assistant":
            self.chain = self.read()

    async def compact(self) -> None:
        async with self.lock:
            chain = self.chain if self.chain is not None else self.read()
            summary = await self.summary(chain)
            self.write([m for m in chain if m.get("role") == "user"] + [summary])  # the compact endpoint keeps the user messages


def factory(settings):
    return Target(settings, ChainKept)
