"""Hypothesis strategies for OpenAI Responses API input items (SPEC RESP-1..RESP-8).

The chat-completions histories of `conformance.histories`, mapped faithfully by
`conformance.formats.responses.from_chat`, with what a Responses history holds beside them:
``reasoning`` items, earlier summaries as ``compaction`` items, and the shapes real traffic
carries. The rules these histories are judged by are `conformance.formats.responses`'s, which
imports no Hypothesis.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from .formats.responses import ANSWERED_BY, ANSWERS, Item, from_chat, kind, tokens
from .histories import sized_chat, text, with_tool_media
from .oracle import is_summary


def _size(chat: list[dict[str, Any]]) -> tuple[int, int]:
    """(tokens, items) of ``chat`` as items, at least: an earlier summary may become an opaque
    compaction item, which counts no token (SPEC TOK-1)."""
    return tokens(from_chat([m for m in chat if not is_summary(m)])), len(from_chat(chat))


REASONING_PAYLOAD_CHARS = (1_200, 2_400)
"""The length of a reasoning item's ``encrypted_content`` as the API returns it: "a single reasoning
item's ciphertext measures ~1,700 chars" (measured on a gpt-5 model with ``store: false``,
LibreChat-AI/agents#422, 2026-08); drawn around it. `_OPAQUE_TEXT`'s 12-48 bytes are a stand-in
where only the blob's identity matters, not its size."""


def reasoning_payload(seed: int, chars: int) -> str:
    """An opaque ``encrypted_content`` of ``chars`` characters: base64 of bytes drawn from ``seed`` after
    a Fernet token's ``gAAAAAB`` head, as the API's blobs begin. The model never tokenizes it; a
    counter reading it as text counts about 0.68 o200k tokens a character (microsoft/agent-framework#8348)."""
    body = base64.b64encode(random.Random(seed).randbytes(chars)).decode("ascii")
    return ("gAAAAAB" + body)[:chars]


def with_reasoning(items: list[Item], payloads: Iterator[str]) -> list[Item]:
    """``items`` with a reasoning item (its summary, its ``encrypted_content`` the next of ``payloads``)
    before each run of output a reasoning model emits: an assistant message, or a function call not
    following another call or reasoning."""
    out: list[Item] = []
    for item in items:
        previous = kind(out[-1]) if out else None
        starts_output = item.get("role") == "assistant" or (kind(item) == "function_call" and previous not in ("function_call", "reasoning"))
        if starts_output and previous != "reasoning":
            n = sum(kind(i) == "reasoning" for i in out) + 1
            out.append({"type": "reasoning", "id": f"rs_payload_{n:04d}", "summary": [{"type": "summary_text", "text": "Deciding what to do next."}], "encrypted_content": next(payloads)})
        out.append(item)
    return out


_OPAQUE_TEXT = st.binary(min_size=12, max_size=48).map(lambda b: "gAAAAA" + b.hex())
"""An opaque blob as the API returns one; each drawn item appends its own number, since no two
blobs the API returns are equal (RESP-5 reads two equal compaction items as one kept twice)."""
"""Stand-in for provider-encrypted content: opaque, unique per draw."""


