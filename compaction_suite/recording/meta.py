"""The meta record beside each cassette: ``<history>.meta.json`` says what produced it.

One record type (`Meta`) for both kinds of recording: a target's summarizer calls
(``record.py``) and the test double's failure exchanges (``errors.py``). The fields every
recording has are typed; what only one kind says goes in ``details``, written after them.
A written record is a record: it keeps the command and versions it was made with.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from compaction_suite.conformance.settings import Settings

from .scrub import scrub_text

FORMAT = "compaction-suite recording v1"


@dataclass
class Meta:
    """What a cassette holds and how it was made."""

    produced_by: str
    """Who wrote the answers: a named model at a host, or the suite's TEST DOUBLE."""
    cassette: str
    command: str | None
    server: dict[str, Any]
    model: str
    target: dict[str, Any] | None
    history: dict[str, Any]
    iteration: int
    settings: dict[str, Any]
    interactions: list[dict[str, Any]]
    problem: str | None
    """Why the recording is unusable, or None."""
    event: dict[str, Any] | None
    details: dict[str, Any] = field(default_factory=dict)
    """The fields only this kind of recording has (verification, fault, capture note...)."""
    recorded_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    recorded_with: dict[str, str] = field(default_factory=lambda: versions())

    def as_json(self) -> dict[str, Any]:
        """The record as written: the common fields in a fixed order, then ``details``."""
        common = {
            "format": FORMAT,
            "produced_by": self.produced_by,
            "cassette": self.cassette,
            "recorded_at": self.recorded_at,
            "command": self.command,
            "recorded_with": self.recorded_with,
            "server": self.server,
            "model": self.model,
            "target": self.target,
            "history": self.history,
            "iteration": self.iteration,
            "settings": self.settings,
            "interactions": self.interactions,
            "problem": self.problem,
            "event": self.event,
        }
        return {**common, **self.details}

    def write(self, cassette: str | os.PathLike[str], secrets: Iterable[str] = ()) -> dict[str, Any]:
        """Write ``<history>.meta.json`` beside ``cassette``, secrets scrubbed; returns what was written."""
        text = scrub_text(json.dumps(self.as_json(), indent=2, ensure_ascii=False), secrets) + "\n"
        meta_path(cassette).write_text(text, encoding="utf-8")
        return json.loads(text)


def meta_path(cassette: str | os.PathLike[str]) -> Path:
    """``<history>.meta.json`` beside ``<history>.yaml``."""
    path = Path(cassette)
    return path.with_name(path.stem + ".meta.json")


def load_meta(cassette: str | os.PathLike[str]) -> dict[str, Any]:
    return json.loads(meta_path(cassette).read_text(encoding="utf-8"))


def history_record(path: Path, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Which history was compacted: its path, sha256 and size."""
    return {"path": display_path(path), "sha256": sha256_file(path), "messages": len(messages)}


def settings_record(settings: Settings) -> dict[str, Any]:
    """The settings the factory got, without the key and the (ephemeral) address."""
    return {k: v for k, v in settings.as_json().items() if k not in ("api_key", "base_url")}


def interactions(cassette: Any, compactor_calls: int, label: str | None = None) -> list[dict[str, Any]]:
    """One row per recorded exchange: what it was for, method, path, status."""
    rows = []
    for index, (request, response) in enumerate(cassette.data):
        purpose = label or ("summarizer call made by the compactor" if index < compactor_calls else "next agent call (verification)")
        rows.append({"index": index, "purpose": purpose, "method": request.method, "path": request.path, "status": response["status"]["code"]})
    return rows


def header(response: Mapping[str, Any], name: str) -> str | None:
    """A recorded response's header ``name`` (lower case), or None."""
    for key, values in (response.get("headers") or {}).items():
        if key.lower() == name:
            return values[0] if isinstance(values, list) and values else values
    return None


def sha256_file(path: str | os.PathLike[str]) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def display_path(path: Path) -> str:
    """``path`` relative to the working directory when it is under it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for dist in ("compaction-suite", "openai", "vcrpy"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            found[dist] = metadata.version(dist)
    return found
