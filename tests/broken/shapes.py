"""Negative controls for the shapes where real bugs live (SPEC Part A, "Histories the suite
draws"; `conformance.shapes`): each compactor is correct on ordinary histories and has the
defect a real report found in one shape. `SHAPE_CONTROLS` maps each to the clause that rejects
it, the reason it must give and the conformance test that forces its shape (which must be
among the tests that caught it: tests/test_negative_controls.py).
"""

from __future__ import annotations

import json
from typing import Any

from compaction_suite.reference import Compactor, call_in_flight, split_rounds
from compaction_suite.reference.conformance_factory import seed_000, seed_001
from compaction_suite.reference.rounds import flatten
from compaction_suite.reference.strategies import StructuredSummarize, split_system
from compaction_suite.reference.summary import entities, is_summary, latest_tasks, structured_body, summary_message

from broken.compactors import Control, Wrapper, _compacted, summarizing
from broken.formats import ResponsesTruncating, _kind

SYSTEM = ("system", "developer")


class _Trigger:
    """Seed 000's trigger, ``iteration >= T or tokens >= M``, for the compactors written here."""

    def __init__(self, settings: Any) -> None:
        self.t, self.m, self.k = settings.threshold_iterations, settings.max_context_tokens, settings.keep_recent_rounds

    def estimate_tokens(self, messages: Any) -> int:
        return len(json.dumps(messages)) // 4

    def fires(self, messages: Any, iteration: int) -> bool:
        return iteration >= self.t or self.estimate_tokens(messages) >= self.m


# --- wide-round: langchain-ai/deepagents#270, langchain-ai/langchain#34184


def _calls_split_near(messages: list[dict], cut: int, reach: int = 5) -> bool:
    """Whether an assistant message at most ``reach`` messages before ``cut`` has results on both
    sides of it: the safe-cut check LangChain's SummarizationMiddleware had before #34184, which
    never looked further than five messages from the cut."""
    for i in range(max(0, cut - reach), cut):
        ids = {c["id"] for c in messages[i].get("tool_calls") or []}
        if ids and any(m.get("role") == "tool" and m.get("tool_call_id") in ids for m in messages[cut:]):
            return True
    return False


def looks_five_around_the_cut(settings: Any) -> Wrapper:
    """Summarizes like the reference, then keeps the last 6 messages after its summary, moving the
    cut back while a call whose results it splits lies within 5 messages of it: a round of 6 or
    more parallel calls puts the call beyond that reach, and its later results are kept orphaned."""

    class WindowedCut(Wrapper):
        def fix(self, messages, out):
            if not _compacted(messages, out):
                return out
            rest = [m for m in messages if m["role"] not in SYSTEM]
            cut = max(len(rest) - 6, 0)
            while cut > 0 and _calls_split_near(rest, cut):
                cut -= 1
            return [m for m in messages if m["role"] in SYSTEM] + [m for m in out if is_summary(m)][-1:] + rest[cut:]

    wrapper = WindowedCut(seed_000(settings))
    wrapper.profiles = frozenset({"core"})
    return wrapper


# --- mixed-results: Semantic Kernel's reducers knew FunctionResultContent, not a plain-text result


class StructuredResultsOnly(_Trigger):
    """Keeps the system messages and the last K rounds, where a tool message joins the round of
    the call before it only when its content is a list of parts (the structured kind): a
    plain-text result is a round of its own, so the kept rounds may start with it, orphaned."""

    profiles = frozenset({"core"})

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        if not self.fires(messages, iteration) or call_in_flight(split_rounds(messages)):
            return list(messages)
        groups: list[list[dict]] = []
        for m in (m for m in messages if m["role"] not in SYSTEM):
            if m["role"] == "tool" and isinstance(m.get("content"), list) and groups:
                groups[-1].append(m)
            else:
                groups.append([m])
        if len(groups) <= self.k:
            return list(messages)
        return [m for m in messages if m["role"] in SYSTEM] + [m for g in groups[-self.k :] for m in g]


def structured_results_only(settings: Any) -> StructuredResultsOnly:
    return StructuredResultsOnly(settings)


# --- non-adjacent-pair: an item between a function_call and its output (Responses)


class PairsByAdjacency(ResponsesTruncating):
    """Keeps the system items and the last 6 items, moving the cut back out of a run of calls and
    outputs (and past a reasoning item): it pairs an output with its call only when nothing else
    stands between them, so a message between orphans the output it keeps (RESP-1)."""

    def __init__(self, settings: Any) -> None:
        super().__init__(settings.threshold_iterations, settings.max_context_tokens, 1)

    def compact(self, items: list[dict], *, iteration: int) -> list[dict]:
        fires = iteration >= self.threshold_iterations or self.estimate_tokens(items) >= self.max_context_tokens
        if not fires or _pending_call(items):
            return list(items)
        cut = max(len(items) - 6, 0)
        while cut > 0 and (_in_tool_run(items, cut) or _kind(items[cut - 1]) == "reasoning"):
            cut -= 1
        system = [i for i in items[:cut] if _kind(i) == "message" and i.get("role") in SYSTEM]
        return system + items[cut:]


TOOL_ITEMS = ("function_call", "custom_tool_call", "function_call_output", "custom_tool_call_output")


def _in_tool_run(items: list[dict], cut: int) -> bool:
    return _kind(items[cut]) in TOOL_ITEMS and _kind(items[cut - 1]) in TOOL_ITEMS


def _pending_call(items: list[dict]) -> bool:
    answered = {i.get("call_id") for i in items if _kind(i) in TOOL_ITEMS[2:]}
    return any(_kind(i) in TOOL_ITEMS[:2] and i.get("call_id") not in answered for i in items)


