"""What compaction saves and what it forgets, on recorded traces (benchmarks issue: cost reduction).

Every compactor of `compaction_suite.benchmarks.lineup` (or any TARGET of the plug-in contract) replays every
trace through `compaction_suite.benchmarks.replay`; summarizing strategies talk to the suite's summarizer TEST
DOUBLE (`compaction_suite.conformance.summarizer_server`), which answers with real o200k token ``usage`` but a
short summary that never repeats an identifier. So what a summary keeps here is what the
compactor kept itself (retention is a lower bound for a real model), and the summarizer's
output cost is lower than a real model's 300-token summary would be.

``run`` writes ``replay.json`` (every run's figures and per-call curves), ``replay.md`` (the
tables and the verdict on the issue's 60% target) and two plots: ``replay-context.png``
(context size per model call, each strategy against no compaction) and
``replay-retention.png`` (entity ids and planted facts still in context, per call).
"""

from __future__ import annotations

import datetime
import json
import platform
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from compaction_suite.benchmarks.bill import add_costs, cost_section, probes_section
from compaction_suite.benchmarks.jobs import Job, RealSummarizer, run_all
from compaction_suite.benchmarks.lineup import BASELINE, HYBRID, LINEUP
from compaction_suite.benchmarks.prices import DEFAULT_PRICINGS, Pricing
from compaction_suite.benchmarks.real_summaries import check_replayable, describe_bounds, summary_bounds
from compaction_suite.benchmarks.replay import ASSISTANT_KINDS, Run, worst
from compaction_suite.benchmarks.views import View
from compaction_suite.conformance.entities import CODING_AGENT_TASK_LISTS, IdRule, TaskListTools
from compaction_suite.conformance.formats import CHAT
from compaction_suite.conformance.settings import Settings

TRACES = Path(__file__).resolve().parent.parent / "cassettes" / "traces"
TARGET_REDUCTION = 0.60
CEILING_SHARE = 0.80
"""The hybrid (STRAT-11) should reach this share of the K=2 ceiling's cut on every trace."""
PHYSICAL = "physical limit"


def shipped_traces() -> list[Path]:
    """The project's recorded traces (cassettes/traces/*.jsonl)."""
    return sorted(TRACES.glob("*.jsonl"))


def load_traces(paths: Sequence[Path], kind: str = "auto") -> list[tuple[dict[str, Any], Any]]:
    """(header, history) of each trace in ``paths``, through the one parser of trace files
    (`compaction_suite.benchmarks.traces.kinds`; ``kind`` as its `load` takes it): a trace
    (``.jsonl``, FORMAT.md), a SWE-agent ``.traj``, a tau-bench results file (``.json``, one trace
    per record), a Codex rollout or a Claude Code session log (in their own wire formats, named by
    ``header["wire_format"]``)."""
    from compaction_suite.benchmarks.traces.kinds import load

    return [loaded for path in paths for loaded in load(path, kind)]


def wire_format(header: dict[str, Any]) -> str:
    """The wire format of a loaded trace's history (chat-completions unless its header says otherwise)."""
    return str(header.get("wire_format") or CHAT)


