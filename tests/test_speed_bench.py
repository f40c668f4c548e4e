"""The speed benchmark's own code: the history builder and the report. No timing is asserted.

`compaction_suite.benchmarks.histories` must give valid, deterministic histories of the requested size;
`compaction_suite.benchmarks.speed` must turn pytest-benchmark's figures into the three reports, with a
slope for every operation and a verdict on the 100 ms target.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import pytest

from compaction_suite.benchmarks import histories, speed
from compaction_suite.benchmarks.traces.format import read_trace
from compaction_suite.reference.rounds import split_rounds

pytestmark = pytest.mark.skipif(
    not histories.TRACE.exists(), reason=f"the shipped trace {histories.TRACE} is absent: nothing to tile"
)

OPS = {
    "split_rounds", "estimate_from_scratch", "ledger_update", "trigger_check", "keep_last_messages",
    "mask_observations", "token_budget", "drop_sources", "chain", "compact", "compact_warm",
}
"""Every operation `benchmarks/test_speed.py` measures."""
LONGEST_ROUND = 5
"""Messages in the shipped trace's longest round: `build(n)` overshoots ``n`` by less than this."""


# --- histories ---------------------------------------------------------------------------------


def _call_ids(history: list[dict]) -> list[str]:
    return [call["id"] for m in history for call in m.get("tool_calls") or []]


@pytest.mark.parametrize("n", [1, 2, 100, 1_000, 1_091, 1_092, 2_500])
def test_build_gives_a_valid_history_of_at_least_n_messages(n: int) -> None:
    history = histories.build(n)
    rounds = split_rounds(history)
    assert n <= len(history) < n + LONGEST_ROUND
    assert len(history) - len(rounds[-1].messages) < n  # the first round boundary at or after n
    assert rounds[-1].complete
    assert [m["role"] for m in history].count("system") == 1 and history[0]["role"] == "system"
    ids = _call_ids(history)
    assert len(ids) == len(set(ids))
    assert len({id(m) for m in history}) == len(history)  # a fresh dict per message


def test_build_is_deterministic_and_shares_no_dict_between_calls() -> None:
    first, again = histories.build(3_000), histories.build(3_000)
    assert first == again
    assert all(a is not b for a, b in zip(first, again))


def test_build_tiles_the_trace_renaming_ids_per_copy() -> None:
    _, trace = read_trace(histories.TRACE)
    history = histories.build(2 * len(trace))
    assert history[: len(trace)] == trace  # copy 0 keeps the recorded ids
    second = history[len(trace) : 2 * len(trace) - 1]
    assert [m["content"] for m in second] == [m["content"] for m in trace[1:]]
    assert _call_ids(second) == [f"{call_id}_1" for call_id in _call_ids(trace[1:])]
    assert [m["tool_call_id"] for m in second if m["role"] == "tool"] == [
        f"{m['tool_call_id']}_1" for m in trace[1:] if m["role"] == "tool"
    ]


def test_sources_tag_each_tool_result_with_its_tool_name() -> None:
    tagged, plain = histories.build(600, sources=True), histories.build(600)
    names = {call["id"]: call["function"]["name"] for m in tagged for call in m.get("tool_calls") or []}
    for message in tagged:
        if message["role"] == "tool":
            assert message["source_id"] == names[message["tool_call_id"]]
        else:
            assert "source_id" not in message
    assert not any("source_id" in m for m in plain)
    assert [{k: v for k, v in m.items() if k != "source_id"} for m in tagged] == plain


def test_new_rounds_extend_any_built_history() -> None:
    added = histories.new_rounds(600)
    assert all(r[0]["role"] == "assistant" and r[0]["tool_calls"] for r in added)
    for n in (100, 1_500):
        grown = histories.build(n) + [m for r in added for m in r]
        assert split_rounds(grown)[-1].complete


def test_build_rejects_an_empty_size() -> None:
    with pytest.raises(ValueError):
        histories.build(0)


# --- sizes -------------------------------------------------------------------------------------


def test_parse_sizes() -> None:
    assert speed.parse_sizes("1_000, 100,100") == (100, 1_000)
    for bad in ("", "50,100", "ten"):
        with pytest.raises(ValueError):
            speed.parse_sizes(bad)


def test_sizes_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(speed.SIZES_ENV, raising=False)
    assert speed.sizes_from_env() == (100, 1_000, 10_000, 100_000)
    monkeypatch.setenv(speed.SIZES_ENV, "300,100")
    assert speed.sizes_from_env() == (100, 300)


