"""The matrix document (``matrix.json``) built from the runs, and one reproducer file per failure.

Each failing clause of a run becomes a *failure* with its harm, its reason, what its evidence needs
(`verdicts.shown_with`, or what the framework's own loop shows when the adapter says so in
``SHOWN_IN_LOOP``), and, when its framework documents the behaviour as its contract (the adapter's
``DOCUMENTED``), the framework's own words: such a finding is shown as *documented* and counted apart.
The smallest failing history of each goes to ``reproducers/<framework>--<compactor>--<configuration>--<clause>.json``
with the command that replays it.
"""

from __future__ import annotations

import importlib
import json
import platform
import re
from importlib import metadata
from pathlib import Path
from typing import Any

from compaction_suite.adapters._common import OPTIONS_ENV
from compaction_suite.adapters._common import documented as documented_entries

from . import verdicts
from .findings import every_reason, keys
from .jobs import slug

FORMAT = "compaction-suite-matrix"
FORMAT_VERSION = 4
"""2: failures carry ``reasons`` (stable finding keys) and ``documented``; runs may be ``contract-error``.
3: failures also carry ``every_reason``, each distinct reason (id and text) the clause failed with
(`findings.every_reason`); ``reasons`` holds the key of each (a report of format 3 lists them all).
4: ``complete``, false in the matrices ``matrix`` writes while its configurations are still being checked."""
READS = (2, 3, FORMAT_VERSION)
"""The versions ``--update`` reads (3 and 4 only add a field)."""


def build(
    results: list[dict[str, Any]], frameworks: list[dict[str, Any]], fast: bool, max_examples: int | None, out: Path, seconds: float,
    kept: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """The matrix document; writes the reproducers under ``out/reproducers``. ``kept``: an earlier
    matrix's runs; those of a configuration in ``results`` are replaced, the others kept in place
    with their reproducers (new configurations come after them)."""
    repro_dir = out / "reproducers"
    repro_dir.mkdir(parents=True, exist_ok=True)
    rerun = {_key(r) for r in results}
    for old in repro_dir.glob("*.json"):
        if kept is None or any(old.name.startswith(_prefix(r)) for r in results):
            old.unlink()
    runs = []
    for r in results:
        failures = [_failure(r, cid, c, repro_dir) for cid, c in r["clauses"].items() if c["status"] in verdicts.FAILING]
        run = {k: v for k, v in r.items() if k != "clauses"}
        run["clauses"] = {cid: c["status"] for cid, c in r["clauses"].items()}
        run["failures"] = failures
        runs.append(run)
    if kept is not None:
        fresh = {_key(r): r for r in runs}
        runs = [fresh.pop(_key(r)) if _key(r) in rerun else r for r in kept] + list(fresh.values())
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "suite_version": _suite_version(),
        "python": platform.python_version(),
        "examples_per_clause": max_examples or (10 if fast else 50),
        "fast": fast,
        "seconds": round(seconds, 1),
        "frameworks": frameworks,
        "runs": runs,
    }


def _key(run: dict[str, Any]) -> tuple[str, str, str]:
    """What identifies a configuration across matrices."""
    return run["framework"], run["compactor"], run["configuration"]


def _prefix(run: dict[str, Any]) -> str:
    """The start of the name of every reproducer of ``run``'s configuration."""
    return f"{slug(run['framework'])}--{slug(run['compactor'])}--{slug(run['configuration'])}--"


def _failure(r: dict[str, Any], clause_id: str, c: dict[str, Any], repro_dir: Path) -> dict[str, Any]:
    failure: dict[str, Any] = {
        "clause": clause_id, "level": c["level"], "status": c["status"], "reason": c.get("reason", ""),
        "harm": verdicts.harm(clause_id, c), "title": c.get("title", ""),
        "reasons": sorted(reason for _, reason in keys(clause_id, c)), "every_reason": every_reason(c),
    }  # fmt: skip
    if c.get("reverified_from"):
        failure["reverified_from"] = c["reverified_from"]
    loop = _shown_in_loop(r, clause_id)
    condition = loop["shown"] if loop else verdicts.shown_with(clause_id, c)
    if condition:
        failure["shown_with"] = condition
    if loop:
        failure["shown_by"] = loop["test"]
    said = _documented(r, clause_id)
    if said:
        failure["documented"] = {"quote": said["quote"], "source": said["source"]}
    if c.get("history") is not None:
        name = f"{_prefix(r)}{clause_id}.json"
        reproducer = {
            "framework": r["framework"], "versions": r["versions"], "target": r["target"], "options": r["options"],
            "command": r["command"], "clause": clause_id, "level": c["level"], "title": c["title"], "harm": failure["harm"],
            "reason": c.get("reason", ""), "status": c["status"], "test": c.get("test"), "history": c["history"],
            "output": c.get("output"), "case": c.get("case"),
            "env": {OPTIONS_ENV: json.dumps(r["options"])} if r["options"] else {},
            "replay": f"python -m compaction_suite.conformance.reproduce reproducers/{name}" if c.get("case") else None,
            "failures": c.get("failures"), "shown_with": condition, "native_shapes": r.get("native", True),
        }  # fmt: skip
        (repro_dir / name).write_text(json.dumps(reproducer, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        failure["reproducer"] = f"reproducers/{name}"
    return failure


def _adapter(r: dict[str, Any]) -> Any:
    return importlib.import_module(r["adapter"]) if r.get("adapter") else None


def _documented(r: dict[str, Any], clause_id: str) -> dict[str, Any] | None:
    module = _adapter(r)
    if module is None:
        return None
    said = [e["reason"] for e in every_reason(r["clauses"].get(clause_id) or {})]
    found = [
        d for d in documented_entries(module, r["compactor"], r["options"])
        if d["clause"] == clause_id and all(re.search(d.get("reason", ""), text) for text in said)
    ]  # fmt: skip
    return dict(found[0]) if found else None


def _shown_in_loop(r: dict[str, Any], clause_id: str) -> dict[str, Any] | None:
    module = _adapter(r)
    for entry in getattr(module, "SHOWN_IN_LOOP", []) if module is not None else []:
        if entry["factory"] == r["compactor"] and entry["clause"] == clause_id and all(r["options"].get(k) == v for k, v in entry["options"].items()):
            return dict(entry)
    return None


def _suite_version() -> str | None:
    try:
        return metadata.version("compaction-suite")
    except metadata.PackageNotFoundError:
        return None
