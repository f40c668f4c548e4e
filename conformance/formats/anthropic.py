"""The Anthropic Messages API request part a compactor handles: validity, pairing, thinking,
clause checks (SPEC ANTH-1..ANTH-6).

A history is ``{"system": ..., "messages": [...]}``: the top-level ``system`` (a string or a
list of text blocks; absent when the request has none) and the ``messages`` list of ``user``
and ``assistant`` messages, whose content is a string or a list of blocks. An assistant
message's ``tool_use`` blocks are answered by ``tool_result`` blocks (``tool_use_id``) at the
start of the very next message, a user message; ``thinking`` and ``redacted_thinking`` blocks
carry a signature (or encrypted data) the provider verifies, so with tool use they must come
back unmodified.

Each ``check_*`` returns None when its clause holds, else a `Violation` (a one-line reason naming
the message index, and the defect's ``reason_id``); none raises on a malformed output.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from compaction_suite.text import SUMMARY_PREFIX, chars_per_four

from ..anthropic_compaction import FIELDS as COMPACTION_FIELDS
from ..clauses import every_output
from ..clauses import in_flight as in_flight_clause
from ..summarizer_apis import anthropic_messages
from ..violation import Violation
from . import WireFormat, canonical, failed_summary, kept_or_marked, same

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

ROLES = ("user", "assistant")
THINKING = ("thinking", "redacted_thinking")
BLOCK_TYPES = (
    "text", "image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking",
    "server_tool_use", "web_search_tool_result", "search_result", "container_upload", "compaction",
)
"""Content block types the Messages API accepts in ``messages``."""

Message = dict[str, Any]


def messages_of(request: Any) -> list[Message] | None:
    """The ``messages`` list of a request-shaped dict, or None when it is not one."""
    messages = request.get("messages") if isinstance(request, dict) else None
    return messages if isinstance(messages, list) and all(isinstance(m, dict) for m in messages) else None


def blocks(message: Any) -> list[dict[str, Any]]:
    """A message's content blocks (a string content is one text block)."""
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def tool_uses(message: Any) -> list[Any]:
    return [b.get("id") for b in blocks(message) if b.get("type") == "tool_use"]


def tool_results(message: Any) -> list[Any]:
    return [b.get("tool_use_id") for b in blocks(message) if b.get("type") == "tool_result"]


def where(messages: Sequence[Any], i: int) -> str:
    """``messages.3 (user)``: how a reason points at the message that is wrong (the API's own notation)."""
    message = messages[i] if 0 <= i < len(messages) else None
    role = message.get("role") if isinstance(message, dict) else type(message).__name__
    return f"messages.{i} ({role})"


def in_flight(request: Any) -> bool:
    """Whether the last assistant message with ``tool_use`` is not fully answered by the next message."""
    messages = messages_of(request)
    if not messages:
        return False
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=None)
    if last is None or not tool_uses(messages[last]):
        return False
    answered = tool_results(messages[last + 1]) if last + 1 < len(messages) else []
    return any(u not in answered for u in tool_uses(messages[last]))


def length(request: Any) -> int:
    messages = messages_of(request)
    return len(messages) if messages is not None else 0


def well_formed(out: Any) -> bool:
    """A dict whose ``messages`` is a list of message objects (ANTH-5 judges the rest)."""
    return messages_of(out) is not None


def _answers(message: Message) -> bool:
    """A user message that starts with tool results: it belongs to the assistant turn before it."""
    return message.get("role") == "user" and bool(tool_results(message))


def rounds(request: Any) -> list[list[Message]]:
    """SPEC ROUND-1 on messages (the system prompt is top-level, outside every round): a user turn,
    or an assistant turn with the user message of ``tool_result`` blocks answering its ``tool_use``."""
    found: list[list[Message]] = []
    for m in messages_of(request) or []:
        if found and _answers(m):
            found[-1].append(m)
        else:
            found.append([m])
    return found


def is_summary(message: Any) -> bool:
    """Seed 000's ``[Context Summary]`` user message."""
    return isinstance(message, dict) and message.get("role") == "user" and _text(blocks(message)).startswith(SUMMARY_PREFIX)


def tokens(request: Any) -> int:
    """SPEC TOK-1's chars/4 over what the model reads: the top-level system and the messages
    (`summarizer_apis.anthropic_messages`: texts, tool uses, tool results)."""
    return chars_per_four(anthropic_messages(request)) if messages_of(request) is not None else 0


