"""Replaying many traces: one trace is one job, run here, in worker processes or on a Dask cluster (issue 23).

`replay_trace` does everything the report needs of one trace: each compactor's replay, the token
ceilings and the cache-aware ceilings. It depends only on its arguments (each job starts its own
summarizer test double, or talks to the real summarizer it is given), so the results of a run do
not depend on where its jobs ran: `run_all` returns them in the traces' order whether they ran
one after another (``jobs=1``, the default), in ``jobs`` processes of this machine (forked, so any
compactor factory works, lambdas included) or on the Dask cluster at ``scheduler`` (an address
such as ``tcp://host:8786``; the ``distributed`` extra; factories travel by cloudpickle and the
targets' modules must be importable on the workers).

Why Dask rather than Ray: the jobs are plain Python functions over plain data, which
``distributed`` ships as they are (cloudpickle) with nothing to declare; it is a pure-Python
install (no daemon, no object store), addressed by one ``tcp://`` URL, and its ``LocalCluster``
runs a real scheduler and real worker processes in a test on one machine. Ray would add a
runtime of its own and a large binary wheel for no gain at this grain (a job is a whole trace).
"""

from __future__ import annotations

import contextlib
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compaction_suite.conformance.entities import CODING_AGENT_TASK_LISTS, IdRule, TaskListTools
from compaction_suite.conformance.formats import CHAT
from compaction_suite.conformance.settings import Settings, connected

from .ceiling import Ideal, shape
from .prices import DEFAULT_PRICINGS, Pricing
from .replay import Run, ceilings, replay, usd

Loaded = tuple[dict[str, Any], Any]
"""A trace as `cost.load_traces` gives it: (header, history)."""


@dataclass(frozen=True)
class RealSummarizer:
    """An OpenAI-compatible endpoint summarizing instead of the test double, its exchanges
    recorded to (or, when the cassette exists, replayed offline from) ``cassettes/<trace>.yaml``."""

    base_url: str | None
    """None: replay only (every trace's cassette must exist)."""
    model: str
    cassettes: Path | None = None
    api_key: str | None = field(default=None, repr=False)
    command: str | None = None
    """The command line that recorded, written into each cassette's meta record."""
    model_file: Path | None = None
    """The model's weights file (its name, size and sha256 go into the meta record)."""
    server_info: str | None = None
    """What serves the model (program, version, options, hardware), for the meta record."""
    timeout: float = 600.0
    """Seconds one summarizer call may take (a small model on a shared CPU is slow)."""


@dataclass
class Job:
    """What every trace's job needs; the same for all traces of a run."""

    compactors: dict[str, Callable[[Settings], Any]]
    settings_changes: dict[str, Any] = field(default_factory=dict)
    id_rule: IdRule | None = None
    task_lists: TaskListTools = field(default_factory=lambda: dict(CODING_AGENT_TASK_LISTS))
    ceiling_rounds: Sequence[int] = (2,)
    pricings: tuple[Pricing, ...] = DEFAULT_PRICINGS
    summarizer: RealSummarizer | None = None


@dataclass
class TraceResult:
    """One trace's runs (one per compactor, in the job's order) and its ceilings."""

    runs: list[Run]
    token_ceilings: dict[str, int]
    cache_ceilings: dict[str, dict[str, Any]]


def replay_trace(loaded: Loaded, job: Job) -> TraceResult:
    """Every compactor of ``job`` on one trace, with the trace's ceilings (module docstring)."""
    header, history = loaded
    trace_format = str(header.get("wire_format") or CHAT)
    with _summarizer_settings(header["id"], job) as settings:
        runs = [
            replay(
                history, factory(settings), trace=header["id"], name=name, facts=header.get("planted_facts", []),
                id_rule=job.id_rule, task_lists=job.task_lists, trace_format=trace_format, pricings=job.pricings,
            )
            for name, factory in job.compactors.items()
        ]  # fmt: skip
    return TraceResult(runs, ceilings(history, job.ceiling_rounds, trace_format), cache_ceilings(history, trace_format, job))


