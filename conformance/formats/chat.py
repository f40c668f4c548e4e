"""OpenAI chat-completions, seen as a `WireFormat` (SPEC CORE-1..CORE-11).

Nothing here is new: the rules live in `conformance.oracle` and the strategies in
`conformance.histories` (imported when drawn: judging imports no Hypothesis); this module only
points at them, so the suite can treat every format alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import oracle
from ..clauses import every_output, in_flight
from . import WireFormat

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy


def histories(*args: Any, **options: Any) -> SearchStrategy[list[dict[str, Any]]]:
    """`conformance.histories.histories` (same arguments)."""
    from ..histories import histories as drawn

    return drawn(*args, **options)


def structural(history: Any, out: Any) -> dict[str, oracle.Violation | None]:
    """CORE-1, CORE-2, CORE-3, CORE-4 and CORE-6 on one output."""
    found: dict[str, oracle.Violation | None] = {"CORE-6": oracle.check_valid_messages(out, history if isinstance(history, list) else ())}
    if isinstance(out, list) and all(isinstance(m, dict) for m in out):
        found["CORE-1"] = oracle.check_tool_results_have_calls(out)
        if not oracle.in_flight(history):  # an open call is CORE-9's (SPEC CORE-2 decision)
            found["CORE-2"] = oracle.check_calls_have_one_result(out)
        found["CORE-3"] = oracle.check_system_kept(history, out, not oracle.same(history, out))
        found["CORE-4"] = oracle.check_rounds_whole(history, out)
    return found


def length(messages: Any) -> int:
    return len(messages) if isinstance(messages, list) else 0


def well_formed(out: Any) -> bool:
    """A list of dicts: the structural clauses judge only that (CORE-6 judges the rest)."""
    return isinstance(out, list) and all(isinstance(m, dict) for m in out)


def without_system(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m.get("role") not in oracle.SYSTEM_ROLES]


def removed(history: list[dict[str, Any]], out: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The input's messages the output does not keep (matched in order, `oracle.kept_indices`)."""
    kept = set(oracle.kept_indices(history, out)[0].values())
    return [m for i, m in enumerate(history) if i not in kept]


def items(messages: Any) -> list[Any]:
    return list(messages) if well_formed(messages) else []


def role(message: Any) -> str | None:
    return message.get("role") if isinstance(message, dict) else None


FORMAT = WireFormat(
    name="chat-completions", family="CORE", invalid=oracle.check_valid_messages, in_flight=oracle.in_flight, in_flight_clause=in_flight("chat-completions"), no_failed_summary=oracle.check_no_failed_summary,
    structural=structural, histories=histories, length=length, from_chat=list, judged=every_output("chat-completions"),
    well_formed=well_formed, rounds=oracle.non_system_rounds, is_summary=oracle.is_summary, tokens=oracle.chars4,
    without_system=without_system, removed=removed,
    items=items, role=role, said=oracle.said, corresponds=oracle.corresponds,
)
