"""Wire formats: which provider's history shape a compactor compacts (SPEC Part A, "Wire formats").

A compactor declares its format with the key ``wire_format`` of its ``capabilities`` mapping
(the same mapping that carries the declarations of SPEC Part A "Declarations"; a ``cmd:``
program sends it in the ``start`` answer's ``capabilities``, protocol 1.2). Absent means
``chat-completions``, so every existing compactor is checked exactly as before.

What ``compact(history, *, iteration)`` receives and must return, per format:

- ``chat-completions``: the OpenAI chat-completions message list (unchanged).
- ``responses``: the list of OpenAI Responses API input items, as ``input`` takes them
  (``message``, ``function_call``, ``function_call_output``, ``reasoning``, ``compaction``).
- ``anthropic-messages``: a request-shaped dict ``{"system": ..., "messages": [...]}``: the
  Messages API keeps the system prompt outside the list, so the compactor receives it (to
  read, never to change) and returns it beside the messages. ``system`` is absent when the
  request has none.

Each format's rules are written once, in its own module (``chat``, ``responses``,
``anthropic``): validity, pairing, rounds, in-flight, the clause checks judged on every
output, and the mapping from chat-completions. The Hypothesis strategies that draw valid
histories are apart (`conformance.histories`, `conformance.responses_histories`,
`conformance.anthropic_histories`), imported only when a history is drawn, so judging imports
no Hypothesis. `WireFormat` is that module seen through one interface.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from compaction_suite.message import Message

from .. import placeholders
from ..violation import Violation

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from ..summarizer_server import Exchange

CHAT = "chat-completions"
RESPONSES = "responses"
ANTHROPIC = "anthropic-messages"
NAMES = (CHAT, RESPONSES, ANTHROPIC)
"""Every wire format, the default first."""
KEY = "wire_format"
"""The ``capabilities`` key that declares a compactor's format."""

ChatHistory = list[Message]
"""chat-completions: ``[{"role": "system" | "developer" | "user" | "assistant" | "tool", ...}]``."""
ResponsesItems = list[dict[str, Any]]
"""responses: ``[{"type": "message" | "function_call" | "function_call_output" | "reasoning" | "compaction", ...}]``."""
AnthropicRequest = dict[str, Any]
"""anthropic-messages: ``{"system"?: str | [text blocks], "messages": [{"role": "user" | "assistant", "content": ...}]}``."""
History = ChatHistory | ResponsesItems | AnthropicRequest

Checks = Mapping[str, "str | None"]
"""{clause id: None when it holds, else a one-line reason pointing at the item that is wrong (a
`Violation`, carrying the defect's ``reason_id``)}."""


