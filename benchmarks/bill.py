"""The bill per provider, with and without the prompt cache, against both ceilings; what the agent still knows (issue 23).

`add_costs` adds to the replay's results, for each pricing (`prices.Pricing`): every run's and
every strategy's cost without and with the cache and their cuts against no compaction; the
ceilings priced (the token ceiling's schedule, compacting before every call, and the cache-aware
ceiling, `ceiling.Ideal.cheapest`); and whether the cache-aware strategy of that pricing (SPEC
STRAT-12) reached ``CACHE_CEILING_SHARE`` of the cache-aware ceiling's cut on each trace.
`cost_section` and `probes_section` are the report's tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .lineup import BASELINE, CACHE_AWARE
from .prices import Pricing
from .probes import KINDS

if TYPE_CHECKING:
    from .jobs import RealSummarizer

PLURAL = {"entity id": "entity ids", "file path": "file paths", "last error": "last errors", "task status": "task statuses", "constraint": "constraints"}
CACHE_CEILING_SHARE = 0.80
"""The cache-aware strategy should reach this share of the cache-aware ceiling's cost cut on every trace."""
NOTHING = 1e-9
"""A cut this small is no cut: the ceiling that never compacts and the baseline sum the same bill in
different orders, so their costs may differ in the last bits."""


def add_costs(results: dict[str, Any], cache_limits: dict[str, dict[str, Any]], pricings: Sequence[Pricing], summarizer: RealSummarizer | None) -> None:
    """Add the per-pricing figures to ``results`` (module docstring)."""
    labels = [p.label for p in pricings]
    results["pricings"] = [_describe(p) for p in pricings]
    results["agent_model"], results["summarizer_model"] = pricings[0].agent.name, pricings[0].summarizer.name
    if summarizer is not None:
        where = f"at {summarizer.base_url}" if summarizer.base_url else f"replayed offline from {summarizer.cassettes}"
        results["summarizer"] = f"real model {summarizer.model!r} {where}" + (f" (vcrpy cassettes in {summarizer.cassettes})" if summarizer.cassettes and summarizer.base_url else "")
        results["real_summarizer"] = {"model": summarizer.model}
    base = {s["trace"]: s for s in results["runs"] if s["compactor"] == BASELINE}
    for s in results["runs"]:
        for label in labels:
            mine, theirs = s["costs"][label], base[s["trace"]]["costs"][label]
            for key in ("no_cache", "with_cache"):
                mine[f"cut_{key}"] = None if s["not_comparable"] else 1 - mine[f"cost_usd_{key}"] / theirs[f"cost_usd_{key}"]
    for t in results["traces"]:
        t["cache_ceilings"] = cache_limits[t["id"]]
        for row in t["cache_ceilings"].values():
            trace_base = base[t["id"]]["costs"][row["pricing"]]
            for schedule in ("cache_aware", "every_call"):
                for key in ("no_cache", "with_cache"):
                    row[schedule][f"cut_{key}"] = _cut(row[schedule][f"cost_usd_{key}"], trace_base[f"cost_usd_{key}"])
    results["cache_ceilings"] = _ceiling_rows(results, labels)
    for row in results["strategies"]:
        row["costs"] = _strategy_costs(results, row["compactor"], labels)
    results["cache_aware_verdict"] = _verdict_rows(results, labels)


def _describe(p: Pricing) -> dict[str, Any]:
    def model(m: Any) -> dict[str, Any]:
        price = m.price
        write = price.input if price.cache_write is None else price.cache_write
        return {"name": m.name, "input": price.input, "cache_read": price.cached_input, "cache_write": write,
                "output": price.output, "min_cached_tokens": m.min_cached_tokens}  # fmt: skip

    return {"label": p.label, "provider": p.provider, "agent": model(p.agent), "summarizer": model(p.summarizer)}


def _cut(cost: float, base: float) -> float | None:
    return 1 - cost / base if base > 0 else None


def _ceiling_keys(results: dict[str, Any]) -> list[str]:
    return list(results["traces"][0]["cache_ceilings"]) if results["traces"] else []


def _ceiling_rows(results: dict[str, Any], labels: list[str]) -> dict[str, dict[str, Any]]:
    """Each pricing's ceilings over all traces: costs summed, cuts against the baseline's sum."""
    rows: dict[str, dict[str, Any]] = {}
    for key in _ceiling_keys(results):
        per_trace = [t["cache_ceilings"][key] for t in results["traces"]]
        label = per_trace[0]["pricing"]
        base = {k: sum(s["costs"][label][f"cost_usd_{k}"] for s in results["runs"] if s["compactor"] == BASELINE) for k in ("no_cache", "with_cache")}
        row: dict[str, Any] = {"pricing": label, "keep_rounds": per_trace[0]["keep_rounds"]}
        for schedule in ("cache_aware", "every_call"):
            row[schedule] = {}
            for k in ("no_cache", "with_cache"):
                total = sum(t[schedule][f"cost_usd_{k}"] for t in per_trace)
                row[schedule][f"cost_usd_{k}"], row[schedule][f"cut_{k}"] = total, _cut(total, base[k])
        row["cache_aware"]["compactions"] = sum(len(t["cache_aware"]["compactions"]) for t in per_trace)
        row["calls"] = sum(t["calls"] for t in per_trace)
        rows[key] = row
    return rows


