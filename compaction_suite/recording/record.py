"""Recording a compactor's real summarizer calls on vcrpy cassettes.

``compaction-suite record TARGET --base-url URL --model NAME`` calls TARGET's factory (any
target of the plug-in contract: ``module:attr``, a registered name, ``cmd:<command>``) with
`Settings` whose clients point at an OpenAI-compatible endpoint (or an Azure OpenAI
deployment), compacts each history at ``iteration`` inside a vcrpy cassette, then sends the
compacted history to the same endpoint as the agent's next call (``max_tokens=1``) so the
cassette also holds a real server's ``usage.prompt_tokens`` for it: seed 000's "verified"
figure, and proof that a real server accepts the compacted history. Each cassette gets a
``<history>.meta.json`` (`Meta`) saying what produced it. ``cmd:`` compactors are pointed at
a `ForwardingProxy`.
"""

from __future__ import annotations

import contextlib
import copy
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai

from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.summarizer_server import TEST_DOUBLE_HEADER
from compaction_suite.conformance.target import Target, build, call_compact, is_command, last_event_json, resolve
from compaction_suite.inputs import InputError, read_json
from compaction_suite.reference.errors import HistoryError
from compaction_suite.reference.rounds import split_rounds

from .endpoint import NO_KEY, Endpoint, ForwardingProxy, RecordingError
from .meta import Meta, header, history_record, interactions, settings_record, sha256_file
from .scrub import recorder

CANONICAL_HISTORIES = ("parallel-tool-calls.json", "entities-and-progress.json", "earlier-summary.json")
VERIFY = {"max_tokens": 1, "temperature": 0}
"""The next agent call: only its ``usage.prompt_tokens`` matters."""


@dataclass
class Recording:
    """One history recorded: where the files are and what happened."""

    cassette: Path
    meta: dict[str, Any]
    problem: str | None = None
    """Why the recording is unusable (not compacted, summarizer failed, next call rejected), or None."""


def default_histories() -> list[Path]:
    """The canonical histories: ``cassettes/histories/`` of the working directory, else the copy
    this package ships (``compaction_suite/cassettes`` installed, ``cassettes/`` of a checkout)."""
    package = Path(__file__).resolve().parents[1]
    for root in (Path.cwd(), package, package.parent):
        folder = root / "cassettes" / "histories"
        if all((folder / name).is_file() for name in CANONICAL_HISTORIES):
            return [folder / name for name in CANONICAL_HISTORIES]
    raise RecordingError("no cassettes/histories/ here: pass --history FILE")