@st.composite
def _decorated(draw: st.DrawFn, chat: list[dict[str, Any]], reasoning: bool | None, compaction: bool | None) -> list[Item]:
    """``chat`` as items, with reasoning items before assistant output (as a reasoning model
    emits them), an earlier ``[Context Summary]`` maybe standing as a provider compaction item,
    and the shapes real traffic carries (`_as_sent`)."""
    items = from_chat(chat)
    decorated: list[Item] = []
    custom: set[str] = set()
    hosted: set[str] = set()
    reasons = compacted = 0
    rebuilt = _REBUILT_ITEMS[0]
    for n, item in enumerate(items):
        previous = kind(decorated[-1]) if decorated else None
        starts_output = item.get("role") == "assistant" or (kind(item) == "function_call" and previous not in ANSWERED_BY)
        if starts_output and previous != "reasoning" and (reasoning or (reasoning is None and draw(st.booleans()))):
            reasons += 1
            decorated.append(_reasoning_item(draw, n, reasons))
        is_summary = item.get("role") == "user" and isinstance(item.get("content"), str) and item["content"].startswith("[Context Summary]")
        if rebuilt:
            made = _rebuilt(draw, item, items, hosted)
            if made and kind(made[0]) in HOSTED_KINDS and kind(decorated[-1]) != "reasoning" and (reasoning or (reasoning is None and draw(st.booleans()))):
                reasons += 1  # the model is sampled again after each hosted call the server ran: it reasons before the next
                decorated.append(_reasoning_item(draw, n, reasons))
            decorated += made
            continue
        if is_summary and (compaction or (compaction is None and draw(st.booleans()))):
            compacted += 1
            decorated += draw(_resent_user_messages())
            decorated.append({"type": "compaction", "id": f"cmp_{compacted:04d}", "encrypted_content": draw(_OPAQUE_TEXT) + f"{compacted:04d}"})
            continue
        decorated.append(_as_sent(draw, item, n, custom))
    return decorated


def _reasoning_item(draw: st.DrawFn, n: int, reasons: int) -> Item:
    """The ``reasons``-th reasoning item of a history, before the output drawn from its ``n``-th chat item."""
    return {"type": "reasoning", "id": f"rs_{reasons:04d}", "summary": [{"type": "summary_text", "text": f"Step {n}: decide what to do next."}], "encrypted_content": draw(_OPAQUE_TEXT) + f"{reasons:04d}"}


_CUSTOM_TOOL_CALLS = [True]


def draw_custom_tool_calls(allowed: bool) -> None:
    """Whether the histories drawn from now on may hold custom tool calls: the suite says not for a
    target whose framework records only function calls (SPEC Part A, Declarations: ``tool_calls``)."""
    _CUSTOM_TOOL_CALLS[0] = allowed


_REBUILT_ITEMS = [False]


def draw_rebuilt_items(rebuilt: bool) -> None:
    """Whether the histories drawn from now on are as a framework holds them that rebuilds a Responses
    history item by item into its own messages (SPEC Part A, Declarations: ``responses_items``): see
    `_rebuilt`."""
    _REBUILT_ITEMS[0] = rebuilt


_PROGRAMS = [False]


def draw_programs(held: bool) -> None:
    """Whether the histories drawn from now on may hold a hosted program's transcript (`_programmed`): the
    suite says so for a target whose framework's history holds them (SPEC Part A, Declarations: ``programs``)."""
    _PROGRAMS[0] = held


def program_transcript(calls: list[Item], answers: list[Item], fingerprint: str) -> list[Item]:
    """A round of function calls and their outputs as a hosted program made them (programmatic tool
    calling): the ``program`` (JavaScript calling each tool with the call's arguments, its opaque
    ``fingerprint``), the calls and outputs each with ``caller`` ``{"type": "program", "caller_id": <the
    program's call_id>}``, then the ``program_output`` returning the outputs' text, in the order
    openai-agents 0.19.0+ stores them (`formats.responses.PROGRAM_ITEMS`)."""
    first = str(calls[0]["call_id"])
    program_id = f"program_{first}"
    caller = {"type": "program", "caller_id": program_id}
    said = [a["output"] if isinstance(a["output"], str) else "\n".join(p.get("text", "") for p in a["output"] if isinstance(p, dict)) for a in answers]
    code = "\n".join(f"results.push(await tools.{c['name']}({c['arguments']}));" for c in calls)
    return [
        {"type": "program", "id": f"pg_{first}", "call_id": program_id, "code": f"const results = [];\n{code}\nreturn results;", "fingerprint": fingerprint},
        *({**c, "caller": caller} for c in calls),
        *({**a, "caller": caller} for a in answers),
        {"type": "program_output", "id": f"po_{first}", "call_id": program_id, "result": "\n".join(said), "status": "completed"},
    ]