def _strategy_costs(results: dict[str, Any], name: str, labels: list[str]) -> dict[str, dict[str, Any]]:
    """A strategy's bill per pricing over the traces it was measured on, and its cut as a share of
    each cache-aware ceiling's on its worst trace (traces whose ceiling cuts nothing left out)."""
    mine = [s for s in results["runs"] if s["compactor"] == name and not s["not_comparable"]]
    traces = {s["trace"] for s in mine}
    base = [s for s in results["runs"] if s["compactor"] == BASELINE and s["trace"] in traces]
    out: dict[str, dict[str, Any]] = {}
    for label in labels:
        row: dict[str, Any] = {}
        for k in ("no_cache", "with_cache"):
            total = sum(s["costs"][label][f"cost_usd_{k}"] for s in mine)
            row[f"cost_usd_{k}"] = total if mine else None
            row[f"cut_{k}"] = _cut(total, sum(s["costs"][label][f"cost_usd_{k}"] for s in base)) if mine else None
        row["worst_trace_share_of_cache_ceiling"] = {
            key: _worst_share(results, mine, label, key) for key in _ceiling_keys(results) if key.startswith(label + " ")
        }
        out[label] = row
    return out


def _worst_share(results: dict[str, Any], mine: list[dict[str, Any]], label: str, key: str) -> float | None:
    ceilings = {t["id"]: t["cache_ceilings"][key]["cache_aware"]["cut_with_cache"] for t in results["traces"]}
    shares = [s["costs"][label]["cut_with_cache"] / ceilings[s["trace"]] for s in mine if (ceilings[s["trace"]] or 0) > NOTHING]
    return min(shares) if shares else None


def _verdict_rows(results: dict[str, Any], labels: list[str]) -> list[dict[str, Any]]:
    """Per pricing and trace: the cache-aware strategy of that pricing against its cache-aware ceiling."""
    rows = []
    for label in labels:
        name = next((r["compactor"] for r in results["strategies"] if r["compactor"].startswith(f"{CACHE_AWARE} for {label} ")), None)
        if name is None:
            continue
        k = next(iter(key for key in _ceiling_keys(results) if key.startswith(label + " ")), None)
        if k is None:
            continue
        for s in (s for s in results["runs"] if s["compactor"] == name):
            trace = next(t for t in results["traces"] if t["id"] == s["trace"])
            ceiling = trace["cache_ceilings"][k]["cache_aware"]
            cut = s["costs"][label]["cut_with_cache"]
            ceiling_cut = ceiling["cut_with_cache"]
            kept = s["min_entity_id_retention"] in (None, 1.0) and s["task_list_always_kept"] is not False
            something = ceiling_cut is not None and ceiling_cut > NOTHING
            reached = cut is not None and ceiling_cut is not None and cut >= (CACHE_CEILING_SHARE * ceiling_cut if something else -NOTHING)
            rows.append({
                "pricing": label, "ceiling": k, "trace": s["trace"], "compactor": name,
                "ceiling_cut": ceiling_cut, "ceiling_compactions": len(ceiling["compactions"]), "cut": cut,
                "compactions": s["compactions"], "share": cut / ceiling_cut if cut is not None and something else None,
                "ids_and_tasks_kept": kept, "violations": len(s["violations"]),
                "met": bool(reached and kept and not s["violations"]),
            })  # fmt: skip
    return rows


# --- the report's sections -------------------------------------------------------------


def _pct(x: float | None) -> str:
    if x is None:
        return "n/a"
    return f"{x:+.1%}" if x <= -0.0005 else f"{max(x, 0.0) if x < 0 else x:.1%}"


def _usd(x: float | None) -> str:
    return "n/a" if x is None else f"${x:.2f}"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _bill(c: dict[str, Any]) -> list[str]:
    """Cost and cut, without then with the cache."""
    return [_usd(c["cost_usd_no_cache"]), _pct(c["cut_no_cache"]), _usd(c["cost_usd_with_cache"]), _pct(c["cut_with_cache"])]


