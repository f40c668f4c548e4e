"""The reference compactor's last event, for tests that read it after a ``compact`` call."""

from __future__ import annotations

from typing import Any

from compaction_suite.reference import CompactionEvent


def last(compactor: Any) -> CompactionEvent:
    """``compactor.last_event``, which a test reads only after a call made one (None fails the test)."""
    event = compactor.last_event
    assert isinstance(event, CompactionEvent), f"no event after the call: {event!r}"
    return event


def last_json(compactor: Any) -> dict[str, Any]:
    """The last event of a compactor that reports it as JSON (a ``cmd:`` program), present."""
    event = compactor.last_event
    assert isinstance(event, dict), f"no event after the call: {event!r}"
    return event