def _program_rounds(items: list[Item]) -> list[tuple[int, int, int]]:
    """(first call, first output, end) of each answered round made of function calls then their outputs
    alone (no item between, no custom tool call): the rounds a program may have made."""
    found = []
    for last_call, last_output in _answered_rounds(items):
        first = last_call
        while first > 0 and kind(items[first - 1]) in ANSWERED_BY:
            first -= 1
        span = items[first : last_output + 1]
        calls = [i for i in span if kind(i) in ANSWERED_BY]
        if all(kind(i) in ("function_call", "function_call_output") for i in span) and len(calls) == last_call - first + 1:
            found.append((first, last_call + 1, last_output + 1))
    return found


@st.composite
def _programmed(draw: st.DrawFn, items: list[Item]) -> list[Item]:
    """``items``, where programs are drawn (`draw_programs`) and in one history in two, with one answered
    round of function calls (`_program_rounds`) made by a hosted program (`program_transcript`)."""
    if not _PROGRAMS[0] or not draw(st.booleans()):
        return items
    rounds = _program_rounds(items)
    if not rounds:
        return items
    first, outputs, end = rounds[draw(st.integers(0, len(rounds) - 1))]
    return [*items[:first], *program_transcript(items[first:outputs], items[outputs:end], draw(_OPAQUE_TEXT)), *items[end:]]


TINY_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg=="
"""A 1x1 PNG, base64: the ``result`` of a drawn image generation call (the API returns the image so)."""


def _rebuilt(draw: st.DrawFn, item: Item, items: list[Item], hosted: set[str]) -> list[Item]:
    """One item as a framework that rebuilds Responses items into its own messages holds it (Agent
    Framework's ``_item_to_message``, python-1.10.0..1.13.0): a message or function call without the
    item ``id`` (its content keeps the ``call_id`` only); a function call maybe (one in two) a hosted
    tool call (`hosted_call`) holding its output, its ``function_call_output`` then gone, with the item
    ``id`` AF keeps as the call's id (an MCP, code interpreter or image generation call) or without it
    (a shell call: AF keeps its ``call_id``); no custom tool call, no compaction item (an earlier
    summary stays a ``[Context Summary]`` message)."""
    if kind(item) == "function_call_output" and item["call_id"] in hosted:
        return []
    if kind(item) == "function_call" and draw(st.booleans()):
        answer = next((i for i in items if kind(i) == "function_call_output" and i.get("call_id") == item["call_id"]), None)
        if answer is not None:
            hosted.add(item["call_id"])
            made = hosted_call(item, answer, draw(st.sampled_from(HOSTED_KINDS)))
            return [{k: v for k, v in i.items() if k != "id"} if kind(i) == "shell_call" else i for i in made]
    return [item]


HOSTED_KINDS = ("mcp_call", "code_interpreter_call", "image_generation_call", "shell_call")


def hosted_call(call: Item, answer: Item, hosted_kind: str) -> list[Item]:
    """A function call and its output as the hosted tool call ``hosted_kind`` the model emitted
    instead, with the item ``id`` the API gives it (OpenAI's API reference, Responses input items):
    ``mcp_call`` (a remote MCP server's tool: name, arguments, output), ``code_interpreter_call`` (the
    code and its logs), ``image_generation_call`` (its image), or ``shell_call`` answered by the client's
    ``shell_call_output`` (the commands and their stdout)."""
    call_id, said = call["call_id"], answer["output"] if isinstance(answer["output"], str) else ""
    if hosted_kind == "mcp_call":
        return [{"type": "mcp_call", "id": f"mcp_{call_id}", "server_label": "workspace", "name": call["name"], "arguments": call["arguments"], "output": said, "status": "completed"}]
    if hosted_kind == "code_interpreter_call":
        return [{"type": "code_interpreter_call", "id": f"ci_{call_id}", "container_id": "cntr_workspace", "code": f"{call['name']}({call['arguments']})", "outputs": [{"type": "logs", "logs": said}], "status": "completed"}]
    if hosted_kind == "image_generation_call":
        return [{"type": "image_generation_call", "id": f"ig_{call_id}", "result": TINY_PNG, "status": "completed"}]
    commands = [f"{call['name']} {call['arguments']}"]
    return [
        {"type": "shell_call", "id": f"sh_{call_id}", "call_id": call_id, "action": {"commands": commands, "timeout_ms": None, "max_output_length": None}, "status": "completed"},
        {"type": "shell_call_output", "call_id": call_id, "output": [{"stdout": said, "stderr": "", "outcome": {"type": "exit", "exit_code": 0}}]},
    ]


