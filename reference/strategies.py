"""Strategies: what a compaction keeps (SPEC STRAT-1..STRAT-11).

A strategy has seed 002's shape, ``compact(messages) -> messages``. Every
strategy here works on whole rounds (ROUND-2) and sets system messages aside
first and puts them back first (seed 004). ``apply`` returns an `Outcome`,
which also carries what the event needs (summarizer usage, prompt hash).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from .extraction import DEFAULT_RULE, REPORT_PROGRESS, EntityRule, TaskListTool, entity_ids_in, json_value
from .rounds import Message, Round, Rounds, flatten, split_rounds
from .summarizer import Summarizer, SummarizerError, Summary
from .summary import entities, is_summary, latest_tasks, structured_body, summary_message, text_of, transcript, truncated
from .tokens import CharsPerFour, Estimator


@dataclass(frozen=True)
class Outcome:
    messages: list[Message]
    summary: Summary | None = None
    prompt_hash: str | None = None
    fallback_reason: str | None = None
    """Why fallback truncation stood in for the summarizer (SUMZ-3)."""


class Strategy:
    """Base class: subclasses implement ``apply``; summarizing ones also ``aapply``.

    ``rounds`` is ``split_rounds(messages)`` when the caller has it already (the
    compactor does), so a long history is not split twice.
    """

    def apply(self, messages: list[Message], rounds: Rounds | None = None) -> Outcome:
        raise NotImplementedError

    async def aapply(self, messages: list[Message], rounds: Rounds | None = None) -> Outcome:
        return self.apply(messages, rounds)

    def compact(self, messages: Sequence[Message]) -> list[Message]:
        """Seed 002's ``CompactionStrategy.compact(messages) -> messages``."""
        return self.apply(list(messages)).messages

    async def acompact(self, messages: Sequence[Message]) -> list[Message]:
        return (await self.aapply(list(messages))).messages


def split_system(messages: list[Message], rounds: Rounds | None = None) -> tuple[list[Message], Rounds]:
    """System messages (set aside, in order) and the other rounds (seed 004)."""
    rounds = split_rounds(messages) if rounds is None else rounds
    system = flatten(rounds.select(kind == "system" for kind in rounds.kinds))
    return system, rounds.select(kind != "system" for kind in rounds.kinds)


def tail_start(rounds: Sequence[Round], *, keep_rounds: int | None = None, keep_messages: int | None = None) -> int:
    """Index of the first round of the kept tail: the last ``keep_rounds`` rounds, or
    the shortest run of whole rounds holding at least ``keep_messages`` messages (STRAT-3)."""
    if keep_rounds is not None:
        return max(len(rounds) - keep_rounds, 0)
    held, index = 0, len(rounds)
    while index > 0 and held < (keep_messages or 0):
        index -= 1
        held += len(rounds[index].messages)
    return index


class Summarize(Strategy):
    """Summarize the rounds before the kept tail into one ``[Context Summary]`` message (STRAT-1)."""

    def __init__(
        self,
        summarizer: Summarizer,
        *,
        keep_rounds: int | None = 2,
        keep_messages: int | None = None,
        fallback_truncation: bool = False,
    ) -> None:
        self.summarizer = summarizer
        self.keep_rounds = None if keep_messages is not None else keep_rounds
        self.keep_messages = keep_messages
        self.fallback_truncation = fallback_truncation

    def plan(
        self, messages: list[Message], rounds: Rounds | None = None
    ) -> tuple[list[Message], list[Message], list[Message]] | None:
        """(system, prefix to summarize, tail), or None when there is nothing to fold (STRAT-9)."""
        system, rounds = split_system(messages, rounds)
        start = tail_start(rounds, keep_rounds=self.keep_rounds, keep_messages=self.keep_messages)
        prefix, tail = flatten(rounds[:start]), flatten(rounds[start:])
        if not prefix or (len(prefix) == 1 and is_summary(prefix[0])):
            return None
        return system, prefix, tail

    def body(self, prefix: list[Message], model_text: str) -> str:
        """The summary's text after the prefix; the structured strategy adds its sections."""
        return model_text

    def apply(self, messages: list[Message], rounds: Rounds | None = None) -> Outcome:
        plan = self.plan(messages, rounds)
        if plan is None:
            return Outcome(list(messages))
        try:
            summary = self.summarizer.summarize(transcript(plan[1]))
        except SummarizerError as error:
            return self._fallback(plan, error)
        return self._assemble(plan, summary)

    async def aapply(self, messages: list[Message], rounds: Rounds | None = None) -> Outcome:
        plan = self.plan(messages, rounds)
        if plan is None:
            return Outcome(list(messages))
        try:
            summary = await self.summarizer.asummarize(transcript(plan[1]))
        except SummarizerError as error:
            return self._fallback(plan, error)
        return self._assemble(plan, summary)

    def _assemble(self, plan: tuple[list[Message], ...], summary: Summary) -> Outcome:
        system, prefix, tail = plan
        message = summary_message(self.body(prefix, summary.text))
        return Outcome(system + [message] + tail, summary, self.summarizer.prompt_hash)

    def _fallback(self, plan: tuple[list[Message], ...], error: SummarizerError) -> Outcome:
        """Seed 003's truncation stands in for a failed summarizer, if enabled (SUMZ-3)."""
        if not self.fallback_truncation:
            raise error
        system, prefix, tail = plan
        message = summary_message(self.body(prefix, truncated(prefix)))
        return Outcome(system + [message] + tail, None, self.summarizer.prompt_hash, str(error))