@dataclass(frozen=True)
class WireFormat:
    """One format's rules, as the suite, the tests and the reports use them.

    Every function takes a history in this format's shape (see the module docstring) and
    never raises on a malformed one: judging malformed output is its job.
    """

    name: str
    family: str
    """The clause id prefix of this format's own clauses (``CORE`` for chat-completions)."""
    invalid: Callable[[Any], str | None]
    """The provider's validity rules: None for a history the provider accepts, else the first
    rule broken, naming the index (used on inputs the suite draws and on outputs)."""
    in_flight: Callable[[Any], bool]
    """Whether the history ends with a tool call still waiting for its result."""
    in_flight_clause: str
    """The clause that such a history comes back unchanged (CORE-9, RESP-8, ANTH-6)."""
    no_failed_summary: Callable[[Any, Any], str | None]
    """CORE-11 in this format: ``(history, out)`` after a summarizer fault, None when the output
    holds nothing new standing for removed items (results masked in place aside), else why."""
    structural: Callable[[Any, Any], Checks]
    """``structural(history, out)``: the format's clauses judged on every output (SPEC Part A,
    "Every output"), each with None or its reason."""
    histories: Callable[..., SearchStrategy[Any]]
    """Valid histories in this format (keyword arguments as `conformance.histories.histories`:
    ``min_rounds``, ``max_rounds``; each module documents what else it takes)."""
    length: Callable[[Any], int]
    """How many items (messages) the history holds, for reports and counts."""
    from_chat: Callable[[ChatHistory], Any]
    """The history in this format that a chat-completions history maps to, where the mapping is
    faithful (each module says for which histories): how the suite's fixed probe history and
    the chat-completions generator reach every format."""
    judged: tuple[str, ...]
    """The clause ids `structural` judges (counted as exercised by every compaction)."""

    # What the format-independent profile tests (trigger, failure, events, SUM-5, CORE-7) ask of
    # a history, written once per format (SPEC Part A, "Wire formats", the table of clauses).
    well_formed: Callable[[Any], bool]
    """Whether an output has this format's outer shape (the structural clauses judge the rest):
    a test that needs to read an output reads only such a one."""
    rounds: Callable[[Any], list[list[Any]]]
    """The history's rounds, system prompt aside (SPEC ROUND-1 read in this format): what "the
    last K rounds" and "something older to compact" count."""
    is_summary: Callable[[Any], bool]
    """Whether one item (message) stands for an earlier compaction: seed 000's ``[Context
    Summary]`` user message, and in Responses a provider ``compaction`` item."""
    tokens: Callable[[Any], int]
    """chars/4 over what the model reads (SPEC TOK-1): the suite's estimate for a compactor
    that offers none."""
    without_system: Callable[[Any], Any]
    """The history without its system prompt, as a framework that keeps it outside hands it
    over (``capabilities["system_prompt"] = "outside"``)."""
    removed: Callable[[Any, Any], Any]
    """``removed(history, out)``: the part of ``history`` the output no longer holds, as a history
    `tokens` can count (CORE-7 weighs it)."""

    # What the format-independent every-output clauses (CORE-11, CORE-12, CORE-14, CORE-16,
    # CORE-17; `conformance.judges`) ask of an item, written once per format.
    items: Callable[[Any], list[Any]]
    """The history's items (messages) in order, system prompt included where the list holds it
    (an Anthropic request: its ``messages``); empty for a malformed history."""
    role: Callable[[Any], str | None]
    """An item's role (``user``, ``assistant``, ...; a Responses item that is no message: its type)."""
    said: Callable[[Any], str]
    """What an item says that a summary must carry: message and tool-result text, a call's
    arguments aside (SPEC CORE-12 Decision)."""
    corresponds: Callable[[Any, Any], bool]
    """``corresponds(before, after)``: whether output item ``after`` is input item ``before`` kept:
    verbatim, masked in place (a tool result for the same call), or re-encoded (same role and text)."""
    combined: Callable[[Any, Sequence[Any]], bool] = lambda before, after: False
    """``combined(before, after)``: whether input item ``before`` is kept inside one of the output
    items ``after`` that joins it with its neighbours of the same role, where the provider itself
    joins them (the Messages API combines consecutive turns of one role; SPEC CORE-14 Decision).
    No other format's provider joins items: there, never."""
    joins: Callable[[Sequence[Any], Any], int] = lambda before, after: 0
    """``joins(before, after)``: how many of the input items ``before`` output item ``after`` joins
    (0: it is no join), each run of its content one of them kept (`corresponds`), where the
    provider itself joins items (`combined` seen from the output; SPEC CORE-11 Decision: turns the
    provider joins). No other format's provider joins items: there, 0."""

    def in_flight_changed(self, history: Any, out: Any) -> str | None:
        """The in-flight clause (`in_flight_clause`) on one output: a history waiting for a tool
        result comes back unchanged (SPEC CORE-9, RESP-8, ANTH-6); None when it did or was not
        waiting."""
        return Violation("compacted-in-flight", "a history waiting for a tool result was changed") if self.in_flight(history) and not same(history, out) else None

    def findings(self, history: Any, out: Any, providers: tuple[str, ...] = (), exchanges: Sequence[Exchange] | None = None) -> dict[str, str]:
        """What one output breaks, judged on it alone: the every-output clauses (`structural`, and
        CORE-14, CORE-16, CORE-17 for ``providers``) and the in-flight clause, each with its reason
        (a replayed case, the bench replay). Given the summarizer ``exchanges`` the call made (a
        replayed case, whose summarizer answered), CORE-12, CORE-13 and CORE-18 are judged on them
        as the suite judges them while the call happens; without, CORE-12 and CORE-13 are not."""
        from .. import judges

        seen = exchanges or ()
        found = {**self.structural(history, out), **judges.every_output(self, history, out, seen, providers), self.in_flight_clause: self.in_flight_changed(history, out)}
        if exchanges is not None:
            found[judges.ANSWERED] = judges.summary_stands_for_answer(self, history, out, seen)
            found[judges.ACCEPTED] = judges.requests_accepted(seen)
        return {clause: reason for clause, reason in found.items() if reason}