def cost_section(results: dict[str, Any]) -> str:
    """Per pricing: every strategy's bill without and with the cache, both ceilings, then the
    cache-aware strategy against the cache-aware ceiling on each trace."""
    parts = []
    for p in results["pricings"]:
        label = p["label"]
        keys = [key for key in _ceiling_keys(results) if key.startswith(label + " ")]
        agent, summarizer = p["agent"], p["summarizer"]
        parts.append(
            f"### {label}\n\nAgent {agent['name']} (USD per million tokens: input ${agent['input']:g}, cache read "
            f"${agent['cache_read']:g}, cache write ${agent['cache_write']:g}, output ${agent['output']:g}; the cache takes "
            f"prefixes of {agent['min_cached_tokens']:,} tokens or more), summarizer {summarizer['name']} (input "
            f"${summarizer['input']:g}, output ${summarizer['output']:g}, no cache).\n"
        )
        lines = [
            _row(["compactor", "cost, no cache", "cut, no cache", "cost, cache", "cut, cache"]
                 + [f"of cache-aware ceiling {key.split(' ')[-1]} (worst trace)" for key in keys]),
            _row(["---"] * (5 + len(keys))),
        ]  # fmt: skip
        for r in results["strategies"]:
            c = r["costs"][label]
            shares = [_pct(c["worst_trace_share_of_cache_ceiling"].get(key)) for key in keys]
            lines.append(_row([r["compactor"], *_bill(c), *shares]))
        for key in keys:
            row, k = results["cache_ceilings"][key], key.split("=")[-1]
            every, best = row["every_call"], row["cache_aware"]
            lines.append(_row([f"*token ceiling K={k} (system + 150-token summary + last {k} rounds, compacting before every call)*", *_bill(every), *["n/a"] * len(keys)]))
            lines.append(_row([f"*cache-aware ceiling K={k} (the same contexts, compacting when cheapest: {best['compactions']} of {row['calls']} calls)*",
                               *_bill(best), *["n/a"] * len(keys)]))  # fmt: skip
        parts.append("\n".join(lines) + "\n")
    parts.append(cache_verdict(results))
    return "\n".join(parts)


def cache_verdict(results: dict[str, Any]) -> str:
    """Whether each pricing's cache-aware strategy reached 80% of the cache-aware ceiling's cut, per trace."""
    rows = results.get("cache_aware_verdict") or []
    if not rows:
        return "Cache-aware target: not measured (the run has no cache-aware strategy).\n"
    lines = [
        f"**The cache-aware strategy against the cache-aware ceiling** (target: at least {CACHE_CEILING_SHARE:.0%} of the "
        "ceiling's cost cut with the cache, every entity id and the task list kept, no clause violated; where the ceiling "
        "cuts nothing, never compacting is cheapest and the target is a cut of at least 0):\n",
        "| pricing | trace | ceiling cut (compactions) | strategy cut (compactions) | share | ids and task list | met |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['pricing']} | {r['trace']} | {_pct(r['ceiling_cut'])} ({r['ceiling_compactions']}) | {_pct(r['cut'])} ({r['compactions']}) "
            f"| {_pct(r['share'])} | {'kept' if r['ids_and_tasks_kept'] else 'lost'} | {'yes' if r['met'] else 'no'} |"
        )
    met = sum(r["met"] for r in rows)
    lines.append(f"\n{met} of {len(rows)} (pricing, trace) pairs meet the target. Over all traces together:\n")
    for label in dict.fromkeys(r["pricing"] for r in rows):
        name = next(r["compactor"] for r in rows if r["pricing"] == label)
        key = next(r["ceiling"] for r in rows if r["pricing"] == label)
        cut = next(x for x in results["strategies"] if x["compactor"] == name)["costs"][label]["cut_with_cache"]
        ceiling = results["cache_ceilings"][key]["cache_aware"]["cut_with_cache"]
        share = f"{cut / ceiling:.1%} of it" if cut is not None and ceiling is not None and ceiling > NOTHING else "n/a"
        lines.append(f"- {label}: the cache-aware ceiling cuts {_pct(ceiling)}, the cache-aware strategy {_pct(cut)} ({share}).")
    return "\n".join(lines) + "\n"


def probes_section(results: dict[str, Any]) -> str:
    """Per strategy and probe kind: the share of probes kept at the last call, and the smallest at any call."""
    tracked = dict.fromkeys(KINDS, 0)
    for s in results["runs"]:
        if s["compactor"] == BASELINE:
            for kind, n in (s["probes"].get("tracked") or {}).items():
                tracked[kind] += n
    kinds = [k for k in KINDS if tracked[k]]
    if not kinds:
        return "n/a: the traces introduced no probe.\n"
    lines = [
        "Probes are taken from each trace (benchmarks/probes.py, SPEC PROBE-1..3): "
        + ", ".join(f"{tracked[k]} {k if tracked[k] == 1 else PLURAL[k]}" for k in kinds)
        + ". A probe is kept when the context holds every one of its keys; each cell is the share kept at the last "
        "call, then the smallest share at any call, over all traces (the worst trace's).\n",
        "| compactor | " + " | ".join(kinds) + " | all probes (min) |",
        "|---|" + "---|" * (len(kinds) + 1),
    ]
    for r in results["strategies"]:
        runs = [s for s in results["runs"] if s["compactor"] == r["compactor"] and not s["not_comparable"]]
        cells = []
        for kind in kinds:
            final = [s["probes"]["final"][kind] for s in runs if kind in s["probes"].get("final", {})]
            low = [s["probes"]["min"][kind] for s in runs if kind in s["probes"].get("min", {})]
            cells.append(f"{min(final):.0%} / {min(low):.0%}" if final else "n/a")
        overall = [s["min_probe_retention"] for s in runs if s["min_probe_retention"] is not None]
        lines.append(f"| {r['compactor']} | " + " | ".join(cells) + f" | {min(overall):.0%} |" if overall else f"| {r['compactor']} | " + " | ".join(cells) + " | n/a |")
    return "\n".join(lines) + "\n"
