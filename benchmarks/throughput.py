"""How fast traces replay, on one worker and on two, and as the corpus grows (issue 23, point 5; `throughput.md`).

The unit is the model call replayed: one compactor asked at one call of one trace, the context
measured and priced. The corpus is the shipped traces, each cut to its first ``calls`` model
calls and repeated under new ids to reach each size; the lineup is the full reference lineup.
Each (workers, traces) cell is one run of `jobs.run_all`, timed by the wall clock: forked
processes for 1 and 2 workers, and a Dask `LocalCluster` of 2 worker processes when the
``distributed`` extra is installed. The machine is shared: the report gives its load average,
and its ratios matter more than its absolute figures.
"""

from __future__ import annotations

import contextlib
import datetime
import importlib.util
import json
import os
import platform
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from .cost import first_calls, load_traces, shipped_traces, wire_format
from .jobs import Job, Loaded, run_all
from .lineup import LINEUP
from .replay import ASSISTANT_KINDS
from .views import View

SIZES = (1, 2, 4, 8)


def corpus(size: int, calls: int) -> list[Loaded]:
    """``size`` traces: the shipped ones cut to ``calls`` model calls, repeated under new ids."""
    base = [first_calls(t, calls) for t in load_traces(shipped_traces())]
    return [({**base[i % len(base)][0], "id": f"{base[i % len(base)][0]['id']} #{i + 1}"}, base[i % len(base)][1]) for i in range(size)]


def model_calls(traces: Sequence[Loaded], compactors: int) -> int:
    return sum(r.kind in ASSISTANT_KINDS for h, m in traces for r in View(wire_format(h)).rounds(m)) * compactors


def run(out_dir: Path, *, calls: int = 30, sizes: Sequence[int] = SIZES, dask: bool = True, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Time every (workers, traces) cell; write ``throughput.json`` and ``throughput.md``.

    Each engine first replays one short trace untimed (imports, the tokenizer's tables, the
    workers' start), so the cells time replaying only; a Dask cluster is started once per run.
    """
    job = Job(dict(LINEUP))
    rows = []
    load_before = os.getloadavg()[0]
    for engine, workers, options in _engines(dask):
        with options as where:
            run_all(corpus(1, 1), job, **where)  # warm-up, not timed
            for size in sizes:
                traces = corpus(size, calls)
                start = time.perf_counter()
                run_all(traces, job, **where)
                seconds = time.perf_counter() - start
                replayed = model_calls(traces, len(job.compactors))
                rows.append({"engine": engine, "workers": workers, "traces": size, "model_calls": replayed,
                             "seconds": round(seconds, 2), "calls_per_second": round(replayed / seconds, 1)})  # fmt: skip
                if progress:
                    progress(f"{engine}, {workers} worker(s), {size} trace(s): {rows[-1]['calls_per_second']} calls/s")
    results = {
        "date": datetime.date.today().isoformat(),
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()},
        "load_average": {"before": round(load_before, 2), "after": round(os.getloadavg()[0], 2)},
        "calls_per_trace": calls, "compactors": len(job.compactors), "rows": rows,
    }  # fmt: skip
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "throughput.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    (out_dir / "throughput.md").write_text(markdown(results), encoding="utf-8")
    return results


def _engines(dask: bool) -> list[tuple[str, int, Any]]:
    """(engine, workers, a context giving `run_all`'s options): forked processes at 1 and 2
    workers, and a Dask `LocalCluster` of 2 worker processes when the extra is installed."""
    engines: list[tuple[str, int, Any]] = [("processes", 1, _processes(1)), ("processes", 2, _processes(2))]
    if dask and importlib.util.find_spec("distributed") is not None:
        engines.append(("dask LocalCluster", 2, _cluster(2)))
    return engines


@contextlib.contextmanager
def _processes(workers: int) -> Iterator[dict[str, Any]]:
    yield {"jobs": workers}


@contextlib.contextmanager
def _cluster(workers: int) -> Iterator[dict[str, Any]]:
    from distributed import LocalCluster

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as local:
        yield {"scheduler": local.scheduler_address}


def markdown(results: dict[str, Any]) -> str:
    rows = results["rows"]
    lines = [
        "# Replay throughput\n",
        f"`compaction-suite bench throughput` on {results['date']}: {results['machine']['cpus']} CPUs, CPython "
        f"{results['machine']['python']}, {results['machine']['platform']}; 1-minute load average {results['load_average']['before']} "
        f"at the start, {results['load_average']['after']} at the end (the machine is shared: other work ran meanwhile). Each trace "
        f"is a shipped trace's first {results['calls_per_trace']} model calls; each call is replayed through the "
        f"{results['compactors']} compactors of the reference lineup (baseline included) and priced for both providers; "
        "a model call replayed is one compactor at one call. Wall-clock time of `jobs.run_all`, after one untimed warm-up "
        "replay per engine (imports, the workers' start).\n",
        "| engine | workers | traces | model calls replayed | seconds | calls per second | against 1 worker, same traces |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    serial = {r["traces"]: r["calls_per_second"] for r in rows if r["workers"] == 1}
    for r in rows:
        ratio = r["calls_per_second"] / serial[r["traces"]] if serial.get(r["traces"]) else None
        lines.append(f"| {r['engine']} | {r['workers']} | {r['traces']} | {r['model_calls']:,} | {r['seconds']} | {r['calls_per_second']} | {'n/a' if ratio is None else f'{ratio:.2f}x'} |")
    return "\n".join(lines) + "\n"