def run(
    out_dir: Path,
    traces: Sequence[Path] | None = None,
    compactors: dict[str, Callable[[Settings], Any]] | None = None,
    *,
    progress: bool = True,
    settings_changes: dict[str, Any] | None = None,
    id_rule: IdRule | None = None,
    task_lists: TaskListTools = CODING_AGENT_TASK_LISTS,
    ceiling_rounds: Sequence[int] = (2,),
    trace_kind: str = "auto",
    pricings: Sequence[Pricing] = DEFAULT_PRICINGS,
    summarizer: RealSummarizer | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    max_calls: int | None = None,
) -> dict[str, Any]:
    """Replay every trace through every compactor and write the reports to ``out_dir``.

    ``settings_changes`` go into the `Settings` every factory gets (a target's thresholds);
    ``id_rule`` and ``task_lists`` say what the retention figures track; ``ceiling_rounds``
    the kept-round counts K of the ceiling columns (`replay.ceilings`, `ceiling.Ideal`);
    ``trace_kind`` how the trace files are read (`load_traces`); ``pricings`` the bills every
    run is priced in (`prices.pricings`); ``summarizer`` a real endpoint instead of the test
    double (`jobs.RealSummarizer`); ``jobs`` and ``scheduler`` where the traces replay
    (`jobs.run_all`: the results are the same); ``max_calls`` keeps each trace's first model
    calls only. Each trace replays in its own wire format; a compactor of another format gets
    it through the faithful conversion only (`replay.replay`).
    """
    compactors = {BASELINE: LINEUP[BASELINE], **(compactors or LINEUP)}
    loaded = [first_calls(t, max_calls) for t in load_traces(traces or shipped_traces(), trace_kind)]
    check_replayable(summarizer, [h["id"] for h, _ in loaded], settings_changes)
    sizes = [sum(r.kind in ASSISTANT_KINDS for r in View(wire_format(h)).rounds(m)) * len(compactors) for h, m in loaded]
    job = Job(compactors, dict(settings_changes or {}), id_rule, task_lists, tuple(ceiling_rounds), tuple(pricings), summarizer)
    with _bar(sum(sizes), progress) as bar:
        done = run_all(loaded, job, jobs=jobs, scheduler=scheduler, done=lambda i: bar.update(sizes[i]))
    runs = [r for result in done for r in result.runs]
    limits = {h["id"]: result.token_ceilings for (h, _), result in zip(loaded, done)}
    cache_limits = {h["id"]: result.cache_ceilings for (h, _), result in zip(loaded, done)}
    results = _results(runs, loaded, limits)
    add_costs(results, cache_limits, pricings, summarizer)
    if summarizer is not None:
        bounds = summary_bounds(summarizer, [h["id"] for h, _ in loaded], settings_changes or {})
        results["real_summarizer"]["max_tokens"] = bounds
        results["summarizer"] += describe_bounds(bounds)
    write(out_dir, results, runs)
    return results


def first_calls(loaded: tuple[dict[str, Any], Any], max_calls: int | None) -> tuple[dict[str, Any], Any]:
    """The trace up to the answer of its ``max_calls``-th model call (whole rounds), or all of it."""
    header, history = loaded
    if max_calls is None:
        return loaded
    view = View(wire_format(header))
    kept, calls = [], 0
    for round_ in view.rounds(history):
        if round_.kind in ASSISTANT_KINDS:
            if calls == max_calls:
                break
            calls += 1
        kept += round_.units
    return {**header, "id": f"{header['id']} (first {max_calls} calls)"}, view.history(kept)


def _bar(total: int, show: bool) -> Any:
    if not show:
        return nullcontext(_Silent())
    import click

    return click.progressbar(length=total, label="replaying traces", show_eta=True, show_percent=True)


class _Silent:
    def update(self, n: int) -> None:
        pass


def _results(
    runs: list[Run], loaded: list[tuple[dict[str, Any], list[dict]]], limits: dict[str, dict[str, int]]
) -> dict[str, Any]:
    summaries = [r.summary() for r in runs]
    baseline = {s["trace"]: s for s in summaries if s["compactor"] == BASELINE}
    for s in summaries:
        base = baseline[s["trace"]]
        for key, total in (("input_reduction", "cumulative_input_tokens"), ("cost_reduction_no_cache", "cost_usd_no_cache"),
                           ("cost_reduction_with_cache", "cost_usd_with_cache")):
            s[key] = None if s["not_comparable"] else 1 - s[total] / base[total]  # nothing measured: n/a
    traces = []
    for header, history in loaded:
        base = baseline[header["id"]]["cumulative_input_tokens"]
        cuts = {name: 1 - tokens / base for name, tokens in limits[header["id"]].items()}
        traces.append({"id": header["id"], "wire_format": wire_format(header), "messages": len(View(wire_format(header)).units(history)),
                       "source": header["source"], "ceiling_cuts": cuts})
    return {
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "date": datetime.date.today().isoformat(),
        "summarizer": "compaction-suite summarizer TEST DOUBLE (deterministic mode; real o200k usage)",
        "traces": traces,
        "ceilings": _ceilings(summaries, limits),
        "runs": summaries,
        "strategies": _by_strategy(summaries, traces),
    }