def pairs_by_adjacency(settings: Any) -> PairsByAdjacency:
    return PairsByAdjacency(settings)


# --- long-tool-loop: langchain-ai/langchain#39261


def fixed_text_without_a_user_turn(settings: Any) -> Wrapper:
    """When the last 6 messages of the part it would summarize hold no user message (a long tool
    loop after the only user turn), writes "Previous conversation was too long to summarize." as
    the summary without asking the summarizer, as LangChain's SummarizationMiddleware did."""
    k, trigger = settings.keep_recent_rounds, _Trigger(settings)

    class FixedText(Wrapper):
        def compact(self, messages, *, iteration):
            rounds = split_rounds(messages)
            system, rest = split_system(messages, rounds)
            if trigger.fires(messages, iteration) and not call_in_flight(rounds) and len(rest) > k:
                prefix = flatten(rest[:-k])
                if not any(m["role"] == "user" for m in prefix[-6:]):
                    return system + [summary_message("Previous conversation was too long to summarize.")] + flatten(rest[-k:])
            return self.inner.compact(messages, iteration=iteration)

    return FixedText(seed_000(settings))


# --- newest-over-budget: a budget fitter that cannot fit the newest round


class FitsTheBudget(_Trigger):
    """Drops the oldest rounds while the estimate is over max_context_tokens, then, so that what it
    keeps starts with a user turn, reads the first kept round: when even the newest round alone
    is over the budget nothing is kept, and that read raises IndexError."""

    profiles = frozenset({"core"})

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        rounds = split_rounds(messages)
        if not self.fires(messages, iteration) or call_in_flight(rounds):
            return list(messages)
        system, rest = split_system(messages, rounds)
        kept, dropped = list(rest), []
        while kept and self.estimate_tokens(system + flatten(kept)) > self.m:
            dropped.append(kept.pop(0))
        if kept[0].kind != "user":
            kept = [r for r in dropped if r.kind == "user"][-1:] + kept
        return system + flatten(kept)


def fits_the_budget(settings: Any) -> FitsTheBudget:
    return FitsTheBudget(settings)


# --- summary-chain: the earlier summary found by its place


def folds_only_the_first_summary(settings: Any) -> Wrapper:
    """Takes only the message right after the system prompts for the earlier summary: with two or
    more stacked, the later ones are kept after the new summary (SUM-4)."""

    class FirstOnly(Wrapper):
        def fix(self, messages, out):
            earlier = [m for m in messages if is_summary(m)]
            if len(earlier) < 2 or not _compacted(messages, out):
                return out
            at = next(i for i, m in enumerate(out) if is_summary(m)) + 1
            return out[:at] + earlier[1:] + out[at:]

    return FirstOnly(seed_000(settings))


# --- huge-result: a fixed cap on one result's size


def drops_huge_results(settings: Any) -> Wrapper:
    """Drops every tool result over 64,000 characters from what it returns (a fixed size cap),
    leaving the call that asked for it unanswered (CORE-2)."""

    class Capped(Wrapper):
        def fix(self, messages, out):
            return [m for m in out if not (m.get("role") == "tool" and len(json.dumps(m.get("content"))) > 64_000)]

    return Capped(seed_000(settings))


# --- entity-burst: a summary section with room for twenty entities


class _TwentyEntities(StructuredSummarize):
    def body(self, prefix, model_text):
        return structured_body(entities(prefix, self.entity_rule)[:20], latest_tasks(prefix, self.task_lists), model_text)


def lists_twenty_entities(settings: Any) -> Compactor:
    """Seed 001's structured summary, listing at most 20 entities: a compacted part with dozens of
    entity-creating results loses the rest (STRUCT-2)."""
    compactor = seed_001(settings)
    strategy = summarizing(compactor)
    compactor.strategy = _TwentyEntities(strategy.summarizer, keep_messages=strategy.keep_messages or 10)
    return compactor


SHAPE_CONTROLS: dict[str, tuple[Control, str]] = {
    "looks_five_around_the_cut": (Control("CORE-1", ("core",), r"tool result '\w+' has no matching call", reason_id="orphan-tool-result"), "test_wide_round_cut_inside"),
    "structured_results_only": (Control("CORE-1", ("core",), r"tool result '\w+' has no matching call", reason_id="orphan-tool-result"), "test_plain_and_structured_results"),
    "pairs_by_adjacency": (
        Control("RESP-1", ("core",), r"(function|custom_tool)_call_output call_\w+\): no (function|custom_tool)_call with call_id", reason_id="orphan-tool-output"),
        "test_output_after_another_item",
    ),
    "fixed_text_without_a_user_turn": (Control("SUM-5", ("summary",), r"compacted without a request to the suite's summarizer", reason_id="summary-without-request"), "test_long_tool_loop_is_summarized"),
    "fits_the_budget": (Control("CORE-10", ("core",), r"compact raised IndexError", reason_id="crash:IndexError"), "test_newest_round_over_budget"),
    "folds_only_the_first_summary": (Control("SUM-4", ("summary",), r"\b[23] summaries"), "test_summary_chain_folds_into_one"),
    "drops_huge_results": (Control("CORE-2", ("core",), r"tool call '\w+' has 0 results", reason_id="unanswered-tool-call"), "test_huge_result"),
    "lists_twenty_entities": (Control("STRUCT-2", ("structured",), r"entity ids lost: \['", reason_id="entity-ids-lost"), "test_entity_burst_ids_kept"),
}
"""Each shape's control: the clause that rejects it (with its reason) and the test forcing its shape."""