def _as_sent(draw: st.DrawFn, item: Item, n: int, custom: set[str]) -> Item:
    """One item as agents send it: calls with ids, maybe a custom tool call (Codex's
    ``apply_patch``: free-form ``input``, answered by a ``custom_tool_call_output``) or a
    ``status``; outputs maybe as a list of parts; user and system messages maybe without
    ``type`` (the API's EasyInputMessage)."""
    if kind(item) == "function_call":
        if draw(st.booleans()) and _CUSTOM_TOOL_CALLS[0]:  # drawn either way: the same examples otherwise
            custom.add(item["call_id"])
            return {"type": "custom_tool_call", "id": f"ctc_{item['call_id']}", "call_id": item["call_id"], "name": item["name"], "input": item["arguments"]}
        return {**item, "id": f"fc_{item['call_id']}", **({"status": "completed"} if draw(st.booleans()) else {})}
    if kind(item) == "function_call_output":
        output = [{"type": "input_text", "text": item["output"]}] if isinstance(item["output"], str) and draw(st.booleans()) else item["output"]
        return {**item, "type": "custom_tool_call_output" if item["call_id"] in custom else "function_call_output", "output": output}
    if item.get("role") == "assistant":
        return {**item, "id": f"msg_{n:04d}", "status": "completed"}
    return {k: v for k, v in item.items() if k != "type"} if draw(st.booleans()) else item


