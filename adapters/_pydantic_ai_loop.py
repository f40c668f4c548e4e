"""pydantic-ai's ``Agent`` loop replaying a history's last user turn, and the tool-search rounds pydantic-ai
records for deferred tools (``adapters/README.md``, Pydantic AI: "The Agent loop" and "Tool search").

`replay` runs the turn as one ``Agent.run``: its prompt the ``user_prompt``, everything before it the
``message_history`` (the leading system prompts the agent's ``system_prompt`` when nothing before the turn
was said), the model a ``FunctionModel`` answering each request with the turn's next assistant message, the
tools answering each call with the history's result for it. What edits the history (a history processor, a
harness compaction capability) is the caller's: ``agent_of`` builds the ``Agent`` around the model and tools.

**Tool search** (`with_searches`): a tool the model called before the turn and not in it is a deferred tool
(``defer_loading=True``), found by the local ``search_tools`` before its first call; pydantic-ai records that
round as a ``ToolSearchCallPart`` in a response and a ``ToolSearchReturnPart`` (content
``{'discovered_tools': [{'name': ...}]}``) in the next request, and re-reads every such return on each request
(``parse_discovered_tools``) to know which deferred tools it shows the model. The chat history has no such
round, so the rounds drawn here are left out of what is handed back (`searched`, by call id, so a part a
capability rebuilt from one is left out too). Standard library at import time.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._common import CannotDrive, Message, Note, Notes, call_names, deep, requires, text_of_parts, tool_text

SEARCH_ID = "compaction-suite-search-"
"""The call id prefix of a drawn tool-search round (`searched`)."""
REQUEST_ID = "compaction-suite-compact-request-"
"""The call id prefix of a drawn compaction request (``compact_context``, the harness's ``CompactOnRequest``): the
model's ask, which the chat history has no message for, left out of what is handed back as a search round is."""


def searched(part: Any) -> bool:
    """Whether ``part`` belongs to a drawn round the chat history has no message for: a tool-search round, or a
    compaction request (`REQUEST_ID`), or was rebuilt from one."""
    return str(getattr(part, "tool_call_id", "")).startswith((SEARCH_ID, REQUEST_ID))


def deferred_names(before: list[Message], turn: list[Message]) -> list[str]:
    """The tools called before the turn and not in it, in the order of their first call: deferred tools the
    model found by search (the turn's own tools stay loaded, so its scripted calls meet no hidden tool)."""
    in_turn = set(call_names(turn).values())
    return [n for n in dict.fromkeys(call_names(before).values()) if n not in in_turn]


def every_tool(messages: list[Message]) -> set[str]:
    """Every tool ``messages`` call: the deferred tools of a history no turn of which is replayed (a capability's
    one ``before_model_request``), as a ToolSearch user defers the toolset it searches; the model found each by a
    search before its first call. In a replayed turn the turn's own tools stay loaded instead (`deferred_names`)."""
    return set(call_names(messages).values())


def with_searches(pm: Any, messages: list[Any], deferred: set[str]) -> list[Any]:
    """``messages`` with the search round pydantic-ai records before the first response calling each
    deferred tool (one round for the tools a response first calls)."""
    if not hasattr(pm, "ToolSearchReturnPart"):
        raise CannotDrive("pydantic_ai (tool_search)", "pydantic-ai-slim", "ToolSearchReturnPart (local tool search) is missing")
    out: list[Any] = []
    found: set[str] = set()
    for message in messages:
        if isinstance(message, pm.ModelResponse) and out and isinstance(out[-1], pm.ModelRequest):  # a run's response, not a second in a row
            calls: dict[str, Any] = {}
            for part in message.parts:
                if isinstance(part, pm.ToolCallPart) and part.tool_name in deferred - found:
                    calls.setdefault(part.tool_name, part)  # the first call of each tool the response finds
            names = list(calls)
            if names:
                found.update(names)
                call_id = f"{SEARCH_ID}{len(out)}"
                queries = [keywords(calls[n]) for n in names]
                out.append(pm.ModelResponse(parts=[pm.ToolSearchCallPart(args={"queries": queries}, tool_call_id=call_id)]))
                content = {"discovered_tools": [{"name": n} for n in names]}
                out.append(pm.ModelRequest(parts=[pm.ToolSearchReturnPart(content=content, tool_call_id=call_id)]))
        out.append(message)
    return out


def keywords(call: Any) -> str:
    """The query a model writes to find the tool of ``call``: the tool's name and the words of what it is about
    to ask of it (the string values of the call's arguments, in order), one keywords string as pydantic-ai's local
    ``search_tools`` takes it (``ToolSearchArgs.queries``: "single-item list with the keywords string"). A search
    call is thereby as long as the call it leads to: short for most, and as long as the suite draws a call's
    arguments in the others (a 20-60 kB payload in one history in six, `histories.agent_shaped`), which is what a
    runaway generation leaves in a ``search_tools`` call too (pydantic/pydantic-ai-harness#411: "a large
    `search_tools` or `load_capability` args payload")."""
    import json

    args = call.args
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return " ".join([call.tool_name, args]).strip()
    words: list[str] = [call.tool_name]

    def walk(value: Any) -> None:
        if isinstance(value, str):
            words.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(args)
    return " ".join(w for w in words if w)


def last_turn(messages: list[Message], *, pending: bool = False) -> int | None:
    """The index of the last user message, when the history after it is one run of pydantic-ai's loop:
    assistant messages and tool results ending in an assistant answer without calls (a finished run), or,
    with ``pending``, also ending in that user message or in the results of the last calls (the run about
    to ask its model again: where a capability compacts)."""
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if not users or not messages:
        return None
    if any(m.get("role") not in ("assistant", "tool") for m in messages[users[-1] + 1 :]):
        return None
    last = messages[-1]
    if last.get("role") == "assistant" and not last.get("tool_calls"):
        return users[-1]
    return users[-1] if pending and last.get("role") in ("user", "tool") else None


def script(pm: Any, turn: list[Message]) -> list[Any]:
    """The model's responses of the run: each assistant message of ``turn`` as a ``ModelResponse``."""
    responses = []
    for m in turn:
        if m.get("role") != "assistant":
            continue
        parts: list[Any] = []
        text = text_of_parts(m.get("content")) if isinstance(m.get("content"), list) else m.get("content") or ""
        if text:
            parts.append(pm.TextPart(content=text))
        for call in m.get("tool_calls") or []:
            function = call.get("function") or {}
            parts.append(pm.ToolCallPart(tool_name=function.get("name", ""), args=function.get("arguments"), tool_call_id=str(call.get("id"))))
        responses.append(pm.ModelResponse(parts=parts))
    return responses


def _text(m: Message) -> str:
    content = m.get("content")
    return str(text_of_parts(content) if isinstance(content, list) else content or "")


def _said(pm: Any, message: Any) -> tuple[str, tuple[tuple[str, str, str], ...]]:
    """A response's text and calls (id, name, arguments), as `script` made them from an assistant message."""
    text = "".join(p.content for p in message.parts if isinstance(p, pm.TextPart))
    calls = tuple((p.tool_call_id, p.tool_name, str(p.args)) for p in message.parts if type(p) is pm.ToolCallPart)
    return text, calls


def recorded(messages: list[Message], turn: list[Message]) -> bool:
    """Whether pydantic-ai's loop records a history like this one: every call id once (its tool manager runs
    calls by id), no answer followed by another model message in the turn (a response without calls ends the
    run), the turn's results in the order of their calls (it records the results of the calls it runs in
    that order), and no answer without text or calls in the turn (pydantic-ai answers an empty response with a
    retry prompt, a request the history does not hold). Two responses in a row before the turn are merged by pydantic-ai and split back by the
    adapter (`pydantic_ai._kept_responses`)."""
    ids = [str(c.get("id")) for m in messages for c in m.get("tool_calls") or []]
    said = [m.get("role") == "assistant" for m in turn]
    if any(m.get("role") == "assistant" and not m.get("tool_calls") and not _text(m) for m in turn):
        return False  # an empty answer is asked again ("Please return text."), never the run's last word
    calls = [str(c.get("id")) for m in turn for c in m.get("tool_calls") or []]
    answered = [str(m.get("tool_call_id")) for m in turn if m.get("role") == "tool"]
    in_order = answered == [i for i in calls if i in set(answered)]
    return len(ids) == len(set(ids)) and in_order and not any(a and b for a, b in itertools.pairwise(said))


def _arguments(call: dict[str, Any]) -> Any:
    import json

    arguments = (call.get("function") or {}).get("arguments")
    try:
        return json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return None


def note_turn(pm: Any, seen: list[list[Any]], turn: list[Message], notes: Notes, before: list[Message]) -> None:
    """Note the run's own messages that still say what the turn's messages said (the scripted responses, the
    tools' returns, the prompt) with those originals, so they go back as they came (`Notes`); what a
    capability rebuilt or wrote stays unnoted and is rendered by pydantic-ai's chat mapping."""
    from .pydantic_ai import FIRST_PART, _user_content

    answers = {}
    for m in turn:
        if m.get("role") == "assistant":
            text = text_of_parts(m.get("content")) if isinstance(m.get("content"), list) else m.get("content") or ""
            calls = tuple((str(c.get("id")), str((c.get("function") or {}).get("name", "")), str((c.get("function") or {}).get("arguments"))) for c in m.get("tool_calls") or [])
            answers[(text, calls)] = m
    results = {str(m.get("tool_call_id")): m for m in turn if m.get("role") == "tool"}
    prompt = _user_content(pm, turn[0].get("content"))
    systems = {str(text_of_parts(m.get("content"))): m for m in before if m.get("role") in ("system", "developer")}
    for message in (m for messages in seen for m in messages):
        if isinstance(message, pm.ModelResponse):
            original = answers.get(_said(pm, message))
            if message.parts and notes.get((FIRST_PART, id(message.parts[0]))) is None and original is not None:
                notes.put((FIRST_PART, id(message.parts[0])), Note(original=deep(original), extra={"parts": list(message.parts)}), keep=message)
            continue
        for part in message.parts:
            if notes.get(id(part)) is not None:
                continue
            result = results.get(str(getattr(part, "tool_call_id", "")))
            if type(part) is pm.ToolReturnPart and result is not None and part.content == tool_text(result.get("content")):
                notes.put(id(part), Note(original=deep(result)), keep=part)
            elif type(part) is pm.UserPromptPart and part.content == prompt:
                notes.put(id(part), Note(original=deep(turn[0])), keep=part)
            elif type(part) is pm.SystemPromptPart and part.content in systems:  # the agent's own, from the history's
                notes.put(id(part), Note(original=deep(systems[part.content])), keep=part)


@dataclass
class Replayed:
    """One replayed turn: the ``message_history`` it was given (with its notes), every request the model was
    sent, and the run's result (None for a pending run, ended at the request after the history's end)."""

    history: list[Any]
    notes: Notes
    sent: list[list[Any]]
    result: Any
    kept: list[Any]
    """The history the run holds at its end (``capture_run_messages``): for a pending run, what the capability
    left of it at the request after the history's end, before pydantic-ai merges it for the model."""


@dataclass
class Handed:
    """What a capability's ``before_model_request`` handed on at one request: the messages of the request
    context it returned (what the model is sent) and how long the run's history was then."""

    messages: list[Any]
    history_length: int


def recording(capability: Any, handed: list[Handed]) -> Any:
    """``capability`` with each ``before_model_request`` it answers recorded in ``handed`` (`Handed`); the hook
    itself runs unchanged (the instance's own method, called as pydantic-ai calls it)."""
    hook = capability.before_model_request

    async def before_model_request(ctx: Any, request_context: Any) -> Any:
        result = await hook(ctx, request_context)
        handed.append(Handed(messages=list(result.messages), history_length=len(ctx.messages)))
        return result

    capability.before_model_request = before_model_request
    return capability


def as_sent(run: Replayed, handed: list[Handed]) -> list[Any]:
    """The run as the model saw it: what the capability handed on at the run's last request (`recording`),
    then what the run recorded after that request (a finished run's answer); the run's history when no
    request was handed on."""
    if not handed:
        return run.kept
    last = handed[-1]
    return [*last.messages, *run.kept[last.history_length :]]


class Asked(Exception):
    """Raised by the scripted model when the run asks it past the history's end: the request is read, the run ends."""


AgentOf = Callable[[Any, list[Any], "list[str] | None"], Any]
"""``(model, tools, system_prompts) -> Agent``: the agent around the scripted model and replayed tools, with the
history's system prompts as its own when nothing else came before the turn (one ``SystemPromptPart`` each)."""


async def replay(
    messages: list[Message], agent_of: AgentOf, *, tool_search: bool = False, pending: bool = False, handed: list[Handed] | None = None
) -> Replayed | None:
    """The history's last turn run through pydantic-ai's ``Agent`` (module docstring), or None when the
    history does not end in a run of its loop (`last_turn`). With ``pending``, a history ending in a request
    (a user message, or the results of the last calls) is run up to the model request after it, read and
    ended there (`Asked`). With ``tool_search``, the tools called only before the turn are deferred and the
    history holds the search rounds that found them (`with_searches`). ``handed``: the requests a `recording`
    capability handed on, whose messages are noted as the run's own are."""
    from .pydantic_ai import EXTRA, _user_content, to_pydantic_ai

    pm = requires("pydantic_ai.messages", EXTRA)
    pydantic_ai = requires("pydantic_ai", EXTRA)
    function = requires("pydantic_ai.models.function", EXTRA)
    start = last_turn(messages, pending=pending)
    if start is None or (pending and not recorded(messages, messages[start:])):  # history_processor (STORE-22) judges the bookkeeping alone
        return None
    before, turn = messages[:start], messages[start:]
    said_before = any(m.get("role") not in ("system", "developer") for m in before)
    history, notes = to_pydantic_ai(before) if said_before else ([], Notes())
    deferred = deferred_names(before, turn) if tool_search else []
    if deferred:
        history = with_searches(pm, history, set(deferred))
    system = None if said_before else [str(text_of_parts(m.get("content"))) for m in before]
    if not all(isinstance(_arguments(c), dict) for m in turn for c in m.get("tool_calls") or []):
        return None  # a call whose arguments are no JSON object: pydantic-ai would have retried it, not run it
    answers = script(pm, turn)
    sent: list[list[Any]] = []

    def answer(request: list[Any], info: Any) -> Any:
        sent.append(list(request))
        if len(sent) > len(answers):
            if pending:
                raise Asked()
            raise RuntimeError("the run asked the model more often than the history's turn answered")
        return answers[len(sent) - 1]

    results = {str(m.get("tool_call_id")): tool_text(m.get("content")) for m in turn if m.get("role") == "tool"}

    async def tool(ctx: Any, **_arguments: Any) -> Any:
        return results.get(str(ctx.tool_call_id), "")

    schema = {"type": "object", "properties": {}, "additionalProperties": True}
    tools = []
    for name in [*dict.fromkeys(call_names(turn).values()), *deferred]:
        made = pydantic_ai.Tool.from_schema(tool, name=name, description=f"{name} (replayed)", json_schema=schema, takes_ctx=True)
        if name in deferred:
            made.defer_loading = True  # hidden until a search finds it (the history's drawn rounds)
        tools.append(made)
    agent = agent_of(function.FunctionModel(answer), tools, system)
    with pydantic_ai.capture_run_messages() as captured:
        try:
            result = await agent.run(_user_content(pm, turn[0].get("content")), message_history=history or None)
        except Asked:
            note_turn(pm, [list(captured), *(h.messages for h in handed or [])], turn, notes, before)
            return Replayed(history=history, notes=notes, sent=sent, result=None, kept=list(captured))
    if messages[-1].get("role") != "assistant":
        return None  # the run ended before the history did: not a run of pydantic-ai's loop
    note_turn(pm, [*sent, list(result.all_messages()), *(h.messages for h in handed or [])], turn, notes, before)
    return Replayed(history=history, notes=notes, sent=sent, result=result, kept=list(result.all_messages()))
