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
    results["profile"] = profile()
    results["load_average"] = [*load, round(os.getloadavg()[0], 2)]
    saved.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    (out_dir / "battery.md").write_text(markdown(results), encoding="utf-8")
    return results


PARTS = {
    "hypothesis": "Hypothesis (drawing and shrinking examples)",
    "/openai/": "the openai client (building and sending requests)",
    "/httpx/": "httpx", "/httpcore/": "httpcore", "/ssl.py": "ssl",
    "/conformance/": "the verifier (conformance/)", "/reference/": "the reference compactor (reference/)",
    "/compaction_suite/": "compaction_suite (text, CLI)", "quicktok": "quicktok (exact token counts)",
    "/_pytest/": "pytest", "/pluggy/": "pytest", "/json/": "json", "/werkzeug/": "werkzeug (the summarizer test double's server)",
}  # fmt: skip
"""How the profile's time is grouped: the first key found in a function's file names its part."""


def profile(target: str = "reference") -> dict[str, Any]:
    """The full battery against ``target`` under cProfile, in a subprocess: its own time (not
    cumulative) grouped by part (`PARTS`; C functions by name: socket waits, SSL set-up,
    ``compile``), and the functions with the most own time. cProfile slows Python code more than
    C code, so read the shares, not the seconds."""
    import cProfile  # noqa: F401 - run as a module below; imported so a missing module fails here
    import pstats
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory(prefix="battery-profile-") as folder:
        stats_path = Path(folder) / "check.prof"
        command = [sys.executable, "-m", "cProfile", "-o", str(stats_path), "-m", "compaction_suite", "check", target, "--report", str(Path(folder) / "r.json")]
        subprocess.run(command, capture_output=True, text=True, check=False, timeout=3600)
        stats = pstats.Stats(str(stats_path)).stats  # type: ignore[attr-defined]
    return grouped(stats)


def grouped(stats: dict[tuple[str, int, str], tuple[Any, ...]]) -> dict[str, Any]:
    """pstats' raw table ``{(file, line, name): (cc, calls, own, cumulative, callers)}`` grouped by part."""
    parts: dict[str, float] = {}
    functions = []
    for (file, line, name), (_cc, calls, own, _cum, _callers) in stats.items():
        part = next((label for key, label in PARTS.items() if key in file), None)
        if part is None:
            part = f"built-in `{name}`" if file == "~" else "other Python"
        parts[part] = parts.get(part, 0.0) + own
        functions.append((own, f"{Path(file).name}:{line} {name}" if file != "~" else name, calls))
    total = sum(parts.values())
    ranked = sorted(parts.items(), key=lambda kv: -kv[1])
    return {
        "total_seconds": round(total, 1),
        "parts": [{"part": k, "seconds": round(v, 1), "share": round(v / total, 4)} for k, v in ranked if v / total >= 0.01],
        "functions": [{"function": f, "seconds": round(t, 1), "calls": c} for t, f, c in sorted(functions, reverse=True)[:SLOWEST]],
    }


def _under(wall: float, cpu: float | None) -> str:
    """The verdict on the wall-clock time, and on the CPU time when the wall clock missed."""
    if wall < TARGET_SECONDS:
        return "yes"
    missed = f"no: {wall - TARGET_SECONDS:.1f} s over"
    if cpu is None:
        return missed
    return missed + (f" (CPU {cpu:.1f} s: under)" if cpu < TARGET_SECONDS else f" (CPU {cpu:.1f} s: {cpu - TARGET_SECONDS:.1f} s over)")


def _verdicts(results: dict[str, Any]) -> list[str]:
    """The target, met or by how much missed, for each target's full battery: in CPU seconds, what
    the wall clock would be with a core to itself; the wall clock on this shared machine beside."""
    lines = ["## Target", ""]
    for bench in results["benchmarks"]:
        params, wall = bench["params"], bench["stats"]["median"]
        cpu = (bench.get("extra_info") or {}).get("cpu_seconds")
        if params["mode"] != "full" or cpu is None:
            continue
        verdict = "**met**" if cpu < TARGET_SECONDS else f"**not met**, by {cpu - TARGET_SECONDS:.1f} s"
        lines.append(f"- `{params['target']}`, full battery: {verdict}: {cpu:.1f} s of CPU against {TARGET_SECONDS:.0f} s ({wall:.1f} s wall on the shared machine).")
    return [*lines, ""]


def slowest_tests(target: str = "reference") -> list[dict[str, Any]]:
    """The full battery's slowest test phases against ``target`` (pytest ``--durations``)."""
    from compaction_suite.conformance.runner import run_check

    done = run_check(target, ["--", f"--durations={SLOWEST}", "--durations-min=0.05"])
    return [{"seconds": float(seconds), "phase": phase, "test": test} for seconds, phase, test in DURATION.findall(done.output)][:SLOWEST]


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
        "*CPU seconds* is the check's own CPU time and its subprocesses' (user and system): on a machine with "
        "a core to itself, about what its wall-clock time would be, since the battery runs on one core."
        + (f" The load average was above the machine's {os.cpu_count()} cores: then the CPU time itself grows (the "
           "other work shares the cores' caches), so compare it only with runs at a similar load."
           if max(results.get("load_average") or [0]) > (os.cpu_count() or 1) else ""),
        "",
        *_verdicts(results),
        f"| target | mode | seconds (wall) | CPU seconds | under {TARGET_SECONDS:.0f} s |",
        "|---|---|---:|---:|---|",
    ]
    for bench in results["benchmarks"]:
        seconds = bench["stats"]["median"]
        cpu = (bench.get("extra_info") or {}).get("cpu_seconds")
        params = bench["params"]
        lines.append(f"| {params['target']} | {params['mode']} | {seconds:.1f} | {'n/a' if cpu is None else f'{cpu:.1f}'} | {_under(seconds, cpu)} |")
    if results.get("slowest"):
        lines += [
            "",
            f"## Where the full battery's time goes (`reference`, pytest `--durations={SLOWEST}`)",
            "",
            "| seconds | phase | test |",
            "|---:|---|---|",
            *(f"| {d['seconds']:.2f} | {d['phase']} | `{d['test']}` |" for d in results["slowest"]),
        ]
    if results.get("profile"):
        prof = results["profile"]
        lines += [
            "",
            f"## Where the full battery's CPU goes (`reference` under cProfile: {prof['total_seconds']:.0f} s of own time)",
            "",
            "cProfile slows Python code more than C code: read the shares. Parts under 1% are left out.",
            "",
            "| part | share |",
            "|---|---:|",
            *(f"| {p['part']} | {p['share']:.1%} |" for p in prof["parts"]),
            "",
            "| function (most own time) | calls | share |",
            "|---|---:|---:|",
            *(f"| `{f['function']}` | {f['calls']:,} | {f['seconds'] / prof['total_seconds']:.1%} |" for f in prof["functions"]),
        ]
    return "\n".join(lines) + "\n"
