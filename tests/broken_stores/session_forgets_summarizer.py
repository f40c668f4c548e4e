"""A session whose summarizer is not part of what it stores: reopened from its file, it cannot compact
(what a restore that rebuilds the compactor without its summarizer gives, microsoft/semantic-kernel#12513:
``ChatHistorySummarizationReducer.restore_chat_history`` validates the service as the abstract base)."""

from __future__ import annotations

import os
from typing import Any

from ._session import JsonSession, Target

EXPECTED = "STORE-20"
REASON = r"raised on its next compaction \(NotImplementedError"
PROFILES = ("session",)


class ForgetsSummarizer(JsonSession):
    def __init__(self, settings: Any, path: str) -> None:
        super().__init__(settings, path)
        self.restored = os.path.exists(path)

    async def summary(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        if self.restored:
            raise NotImplementedError("the restored session has no summarizer")
        return await super().summary(messages)


def factory(settings):
    return Target(settings, ForgetsSummarizer)
