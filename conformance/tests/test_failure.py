"""Profile failure: a summarizer's failure never escapes and never changes the history
(SPEC FAIL-1..FAIL-5). Each fault is answered for real by the suite's HTTP server, in the shapes
of whichever API the target asks (chat-completions, Responses, compact, Anthropic Messages).

Every test here runs in the target's own wire format (`TARGET_FORMAT`): a failed summarizer
leaves any history unchanged."""

from __future__ import annotations

import logging
import time

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings

from compaction_suite.conformance import oracle
from compaction_suite.conformance.assertions import require
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.violation import Violation

from .common import FAULT_SWEEP, TARGET_FORMAT, clause, substantial_in_format, summarizing

pytestmark = TARGET_FORMAT

DEFAULT = Settings()
T, K = DEFAULT.threshold_iterations, DEFAULT.keep_recent_rounds
HANG_TIMEOUT = 0.3
"""The client timeout in the hang tests: small, so a run stays short."""
HANG_SECONDS = 10
"""How long the test double holds a hung request: far past FAIL-4's deadline."""


def few(n: int):
    """At most ``n`` examples: these clauses are about the fault, not the history's shape."""
    return hypothesis_settings(max_examples=min(n, hypothesis_settings().max_examples))


def _compact_under_fault(suite, history, fault: str, **changes):
    """Compact a history the target summarizes (grown to its trigger when needed: SPEC CORE-11
    Decision) with the summarizer failing as ``fault``: (history, output, seconds taken)."""
    history = summarizing(suite, history, fault)
    suite.reset_server()
    subject = suite.new(**changes)
    suite.server.fault(fault, **({"hang_seconds": HANG_SECONDS} if fault == "hang" else {}))
    started = time.monotonic()
    try:
        out = subject.compact(history, T)
    except Exception as error:  # noqa: BLE001 - any exception is the violation under test
        require(Violation(f"fault-escaped:{type(error).__name__}", f"the {fault} fault escaped as {type(error).__name__}: {error}"), history)
    return history, out, time.monotonic() - started


def _under_fault(suite, history, fault: str, **changes):
    """Compact with the summarizer failing as ``fault``; the input must come back unchanged, in time."""
    history, out, took = _compact_under_fault(suite, history, fault, **changes)
    require(None if oracle.same(history, out) else Violation("changed-after-fault", f"after a {fault} fault the output differs from the input"), history, out)
    timeout = changes.get("summarizer_timeout", DEFAULT.summarizer_timeout)
    if fault == "hang" and took > gives_up_by(timeout):
        require(Violation("hang-not-given-up", f"compact returned {took:.1f} s after the call, later than {gives_up_by(timeout):.1f} s (summarizer_timeout {timeout} s)"), history)


def gives_up_by(timeout: float) -> float:
    """SPEC FAIL-4 decision: a hung summarizer is given up within 3 x summarizer_timeout + 1 s
    (one retry with backoff fits; waiting for the hang to end does not)."""
    return 3 * timeout + 1


@clause("FAIL-1")
@few(10)
@given(history=substantial_in_format)
def test_rate_limit(suite, history):
    _under_fault(suite, history, "429")


@clause("FAIL-2")
@pytest.mark.parametrize("fault", ["500", "503"])
@few(10)
@given(history=substantial_in_format)
def test_server_errors(suite, fault, history):
    _under_fault(suite, history, fault)


@clause("FAIL-3")
@pytest.mark.parametrize("fault", ["malformed", "no_choices", "empty_content", "null_content"])
@few(10)
@given(history=substantial_in_format)
def test_unusable_answers(suite, fault, history):
    _under_fault(suite, history, fault)


@clause("FAIL-4")
@pytest.mark.parametrize("fault", ["hang", "drop"])
@FAULT_SWEEP
@given(history=substantial_in_format)
def test_no_answer(suite, fault, history):
    _under_fault(suite, history, fault, summarizer_timeout=HANG_TIMEOUT)


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@clause("FAIL-5")
@few(5)
@given(history=substantial_in_format)
def test_failure_logged_at_warning(suite, history):
    handler = _Records()
    logging.getLogger().addHandler(handler)
    try:
        history, _, _ = _compact_under_fault(suite, history, "429")
    finally:
        logging.getLogger().removeHandler(handler)
    lines = [r.getMessage() for r in handler.records]
    named = any("RateLimit" in line or "429" in line for line in lines)
    require(None if named else Violation("failure-not-logged", f"no WARNING naming the error type; warnings seen: {lines}"), history)
