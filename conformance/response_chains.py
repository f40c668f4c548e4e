"""The response chains the Responses API keeps, as the summarizer TEST DOUBLE keeps them (SPEC Part A,
"Wire formats", Decision: response chains; CORE-13).

The Responses API stores each response it answers unless the request says ``"store": false``: its
input, resolved through the ``previous_response_id`` it named, and its output. A later
``POST /v1/responses`` or ``POST /v1/responses/compact`` naming that response as its
``previous_response_id`` stands for the stored chain followed by its own ``input``
(OpenAI's "Conversation state" guide; "Compact a response" takes ``previous_response_id`` in place of
``input``). The compact endpoint keeps nothing (its id cannot be chained: pydantic/pydantic-ai#5086).

Where the API refuses a chain, the double refuses it with the API's HTTP 400 and text:

* a ``previous_response_id`` it never stored (unknown, or answered with ``store`` false):
  "Previous response with id '…' not found.", code ``previous_response_not_found``, param
  ``previous_response_id`` (maximhq/bifrost#2441, bigduu/Bamboo-agent#513 for a ``store=false``
  turn, pydantic/pydantic-ai#5086; openai/openai-agents-python#2333: the OpenAI Agents SDK's
  compaction session naming an unstored response);
* a stored response holding a ``function_call`` whose ``function_call_output`` neither the chain nor
  the request supplies: "No tool output found for function call …." (openai/openai-agents-python#2317:
  the SDK compacting, by ``previous_response_id``, a response whose calls its tools were still
  answering locally; #1061: an agent run continued by ``previous_response_id``);
* an input item whose ``id`` (or an ``item_reference``'s) the chain or the conversation already holds:
  "Duplicate item found with id …. Remove duplicate items from your input and try again.", param
  ``input``, no code (openai/openai-agents-python#1789: ``Runner.run_streamed`` with ``conversation_id``
  re-sending a ``function_call`` the conversation held; vercel/ai#15492: ``previous_response_id`` with the
  chain's reasoning item repeated by reference). An item without an ``id`` is new: the API adds it.
  The API refuses an ``id`` repeated within one request's own ``input`` in the same words
  (microsoft/vscode#321977, ``msg_123`` twice in a stateless Copilot request; earendil-works/pi#5165,
  ``msg_1``; continuedev/continue#10723, a reasoning item's ``rs_…``): `repeated_item`, which the
  request's rules apply to its resolved input (``summarizer_apis.responses_rejects``) and RESP-6 to a
  compactor's output.

A conversation (the Conversations API: ``POST /v1/conversations``, optionally with ``items``) is read as a
chain is: a response created with ``conversation`` (its id, or ``{"id": …}``) stands for the
conversation's items followed by its ``input``, and the API appends that input and the response's output to
the conversation (OpenAI's "Conversation state" guide). A conversation the double never opened is refused
with the double's own words (the API's text for it is not quoted here).

Standard library only; `summarizer_server` holds one `ResponseStore` per server.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Collection, Mapping
from typing import Any, cast

from .violation import Violation

NOT_FOUND = "summarizer-request-previous-response-not-found"
UNANSWERED = "summarizer-request-previous-response-unanswered-tool-call"
DUPLICATE = "summarizer-request-duplicate-item"
NO_CONVERSATION = "summarizer-request-conversation-not-found"
CALLS = {"function_call": "function", "custom_tool_call": "custom tool"}
OUTPUTS = {"function_call_output": "function_call", "custom_tool_call_output": "custom_tool_call"}


def _kind(item: Mapping[str, Any]) -> str:
    return str(item.get("type", "message" if "role" in item else ""))


def _items(value: Any) -> list[dict[str, Any]]:
    """A request's ``input`` as items (a string is one user message)."""
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    return [dict(i) for i in value or [] if isinstance(i, Mapping)]


class Refusal(Violation):
    """A chain the API refuses: the `Violation` (reason id and the API's text) with its error ``code``
    and ``param``, as the API's error body carries them."""

    code: str | None
    param: str | None

    def __new__(cls, reason_id: str, reason: str, code: str | None = None, param: str | None = None) -> Refusal:
        self = cast(Refusal, super().__new__(cls, reason_id, reason))
        self.code, self.param = code, param
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (Refusal, (self.reason_id, str(self), self.code, self.param))


def unanswered_stored_call(stored: list[dict[str, Any]], given: list[dict[str, Any]]) -> tuple[str, str] | None:
    """The first call of the ``stored`` chain (kind, ``call_id``) whose output is in neither the
    stored chain nor the ``given`` input, or None."""
    answered = {(OUTPUTS[_kind(i)], i.get("call_id")) for i in [*stored, *given] if _kind(i) in OUTPUTS}
    return next(((_kind(i), str(i.get("call_id"))) for i in stored if _kind(i) in CALLS and (_kind(i), i.get("call_id")) not in answered), None)


