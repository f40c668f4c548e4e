"""Negative controls for the wire-format clauses: the correct example compactors
(examples/python/responses_truncating.py, anthropic_truncating.py) with one defect each.

Each factory's docstring names the defect; `CONTROLS` maps it to the clause expected to reject
it and the reason that clause must give. They compact one turn deep (K=1) so that even short
drawn histories get compacted.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import openai

from compaction_suite.conformance.formats import anthropic as anthropic_format

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "python"))

from anthropic_truncating import AnthropicTruncating
from anthropic_truncating import factory as anthropic_factory
from responses_compacting import ResponsesCompacting, _keeps_pairs, _pending
from responses_compacting import factory as compacting_factory
from responses_truncating import ResponsesTruncating, _kind
from responses_truncating import factory as truncating_factory

from broken.compactors import Control


def _turn_starts(items: list[dict[str, Any]]) -> list[int]:
    """Where a user turn starts and a cut in front of it keeps every output with its call, as the
    correct examples cut (an output may follow its call after a message sent while the tool ran):
    each control has its own defect and no other."""
    return [i for i, item in enumerate(items) if _kind(item) == "message" and item.get("role") == "user" and _keeps_pairs(items, i)]


class _Responses(ResponsesTruncating):
    def __init__(self, settings: Any) -> None:
        super().__init__(settings.threshold_iterations, settings.max_context_tokens, 1)

    def compact(self, items: list[dict], *, iteration: int) -> list[dict]:
        out = super().compact(items, iteration=iteration)
        return out if out == items else self.defect(copy.deepcopy(out))

    def defect(self, out: list[dict]) -> list[dict]:
        return out


class _Anthropic(AnthropicTruncating):
    def __init__(self, settings: Any) -> None:
        super().__init__(settings.threshold_iterations, settings.max_context_tokens, 1)

    def compact(self, request: dict, *, iteration: int) -> dict:
        out = super().compact(request, iteration=iteration)
        return out if out == request else self.defect(copy.deepcopy(out), request)

    def defect(self, out: dict, request: dict) -> dict:
        return out


def _drop_first(out: list[dict], kind: str) -> list[dict]:
    at = next((i for i, item in enumerate(out) if _kind(item) == kind), None)
    return out if at is None else out[:at] + out[at + 1 :]


class OrphanOutput(_Responses):
    """Drops the first kept function_call, keeping its output (RESP-1)."""

    def defect(self, out):
        return _drop_first(out, "function_call")


class OrphanCustomOutput(_Responses):
    """Drops the first kept custom_tool_call (Codex's apply_patch), keeping its custom_tool_call_output (RESP-1)."""

    def defect(self, out):
        return _drop_first(out, "custom_tool_call")


class UnansweredCustomCall(_Responses):
    """Drops the first kept custom_tool_call_output, keeping its call (RESP-2)."""

    def defect(self, out):
        return _drop_first(out, "custom_tool_call_output")


class UnansweredCall(_Responses):
    """Drops the first kept function_call_output, keeping its call (RESP-2)."""

    def defect(self, out):
        return _drop_first(out, "function_call_output")


class ReasoningSeparated(_Responses):
    """Drops reasoning items, keeping the calls and messages they preceded (RESP-3)."""

    def defect(self, out):
        return [item for item in out if _kind(item) != "reasoning"]


class CompactionAltered(_Responses):
    """Re-encodes the kept compaction item's encrypted content (RESP-4)."""

    def defect(self, out):
        return [{**item, "encrypted_content": item["encrypted_content"][::-1]} if _kind(item) == "compaction" else item for item in out]


class CompactionDuplicated(_Responses):
    """Keeps the earlier compaction item twice (RESP-5)."""

    def defect(self, out):
        at = next((i for i, item in enumerate(out) if _kind(item) == "compaction"), None)
        return out if at is None else out[: at + 1] + [out[at]] + out[at + 1 :]


class ChatRoleItem(_Responses):
    """Writes a chat-completions style note ({"role": "tool"}) into the items (RESP-6)."""

    def defect(self, out):
        return [*out[:-1], {"role": "tool", "content": "compacted"}, out[-1]]


class DeveloperDropped(_Responses):
    """Drops the system and developer messages (RESP-7)."""

    def defect(self, out):
        return [item for item in out if not (_kind(item) == "message" and item.get("role") in ("system", "developer"))]


class CompactsPendingCall(_Responses):
    """Compacts while a function's output is still pending (RESP-8; the Agents SDK bug)."""

    def compact(self, items, *, iteration):
        starts = _turn_starts(items)
        if (iteration < self.threshold_iterations and self.estimate_tokens(items) < self.max_context_tokens) or len(starts) < 2:
            return list(items)
        system = [item for item in items[: starts[-1]] if _kind(item) == "message" and item.get("role") in ("system", "developer")]
        return system + items[starts[-1] :]


class ResultWithoutUse(_Anthropic):
    """Summarizes away the assistant turn a kept tool_result answers (ANTH-1)."""

    def defect(self, out, request):
        messages = request["messages"]
        at = next((i for i, m in enumerate(messages) if i > 0 and any(b.get("type") == "tool_result" for b in m["content"] if isinstance(b, dict))), None)
        return out if at is None else {**out, "messages": [messages[0], *messages[at:]]}


class UseWithoutResult(_Anthropic):
    """Drops the user message carrying the first kept tool_result (ANTH-2)."""

    def defect(self, out, request):
        messages = out["messages"]
        at = next((i for i, m in enumerate(messages) if isinstance(m["content"], list) and any(b.get("type") == "tool_result" for b in m["content"])), None)
        return out if at is None else {**out, "messages": messages[:at] + messages[at + 1 :]}


class CutsIntoOpenTurn(_Anthropic):
    """When the request ends inside a tool loop, keeps only its last call and results after a note,
    dropping the message that opened the turn with thinking (ANTH-3: langchain-ai/langchain#34794's
    summary cutting into the open turn; with thinking on the API asks the final turn to open with a
    thinking block)."""

    def defect(self, out, request):
        messages = request["messages"]
        if len(messages) < 3 or messages[-1]["role"] != "user" or messages[-2]["role"] != "assistant" or not isinstance(messages[-1]["content"], list):
            return out
        note = {"role": "user", "content": "Earlier messages were summarized."}
        return {**out, "messages": [note, messages[-2], messages[-1]]}


class ThinkingModified(_Anthropic):
    """Trims the thinking text of kept turns (ANTH-3: the signature no longer matches)."""

    def defect(self, out, request):
        for m in out["messages"]:
            for block in m["content"] if isinstance(m["content"], list) else []:
                if block.get("type") == "thinking":
                    block["thinking"] = block["thinking"][:-1]
        return out


class SystemMovedIntoMessages(_Anthropic):
    """Drops the top-level system prompt (ANTH-4)."""

    def defect(self, out, request):
        return {k: v for k, v in out.items() if k != "system"}


class SystemRoleMessage(_Anthropic):
    """Writes the compaction note as a "system" role message (ANTH-5: roles are user and assistant)."""

    def defect(self, out, request):
        return {**out, "messages": [{"role": "system", "content": "Earlier turns were dropped."}, *out["messages"]]}


class StreamedCompactionBlock(_Anthropic):
    """Stands for what it dropped with a compaction block as a client assembled it from the stream,
    the stream's ``index`` kept (ANTH-7: the API takes type, content and cache_control only;
    langchain-ai/langchain#36976)."""

    def defect(self, out, request):
        block = {"type": "compaction", "content": "Earlier turns were dropped.", "index": 0}
        return {**out, "messages": [{"role": "user", "content": "Go on."}, {"role": "assistant", "content": [block]}, *out["messages"]]}


class CompactsPendingUse(_Anthropic):
    """Compacts while a tool_use waits for its result (ANTH-6)."""

    def compact(self, request, *, iteration):
        messages = request["messages"]
        turns = [i for i, m in enumerate(messages) if m["role"] == "user" and not (isinstance(m["content"], list) and any(b.get("type") == "tool_result" for b in m["content"]))]
        if (iteration < self.threshold_iterations and self.estimate_tokens(request) < self.max_context_tokens) or len(turns) < 2:
            return dict(request)
        return {**request, "messages": messages[turns[-1] :]}


class _Unguarded(ResponsesCompacting):
    """The correct summarizing compactor without its guard: the endpoint's errors escape."""

    def compact(self, items, *, iteration):
        starts = _turn_starts(items)
        if iteration < self.threshold_iterations or len(starts) <= self.keep_turns:
            return list(items)
        cut = starts[-self.keep_turns]
        compacted = self.client.responses.compact(model=self.model, input=items[:cut])
        return [item.model_dump(exclude_none=True, warnings=False) for item in compacted.output] + items[cut:]


class _PlaceholderOnFailure(ResponsesCompacting):
    """The correct summarizing compactor, except that a failed compact call still replaces the
    older items, with a placeholder summary message nobody wrote."""

    def compact(self, items, *, iteration):
        out = super().compact(items, iteration=iteration)
        starts = _turn_starts(items)
        if out != items or iteration < self.threshold_iterations or len(starts) <= self.keep_turns or _pending(items):
            return out
        cut = starts[-self.keep_turns]
        system = [item for item in items[:cut] if _kind(item) == "message" and item.get("role") in ("system", "developer")]
        return [*system, {"type": "message", "role": "user", "content": "[Context Summary]\n(summary unavailable)"}, *items[cut:]]


def PlaceholderOnFailure(settings):
    """Replaces the older items with a placeholder summary when the compact endpoint fails (CORE-11)."""
    correct = compacting_factory(settings)
    return _PlaceholderOnFailure(correct.client, correct.model, correct.threshold_iterations, correct.keep_turns)


def CrashesOnFault(settings):
    """Summarizes through /v1/responses/compact and lets its errors escape (CORE-10)."""
    correct = compacting_factory(settings)
    return _Unguarded(correct.client, correct.model, correct.threshold_iterations, correct.keep_turns)


class ReasoningContentStripped(_Responses):
    """Keeps reasoning items by id but sends them back with ``encrypted_content: null``, as a
    client storing only ids does (RESP-9: with store=false the API answers "Item with id 'rs_...'
    not found", vercel/ai#7543)."""

    def defect(self, out):
        return [{**item, "encrypted_content": None} if _kind(item) == "reasoning" and item.get("encrypted_content") else item for item in out]


class SetOrdered(_Responses):
    """Returns its kept items in the order of a Python ``set`` of their JSON: the same in one
    process, another in the next (CORE-8 across processes; string hashing is salted per process)."""

    def defect(self, out):
        return [json.loads(text) for text in {json.dumps(item, sort_keys=True) for item in out}]


class _KeptAndFolded(ResponsesCompacting):
    def compact(self, items, *, iteration):
        out = super().compact(items, iteration=iteration)
        earlier = [item for item in items if _kind(item) == "compaction" and item not in out]
        fresh = [item for item in out if _kind(item) == "compaction" and item not in items]
        if not earlier or not fresh:
            return out
        at = out.index(fresh[0])
        return out[:at] + earlier + out[at:]


def KeptAndFolded(settings):
    """Sends the earlier compaction item to the compact endpoint with the older items and keeps it
    too, beside the new compaction item that folds it (RESP-5: the earlier summary stands twice)."""
    correct = compacting_factory(settings)
    return _KeptAndFolded(correct.client, correct.model, correct.threshold_iterations, correct.keep_turns)


class _CompactedItemsResent(ResponsesCompacting):
    def compact(self, items, *, iteration):
        out = super().compact(items, iteration=iteration)
        fresh = [j for j, item in enumerate(out) if _kind(item) == "compaction" and item not in items]
        if not fresh:
            return out
        folded = [item for item in items if item not in out and _kind(item) != "message"]
        return out[: fresh[-1]] + folded + out[fresh[-1] :]


class _SearchLosesCalledTool(ResponsesCompacting):
    def compact(self, items, *, iteration):
        out = super().compact(items, iteration=iteration)
        called = [i.get("name") for i in items if _kind(i) == "function_call"]
        if out == items or not called:
            return out
        search = {"type": "tool_search_call", "id": "tsc_broken", "call_id": "call_broken_search", "execution": "client", "status": "completed", "arguments": {"queries": [called[0]]}}
        found = {"type": "tool_search_output", "call_id": "call_broken_search", "execution": "client", "status": "completed", "tools": []}
        return [*out, search, found]


def SearchLosesCalledTool(settings):
    """After its compaction, searches for a tool the input called and finds nothing (RESP-32: the tool a compaction
    took the discovery of is no longer findable; pydantic/pydantic-ai#7189)."""
    correct = compacting_factory(settings)
    return _SearchLosesCalledTool(correct.client, correct.model, correct.threshold_iterations, correct.keep_turns)


def CompactedItemsResent(settings):
    """Keeps the older calls, outputs and reasoning items it sent the compact endpoint, before the compaction
    item standing for them (RESP-20: the API reads both, so the compaction reduces nothing; pydantic/pydantic-ai#7224)."""
    correct = compacting_factory(settings)
    return _CompactedItemsResent(correct.client, correct.model, correct.threshold_iterations, correct.keep_turns)


class _KeepsReturnedIds(ResponsesCompacting):
    def compact(self, items, *, iteration):
        out = super().compact(items, iteration=iteration)
        named = {json.dumps({"type": "message", **{k: v for k, v in item.items() if k != "id"}}, sort_keys=True): item["id"] for item in items if item.get("role") == "assistant" and item.get("id")}
        return [{**item, "id": named[key]} if (key := json.dumps(item, sort_keys=True)) in named and item not in items else item for item in out]


def KeepsReturnedIds(settings):
    """Keeps the compact endpoint's output as gpt-5.4 returns it, its assistant messages with their ids
    and without the reasoning items before them (openai/openai-agents-python#2727): the next
    responses.create is answered "Item 'msg_…' of type 'message' was provided without its required
    'reasoning' item" (RESP-3)."""
    correct = compacting_factory(settings)
    return _KeepsReturnedIds(correct.client, correct.model, correct.threshold_iterations, correct.keep_turns)


class _ClearedOnFailure(ResponsesCompacting):
    def compact(self, items, *, iteration):
        starts = _turn_starts(items)
        if iteration < self.threshold_iterations or _pending(items) or len(starts) <= self.keep_turns:
            return list(items)
        kept = [item for item in items if _kind(item) == "message" and item.get("role") in ("system", "developer")]
        try:
            compacted = self.client.responses.compact(model=self.model, input=[i for i in items if i not in kept])
        except openai.OpenAIError:
            return kept  # the session was cleared before the replacement was written
        return kept + [item.model_dump(exclude_none=True, warnings=False) for item in compacted.output]


def ClearedOnFailure(settings):
    """Clears its items before asking the compact endpoint and writes back only what came back: a
    failed call leaves nothing but the system prompt (openai/openai-agents-python#3116)."""
    correct = compacting_factory(settings)
    return _ClearedOnFailure(correct.client, correct.model, correct.threshold_iterations, correct.keep_turns)


class _BedrockWindow(AnthropicTruncating):
    # not a ClassVar: the example it extends declares an instance-style attribute
    capabilities: dict[str, Any] = {"wire_format": "anthropic-messages", "providers": ["anthropic", "bedrock-converse"]}  # noqa: RUF012

    def compact(self, request, *, iteration):
        out = super().compact(request, iteration=iteration)
        if out == request:
            return out
        messages = request["messages"]
        assistants = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
        return {**out, "messages": messages[assistants[-2] :]} if len(assistants) >= 2 else out


def BedrockWindow(settings):
    """Declares Bedrock Converse and keeps a window that starts at an assistant turn (Strands'
    sliding window, strands-agents/sdk-typescript#727): Bedrock answers "A conversation must start
    with a user message" (CORE-17)."""
    correct = anthropic_factory(settings)
    return _BedrockWindow(correct.threshold_iterations, correct.max_context_tokens, correct.keep_turns)


class _ClearsResults(AnthropicTruncating):
    """Clears the content of every tool result but the newest round's in place (LangChain's
    ``ClearToolUsesEdit``), rebuilding each block; ``keeps_mark`` says whether it keeps ``is_error``."""

    keeps_mark = True

    def compact(self, request, *, iteration):
        messages = request["messages"]
        fires = iteration >= self.threshold_iterations or self.estimate_tokens(request) >= self.max_context_tokens
        holders = [i for i, m in enumerate(messages) if isinstance(m["content"], list) and any(b.get("type") == "tool_result" for b in m["content"])]
        if not fires or len(holders) < 2 or anthropic_format.in_flight(request):
            return dict(request)
        out = copy.deepcopy(request)
        for i in holders[:-1]:
            out["messages"][i]["content"] = [self.cleared(b) if b.get("type") == "tool_result" else b for b in messages[i]["content"]]
        return out

    def cleared(self, block):
        mark = {"is_error": True} if self.keeps_mark and block.get("is_error") is True else {}
        return {"type": "tool_result", "tool_use_id": block["tool_use_id"], "content": "[cleared]", **mark}


class _ClearsErrorMarks(_ClearsResults):
    keeps_mark = False


def ClearsResults(settings):
    """Clears old tool results in place and keeps each failed call's ``is_error`` (CORE-62's correct twin)."""
    correct = anthropic_factory(settings)
    return _ClearsResults(correct.threshold_iterations, correct.max_context_tokens, correct.keep_turns)


def ClearsErrorMarks(settings):
    """Clears old tool results in place, rebuilding each block of its call id and new content only, so a
    failed call's ``is_error`` is dropped (CORE-62: deepagents PR #1482, an evicted ToolMessage rebuilt
    without its status)."""
    correct = anthropic_factory(settings)
    return _ClearsErrorMarks(correct.threshold_iterations, correct.max_context_tokens, correct.keep_turns)


CONTROLS: dict[str, Control] = {
    "OrphanOutput": Control("RESP-1", ("core",), r"function_call_output call_\w+\): no function_call with call_id"),
    "UnansweredCall": Control("RESP-2", ("core",), r"function_call call_\w+\): 0 function_call_output items after it"),
    "OrphanCustomOutput": Control("RESP-1", ("core",), r"custom_tool_call_output call_\w+\): no custom_tool_call with call_id"),
    "UnansweredCustomCall": Control("RESP-2", ("core",), r"custom_tool_call call_\w+\): 0 custom_tool_call_output items after it"),
    "CutsIntoOpenTurn": Control("ANTH-3", ("core",), r"opens the turn the request ends in \(a tool loop\) with a '\w+' block, not the thinking block", reason_id="final-turn-without-thinking"),
    "KeepsReturnedIds": Control("RESP-3", ("core",), r"\(message assistant\) was kept with its id 'msg_\w+' without the reasoning item that preceded it", reason_id="item-without-its-reasoning"),
    "ReasoningSeparated": Control("RESP-3", ("core",), r"was kept with its id '\w+' without the reasoning item that preceded it", reason_id="item-without-its-reasoning"),
    "CompactionAltered": Control("RESP-4", ("core",), r"compaction item '\w+' was altered"),
    "CompactionDuplicated": Control("RESP-5", ("core",), r"\(compaction \w+\) duplicates compaction item"),
    "ChatRoleItem": Control("RESP-6", ("core",), r"unknown role 'tool'"),
    "DeveloperDropped": Control("RESP-7", ("core",), r"system/developer message item \d+ .* is missing or altered"),
    "SearchLosesCalledTool": Control("RESP-32", ("core",), r"\(tool_search_call call_broken_search\) searches for '\w+', which the input called, and its tool_search_output loads no tool", reason_id="called-tool-unfindable"),
    "CompactsPendingCall": Control("RESP-8", ("core",), r"a history waiting for a tool result was changed"),
    "ResultWithoutUse": Control("ANTH-1", ("core",), r"tool_result '\w+' has no tool_use in the message before it"),
    "UseWithoutResult": Control("ANTH-2", ("core",), r"tool_use '\w+' has 0 tool_result blocks in the next message"),
    "ThinkingModified": Control("ANTH-3", ("core",), r"the thinking blocks of the turn with tool_use .* were altered, dropped or reordered"),
    "SystemMovedIntoMessages": Control("ANTH-4", ("core",), r"the top-level system was dropped"),
    "SystemRoleMessage": Control("ANTH-5", ("core",), r"role 'system' \(only user and assistant"),
    "CompactsPendingUse": Control("ANTH-6", ("core",), r"a history waiting for a tool result was changed"),
    "StreamedCompactionBlock": Control("ANTH-7", ("core",), r"compaction\.index: Extra inputs are not permitted", reason_id="compaction-block-extra-field"),
    "ClearsErrorMarks": Control("CORE-62", ("core",), r"sends the result of call '\w+', which the input marks as an error \(is_error: true\), with its content replaced \('\[cleared\]'\) and without the mark \(no is_error\)", reason_id="error-mark-dropped"),
    "CrashesOnFault": Control("CORE-10", ("core",), r"compact raised \w+Error under summarizer fault"),
    "PlaceholderOnFailure": Control("CORE-11", ("core",), r"item \d+ \(message user\) is new although the summarizer failed", reason_id="failed-summary"),
    "ReasoningContentStripped": Control("RESP-9", ("core",), r"reasoning item 'rs_\w+' was kept without its encrypted_content", reason_id="reasoning-content-lost"),
    "KeptAndFolded": Control("RESP-5", ("core",), r"is kept beside item \d+ \(compaction cmp_testdouble_\w+\), the new compaction item that folds it", reason_id="compaction-item-kept-and-folded"),
    "SetOrdered": Control("CORE-8", ("core",), r"another process gave a different output", reason_id="nondeterministic-across-processes"),
    "ClearedOnFailure": Control("CORE-16", ("core",), r"nothing but the system prompt is left", run=("CORE-11",), reason_id="history-emptied"),
    "BedrockWindow": Control("CORE-17", ("core",), r"bedrock-converse rejects it with HTTP 400 'A conversation must start with a user message", reason_id="bedrock-converse:first-turn-not-user"),
}
"""Each broken factory, the clause that must reject it and the reason that clause must give."""


# --- the format-independent profile clauses, run in the target's own format (SPEC Part A,
# "Wire formats": which clauses run in every format). tests/test_negative_controls.py runs them
# in-process, like the chat-completions controls of broken.compactors.


class _LateTrigger(ResponsesTruncating):
    def compact(self, items, *, iteration):
        on_time = iteration == self.threshold_iterations and self.estimate_tokens(items) < self.max_context_tokens
        return list(items) if on_time else super().compact(items, iteration=iteration)


def LateTrigger(settings):
    """Responses items: fires one iteration late (iteration > T instead of >= T; TRIG-4's boundary)."""
    correct = truncating_factory(settings)
    return _LateTrigger(correct.threshold_iterations, correct.max_context_tokens, correct.keep_turns)


class _TokensIgnored(AnthropicTruncating):
    def compact(self, request, *, iteration):
        return dict(request) if iteration < self.threshold_iterations else super().compact(request, iteration=iteration)


def TokensIgnored(settings):
    """Anthropic messages: fires on iterations only, never on the token estimate (TRIG-3)."""
    correct = anthropic_factory(settings)
    return _TokensIgnored(correct.threshold_iterations, correct.max_context_tokens, correct.keep_turns)


class _TruncatesOnFailure(ResponsesCompacting):
    def compact(self, items, *, iteration):
        out = super().compact(items, iteration=iteration)
        if out != items or iteration < self.threshold_iterations:
            return out
        starts = _turn_starts(items)
        return items[starts[-self.keep_turns] :] if len(starts) > self.keep_turns else out


def TruncatesOnFailure(settings):
    """Responses items: when the compact endpoint fails, drops the older items anyway (FAIL-1: silent loss)."""
    correct = compacting_factory(settings)
    return _TruncatesOnFailure(correct.client, correct.model, correct.threshold_iterations, correct.keep_turns)


def WrongSummaryModel(settings):
    """Responses items: asks the compact endpoint for a hard-coded model, not settings.model (SUM-5)."""
    correct = compacting_factory(settings)
    return ResponsesCompacting(correct.client, "gpt-4o-mini", correct.threshold_iterations, correct.keep_turns)


class _NoEvents(ResponsesTruncating):
    profiles = {"core", "events"}  # noqa: RUF012 - not a ClassVar: the example it extends declares an instance-style attribute


def NoEvents(settings):
    """Responses items: claims the events profile but keeps no last_event (EVT-1)."""
    correct = truncating_factory(settings)
    return _NoEvents(correct.threshold_iterations, correct.max_context_tokens, correct.keep_turns)


PROFILE_CONTROLS: dict[str, Control] = {
    "LateTrigger": Control("TRIG-4", ("trigger",), r"iteration \d+ equals T=\d+, yet the history was not compacted"),
    "TokensIgnored": Control("TRIG-3", ("trigger",), r"estimated tokens >= max_context_tokens=\d+ .*not compacted"),
    "TruncatesOnFailure": Control("FAIL-1", ("failure",), r"after a 429 fault the output differs"),
    "WrongSummaryModel": Control("SUM-5", ("summary",), r"settings\.model is"),
    "NoEvents": Control("EVT-1", ("events",), r"no last_event after a compaction"),
}
"""Each broken factory of another wire format, and how the profile clause run in that format rejects it."""
