"""The replay harness and the cost benchmark (benchmarks/replay.py, benchmarks/cost.py).

No timings here: these tests pin what the harness counts (calls, exact tokens, the cache
model, retention, clause violations, crashes) on a slice of a shipped trace.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from compaction_suite.benchmarks import cost
from compaction_suite.benchmarks.lineup import LINEUP, NoCompaction, mask_and_summarize, seed_000_structured
from compaction_suite.benchmarks.prices import PRICES, Price, cached_tokens
from compaction_suite.benchmarks.replay import ASSISTANT_KINDS, SUMMARY_TOKENS, ceilings, common_prefix, replay
from compaction_suite.benchmarks.traces.format import make_header, read_trace, write_trace
from compaction_suite.cli import main
from compaction_suite.conformance.settings import Settings, connected
from compaction_suite.conformance.summarizer_server import SummarizerServer
from compaction_suite.reference import Compactor, IterationsOrTokens, KeepLastMessages, split_rounds
from compaction_suite.reference.rounds import flatten
from compaction_suite.reference.tokens import ExactTokens

TRACE = Path(__file__).resolve().parents[1] / "cassettes" / "traces" / "stdlib-explorer-seed1.jsonl"
SWE_AGENT = Path(__file__).resolve().parents[2] / "shared" / "traces" / "swe-agent"


@pytest.fixture(scope="module")
def sliced() -> tuple[dict, list[dict]]:
    """The first 120 rounds of a shipped trace: entity ids, a task list and planted facts included."""
    header, messages = read_trace(TRACE)
    rounds = split_rounds(messages)[:120]
    return header, [m for r in rounds for m in r.messages]


@pytest.fixture(scope="module")
def summarizer_settings():
    with SummarizerServer() as server:
        yield connected(Settings(summarizer_timeout=30.0), server.base_url)


def always(strategy) -> Compactor:
    """A compactor whose trigger fires at every call."""
    return Compactor(strategy, IterationsOrTokens(threshold_iterations=1))


def assistant_rounds(messages: list[dict]) -> int:
    return sum(r.kind in ASSISTANT_KINDS for r in split_rounds(messages))


def test_one_call_per_assistant_round_and_exact_input_tokens(sliced):
    header, messages = sliced
    run = replay(messages, NoCompaction(), facts=header["planted_facts"])
    assert len(run.calls) == assistant_rounds(messages)
    exact = ExactTokens("o200k_base")
    rounds = split_rounds(messages)
    answers = [r for r in rounds if r.kind in ASSISTANT_KINDS]
    for call, answer in zip(run.calls, answers):
        assert call.input_tokens == exact.estimate(messages[: answer.start])
        assert call.messages == answer.start
        assert call.output_tokens == exact.units(answer.messages[0])
    assert run.compactions == 0 and not run.violations and not run.errors
    assert run.peak_context_tokens == run.calls[-1].input_tokens


def test_append_only_history_reads_its_previous_prompt_from_the_cache(sliced):
    _, messages = sliced
    run = replay(messages, NoCompaction())
    exact = ExactTokens("o200k_base")
    for before, call in zip(run.calls, run.calls[1:]):
        previous_prompt = sum(map(exact.units, messages[: before.messages]))
        assert call.cached_tokens == cached_tokens(previous_prompt)


def test_cache_rule():
    assert cached_tokens(1023) == 0
    assert cached_tokens(1024) == 1024
    assert cached_tokens(1024 + 127) == 1024
    assert cached_tokens(5000) == 4992


def test_price_of_a_call():
    price = Price(input=2.0, cached_input=0.5, output=8.0)
    assert price.cost(1_000_000, 0, 0) == pytest.approx(2.0)
    assert price.cost(1_000_000, 1_000_000, 0) == pytest.approx(0.5)
    assert price.cost(1_000_000, 400_000, 1_000_000) == pytest.approx(1.2 + 0.2 + 8.0)
    assert PRICES["gpt-4.1"].cached_input < PRICES["gpt-4.1"].input


def test_common_prefix_counts_equal_messages():
    a = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    assert common_prefix(a, [dict(m) for m in a]) == 2
    assert common_prefix(a, [a[0], {"role": "user", "content": "other"}]) == 1
    assert common_prefix(a, []) == 0


def test_compaction_is_counted_and_shrinks_the_context(sliced):
    _, messages = sliced
    baseline = replay(messages, NoCompaction())
    run = replay(messages, always(KeepLastMessages(10)))
    assert run.compactions > 0
    assert run.cumulative_input_tokens < baseline.cumulative_input_tokens
    assert max(c.messages for c in run.calls) <= 10 + 1 + max(len(r.messages) for r in split_rounds(messages))
    compacted = [c for c in run.calls if c.compacted]
    assert all(c.cached_tokens < c.input_tokens for c in compacted)
    assert not run.violations


def test_keeping_only_a_tail_loses_ids_while_the_structured_summary_keeps_them(sliced, summarizer_settings):
    header, messages = sliced
    tail = replay(messages, always(KeepLastMessages(10)), facts=header["planted_facts"])
    structured = replay(messages, seed_000_structured(summarizer_settings), facts=header["planted_facts"])
    assert min(c.entity_ids for c in tail.calls if c.entity_ids is not None) < 1.0
    assert structured.compactions > 0
    assert all(c.entity_ids in (None, 1.0) and c.task_list is not False for c in structured.calls)
    assert sum(c.entity_ids == 1.0 and c.task_list is True for c in structured.calls) > len(structured.calls) // 2
    assert structured.summarizer_prompt_tokens > 0 and structured.summarizer_completion_tokens > 0


class Orphaning:
    """A broken compactor: drops every assistant message with tool calls, leaving their results."""

    def compact(self, messages, *, iteration):
        if iteration < 5:
            return list(messages)
        return [m for m in messages if not (m["role"] == "assistant" and m.get("tool_calls"))]


class Crashing:
    def compact(self, messages, *, iteration):
        raise RuntimeError("summarizer down")


def test_violations_are_reported_with_their_clause(sliced):
    _, messages = sliced
    run = replay(messages, Orphaning())
    assert run.violations and all("CORE-" in v for v in run.violations)
    assert any("CORE-1" in v for v in run.violations)


def test_a_crashing_compactor_is_reported_and_the_run_goes_on(sliced):
    _, messages = sliced
    run = replay(messages, Crashing())
    assert len(run.errors) == len(run.calls) - 1 == assistant_rounds(messages) - 1  # no compaction point before the first call
    assert run.errors[0].startswith("call 2: RuntimeError: summarizer down")
    assert run.cumulative_input_tokens == replay(messages, NoCompaction()).cumulative_input_tokens


def test_async_compactors_are_awaited(sliced):
    _, messages = sliced

    class Async:
        def __init__(self):
            self.inner = always(KeepLastMessages(10))

        async def compact(self, messages, *, iteration):
            return self.inner.compact(messages, iteration=iteration)

    run, sync = replay(messages, Async()), replay(messages, always(KeepLastMessages(10)))
    assert not run.errors and run.compactions == sync.compactions > 0
    assert run.cumulative_input_tokens == sync.cumulative_input_tokens


def test_cost_report_files_and_verdict(sliced, tmp_path):
    header, messages = sliced
    trace = tmp_path / "slice.jsonl"
    write_trace(trace, header | {"id": "slice"}, messages)
    lineup = {"keep last 10": lambda settings: always(KeepLastMessages(10)), "structured": seed_000_structured}
    results = cost.run(tmp_path / "out", [trace], lineup, progress=False)
    names = [row["compactor"] for row in results["strategies"]]
    assert names == [cost.BASELINE, "keep last 10", "structured"]
    rows = {row["compactor"]: row for row in results["strategies"]}
    assert rows[cost.BASELINE]["input_reduction"] == 0
    assert rows["structured"]["meets_target"] == (rows["structured"]["worst_trace_input_reduction"] >= 0.6)
    assert not rows["keep last 10"]["meets_target"]  # loses entity ids
    saved = json.loads((tmp_path / "out" / "replay.json").read_text())
    assert {c["compactor"] for c in saved["curves"]} == set(names)
    calls = {s["compactor"]: s["model_calls"] for s in saved["runs"]}
    for curve in saved["curves"]:
        assert {len(values) for values in curve["calls"].values()} == {calls[curve["compactor"]]}
    report = (tmp_path / "out" / "replay.md").read_text()
    assert "| keep last 10 |" in report and "TEST DOUBLE" in report
    for png in ("replay-context.png", "replay-retention.png"):
        assert (tmp_path / "out" / png).read_bytes()[:4] == b"\x89PNG"


def test_bench_replay_command_with_a_target(sliced, tmp_path):
    header, messages = sliced
    trace = tmp_path / "slice.jsonl"
    write_trace(trace, header | {"id": "slice"}, messages[:80])
    args = ["bench", "replay", "compaction_suite.benchmarks.lineup:seed_000", "--trace", str(trace), "--out", str(tmp_path / "o"), "--quiet"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "| compaction_suite.benchmarks.lineup:seed_000 |" in result.output
    saved = json.loads((tmp_path / "o" / "replay.json").read_text())
    assert [r["compactor"] for r in saved["strategies"]] == [cost.BASELINE, "compaction_suite.benchmarks.lineup:seed_000"]


def test_bench_replay_rejects_an_unknown_target(tmp_path):
    result = CliRunner().invoke(main, ["bench", "replay", "no.such.module:factory", "--out", str(tmp_path), "--quiet"])
    assert result.exit_code == 2
    assert "no.such.module" in result.output


@pytest.mark.skipif(not SWE_AGENT.is_dir(), reason="../shared/traces/swe-agent is not beside the repository")
def test_imported_swe_agent_traces_replay():
    path = next(p for p in sorted(SWE_AGENT.glob("*.traj")) if "function_calling" in p.name)
    [(header, messages)] = cost.load_traces([path])
    run = replay(messages, always(KeepLastMessages(6)), trace=header["id"])
    assert run.calls and not run.violations and not run.errors


def test_the_compactor_sees_each_completed_iteration_once(sliced):
    _, messages = sliced
    seen: list[tuple[int, int]] = []

    class Recording:
        def compact(self, messages, *, iteration):
            seen.append((iteration, len(messages)))
            return list(messages)

    run = replay(messages, Recording())
    assert [i for i, _ in seen] == list(range(1, len(run.calls)))
    assert [n for _, n in seen] == [c.messages for c in run.calls[1:]]


# --- issue 12: n/a figures, the ceilings, the command-line tuning, real traces -------------


def text_only_history() -> list[dict]:
    """Three calls whose results are plain text: no entity id, no task list, no fact."""
    out: list[dict] = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": "Look around."}]
    for _ in range(3):
        call = {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": '{"cmd": "ls"}'}}
        out += [{"role": "assistant", "content": None, "tool_calls": [call]}, {"role": "tool", "tool_call_id": "call_1", "content": "a.py\n" * 40}]
    return out + [{"role": "assistant", "content": "Done."}]


def test_a_trace_without_ids_tasks_or_facts_reads_n_a_never_100_percent():
    run = replay(text_only_history(), always(KeepLastMessages(2)))
    summary = run.summary()
    assert summary["min_entity_id_retention"] is None and summary["entity_ids_tracked"] == 0
    assert summary["task_list_always_kept"] is None and summary["min_fact_retention"] is None
    assert all(c.entity_ids is None and c.task_list is None for c in run.calls)


def test_ceilings_are_system_plus_a_150_token_summary_plus_the_last_k_rounds():
    messages = text_only_history()
    exact = ExactTokens("o200k_base")
    rounds = split_rounds(messages)
    limits = ceilings(messages, [1, 2])
    calls = [i for i, r in enumerate(rounds) if r.kind in ASSISTANT_KINDS]
    system = [rounds[0].messages[0]]

    def ideal(k: int) -> int:
        total = exact.estimate(flatten(rounds[: calls[0]]))  # the first call is never compacted
        for at in calls[1:]:
            others = rounds[1:at]
            tail = flatten(others[-k:])
            total += exact.estimate(system + tail) + (SUMMARY_TOKENS if len(others) > k else 0)
        return total

    assert limits["ceiling K=1"] == ideal(1) and limits["ceiling K=2"] == ideal(2)
    first = exact.estimate(flatten(rounds[: calls[0]]))
    assert limits["physical limit"] == first + (len(calls) - 1) * exact.estimate(system)
    assert limits["physical limit"] < limits["ceiling K=1"] < limits["ceiling K=2"]


def test_the_hybrid_keeps_every_id_and_the_task_list_near_its_ceiling(sliced, summarizer_settings):
    header, messages = sliced
    run = replay(messages, mask_and_summarize(summarizer_settings), facts=header["planted_facts"])
    base = replay(messages, NoCompaction()).cumulative_input_tokens
    assert run.entity_ids_tracked > 0 and run.summary()["min_entity_id_retention"] == 1.0
    assert run.summary()["task_list_always_kept"] is True
    cut, ceiling = 1 - run.cumulative_input_tokens / base, 1 - ceilings(messages, [2])["ceiling K=2"] / base
    assert cut >= 0.8 * ceiling
    assert not run.violations and not run.errors


def test_bench_replay_takes_thresholds_and_prints_n_a_and_the_ceiling_columns(tmp_path):
    trace = tmp_path / "plain.jsonl"
    write_trace(trace, make_header("plain", "written by a test"), text_only_history())
    args = ["bench", "replay", "--trace", str(trace), "--max-context-tokens", "200", "--threshold-iterations", "2",
            "--keep-rounds", "1", "--out", str(tmp_path / "o"), "--quiet"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == (1 if " broke a clause at " in result.output else 0), result.output  # a violation found exits 1
    assert "seed-000 summary (iterations>=2 or 200; last 1 rounds)" in result.output
    assert "of ceiling K=1 (worst trace)" in result.output and "of ceiling K=2 (worst trace)" in result.output
    assert "*physical limit (system messages alone)*" in result.output
    row = next(line for line in result.output.splitlines() if line.startswith("| seed-000 summary"))
    assert row.count("n/a") == 4, row  # ids, task list, facts and probes: nothing to measure
    assert "100%" not in row


def test_bench_replay_passes_thresholds_to_a_target(sliced, tmp_path):
    header, messages = sliced
    trace = tmp_path / "slice.jsonl"
    write_trace(trace, header | {"id": "slice"}, messages[:80])
    target = "compaction_suite.reference.conformance_factory:seed_000"
    common = ["bench", "replay", target, "--trace", str(trace), "--quiet"]
    late = CliRunner().invoke(main, [*common, "--out", str(tmp_path / "a")])
    early = CliRunner().invoke(main, [*common, "--threshold-iterations", "2", "--out", str(tmp_path / "b")])
    assert late.exit_code == early.exit_code == 0, late.output + early.output
    count = {name: json.loads((tmp_path / name / "replay.json").read_text())["strategies"][1]["compactions"] for name in "ab"}
    assert count["b"] > count["a"]


@pytest.mark.skipif(not SWE_AGENT.is_dir(), reason="../shared/traces/swe-agent is not beside the repository")
def test_every_strategy_compacts_every_real_trace_with_its_ids_as_recorded(summarizer_settings):
    """Issue 12's bar: the shared SWE-agent trajectories (reused ids kept) and a shipped trace,
    through every lineup strategy: nothing raises, no clause breaks, the structured strategies
    keep every entity id and the task list wherever the trace has them."""
    loaded = cost.load_traces(sorted(SWE_AGENT.glob("*.traj")))
    assert any("reuse an id of an earlier round" in header["notes"] for header, _ in loaded)
    header, messages = read_trace(TRACE)
    loaded.append((header, [m for r in split_rounds(messages)[:200] for m in r.messages]))
    for header, messages in loaded:
        for name, factory in LINEUP.items():
            run = replay(messages, factory(summarizer_settings), trace=header["id"], name=name)
            assert not run.errors and not run.violations, (header["id"], name, run.errors, run.violations)
            if "structured" in name:
                assert run.summary()["min_entity_id_retention"] in (None, 1.0), (header["id"], name)
                assert run.summary()["task_list_always_kept"] is not False, (header["id"], name)
