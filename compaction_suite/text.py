"""What a model reads in a chat-completions message, and how big that is (SPEC TOK-1, TOK-2).

One source for these facts, shared by the reference compactor (``reference/tokens.py``)
and by the verifier's oracle and the summarizer test double (``conformance/``), which
must not depend on the reference they check.

Exact counts come from quicktok (package ``quicktok-v1``), which ships the o200k_base
and cl100k_base ranks and encodes exactly as tiktoken does (the tests compare the two on
generated and real text), several times faster (``benchmarks/results/estimators.md``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import quicktok

PER_MESSAGE = 3
"""Tokens framing each message, as OpenAI documents for gpt-4o and gpt-4 (TOK-2)."""
PER_NAME = 1
"""Extra token for a message with a ``name`` (TOK-2)."""
REPLY_PRIMING = 3
"""Tokens priming the reply, once per history (TOK-2)."""
SUMMARY_PREFIX = "[Context Summary]"
"""How a summary message's text starts: a ``user`` message beginning so is the summary (SPEC SUM-2)."""
ENCODINGS = ("o200k_base", "cl100k_base")
"""The encodings counted exactly (TOK-2)."""


def message_text(message: Mapping[str, Any]) -> list[str]:
    """The pieces of text the model reads in ``message`` (SPEC TOK-1).

    ``content`` when a string, else the ``text`` (or ``refusal``) of each of its
    parts; ``refusal``; ``name``; each tool call's function name and arguments.
    Image, audio and file parts give nothing: they are not text, and their cost
    is not a function of characters, so every estimate undercounts them.
    Anything malformed (a part that is not a mapping, a text that is not a string)
    gives nothing either: judging malformed messages is the validator's job.
    """
    content = message.get("content")
    texts = [content] if isinstance(content, str) else _part_texts(content)
    if "refusal" in message and isinstance(message["refusal"], str):  # `in` first: most messages have neither key
        texts.append(message["refusal"])
    if "name" in message and isinstance(message["name"], str):
        texts.append(message["name"])
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        texts += _call_texts(calls)
    return texts


def _call_texts(calls: list[Any]) -> list[str]:
    """The function name and arguments of each tool call, where they are strings.

    Written out rather than as a comprehension: every message of a history passes
    through here when a compactor first counts it (`benchmarks/results/speed.md`)."""
    texts: list[str] = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            name, arguments = function.get("name"), function.get("arguments")
            if isinstance(name, str):
                texts.append(name)
            if isinstance(arguments, str):
                texts.append(arguments)
    return texts


def _part_texts(content: Any) -> list[str]:
    """The ``text`` of text parts and the ``refusal`` of refusal parts (an assistant's content may hold both)."""
    parts = content if isinstance(content, list) else ()
    found = (part.get(part.get("type")) for part in parts if isinstance(part, dict) and part.get("type") in ("text", "refusal"))
    return [text for text in found if isinstance(text, str)]


def characters(message: Mapping[str, Any]) -> int:
    """Characters (Python ``str`` code points) of the text the model reads in ``message`` (TOK-1)."""
    return sum(map(len, message_text(message)))


def chars_per_four(messages: Sequence[Mapping[str, Any]]) -> int:
    """Seed 000's estimate: the floor of a quarter of the characters read (SPEC TOK-1)."""
    return sum(map(characters, messages)) // 4


@functools.cache
def encoding(name: str) -> quicktok.Tokenizer:
    """The exact BPE encoding ``name`` (one of `ENCODINGS`), loaded offline from quicktok's data."""
    if name not in ENCODINGS:
        raise ValueError(f"unknown encoding {name!r}; expected one of {', '.join(ENCODINGS)}")
    return quicktok.get_encoding(name)


def count_tokens(text: str, encoding_name: str = "o200k_base") -> int:
    """Exact tokens of ``text``, special-token strings such as ``<|endoftext|>`` read as plain text (TOK-2)."""
    return encoding(encoding_name).count(text)


def message_tokens(message: Mapping[str, Any], tokens: Callable[[str], int] = count_tokens) -> int:
    """One message's tokens in a prompt: framing, role, text, and a name's extra token (TOK-2).

    ``tokens`` counts a text (default: `count_tokens`, o200k_base)."""
    overhead = PER_MESSAGE + (PER_NAME if isinstance(message.get("name"), str) else 0)
    return overhead + tokens(str(message.get("role", ""))) + sum(map(tokens, message_text(message)))


def prompt_tokens(messages: Sequence[Mapping[str, Any]], tokens: Callable[[str], int] = count_tokens) -> int:
    """A history's prompt tokens: its messages plus the reply priming, 0 when empty (TOK-2)."""
    if not messages:
        return 0
    return sum(message_tokens(message, tokens) for message in messages) + REPLY_PRIMING
