"""Assertion helpers that name the clause and show the messages (in the style of array-api-tests)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from .clauses import clauses
from .violation import reason_id

PREVIEW = 90
UNCLASSIFIED = "unclassified"
"""The reason id of a plain-text problem (every check of the suite returns a `Violation`; a test
of this project asserts no failure is left unclassified)."""


class ClauseViolation(AssertionError):
    """A clause does not hold; ``history`` is the input that shows it (Hypothesis shrinks it)."""

    def __init__(self, clause_id: str, reason: str, history: Any = None, output: Any = None) -> None:
        self.clause_id = clause_id
        self.reason = str(reason)
        self.reason_id = reason_id(reason, UNCLASSIFIED)
        self.history = history
        self.output = output
        clause = clauses()[clause_id]
        parts = [f"{clause_id} ({clause.level}: {clause.title}): {reason}"]
        if history is not None:
            parts.append(render("input", history))
        if output is not None:
            parts.append(render("output", output))
        super().__init__("\n".join(parts))


CHECKED: list[Callable[[str, Any], None]] = []
"""Listeners told of each check that held (the suite counts what exercised a clause)."""
RAISED: list[Callable[[ClauseViolation], None]] = []
"""Listeners told of each violation before it is raised: every failing example a test meets, not
only the one Hypothesis shrinks and reports (the plugin keeps each distinct reason, SPEC Part A,
"Reason ids")."""
CURRENT: list[str] = []
"""The clause of the conformance test running now (its ``clause`` marker; set by the plugin)."""


def current() -> str:
    """The clause of the conformance test running now (its ``clause`` marker)."""
    if not CURRENT:
        raise RuntimeError("no conformance test is running: its clause comes from its marker")
    return CURRENT[0]


def require(problem: str | None, history: Any = None, output: Any = None, *, clause: str | None = None) -> None:
    """Raise `ClauseViolation` when a check found a problem (``problem`` is its reason, a
    `Violation` carrying the defect's id). The clause is the running test's (its ``clause``
    marker), unless ``clause`` names another."""
    clause_id = clause or (CURRENT[0] if CURRENT else None)
    if clause_id is None:
        raise RuntimeError("require() outside a conformance test needs clause=")
    if problem is not None:
        violation = ClauseViolation(clause_id, problem, history, output)
        for heard in RAISED:
            heard(violation)
        raise violation
    for listener in CHECKED:
        listener(clause_id, history)


def render(label: str, messages: Any) -> str:
    """A compact listing of messages: index, role, tool ids and the start of the text. Responses
    items show their type; an Anthropic request part its ``system``, then its messages."""
    if isinstance(messages, dict) and isinstance(messages.get("messages"), list):
        system = json.dumps(messages["system"], ensure_ascii=False)[:PREVIEW] if "system" in messages else "(none)"
        return f"  {label} system: {system}\n" + render(label, messages["messages"])
    if not isinstance(messages, Sequence) or isinstance(messages, str):
        return f"  {label}: {messages!r}"
    lines = [f"  {label} ({len(messages)} messages):"]
    for i, m in enumerate(messages):
        lines.append(f"    [{i}] {_one_line(m)}")
    return "\n".join(lines)


def _one_line(message: Any) -> str:
    if not isinstance(message, dict):
        return repr(message)[:PREVIEW]
    role = message.get("role") or message.get("type")
    ids = [c.get("id") for c in message.get("tool_calls") or [] if isinstance(c, dict)]
    ids += [b.get("id") for b in message.get("content") or [] if isinstance(b, dict) and b.get("type") == "tool_use"] if isinstance(message.get("content"), list) else []
    tag = f" calls {ids}" if ids else ""
    tag += f" answers {message['tool_call_id']!r}" if "tool_call_id" in message else ""
    tag += f" {message['call_id']!r}" if "call_id" in message else ""
    content = message.get("content", message.get("output", message.get("arguments", message.get("encrypted_content"))))
    body = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    body = body.replace("\n", "\\n")
    return f"{role}{tag}: {body[:PREVIEW]}{'…' if len(body) > PREVIEW else ''}"
