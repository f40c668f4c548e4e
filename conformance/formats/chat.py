"""OpenAI chat-completions, seen as a `WireFormat` (SPEC CORE-1..CORE-11).

Nothing here is new: the rules live in `conformance.oracle` and the strategies in
`conformance.histories`; this module only points at them, so the suite can treat every
format alike.
"""

from __future__ import annotations

from typing import Any

from .. import oracle
from ..histories import histories
from . import WireFormat


def in_flight(messages: Any) -> bool:
    """Whether the last round has an unanswered tool call (SPEC CORE-9, ROUND-3)."""
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        return False
    last = oracle.rounds(messages)[-1]
    answered = {messages[i].get("tool_call_id") for i in last[1:]}
    return any(call_id not in answered for call_id in oracle.call_ids(messages[last[0]]))


def structural(history: Any, out: Any) -> dict[str, str | None]:
    """CORE-1, CORE-2, CORE-3, CORE-4 and CORE-6 on one output."""
    found: dict[str, str | None] = {"CORE-6": oracle.check_valid_messages(out)}
    if isinstance(out, list) and all(isinstance(m, dict) for m in out):
        found["CORE-1"] = oracle.check_tool_results_have_calls(out)
        if not in_flight(history):
            found["CORE-2"] = oracle.check_calls_have_one_result(out)
        found["CORE-3"] = oracle.check_system_kept(history, out, not oracle.same(history, out))
        found["CORE-4"] = oracle.check_rounds_whole(history, out)
    return found


def length(messages: Any) -> int:
    return len(messages) if isinstance(messages, list) else 0


FORMAT = WireFormat(
    name="chat-completions", family="CORE", invalid=oracle.check_valid_messages, in_flight=in_flight,
    structural=structural, histories=histories, length=length,
)