def _total(key: str, group: list[dict[str, Any]]) -> float:
    return sum(s[key] for s in group)


def _ceilings(summaries: list[dict[str, Any]], limits: dict[str, dict[str, int]]) -> list[dict[str, Any]]:
    """One row per ceiling over all traces: its cumulative input tokens and cut."""
    base = sum(s["cumulative_input_tokens"] for s in summaries if s["compactor"] == BASELINE)
    names = next(iter(limits.values()), {})
    rows = []
    for name in names:
        tokens = sum(limit[name] for limit in limits.values())
        rows.append({"ceiling": name, "cumulative_input_tokens": tokens, "input_reduction": 1 - tokens / base})
    return rows


def _by_strategy(summaries: list[dict[str, Any]], traces: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per compactor over the traces where every compaction point was comparable (a run
    with a point of no faithful mapping is counted, never folded in): totals, worst retention, the
    60% target, the ceilings. A row with no comparable run reads n/a."""
    rows = []
    ceiling_cut = {t["id"]: t["ceiling_cuts"] for t in traces}
    ceiling_names: dict[str, float] = next(iter(ceiling_cut.values()), {})
    for name in dict.fromkeys(s["compactor"] for s in summaries):
        everything = [s for s in summaries if s["compactor"] == name]
        mine = [s for s in everything if not s["not_comparable"]]
        measured = {s["trace"] for s in mine}
        base = [s for s in summaries if s["compactor"] == BASELINE and s["trace"] in measured]
        row = {
            "compactor": name,
            "compactor_format": everything[0]["compactor_format"],
            "runs": len(everything),
            "runs_not_comparable": len(everything) - len(mine),
            "points_not_comparable": _total("not_comparable", everything),
            "compactions": _total("compactions", mine) if mine else None,
            "cumulative_input_tokens": _total("cumulative_input_tokens", mine) if mine else None,
            "input_reduction": _cut("cumulative_input_tokens", mine, base),
            "worst_trace_input_reduction": min((s["input_reduction"] for s in mine), default=None),
            "peak_context_tokens": max((s["peak_context_tokens"] for s in mine), default=None),
            "summarizer_tokens": _total("summarizer_prompt_tokens", mine) + _total("summarizer_completion_tokens", mine),
            "cost_usd_no_cache": _total("cost_usd_no_cache", mine) if mine else None,
            "cost_usd_with_cache": _total("cost_usd_with_cache", mine) if mine else None,
            "cost_reduction_with_cache": _cut("cost_usd_with_cache", mine, base),
            "min_entity_id_retention": worst(s["min_entity_id_retention"] for s in mine),
            "entity_ids_tracked": _total("entity_ids_tracked", mine),
            "task_list_always_kept": worst(s["task_list_always_kept"] for s in mine),
            "min_fact_retention": worst(s["min_fact_retention"] for s in mine),
            "min_probe_retention": worst(s["min_probe_retention"] for s in mine),
            "violations": sum(len(s["violations"]) for s in everything),  # a broken clause counts, measured or not (SPEC XFMT-6)
            "errors": sum(len(s["errors"]) for s in everything),
            "worst_trace_share_of_ceiling": {
                ceiling: min((_share_of(s["input_reduction"], ceiling_cut[s["trace"]][ceiling]) for s in mine), default=None)
                for ceiling in ceiling_names
            },
        }
        row["meets_target"] = (
            bool(mine) and not row["runs_not_comparable"]
            and row["worst_trace_input_reduction"] >= TARGET_REDUCTION
            and row["min_entity_id_retention"] in (None, 1.0)
            and row["task_list_always_kept"] is not False
            and not row["violations"] and not row["errors"]
        )  # fmt: skip
        rows.append(row)
    return rows


def _cut(key: str, mine: list[dict[str, Any]], base: list[dict[str, Any]]) -> float | None:
    """1 - mine/base over the same traces, or None when nothing was measured."""
    return 1 - _total(key, mine) / _total(key, base) if mine else None


def _share_of(cut: float, ceiling: float) -> float:
    """A strategy's cut as a share of a ceiling's cut (1.0 when the ceiling cuts nothing)."""
    return cut / ceiling if ceiling > 0 else 1.0


def write(out_dir: Path, results: dict[str, Any], runs: list[Run]) -> None:
    """replay.json, replay.md and the two plots."""
    out_dir.mkdir(parents=True, exist_ok=True)
    curves = [{"trace": r.trace, "compactor": r.compactor, "calls": _columns(r)} for r in runs]
    (out_dir / "replay.json").write_text(json.dumps(results | {"curves": curves}, indent=1) + "\n", encoding="utf-8")
    (out_dir / "replay.md").write_text(markdown(results), encoding="utf-8")
    longest = max(results["traces"], key=lambda t: t["messages"])["id"]  # the plots show one trace
    shown = [r for r in runs if r.trace == longest and r.comparable]  # a run not comparable has no curve
    plot_context(out_dir / "replay-context.png", shown)
    plot_retention(out_dir / "replay-retention.png", shown)


def _columns(run: Run) -> dict[str, list[Any]]:
    """The run's calls as one list per field (a curve per field), ratios to 4 places; each
    pricing's cache use as two curves, ``cache_read[<pricing>]`` and ``cache_written[<pricing>]``."""
    fields = [f for f in vars(run.calls[0]) if f != "cache"] if run.calls else []
    columns = {f: [round(v, 4) if isinstance(v, float) else v for v in (getattr(c, f) for c in run.calls)] for f in fields}
    for label in run.calls[0].cache if run.calls else ():
        columns[f"cache_read[{label}]"] = [c.cache[label].read for c in run.calls]
        columns[f"cache_written[{label}]"] = [c.cache[label].written for c in run.calls]
    return columns


def _pct(x: float | None) -> str:
    if x is None:
        return "n/a"
    return f"{x:+.1%}" if x < 0 else f"{x:.1%}"


def _n(x: int | None) -> str:
    return "n/a" if x is None else f"{x:,}"


def _usd(x: float | None) -> str:
    return "n/a" if x is None else f"${x:.2f}"


def _kept(x: float | None) -> str:
    """A retention share, or ``n/a`` when the traces carried nothing of that kind."""
    return "n/a" if x is None else f"{x:.0%}"


def _task(kept: bool | None) -> str:
    return "n/a" if kept is None else ("kept" if kept else "lost")


def headline(results: dict[str, Any]) -> str:
    """The table the README shows: one row per compactor, all traces together, then the ceilings.

    ``of <ceiling>`` is the strategy's cut as a share of that ceiling's cut on its worst trace.
    """
    names = [c["ceiling"] for c in results["ceilings"] if c["ceiling"] != PHYSICAL]
    lines = [
        "| compactor | compactions | input tokens | cut | worst trace cut | "
        + "".join(f"of {n} (worst trace) | " for n in names)
        + "peak context | ids kept (min) | task list | facts kept (min) | probes kept (min) | violations | errors |",
        "|---|---|---|---|---|" + "---|" * len(names) + "---|---|---|---|---|---|---|",
    ]
    for r in results["strategies"]:
        shares = "".join(f"{_pct(r['worst_trace_share_of_ceiling'][n])} | " for n in names)
        left_out = r.get("runs_not_comparable")
        label = r["compactor"] + (f" ({left_out} of {r['runs']} traces not comparable, left out)" if left_out else "")
        lines.append(
            f"| {label} | {_n(r['compactions'])} | {_n(r['cumulative_input_tokens'])} | {_pct(r['input_reduction'])} "
            f"| {_pct(r['worst_trace_input_reduction'])} | {shares}{_n(r['peak_context_tokens'])} | {_kept(r['min_entity_id_retention'])} "
            f"| {_task(r['task_list_always_kept'])} | {_kept(r['min_fact_retention'])} | {_kept(r['min_probe_retention'])} | {r['violations']} | {r['errors']} |"
        )
    empty = " | ".join(["n/a"] * (len(names) + 8))
    for c in results["ceilings"]:
        worst = min(t["ceiling_cuts"][c["ceiling"]] for t in results["traces"])
        lines.append(
            f"| {_ceiling_label(c['ceiling'])} | n/a | {c['cumulative_input_tokens']:,} | {_pct(c['input_reduction'])} "
            f"| {_pct(worst)} | {empty} |"
        )
    return "\n".join(lines + _notes(results, names)) + "\n"


def _notes(results: dict[str, Any], names: list[str]) -> list[str]:
    """What the table's figures cannot say themselves: errors (a compactor that raised was run on
    uncompacted contexts there), a share of a ceiling over 100%."""
    notes = []
    if any(r["errors"] for r in results["strategies"]):
        notes.append("*errors*: compact raised there, so the context went on uncompacted: a crash, not a saving.")
    if any((r["worst_trace_share_of_ceiling"][n] or 0) > 1 for r in results["strategies"] for n in names):
        notes.append("*of ceiling* over 100%: the compactor sent less than the ideal compactor (system messages, a 150-token "
                     "summary and the last K rounds), e.g. fewer rounds or a shorter summary; the ceiling is a yardstick, not a bound.")  # fmt: skip
    return ["", *notes] if notes else []


def _ceiling_label(name: str) -> str:
    if name == PHYSICAL:
        return "*physical limit (system messages alone)*"
    return f"*{name} (ideal: system + 150-token summary + last {name.split('=')[1]} rounds, no summarizer cost)*"


def verdict(results: dict[str, Any]) -> str:
    """The issue's targets, met or not, with the figures: the 60% cut, and the hybrid against its ceiling."""
    met = [r["compactor"] for r in results["strategies"] if r["meets_target"]]
    if not met:
        lines = [
            f"**Target not met**: no compactor of this run cut cumulative input tokens by at least "
            f"{TARGET_REDUCTION:.0%} on every trace while keeping every entity id and the task list.\n"
        ]
    else:
        lines = [
            f"**Target met** (at least {TARGET_REDUCTION:.0%} fewer cumulative input tokens on every trace, every entity id "
            f"and the whole task list in context at every call where the trace has them, no clause violated) by: "
            f"{'; '.join(met)}.\n"
        ]
    return "\n".join(lines + [ceiling_verdict(results)])


def ceiling_verdict(results: dict[str, Any]) -> str:
    """Whether the hybrid (STRAT-11) reached 80% of the K=2 ceiling's cut on every trace, keeping
    every entity id and the task list at every call (issue 12, point 4)."""
    hybrid = next((r for r in results["strategies"] if r["compactor"].startswith(HYBRID)), None)
    share = None if hybrid is None else hybrid["worst_trace_share_of_ceiling"].get("ceiling K=2")
    if hybrid is None or share is None:
        return "Ceiling target: not measured (the run has no hybrid strategy or no K=2 ceiling).\n"
    ids, tasks = hybrid["min_entity_id_retention"], hybrid["task_list_always_kept"]
    left_out = hybrid.get("runs_not_comparable", 0)
    met = share >= CEILING_SHARE and ids in (None, 1.0) and tasks is not False and not hybrid["violations"] and not left_out
    return (
        f"**Ceiling target {'met' if met else 'not met'}**: \"{hybrid['compactor']}\" reaches {share:.1%} of the K=2 "
        f"ceiling's cut on its worst trace (target {CEILING_SHARE:.0%}); entity ids kept (min) {_kept(ids)} of "
        f"{hybrid['entity_ids_tracked']} tracked, task list {_task(tasks)}, {hybrid['violations']} clause violations"
        + (f"; {left_out} traces not comparable, left out.\n" if left_out else ".\n")
    )


def markdown(results: dict[str, Any]) -> str:
    """The whole report."""
    traces = ", ".join(f"`{t['id']}` ({t['messages']} messages, {t['wire_format']})" for t in results["traces"])
    double = "TEST DOUBLE" in results["summarizer"]
    parts = [
        "# Cost reduction on recorded traces\n",
        f"Traces: {traces}. Run on {results['date']}, Python {results['machine']['python']}. Input tokens are exact "
        "(o200k_base, chat overhead included) for every model call of the replayed agent loop; the cut is against "
        f"no compaction on the same trace. Priced for: {'; '.join(p['label'] + ' (summarizer ' + p['summarizer']['name'] + ')' for p in results['pricings'])} "
        "(prices and cache rules under \"Cost per provider\"). Summaries come from the "
        + (
            f"{results['summarizer']}: it writes a few words and never repeats an identifier, so ids and the task list "
            "survive only when the compactor keeps them itself, and planted facts (`Remember: ...`) survive only in "
            "messages kept verbatim.\n"
            if double
            else f"{results['summarizer']}.\n"
        ),
        "## Wire formats\n",
        formats_section(results),
        "## All traces\n",
        headline(results),
        verdict(results),
        "## Cost per provider\n",
        "Each call is billed by its provider's prompt-cache rules against what the previous call left in the cache "
        "(benchmarks/cache.py, SPEC CACHE-1..4): OpenAI reads the longest shared prefix of 1,024 tokens or more, in "
        "steps of 128, and charges nothing to write it; Anthropic reads from the breakpoints (the end of the system "
        "messages, the end of the request, and any a compactor places) with its 20-block lookback, and bills writes "
        "at 1.25x input. Summarizer calls are billed without a cache. The cache-aware ceiling is the cheapest bill of "
        "the token ceiling's contexts when the ideal compactor may choose when to compact, its summarizer calls "
        "included (benchmarks/ceiling.py, SPEC CEIL-1..4).\n",
        cost_section(results),
        "## The prompt cache\n",
        _cache_note(results),
        "## What the agent still knows\n",
        probes_section(results),
        "## Per trace\n",
        _per_trace(results),
        "Plots: `replay-context.png` (context size per call on the longest trace) and `replay-retention.png` "
        "(entity ids and planted facts still in context, per call).\n",
    ]
    return "\n".join(parts)


def _cache_note(results: dict[str, Any]) -> str:
    measured = [r for r in results["strategies"] if r["compactor"] != BASELINE and r["input_reduction"] is not None and not r["runs_not_comparable"]]
    if not measured:
        return "n/a: no compactor was measured on every trace.\n"
    best = max(measured, key=lambda r: r["input_reduction"])
    base = next(r for r in results["strategies"] if r["compactor"] == BASELINE)
    lines = []
    for p in results["pricings"]:
        label = p["label"]
        b, c = base["costs"][label], best["costs"][label]
        raised = [r["compactor"] for r in measured if (r["costs"][label]["cut_with_cache"] or 0) < 0]
        lines.append(
            f"- {label}: without a cache the baseline costs {_usd(b['cost_usd_no_cache'])} and \"{best['compactor']}\" (the largest "
            f"token cut) cuts that by {_pct(c['cut_no_cache'])}; with the cache the baseline costs {_usd(b['cost_usd_with_cache'])} "
            f"and the same strategy's cut is {_pct(c['cut_with_cache'])}."
            + (f" With the cache, {len(raised)} of {len(measured)} strategies raise the bill." if raised else "")
        )
    return (
        "An append-only history reads its whole previous prompt from the provider's cache; a compaction rewrites what "
        "follows the system messages, so the next call pays full price (Anthropic: 1.25x) for it. Savings quoted in "
        "tokens overstate savings in money wherever the provider caches prompts:\n\n" + "\n".join(lines) + "\n"
    )


def _per_trace(results: dict[str, Any]) -> str:
    labels = [p["label"] for p in results["pricings"]]
    cost_heads = "".join(f"{label}: cost, no cache / cache | " for label in labels)
    lines = [
        f"| trace | compactor | calls | compactions | input tokens | cut | peak | {cost_heads}ids kept (min) | task list | facts kept (final) | probes kept (final) |",
        "|---|---|---|---|---|---|---|" + "---|" * len(labels) + "---|---|---|---|",
    ]
    blank = " |" * (len(labels) + 8)
    for t in results["traces"]:
        cuts = ", ".join(f"{name} {_pct(cut)}" for name, cut in t["ceiling_cuts"].items())
        best = ", ".join(
            f"cache-aware {key} {_usd(c['cache_aware']['cost_usd_with_cache'])} ({_pct(c['cache_aware']['cut_with_cache'])})"
            for key, c in t.get("cache_ceilings", {}).items()
        )
        lines.append(f"| {t['id']} | *ceilings: {cuts}; {best}* |{blank}")
    for s in results["runs"]:
        if s["not_comparable"]:
            lines.append(f"| {s['trace']} | {s['compactor']} | {s['model_calls']} | *not comparable at {s['not_comparable']} points* |" + " n/a |" * (len(labels) + 7))
            continue
        costs = "".join(f"{_usd(s['costs'][label]['cost_usd_no_cache'])} / {_usd(s['costs'][label]['cost_usd_with_cache'])} | " for label in labels)
        final = s["probes"].get("final") or {}
        probes = f"{min(final.values()):.0%}" if final else "n/a"
        lines.append(
            f"| {s['trace']} | {s['compactor']} | {s['model_calls']} | {s['compactions']} | {s['cumulative_input_tokens']:,} "
            f"| {_pct(s['input_reduction'])} | {s['peak_context_tokens']:,} | {costs}"
            f"{_kept(s['min_entity_id_retention'])} | {_task(s['task_list_always_kept'])} | {_kept(s['final_fact_retention'])} | {probes} |"
        )
    return "\n".join(lines) + "\n"


def formats_section(results: dict[str, Any]) -> str:
    """Each trace's wire format and each compactor's, and every (trace, compactor) pair that has a
    compaction point with no faithful mapping between the two: counted, with the first reason."""
    lines = [
        "Each trace replays in its own wire format; a compactor of another format gets every context through "
        "the faithful conversion only (benchmarks/across_formats.py). A compaction point where there is none "
        "(a reasoning item, a thinking block, a provider compaction item...) is *not comparable*: it is counted "
        "here, and that run's figures read n/a instead of entering any percentage. Its clause violations, "
        "judged in the compactor's own format (SPEC XFMT-6), still count in the violations column.\n",
        "| trace | format | messages or items |", "|---|---|---|",
        *(f"| {t['id']} | {t['wire_format']} | {t['messages']} |" for t in results["traces"]),
        "", "| compactor | format | traces not comparable | points not comparable |", "|---|---|---|---|",
        *(f"| {r['compactor']} | {r['compactor_format']} | {r['runs_not_comparable']} of {r['runs']} | {r['points_not_comparable']} |"
          for r in results["strategies"]),
    ]  # fmt: skip
    pairs = [s for s in results["runs"] if s["not_comparable"]]
    if pairs:
        lines += ["", "| trace | compactor | points not comparable | first reason |", "|---|---|---|---|"]
        lines += [f"| {s['trace']} | {s['compactor']} | {s['not_comparable']} of {s['model_calls'] - 1} | {s['not_comparable_reasons'][0]} |" for s in pairs]
    return "\n".join(lines) + "\n"


def _style(run: Run) -> dict[str, Any]:
    """The baseline in thick black, so both plots read the same way."""
    return {"color": "black", "linewidth": 2} if run.compactor == BASELINE else {"linewidth": 1}


def plot_context(path: Path, runs: list[Run]) -> None:
    """Input tokens of every model call, one line per compactor."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 5.5))
    for r in runs:
        ax.plot([c.iteration for c in r.calls], [c.input_tokens for c in r.calls], label=r.compactor, **_style(r))
    ax.set(xlabel="model call", ylabel="input tokens (o200k_base)", title=f"Context size per call: {runs[0].trace}")
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _nan(share: float | None) -> float:
    """A share to plot; nothing to measure yet (None) leaves a gap."""
    return float("nan") if share is None else share


def plot_retention(path: Path, runs: list[Run]) -> None:
    """Share of entity ids and of planted facts still in context, per call."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    for r in runs:
        x = [c.iteration for c in r.calls]
        axes[0].plot(x, [_nan(c.entity_ids) for c in r.calls], label=r.compactor, **_style(r))
        axes[1].plot(x, [_nan(c.facts) for c in r.calls], label=r.compactor, **_style(r))
    axes[0].set(ylabel="entity ids in context", title=f"What survives compaction: {runs[0].trace}")
    axes[1].set(xlabel="model call", ylabel="planted facts in context")
    for ax in axes:
        ax.set_ylim(-0.05, 1.05)
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
