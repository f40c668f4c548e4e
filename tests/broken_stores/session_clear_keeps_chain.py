"""A session whose clear empties the store but not the conversation its model last answered, which
the next compaction compacts into the emptied session (openai/openai-agents-python#4864:
``clear_session`` kept the response id)."""

from __future__ import annotations

from ._session import Target
from .session_pop_keeps_chain import ChainKept

EXPECTED = "STORE-19"
REASON = r"the next compaction filled it with the old conversation"
PROFILES = ("session",)


def factory(settings):
    return Target(settings, ChainKept)