@st.composite
def _resent_user_messages(draw: st.DrawFn) -> list[Item]:
    """None, or (one in two) the one or two user messages ``/v1/responses/compact`` returns before
    its compaction item ("a list of all user messages, followed by a single compaction item")."""
    if not draw(st.booleans()):
        return []
    return [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": draw(text(max_words=12))}]} for _ in range(draw(st.integers(1, 2)))]


INTERLEAVED_ONE_IN = 3
"""With ``interleaved=None``, one history in this many has an item between a call and its output."""
STEERS = ("Also run the linter when that finishes.", "Stop after this step, please.", "Use the staging database for this.")


@st.composite
def _between(draw: st.DrawFn, n: int) -> list[Item]:
    """What may stand between a call and its output (SPEC Part A, "Histories the suite draws"):
    the model's commentary, a user message sent while the tool ran, or a resumed run's
    reasoning with its commentary."""
    said = {"type": "message", "role": "assistant", "id": f"msg_between_{n:04d}", "status": "completed", "content": [{"type": "output_text", "text": draw(text(max_words=12)), "annotations": []}]}
    choice = draw(st.integers(0, 2))
    if choice == 0:
        return [said]
    if choice == 1:
        return [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": STEERS[draw(st.integers(0, len(STEERS) - 1))]}]}]
    reasoning = {"type": "reasoning", "id": f"rs_between_{n:04d}", "summary": [{"type": "summary_text", "text": "Resuming after the approval."}], "encrypted_content": draw(_OPAQUE_TEXT)}
    return [reasoning, said]


def _answered_rounds(items: list[Item]) -> list[tuple[int, int]]:
    """(index of a round's last call, index of its last output) for each run of calls whose
    outputs all follow it."""
    found, at = [], 0
    while at < len(items):
        if kind(items[at]) not in ANSWERED_BY:
            at += 1
            continue
        end = at
        while end + 1 < len(items) and kind(items[end + 1]) in ANSWERED_BY:
            end += 1
        wanted = {i.get("call_id") for i in items[at : end + 1]}
        last = end
        while last + 1 < len(items) and kind(items[last + 1]) in ANSWERS and items[last + 1].get("call_id") in wanted:
            last += 1
        if last > end and wanted == {i.get("call_id") for i in items[end + 1 : last + 1]}:
            found.append((end, last))
        at = last + 1
    return found


@st.composite
def _interleaved(draw: st.DrawFn, items: list[Item], wanted: bool | None) -> list[Item]:
    """``items`` with, in one answered round (``wanted`` True: in every one; None: in one history in
    `INTERLEAVED_ONE_IN`), an item between its calls and one of its outputs. The Responses API pairs
    an output with its call by ``call_id`` (RESP-1/2), not by adjacency."""
    rounds = _answered_rounds(items)
    if not rounds or wanted is False or (wanted is None and draw(st.integers(1, INTERLEAVED_ONE_IN)) != 1):
        return items
    chosen = rounds if wanted else [rounds[draw(st.integers(0, len(rounds) - 1))]]
    out = list(items)
    for n, (last_call, last_output) in enumerate(reversed(chosen)):
        at = draw(st.integers(last_call + 1, last_output))
        out[at:at] = draw(_between(n))
    return out


def histories(
    *, reasoning: bool | None = None, compaction: bool | None = None, interleaved: bool | None = None, **chat_options: Any
) -> SearchStrategy[list[Item]]:
    """Valid Responses item histories: `conformance.histories.histories` (same keyword options)
    mapped by `from_chat`, images and PDFs in some ``readFile`` outputs (`with_tool_media`), with
    reasoning items (``reasoning``: True always, None maybe), an
    earlier summary as a ``compaction`` item (``compaction``: True when the chat history has an
    earlier summary, None maybe; maybe after the user messages the compact endpoint re-sends),
    and an item between a call and its output (``interleaved``: True in every answered round,
    None in one history in `INTERLEAVED_ONE_IN`, False never), and, where programs are drawn
    (`draw_programs`), a hosted program's transcript (`_programmed`). ``min_tokens`` and
    ``min_messages`` count in items (`tokens`, `length`). Every history passes `invalid`,
    RESP-1 and RESP-2 (in-flight ones aside) and RESP-3 on itself."""
    if compaction:
        chat_options.setdefault("earlier_summary", True)
    decorated = sized_chat(chat_options, _size).flatmap(with_tool_media).flatmap(lambda chat: _decorated(chat, reasoning, compaction))
    return decorated.flatmap(lambda items: _interleaved(items, interleaved)).flatmap(_programmed).map(_message_ids_as_held)


def _message_ids_as_held(items: list[Item]) -> list[Item]:
    """``items``, their message items without ``id`` and ``status`` where the histories are rebuilt
    ones (`draw_rebuilt_items`: the framework's messages keep no item id)."""
    if not _REBUILT_ITEMS[0]:
        return items
    return [{k: v for k, v in i.items() if k not in ("id", "status")} if kind(i) == "message" else i for i in items]



AGAIN = "Check that again, please."
"""The prompt of the turn `reaching_again` adds."""


def reaching_again(items: list[Item]) -> list[Item]:
    """``items`` up to the model's last answer (an assistant message after which every call is answered), then a
    new turn whose first step calls again the last function called before it, with the same arguments, answered
    with the same output: a model reaching again for a tool it used before (RESP-32: after a compaction at the
    turn's start, the tool must still be found). ``items`` when it holds no such answer after a call."""
    kinds = [i.get("type", "message") for i in items]
    outputs = {str(i.get("call_id")): i for i in items if kinds[items.index(i)] == "function_call_output"} if items else {}
    for end in range(len(items), 0, -1):
        last = items[end - 1]
        if not (kinds[end - 1] == "message" and last.get("role") == "assistant"):
            continue
        before = items[:end]
        calls = [i for i in before if i.get("type") == "function_call"]
        answered = {str(i.get("call_id")) for i in before if i.get("type") == "function_call_output"}
        if not calls or any(str(c.get("call_id")) not in answered for c in calls):
            continue
        call = calls[-1]
        again = {"type": "function_call", "id": "fc_again", "call_id": "call_again", "name": call.get("name"), "arguments": call.get("arguments"), "status": "completed"}
        output = {"type": "function_call_output", "call_id": "call_again", "output": outputs[str(call.get("call_id"))].get("output")}
        return [*before, {"type": "message", "role": "user", "content": AGAIN}, again, output]
    return items