def without_system(request: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in request.items() if k != "system"}


def removed(history: Any, out: Any) -> dict[str, Any]:
    """The input's messages the output does not hold verbatim, as a request without a system."""
    left = [json.dumps(m, sort_keys=True, default=str) for m in messages_of(out) or []]
    gone: list[Message] = []
    for m in messages_of(history) or []:
        key = json.dumps(m, sort_keys=True, default=str)
        if key in left:
            left.remove(key)
        else:
            gone.append(m)
    return {"messages": gone}


# --- validity (ANTH-5)


def invalid(request: Any, given: Any = None) -> Violation | None:
    """ANTH-5: a dict with a non-empty ``messages`` list of ``user``/``assistant`` messages whose
    content is a string or well-formed blocks, ``tool_use`` ids unique, ``system`` a string or
    text blocks. Pairing is ANTH-1/ANTH-2's, thinking ANTH-3's. A message returned identical to
    one of ``given``'s (the input request), and a block of a type this suite does not know
    returned identical to one of its blocks, pass the shape rules: they are the caller's
    (Decision, SPEC ANTH-5)."""
    if not isinstance(request, dict):
        return Violation("invalid-output:not-a-request", f"the output is a {type(request).__name__}, not a dict with system and messages")
    if "system" in request and not _valid_system(request["system"]):
        return Violation("invalid-request:malformed-system", "system is neither a string nor a list of text blocks")
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        return Violation("invalid-request:no-messages", "messages is missing, not a list, or empty")
    seen: set[str] = set()
    before = messages_of(given) or []
    for i, m in enumerate(messages):
        problem = _invalid_message(m, before) or _empty_text(m, final=i == len(messages) - 1)
        if problem and not any(same(m, g) for g in before):
            return Violation(f"invalid-message:{problem.reason_id}", f"{where(messages, i)}: {problem}")
        for use in tool_uses(m):
            if use in seen:
                return Violation("invalid-message:duplicate-tool-use-id", f"{where(messages, i)}: tool_use id {use!r} repeats an earlier one")
            seen.add(use)
    return None


def _valid_system(system: Any) -> bool:
    if isinstance(system, str):
        return True
    return isinstance(system, list) and all(isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str) for b in system)


def _invalid_message(m: Any, given: Sequence[Message] = ()) -> Violation | None:
    if not isinstance(m, dict):
        return Violation("not-a-dict", f"a {type(m).__name__}, not a message")
    if m.get("role") not in ROLES:
        return Violation("unknown-role", f"role {m.get('role')!r} (only user and assistant; the system prompt is top-level)")
    content = m.get("content")
    if isinstance(content, str):
        return None
    if not isinstance(content, list) or not content:
        return Violation("no-content", "content is neither a string nor a non-empty list of blocks")
    for block in content:
        problem = _invalid_block(block, m["role"])
        if problem and not (_unknown(block) and any(same(block, b) for g in given for b in blocks(g))):
            return problem
    return None


def _empty_text(m: Message, *, final: bool) -> Violation | None:
    """ANTH-5: the Messages API refuses a message whose string content is empty, but for a final
    assistant message ("all messages must have non-empty content except for the optional final
    assistant message", anthropics/claude-code#6774, microsoft/autogen#6083), a text block whose text is
    empty ("text content blocks must be non-empty", anthropics/claude-code#59812), and a message whose
    only block is text of whitespace ("text content blocks must contain non-whitespace text",
    anthropics/claude-code#23440; the API's answers to each shape, LibreChat-AI/agents#124)."""
    content = m.get("content")
    if content == "" and not (final and m.get("role") == "assistant"):
        return Violation("empty-content", "all messages must have non-empty content except for the optional final assistant message")
    texts = [b.get("text") for b in blocks(m) if b.get("type") == "text"] if isinstance(content, list) else []
    if "" in texts:
        return Violation("empty-text-block", "text content blocks must be non-empty")
    if isinstance(content, list) and len(content) == 1 and texts and not str(texts[0]).strip():
        return Violation("whitespace-text", "text content blocks must contain non-whitespace text")
    return None


def _unknown(block: Any) -> bool:
    """A block of a type this version of the suite does not know (the API adds block types)."""
    return isinstance(block, dict) and block.get("type") not in BLOCK_TYPES


