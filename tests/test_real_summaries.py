"""The committed real-model run replays offline and gives the committed figures (issue 23, point 4; SPEC PROBE-3).

`benchmarks/results/real-model/` was made with a real model (Qwen2.5-Coder-1.5B-Instruct served by
llama-cpp-python, labelled in each cassette's meta record) summarizing for the compactors below,
its exchanges recorded to `cassettes/replay-summaries/`. Here the same run replays from those
cassettes with every connection refused: the runs, the bill and the probes must be the ones
committed, and each exchange must be played.

Two traces: `stdlib-explorer-seed2` (recorded without a bound on a summary's length: the replay
rebuilds its requests without ``max_tokens``) and `stdlib-explorer-seed3` (recorded with
``--summarizer-max-tokens 512``; SPEC PROBE-4), each its first 14 calls.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compaction_suite.benchmarks import cost
from compaction_suite.benchmarks.jobs import RealSummarizer
from compaction_suite.benchmarks.lineup import LINEUP, cache_aware, mask_and_summarize, seed_000, seed_000_structured
from compaction_suite.benchmarks.real_summaries import MissingCassette, OtherBound, cassette_path, describe_bounds, recorded_bound
from compaction_suite.conformance.settings import Settings
from compaction_suite.recording.meta import load_meta
from compaction_suite.reference import Summarize

ROOT = Path(__file__).resolve().parents[1]
CASSETTES = ROOT / "cassettes" / "replay-summaries"
RESULTS = ROOT / "benchmarks" / "results" / "real-model" / "replay.json"
TRACES = [ROOT / "cassettes" / "traces" / f"stdlib-explorer-seed{n}.jsonl" for n in (2, 3)]
MAX_CALLS = 14
"""The recorded run: ``compaction-suite bench replay`` with these four targets, ``--max-calls 14``
(its command is in every cassette's meta record)."""
TARGETS: dict[str, Callable[[Settings], Any]] = {
    f"compaction_suite.benchmarks.lineup:{f.__name__}": f for f in (seed_000, seed_000_structured, mask_and_summarize, cache_aware)
}


@pytest.fixture(scope="module")
def committed() -> dict:
    return json.loads(RESULTS.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def replayed(tmp_path_factory, committed) -> dict:
    model = committed["real_summarizer"]["model"]
    return cost.run(
        tmp_path_factory.mktemp("real"), TRACES, TARGETS, progress=False, max_calls=MAX_CALLS,
        summarizer=RealSummarizer(None, model, CASSETTES),
    )  # fmt: skip


def test_every_cassette_says_what_produced_it(committed):
    metas = [load_meta(cassette_path(CASSETTES, t["id"])) for t in committed["traces"]]
    assert len(metas) == len(TRACES)
    for meta in metas:
        assert meta["produced_by"].startswith("real answers of") and "TEST DOUBLE" not in meta["produced_by"]
        assert len(meta["model_file"]["sha256"]) == 64 and meta["server"]["info"] and meta["recorded_at"] and meta["command"]
        assert meta["interactions"] and all(i["status"] == 200 for i in meta["interactions"])


def test_the_recorded_run_replays_offline_to_the_committed_figures(replayed, committed):
    assert replayed["runs"] == committed["runs"]
    assert replayed["strategies"] == committed["strategies"]


def test_each_trace_replays_with_the_bound_it_was_recorded_with(replayed, committed):
    bounds = {t["id"]: recorded_bound(load_meta(cassette_path(CASSETTES, t["id"]))) for t in committed["traces"]}
    assert replayed["real_summarizer"]["max_tokens"] == committed["real_summarizer"]["max_tokens"] == bounds


def test_the_real_summaries_are_measured_by_the_probes(committed):
    summarizing = [s for s in committed["runs"] if s["summarizer_completion_tokens"]]
    assert {s["compactor"] for s in summarizing} == set(TARGETS)
    assert all(s["probes"]["tracked"] and s["min_probe_retention"] is not None for s in summarizing)


def test_a_trace_without_its_cassette_is_refused(tmp_path):
    with pytest.raises(MissingCassette, match="no cassette"):
        cost.run(tmp_path / "o", TRACES[:1], TARGETS, progress=False, max_calls=3, summarizer=RealSummarizer(None, "m", tmp_path))


def test_the_cassette_recorded_before_the_bound_replays_unbounded(committed):
    """Seed 2's cassette predates ``--summarizer-max-tokens`` (SPEC PROBE-4): its meta record has no
    bound, and the replay above rebuilds its requests without one."""
    old = load_meta(cassette_path(CASSETTES, TRACES[0].stem + " (first 14 calls)"))
    assert "summarizer_max_tokens" not in old["settings"]


def test_a_bound_is_recorded_in_every_request_and_the_meta_record_then_replayed_from_it(server, tmp_path):
    """PROBE-4 end to end, with the summarizer TEST DOUBLE standing in for the model: recorded with
    a bound, every summarization request carries it as ``max_tokens`` and the meta record keeps it;
    replayed without the option the cassette's bound rebuilds the same requests (any other request
    would be refused); replayed with another bound it is refused before any trace runs."""
    cassettes, model = tmp_path / "cassettes", "compaction-suite-summarizer"
    recorder = RealSummarizer(server.base_url, model, cassettes, server_info="the suite's summarizer TEST DOUBLE")
    recorded = cost.run(tmp_path / "rec", TRACES[:1], TARGETS, progress=False, max_calls=MAX_CALLS, settings_changes={"summarizer_max_tokens": 64}, summarizer=recorder)
    bodies = server.bodies
    assert bodies and all(body["max_tokens"] == 64 for body in bodies)
    path = cassette_path(cassettes, recorded["traces"][0]["id"])
    assert load_meta(path)["settings"]["summarizer_max_tokens"] == 64
    server.reset()
    replayed = cost.run(tmp_path / "rep", TRACES[:1], TARGETS, progress=False, max_calls=MAX_CALLS, summarizer=RealSummarizer(None, model, cassettes))
    assert replayed["runs"] == recorded["runs"] and server.bodies == []
    assert replayed["real_summarizer"]["max_tokens"] == recorded["real_summarizer"]["max_tokens"] == {recorded["traces"][0]["id"]: 64}
    with pytest.raises(OtherBound, match="recorded with --summarizer-max-tokens 64"):
        cost.run(tmp_path / "other", TRACES[:1], TARGETS, progress=False, max_calls=MAX_CALLS, settings_changes={"summarizer_max_tokens": 65},
                 summarizer=RealSummarizer(None, model, cassettes))  # fmt: skip
    assert not (tmp_path / "other").exists()


@pytest.mark.parametrize("bound", [None, 100, 500])
@pytest.mark.parametrize("name", [n for n in LINEUP if n.startswith(("seed-000", "seed-001", "seed-003", "seed-004 summarize", "mask", "cache"))])
def test_every_summarizer_of_the_lineup_takes_the_bound(name, bound):
    """The bound reaches each lineup summarizer's request body; a preset's own smaller bound (seed
    003's 300 tokens) stays, and without the option every preset sends what it always sent."""
    strategy = LINEUP[name](Settings(summarizer_max_tokens=bound)).strategy
    summarizer = (strategy if isinstance(strategy, Summarize) else strategy.summarize).summarizer  # the hybrid's is in its summarize step
    own = 300 if name.startswith("seed-003") else None
    expected = min(b for b in (bound, own) if b is not None) if (bound or own) else None
    assert summarizer.request("transcript").get("max_tokens") == expected


def test_the_report_says_each_traces_bound():
    assert describe_bounds({"a": 512, "b": 512}) == "; summaries at most 512 tokens each (max_tokens)"
    assert describe_bounds({"a": None}) == "; summaries unbounded (no max_tokens)"
    assert describe_bounds({"a": None, "b": 512}) == "; summaries unbounded (no max_tokens) on `a`, at most 512 tokens each (max_tokens) on `b`"
