"""How big a history is: two estimators and an incremental ledger (SPEC TOK-1, TOK-2, TOK-4).

Both estimators count the same text, the text the model reads (`message_text`).
`CharsPerFour` is seed 000's heuristic (TOK-1); `ExactTokens` counts o200k_base
(or cl100k_base) tokens, exactly as tiktoken does, plus the chat format's overhead
(TOK-2). An estimate is a sum over messages passed through `Estimator.total`, so
`TokenLedger` can keep the sum and count only the messages added since it last
looked (TOK-4).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from compaction_suite.text import PER_MESSAGE, PER_NAME, REPLY_PRIMING, characters, count_tokens, message_text, message_tokens

from .rounds import Message, extends

__all__ = ["PER_MESSAGE", "PER_NAME", "REPLY_PRIMING", "CharsPerFour", "Estimator", "ExactTokens", "TokenLedger", "message_text"]
"""``message_text`` and the chat overhead are facts the verifier shares, so they live in
``compaction_suite/text.py``, written apart from any compactor; they are re-exported here."""


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
        return characters(message)

    def total(self, units: int, messages: int) -> int:
        return units // 4


class ExactTokens(Estimator):
    """Exact token count of the prompt, format overhead included (SPEC TOK-2).

    Per OpenAI's token-counting guide for gpt-4o/gpt-4-class models: each
    message costs ``PER_MESSAGE`` plus the tokens of its role and of its text,
    ``PER_NAME`` more if it has a name, and the history ``REPLY_PRIMING`` once
    (none for an empty history). Special-token strings such as
    ``<|endoftext|>`` are counted as plain text. How tool calls are framed is not
    documented: we count their names and arguments, so for them the figure is a
    lower bound, off by a few tokens per call. The tokens are quicktok's, equal
    to tiktoken's and faster (``compaction_suite/text.py``).
    """

    def __init__(self, encoding_name: str = "o200k_base") -> None:
        self.name = f"exact:{encoding_name}"
        self.encoding_name = encoding_name

    def tokens(self, text: str) -> int:
        """Tokens of ``text`` read as plain text (TOK-2)."""
        return count_tokens(text, self.encoding_name)

    def units(self, message: Message) -> int:
        return message_tokens(message, self.tokens)

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
        self._units += sum(map(self.estimator.units, messages[self._seen :]))
        self._seen = len(messages)
        self._last = messages[-1] if messages else None
        return self.estimator.total(self._units, self._seen)