def _invalid_block(block: Any, role: str) -> Violation | None:
    if not isinstance(block, dict) or block.get("type") not in BLOCK_TYPES:
        return Violation("unknown-block", f"a content block of unknown type {block.get('type') if isinstance(block, dict) else block!r}")
    kind = block["type"]
    if kind == "text" and not isinstance(block.get("text"), str):
        return Violation("malformed-text", "a text block without text")
    if kind == "tool_use" and (role != "assistant" or not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str) or not isinstance(block.get("input"), dict)):
        return Violation("malformed-tool-use", "a tool_use block outside an assistant message or without id, name and input object")
    if kind == "tool_result" and (role != "user" or not isinstance(block.get("tool_use_id"), str)):
        return Violation("malformed-tool-result", "a tool_result block outside a user message or without tool_use_id")
    if kind == "thinking" and (role != "assistant" or not isinstance(block.get("thinking"), str) or not isinstance(block.get("signature"), str)):
        return Violation("malformed-thinking", "a thinking block outside an assistant message or without thinking and signature")
    if kind == "redacted_thinking" and (role != "assistant" or not isinstance(block.get("data"), str)):
        return Violation("malformed-thinking", "a redacted_thinking block outside an assistant message or without data")
    return None


# --- pairing (ANTH-1, ANTH-2)


def check_results_follow_their_use(messages: Sequence[Message]) -> Violation | None:
    """ANTH-1: each ``tool_result`` answers a ``tool_use`` of the message right before it (an
    assistant message), and a user message's ``tool_result`` blocks come before its other blocks."""
    for i, m in enumerate(messages):
        results = tool_results(m)
        if not results:
            continue
        previous = messages[i - 1] if i > 0 else None
        for use_id in results:
            if previous is None or previous.get("role") != "assistant" or use_id not in tool_uses(previous):
                return Violation("orphan-tool-result", f"{where(messages, i)}: tool_result {use_id!r} has no tool_use in the message before it")
        kinds = [b.get("type") for b in blocks(m)]
        if kinds[: len(results)] != ["tool_result"] * len(results):
            return Violation("tool-result-not-first", f"{where(messages, i)}: tool_result blocks must come first in the message, found {kinds}")
    return None


def check_uses_have_results(request: Any, messages: Sequence[Message]) -> Violation | None:
    """ANTH-2: each ``tool_use`` has exactly one ``tool_result`` in the very next message (a turn the
    input left in flight is ANTH-6's)."""
    pending = _pending(request)
    for i, m in enumerate(messages):
        answered = tool_results(messages[i + 1]) if i + 1 < len(messages) else []
        for use_id in tool_uses(m):
            if use_id in pending:
                continue
            if answered.count(use_id) != 1:
                slug = "unanswered-tool-call" if answered.count(use_id) == 0 else "tool-call-answered-twice"
                return Violation(slug, f"{where(messages, i)}: tool_use {use_id!r} has {answered.count(use_id)} tool_result blocks in the next message, expected 1")
    return None


def _pending(request: Any) -> set[str]:
    messages = messages_of(request) or []
    found: set[str] = set()
    for i, m in enumerate(messages):
        answered = tool_results(messages[i + 1]) if i + 1 < len(messages) else []
        found.update(u for u in tool_uses(m) if u not in answered)
    return found


# --- thinking (ANTH-3)


def _thinking(message: Message) -> list[dict[str, Any]]:
    return [b for b in blocks(message) if b.get("type") in THINKING]


def check_thinking_kept(request: Any, messages: Sequence[Message]) -> Violation | None:
    """ANTH-3: an assistant turn with ``tool_use`` and thinking blocks comes back with the same
    thinking blocks, byte-identical and in order, or not at all (the whole turn dropped); a turn
    joined whole with its assistant neighbours is the turn (SPEC CORE-14 Decision: the API joins
    consecutive turns). SPEC ANTH-3 Decision (preserved thinking): a kept block whose prefix a compaction changed is the
    caller's ``prefix_mismatch_behavior`` to settle, not judged here."""
    for before in messages_of(request) or []:
        uses, thinking = tool_uses(before), _thinking(before)
        if before.get("role") != "assistant" or not uses or not thinking:
            continue
        for j, after in enumerate(messages):
            kept = same(_thinking(after), thinking) or combined(before, [after])  # joined with its neighbours: the turn whole, in order
            if after.get("role") == "assistant" and set(tool_uses(after)) & set(uses) and not kept:
                return Violation("thinking-altered", f"{where(messages, j)}: the thinking blocks of the turn with tool_use {uses} were altered, dropped or reordered")
    return check_final_turn_opens_with_thinking(request, messages)


