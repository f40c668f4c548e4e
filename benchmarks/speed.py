"""How fast is the reference compactor's non-model work, and how does it grow? (benchmarks issue: speed)

`run` runs the pytest-benchmark benches of `benchmarks/test_speed.py` in-process
(``pytest.main([... "--benchmark-only", "--benchmark-json=..."])``, so every figure
is pytest-benchmark's) on histories of the given sizes, then writes to ``out_dir``:

* ``speed.json``: the machine (CPU model, cores, Python, date) and, per operation and
  size, the median and min time, rounds, and time per message; per operation the
  log-log slope of time against messages (numpy ``polyfit``; about 1 is linear, about
  0 constant) and the ratio of the largest size's median to the smallest's;
* ``speed.md``: the same as tables, and a verdict on the issue's target: compacting a
  100,000-message history (no model call) in under 100 ms;
* ``speed.png``: time against messages, log-log, one line per operation.

The machines here are shared and noisy: ratios and slopes within one run are what
to read, not absolute times across runs. ``compaction-suite bench speed --out
benchmarks/results [--sizes 100,1000]`` does the same from the command line.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import io
import json
import math
import os
import platform
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from compaction_suite.benchmarks.histories import SIZES as DEFAULT_SIZES
from compaction_suite.benchmarks.histories import TRACE
from compaction_suite.benchmarks.nested import run_pytest

BENCH_FILE = Path(__file__).resolve().parent / "test_speed.py"
SIZES_ENV = "COMPACTION_SPEED_SIZES"
"""Comma-separated sizes for `benchmarks/test_speed.py`; `DEFAULT_SIZES` when unset."""
MIN_SIZE = 100
"""The benches assert that each strategy shortens the history: below ~60 messages some would not."""
TARGET_OP = "compact"
TARGET_MESSAGES = 100_000
TARGET_SECONDS = 0.100
STRATEGY_OPS = ("keep_last_messages", "mask_observations", "token_budget", "drop_sources", "chain")
"""The strategies, each timed on the whole history (issue 23: every one linear)."""
LINEAR_SLOPE = 1.05
"""Issue 23's bound on a strategy's slope."""
LEDGER_OPS = ("ledger_update", "trigger_check")
"""The per-round checks whose cost should not grow with the history (SPEC TOK-4)."""
NOISE_NOTE = (
    "The machine is shared and noisy: read the ratios and slopes within this run, "
    "not the absolute times across runs."
)


# --- sizes -------------------------------------------------------------------------------------


def parse_sizes(text: str, minimum: int = MIN_SIZE) -> tuple[int, ...]:
    """``"100,1_000"`` -> ``(100, 1000)``: sorted, deduplicated, each at least ``minimum``."""
    try:
        sizes = sorted({int(part.strip().replace("_", "")) for part in text.split(",") if part.strip()})
    except ValueError:
        sizes = []
    if not sizes or sizes[0] < minimum:
        raise ValueError(f"sizes must be integers >= {minimum}, comma-separated; got {text!r}")
    return tuple(sizes)


def sizes_from_env() -> tuple[int, ...]:
    """The sizes `benchmarks/test_speed.py` is parametrized with (``COMPACTION_SPEED_SIZES``)."""
    raw = os.environ.get(SIZES_ENV, "").strip()
    return parse_sizes(raw) if raw else tuple(DEFAULT_SIZES)


# --- running -----------------------------------------------------------------------------------


CLOCKS = {"cpu": "time.process_time", "wall": "time.perf_counter"}
"""pytest-benchmark's timer for each ``--clock``: the process's CPU time, or the wall clock."""


def run(
    out_dir: Path, sizes: Sequence[int] = DEFAULT_SIZES, *, progress: bool = True, max_time: float = 1.0, clock: str = "cpu"
) -> dict[str, Any]:
    """Run the benches, write ``speed.{json,md,png}`` to ``out_dir`` and return the results.

    ``max_time`` is pytest-benchmark's ``--benchmark-max-time`` (seconds a bench may
    take beyond its minimum rounds); a small one makes a quick, rougher run. ``clock`` is
    ``cpu`` (the default: the benchmarking process's CPU time, so the time spent waiting for a
    core of a shared machine is left out; the garbage collector's work is in) or ``wall``.
    """
    sizes = parse_sizes(",".join(map(str, sizes)))
    started, load = time.perf_counter(), _load()
    raw = run_benches(sizes, progress=progress, max_time=max_time, clock=clock)
    results = summarize(raw, sizes, seconds=time.perf_counter() - started)
    results["machine"]["load_average_start"] = load
    results["clock"] = clock
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "speed.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    (out_dir / "speed.md").write_text(markdown(results), encoding="utf-8")
    plot(results, out_dir / "speed.png")
    return results


def run_benches(sizes: Sequence[int], *, progress: bool = True, max_time: float = 1.0, clock: str = "cpu") -> dict[str, Any]:
    """pytest-benchmark's JSON report of `benchmarks/test_speed.py` at ``sizes``, run in-process."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "benchmark.json"
        args = [str(BENCH_FILE), "--benchmark-only", f"--benchmark-json={report}", f"--benchmark-timer={CLOCKS[clock]}",
                f"--benchmark-max-time={max_time}", "-p", "no:cacheprovider", "-q"]
        output = io.StringIO()
        with _quiet(not progress, output):
            code = run_pytest(args, **{SIZES_ENV: ",".join(map(str, sizes))})
        if code != 0 or not report.exists():
            raise RuntimeError(f"benchmarks/test_speed.py failed (pytest exit code {code})\n{output.getvalue()[-4000:]}")
        return json.loads(report.read_text(encoding="utf-8"))


@contextlib.contextmanager
def _quiet(quiet: bool, into: io.StringIO) -> Iterator[None]:
    """Send stdout and stderr to ``into`` when ``quiet`` (pytest-benchmark logs to stderr)."""
    if not quiet:
        yield
        return
    with contextlib.redirect_stdout(into), contextlib.redirect_stderr(into):
        yield


# --- results -----------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    """CPU model (from /proc/cpuinfo), cores, Python, platform and the date (UTC)."""
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "load_average_end": _load(),
    }