class StructuredSummarize(Summarize):
    """Seed 001's structured summary; ids and tasks come from the history itself (STRAT-2).

    ``entity_rule`` says which keys of a JSON tool result hold entity ids (ENT-1);
    ``task_lists`` which tools publish the task list (ENT-2; seed 001's ``reportProgress``
    by default). ``keep_rounds``, when given, keeps that many rounds instead of messages.
    """

    def __init__(
        self,
        summarizer: Summarizer,
        *,
        keep_messages: int = 10,
        keep_rounds: int | None = None,
        fallback_truncation: bool = False,
        entity_rule: EntityRule = DEFAULT_RULE,
        task_lists: Sequence[TaskListTool] = (REPORT_PROGRESS,),
    ) -> None:
        keep = {"keep_rounds": keep_rounds} if keep_rounds is not None else {"keep_messages": keep_messages}
        super().__init__(summarizer, **keep, fallback_truncation=fallback_truncation)
        self.entity_rule = entity_rule
        self.task_lists = tuple(task_lists)

    def body(self, prefix: list[Message], model_text: str) -> str:
        return structured_body(entities(prefix, self.entity_rule), latest_tasks(prefix, self.task_lists), model_text)


class KeepLastMessages(Strategy):
    """Keep system messages and the shortest tail of whole rounds with at least ``n`` messages (STRAT-3)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def apply(self, messages: list[Message], rounds: Rounds | None = None) -> Outcome:
        system, rounds = split_system(messages, rounds)
        return Outcome(system + flatten(rounds[tail_start(rounds, keep_messages=self.n) :]))


MASK = "[tool output omitted: {chars} characters]"


class MaskObservations(Strategy):
    """Replace tool results outside the last ``keep_rounds`` rounds by a placeholder (STRAT-4).

    The tool message stays, with its ``tool_call_id``, so every call keeps its result.
    With an ``entity_rule``, a masked result keeps the entity ids it carried (STRAT-11):
    the placeholder is then a small JSON object ``{"omitted": ..., "ids": {key: [ids]}}``,
    which the same rule finds again.
    """

    def __init__(self, keep_rounds: int = 2, placeholder: str = MASK, entity_rule: EntityRule | None = None) -> None:
        self.keep_rounds = keep_rounds
        self.placeholder = placeholder
        self.entity_rule = entity_rule
        self.marker = placeholder.split("{")[0]
        """How this placeholder starts: a result that starts so was masked by an earlier compaction."""

    def apply(self, messages: list[Message], rounds: Rounds | None = None) -> Outcome:
        system, rounds = split_system(messages, rounds)
        start = tail_start(rounds, keep_rounds=self.keep_rounds)
        older = [self._mask(m) if m["role"] == "tool" else m for m in flatten(rounds[:start])]
        return Outcome([*system, *older, *flatten(rounds[start:])])

    def _mask(self, message: Message) -> Message:
        content = message["content"]
        if isinstance(content, str) and ((self.marker and content.startswith(self.marker)) or content.startswith(KEPT_IDS)):
            return message  # masked by an earlier compaction
        chars = len(content) if isinstance(content, str) else sum(len(str(p)) for p in content)
        masked = self.placeholder.format(chars=chars)
        if self.entity_rule is not None:
            masked = _with_ids(masked, text_of(message), self.entity_rule)
        return {"role": "tool", "tool_call_id": message["tool_call_id"], "content": masked}


KEPT_IDS = '{"omitted": '
"""How a masked result that kept its entity ids starts (STRAT-11)."""


def _with_ids(placeholder: str, text: str, rule: EntityRule) -> str:
    """The placeholder, as JSON holding the ids ``text`` carried, when it carried any."""
    ids: dict[str, list[str]] = {}
    for entity in entity_ids_in(json_value(text), rule):
        ids.setdefault(entity.key, []).append(entity.id)
    if not ids:
        return placeholder
    return json.dumps({"omitted": placeholder, "ids": ids}, ensure_ascii=False)


class MaskAndSummarize(Strategy):
    """Observation masking with a structured summary behind it (STRAT-11).

    At every compaction, tool results outside the last ``keep_rounds`` rounds are masked,
    keeping their entity ids (cheap: no model call). When what lies before the kept tail
    still holds more than ``summarize_over`` tokens (chars/4; by default a summary's own size,
    seed 003's 300 tokens, since folding less than that saves nothing), it is folded into one
    structured summary (seed 001's format: entity ids and the task list extracted, so
    nothing the model forgets is lost). The hybrid The Complexity Trap (Lindenbauer et
    al., 2025) found cheapest: masking does most of the work, summaries bound the rest.
    """

    def __init__(
        self,
        summarizer: Summarizer,
        *,
        keep_rounds: int = 2,
        summarize_over: int = 300,
        entity_rule: EntityRule = DEFAULT_RULE,
        task_lists: Sequence[TaskListTool] = (REPORT_PROGRESS,),
        fallback_truncation: bool = False,
    ) -> None:
        self.mask = MaskObservations(keep_rounds, entity_rule=entity_rule)
        self.summarize = StructuredSummarize(
            summarizer, keep_rounds=keep_rounds, entity_rule=entity_rule, task_lists=task_lists,
            fallback_truncation=fallback_truncation,
        )
        self.summarize_over = summarize_over
        self.estimator = CharsPerFour()

    def apply(self, messages: list[Message], rounds: Rounds | None = None) -> Outcome:
        masked = self.mask.apply(messages, rounds)
        if not self._older_than_tail_is_large(masked.messages):
            return masked
        return self.summarize.apply(masked.messages)

    async def aapply(self, messages: list[Message], rounds: Rounds | None = None) -> Outcome:
        masked = self.mask.apply(messages, rounds)
        if not self._older_than_tail_is_large(masked.messages):
            return masked
        return await self.summarize.aapply(masked.messages)

    def _older_than_tail_is_large(self, messages: list[Message]) -> bool:
        plan = self.summarize.plan(messages)
        return plan is not None and self.estimator.estimate(plan[1]) > self.summarize_over


class TokenBudget(Strategy):
    """Drop the oldest rounds until the estimate fits ``budget``; the last round always stays (STRAT-5)."""

    def __init__(self, budget: int, estimator: Estimator | None = None) -> None:
        self.budget = budget
        self.estimator = estimator or CharsPerFour()

    def apply(self, messages: list[Message], rounds: Rounds | None = None) -> Outcome:
        """Dropping the oldest rounds until the rest fits is keeping the newest rounds while they
        fit (dropping a round never makes an estimate larger), so only the kept rounds, and the
        one that did not fit, are counted."""
        system, rounds = split_system(messages, rounds)
        units, count = sum(map(self.estimator.units, system)), len(system)
        start = len(rounds)
        while start > 0:
            older = rounds[start - 1].messages
            more = sum(map(self.estimator.units, older))
            if start < len(rounds) and self.estimator.total(units + more, count + len(older)) > self.budget:
                break  # the last round stays even when it alone is over the budget
            units, count, start = units + more, count + len(older), start - 1
        return Outcome(system + flatten(rounds[start:]))


class DropSources(Strategy):
    """Remove rounds holding a message whose ``source_id`` is in ``sources`` (STRAT-6)."""

    def __init__(self, sources: Collection[str]) -> None:
        self.sources = frozenset(sources)

    def apply(self, messages: list[Message], rounds: Rounds | None = None) -> Outcome:
        system, rounds = split_system(messages, rounds)
        kept = rounds.select(not any(m.get("source_id") in self.sources for m in r.messages) for r in rounds)
        return Outcome(system + flatten(kept))


class Chain(Strategy):
    """Apply strategies in turn; the event keeps the last summarizer's usage (STRAT-7)."""

    def __init__(self, *strategies: Strategy) -> None:
        self.strategies = strategies

    def apply(self, messages: list[Message], rounds: Rounds | None = None) -> Outcome:
        outcome = Outcome(messages)
        for strategy in self.strategies:
            outcome = _merge(outcome, strategy.apply(outcome.messages, _same(outcome, messages, rounds)))
        return outcome

    async def aapply(self, messages: list[Message], rounds: Rounds | None = None) -> Outcome:
        outcome = Outcome(messages)
        for strategy in self.strategies:
            outcome = _merge(outcome, await strategy.aapply(outcome.messages, _same(outcome, messages, rounds)))
        return outcome


def _same(outcome: Outcome, messages: list[Message], rounds: Rounds | None) -> Rounds | None:
    """``rounds`` while the chain still holds the list they split, else None (split again)."""
    return rounds if outcome.messages is messages else None


def _merge(before: Outcome, after: Outcome) -> Outcome:
    return Outcome(
        after.messages,
        after.summary or before.summary,
        after.prompt_hash or before.prompt_hash,
        after.fallback_reason or before.fallback_reason,
    )