def _open_turn(messages: Sequence[Message]) -> int | None:
    """The index of the assistant message that opened the turn a request ends in when it ends inside
    a tool loop (its last message a user message with ``tool_result`` blocks): the first assistant
    message after the last user message holding no ``tool_result``. None when it ends otherwise."""
    if not messages or messages[-1].get("role") != "user" or not tool_results(messages[-1]):
        return None
    opened = None
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user" and not tool_results(messages[i]):
            break
        if messages[i].get("role") == "assistant":
            opened = i
    return opened


def _opens_with_thinking(message: Message) -> bool:
    """Whether the message opens with a thinking block, after the compaction block the API itself puts
    first when it compacts in that response (SPEC ANTH-7; the API's own answer is never refused)."""
    found = [b for b in blocks(message) if b.get("type") != "compaction"]
    return bool(found) and found[0].get("type") in THINKING


def check_final_turn_opens_with_thinking(request: Any, messages: Sequence[Message]) -> Violation | None:
    """ANTH-3: a request ending inside a tool loop whose turn opened with a thinking block (thinking
    is on) still opens that turn with one: the Messages API answers otherwise "When `thinking` is
    enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost
    set of `tool_use` and `tool_result` blocks)" (quoted in microsoft/vscode-copilot-chat#2367; a
    summary cutting into the turn: langchain-ai/langchain#34794)."""
    before = messages_of(request) or []
    opened = _open_turn(before)
    if opened is None or not _opens_with_thinking(before[opened]):
        return None
    now = _open_turn(messages)
    if now is None or _opens_with_thinking(messages[now]):
        return None
    first = (blocks(messages[now]) or [{"type": "nothing"}])[0].get("type")
    return Violation(
        "final-turn-without-thinking",
        f"{where(messages, now)} opens the turn the request ends in (a tool loop) with a {first!r} block, not the thinking block the input's turn "
        f"opened with: the API answers 'messages.{now}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{first}`. "
        "When `thinking` is enabled, a final `assistant` message must start with a thinking block'",
    )


# --- system (ANTH-4)


def check_system_untouched(request: Any, out: Any) -> Violation | None:
    """ANTH-4: the top-level ``system`` comes back byte-identical; absent stays absent."""
    had, has = "system" in request, isinstance(out, dict) and "system" in out
    if had != has:
        return Violation("system-dropped" if had else "system-added", "the top-level system was " + ("dropped" if had else "added"))
    if had and not same(request["system"], out["system"]):
        return Violation("system-altered", "the top-level system was changed")
    return None


# --- what an output holds of its input (CORE-11, CORE-12, CORE-14 in Anthropic messages)


def said(message: Any) -> str:
    """What a message says for a summary to carry: its text blocks, its tool results' text and a
    compaction block's summary (the Messages API's server-side compaction, SPEC ANTH-7); tool inputs and
    thinking aside (SPEC CORE-12 Decision)."""
    texts = [
        _text([b]) if b.get("type") == "text" else _text(b.get("content"))
        for b in blocks(message)
        if b.get("type") in ("text", "tool_result") or (b.get("type") == "compaction" and isinstance(b.get("content"), str))
    ]
    return "\n".join(texts)


def role(message: Any) -> str | None:
    return message.get("role") if isinstance(message, dict) else None


def corresponds(before: Any, after: Any) -> bool:
    """Whether output message ``after`` is input message ``before`` kept: verbatim, or made of its
    blocks (some dropped) with ``tool_result`` blocks (same ``tool_use_id``) or ``tool_use`` blocks
    (same ``id``: a call's input cleared, as LangChain's ``ClearToolUsesEdit(clear_tool_inputs=True)``
    does) masked in place, as chat-completions' `chat.corresponds` takes a message for the same calls.
    A block's ``cache_control`` breakpoint is no part of what is read (`_read`): a framework moves it."""
    if same(before, after):
        return True
    if not (isinstance(before, dict) and isinstance(after, dict)) or before.get("role") != after.get("role"):
        return False
    old, answered, called = blocks(before), set(tool_results(before)), set(tool_uses(before))

    def masked(b: dict[str, Any]) -> bool:
        return (b.get("type") == "tool_result" and b.get("tool_use_id") in answered) or (b.get("type") == "tool_use" and b.get("id") in called)

    read = {_read(o) for o in old}
    return bool(blocks(after)) and all(_read(b) in read or masked(b) for b in blocks(after))