def _load() -> list[float] | None:
    """The 1, 5 and 15-minute load averages, a measure of how busy the shared machine was."""
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except OSError:
        return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def summarize(raw: dict[str, Any], sizes: Sequence[int], *, seconds: float) -> dict[str, Any]:
    """Our report from pytest-benchmark's JSON: per operation, per size, then slope and ratio."""
    ops: dict[str, dict[str, Any]] = {}
    for bench in raw["benchmarks"]:
        info, stats = bench["extra_info"], bench["stats"]
        op = ops.setdefault(info["op"], {"label": info["label"], "results": []})
        op["results"].append(_row(bench["params"]["size"], info["messages"], stats))
    for op in ops.values():
        op["results"].sort(key=lambda row: row["size"])
        op["slope"] = slope([r["messages"] for r in op["results"]], [r["median_s"] for r in op["results"]])
        op["ratio"] = op["results"][-1]["median_s"] / op["results"][0]["median_s"]
    results = {
        "machine": machine(),
        "pytest_benchmark": raw.get("version"),
        "trace": TRACE.name,
        "sizes": list(sizes),
        "seconds": round(seconds, 1),
        "note": NOISE_NOTE,
        "ops": ops,
    }
    results["target"] = target(ops)
    return results


def _row(size: int, messages: int, stats: dict[str, Any]) -> dict[str, Any]:
    return {
        "size": size,
        "messages": messages,
        "median_s": stats["median"],
        "min_s": stats["min"],
        "iqr_s": stats["iqr"],
        "rounds": stats["rounds"],
        "iterations": stats["iterations"],
        "us_per_message": stats["median"] / messages * 1e6,
    }


