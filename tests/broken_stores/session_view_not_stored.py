"""A compaction kept in memory only: the session gives the summary until it is reopened, then the
old history (what a restore that ignores the compaction's state gives, strands-agents/harness-sdk#4027)."""

from __future__ import annotations

from typing import Any

from ._session import JsonSession, Target

EXPECTED = "STORE-15"
REASON = r"reopened session gives other history"
PROFILES = ("session",)


class ViewNotStored(JsonSession):
    view: list[dict[str, Any]] | None = None

    async def load(self) -> list[dict[str, Any]]:
        return self.view if self.view is not None else self.read()

    async def compact(self) -> None:
        async with self.lock:
            self.view = [await self.summary(self.read())]


def factory(settings):
    return Target(settings, ViewNotStored)