def combined(before: Any, after: Sequence[Any]) -> bool:
    """Whether input message ``before`` is kept inside an output message of its role that joins it
    with neighbouring messages of that role: its blocks, all of them and in order, are one run of
    that message's blocks, kept or masked in place as `corresponds` reads a message. The
    Messages API combines consecutive user or assistant turns into one turn (ANTH-5 Decision), so
    such a join keeps what the model reads (SPEC CORE-14 Decision); a ``cache_control`` breakpoint
    is no part of what is read."""
    mine = blocks(before)
    if not mine:
        return False
    for message in after:
        if role(message) != role(before):
            continue
        theirs = blocks(message)
        for i in range(len(theirs) - len(mine) + 1):
            if corresponds(before, {"role": role(before), "content": theirs[i : i + len(mine)]}):
                return True
    return False


def _read(block: dict[str, Any]) -> str:
    """A block as the model reads it: its `canonical` form without ``cache_control``, a caching
    breakpoint that changes what is cached, not what is read (a join may move the breakpoint)."""
    return canonical({k: v for k, v in block.items() if k != "cache_control"})


def check_no_failed_summary(request: Any, out: Any) -> Violation | None:
    """CORE-11 in an Anthropic request: after a summarizer fault the output holds no message
    standing for nothing of the input (`corresponds`); a changed ``system`` is ANTH-4's."""
    messages, before = messages_of(out), messages_of(request)
    if messages is None or before is None or same(before, messages):
        return None
    for j, m in enumerate(messages):
        if not kept_or_marked(before, m, corresponds) and not joined(before, m):
            return failed_summary(where(messages, j), m, not said(m).replace(SUMMARY_PREFIX, "").strip())
    return None


def joined(before: Sequence[Any], after: Any) -> int:
    """How many input messages of its role output message ``after`` joins (0: it is no join): its
    blocks, in order, split into runs that each `corresponds` to one input message. The Messages
    API combines consecutive turns of one role (ANTH-5 Decision), so a join of kept turns keeps
    them and stands for nothing removed (SPEC CORE-11 Decision: turns the provider joins)."""
    mine, kin = blocks(after), [b for b in before if role(b) == role(after)]
    pieces = {0: 0}  # a run's end -> the fewest input messages that make the runs up to it
    for start in range(len(mine)):
        if start not in pieces:
            continue
        for b in kin:
            end = start + len(blocks(b))
            if blocks(b) and end <= len(mine) and corresponds(b, {"role": role(after), "content": mine[start:end]}):
                pieces[end] = min(pieces.get(end, end), pieces[start] + 1)
    return pieces.get(len(mine), 0) if mine else 0


# --- compaction blocks (ANTH-7)


def check_compaction_blocks(history: Any, messages: Sequence[Message]) -> Violation | None:
    """ANTH-7: a compaction block of the output that is not one of the input's, unchanged, carries only
    the fields the API accepts (``type``, ``content``, ``cache_control``) and a ``content`` that is a
    non-empty string or null (`anthropic_compaction.rejects`, whose words are the API's answer to it)."""
    given = [b for m in messages_of(history) or [] for b in blocks(m) if b.get("type") == "compaction"]
    for i, message in enumerate(messages):
        for j, block in enumerate(blocks(message)):
            if block.get("type") != "compaction" or any(same(block, g) for g in given):
                continue
            extra = [k for k in block if k not in COMPACTION_FIELDS]
            if extra:
                return Violation(
                    "compaction-block-extra-field",
                    f"{where(messages, i)} sends a compaction block with {', '.join(repr(k) for k in extra)} "
                    f"({', '.join(f'{k}={block[k]!r}' for k in extra)}): the API answers 400 'messages.{i}.content.{j}.compaction.{extra[0]}: "
                    "Extra inputs are not permitted'",
                )
            if "content" not in block or (block["content"] is not None and (not isinstance(block["content"], str) or not block["content"])):
                return Violation(
                    "compaction-block-empty",
                    f"{where(messages, i)} sends a compaction block whose content is {block.get('content', 'missing')!r}: "
                    "the API takes a non-empty string, or null for a failed compaction",
                )
    return None


