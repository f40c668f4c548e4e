"""One preset per seed system, with that system's documented defaults (SPEC PRESET-*).

Each takes the summarizer's ``model`` (an OpenAI model or an Azure deployment
name, seed 000's ``deployment_name``) and the ``openai`` client(s) to call it with.
"""

from __future__ import annotations

from collections.abc import Sequence

import openai

from .compactor import Compactor
from .extraction import DEFAULT_RULE, REPORT_PROGRESS, EntityRule, TaskListTool
from .strategies import KeepLastMessages, StructuredSummarize, Summarize
from .summarizer import DEFAULT_PROMPT, STRUCTURED_PROMPT, Summarizer
from .triggers import CacheBreakEven, ContextFraction, IterationsOrTokens, MessageCount, TokenThreshold

SUMMARY_PROFILES = frozenset({"core", "trigger", "summary", "failure", "events"})
STRUCTURED_PROFILES = frozenset({"core", "trigger", "structured", "failure", "events"})
CACHE_AWARE_PROFILES = STRUCTURED_PROFILES - {"trigger"}
"""Its trigger is not seed 000's, which the ``trigger`` profile checks."""


def openai_azure(
    model: str,
    *,
    client: openai.OpenAI | None = None,
    async_client: openai.AsyncOpenAI | None = None,
    threshold_iterations: int = 8,
    max_context_tokens: int = 80_000,
    keep_recent_rounds: int = 2,
    prompt: str = DEFAULT_PROMPT,
    summarizer_window: int | None = None,
) -> Compactor:
    """Seed 000 (PRESET-000): iterations >= 8 OR chars/4 >= 80000; one summary; last 2 rounds.
    ``summarizer_window``: the summary model's context window (SUMZ-5; gpt-4o-mini's is 128,000)."""
    summarizer = Summarizer(model, client=client, async_client=async_client, prompt=prompt, window=summarizer_window)
    return Compactor(
        Summarize(summarizer, keep_rounds=keep_recent_rounds),
        IterationsOrTokens(threshold_iterations, max_context_tokens),
        profiles=SUMMARY_PROFILES,
    )


def structured_admin_chat(
    model: str,
    *,
    client: openai.OpenAI | None = None,
    async_client: openai.AsyncOpenAI | None = None,
    threshold_tokens: int = 60_000,
    keep_messages: int = 10,
    prompt: str = STRUCTURED_PROMPT,
    entity_rule: EntityRule = DEFAULT_RULE,
    task_lists: Sequence[TaskListTool] = (REPORT_PROGRESS,),
    summarizer_window: int | None = None,
) -> Compactor:
    """Seed 001 (PRESET-001): over 60k tokens, a structured summary, at least 10 messages kept.
    ``entity_rule`` and ``task_lists`` say where ids and the task list are (ENT-1, ENT-2);
    ``summarizer_window`` the summary model's context window (SUMZ-5)."""
    summarizer = Summarizer(model, client=client, async_client=async_client, prompt=prompt, window=summarizer_window)
    return Compactor(
        StructuredSummarize(summarizer, keep_messages=keep_messages, entity_rule=entity_rule, task_lists=task_lists),
        TokenThreshold(threshold_tokens),
        profiles=STRUCTURED_PROFILES,
    )


def researcher(
    model: str,
    *,
    client: openai.OpenAI | None = None,
    async_client: openai.AsyncOpenAI | None = None,
    max_tokens: int = 4096,
    keep_rounds: int = 3,
) -> Compactor:
    """Seed 003 (PRESET-003): over 60% of max_tokens (chars/4), keep 3 entries, a 300-token
    summary, truncation when the summarizer fails; the event's ``still_too_large`` reports
    a context that compaction could not bring under the threshold."""
    summarizer = Summarizer(model, client=client, async_client=async_client, max_tokens=300)
    return Compactor(
        Summarize(summarizer, keep_rounds=keep_rounds, fallback_truncation=True),
        ContextFraction(max_tokens, 0.6),
    )


def message_counting(*, keep_messages: int = 50, target_count: int = 20, threshold: int = 5) -> Compactor:
    """Seed 004's example (PRESET-004-COUNT): keep the last 50 messages, checked when the
    count exceeds 20 + 5. With these numbers the strategy only cuts once a history holds
    more than 50 messages; before that a firing trigger leaves the history as it is."""
    return Compactor(KeepLastMessages(keep_messages), MessageCount(target_count, threshold))


def summarizing(
    model: str,
    *,
    client: openai.OpenAI | None = None,
    async_client: openai.AsyncOpenAI | None = None,
    keep_messages: int = 20,
    resummarize_after: int = 5,
) -> Compactor:
    """Seed 004's summarizing defaults (PRESET-004-SUMMARIZE): keep 20 recent messages,
    re-summarize after 5 new ones, one summary. The summary itself counts as a message, so
    the trigger fires when more than ``keep_messages + resummarize_after`` are held."""
    summarizer = Summarizer(model, client=client, async_client=async_client)
    return Compactor(
        Summarize(summarizer, keep_messages=keep_messages),
        MessageCount(keep_messages, resummarize_after),
    )


def cache_aware(
    model: str,
    *,
    client: openai.OpenAI | None = None,
    async_client: openai.AsyncOpenAI | None = None,
    write_to_read: float = 4.0,
    summarize_to_read: float = 0.3,
    overhead_tokens: float = 0.0,
    keep_rounds: int = 2,
    prompt: str = STRUCTURED_PROMPT,
    entity_rule: EntityRule = DEFAULT_RULE,
    task_lists: Sequence[TaskListTool] = (REPORT_PROGRESS,),
) -> Compactor:
    """The cache-aware compactor (STRAT-12): compacts rarely and in large steps, when the cache
    re-reads since the last compaction have cost what a compaction costs (RT-8, with the
    provider's price ratios; the defaults are GPT-4.1's with GPT-4o mini summarizing); each
    compaction folds everything before the last ``keep_rounds`` rounds into seed 001's structured
    summary (STRAT-2: entity ids and the task list kept), so between compactions the history
    only grows and the cache serves all of it but the newest round."""
    summarizer = Summarizer(model, client=client, async_client=async_client, prompt=prompt)
    return Compactor(
        StructuredSummarize(summarizer, keep_rounds=keep_rounds, entity_rule=entity_rule, task_lists=task_lists),
        CacheBreakEven(write_to_read, summarize_to_read, overhead_tokens, keep_rounds),
        profiles=CACHE_AWARE_PROFILES,
    )