def item_id(item: Any) -> str | None:
    """The id an input item names: its own ``id``, or the one an ``item_reference`` points to."""
    found = item.get("id") if isinstance(item, Mapping) else None
    return found if isinstance(found, str) and found else None


def duplicate_item(stored: list[dict[str, Any]], given: list[dict[str, Any]]) -> str | None:
    """The first id among the ``given`` input items that the ``stored`` chain or conversation already
    holds, or None (an item without an id is new)."""
    held = {i for i in map(item_id, stored) if i is not None}
    return next((i for i in map(item_id, given) if i is not None and i in held), None)


def repeated_item(items: Any, allowed: Collection[str] = ()) -> tuple[int, int, str] | None:
    """The first item of ``items`` (a request's input) whose id an earlier item already named, ids in
    ``allowed`` aside: (the earlier index, its index, the id), or None. The API refuses it: `duplicate_text`."""
    first: dict[str, int] = {}
    for index, name in enumerate(map(item_id, items if isinstance(items, list) else [])):
        if name is None or name in allowed:
            continue
        if name in first:
            return first[name], index, name
        first[name] = index
    return None


def named_twice(items: Any) -> set[str]:
    """The ids ``items`` name more than once."""
    names = [name for name in map(item_id, items if isinstance(items, list) else []) if name is not None]
    return {name for name in names if names.count(name) > 1}


def duplicate_text(name: str) -> str:
    """The Responses API's words for an input naming the item ``name`` twice (param ``input``, no code)."""
    return f"Duplicate item found with id {name}. Remove duplicate items from your input and try again."


def conversation_of(body: Mapping[str, Any]) -> str | None:
    """The conversation a Responses request names (``"conversation": "conv_…"`` or ``{"id": "conv_…"}``), or None."""
    named = body.get("conversation")
    named = named.get("id") if isinstance(named, Mapping) else named
    return named if isinstance(named, str) and named else None


class ResponseStore:
    """What the double stored: response id -> the chain that response ends (its resolved input, then
    its output); conversation id -> the conversation's items. Thread-safe."""

    def __init__(self) -> None:
        self._chains: dict[str, list[dict[str, Any]]] = {}
        self._conversations: dict[str, list[dict[str, Any]]] = {}
        self._opened = 0
        self._lock = threading.Lock()

    def open_conversation(self, items: Any = None) -> str:
        """A new conversation holding ``items`` (``POST /v1/conversations``): its id."""
        with self._lock:
            self._opened += 1
            name = f"conv_compaction_suite_{self._opened:06d}"
            self._conversations[name] = copy.deepcopy(_items(items))
        return name

    def resolve(self, body: Mapping[str, Any]) -> tuple[dict[str, Any], Refusal | None]:
        """``body`` as the API reads it: its ``previous_response_id`` (or ``conversation``) replaced by the
        stored chain (or the conversation's items) before its ``input`` (a body naming neither is returned
        as it is), or the API's refusal."""
        previous = body.get("previous_response_id")
        conversation = conversation_of(body)
        if not previous and conversation is None:
            return dict(body), None
        with self._lock:
            stored = copy.deepcopy(self._chains.get(str(previous)) if previous else self._conversations.get(str(conversation)))
        if stored is None and previous:
            return dict(body), Refusal(NOT_FOUND, f"Previous response with id '{previous}' not found.", "previous_response_not_found", "previous_response_id")
        if stored is None:
            return dict(body), Refusal(NO_CONVERSATION, f"Conversation '{conversation}' was never opened on this test double.", None, "conversation")
        given = _items(body.get("input"))
        duplicate = duplicate_item(stored, given)
        if duplicate is not None:
            return dict(body), Refusal(DUPLICATE, duplicate_text(duplicate), None, "input")
        missing = unanswered_stored_call(stored, given)
        if missing is not None:
            kind, call_id = missing
            return dict(body), Refusal(UNANSWERED, f"No tool output found for {CALLS[kind]} call {call_id}.")
        resolved = {k: v for k, v in body.items() if k != "previous_response_id"}
        resolved["input"] = stored + given
        return resolved, None

    def keep(self, resolved: Mapping[str, Any], answer: Mapping[str, Any]) -> None:
        """Store the response ``answer`` gave to the request ``resolved`` (`resolve`'s body) unless the
        request said ``"store": false`` (the API's default is to store); a request naming a conversation
        leaves the conversation holding its resolved input and the response's output."""
        if not isinstance(answer.get("id"), str):
            return
        output = [dict(o) for o in answer.get("output") or [] if isinstance(o, Mapping)]
        chain = copy.deepcopy(_items(resolved.get("input")) + output)
        conversation = conversation_of(resolved)
        with self._lock:
            if conversation is not None and conversation in self._conversations:
                self._conversations[conversation] = copy.deepcopy(chain)
            if resolved.get("store") is not False:
                self._chains[answer["id"]] = chain

    def __contains__(self, response_id: object) -> bool:
        with self._lock:
            return response_id in self._chains

    def clear(self) -> None:
        with self._lock:
            self._chains.clear()
            self._conversations.clear()
