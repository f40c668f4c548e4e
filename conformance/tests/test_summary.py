"""Profile summary: seed 000's single ``[Context Summary]`` message (SPEC SUM-1..SUM-5).

SUM-1..SUM-4 judge that message's place in a chat-completions list; SUM-5 (the summarizer request
names the configured model) runs in the target's own wire format."""

from __future__ import annotations

from hypothesis import assume, given

from compaction_suite.conformance import oracle
from compaction_suite.conformance.assertions import require
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.violation import Violation

from .common import TARGET_FORMAT, changed, clause, compactable, histories, in_format, run, summaries, well_formed

DEFAULT = Settings()
STRUCT_KEEP = 10
"""STRUCT-4's "at least the last 10 messages"."""
T, K = DEFAULT.threshold_iterations, DEFAULT.keep_recent_rounds


def tail_messages(suite) -> int:
    """SPEC SUM-1 decision: a target also claiming ``structured`` keeps at least 10 messages (STRUCT-4)."""
    return STRUCT_KEEP if "structured" in suite.claimed else 0


def _compact(suite, history):
    """Compact a history that has something to compact, at iteration T."""
    assume(compactable(history, K))
    subject, out = run(suite, history, T)
    assume(well_formed(out) and changed(history, out))  # SUM-1..4 speak of compacted outputs
    return subject, out


@clause("SUM-1")
@given(history=histories(min_rounds=K + 1))
def test_system_then_one_summary_then_tail(suite, history):
    _, out = _compact(suite, history)
    require(oracle.check_summary_shape(history, out, K, tail_messages(suite)), history, out)


@clause("SUM-2")
@given(history=histories(min_rounds=K + 1))
def test_summary_is_a_context_summary_user_message(suite, history):
    _, out = _compact(suite, history)
    system, _ = oracle.expected_summary_shape(history, K, tail_messages(suite))
    first = out[len(system)] if len(out) > len(system) else None
    problem = None
    if not oracle.is_summary(first or {}):
        problem = Violation("summary-not-a-context-summary", f"message {len(system)} is {(first or {}).get('role')!r}, not a user message starting with {oracle.SUMMARY_PREFIX}")
    require(problem, history, out)


@clause("SUM-3")
@given(history=histories(min_rounds=K + 1))
def test_tail_is_byte_identical(suite, history):
    _, out = _compact(suite, history)
    _, tail = oracle.expected_summary_shape(history, K, tail_messages(suite))
    kept = out[len(out) - len(tail) :]
    first = next((i for i, (a, b) in enumerate(zip(kept, tail)) if not oracle.same(a, b)), None)
    at = f": output {oracle.where(out, len(out) - len(tail) + first)} differs" if first is not None else ""
    problem = None if oracle.same(kept, tail) else Violation("tail-altered", f"the kept tail ({len(tail)} messages) differs from the input's last {len(tail)} non-system messages{at}")
    require(problem, history, out)


@clause("SUM-4")
@given(history=histories(min_rounds=K + 1, earlier_summary=True, shapes=()))
def test_one_summary_after_recompaction(suite, history):
    """One earlier summary, compacted twice (stacked summaries are test_shapes.py's
    ``test_summary_chain_folds_into_one``, on histories where something besides them is older than
    the tail: in a short history a target also claiming ``structured`` keeps the newest of them
    among its last 10 messages, STRUCT-4)."""
    _, out = _compact(suite, history)
    require(None if len(summaries(out)) == 1 else Violation("summaries-stacked", f"{len(summaries(out))} summaries"), history, out)
    again = out + [{"role": "user", "content": "And one more thing, please."}]
    _, out2 = run(suite, again, T)
    assume(well_formed(out2))
    require(None if len(summaries(out2)) == 1 else Violation("summaries-stacked", f"{len(summaries(out2))} summaries after a second compaction"), again, out2)


@TARGET_FORMAT
@clause("SUM-5")
@given(history=in_format(min_rounds=K + 1))
def test_request_names_the_summary_model(suite, history):
    """SUM-5 in the target's own wire format: whichever API the summary is asked of names the model."""
    assume(compactable(history, K, suite.format))
    model = "suite-summary-model-7f3a"
    _, out = run(suite, history, T, model=model)
    models = [r.body.get("model") for r in suite.server.requests if isinstance(r.body, dict)]
    problem = None
    if changed(history, out) and not models:
        problem = Violation("summary-without-request", "compacted without a request to the suite's summarizer")
    elif any(m != model for m in models):
        problem = Violation("wrong-summary-model", f"summarizer requests named {sorted(set(map(str, models)))}, settings.model is {model!r}")
    require(problem, history, out)