def slope(messages: Sequence[float], seconds: Sequence[float]) -> float | None:
    """Slope of log(seconds) against log(messages), least squares; None with fewer than 2 sizes."""
    import numpy as np

    if len(set(messages)) < 2:
        return None
    return float(np.polyfit(np.log(messages), np.log(seconds), 1)[0])


def target(ops: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The issue's target: `TARGET_OP` on a `TARGET_MESSAGES`-message history under `TARGET_SECONDS`."""
    cold, warm = _at(ops.get(TARGET_OP), TARGET_MESSAGES), _at(ops.get("compact_warm"), TARGET_MESSAGES)
    return {
        "operation": TARGET_OP,
        "size": TARGET_MESSAGES,
        "limit_s": TARGET_SECONDS,
        "measured": cold is not None,
        "median_s": None if cold is None else cold["median_s"],
        "min_s": None if cold is None else cold["min_s"],
        "met": None if cold is None else cold["median_s"] < TARGET_SECONDS,
        "warm_median_s": None if warm is None else warm["median_s"],
        "warm_met": None if warm is None else warm["median_s"] < TARGET_SECONDS,
    }


def _at(op: dict[str, Any] | None, size: int) -> dict[str, Any] | None:
    return next((r for r in op["results"] if r["size"] == size), None) if op else None


# --- reports -----------------------------------------------------------------------------------


def fmt_time(seconds: float) -> str:
    """``0.0000123`` -> ``"12.3 µs"``: three significant figures, unit from ns to s."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{_sig3(seconds / scale)} {unit}"
    return f"{_sig3(seconds / 1e-9)} ns"


def _sig3(value: float) -> str:
    digits = max(0, 2 - math.floor(math.log10(value))) if value > 0 else 0
    return f"{value:.{digits}f}"


def markdown(results: dict[str, Any]) -> str:
    """``speed.md``: header, target verdict, time and per-message tables, the ledger paragraph."""
    lines = _header(results) + _verdict(results) + _tables(results) + _ledger(results)
    lines += ["", f"Full run: {results['seconds']:.0f} s.", ""]
    return "\n".join(lines)


def _header(results: dict[str, Any]) -> list[str]:
    m = results["machine"]
    first = next(iter(results["ops"].values()))["results"]
    actual = ", ".join(f"{r['size']:,} → {r['messages']:,}" for r in first)
    return [
        "# Speed of the reference compactor (no model calls)",
        "",
        f"pytest-benchmark {results['pytest_benchmark']} (`benchmarks/test_speed.py`, run by "
        f"`compaction-suite bench speed`) on {m['date'][:10]}: {m['cpu']}, {m['cores']} cores, "
        f"{m['implementation']} {m['python']}, {m['platform']}{_loads(m)}. Times are the median of each bench's rounds, "
        + ("in CPU time of the benchmarking process (`time.process_time`: waiting for a core of the shared machine left "
           "out, the garbage collector's work in). " if results.get("clock", "wall") == "cpu" else "in wall-clock time. ")
        + f"Histories are `compaction_suite.benchmarks.histories.build(n)`: the shipped trace `{results['trace']}` tiled to at least "
        f"n messages, cut between rounds (requested → actual messages: {actual}). "
        f"Per-round benches time one call after a round was appended to an n-message history the ledger had "
        f"already seen. Each size runs with only its own history alive, and garbage collection stays on, as "
        f"in an agent process. **{NOISE_NOTE}**",
    ]


def _loads(m: dict[str, Any]) -> str:
    start, end = m.get("load_average_start"), m.get("load_average_end")
    if not start or not end:
        return ""
    return f"; 1-minute load average {start[0]:.1f} at the start, {end[0]:.1f} at the end"


def _verdict(results: dict[str, Any]) -> list[str]:
    t = results["target"]
    label = results["ops"].get(TARGET_OP, {}).get("label", TARGET_OP)
    goal = f"compacting a {t['size']:,}-message history (no model call) in under {fmt_time(t['limit_s'])}"
    if not t["measured"]:
        return ["", "## Target", "", f"Not measured in this run ({goal} needs size {t['size']:,})."]
    verdict = "**Met**" if t["met"] else f"**Not met** (by {fmt_time(t['median_s'] - t['limit_s'])})"
    warm = (
        f" {'**Met**' if t['warm_met'] else '**Not met**'} in the agent-loop case, where the compactor saw the "
        f"history one round earlier and validates and counts only the new round (SPEC TOK-4): median "
        f"{fmt_time(t['warm_median_s'])}." if t["warm_median_s"] is not None else ""
    )
    return [
        "",
        "## Target",
        "",
        f"{verdict} for a fresh compactor, whose first call validates and counts the whole history: {goal}. "
        f"`{label}`: median {fmt_time(t['median_s'])} (min {fmt_time(t['min_s'])}) "
        f"against {fmt_time(t['limit_s'])}.{warm}",
        "",
        *_linearity(results),
    ]


def _linearity(results: dict[str, Any]) -> list[str]:
    """Issue 23's second target: every strategy linear, its slope at most `LINEAR_SLOPE`."""
    ops = [results["ops"][key] for key in STRATEGY_OPS if key in results["ops"] and results["ops"][key]["slope"] is not None]
    if not ops or len(results["sizes"]) < 2:
        return ["Linearity (every strategy's slope at most 1.05): not measured (needs two sizes or more)."]
    over = [op for op in ops if op["slope"] > LINEAR_SLOPE]
    verdict = "**Met**" if not over else "**Not met**"
    slopes = ", ".join(f"`{op['label']}` {op['slope']:.2f}" for op in ops)
    return [f"{verdict}: every strategy linear, its slope at most {LINEAR_SLOPE} (issue 23). Slopes: {slopes}."
            + (f" Over: {', '.join(op['label'] for op in over)}." if over else "")]


def _tables(results: dict[str, Any]) -> list[str]:
    sizes = results["sizes"]
    head = "| operation | " + " | ".join(f"{n:,}" for n in sizes)
    rule = "|---|" + "---:|" * len(sizes)
    time_rows, message_rows = [], []
    for op in results["ops"].values():
        by_size = {r["size"]: r for r in op["results"]}
        cells = [fmt_time(by_size[n]["median_s"]) if n in by_size else "" for n in sizes]
        per = [f"{by_size[n]['us_per_message']:.3g}" if n in by_size else "" for n in sizes]
        shown = "n/a" if op["slope"] is None else f"{op['slope']:.2f}"
        time_rows.append(f"| `{op['label']}` | " + " | ".join(cells) + f" | {shown} | {op['ratio']:.3g}× |")
        message_rows.append(f"| `{op['label']}` | " + " | ".join(per) + " |")
    return [
        "",
        "## Median time",
        "",
        f"Slope: of log(time) against log(messages), fitted over the {len(sizes)} sizes; about 1.0 is linear, "
        "about 0 constant, 2 quadratic. Ratio: median at the largest size over median at the smallest. "
        + _slope_range(results),
        "",
        head + " | slope | largest/smallest |",
        rule + "---:|---:|",
        *time_rows,
        "",
        "## Microseconds per message",
        "",
        head + " |",
        rule,
        *message_rows,
    ]


def _slope_range(results: dict[str, Any]) -> str:
    """One sentence: the range of slopes of the operations that walk the whole history."""
    slopes = [op["slope"] for key, op in results["ops"].items() if key not in LEDGER_OPS and op["slope"] is not None]
    if not slopes:
        return ""
    return (f"The operations that walk the whole history have slopes {min(slopes):.2f} .. {max(slopes):.2f} "
            "(per-message times are in the second table).")


def _ledger(results: dict[str, Any]) -> list[str]:
    ops = results["ops"]
    if not all(key in ops for key in (*LEDGER_OPS, "estimate_from_scratch")):
        return []
    ledger, check, scratch = ops["ledger_update"], ops["trigger_check"], ops["estimate_from_scratch"]
    big = check["results"][-1]
    from_scratch = _at(scratch, big["size"])
    if from_scratch is None:
        return []
    speedup = from_scratch["median_s"] / big["median_s"]
    lines = ["", "## The per-round trigger check (SPEC TOK-4)", ""]
    lines.append(
        f"`TokenLedger.update` after one new round takes {fmt_time(ledger['results'][0]['median_s'])} at "
        f"{ledger['results'][0]['size']:,} messages and {fmt_time(ledger['results'][-1]['median_s'])} at "
        f"{ledger['results'][-1]['size']:,}: ratio {ledger['ratio']:.3g} while the history grew "
        f"{_growth(ledger):.3g}× (about 1 means constant; the estimate from scratch has ratio "
        f"{scratch['ratio']:.3g}). The whole "
        f"per-round check, `Compactor.compact` with a trigger that does not fire, has ratio {check['ratio']:.3g} "
        f"and slope {_slope(check)}: it validates only the new round (`RoundLog`), counts it in the ledger and "
        f"returns a copy of the list (the one step that grows with the history). At {big['size']:,} messages it takes "
        f"{fmt_time(big['median_s'])} against {fmt_time(from_scratch['median_s'])} for "
        f"`CharsPerFour().estimate` from scratch on the same history: {_times(speedup)}."
    )
    return lines


def _growth(op: dict[str, Any]) -> float:
    return op["results"][-1]["messages"] / op["results"][0]["messages"]


def _times(speedup: float) -> str:
    """``2.0`` -> ``"2× faster"``, ``0.5`` -> ``"2× slower"``."""
    return f"{speedup:.3g}× faster" if speedup >= 1 else f"{1 / speedup:.3g}× slower"


def _slope(op: dict[str, Any]) -> str:
    return "n/a" if op["slope"] is None else f"{op['slope']:.2f}"


def plot(results: dict[str, Any], path: Path) -> None:
    """Median time against messages, log-log, one line per operation, the 100 ms target dotted."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(12, 6.5))
    palette = plt.get_cmap("tab20")
    colors = [palette(i) for i in range(palette.N)]
    for index, (key, op) in enumerate(results["ops"].items()):
        x = [r["messages"] for r in op["results"]]
        y = [r["median_s"] for r in op["results"]]
        bold = key == TARGET_OP
        ax.plot(x, y, "-" if index % 2 == 0 or bold else "--", marker="osD^v<>pXh*P"[index % 12], color=colors[(2 * index) % 20 + index // 10],
                linewidth=2.6 if bold else 1.4, label=f"{op['label']} (slope {_slope(op)})", zorder=3 if bold else 2)
    _guides(ax, results)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("messages in the history")
    ax.set_ylabel("median time per call (s)")
    ax.grid(which="both", alpha=0.3)
    m = results["machine"]
    ax.set_title(f"Reference compactor, no model calls: time vs history size\n{m['cpu']}, {m['cores']} cores, "
                 f"Python {m['python']}, {m['date'][:10]} (shared machine: compare lines, not runs)", fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _guides(ax: Any, results: dict[str, Any]) -> None:
    """The 100 ms target as a dotted line, and a grey slope-1 line through the smallest split_rounds point."""
    ax.axhline(TARGET_SECONDS, color="red", linestyle=":", linewidth=1.2, label="100 ms target (compact at 100,000)")
    base = results["ops"].get("split_rounds", next(iter(results["ops"].values())))["results"]
    x0, y0 = base[0]["messages"], base[0]["median_s"]
    x1 = base[-1]["messages"]
    ax.plot([x0, x1], [y0 / 3, y0 / 3 * x1 / x0], color="grey", linewidth=5, alpha=0.25,
            label="slope 1 (linear), for reference")