def load_history(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The chat-completions history in the JSON file ``path``; `InputError` says in one line why
    it is not one (read before anything is recorded: SPEC Part C)."""
    history = read_json(path)
    if not isinstance(history, list) or not all(isinstance(m, dict) for m in history):
        raise InputError(f"{path}: not a history: expected a JSON list of chat-completions messages")
    try:
        split_rounds(history)
    except HistoryError as error:
        raise InputError(f"{path}: not a valid chat-completions history: {error}") from None
    return history


def slug(spec: str) -> str:
    """A directory name for a target: ``reference``, ``mypkg.check-factory``, ``cmd-node-compactor.mjs``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", spec).strip("-.")[:80] or "target"


def record(
    spec: str | None,
    histories: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    endpoint: Endpoint,
    *,
    iteration: int | None = None,
    name: str | None = None,
    model_file: str | os.PathLike[str] | None = None,
    server_info: str | None = None,
    command: str | None = None,
    produced_by: str | None = None,
) -> list[Recording]:
    """Record ``spec``'s compaction of each history against ``endpoint`` (module docstring)."""
    loaded = {Path(path): load_history(path) for path in histories}  # every input read before anything is written
    target = resolve(spec, timeout=endpoint.timeout + 30)  # a cmd: process answers after its summarizer
    iteration = Settings().threshold_iterations if iteration is None else iteration
    model = None
    if model_file is not None:
        model = {"path": str(model_file), "name": Path(model_file).name, "bytes": Path(model_file).stat().st_size, "sha256": sha256_file(model_file)}
    folder = Path(out) / (name or slug(target.spec))
    try:
        with contextlib.ExitStack() as stack:
            proxy = stack.enter_context(ForwardingProxy(endpoint)) if is_command(target.spec) else None
            build(target, _settings(endpoint, proxy))  # a factory that fails is a contract error, before any recording
            folder.mkdir(parents=True, exist_ok=True)
            return [
                _record_one(target, path, history, folder, endpoint, iteration, proxy, model, server_info, command, produced_by)
                for path, history in loaded.items()
            ]
    finally:
        target.close()


def _settings(endpoint: Endpoint, proxy: ForwardingProxy | None) -> Settings:
    """The factory's settings: the endpoint's, or the forwarding proxy's for a ``cmd:`` compactor."""
    return endpoint.settings(base_url=proxy.url, api_key=NO_KEY) if proxy is not None else endpoint.settings()


def _record_one(
    target: Target,
    history_path: Path,
    history: list[dict[str, Any]],
    folder: Path,
    endpoint: Endpoint,
    iteration: int,
    proxy: ForwardingProxy | None,
    model_file: dict[str, Any] | None,
    server_info: str | None,
    command: str | None,
    produced_by: str | None,
) -> Recording:
    cassette_path = folder / f"{history_path.stem}.yaml"
    cassette_path.unlink(missing_ok=True)  # mode "all" would keep old interactions the new ones do not match
    secrets = [endpoint.api_key] if endpoint.api_key else []
    settings = _settings(endpoint, proxy)
    client = endpoint.clients()[0]
    verification: dict[str, Any] = {}
    with recorder(secrets).use_cassette(os.fspath(cassette_path)) as cassette:
        compactor, output, problem = _run(target, settings, history, iteration)
        compactor_calls = len(cassette.data)
        event = last_event_json(compactor) if compactor is not None else None
        problem = problem or _unusable(history, output, event)
        if problem is None:
            problem, verification, event = _verify(client, endpoint, compactor, output, event)
        exchanges = interactions(cassette, compactor_calls)
        server_header = header(cassette.data[0][1], "server") if cassette.data else None
        double = any(header(response, TEST_DOUBLE_HEADER.lower()) for _, response in cassette.data)
    meta = Meta(
        produced_by=produced_by or _produced_by(endpoint, double),
        cassette=cassette_path.name,
        command=command,
        server={**endpoint.describe(), "info": server_info, "server_header": server_header},
        model=endpoint.model,
        target={"spec": target.spec, "origin": target.origin, "version": target.version},
        history=history_record(history_path, history),
        iteration=iteration,
        settings=settings_record(settings),
        interactions=exchanges,
        problem=problem,
        event=event,
        details={
            "model_file": model_file,
            "verification": verification,
            "verified_prompt_tokens": verification.get("prompt_tokens"),
            "output": output,
        },
    )
    return Recording(cassette_path, meta.write(cassette_path, secrets), problem)


def _run(target: Target, settings: Settings, history: list[dict[str, Any]], iteration: int) -> tuple[Any, Any, str | None]:
    """(compactor, output, problem): a compactor that raises is a problem of the recording, not a crash."""
    try:
        compactor = target.factory(settings)
        return compactor, call_compact(compactor, copy.deepcopy(history), iteration), None
    except Exception as error:  # noqa: BLE001 - reported in the meta file and the exit status
        return None, None, f"the compactor raised {type(error).__name__}: {error}"


def _unusable(history: list[dict[str, Any]], output: Any, event: dict[str, Any] | None) -> str | None:
    """Why a compactor's answer cannot be verified: it did not compact, or its summarizer failed."""
    event = event or {}
    if not isinstance(output, list) or output == history:
        reason = event.get("failure_reason") or event.get("skipped_reason")
        return "the compactor did not compact" + (f": {reason}" if reason else "")
    if event.get("failure_reason"):
        return f"the summarizer failed: {event['failure_reason']}"
    return None


def _verify(
    client: openai.OpenAI, endpoint: Endpoint, compactor: Any, output: list[dict[str, Any]], event: dict[str, Any] | None
) -> tuple[str | None, dict[str, Any], dict[str, Any] | None]:
    """Send the compacted history as the agent's next call: (problem, verification, event).

    The server's ``usage.prompt_tokens`` is seed 000's verified figure; it is reported to the
    compactor (``observe_usage``) when it listens, and its event read again.
    """
    try:
        request: dict[str, Any] = {"model": endpoint.model, "messages": output, **VERIFY}
        reply = client.chat.completions.create(**request)
    except openai.OpenAIError as error:
        problem = f"the endpoint rejected the compacted history: {type(error).__name__}: {error}"
        return problem, {"error": problem}, event
    usage = reply.usage.model_dump() if reply.usage is not None else None
    prompt_tokens = (usage or {}).get("prompt_tokens")
    if isinstance(prompt_tokens, int) and callable(getattr(compactor, "observe_usage", None)):
        compactor.observe_usage(prompt_tokens)
        event = last_event_json(compactor)
    request = {"model": endpoint.model, "messages": "the output below", **VERIFY}
    return None, {"request": request, "usage": usage, "prompt_tokens": prompt_tokens}, event


def _produced_by(endpoint: Endpoint, double: bool) -> str:
    """Who wrote the answers: the suite's test double says so in a header; anything else is taken as a model."""
    host = endpoint.describe()["host"]
    if double:
        return f"the compaction-suite summarizer TEST DOUBLE at {host} (not a model: its responses carry {TEST_DOUBLE_HEADER})"
    return f"real answers of {endpoint.model!r} at {host}"
