"""How big a history is: two estimators and an incremental ledger (SPEC TOK-1, TOK-2, TOK-4).

Both estimators count the same text, the text the model reads (`message_text`).
`CharsPerFour` is seed 000's heuristic (TOK-1); `ExactTokens` counts tiktoken
tokens plus the chat format's overhead (TOK-2). An estimate is a sum over
messages passed through `Estimator.total`, so `TokenLedger` can keep the sum and
count only the messages added since it last looked (TOK-4).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol, cast

from .bpe import encoding
from .rounds import Message, extends

PER_MESSAGE = 3
"""Tokens framing each message, as OpenAI documents for gpt-4o and gpt-4 (TOK-2)."""
PER_NAME = 1
"""Extra token for a message with a ``name`` (TOK-2)."""
REPLY_PRIMING = 3
"""Tokens priming the reply, once per history (TOK-2)."""


def message_text(message: Message) -> Iterator[str]:
    """The pieces of text the model reads in ``message`` (SPEC TOK-1).

    ``content`` when a string, else the ``text`` (or ``refusal``) of each of its
    parts; ``refusal``; ``name``; each tool call's function name and arguments.
    Image, audio and file parts yield nothing: they are not text, and their cost
    is not a function of characters, so both estimators undercount them.
    """
    fields = cast(Mapping[str, Any], message)
    content = fields.get("content")
    if isinstance(content, str):
        yield content
    for part in content if isinstance(content, list) else []:
        kind = part.get("type")
        if kind in ("text", "refusal"):  # an assistant's content may hold refusal parts
            yield part[kind]
    for key in ("refusal", "name"):
        if isinstance(fields.get(key), str):
            yield fields[key]
    for call in fields.get("tool_calls") or []:
        function = call.get("function") or {}
        yield function.get("name", "")
        yield function.get("arguments", "")


class Estimator(Protocol):
    """A history's size as ``total(sum of units(m), len(messages))`` (SPEC TOK-1, TOK-4)."""

    name: str

    def units(self, message: Message) -> int:
        """What one message adds to the sum: characters, or tokens."""
        ...

    def total(self, units: int, messages: int) -> int:
        """The estimate for a history of ``messages`` messages whose units sum to ``units``."""
        ...

    def estimate(self, messages: Sequence[Message]) -> int:
        """The estimate for ``messages``, counted from scratch."""
        return self.total(sum(self.units(message) for message in messages), len(messages))


class CharsPerFour(Estimator):
    """Seed 000's heuristic: characters of the text read, divided by 4, rounded down (TOK-1).

    Characters are Python ``str`` code points.
    """

    name = "chars/4"

    def units(self, message: Message) -> int:
        return sum(len(text) for text in message_text(message))

    def total(self, units: int, messages: int) -> int:
        return units // 4


class ExactTokens(Estimator):
    """Exact tiktoken count of the prompt, format overhead included (SPEC TOK-2).

    Per OpenAI's token-counting guide for gpt-4o/gpt-4-class models: each
    message costs ``PER_MESSAGE`` plus the tokens of its role and of its text,
    ``PER_NAME`` more if it has a name, and the history ``REPLY_PRIMING`` once
    (none for an empty history). Special-token strings such as
    ``<|endoftext|>`` are counted as plain text. How tool calls are framed is not
    documented: we count their names and arguments, so for them the figure is a
    lower bound, off by a few tokens per call.
    """

    def __init__(self, encoding_name: str = "o200k_base") -> None:
        self.name = f"tiktoken:{encoding_name}"
        self._encoding = encoding(encoding_name)

    def tokens(self, text: str) -> int:
        """Tokens of ``text`` read as plain text (TOK-2)."""
        return len(self._encoding.encode(text, disallowed_special=()))

    def units(self, message: Message) -> int:
        fields = cast(Mapping[str, Any], message)
        overhead = PER_MESSAGE + (PER_NAME if isinstance(fields.get("name"), str) else 0)
        texts = [str(fields.get("role", "")), *message_text(message)]
        return overhead + sum(self.tokens(text) for text in texts)

    def total(self, units: int, messages: int) -> int:
        return units + REPLY_PRIMING if messages else 0


class TokenLedger:
    """Keeps a history's estimate up to date by counting only new messages (SPEC TOK-4).

    `update` treats a list as an extension of the one it saw last when that
    list's last message is, by identity, at the same place in the new one; any
    other list is counted from scratch. So it relies on messages already counted
    not being changed or replaced in place: after such an edit (for example
    masking old tool output without shortening the history) call `reset`.
    """

    def __init__(self, estimator: Estimator) -> None:
        self.estimator = estimator
        self.reset()

    def reset(self) -> None:
        """Forget everything counted; the next `update` counts from scratch (TOK-4)."""
        self._units = 0
        self._seen = 0
        self._last: Message | None = None

    def update(self, messages: Sequence[Message]) -> int:
        """The estimate for ``messages``; costs time in the new messages only (TOK-4)."""
        if not extends(messages, self._seen, self._last):
            self.reset()
        for index in range(self._seen, len(messages)):
            self._units += self.estimator.units(messages[index])
        self._seen = len(messages)
        self._last = messages[-1] if messages else None
        return self.estimator.total(self._units, self._seen)
