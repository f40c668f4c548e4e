"""The compactor: trigger + strategy + events, called between rounds (seed 000).

The agent loop calls ``compact(messages, iteration=i)`` at its COMPACTION POINT,
after a complete round, and sends whatever comes back to the model. The
compactor decides *when* (a trigger), delegates *what* (a strategy), never lets
a summarizer failure escape (SUMZ-2), and leaves an event behind (EVENT-1).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from typing import Any

from .errors import HistoryError
from .events import CompactionEvent
from .rounds import SYSTEM_ROLES, Message, RoundLog, Rounds, call_in_flight
from .strategies import Outcome, Strategy
from .summarizer import SummarizerError
from .tokens import CharsPerFour, Estimator, TokenLedger
from .triggers import IterationsOrTokens, Observation, Trigger, decide

log = logging.getLogger("compaction_suite.reference.compactor")


class Compactor:
    """Compacts a history when its trigger fires (SPEC Part B).

    ``profiles`` names the conformance profiles it claims (SPEC Part A).
    """

    def __init__(
        self,
        strategy: Strategy,
        trigger: Trigger | None = None,
        estimator: Estimator | None = None,
        profiles: frozenset[str] = frozenset({"core"}),
    ) -> None:
        self.strategy = strategy
        self.trigger = trigger or IterationsOrTokens()
        self.estimator = estimator or CharsPerFour()
        self.profiles = profiles
        self.capabilities: dict[str, Any] = {}
        """What the conformance suite reads about how it is called (SPEC Part A, "Declarations"):
        the suite's factories declare the token trigger here (`conformance_factory`)."""
        self.last_event: CompactionEvent | None = None
        self._ledger = TokenLedger(self.estimator)
        self._rounds = RoundLog()
        """Validates only what was appended since the last call, like the ledger (TOK-4)."""
        self._compacted_at = 0
        """The iteration of the last compaction: RT-1 counts iterations from it."""
        self._observed_prompt_tokens: int | None = None
        self._cycle: tuple[int, int] | None = None
        """RT-8's base: (the estimate the last compaction left, its part after the leading system
        messages); None until the run's first call."""
        self._resent = 0
        """What the histories since then held beyond that estimate, summed (RT-8)."""

    def estimate_tokens(self, messages: Sequence[Message]) -> int:
        return self.estimator.estimate(messages)

    def compact(
        self, messages: list[Message], *, iteration: int, skip: bool = False, force: bool = False
    ) -> list[Message]:
        """The history to send next: compacted, or the input unchanged (as a new list)."""
        rounds = self._rounds_to_compact(messages, iteration, skip, force)
        if rounds is None:
            return list(messages)
        try:
            outcome = self.strategy.apply(list(messages), rounds)
        except SummarizerError as error:
            return self._failed(messages, error)
        return self._finish(messages, outcome)

    async def acompact(
        self, messages: list[Message], *, iteration: int, skip: bool = False, force: bool = False
    ) -> list[Message]:
        """``compact`` for async agent loops; the summarizer uses the async client."""
        rounds = self._rounds_to_compact(messages, iteration, skip, force)
        if rounds is None:
            return list(messages)
        try:
            outcome = await self.strategy.aapply(list(messages), rounds)
        except SummarizerError as error:
            return self._failed(messages, error)
        return self._finish(messages, outcome)

    def observe_usage(self, prompt_tokens: int) -> None:
        """Report the next response's ``usage.prompt_tokens`` (EVENT-2; feeds RT-3 and RT-4)."""
        self._observed_prompt_tokens = prompt_tokens
        event = self.last_event
        if event is not None and event.compacted and event.verified_prompt_tokens is None:
            event.verified_prompt_tokens = prompt_tokens
            log.info(event.log_line())

    def _rounds_to_compact(self, messages: list[Message], iteration: int, skip: bool, force: bool) -> Rounds | None:
        """Validate, then ask the trigger: the history's rounds when it fires, else None.

        Records the event of a call that does not compact. Both the validation and the
        estimate cost time in the messages appended since the last call only (TOK-4).
        """
        self.last_event = None
        rounds = self._rounds.update(messages)  # raises HistoryError (HIST-*)
        if iteration < self._compacted_at:
            self._compacted_at = 0  # a lower iteration means a new run (RT-1)
            self._cycle = None
        seen = self._observe(messages, iteration)
        self.last_event = CompactionEvent(iteration, len(messages), seen.estimated_tokens)
        if call_in_flight(rounds):
            self.last_event.skipped_reason = "a tool call is in flight (ROUND-3)"
            return None
        self.last_event.trigger = decide(self.trigger, seen, skip=skip, force=force)
        if self.last_event.trigger is None:
            self.last_event.skipped_reason = "skipped for this run" if skip else "trigger did not fire"
            return None
        try:
            return self._rounds.verified(messages)  # a message replaced in place is split (and checked) again
        except HistoryError:
            self.last_event = None
            raise

    def _observe(self, messages: Sequence[Message], iteration: int) -> Observation:
        estimate = self._ledger.update(messages)
        if self._cycle is None:  # a run starts as if compacted down to its system messages
            self._cycle, self._resent = (self._system_estimate(messages), 0), 0
        self._resent += estimate - self._cycle[0]
        return Observation(
            iterations=iteration - self._compacted_at,
            estimated_tokens=estimate,
            messages=len(messages) - self._rounds.system_messages,
            observed_prompt_tokens=self._observed_prompt_tokens,
            rewritten_tokens=self._cycle[1],
            grown_tokens=estimate - self._cycle[0],
            resent_tokens=self._resent,
        )

    def _start_cycle(self, messages: Sequence[Message], estimate: int) -> None:
        """What a compaction left: RT-8 counts re-reads from it. The part a compaction rewrites
        is what follows the leading system messages (a compaction puts every system message first)."""
        self._cycle = (estimate, estimate - self._system_estimate(messages))
        self._resent = 0

    def _system_estimate(self, messages: Sequence[Message]) -> int:
        return self.estimator.estimate(list(itertools.takewhile(lambda m: m.get("role") in SYSTEM_ROLES, messages)))

    def _failed(self, messages: list[Message], error: SummarizerError) -> list[Message]:
        """Non-fatal summarizer failure: the input goes on unchanged (SUMZ-2)."""
        event = self.last_event
        assert event is not None, "set by _rounds_to_compact"
        event.failure_reason = str(error)
        event.prompt_hash = error.prompt_hash
        log.warning("compaction failed: %s: %s", error.error_type, error.reason)
        return list(messages)

    def _finish(self, messages: list[Message], outcome: Outcome) -> list[Message]:
        event = self.last_event
        assert event is not None, "set by _rounds_to_compact"
        event.prompt_hash = outcome.prompt_hash
        if outcome.summary is not None:
            event.summarizer_prompt_tokens = outcome.summary.prompt_tokens
            event.summarizer_completion_tokens = outcome.summary.completion_tokens
        if outcome.messages == messages:
            event.skipped_reason = "nothing older than the kept tail (STRAT-9)"
            return list(messages)
        if outcome.fallback_reason is not None:
            event.failure_reason = outcome.fallback_reason
            log.warning("compaction fell back to truncation: %s", outcome.fallback_reason)
        self._compacted_at = event.iteration
        after = self.estimator.estimate(outcome.messages)
        if after >= event.estimated_tokens_before:
            event.skipped_reason = f"the result ({after} tokens) would not be smaller (STRAT-10)"
            self._start_cycle(messages, event.estimated_tokens_before)
            return list(messages)
        self._start_cycle(outcome.messages, after)
        self._ledger.reset()  # the history was replaced, not appended to (TOK-4)
        self._ledger.update(outcome.messages)
        self._rounds.update(outcome.messages)  # a shorter list: split from scratch
        event.compacted = True
        event.messages_after = len(outcome.messages)
        event.estimated_tokens_after = after
        kept = len(outcome.messages) - self._rounds.system_messages
        event.still_too_large = self.trigger.check(Observation(0, after, kept)) is not None
        return outcome.messages
