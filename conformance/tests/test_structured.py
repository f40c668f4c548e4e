"""Profile structured: seed 001's summary keeps entity ids and the task list (SPEC STRUCT-1..4)."""

from __future__ import annotations

import json

from hypothesis import assume, given

from compaction_suite.conformance import oracle
from compaction_suite.conformance.assertions import require
from compaction_suite.conformance.entities import entity_ids, latest_task_list
from compaction_suite.conformance.histories import histories
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.violation import Violation

from .common import changed, clause, real_traffic, shaped, summaries

T = Settings().threshold_iterations
KEEP = 10
SECTIONS = ("Entities Created/Modified", "Current Task List", "Key Decisions", "Context")
OMITS_IDS = "The agent worked through several steps; nothing specific is worth repeating."
"""A summarizer answer that drops every identifier, as small models do."""

_structured = histories(min_rounds=8, max_rounds=14, tools=("createEntity", "reportProgress", "readFile", "search"))
structured_histories = shaped(_structured)
entity_histories = structured_histories | real_traffic(_structured)
"""For STRUCT-2, half in real-traffic shapes: ids nested in records, reused call ids, text parts (SPEC ENT-1)."""


def _compact(suite, history):
    """Compact at iteration T, with the summarizer omitting every id; returns the output."""
    assume(len(history) > KEEP + 2)
    suite.reset_server()
    subject = suite.new()
    suite.server.reply_with(OMITS_IDS)
    out = subject.compact(json.loads(json.dumps(history)), T)
    assume(isinstance(out, list) and changed(history, out))  # STRUCT-* speak of compacted outputs
    return out


def _summary_text(out) -> str:
    return "\n".join(oracle.text(m) for m in summaries(out))


@clause("STRUCT-1")
@given(history=structured_histories)
def test_sections_present(suite, history):
    out = _compact(suite, history)
    text = _summary_text(out)
    missing = [s for s in ("Conversation Summary (auto-compacted)", *SECTIONS) if s not in text]
    require(Violation("summary-section-missing", f"the summary lacks {missing}") if missing else None, history, out)


@clause("STRUCT-2")
@given(history=entity_histories)
def test_entity_ids_survive(suite, history):
    ids = entity_ids(history)
    assume(ids)
    out = _compact(suite, history)
    text = oracle.readable_text(out)
    lost = [i for i in ids if not oracle.mentions(text, i)]
    require(Violation("entity-ids-lost", f"entity ids lost: {lost}") if lost else None, history, out)


def _talk_after(history):
    """``history`` with five rounds of plain talk after it, so its latest task list lies outside the
    kept tail and only a summary can carry it: the shape STRUCT-3 is about, forced for half the
    draws rather than hoped for (a compactor taking the list from the model failed it only when a
    draw happened to end its task rounds early)."""
    talk = [m for i in range(5) for m in ({"role": "user", "content": f"Carry on with step {i}."}, {"role": "assistant", "content": f"Step {i} is under way."})]
    return [*history, *talk]


@clause("STRUCT-3")
@given(history=structured_histories | structured_histories.map(_talk_after))
def test_task_list_verbatim(suite, history):
    tasks = latest_task_list(history) or []
    assume(tasks)
    out = _compact(suite, history)
    text = oracle.readable_text(out)
    lost = [t["title"] for t in tasks if t["title"] not in text]
    require(Violation("task-titles-lost", f"task titles lost: {lost}") if lost else None, history, out)


@clause("STRUCT-4")
@given(history=structured_histories)
def test_last_ten_messages_kept(suite, history):
    out = _compact(suite, history)
    tail = history[-KEEP:]
    problem = None if oracle.same(out[-KEEP:], tail) else Violation("last-ten-not-kept", f"the last {KEEP} messages of the input are not the output's last {KEEP}")
    require(problem, history, out)
