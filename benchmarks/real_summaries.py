"""Real summaries in the benchmark: an OpenAI-compatible endpoint summarizes, recorded with vcrpy (issue 23).

``bench replay --summarizer-base-url URL --summarizer-model NAME`` points every summarizing
compactor at the user's provider or at a local server (`cassettes/setup-local-model.sh` starts
one) instead of the test double. With ``--cassettes DIR`` each trace's exchanges go to
``DIR/<trace>.yaml`` (the `record` extra, vcrpy; scrubbed of keys as `compaction-suite record`
scrubs them) beside a ``.meta.json`` naming the model (and its file's sha256), the server, the
date and the command; when that cassette exists the trace replays from it instead, offline:
every connection refused, a request the cassette does not hold an error (SPEC PROBE-3). A
replay rebuilds the summarization requests a cassette holds with the bound on a summary's length
it was recorded with (its meta record's ``summarizer_max_tokens``; none in a cassette recorded
before the bound existed), and refuses to replay it with another one (SPEC PROBE-4).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compaction_suite.conformance.settings import Settings

if TYPE_CHECKING:
    from .jobs import RealSummarizer


def cassette_path(folder: Path, trace_id: str) -> Path:
    """``folder/<trace id as a file name>.yaml``."""
    from compaction_suite.recording.record import slug

    return folder / f"{slug(trace_id)}.yaml"


@contextlib.contextmanager
def summarizing(real: RealSummarizer, trace_id: str, changes: dict[str, Any]) -> Iterator[Settings]:
    """`Settings` whose clients reach ``real``: live, recorded to the trace's cassette, or
    replayed offline from it when it exists (module docstring)."""
    from compaction_suite.recording.endpoint import Endpoint

    changes = {k: v for k, v in changes.items() if k != "summarizer_timeout"}
    path = cassette_path(real.cassettes, trace_id) if real.cassettes is not None else None
    if path is not None and path.is_file():
        from compaction_suite.recording.meta import load_meta
        from compaction_suite.recording.offline import offline_endpoint, replaying

        meta = load_meta(path)
        with replaying(path):
            yield offline_endpoint(meta).settings(**{**changes, BOUND: recorded_bound(meta)})
        return
    if real.base_url is None:
        raise MissingCassette(f"no cassette {path} to replay trace {trace_id!r}, and no --summarizer-base-url to record it")
    endpoint = Endpoint(real.model, base_url=real.base_url, api_key=real.api_key, timeout=real.timeout)
    settings = endpoint.settings(**changes)
    if path is None:
        yield settings
        return
    yield from _recording(real, endpoint, settings, path, trace_id)


class MissingCassette(ValueError):
    """A trace to replay from cassettes has none, and no endpoint was given to record it."""


BOUND = "summarizer_max_tokens"
"""The `Settings` field bounding a summary's length (SPEC PROBE-4)."""


def recorded_bound(meta: Mapping[str, Any]) -> int | None:
    """The bound on a summary's length a cassette was recorded with: none when its meta record
    has no such setting (recorded before the bound existed, SPEC PROBE-4)."""
    return meta.get("settings", {}).get(BOUND)


class OtherBound(ValueError):
    """A replay asked for another bound on a summary's length than its cassette was recorded with."""


def check_replayable(real: RealSummarizer | None, trace_ids: list[str], changes: Mapping[str, Any] | None = None) -> None:
    """Said before any trace is replayed (SPEC CLI-2): `OtherBound` when a cassette to replay was
    recorded with another bound than ``changes`` asks for (PROBE-4), and when ``real`` can only
    replay (no endpoint to record with), `MissingCassette` naming the first trace without one."""
    if real is None or real.cassettes is None:
        return
    _check_bounds(real.cassettes, trace_ids, (changes or {}).get(BOUND))
    if real.base_url is not None:
        return
    missing = [t for t in trace_ids if not cassette_path(real.cassettes, t).is_file()]
    if missing:
        more = f" (and {len(missing) - 1} more traces)" if len(missing) > 1 else ""
        raise MissingCassette(
            f"--cassettes {real.cassettes}: no cassette {cassette_path(real.cassettes, missing[0])} to replay trace "
            f"{missing[0]!r}{more}, and no --summarizer-base-url to record it"
        )


def summary_bounds(real: RealSummarizer, trace_ids: list[str], changes: Mapping[str, Any]) -> dict[str, int | None]:
    """Each trace's bound on a summary's length (SPEC PROBE-4): its cassette's when it has one,
    else the run's."""
    from compaction_suite.recording.meta import load_meta

    paths = {t: cassette_path(real.cassettes, t) if real.cassettes is not None else None for t in trace_ids}
    return {t: recorded_bound(load_meta(p)) if p is not None and p.is_file() else changes.get(BOUND) for t, p in paths.items()}


def describe_bounds(bounds: Mapping[str, int | None]) -> str:
    """``bounds`` for the report, after the summarizer's name: one clause, every trace named where they differ."""
    said = {t: f"at most {b:,} tokens each (max_tokens)" if b is not None else "unbounded (no max_tokens)" for t, b in bounds.items()}
    if len(set(said.values())) <= 1:
        return f"; summaries {next(iter(said.values()), 'unbounded (no max_tokens)')}"
    return "; summaries " + ", ".join(f"{how} on `{t}`" for t, how in said.items())


def _check_bounds(folder: Path, trace_ids: list[str], asked: int | None) -> None:
    """`OtherBound` for the first existing cassette recorded with another bound than ``asked`` (None: any)."""
    from compaction_suite.recording.meta import load_meta

    if asked is None:
        return
    for trace_id in trace_ids:
        path = cassette_path(folder, trace_id)
        if path.is_file() and (recorded := recorded_bound(load_meta(path))) != asked:
            was = f"--summarizer-max-tokens {recorded}" if recorded is not None else "no --summarizer-max-tokens"
            raise OtherBound(f"--summarizer-max-tokens {asked}: cassette {path} (trace {trace_id!r}) was recorded with {was}; replay it so")


def _recording(real: RealSummarizer, endpoint: Any, settings: Settings, path: Path, trace_id: str) -> Iterator[Settings]:
    from compaction_suite.recording.meta import Meta, interactions, settings_record, sha256_file
    from compaction_suite.recording.scrub import recorder

    path.parent.mkdir(parents=True, exist_ok=True)
    secrets = [real.api_key] if real.api_key else []
    with recorder(secrets).use_cassette(os.fspath(path)) as cassette:
        yield settings
        exchanges = interactions(cassette, len(cassette.data), "summarizer call made by a compactor of the replay")
    model_file = None
    if real.model_file is not None:
        model_file = {"name": real.model_file.name, "bytes": real.model_file.stat().st_size, "sha256": sha256_file(real.model_file)}
    Meta(
        produced_by=f"real answers of {endpoint.model!r} at {endpoint.describe()['host']}",
        cassette=path.name,
        command=real.command,
        server={**endpoint.describe(), "info": real.server_info},
        model=endpoint.model,
        target=None,
        history={"trace": trace_id},
        iteration=0,
        settings=settings_record(settings),
        interactions=exchanges,
        problem=None,
        event=None,
        details={"model_file": model_file, "replay": "every summarizer call of one trace's bench replay, in order"},
    ).write(path, secrets)