def cache_ceilings(history: Any, trace_format: str, job: Job) -> dict[str, dict[str, Any]]:
    """For each pricing and K: the cache-aware ceiling and the token ceiling's schedule, priced (SPEC CEIL-1..4)."""
    measured = shape(history, trace_format)
    out: dict[str, dict[str, Any]] = {}
    for pricing in job.pricings:
        for k in job.ceiling_rounds:
            ideal = Ideal(measured, k, pricing)
            best, every = ideal.cheapest(), ideal.every_call()
            out[f"{pricing.label} K={k}"] = {
                "pricing": pricing.label, "keep_rounds": k, "calls": len(measured.calls),
                "cache_aware": {"cost_usd_with_cache": usd(best.cost_with_cache), "cost_usd_no_cache": usd(best.cost_no_cache),
                                "compactions": list(best.compactions)},
                "every_call": {"cost_usd_with_cache": usd(every.cost_with_cache), "cost_usd_no_cache": usd(every.cost_no_cache),
                               "compactions": len(every.compactions)},
            }  # fmt: skip
    return out


@contextlib.contextmanager
def _summarizer_settings(trace_id: str, job: Job) -> Iterator[Settings]:
    """The `Settings` a job's factories get: the test double (started for this job) or the real
    summarizer, through its cassette when the job has one."""
    changes = {"summarizer_timeout": 30.0, **job.settings_changes}
    if job.summarizer is None:
        from compaction_suite.conformance.summarizer_server import SummarizerServer

        with SummarizerServer() as server:
            yield connected(Settings(**changes), server.base_url)
        return
    from .real_summaries import summarizing

    with summarizing(job.summarizer, trace_id, changes) as settings:
        yield settings


_JOB: Job | None = None
_TRACES: Sequence[Loaded] = ()
"""What forked workers inherit: the job and the traces, so nothing needs pickling on the way in."""


def _forked(index: int) -> TraceResult:
    assert _JOB is not None, "set before the pool forks"
    return replay_trace(_TRACES[index], _JOB)


def run_all(
    traces: Sequence[Loaded], job: Job, *, jobs: int = 1, scheduler: str | None = None, done: Callable[[int], None] | None = None
) -> list[TraceResult]:
    """Every trace's `TraceResult`, in the traces' order (module docstring). ``done(i)`` is called
    as trace ``i`` finishes (in any order when jobs run at once)."""
    if scheduler is not None:
        return _on_dask(traces, job, scheduler, done)
    if jobs <= 1 or len(traces) <= 1:
        results = []
        for i, loaded in enumerate(traces):
            results.append(replay_trace(loaded, job))
            if done:
                done(i)
        return results
    global _JOB, _TRACES
    _JOB, _TRACES = job, traces
    try:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            futures = {pool.submit(_forked, i): i for i in range(len(traces))}
            for future in as_completed(futures):
                if done:
                    done(futures[future])
            return [f.result() for f in futures]
    finally:
        _JOB, _TRACES = None, ()


def _on_dask(traces: Sequence[Loaded], job: Job, scheduler: str, done: Callable[[int], None] | None) -> list[TraceResult]:
    from distributed import as_completed

    with connect(scheduler) as client:
        shared = client.scatter(job, broadcast=True)
        futures = [client.submit(replay_trace, loaded, shared, pure=False) for loaded in traces]
        index = {f.key: i for i, f in enumerate(futures)}
        for future in as_completed(futures):
            if done:
                done(index[future.key])
        return client.gather(futures)


class SchedulerUnreachable(ValueError):
    """``--scheduler`` names no Dask scheduler this machine can reach (a bad input, found before any replay)."""


CONNECT_TIMEOUT = 10.0
"""Seconds to wait for the Dask scheduler to answer."""


def connect(scheduler: str) -> Any:
    """A Dask ``Client`` of the scheduler at ``scheduler``, or `SchedulerUnreachable` saying why not."""
    from distributed import Client

    try:
        return Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (ValueError, OSError) as error:  # a malformed address, a refused or silent one
        raise SchedulerUnreachable(f"--scheduler {scheduler}: no Dask scheduler reached ({error})") from None
