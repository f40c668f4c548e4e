"""A compaction that clears the stored session, then writes the summary (openai-agents-python#3116's order)."""

from __future__ import annotations

from ._session import JsonSession, Target

EXPECTED = "STORE-13"
REASON = r"refused the compaction's write and the reopened session lost history"
PROFILES = ("session",)


class ClearThenAdd(JsonSession):
    async def compact(self) -> None:
        async with self.lock:
            summary = await self.summary(self.read())
            self.write([])  # cleared, committed
            self.write([summary])  # refused: the session stays empty


def factory(settings):
    return Target(settings, ClearThenAdd)