# --- the report, from made-up pytest-benchmark figures ------------------------------------------


def _fake_raw(seconds_at: dict[str, float]) -> dict:
    """pytest-benchmark JSON for sizes 100 and 100,000: linear ops, a constant ledger, and
    ``compact`` taking ``seconds_at["compact"]`` at 100,000."""
    benches = []
    for op in sorted(OPS):
        for size in (100, 100_000):
            at_big = seconds_at.get(op, 0.1)  # seconds at 100,000 messages: 1 µs a message
            median = at_big if op in speed.LEDGER_OPS else at_big * size / 100_000
            stats = {"median": median, "min": median * 0.9, "iqr": median * 0.1, "rounds": 7, "iterations": 1}
            info = {"op": op, "label": f"label of {op}", "messages": size}
            benches.append({"params": {"size": size}, "extra_info": info, "stats": stats})
    return {"version": "x", "benchmarks": benches}


@pytest.mark.parametrize(("compact_s", "met"), [(0.05, True), (0.5, False)])
def test_summary_slopes_and_verdict(compact_s: float, met: bool) -> None:
    raw = _fake_raw({"compact": compact_s, "ledger_update": 2e-6, "trigger_check": 3e-6})
    results = speed.summarize(raw, (100, 100_000), seconds=1.0)
    assert set(results["ops"]) == OPS
    assert results["ops"]["split_rounds"]["slope"] == pytest.approx(1.0)
    assert results["ops"]["ledger_update"]["slope"] == pytest.approx(0.0, abs=1e-9)
    assert results["ops"]["ledger_update"]["ratio"] == pytest.approx(1.0)
    assert results["ops"]["split_rounds"]["results"][1]["us_per_message"] == pytest.approx(1.0)
    assert results["target"]["met"] is met and results["target"]["median_s"] == compact_s
    text = speed.markdown(results)
    assert ("**Met** for a fresh compactor" if met else "**Not met** (by 400 ms) for a fresh compactor") in text
    assert speed.fmt_time(compact_s) in text
    assert "**Met**: every strategy linear" in text  # the made-up strategies are exactly linear


def test_a_strategy_growing_faster_than_linearly_misses_the_linearity_target() -> None:
    raw = _fake_raw({"compact": 0.05})
    for bench in raw["benchmarks"]:
        if bench["extra_info"]["op"] == "mask_observations" and bench["params"]["size"] == 100_000:
            bench["stats"]["median"] *= 3  # slope about 1.16 over 100 .. 100,000
    text = speed.markdown(speed.summarize(raw, (100, 100_000), seconds=1.0))
    assert "**Not met**: every strategy linear" in text and "Over: label of mask_observations." in text


def test_fmt_time() -> None:
    assert [speed.fmt_time(s) for s in (2.5, 0.0123, 4.56e-5, 7e-8)] == ["2.50 s", "12.3 ms", "45.6 µs", "70.0 ns"]


# --- the real thing, at tiny sizes --------------------------------------------------------------


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_run_writes_the_three_reports(tmp_path: Path) -> None:
    returned = speed.run(tmp_path, sizes=(100, 300), progress=False, max_time=0.01)
    results = json.loads((tmp_path / "speed.json").read_text())
    assert results == json.loads(json.dumps(returned))
    assert {"cpu", "cores", "python", "date"} <= set(results["machine"])
    assert set(results["ops"]) == OPS
    for op in results["ops"].values():
        assert [r["size"] for r in op["results"]] == [100, 300]
        for row in op["results"]:
            assert row["messages"] >= row["size"] and row["rounds"] >= 1
            assert 0 < row["min_s"] <= row["median_s"]
            assert row["us_per_message"] == pytest.approx(row["median_s"] / row["messages"] * 1e6)
        assert isinstance(op["slope"], float) and math.isfinite(op["slope"]) and op["ratio"] > 0
    assert results["target"]["measured"] is False and results["target"]["met"] is None
    text = (tmp_path / "speed.md").read_text()
    assert "| operation | 100 | 300 | slope | largest/smallest |" in text
    assert all(f"`{op['label']}`" in text for op in results["ops"].values())
    assert "Not measured in this run" in text and "TokenLedger.update" in text
    width, height = _png_size(tmp_path / "speed.png")
    assert width > 600 and height > 400
