"""Replaying a failure from the report alone (SPEC Part A, "Reproduction").

Each failing clause in the JSON report carries a ``case``: the input ``messages``, the
``iteration``, the ``settings`` the test changed and the ``summarizer`` mode (a fault, a
fixed reply, or the deterministic summary). `replay` starts the suite's summarizer test
double in that mode, builds the target's compactor with those settings, calls ``compact``
once and judges the output for the structural clauses; for any other clause it shows the
input and the output side by side, as the failure did.

``python -m compaction_suite.conformance.reproduce REPORT.json CLAUSE [TARGET]`` prints what happened.
A single failure written on its own (a ``compaction-suite matrix`` reproducer: its ``clause``,
``target``, ``case`` and the ``env`` the target is built with) replays with
``python -m compaction_suite.conformance.reproduce REPRODUCER.json``.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import formats
from .assertions import render
from .capabilities import declared
from .settings import Settings, connected
from .summarizer_server import SummarizerServer
from .target import call_compact, check_compactor, resolve


@dataclass
class Replayed:
    """One replayed call: the output (or the exception's text) and what the oracle found: the
    clauses judged on every output, and the in-flight clause (CORE-9, RESP-8, ANTH-6) when the
    case's history waits for a tool result."""

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
    resolved = resolve(target)
    with SummarizerServer() as server:
        server.set_mode(case.get("summarizer") or {})
        settings = connected(Settings().with_(**case.get("settings", {})), server.base_url)
        messages = case["messages"]
        result = Replayed()
        wire_format = formats.get(formats.CHAT)
        providers: tuple[str, ...] = ()
        try:
            compactor = resolved.factory(settings)
            check_compactor(compactor, target)
            wire_format = formats.get(formats.declared(compactor))
            providers = declared(compactor).providers  # CORE-17 judges the providers it declares
            result.output = call_compact(compactor, json.loads(json.dumps(messages)), case["iteration"])
        except Exception as error:  # noqa: BLE001 - the crash is what is replayed
            result.raised = f"{type(error).__name__}: {error}"
        finally:
            resolved.close()
        result.summarizer_requests = len(server.requests)
    if result.raised is None:
        result.problems = wire_format.findings(messages, result.output, providers)
    return result


def main(argv: list[str]) -> int:
    loaded = json.loads(Path(argv[0]).read_text("utf-8"))
    if "clauses" in loaded:  # a check report: which clause, and optionally another target
        clause_id = argv[1]
        target = argv[2] if len(argv) > 2 else loaded["compactor"]
        case = case_of(loaded, clause_id)
    else:  # one failure on its own (a matrix reproducer)
        clause_id, target, case = loaded["clause"], loaded["target"], loaded["case"]
        os.environ.update(loaded.get("env") or {})
    done = replay(case, target)
    print(f"{clause_id}: replayed against {target} at iteration {case['iteration']} with settings {case['settings']} and summarizer {case['summarizer']}")
    if done.raised:
        print(f"  compact raised {done.raised}")
        return 0
    print(f"  findings: {done.problems or 'none'}; summarizer requests: {done.summarizer_requests}")
    print(render("input", case["messages"]))
    print(render("output", done.output))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
