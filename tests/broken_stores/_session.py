"""A small stored session (profile ``session``, SPEC STORE-13..15) that keeps the rules, for the
broken sessions to break one each: chat-completions messages in a JSON file, written whole to a
temporary file and renamed over the old one; a compaction summarizes everything through the suite's
summarizer into one ``[Context Summary]`` user message, holding the session's lock across the
request so an append waits for it. Its removals (``pop`` the newest message, ``remove`` one by
position, ``clear``: STORE-18, STORE-19) rewrite the file under the same lock."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any, ClassVar

SUMMARY = "[Context Summary]"


class JsonSession:
    def __init__(self, settings: Any, path: str) -> None:
        self.settings, self.path = settings, path
        self.lock = asyncio.Lock()

    def read(self) -> list[dict[str, Any]]:
        if not os.path.exists(self.path):
            return []
        with open(self.path, encoding="utf-8") as file:
            return list(json.load(file))

    def write(self, messages: list[dict[str, Any]]) -> None:
        partial = f"{self.path}.tmp"
        with open(partial, "w", encoding="utf-8") as file:
            json.dump(messages, file)
        os.replace(partial, self.path)

    async def append(self, messages: list[dict[str, Any]]) -> None:
        async with self.lock:
            self.write(self.read() + messages)

    async def load(self) -> list[dict[str, Any]]:
        return self.read()

    async def pop(self) -> dict[str, Any] | None:
        async with self.lock:
            messages = self.read()
            if not messages:
                return None
            popped = messages.pop()
            self.write(messages)
            return popped

    async def remove(self, index: int) -> None:
        async with self.lock:
            messages = self.read()
            del messages[index]
            self.write(messages)

    async def clear(self) -> None:
        async with self.lock:
            self.write([])

    async def summary(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        from openai import AsyncOpenAI

        client = AsyncOpenAI(base_url=self.settings.base_url, api_key=self.settings.api_key, timeout=self.settings.summarizer_timeout, max_retries=0)
        try:
            transcript = "\n".join(f"{m.get('role')}: {m.get('content')}" for m in messages)
            answer = await client.chat.completions.create(model=self.settings.model, messages=[{"role": "user", "content": f"Summarize:\n{transcript}"}])
        finally:
            await client.close()
        return {"role": "user", "content": f"{SUMMARY}\n{answer.choices[0].message.content}"}

    async def compact(self) -> None:
        async with self.lock:
            self.write([await self.summary(self.read())])


class Target:
    """The target: claims only ``session``; ``compact`` is never called for it."""

    profiles = frozenset({"session"})
    capabilities: ClassVar[dict[str, Any]] = {"session_removes": ["pop", "remove", "clear"]}

    def __init__(self, settings: Any, session: type[JsonSession]) -> None:
        self.settings, self.kind = settings, session

    def compact(self, messages: list[dict[str, Any]], *, iteration: int) -> list[dict[str, Any]]:
        return messages

    def session(self, path: str) -> JsonSession:
        return self.kind(self.settings, path)


def factory(settings: Any) -> Target:
    """The session that keeps the rules (tests/test_session_removals.py: STORE-18 and STORE-19 pass on it)."""
    return Target(settings, JsonSession)
