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
from compaction_suite.conformance.summarizer_server import deterministic_summary, request_messages, usage

from .common import FAULT_SWEEP, FAULTS, HANG_TIMEOUT, TARGET_FORMAT, changed, clause, compacts, faulted, run, substantial_in_format

pytestmark = TARGET_FORMAT

DEFAULT = Settings()
T, K = DEFAULT.threshold_iterations, DEFAULT.keep_recent_rounds
HEX8 = re.compile(r"^[0-9a-f]{8}$")


def _event(suite, history, clause_id, **changes):
    subject, out = run(suite, history, T, **changes)
    assume(changed(history, out))  # the event of a compaction
    event = subject.event
    require(clause_id, None if event is not None else "no last_event after a compaction", history, out)
    return event, out


@clause("EVT-1")
@given(history=substantial_in_format)
def test_event_fields(suite, history):
    event, out = _event(suite, history, "EVT-1")
    asked = [found for r in suite.server.requests if (found := request_messages(r)) is not None]
    expected = usage(asked[-1], deterministic_summary(asked[-1])) if asked else {}
    problems = []
    for key, want in [("messages_before", suite.format.length(history)), ("messages_after", suite.format.length(out))]:
        if event.get(key) != want:
            problems.append(f"{key}={event.get(key)!r}, expected {want}")
    if not isinstance(event.get("estimated_tokens_saved"), int):
        problems.append(f"estimated_tokens_saved={event.get('estimated_tokens_saved')!r} is not an integer")
    for key, usage_key in [("summarizer_prompt_tokens", "prompt_tokens"), ("summarizer_completion_tokens", "completion_tokens")]:
        if event.get(key) != expected.get(usage_key):
            problems.append(f"{key}={event.get(key)!r}, the response's usage said {expected.get(usage_key)!r}")
    if not HEX8.match(str(event.get("prompt_hash"))):
        problems.append(f"prompt_hash={event.get('prompt_hash')!r} is not 8 lowercase hex characters")
    require("EVT-1", "; ".join(problems) or None, history, out)


@clause("EVT-2")
@given(first=substantial_in_format, second=substantial_in_format)
def test_prompt_hash_follows_the_prompt(suite, first, second):
    a, _ = _event(suite, first, "EVT-2")
    b, _ = _event(suite, second, "EVT-2")
    require("EVT-2", None if a.get("prompt_hash") == b.get("prompt_hash") else "same prompt, different hashes", second)
    c, _ = _event(suite, first, "EVT-2", summary_prompt="Summarize tersely for an auditor.")
    d, _ = _event(suite, second, "EVT-2", summary_prompt="Summarize tersely for an auditor.")
    require("EVT-2", None if c.get("prompt_hash") == d.get("prompt_hash") else "same override, different hashes", second)
    require("EVT-2", None if c.get("prompt_hash") != a.get("prompt_hash") else "the override did not change the hash", first)


@clause("EVT-2")
@hypothesis_settings(max_examples=3)
@given(history=substantial_in_format)
def test_prompt_hash_agrees_across_processes(suite, other_process, history):
    """EVT-2 decision: the hash of the configured prompt is the same in every process and run."""
    here, _ = _event(suite, history, "EVT-2")
    suite.reset_server()
    there = other_process.compact(suite.settings, history, T)
    theirs = (there.get("event") or {}).get("prompt_hash")
    problem = there.get("error") or (None if theirs == here.get("prompt_hash") else f"prompt_hash {here.get('prompt_hash')!r} here, {theirs!r} in another process")
    require("EVT-2", problem, history)


@clause("EVT-3")
@pytest.mark.parametrize("fault", FAULTS)
@FAULT_SWEEP
@given(history=substantial_in_format)
def test_failure_reason(suite, fault, history):
    """EVT-3 after every kind of fault, not one."""
    assume(compacts(suite, history))
    subject = faulted(suite, fault, summarizer_timeout=HANG_TIMEOUT)
    subject.compact(history, T)
    reason = (subject.event or {}).get("failure_reason")
    require("EVT-3", None if isinstance(reason, str) and reason.strip() else f"failure_reason={reason!r}", history)
