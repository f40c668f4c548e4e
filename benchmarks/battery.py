"""How long the conformance battery takes against the reference (the suite's issue: under a minute).

``run`` runs `benchmarks/test_battery.py` with pytest-benchmark in this process (each bench runs
``python -m compaction_suite check TARGET`` in a subprocess, start-up included, one round) and writes
``battery.json`` (pytest-benchmark's own JSON) and ``battery.md``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compaction_suite.benchmarks.nested import run_pytest

HERE = Path(__file__).resolve().parent
TARGET_SECONDS = 60.0


def run(out_dir: Path) -> dict[str, Any]:
    """Time the battery (full and --fast, both reference targets); write the reports."""
    out_dir.mkdir(parents=True, exist_ok=True)
    saved = out_dir / "battery.json"
    args = [str(HERE / "test_battery.py"), "--benchmark-only", f"--benchmark-json={saved}", "-q", "-p", "no:cacheprovider"]
    code = run_pytest(args)
    if code != 0:
        raise RuntimeError(f"the battery benchmark failed (pytest exit {int(code)})")
    results = json.loads(saved.read_text(encoding="utf-8"))
    (out_dir / "battery.md").write_text(markdown(results), encoding="utf-8")
    return results


def markdown(results: dict[str, Any]) -> str:
    """A table of seconds per target and mode, from pytest-benchmark's JSON."""
    machine = results["machine_info"]
    cpu = machine.get("cpu", {})
    lines = [
        "# The conformance battery against the reference",
        "",
        f"`compaction-suite bench battery` (pytest-benchmark {results['version']}, one round each) on "
        f"{results['datetime'][:10]}: {cpu.get('brand_raw', '?')}, {cpu.get('count', '?')} cores, "
        f"{machine['python_implementation']} {machine['python_version']}. Each run is `python -m compaction_suite "
        f"check TARGET --report ...` in a subprocess, start-up included. Target: the full battery in under "
        f"{TARGET_SECONDS:.0f} s on 2 cores.",
        "",
        "| target | mode | seconds | under a minute |",
        "|---|---|---:|---|",
    ]
    for bench in results["benchmarks"]:
        seconds = bench["stats"]["median"]
        params = bench["params"]
        lines.append(f"| {params['target']} | {params['mode']} | {seconds:.1f} | {'yes' if seconds < TARGET_SECONDS else 'no'} |")
    return "\n".join(lines) + "\n"
