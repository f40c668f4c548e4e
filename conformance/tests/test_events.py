"""Profile events: seed 000's audit trail (SPEC EVT-1..EVT-3).

Every test here runs in the target's own wire format (`TARGET_FORMAT`): ``messages_before`` and
``messages_after`` count its items (messages), the usage is the one the suite's summarizer
reported in whichever API the target asked it."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given
from hypothesis import settings as hypothesis_settings

from compaction_suite.conformance.assertions import require
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.summarizer_server import request_usage
from compaction_suite.conformance.violation import Violation

from .common import FAULT_SWEEP, FAULTS, HANG_TIMEOUT, TARGET_FORMAT, changed, clause, faulted, run, substantial_in_format, summarizing

pytestmark = TARGET_FORMAT

DEFAULT = Settings()
T, K = DEFAULT.threshold_iterations, DEFAULT.keep_recent_rounds
HEX8 = re.compile(r"^[0-9a-f]{8}$")


def _event(suite, history, **changes):
    subject, out = run(suite, history, T, **changes)
    assume(changed(history, out))  # the event of a compaction
    event = subject.event
    require(None if event is not None else Violation("no-event", "no last_event after a compaction"), history, out)
    return event, out


@clause("EVT-1")
@given(history=substantial_in_format)
def test_event_fields(suite, history):
    event, out = _event(suite, history)
    each = [found for r in suite.server.requests if (found := request_usage(r)) is not None]
    expected = {key: sum(u[key] for u in each) for key in ("prompt_tokens", "completion_tokens")} if each else {}  # several calls (a chunked summary): their sum
    problems: list[tuple[str, str]] = []
    for key, want in [("messages_before", suite.format.length(history)), ("messages_after", suite.format.length(out))]:
        if event.get(key) != want:
            problems.append((key, f"{key}={event.get(key)!r}, expected {want}"))
    if not isinstance(event.get("estimated_tokens_saved"), int):
        problems.append(("estimated_tokens_saved", f"estimated_tokens_saved={event.get('estimated_tokens_saved')!r} is not an integer"))
    for key, usage_key in [("summarizer_prompt_tokens", "prompt_tokens"), ("summarizer_completion_tokens", "completion_tokens")]:
        if event.get(key) != expected.get(usage_key):
            problems.append((key, f"{key}={event.get(key)!r}, the responses' usage said {expected.get(usage_key)!r}"))
    if not HEX8.match(str(event.get("prompt_hash"))):
        problems.append(("prompt_hash", f"prompt_hash={event.get('prompt_hash')!r} is not 8 lowercase hex characters"))
    problem = Violation(f"event-field:{problems[0][0]}", "; ".join(text for _, text in problems)) if problems else None
    require(problem, history, out)


@clause("EVT-2")
@given(first=substantial_in_format, second=substantial_in_format)
def test_prompt_hash_follows_the_prompt(suite, first, second):
    a, _ = _event(suite, first)
    b, _ = _event(suite, second)
    require(None if a.get("prompt_hash") == b.get("prompt_hash") else Violation("hash-follows-history", "same prompt, different hashes"), second)
    c, _ = _event(suite, first, summary_prompt="Summarize tersely for an auditor.")
    d, _ = _event(suite, second, summary_prompt="Summarize tersely for an auditor.")
    require(None if c.get("prompt_hash") == d.get("prompt_hash") else Violation("hash-follows-history", "same override, different hashes"), second)
    require(None if c.get("prompt_hash") != a.get("prompt_hash") else Violation("hash-ignores-prompt", "the override did not change the hash"), first)


@clause("EVT-2")
@hypothesis_settings(max_examples=3)
@given(history=substantial_in_format)
def test_prompt_hash_agrees_across_processes(suite, other_process, history):
    """EVT-2 decision: the hash of the configured prompt is the same in every process and run."""
    here, _ = _event(suite, history)
    suite.reset_server()
    there = other_process.compact(suite.settings, history, T)
    theirs = (there.get("event") or {}).get("prompt_hash")
    if there.get("error"):
        problem: Violation | None = Violation("second-process-failed", f"the second process failed: {there['error']}")
    else:
        problem = None if theirs == here.get("prompt_hash") else Violation("hash-differs-across-processes", f"prompt_hash {here.get('prompt_hash')!r} here, {theirs!r} in another process")
    require(problem, history)


@clause("EVT-3")
@pytest.mark.parametrize("fault", FAULTS)
@FAULT_SWEEP
@given(history=substantial_in_format)
def test_failure_reason(suite, fault, history):
    """EVT-3 after every kind of fault its summarizer API sends, not one, in a history the target summarizes."""
    history = summarizing(suite, history, fault)
    subject = faulted(suite, fault, max_context_tokens=1, summarizer_timeout=HANG_TIMEOUT)
    subject.compact(history, T)
    reason = (subject.event or {}).get("failure_reason")
    require(None if isinstance(reason, str) and reason.strip() else Violation("no-failure-reason", f"failure_reason={reason!r}"), history)
