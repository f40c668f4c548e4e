"""The one message type every package shares: reference, verifier, benchmarks, adapters (SPEC HIST-*)."""

from __future__ import annotations

from typing import Any, TypeAlias

SYSTEM_ROLES: frozenset[str] = frozenset({"system", "developer"})
"""The roles of the instructions a compaction keeps first (SPEC CORE-3): ``developer`` is the
system role of OpenAI's newer models, in chat-completions and Responses alike."""

Message: TypeAlias = dict[str, Any]
"""An OpenAI chat-completions message, as the plain dict the API takes.

Its shapes are the API's (``openai.types.chat.ChatCompletionMessageParam`` spells them
as TypedDicts), but the type promises no more than a JSON object: histories come from
anywhere (traces, adapters, generated tests, a user's agent), and what the API would
reject is found at run time, where the reference names the message index and the rule
it breaks (HIST-*), not assumed away by a static type.
"""