def same(a: Any, b: Any) -> bool:
    """Byte-identical as JSON (key order aside): what "kept verbatim" means, in every wire format.
    Never raises: a value JSON cannot hold is compared by its text (a malformed output is judged,
    not crashed on)."""
    return canonical(a) == canonical(b)


def canonical(value: Any) -> str:
    """``value`` as `same` compares it: JSON with sorted keys, what JSON cannot hold as its text.
    A set of these finds the items kept verbatim among many without comparing each pair."""
    return json.dumps(value, sort_keys=True, default=str)


def strings(value: Any) -> list[str]:
    """Every string inside a JSON value, in order (dict values, list items)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [s for v in value for s in strings(v)] if isinstance(value, list) else []


def kept_or_marked(before: Sequence[Any], item: Any, corresponds: Callable[[Any, Any], bool]) -> bool:
    """CORE-11: ``item`` is one of the input's (``corresponds``), or a truncation's placeholder
    ("[... 3 messages elided ...]") standing alone or added to one of them: a marker of what was
    removed, not a summary (SPEC CORE-11 Decision: placeholders; CORE-21 judges its count)."""
    if any(corresponds(b, item) for b in before) or placeholders.is_placeholder(item):
        return True
    bare = placeholders.without_placeholders(item)
    return bare != item and any(corresponds(b, bare) for b in before)


def failed_summary(label: str, item: Any, empty: bool) -> Violation:
    """CORE-11's finding on ``item`` (at ``label``), in every format: it stands for removed items
    although the summarizer failed; ``empty``: it says nothing at all (an empty summary or
    compaction item)."""
    body = " ".join(" ".join(strings(item)).split())
    shown = (body[:60] + "…") if len(body) > 60 else body
    return Violation(
        "empty-summary" if empty else "failed-summary",
        f"{label} is new although the summarizer failed: it stands for removed items no summary was written for ({shown!r})",
    )


def _registry() -> dict[str, WireFormat]:
    from . import anthropic, chat, responses

    return {CHAT: chat.FORMAT, RESPONSES: responses.FORMAT, ANTHROPIC: anthropic.FORMAT}


def get(name: str) -> WireFormat:
    """The format called ``name`` (one of `NAMES`)."""
    return _registry()[name]


def declared(compactor: Any) -> str:
    """The format ``compactor`` declares (``capabilities["wire_format"]``), ``chat-completions``
    when it declares none; raises `CapabilityError` for an unknown one."""
    from ..capabilities import declared as capabilities

    return capabilities(compactor).wire_format


def other_formats_clauses(name: str) -> list[str]:
    """The clauses that never apply to a target of format ``name`` (each clause lists the
    formats it is checked on, chat-completions unless ``clauses.json`` says otherwise)."""
    from ..clauses import clauses

    return [c.id for c in clauses().values() if name not in c.formats]
