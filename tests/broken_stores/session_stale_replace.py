"""A compaction that reads the session, asks its summarizer without holding the session, and then
replaces the session with the summary of what it read (openai-agents-python#4679's order)."""

from __future__ import annotations

from ._session import JsonSession, Target

EXPECTED = "STORE-14"
REASON = r"appended while the compaction was in flight are not in the session"
PROFILES = ("session",)


class StaleReplace(JsonSession):
    async def compact(self) -> None:
        summary = await self.summary(self.read())
        async with self.lock:
            self.write([summary])


def factory(settings):
    return Target(settings, StaleReplace)
