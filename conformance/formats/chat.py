"""OpenAI chat-completions: validity, pairing, rounds, text and clause checks (SPEC CORE-1..CORE-11, SUM-1).

A history is the message list ``chat.completions.create(messages=...)`` takes: ``system`` and
``developer`` messages, ``user`` messages, ``assistant`` messages (text, ``tool_calls``, or a
``refusal``) and ``tool`` messages answering a call by ``tool_call_id``. A round is a message and
the tool messages after it (SPEC ROUND-1, read by the verifier: the reference splits its own,
as SPEC ENT-3 decides).

Each ``check_*`` returns ``None`` when its clause holds, else a `Violation`: a one-line reason
that carries the id of the defect (``reason_id``, SPEC Part A "Reason ids").
They never raise on a malformed output: judging malformed output is their job. The Hypothesis
strategies are in `conformance.histories`, imported when drawn: judging imports no Hypothesis.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from compaction_suite.message import SYSTEM_ROLES, Message
from compaction_suite.text import SUMMARY_PREFIX, chars_per_four

from ..clauses import every_output
from ..clauses import in_flight as in_flight_clause
from ..violation import Violation
from . import WireFormat, failed_summary, kept_or_marked, same, strings

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

ROLES = SYSTEM_ROLES | {"user", "assistant", "tool"}



def text(message: Any) -> str:
    """A message's text: string content or its text parts."""
    return content_text(message.get("content") if isinstance(message, dict) else None)


