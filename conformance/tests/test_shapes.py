"""The shapes where real compaction bugs live, each forced in every history a test draws
(SPEC Part A, "Histories the suite draws"; `conformance.shapes`).

The general strategies mix every shape in at a measured rate; these tests draw nothing but one
shape, in each wire format whose provider takes it, so a compactor that mishandles it is caught
whatever the number of examples. Every output is also judged for all structural clauses of its
format by the suite (`Suite.judge`). A test's ``shape`` marker names its shape (a declaration may
rule one out: SPEC Part A, "Declarations").
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import assume, example, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from compaction_suite.conformance import formats, oracle, shapes
from compaction_suite.conformance.assertions import CURRENT, require
from compaction_suite.conformance.entities import entity_ids
from compaction_suite.conformance.histories import PATHS, WIDE_CALLS, agent_shaped
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.suite import declared_capabilities
from compaction_suite.conformance.violation import Violation, crashed

from .common import TARGET_FORMAT, as_declared, changed, clause, compactable, run, summaries, target_format
from .test_structured import OMITS_IDS

T, K = Settings().threshold_iterations, Settings().keep_recent_rounds
FORCED = hypothesis_settings(max_examples=10)
"""Ten examples, as ``--fast`` draws: each one has the shape, and each is large."""
iterations = st.integers(1, 2 * T)
RESPONSES = pytest.mark.wire_format(formats.RESPONSES)
ANTHROPIC = pytest.mark.wire_format(formats.ANTHROPIC)


def chat(name: str, *, agent: bool = True, **options: Any) -> st.SearchStrategy[Any]:
    """Chat-completions histories of the shape ``name``, as agents send them (`agent_shaped`,
    unless the shape is about that very representation) and as the target is called."""
    drawn = shapes.drawn(name, formats.CHAT, **options)
    return (agent_shaped(drawn) if agent else drawn).map(as_declared)


def items(name: str, wire_format: str, **options: Any) -> st.SearchStrategy[Any]:
    """Histories of the shape ``name`` in ``wire_format``, without the system prompt for a target
    that keeps it outside."""
    fmt = formats.get(wire_format)
    drawn = shapes.drawn(name, wire_format, **options)
    return drawn.map(fmt.without_system) if declared_capabilities().system_outside else drawn


def own(name: str, **options: Any) -> st.SearchStrategy[Any]:
    """`items` in the target's own wire format."""
    fmt = target_format()
    return chat(name, **options) if fmt.name == formats.CHAT else items(name, fmt.name, **options)


def compacted(suite: Any, history: Any, iteration: int, force: bool) -> None:
    """Compact ``history`` (both triggers firing, or at ``iteration`` with the default budget) and
    require the test's own clause (its marker) of the target's format on the output."""
    _, out = run(suite, history, T if force else iteration, **({"max_context_tokens": 1} if force else {}))
    require(suite.format.structural(history, out).get(CURRENT[0]), history, out)


def passed_and_compacted(suite: Any, history: Any) -> None:
    """`compacted` twice: at iteration 1 with the default budget (what is below both triggers goes
    on, large parts and all), then with both triggers firing."""
    compacted(suite, history, 1, False)
    compacted(suite, history, T, True)


# --- wide parallel rounds, the cut landing inside one (langchain-ai/deepagents#270)


def widest_round(calls: int = WIDE_CALLS[1]) -> list[dict[str, Any]]:
    """A history whose newest round is the widest a ``wide-round`` draws (`WIDE_CALLS`): ``calls`` parallel
    ``readFile`` calls after five user turns (four answered), so a cut by message count anywhere in its last ``calls``
    messages lands inside it, far from its call (tried first in every run: forced, not left to the draw)."""
    ids = [f"call_wide_{n:04d}" for n in range(1, calls + 1)]
    round_: list[dict[str, Any]] = [
        {"role": "assistant", "content": None, "tool_calls": [{"id": i, "type": "function", "function": {"name": "readFile", "arguments": json.dumps({"path": PATHS[n % len(PATHS)]})}} for n, i in enumerate(ids)]},
        *({"role": "tool", "tool_call_id": i, "content": f"line {n} of {PATHS[n % len(PATHS)]}"} for n, i in enumerate(ids)),
    ]
    earlier = [m for path in PATHS[:4] for m in ({"role": "user", "content": f"What does {path} do?"}, {"role": "assistant", "content": f"{path} holds part of the parser."})]
    return [*earlier, {"role": "user", "content": "Read every module and tell me which ones import json."}, *round_]


@clause("CORE-1")
@pytest.mark.judges("CORE-2", "CORE-4")
@pytest.mark.shape("wide-round")
@FORCED
@example(history=widest_round(), iteration=T, force=True)
@given(history=chat("wide-round"), iteration=iterations, force=st.booleans())
def test_wide_round_cut_inside(suite, history, iteration, force):
    compacted(suite, history, iteration, force)


@RESPONSES
@clause("RESP-1")
@pytest.mark.judges("RESP-2", "RESP-3")
@pytest.mark.shape("wide-round")
@FORCED
@given(history=items("wide-round", formats.RESPONSES), iteration=iterations, force=st.booleans())
def test_wide_round_cut_inside_items(suite, history, iteration, force):
    compacted(suite, history, iteration, force)


@ANTHROPIC
@clause("ANTH-1")
@pytest.mark.judges("ANTH-2", "ANTH-3")
@pytest.mark.shape("wide-round")
@FORCED
@given(history=items("wide-round", formats.ANTHROPIC), iteration=iterations, force=st.booleans())
def test_wide_round_cut_inside_messages(suite, history, iteration, force):
    compacted(suite, history, iteration, force)


