"""The OpenAI Responses API input items: validity, pairing, clause checks (SPEC RESP-1..RESP-9, RESP-20).

A history is the list ``responses.create(input=...)`` takes: ``message`` items (roles
``user``, ``assistant``, ``system``, ``developer``; an item with a ``role`` and no ``type`` is a
message too, as the API reads it), ``function_call`` and ``function_call_output`` paired by
``call_id``, ``reasoning`` items (opaque ``encrypted_content``; the API requires each to be
followed by the item it preceded), and ``compaction`` items (the opaque summary the
``/v1/responses/compact`` endpoint returns). Other item types the API knows (hosted tool
calls, item references, ...) are carried as opaque items: valid, never judged.

Each ``check_*`` returns None when its clause holds, else a `Violation` (a one-line reason naming
the item index, and the defect's ``reason_id``); none raises on a malformed output.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from compaction_suite.message import SYSTEM_ROLES
from compaction_suite.text import SUMMARY_PREFIX, chars_per_four

from ..clauses import every_output
from ..clauses import in_flight as in_flight_clause
from ..response_chains import duplicate_text, named_twice, repeated_item
from ..summarizer_apis import compaction_digest, folded, responses_messages
from ..tool_search import loaded, words
from ..violation import Violation
from . import WireFormat, failed_summary, kept_or_marked, same
from .chat import content_text

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

ROLES = ("user", "assistant", "system", "developer")
ANSWERED_BY = {"function_call": "function_call_output", "custom_tool_call": "custom_tool_call_output"}
"""A call item's type -> the output item type that answers it by ``call_id`` (RESP-1, RESP-2,
RESP-8). The API rejects either call unanswered ("No tool output found for function call ...",
"... for custom tool call ...": quoted in Soju06/codex-lb#1168, July 2026); Codex's
``apply_patch`` is a custom tool."""
ANSWERS = {output: call for call, output in ANSWERED_BY.items()}
JUDGED = ("message", "reasoning", "compaction", *ANSWERED_BY, *ANSWERS)
HOSTED_CALLS = ("mcp_call", "code_interpreter_call", "image_generation_call", "shell_call")
"""The hosted tool call items a model emits (a remote MCP server's call with its output, the code
interpreter's, image generation's, the shell tool's): each carries the ``id`` the API gave it, and one
emitted after a reasoning item is paired with it as a message or function call is (RESP-3: "a bare
mcp_call is rejected" once its reasoning is gone, Agent Framework's own words at 1.10.0,
agent_framework_openai/_chat_client.py; microsoft/agent-framework#6883, fixed by #6907)."""
PROGRAM_ITEMS = ("program", "program_output")
"""A hosted program's items (programmatic tool calling): the ``program`` (its JavaScript ``code``, an opaque
``fingerprint`` "that must be round-tripped") and the ``program_output`` answering it by ``call_id`` (its
``result``), with, between them, the function calls whose ``caller`` is ``{"type": "program", "caller_id":
...}`` and their outputs: openai 3.57.0's ``types/responses/response_input_item.py`` (``Program``,
``ProgramOutput``, ``FunctionCallOutputCaller``), as openai-agents 0.19.0+ stores them in its session."""
OPAQUE = (
    "item_reference", *PROGRAM_ITEMS, "file_search_call", "web_search_call", "computer_call", "computer_call_output",
    "local_shell_call", "local_shell_call_output", "shell_call_output",
    "mcp_list_tools", "mcp_approval_request", "mcp_approval_response", *HOSTED_CALLS,
    "tool_search_call", "tool_search_output", "additional_tools",
)
"""Item types the Responses API accepts in ``input`` whose own fields no clause here judges (a hosted
call's pairing with its reasoning is RESP-3's, as any item's). Tool search's items (a ``tool_search_call``,
its ``tool_search_output`` loading deferred tools, and an ``additional_tools`` item declaring tools mid-input)
are the input item types of openai 3.57.0 (``types/responses/response_input_item_param.py``: ``ToolSearchCall``,
``AdditionalTools``; ``response_tool_search_output_item_param_param.py``); pydantic-ai sends them with deferred tools (RESP-32)."""
PART_TYPES = ("input_text", "input_image", "input_file", "input_audio", "output_text", "refusal")

Item = dict[str, Any]


def kind(item: Any) -> str | None:
    """An item's type; a dict with a ``role`` and no ``type`` is a ``message`` (EasyInputMessage)."""
    if not isinstance(item, dict):
        return None
    if "type" not in item and "role" in item:
        return "message"
    return item.get("type") if isinstance(item.get("type"), str) else None


def where(items: Sequence[Any], i: int) -> str:
    """``item 3 (function_call call_2)``: how a reason points at the item that is wrong."""
    item = items[i] if 0 <= i < len(items) else None
    label = kind(item) or type(item).__name__
    if label == "message" and isinstance(item, dict):
        label += f" {item.get('role')}"
    elif isinstance(item, dict) and item.get("call_id") is not None:
        label += f" {item.get('call_id')}"
    elif isinstance(item, dict) and item.get("id") is not None:
        label += f" {item.get('id')}"
    return f"item {i} ({label})"


def _items(out: Any) -> list[Item] | None:
    return out if isinstance(out, list) and all(isinstance(i, dict) for i in out) else None


def calls(items: Sequence[Item]) -> list[tuple[str, Any]]:
    """Each call item as (its type, its ``call_id``)."""
    return [(kind_, i.get("call_id")) for i in items if (kind_ := kind(i)) in ANSWERED_BY]


def outputs(items: Sequence[Item]) -> list[tuple[str, Any]]:
    """Each output item as (the type of call it answers, its ``call_id``): comparable with `calls`."""
    return [(ANSWERS[kind_], i.get("call_id")) for i in items if (kind_ := kind(i)) in ANSWERS]


def in_flight(items: Any) -> bool:
    """Whether a call (``function_call``, ``custom_tool_call``) has no output yet (a local tool still running)."""
    found = _items(items) or []
    answered = set(outputs(found))
    return any(call not in answered for call in calls(found))


def length(items: Any) -> int:
    return len(items) if isinstance(items, list) else 0


def well_formed(out: Any) -> bool:
    """A list of item objects (RESP-6 judges the rest)."""
    return _items(out) is not None


def _is_system(item: Item) -> bool:
    return kind(item) == "message" and item.get("role") in SYSTEM_ROLES


def _is_assistant_message(item: Item) -> bool:
    return kind(item) == "message" and item.get("role") == "assistant"


def _joins(item: Item, previous: Item) -> bool:
    """Whether ``item`` continues the round ``previous`` is in: an output answers its call, the item a
    reasoning item precedes, parallel calls and the calls after an assistant text (one chat-completions
    assistant message with ``tool_calls``, SPEC ROUND-1)."""
    if kind(item) in ANSWERS or kind(previous) == "reasoning":
        return True
    return kind(item) in ANSWERED_BY and (kind(previous) in ANSWERED_BY or _is_assistant_message(previous))


def rounds(items: Any) -> list[list[Item]]:
    """SPEC ROUND-1 on items, system/developer messages aside: a user message, an earlier
    ``compaction`` item, or an assistant turn (its reasoning, text and calls, and the calls' outputs)."""
    found: list[list[Item]] = []
    previous: Item | None = None
    for item in _items(items) or []:
        if _is_system(item):
            previous = None
            continue
        if found and previous is not None and _joins(item, previous):
            found[-1].append(item)
        else:
            found.append([item])
        previous = item
    return found


def is_summary(item: Any) -> bool:
    """An earlier compaction: a provider ``compaction`` item, or seed 000's ``[Context Summary]`` user message."""
    if kind(item) == "compaction":
        return True
    return kind(item) == "message" and item.get("role") == "user" and _text_of(item.get("content")).startswith(SUMMARY_PREFIX)


def _text_of(content: Any) -> str:
    """The text of a message's content: a string, or its ``input_text``/``output_text`` parts."""
    if isinstance(content, str):
        return content
    return "\n".join(p["text"] for p in content or [] if isinstance(p, dict) and isinstance(p.get("text"), str))


def tokens(items: Any) -> int:
    """SPEC TOK-1's chars/4 over what the model reads of the items (`summarizer_apis.responses_messages`:
    texts, calls, outputs; reasoning and compaction items are opaque)."""
    found = _items(items)
    return chars_per_four(responses_messages({"input": found})) if found is not None else 0


def without_system(items: list[Item]) -> list[Item]:
    return [i for i in items if not _is_system(i)]


def removed(history: Sequence[Item], out: Sequence[Item]) -> list[Item]:
    """The input's items the output does not hold verbatim (each output item matches one input item)."""
    left = [json.dumps(i, sort_keys=True, default=str) for i in out]
    gone: list[Item] = []
    for item in history:
        key = json.dumps(item, sort_keys=True, default=str)
        if key in left:
            left.remove(key)
        else:
            gone.append(item)
    return gone


# --- validity (RESP-6)


def invalid(items: Any, given: Sequence[Any] = ()) -> Violation | None:
    """RESP-6: the shape rules of the Responses API's ``input`` items, unique ``call_id``s and unique
    item ids. Pairing is RESP-1/RESP-2's, reasoning order RESP-3's. An item returned identical to one of
    ``given`` (the input) passes the shape rules: it is the caller's (Decision, SPEC RESP-6); so does an
    id ``given`` already names twice."""
    if not isinstance(items, list):
        return Violation("invalid-output:not-a-list", f"the output is a {type(items).__name__}, not a list of items")
    repeated = repeated_item(items, allowed=named_twice(list(given)))
    if repeated is not None:
        earlier, at, name = repeated
        return Violation("invalid-item:duplicate-id", f"{where(items, at)}: id {name!r} names {where(items, earlier)} again; the API refuses it: {duplicate_text(name)!r}")
    seen: set[str] = set()
    for i, item in enumerate(items):
        problem = _invalid_item(item)
        if problem and not any(same(item, g) for g in given):
            return Violation(f"invalid-item:{problem.reason_id}", f"{where(items, i)}: {problem}")
        if kind(item) in ANSWERED_BY:
            if item.get("call_id") in seen:
                return Violation("invalid-item:duplicate-call-id", f"{where(items, i)}: call_id {item.get('call_id')!r} repeats an earlier call")
            seen.add(item.get("call_id"))
    return None


def _invalid_item(item: Any) -> Violation | None:
    if not isinstance(item, dict):
        return Violation("not-an-object", f"a {type(item).__name__}, not an item object")
    found = kind(item)
    if found in OPAQUE:
        return None
    if found not in JUDGED:
        return Violation("unknown-type", f"unknown item type {item.get('type')!r}")
    return {
        "message": _invalid_message,
        "function_call": _invalid_call,
        "custom_tool_call": _invalid_call,
        "function_call_output": _invalid_output,
        "custom_tool_call_output": _invalid_output,
        "reasoning": _invalid_reasoning,
        "compaction": _invalid_compaction,
    }[found](item)


def _invalid_message(item: Item) -> Violation | None:
    if item.get("role") not in ROLES:
        return Violation("unknown-role", f"unknown role {item.get('role')!r}")
    content = item.get("content")
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return Violation("no-content", "content is neither a string nor a list of parts")
    for part in content:
        if not isinstance(part, dict) or part.get("type") not in PART_TYPES:
            return Violation("unknown-part", f"a content part of unknown type {part.get('type') if isinstance(part, dict) else part!r}")
        if part["type"] in ("input_text", "output_text") and not isinstance(part.get("text"), str):
            return Violation("part-without-text", f"a {part['type']} part without text")
    return None


def _invalid_call(item: Item) -> Violation | None:
    """A ``function_call`` carries its ``arguments``, a ``custom_tool_call`` its free-form ``input``."""
    kind_ = kind(item)
    for key in ("call_id", "name", "arguments" if kind_ == "function_call" else "input"):
        if not isinstance(item.get(key), str):
            return Violation("malformed-call", f"{kind_} without a string {key}")
    return None


def _invalid_output(item: Item) -> Violation | None:
    kind_ = kind(item)
    if not isinstance(item.get("call_id"), str):
        return Violation("malformed-output", f"{kind_} without a string call_id")
    if not isinstance(item.get("output"), (str, list)):
        return Violation("malformed-output", f"{kind_} without an output (string or list of parts)")
    return None


def _invalid_reasoning(item: Item) -> Violation | None:
    if not isinstance(item.get("summary"), list):
        return Violation("malformed-reasoning", "reasoning item without a summary list")
    if "encrypted_content" in item and not isinstance(item["encrypted_content"], (str, type(None))):
        return Violation("malformed-reasoning", "reasoning item whose encrypted_content is not a string")
    return None


def _invalid_compaction(item: Item) -> Violation | None:
    return None if isinstance(item.get("encrypted_content"), str) else Violation("malformed-compaction", "compaction item without encrypted_content")


# --- pairing (RESP-1, RESP-2)


def check_outputs_have_calls(out: Sequence[Item]) -> Violation | None:
    """RESP-1: an output item (``function_call_output``, ``custom_tool_call_output``) answers a
    call of its kind with its ``call_id`` earlier in the list."""
    called: set[tuple[str, Any]] = set()
    for i, item in enumerate(out):
        if kind(item) in ANSWERED_BY:
            called.update(calls([item]))
        elif kind(item) in ANSWERS and outputs([item])[0] not in called:
            return Violation("orphan-tool-output", f"{where(out, i)}: no {ANSWERS[kind(item) or '']} with call_id {item.get('call_id')!r} before it")
    return None


def check_calls_have_one_output(history: Sequence[Item], out: Sequence[Item]) -> Violation | None:
    """RESP-2: each call item has exactly one output of its kind after it (a call the input left
    pending is RESP-8's)."""
    pending = set(calls(history)) - set(outputs(history))
    for i, item in enumerate(out):
        call = calls([item])
        if not call or call[0] in pending:
            continue
        answers = outputs(out[i + 1 :]).count(call[0])
        if answers != 1:
            return Violation("unanswered-tool-call" if answers == 0 else "tool-call-answered-twice", f"{where(out, i)}: {answers} {ANSWERED_BY[call[0][0]]} items after it, expected 1")
    return None


# --- reasoning (RESP-3)


def _key(item: Item) -> str:
    """How an item is recognised in the output: its id, else its call_id, else its whole JSON."""
    if item.get("id") is not None:
        return f"id:{item['id']}"
    if kind(item) in ANSWERED_BY:
        return f"call:{item.get('call_id')}"
    return "json:" + json.dumps(item, sort_keys=True, default=str)


def check_reasoning_precedes(history: Sequence[Item], out: Sequence[Item]) -> Violation | None:
    """RESP-3: a ``reasoning`` item stays immediately before the item it preceded in the input,
    or both are dropped. The item kept alone is judged only when it carries its ``id``: the API
    pairs an item with its reasoning by the id it gave it ("Item 'msg_…' of type 'message' was
    provided without its required 'reasoning' item"), and takes the same item sent without an id
    as new input (what gpt-5.2's compact endpoint returns, openai/openai-agents-python#2727). A
    hosted tool call (`HOSTED_CALLS`) split from its reasoning has reason ids of its own
    (``hosted-call-without-its-reasoning``, ``reasoning-without-its-hosted-call``): the same rule, a
    defect a strategy grouping only function calls with their reasoning has (agent-framework#6907);
    a hosted call kept without its reasoning where the input's item before that reasoning is another
    call of the response (a function, custom or hosted call) has its own too
    (``hosted-call-without-its-reasoning-after-a-call``): the shape of a grouping that gives the
    reasoning after a call to the call before it (Agent Framework 1.11.0..1.23.0)."""
    position = {_key(item): j for j, item in enumerate(out)}
    for i, item in enumerate(history[:-1]):
        if kind(item) != "reasoning":
            continue
        follower = history[i + 1]
        at, next_at = position.get(_key(item)), position.get(_key(follower))
        if at is not None and at + 1 < len(out) and _key(out[at + 1]) == _key(follower):
            continue  # kept together (an item without id may equal a later one: the place decides)
        hosted = kind(follower) in HOSTED_CALLS
        if at is None and next_at is not None and follower.get("id") is not None:
            return _kept_without_its_reasoning(history, out, i, next_at, hosted)
        if at is not None and next_at is None:
            return Violation("reasoning-without-its-hosted-call" if hosted else "reasoning-without-its-item", f"{where(out, at)} was kept but the item it preceded ({where(history, i + 1)} in the input) was dropped")
        if at is not None and next_at is not None and next_at != at + 1:
            return Violation("reasoning-separated", f"{where(out, at)} is no longer immediately before {where(out, next_at)} (input items {i}, {i + 1})")
    return None


def _kept_without_its_reasoning(history: Sequence[Item], out: Sequence[Item], i: int, next_at: int, hosted: bool) -> Violation:
    """RESP-3's finding for the item after the reasoning at input ``i``, kept (at ``next_at``) without it;
    a hosted call whose reasoning follows another call of the response is named apart (`check_reasoning_precedes`)."""
    follower = history[i + 1]
    said = f"{where(out, next_at)} was kept with its id {follower.get('id')!r} without the reasoning item that preceded it ({where(history, i)} in the input)"
    if hosted and i > 0 and (kind(history[i - 1]) in HOSTED_CALLS or kind(history[i - 1]) in ANSWERED_BY):
        return Violation("hosted-call-without-its-reasoning-after-a-call", f"{said}, a hosted call after another call of its response ({where(history, i - 1)} before its reasoning)")
    return Violation("hosted-call-without-its-reasoning" if hosted else "item-without-its-reasoning", said)


# --- compaction items (RESP-4, RESP-5)


def _compactions(items: Sequence[Item]) -> list[tuple[int, Item]]:
    return [(i, item) for i, item in enumerate(items) if kind(item) == "compaction"]


def check_compaction_opaque(history: Sequence[Item], out: Sequence[Item]) -> Violation | None:
    """RESP-4: a ``compaction`` item from the input is kept byte-identical or dropped (the provider
    reads its encrypted content and nothing else)."""
    earlier = {item.get("id"): item for _, item in _compactions(history) if item.get("id") is not None}
    for j, item in _compactions(out):
        before = earlier.get(item.get("id"))
        if before is not None and not same(before, item):
            return Violation("compaction-item-altered", f"{where(out, j)}: compaction item {item.get('id')!r} was altered")
    return None


def check_compaction_not_duplicated(history: Sequence[Item], out: Sequence[Item]) -> Violation | None:
    """RESP-5: an earlier compaction item is a summary: kept once or folded into the new one,
    never both, never duplicated; a compaction adds at most one compaction item. What a new item
    folds is read from the test double's compaction items (`summarizer_apis.folded`); a real
    provider's cannot be read."""
    seen: dict[str, int] = {}
    for j, item in _compactions(out):
        for key in (f"id:{item.get('id')}" if item.get("id") is not None else None, f"enc:{item.get('encrypted_content')}"):
            if key is not None and key in seen:
                return Violation("compaction-item-duplicated", f"{where(out, j)} duplicates compaction {where(out, seen[key])}")
            if key is not None:
                seen[key] = j
    before, after = len(_compactions(history)), len(_compactions(out))
    if after > before + 1:
        return Violation("compaction-items-added", f"{after} compaction items out of {before} in the input: a compaction adds at most one")
    kept = {compaction_digest(item): j for j, item in _compactions(out) if any(same(item, b) for _, b in _compactions(history))}
    for j, item in _compactions(out):
        twice = [kept[d] for d in folded(item) if d in kept]
        if twice:
            return Violation("compaction-item-kept-and-folded", f"{where(out, twice[0])} is kept beside {where(out, j)}, the new compaction item that folds it: the earlier summary stands twice")
    return None


# --- reasoning items are opaque (RESP-9)


def check_reasoning_opaque(history: Sequence[Item], out: Sequence[Item]) -> Violation | None:
    """RESP-9: a reasoning item of the input (by ``id``) is kept byte-identical, its
    ``encrypted_content`` with it, or dropped: with ``store=false`` the API reads the reasoning from
    that content alone and rejects an item without it (vercel/ai#7543)."""
    earlier = {item.get("id"): item for item in history if kind(item) == "reasoning" and item.get("id") is not None}
    for j, item in enumerate(out):
        before = earlier.get(item.get("id")) if kind(item) == "reasoning" else None
        if before is None or same(before, item):
            continue
        lost = before.get("encrypted_content") and item.get("encrypted_content") != before.get("encrypted_content")
        return Violation("reasoning-content-lost" if lost else "reasoning-item-altered", f"{where(out, j)}: reasoning item {item.get('id')!r} was " + ("kept without its encrypted_content" if lost and not item.get("encrypted_content") else "altered"))
    return None


def check_compacted_items_not_resent(history: Sequence[Item], out: Sequence[Item]) -> Violation | None:
    """RESP-20: before a compaction item the output adds, no call, call output or reasoning item: the
    compaction stands for them, and the API reads and bills every item before a compaction item
    (pydantic/pydantic-ai#7224's live probe), so sending them too reduces nothing. The compact endpoint's
    own window (the input's messages, then its compaction item) and messages kept beside it pass."""
    fresh = [j for j, item in _compactions(out) if not any(same(item, b) for _, b in _compactions(history))]
    if not fresh:
        return None
    last = fresh[-1]
    for j, item in enumerate(out[:last]):
        if kind(item) in (*ANSWERED_BY, *ANSWERS, "reasoning"):
            return Violation("compacted-items-resent", f"{where(out, j)} is sent before {where(out, last)}, the compaction item added, which stands for it: the API reads and bills both, so the compaction reduces nothing")
    return None


def check_called_tools_findable(history: Sequence[Item], out: Sequence[Item]) -> Violation | None:
    """RESP-32: a client tool search the output adds (a ``tool_search_call`` with ``execution: "client"`` not in
    the input) that names a function the input called finds it: its ``tool_search_output`` loads that function.
    The compaction took the model's earlier discovery away, not the tool (pydantic/pydantic-ai#7189)."""
    called = {str(i.get("name")) for i in history if kind(i) == "function_call"}
    for j, item in enumerate(out):
        if kind(item) != "tool_search_call" or item.get("execution") != "client" or any(same(item, h) for h in history):
            continue
        named = sorted(called & words(item.get("arguments")))
        answer = next((o for o in out[j + 1 :] if kind(o) == "tool_search_output" and o.get("call_id") == item.get("call_id")), None)
        lost = [n for n in named if answer is not None and n not in loaded(answer)]
        if lost:
            return Violation("called-tool-unfindable", f"{where(out, j)} searches for {', '.join(repr(n) for n in lost)}, which the input called, and its tool_search_output loads {sorted(loaded(answer or {})) or 'no tool'}: the compaction left the model a tool it can no longer find")
    return None


# --- what an output holds of its input (CORE-11, CORE-12, CORE-14 in Responses items)


def said(item: Any) -> str:
    """What an item says for a summary to carry: a message's text, an output's; calls, reasoning
    and compaction items say nothing readable (SPEC CORE-12 Decision)."""
    found = kind(item)
    if found == "message":
        return _text_of(item.get("content"))
    if found in ANSWERS:
        output = item.get("output")
        return output if isinstance(output, str) else _text_of(output)
    return ""


def role(item: Any) -> str | None:
    """A message item's role, else the item's type."""
    return item.get("role") if kind(item) == "message" else kind(item)


def corresponds(before: Any, after: Any) -> bool:
    """Whether output item ``after`` is input item ``before`` kept: verbatim, an output masked in
    place (same kind, same ``call_id``), or a message re-encoded (same role and text: the compact
    endpoint returns the input's user messages as ``input_text`` parts), or a call re-encoded (same
    ``call_id``, name and input, its item ``id`` and ``status`` aside: a client replaying its history
    sends a call without the id of the stored item, as pydantic-ai does, and the model reads the same call)."""
    if same(before, after):
        return True
    if not (isinstance(before, dict) and isinstance(after, dict)) or kind(before) != kind(after):
        return False
    if kind(before) in ANSWERS:
        return before.get("call_id") == after.get("call_id")
    if kind(before) in ANSWERED_BY:
        return all(before.get(key) == after.get(key) for key in ("call_id", "name", "arguments", "input"))
    return kind(before) == "message" and _said(before) == _said(after)


def check_no_failed_summary(history: Any, out: Any) -> Violation | None:
    """CORE-11 in Responses items: after a summarizer fault the output holds no item standing for
    nothing of the input (`corresponds`): no ``compaction`` item or summary message no summary was
    written for."""
    items, before = _items(out), _items(history)
    if items is None or before is None or same(before, items):
        return None
    for j, item in enumerate(items):
        if not kept_or_marked(before, item, corresponds):
            empty = not item.get("encrypted_content") if kind(item) == "compaction" else not said(item).replace(SUMMARY_PREFIX, "").strip()
            return failed_summary(where(items, j), item, empty)
    return None


def _said(item: Item) -> tuple[Any, str]:
    """A message's role and text, whatever its content's encoding (string or parts)."""
    return item.get("role"), _text_of(item.get("content"))


# --- system prompt (RESP-7)


def check_system_kept(history: Sequence[Item], out: Sequence[Item]) -> Violation | None:
    """RESP-7: ``system``/``developer`` message items come back verbatim and in order."""
    before = [i for i in history if kind(i) == "message" and i.get("role") in SYSTEM_ROLES]
    after = [i for i in out if kind(i) == "message" and i.get("role") in SYSTEM_ROLES]
    for n, item in enumerate(before):
        if n >= len(after) or not same(item, after[n]):
            return Violation("system-message-dropped", f"system/developer message {where(history, history.index(item))} is missing or altered in the output")
    if len(after) > len(before):
        return Violation("system-message-added", f"{len(after)} system/developer messages out of {len(before)} in the input")
    return None


def structural(history: Any, out: Any) -> dict[str, Violation | None]:
    """RESP-1..RESP-7, RESP-9, RESP-20 and RESP-32 on one output (SPEC Part A, "Every output")."""
    items, before = _items(out), _items(history)
    found: dict[str, Violation | None] = {"RESP-6": invalid(out, before or ())}
    if items is None or before is None:
        return found
    found["RESP-1"] = check_outputs_have_calls(items)
    found["RESP-2"] = check_calls_have_one_output(before, items)
    found["RESP-3"] = check_reasoning_precedes(before, items)
    found["RESP-4"] = check_compaction_opaque(before, items)
    found["RESP-5"] = check_compaction_not_duplicated(before, items)
    found["RESP-7"] = check_system_kept(before, items)
    found["RESP-9"] = check_reasoning_opaque(before, items)
    found["RESP-20"] = check_compacted_items_not_resent(before, items)
    found["RESP-32"] = check_called_tools_findable(before, items)
    return found


# --- from chat-completions (the generators map their draws with it)


def _parts(content: Any) -> str | list[dict[str, Any]]:
    """chat-completions user content as Responses input parts (text, images and files)."""
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for part in content:
        if part.get("type") == "text":
            parts.append({"type": "input_text", "text": part["text"]})
        elif part.get("type") == "image_url":
            parts.append({"type": "input_image", "image_url": part["image_url"]["url"], "detail": "auto"})
        elif part.get("type") == "file":
            parts.append({"type": "input_file", "filename": part["file"].get("filename"), "file_data": part["file"]["file_data"]})
    return parts


def _output(content: Any) -> str | list[dict[str, Any]]:
    """A tool message's content as a ``function_call_output``'s ``output``: its text, or (media among
    its parts) a list of ``input_text``, ``input_image`` and ``input_file`` parts, which the API takes
    there ("Text, image, or file output of the function tool call", openai-python 3.57's
    ``FunctionCallOutput.output``)."""
    if isinstance(content, list) and any(isinstance(p, dict) and p.get("type") != "text" for p in content):
        return _parts(content)
    return content_text(content)


def from_chat(messages: Sequence[dict[str, Any]]) -> list[Item]:
    """The Responses items a chat-completions history maps to, one to one (a faithful mapping:
    roles, texts, image parts, calls by ``call_id``, results; nothing invented)."""
    items: list[Item] = []
    for m in messages:
        role = m.get("role")
        if role in ("system", "developer", "user"):
            items.append({"type": "message", "role": role, "content": _parts(m.get("content"))})
        elif role == "assistant":
            if m.get("content"):
                items.append({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": content_text(m["content"]), "annotations": []}]})
            for call in m.get("tool_calls") or []:
                fn = call["function"]
                items.append({"type": "function_call", "call_id": call["id"], "name": fn["name"], "arguments": fn["arguments"]})
        elif role == "tool":
            items.append({"type": "function_call_output", "call_id": m["tool_call_id"], "output": _output(m.get("content"))})
    return items


def histories(**options: Any) -> SearchStrategy[list[Item]]:
    """Valid Responses item histories: `conformance.responses_histories.histories` (its keyword
    options), imported when drawn, so judging a history imports no Hypothesis."""
    from ..responses_histories import histories as drawn

    return drawn(**options)


FORMAT = WireFormat(
    name="responses", family="RESP", invalid=invalid, in_flight=in_flight, in_flight_clause=in_flight_clause("responses"), no_failed_summary=check_no_failed_summary,
    structural=structural, histories=histories, length=length, from_chat=from_chat,
    judged=every_output("responses"),
    well_formed=well_formed, rounds=rounds, is_summary=is_summary, tokens=tokens,
    without_system=without_system, removed=removed,
    items=lambda items: _items(items) or [], role=role, said=said, corresponds=corresponds,
)
