"""How long the conformance battery takes against the reference (issue 23: the full battery under 15 s on 2 cores).

``run`` runs `benchmarks/test_battery.py` with pytest-benchmark in this process (each bench runs
``python -m compaction_suite check TARGET`` in a subprocess, start-up included, one round), then
one more full run of ``reference`` with pytest's ``--durations`` to say where the time goes, and
writes ``battery.json`` (pytest-benchmark's own JSON) and ``battery.md``. The machine is shared:
the report gives the load average around the run.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from compaction_suite.benchmarks.nested import run_pytest

HERE = Path(__file__).resolve().parent
TARGET_SECONDS = 15.0
"""Issue 23's target for the full battery (an earlier issue asked for a minute)."""
SLOWEST = 12
DURATION = re.compile(r"^\s*([\d.]+)s (call|setup|teardown)\s+(\S+)", re.M)


def run(out_dir: Path) -> dict[str, Any]:
    """Time the battery (full and --fast, both reference targets); write the reports."""
    out_dir.mkdir(parents=True, exist_ok=True)
    saved = out_dir / "battery.json"
    load = [round(os.getloadavg()[0], 2)]
    args = [str(HERE / "test_battery.py"), "--benchmark-only", f"--benchmark-json={saved}", "-q", "-p", "no:cacheprovider"]
    code = run_pytest(args)
    if code != 0:
        raise RuntimeError(f"the battery benchmark failed (pytest exit {int(code)})")
    results = json.loads(saved.read_text(encoding="utf-8"))
    results["slowest"] = slowest_tests()
    results["load_average"] = [*load, round(os.getloadavg()[0], 2)]
    saved.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    (out_dir / "battery.md").write_text(markdown(results), encoding="utf-8")
    return results


def slowest_tests(target: str = "reference") -> list[dict[str, Any]]:
    """The full battery's slowest test phases against ``target`` (pytest ``--durations``)."""
    from compaction_suite.conformance.runner import run_check

    done = run_check(target, ["--", f"--durations={SLOWEST}", "--durations-min=0.05"])
    return [{"seconds": float(m[1]), "phase": m[2], "test": m[3]} for m in DURATION.findall(done.output)][:SLOWEST]


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
        f"check TARGET --report ...` in a subprocess, start-up included. Target (issue 23): the full battery in under "
        f"{TARGET_SECONDS:.0f} s on 2 cores."
        + (f" 1-minute load average {results['load_average'][0]} before, {results['load_average'][1]} after: the machine "
           "is shared, so these times include waiting for a core." if results.get("load_average") else ""),
        "",
        f"| target | mode | seconds | under {TARGET_SECONDS:.0f} s |",
        "|---|---|---:|---|",
    ]
    for bench in results["benchmarks"]:
        seconds = bench["stats"]["median"]
        params = bench["params"]
        verdict = "yes" if seconds < TARGET_SECONDS else f"no: {seconds - TARGET_SECONDS:.1f} s over"
        lines.append(f"| {params['target']} | {params['mode']} | {seconds:.1f} | {verdict} |")
    if results.get("slowest"):
        lines += [
            "",
            f"## Where the full battery's time goes (`reference`, pytest `--durations={SLOWEST}`)",
            "",
            "| seconds | phase | test |",
            "|---:|---|---|",
            *(f"| {d['seconds']:.2f} | {d['phase']} | `{d['test']}` |" for d in results["slowest"]),
        ]
    return "\n".join(lines) + "\n"