def structural(history: Any, out: Any) -> dict[str, Violation | None]:
    """ANTH-1..ANTH-5 and ANTH-7 on one output (SPEC Part A, "Every output")."""
    found: dict[str, Violation | None] = {"ANTH-5": invalid(out, history)}
    messages = messages_of(out)
    if not isinstance(history, dict):
        return found
    found["ANTH-4"] = check_system_untouched(history, out)
    if messages is None:
        return found
    found["ANTH-1"] = check_results_follow_their_use(messages)
    found["ANTH-2"] = check_uses_have_results(history, messages)
    found["ANTH-3"] = check_thinking_kept(history, messages)
    found["ANTH-7"] = check_compaction_blocks(history, messages)
    return found


# --- from chat-completions (the generators map their draws with it)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict) and p.get("type") == "text")


def _user_content(content: Any) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    out: list[dict[str, Any]] = []
    for part in content:
        if part.get("type") == "text":
            out.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "image_url" and part["image_url"]["url"].startswith(("https://", "http://")):
            out.append({"type": "image", "source": {"type": "url", "url": part["image_url"]["url"]}})
        elif part.get("type") == "image_url":
            media, _, data = part["image_url"]["url"].removeprefix("data:").partition(";base64,")
            out.append({"type": "image", "source": {"type": "base64", "media_type": media, "data": data}})
        elif part.get("type") == "file":
            media, _, data = part["file"]["file_data"].removeprefix("data:").partition(";base64,")
            title = {"title": part["file"]["filename"]} if part["file"].get("filename") else {}
            out.append({"type": "document", "source": {"type": "base64", "media_type": media, "data": data}, **title})
    return out


def _result_content(content: Any) -> str | list[dict[str, Any]]:
    """A tool message's content as a ``tool_result``'s: its text, or (media among its parts) text,
    image and document blocks, which a ``tool_result`` holds (the Messages API's tool use guide)."""
    if isinstance(content, list) and any(isinstance(p, dict) and p.get("type") != "text" for p in content):
        return _user_content(content)
    return _text(content)


def from_chat(messages: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The Messages API request part a chat-completions history maps to: system messages become
    the top-level ``system`` (text blocks when several), a round's tool results one user message
    of ``tool_result`` blocks, calls ``tool_use`` blocks (arguments parsed as the JSON they are).
    Faithful for the histories the suite draws (system prompts first; JSON-object arguments)."""
    system = [_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer")]
    out: list[Message] = []
    for m in messages:
        role = m.get("role")
        if role == "user":
            out.append({"role": "user", "content": _user_content(m.get("content"))})
        elif role == "assistant":
            content: list[dict[str, Any]] = [{"type": "text", "text": _text(m["content"])}] if m.get("content") else []
            for call in m.get("tool_calls") or []:
                content.append({"type": "tool_use", "id": call["id"], "name": call["function"]["name"], "input": json.loads(call["function"]["arguments"])})
            out.append({"role": "assistant", "content": content})
        elif role == "tool":
            block = {"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": _result_content(m.get("content"))}
            if out and out[-1]["role"] == "user" and tool_results(out[-1]):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
    request: dict[str, Any] = {"messages": out}
    if system:
        request["system"] = system[0] if len(system) == 1 else [{"type": "text", "text": s} for s in system]
    return request


def histories(**options: Any) -> SearchStrategy[dict[str, Any]]:
    """Valid Messages API histories: `conformance.anthropic_histories.histories` (its keyword
    options), imported when drawn, so judging a history imports no Hypothesis."""
    from ..anthropic_histories import histories as drawn

    return drawn(**options)


FORMAT = WireFormat(
    name="anthropic-messages", family="ANTH", invalid=invalid, in_flight=in_flight, in_flight_clause=in_flight_clause("anthropic-messages"), no_failed_summary=check_no_failed_summary,
    structural=structural, histories=histories, length=length, from_chat=from_chat,
    judged=every_output("anthropic-messages"),
    well_formed=well_formed, rounds=rounds, is_summary=is_summary, tokens=tokens,
    without_system=without_system, removed=removed,
    items=lambda request: messages_of(request) or [], role=role, said=said, corresponds=corresponds, combined=combined, joins=joined,
)