def content_text(content: Any) -> str:
    """The text of a message's ``content``: the string, or its ``text`` parts joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""



def is_summary(message: Any) -> bool:
    return isinstance(message, dict) and message.get("role") == "user" and text(message).startswith(SUMMARY_PREFIX)



def call_ids(message: Any) -> list[Any]:
    """The ids of ``message``'s tool calls, as they are (judging their type is the validator's job)."""
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    return [c.get("id") for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []



def where(messages: Sequence[Any], i: int) -> str:
    """``message 3 (tool)``: how a reason points at the message that is wrong."""
    message = messages[i] if 0 <= i < len(messages) else None
    role = message.get("role") if isinstance(message, dict) else type(message).__name__
    return f"message {i} ({role})"



def in_flight(messages: Any) -> bool:
    """Whether the last round of ``messages`` has an unanswered tool call (SPEC CORE-9, ROUND-3)."""
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        return False
    last = rounds(messages)[-1]
    answered = {messages[i].get("tool_call_id") for i in last[1:]}
    return any(call_id not in answered for call_id in call_ids(messages[last[0]]))



def rounds(messages: Sequence[Message]) -> list[list[int]]:
    """Indices grouped into rounds: a tool message joins the round before it."""
    groups: list[list[int]] = []
    for i, message in enumerate(messages):
        if message.get("role") == "tool" and groups:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups



def non_system_rounds(messages: Sequence[Message]) -> list[list[Message]]:
    return [[messages[i] for i in r] for r in rounds(messages) if messages[r[0]].get("role") not in SYSTEM_ROLES]



def chars4(messages: Sequence[Message]) -> int:
    """chars/4 over what the model reads (SPEC TOK-1), for compactors without an estimate.

    The text read is `compaction_suite.text.message_text`, one definition for the
    verifier, the test double and the reference."""
    return chars_per_four(messages)



def readable_text(messages: Sequence[Message]) -> str:
    """Everything a model reads in ``messages``: texts, and the strings inside tool-call arguments."""
    parts = [text(m) for m in messages if isinstance(m, dict)]
    for m in messages:
        for call in (m.get("tool_calls") or []) if isinstance(m, dict) else []:
            arguments = str((call.get("function") or {}).get("arguments", ""))
            try:
                parts.extend(strings(json.loads(arguments)))
            except ValueError:
                parts.append(arguments)
    return "\n".join(parts)


# --- core



def check_tool_results_have_calls(out: Sequence[Message]) -> Violation | None:
    """CORE-1."""
    for r in rounds(out):
        opener = out[r[0]]
        for i in r:
            message = out[i]
            if message.get("role") != "tool":
                continue
            if opener.get("role") != "assistant" or message.get("tool_call_id") not in call_ids(opener):
                return Violation("orphan-tool-result", f"{where(out, i)}: tool result {message.get('tool_call_id')!r} has no matching call in its round")
    return None



def check_calls_have_one_result(out: Sequence[Message]) -> Violation | None:
    """CORE-2."""
    for r in rounds(out):
        answered = [out[i].get("tool_call_id") for i in r[1:]]
        for call_id in call_ids(out[r[0]]):
            if answered.count(call_id) != 1:
                slug = "unanswered-tool-call" if answered.count(call_id) == 0 else "tool-call-answered-twice"
                return Violation(slug, f"{where(out, r[0])}: tool call {call_id!r} has {answered.count(call_id)} results in its round")
    return None



def check_system_kept(history: Sequence[Message], out: Sequence[Message], compacted: bool) -> Violation | None:
    """CORE-3. **Decision** (a system message in the middle of a history): every system message
    is kept verbatim and in order; in a compacted output the *leading* system messages of the
    input (those before its first other message) come first. A system message the input holds
    later may stay where it was among the kept messages (CORE-4's order) or move up front."""
    before = [m for m in history if m.get("role") in SYSTEM_ROLES]
    positions = [i for i, m in enumerate(out) if isinstance(m, dict) and m.get("role") in SYSTEM_ROLES]
    after = [out[i] for i in positions]
    if not same(before, after):
        lost = next((i for i, m in enumerate(history) if m.get("role") in SYSTEM_ROLES and not any(same(m, a) for a in after)), None)
        missing = f"; input {where(history, lost)} is missing or altered" if lost is not None else ""
        return Violation("system-message-dropped" if len(after) < len(before) else "system-message-altered", f"system messages changed: {len(before)} in, {len(after)} out (or their text or order differs){missing}")
    leading = next((i for i, m in enumerate(history) if m.get("role") not in SYSTEM_ROLES), len(history))
    if compacted and positions[:leading] != list(range(leading)):
        moved = next(i for i, p in enumerate(positions[:leading]) if p != i)
        return Violation("system-message-not-first", f"{where(out, positions[moved])} is a leading system message of the input but not at the head of the compacted output")
    return None



def kept_indices(history: Sequence[Message], out: Sequence[Message], *, system: bool = True, latest: bool = False) -> tuple[dict[int, int], Violation | None]:
    """Match output messages equal to input messages, in order: {output index: input index}.
    Without ``system``, system messages are left out (CORE-3 judges where they go).

    Equal messages recur in real traffic (the same call, with a reused id, in two rounds: CORE-6),
    so an output message may match more than one input message. By default each takes the earliest
    input message it can; with ``latest``, matched from the end, each takes the latest one. Either
    way a message out of order is found, since no matching in order exists."""
    positions: dict[str, list[int]] = {}
    for i, message in enumerate(history):
        positions.setdefault(json.dumps(message, sort_keys=True), []).append(i)
    matched: dict[int, int] = {}
    bound = len(history) if latest else -1
    for j in range(len(out) - 1, -1, -1) if latest else range(len(out)):
        message = out[j]
        if not system and isinstance(message, dict) and message.get("role") in SYSTEM_ROLES:
            continue
        candidates = positions.get(json.dumps(message, sort_keys=True), [])
        fits = [i for i in candidates if (i < bound if latest else i > bound)]
        if candidates and not fits:
            return matched, Violation("message-out-of-order", f"output {where(out, j)} is input message {candidates[0]} moved out of order")
        if fits:
            matched[j] = bound = fits[-1] if latest else fits[0]
    return matched, None



def check_rounds_whole(history: Sequence[Message], out: Sequence[Message]) -> Violation | None:
    """CORE-4, on the non-system messages (a system message moved up front is CORE-3's decision).

    A round is judged cut only when it is cut under both matchings of `kept_indices`: an output
    that keeps the newest of two equal rounds is whole, whichever copy its messages are read as."""
    found = None
    for latest in (False, True):
        matched, problem = kept_indices(history, out, system=False, latest=latest)
        if problem:
            return problem
        cut = _round_cut(history, out, matched)
        if cut is None:
            return None
        found = found or cut
    return found



def _round_cut(history: Sequence[Message], out: Sequence[Message], matched: dict[int, int]) -> Violation | None:
    """The first round of which ``matched`` keeps some messages but not the rest (nor a stand-in in place)."""
    kept = set(matched.values())
    order = sorted((i, j) for j, i in matched.items())  # (input index, output index), both increasing
    for r in rounds(history):
        if not kept.intersection(r):
            continue
        span = _output_span(order, r[0], r[-1], len(out))
        for i in r:
            if i not in kept and not _replaced_in_place(history[i], out[span]):
                return Violation("round-split", f"input {where(history, i)} is missing while the rest of its round (messages {r[0]}..{r[-1]}) was kept")
    return None



def _output_span(order: list[tuple[int, int]], first: int, last: int, size: int) -> slice:
    """The output messages between the kept message before input ``first`` and the kept message
    after input ``last``: where a round's messages, kept or replaced, must be."""
    cut = bisect.bisect_left(order, (first, -1))
    after = bisect.bisect_right(order, (last, size))
    return slice(order[cut - 1][1] + 1 if cut else 0, order[after][1] if after < len(order) else size)



def _replaced_in_place(message: Message, span: Sequence[Message]) -> bool:
    """CORE-4's "replaced in place": a message of the same role for the same tool calls (a masked
    result), among the output messages where the round is. Ids are matched there only: a later
    round may reuse an id (CORE-6)."""
    if message.get("role") == "tool":
        return any(m.get("role") == "tool" and m.get("tool_call_id") == message.get("tool_call_id") for m in span)
    ids = sorted(call_ids(message))
    return bool(ids) and any(m.get("role") == "assistant" and sorted(call_ids(m)) == ids for m in span)



def check_valid_messages(out: Any, given: Sequence[Any] = ()) -> Violation | None:
    """CORE-6. Tool-call ids must differ within one assistant message (the API pairs a
    round's results with its calls by id); a later round may reuse an id.

    **Decision** (SPEC CORE-6): a message returned identical to one of ``given`` (the input)
    is not judged: its shape is the caller's, which the provider accepted, and the rules are
    per message, so a verbatim copy is exactly as valid as its original (a role or part this
    version of the suite does not know passes through without a false verdict)."""
    if not isinstance(out, list):
        return Violation("invalid-output:not-a-list", f"the output is a {type(out).__name__}, not a list")
    for i, m in enumerate(out):
        problem = _invalid_message(out, i)
        if problem and not any(same(m, g) for g in given):
            return problem
    return None



def _invalid_message(out: Sequence[Any], i: int) -> Violation | None:
    m = out[i]
    if not isinstance(m, dict):
        return Violation("invalid-message:not-a-dict", f"message {i} is a {type(m).__name__}, not a dict")
    role = m.get("role")
    if role not in ROLES:
        return Violation("invalid-message:unknown-role", f"message {i} has unknown role {role!r}")
    if role != "assistant" and not isinstance(m.get("content"), (str, list)):
        return Violation("invalid-message:no-content", f"message {i} ({role}) has no string or list content")
    if role == "assistant" and m.get("content") is None and not m.get("tool_calls") and not m.get("refusal"):
        return Violation("invalid-message:empty-assistant", f"message {i} (assistant) has neither content, tool_calls nor refusal")
    if role == "tool" and not isinstance(m.get("tool_call_id"), str):
        return Violation("invalid-message:no-tool-call-id", f"message {i} (tool) has no tool_call_id")
    seen: set[str] = set()
    for call in m.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not isinstance(function, dict):
            return Violation("invalid-message:malformed-tool-call", f"{where(out, i)} has a malformed tool call")
        if call["id"] in seen:
            return Violation("invalid-message:duplicate-tool-call-id", f"{where(out, i)} repeats tool_call id {call['id']!r} among its own calls")
        seen.add(call["id"])
    return None


# --- summary



def expected_summary_shape(history: Sequence[Message], k: int, min_messages: int = 0) -> tuple[list[Message], list[Message]]:
    """(system messages, the kept tail) of an input: the last ``k`` non-system rounds, extended
    to whole rounds until it holds at least ``min_messages`` messages, an earlier summary message
    aside (SUM-4: it is folded into the new summary, never kept beside it).

    **Decision** (SUM-1 with STRUCT-4): a target claiming ``summary`` and ``structured`` keeps
    the longer of the two tails, ``min_messages=10``; one claiming ``summary`` alone keeps
    exactly ``k`` rounds."""
    system = [m for m in history if m.get("role") in SYSTEM_ROLES]
    groups = [g for g in non_system_rounds(history) if not (len(g) == 1 and is_summary(g[0]))]  # an earlier summary is folded, not kept (SUM-4)
    start = max(len(groups) - k, 0) if k else len(groups)
    while start > 0 and sum(len(g) for g in groups[start:]) < min_messages:
        start -= 1
    return system, [m for g in groups[start:] for m in g]



def check_summary_shape(history: Sequence[Message], out: Sequence[Message], k: int, min_messages: int = 0) -> Violation | None:
    """SUM-1."""
    system, tail = expected_summary_shape(history, k, min_messages)
    if len(out) != len(system) + 1 + len(tail):
        return Violation("summary-shape:length", f"expected {len(system)} system + 1 summary + {len(tail)} tail messages, got {len(out)} messages")
    if sum(map(is_summary, out)) != 1:
        return Violation("summary-shape:summary-count", f"expected exactly one summary message, found {sum(map(is_summary, out))}")
    if not is_summary(out[len(system)]):
        return Violation("summary-shape:summary-misplaced", f"{where(out, len(system))} should be the summary")
    return None


# --- what an output holds of its input (CORE-11, CORE-12, CORE-14 in chat-completions)



def said(message: Any) -> str:
    """What a message says for a summary to carry: its text (string content or text parts); a
    call's arguments and a refusal aside (SPEC CORE-12 Decision)."""
    return text(message)



def corresponds(before: Any, after: Any) -> bool:
    """Whether output message ``after`` is input message ``before`` kept: verbatim, or replaced in
    place by a message of the same role for the same tool calls (a masked result, CORE-4)."""
    if same(before, after):
        return True
    if not (isinstance(before, dict) and isinstance(after, dict)) or before.get("role") != after.get("role"):
        return False
    if before.get("role") == "tool":
        return before.get("tool_call_id") == after.get("tool_call_id")
    return bool(call_ids(before)) and sorted(map(str, call_ids(before))) == sorted(map(str, call_ids(after)))



def check_no_failed_summary(history: Sequence[Message], out: Any) -> Violation | None:
    """CORE-11: after a summarizer fault, the output holds no message standing for nothing of the
    input (`corresponds`): it is the input, or the input with messages removed (a truncation
    fallback) or tool results masked in place; no summary of the removed ones was written."""
    if not isinstance(out, list) or same(history, out):
        return None
    for j, message in enumerate(out):
        if not kept_or_marked(history, message, corresponds):
            return failed_summary(where(out, j), message, not said(message).replace(SUMMARY_PREFIX, "").strip())
    return None


def histories(*args: Any, **options: Any) -> SearchStrategy[list[dict[str, Any]]]:
    """`conformance.histories.histories` (same arguments)."""
    from ..histories import histories as drawn

    return drawn(*args, **options)


def structural(history: Any, out: Any) -> dict[str, Violation | None]:
    """CORE-1, CORE-2, CORE-3, CORE-4 and CORE-6 on one output."""
    found: dict[str, Violation | None] = {"CORE-6": check_valid_messages(out, history if isinstance(history, list) else ())}
    if isinstance(out, list) and all(isinstance(m, dict) for m in out):
        found["CORE-1"] = check_tool_results_have_calls(out)
        if not in_flight(history):  # an open call is CORE-9's (SPEC CORE-2 decision)
            found["CORE-2"] = check_calls_have_one_result(out)
        found["CORE-3"] = check_system_kept(history, out, not same(history, out))
        found["CORE-4"] = check_rounds_whole(history, out)
    return found


def length(messages: Any) -> int:
    return len(messages) if isinstance(messages, list) else 0


def well_formed(out: Any) -> bool:
    """A list of dicts: the structural clauses judge only that (CORE-6 judges the rest)."""
    return isinstance(out, list) and all(isinstance(m, dict) for m in out)


def without_system(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m.get("role") not in SYSTEM_ROLES]


def removed(history: list[dict[str, Any]], out: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The input's messages the output does not keep (matched in order, `kept_indices`)."""
    kept = set(kept_indices(history, out)[0].values())
    return [m for i, m in enumerate(history) if i not in kept]


def items(messages: Any) -> list[Any]:
    return list(messages) if well_formed(messages) else []


def role(message: Any) -> str | None:
    return message.get("role") if isinstance(message, dict) else None


FORMAT = WireFormat(
    name="chat-completions", family="CORE", invalid=check_valid_messages, in_flight=in_flight, in_flight_clause=in_flight_clause("chat-completions"), no_failed_summary=check_no_failed_summary,
    structural=structural, histories=histories, length=length, from_chat=list, judged=every_output("chat-completions"),
    well_formed=well_formed, rounds=non_system_rounds, is_summary=is_summary, tokens=chars4,
    without_system=without_system, removed=removed,
    items=items, role=role, said=said, corresponds=corresponds,
)