# --- every native result representation, in one history (Semantic Kernel's FunctionResultContent
# beside plain-text tool messages)


@clause("CORE-1")
@pytest.mark.judges("CORE-2", "CORE-4", "CORE-6")
@pytest.mark.shape("mixed-results")
@FORCED
@given(history=chat("mixed-results", agent=False), iteration=iterations, force=st.booleans())
def test_plain_and_structured_results(suite, history, iteration, force):
    compacted(suite, history, iteration, force)


@RESPONSES
@clause("RESP-1")
@pytest.mark.judges("RESP-2", "RESP-6")
@pytest.mark.shape("mixed-results")
@FORCED
@given(history=items("mixed-results", formats.RESPONSES), iteration=iterations, force=st.booleans())
def test_plain_and_structured_outputs(suite, history, iteration, force):
    compacted(suite, history, iteration, force)


@ANTHROPIC
@clause("ANTH-1")
@pytest.mark.judges("ANTH-2", "ANTH-5")
@pytest.mark.shape("mixed-results")
@FORCED
@given(history=items("mixed-results", formats.ANTHROPIC), iteration=iterations, force=st.booleans())
def test_plain_and_block_tool_results(suite, history, iteration, force):
    compacted(suite, history, iteration, force)


# --- an item between a call and its output (Responses only: the API pairs them by call_id)


@RESPONSES
@clause("RESP-1")
@pytest.mark.judges("RESP-2", "RESP-3")
@pytest.mark.shape("non-adjacent-pair")
@FORCED
@given(history=items("non-adjacent-pair", formats.RESPONSES), iteration=iterations, force=st.booleans())
def test_output_after_another_item(suite, history, iteration, force):
    compacted(suite, history, iteration, force)


# --- a long tool loop after the only user turn (langchain-ai/langchain#39261: no user message in
# the summarized window, a fixed text written in place of a summary)


@TARGET_FORMAT
@clause("SUM-5")
@pytest.mark.shape("long-tool-loop")
@FORCED
@given(history=own("long-tool-loop"))
def test_long_tool_loop_is_summarized(suite, history):
    """SUM-5 where it bit: a compaction of a long tool loop asks the summarizer like any other."""
    assume(compactable(history, K, suite.format))
    _, out = run(suite, history, T)
    asked = any(isinstance(r.body, dict) for r in suite.server.requests)
    require(None if asked or not changed(history, out) else Violation("summary-without-request", "compacted without a request to the suite's summarizer"), history, out)


# --- a newest round larger than the whole budget


@TARGET_FORMAT
@clause("CORE-10")
@pytest.mark.shape("newest-over-budget")
@FORCED
@given(history=own("newest-over-budget"), iteration=iterations)
def test_newest_round_over_budget(suite, history, iteration):
    """CORE-10 at the default budget: the token trigger fires and even the newest round alone
    does not fit; whatever the compactor does, nothing escapes."""
    try:
        run(suite, history, iteration)
    except Exception as error:  # noqa: BLE001 - any exception is the violation under test
        require(crashed(error), history)
    suite.exercise(CURRENT[0], history)


# --- earlier summaries, stacked (compaction chains)


@clause("SUM-4")
@pytest.mark.shape("summary-chain")
@FORCED
@given(history=chat("summary-chain"))
def test_summary_chain_folds_into_one(suite, history):
    """SUM-4 on two or three earlier summaries: compacting leaves exactly one."""
    assume(compactable(history, K))
    _, out = run(suite, history, T)
    assume(isinstance(out, list) and changed(history, out))
    stacked = Violation("summaries-stacked", f"{len(summaries(out))} summaries (the input held {len(summaries(history))})")
    require(None if len(summaries(out)) == 1 else stacked, history, out)


@RESPONSES
@clause("RESP-5")
@pytest.mark.judges("RESP-4")
@pytest.mark.shape("summary-chain")
@FORCED
@given(history=items("summary-chain", formats.RESPONSES), force=st.booleans())
def test_compaction_chain_items(suite, history, force):
    compacted(suite, history, T, force)


# --- a very large single result


@clause("CORE-2")
@pytest.mark.judges("CORE-1", "CORE-4")
@pytest.mark.shape("huge-result")
@FORCED
@given(history=chat("huge-result"))
def test_huge_result(suite, history):
    passed_and_compacted(suite, history)


@RESPONSES
@clause("RESP-2")
@pytest.mark.judges("RESP-1")
@pytest.mark.shape("huge-result")
@FORCED
@given(history=items("huge-result", formats.RESPONSES))
def test_huge_output(suite, history):
    passed_and_compacted(suite, history)


@ANTHROPIC
@clause("ANTH-2")
@pytest.mark.judges("ANTH-1")
@pytest.mark.shape("huge-result")
@FORCED
@given(history=items("huge-result", formats.ANTHROPIC))
def test_huge_tool_result(suite, history):
    passed_and_compacted(suite, history)


# --- dozens of entity-creating results in the compacted part


@clause("STRUCT-2")
@pytest.mark.shape("entity-burst")
@FORCED
@given(history=chat("entity-burst", tools=("createEntity", "readFile", "reportProgress")))
def test_entity_burst_ids_kept(suite, history):
    """STRUCT-2 where the compacted part holds dozens of entity ids (ENT-1), the summarizer
    naming none of them."""
    suite.reset_server()
    subject = suite.new()
    suite.server.reply_with(OMITS_IDS)
    out = subject.compact(json.loads(json.dumps(history)), T)
    assume(isinstance(out, list) and changed(history, out))
    text = oracle.readable_text(out)
    lost = [i for i in entity_ids(history) if not oracle.mentions(text, i)]
    require(Violation("entity-ids-lost", f"entity ids lost: {lost}") if lost else None, history, out)
