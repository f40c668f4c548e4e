"""Replays spread over processes or a Dask cluster give the report of a serial run, byte for byte (benchmarks/jobs.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from compaction_suite.benchmarks import cost
from compaction_suite.benchmarks.lineup import BASELINE, LINEUP
from compaction_suite.benchmarks.traces.format import read_trace, write_trace
from compaction_suite.reference import split_rounds

TRACES = Path(__file__).resolve().parents[1] / "cassettes" / "traces"


@pytest.fixture(scope="module")
def slices(tmp_path_factory) -> list[Path]:
    """Two short traces: the first rounds of two shipped traces."""
    folder = tmp_path_factory.mktemp("slices")
    out = []
    for name, rounds in (("stdlib-explorer-seed2", 24), ("stdlib-explorer-seed3", 18)):
        header, messages = read_trace(TRACES / f"{name}.jsonl")
        path = folder / f"{name}.jsonl"
        write_trace(path, header | {"id": f"{name}-slice"}, [m for r in split_rounds(messages)[:rounds] for m in r.messages])
        out.append(path)
    return out


def lineup() -> dict:
    """A summarizing strategy, a cheap one and the cache-aware one: factories of the package itself,
    so that Dask workers (other processes) can load them."""
    names = [n for n in LINEUP if n.startswith(("seed-000", "cache-aware for openai"))]
    return {n: LINEUP[n] for n in names}


def report(folder: Path, slices: list[Path], **where) -> bytes:
    cost.run(folder, slices, lineup(), progress=False, **where)
    return (folder / "replay.json").read_bytes()


@pytest.fixture(scope="module")
def serial(tmp_path_factory, slices) -> bytes:
    return report(tmp_path_factory.mktemp("serial"), slices)


def test_two_processes_give_the_serial_report(tmp_path, slices, serial):
    assert report(tmp_path, slices, jobs=2) == serial
    assert b'"cache_aware_verdict"' in serial and BASELINE.encode() in serial


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="the distributed extra is not installed")
def test_a_dask_cluster_gives_the_serial_report(tmp_path, slices, serial):
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        assert report(tmp_path, slices, scheduler=cluster.scheduler_address) == serial
