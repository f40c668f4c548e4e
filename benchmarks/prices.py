"""What a model call costs: a price table with cached-input prices, and the prompt-cache model.

Prices are USD per 1,000,000 tokens as OpenAI's API pricing page lists them (checked for this
project in November 2026 through a third-party copy of that page: GPT-4.1 $2.00 input, $0.50
cached input, $8.00 output; GPT-4o mini $0.15, $0.075, $0.60; GPT-4.1 mini $0.40, $0.10, $1.60).
Check them before quoting a bill: prices change.

The cache model follows OpenAI's documented automatic prompt caching: a request whose prompt
starts with the same tokens as a recent request reads that common prefix from the cache, when
the prefix is at least 1,024 tokens long, in steps of 128 tokens. Here "recent request" is the
agent's previous model call (an agent calls often enough for the cache to stay warm), and the
common prefix is counted in whole messages: the messages both prompts start with. So a
compaction that rewrites the start of the history (a summary right after the system prompt)
makes the next call read almost nothing from the cache, while an append-only history reads
all of its previous prompt from it.
"""

from __future__ import annotations

from dataclasses import dataclass

CACHE_MIN_TOKENS = 1024
CACHE_STEP_TOKENS = 128


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    cached_input: float
    output: float

    def cost(self, input_tokens: int, cached_tokens: int, output_tokens: int) -> float:
        """USD for a call: ``input_tokens`` includes the ``cached_tokens`` read from the cache."""
        fresh = input_tokens - cached_tokens
        return (fresh * self.input + cached_tokens * self.cached_input + output_tokens * self.output) / 1_000_000


PRICES: dict[str, Price] = {
    "gpt-4.1": Price(2.00, 0.50, 8.00),
    "gpt-4.1-mini": Price(0.40, 0.10, 1.60),
    "gpt-4o-mini": Price(0.15, 0.075, 0.60),
}
AGENT_MODEL = "gpt-4.1"
"""Seed 000's agent model."""
SUMMARIZER_MODEL = "gpt-4o-mini"
"""Seed 000's suggested summarizer deployment."""


def cached_tokens(common_prefix_tokens: int) -> int:
    """Tokens a prompt reads from the cache, given the tokens of the prefix it shares with the last one."""
    if common_prefix_tokens < CACHE_MIN_TOKENS:
        return 0
    return common_prefix_tokens - common_prefix_tokens % CACHE_STEP_TOKENS
