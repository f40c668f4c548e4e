"""A declared trigger: when a target's framework says it compacts, and how the suite counts a
history against it (SPEC Part A, "Declarations", ``capabilities["trigger"]``; FIRE-1, FIRE-2).

``{"messages": N}``: the framework compacts once the list it compacts holds more than ``N`` items
(chat-completions messages, Responses items, Anthropic messages). ``{"tokens": N}``: once that list
holds more than ``N`` tokens by the framework's own count, which the declaration names with
``"tokenizer"``: ``"chars/4"`` (the default: a quarter of the characters read, SPEC TOK-1),
``"o200k_base"`` or ``"cl100k_base"`` (exact BPE counts, TOK-2). ``"never"``: the framework
documents the configuration as never compacting (LangChain 1.0's ``max_tokens_before_summary=None``,
"summarization is disabled"), so every history is left as it is (SPEC FIRE-6).

The suite counts text (no per-message framing) and each image or file as its provider counts it
(`conformance.media`: an image is a few hundred tokens, never its base64 as text; SPEC FIRE-2
Decision: media), and, where the bound is a floor (FIRE-1),
without the system prompt; where it is a ceiling (FIRE-2), with it: what a framework adds to the
count (role framing, a JSON serialization's keys, a system prompt it counts or not) can then only
make FIRE-1's history larger and is bounded in FIRE-2's by its few items.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compaction_suite.message import SYSTEM_ROLES
from compaction_suite.text import ENCODINGS, count_tokens, message_text

from . import formats, media
from .summarizer_apis import anthropic_messages, responses_messages

KINDS = ("messages", "tokens")
"""What a trigger counts."""
TOKENIZERS = ("chars/4", *ENCODINGS)
"""How a token trigger counts (default first)."""
KEY = "trigger"
NEVER = "never"
"""The declaration of a configuration its framework documents as never compacting (SPEC FIRE-6)."""
PAST = 2
"""FIRE-1: a history well past the trigger holds at least this many times it (SPEC FIRE-1 Decision)."""
FRAMING = 100
"""FIRE-2: a history well below a token trigger of N holds at most max(4, N / FRAMING) items, so what a
framework adds to each item's text in its count (role framing, a JSON serialization's keys: Agent
Framework's is 20-40 tokens) stays within the half the history leaves free (SPEC FIRE-2 Decision)."""


class TriggerError(ValueError):
    """A ``capabilities["trigger"]`` the suite cannot read."""


@dataclass(frozen=True)
class Trigger:
    """The framework compacts once the list it compacts holds more than ``limit`` ``kind``."""

    kind: str
    limit: int
    tokenizer: str = TOKENIZERS[0]

    def size(self, fmt: formats.WireFormat, history: Any, *, system: bool) -> int:
        """``history``'s size as this trigger counts it (items, or tokens of the text read), the
        system prompt counted when ``system``."""
        if self.kind == "messages":
            items = fmt.items(history)
            return len(items) if system else sum(fmt.role(i) not in SYSTEM_ROLES for i in items)
        messages = _chat_like(fmt, history)
        texts = [t for m in messages if system or m.get("role") not in SYSTEM_ROLES for t in message_text(m)]
        counted = sum(map(len, texts)) // 4 if self.tokenizer == "chars/4" else sum(map(self.count, texts))
        return counted + media.tokens(history, "anthropic" if fmt.name == formats.ANTHROPIC else "openai")

    def count(self, text: str) -> int:
        """The tokens of one text by this trigger's tokenizer."""
        return len(text) // 4 if self.tokenizer == "chars/4" else count_tokens(text, self.tokenizer)

    def most_items_below(self) -> int:
        """The most items a history well below this trigger holds (SPEC FIRE-2 Decision)."""
        return self.limit // 2 if self.kind == "messages" else max(4, self.limit // FRAMING)

    def well_past(self, fmt: formats.WireFormat, history: Any) -> bool:
        """At least `PAST` times the trigger, the system prompt aside (SPEC FIRE-1)."""
        return self.size(fmt, history, system=False) >= PAST * self.limit

    def well_below(self, fmt: formats.WireFormat, history: Any) -> bool:
        """At most half the trigger, the system prompt included, in at most `most_items_below` items (SPEC FIRE-2)."""
        return self.size(fmt, history, system=True) <= self.limit // 2 and fmt.length(history) <= self.most_items_below()

    def as_dict(self) -> dict[str, Any]:
        said: dict[str, Any] = {self.kind: self.limit}
        if self.kind == "tokens" and self.tokenizer != TOKENIZERS[0]:
            said["tokenizer"] = self.tokenizer
        return said

    def __str__(self) -> str:
        return f"{self.limit} {self.kind}" + (f" ({self.tokenizer})" if self.kind == "tokens" else "")


def _chat_like(fmt: formats.WireFormat, history: Any) -> list[dict[str, Any]]:
    """The history as chat-like messages (one per item), the text each reads."""
    if fmt.name == formats.RESPONSES:
        return responses_messages({"input": history if isinstance(history, list) else []})
    if fmt.name == formats.ANTHROPIC:
        return anthropic_messages(history if isinstance(history, Mapping) else {})
    return [m for m in history if isinstance(m, dict)] if isinstance(history, list) else []


def parse(raw: Any) -> Trigger | None:
    """The declared trigger, None when none is declared or it is `NEVER` (`never`); raises `TriggerError`
    on anything else than ``{"messages": N}`` or ``{"tokens": N}`` (with an optional ``"tokenizer"``),
    N a positive int, or `NEVER`."""
    if raw is None or raw == NEVER:
        return None
    expected = f"expected {{'messages': N}} or {{'tokens': N[, 'tokenizer': {' | '.join(map(repr, TOKENIZERS))}]}}, N a positive integer, or {NEVER!r}"
    if not isinstance(raw, Mapping):
        raise TriggerError(f"capabilities[{KEY!r}] is {raw!r}; {expected}")
    kinds = [k for k in KINDS if k in raw]
    unknown = sorted(set(raw) - {*KINDS, "tokenizer"})
    if len(kinds) != 1 or unknown or ("tokenizer" in raw and kinds != ["tokens"]):
        raise TriggerError(f"capabilities[{KEY!r}] is {dict(raw)!r}; {expected}")
    limit = raw[kinds[0]]
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise TriggerError(f"capabilities[{KEY!r}][{kinds[0]!r}] is {limit!r}; {expected}")
    tokenizer = raw.get("tokenizer", TOKENIZERS[0])
    if tokenizer not in TOKENIZERS:
        raise TriggerError(f"capabilities[{KEY!r}]['tokenizer'] is {tokenizer!r}; expected one of {', '.join(TOKENIZERS)}")
    return Trigger(kinds[0], limit, tokenizer)


def never(raw: Any) -> bool:
    """Whether the declaration says the configuration never compacts (SPEC FIRE-6)."""
    return isinstance(raw, str) and raw == NEVER
