"""Replaying a failure from the report alone (SPEC Part A, "Reproduction").

Each failing clause in the JSON report carries a ``case``: the input ``messages``, the
``iteration``, the ``settings`` the test changed and the ``summarizer`` mode (a fault, a
fixed reply, or the deterministic summary). `replay` starts the suite's summarizer test
double in that mode, builds the target's compactor with those settings, calls ``compact``
once and judges the output for the structural clauses; for any other clause it shows the
input and the output side by side, as the failure did.

``python -m compaction_suite.conformance.reproduce REPORT.json CLAUSE [TARGET]`` prints what happened.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import oracle
from .assertions import render
from .settings import Settings, connected
from .summarizer_server import SummarizerServer
from .target import check_compactor, resolve


@dataclass
class Replayed:
    """One replayed call: the output (or the exception's text) and what the oracle found."""

    output: Any = None
    raised: str | None = None
    problems: dict[str, str] = field(default_factory=dict)
    summarizer_requests: int = 0


def case_of(report: dict[str, Any], clause_id: str) -> dict[str, Any]:
    """The case of ``clause_id``'s failure in a loaded report; raises KeyError when it has none."""
    case = report["clauses"].get(clause_id, {}).get("case")
    if not case:
        raise KeyError(f"{clause_id} has no failure to replay in this report")
    return case


def replay(case: dict[str, Any], target: str) -> Replayed:
    """Run ``case`` once against ``target`` (a TARGET string) and judge the output."""
    from .suite import call_compact

    resolved = resolve(target)
    with SummarizerServer() as server:
        server.set_mode(case.get("summarizer") or {})
        settings = connected(Settings().with_(**case.get("settings", {})), server.base_url)
        messages = case["messages"]
        result = Replayed()
        try:
            compactor = resolved.factory(settings)
            check_compactor(compactor, target)
            result.output = call_compact(compactor, json.loads(json.dumps(messages)), case["iteration"])
        except Exception as error:  # noqa: BLE001 - the crash is what is replayed
            result.raised = f"{type(error).__name__}: {error}"
        finally:
            resolved.close()
        result.summarizer_requests = len(server.requests)
    if result.raised is None:
        result.problems = judge(messages, result.output)
    return result


def judge(history: list[dict], out: Any) -> dict[str, str]:
    """The structural clauses' findings on one output (SPEC CORE-1, 2, 3, 4, 6)."""
    found = {"CORE-6": oracle.check_valid_messages(out)}
    if isinstance(out, list) and all(isinstance(m, dict) for m in out):
        changed = not oracle.same(history, out)
        found |= {
            "CORE-1": oracle.check_tool_results_have_calls(out),
            "CORE-2": None if oracle.in_flight(history) else oracle.check_calls_have_one_result(out),
            "CORE-3": oracle.check_system_kept(history, out, changed),
            "CORE-4": oracle.check_rounds_whole(history, out),
        }
    return {k: v for k, v in found.items() if v is not None}


def main(argv: list[str]) -> int:
    report_path, clause_id = argv[0], argv[1]
    report = json.loads(Path(report_path).read_text("utf-8"))
    target = argv[2] if len(argv) > 2 else report["compactor"]
    case = case_of(report, clause_id)
    done = replay(case, target)
    print(f"{clause_id}: replayed against {target} at iteration {case['iteration']} with settings {case['settings']} and summarizer {case['summarizer']}")
    if done.raised:
        print(f"  compact raised {done.raised}")
        return 0
    print(f"  structural findings (CORE-1, 2, 3, 4, 6): {done.problems or 'none'}; summarizer requests: {done.summarizer_requests}")
    print(render("input", case["messages"]))
    print(render("output", done.output))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
