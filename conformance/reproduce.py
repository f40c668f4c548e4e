"""Replaying a failure from the report alone (SPEC Part A, "Reproduction"; SPEC Part C, ``reproduce``).

Each failing clause in the JSON report carries a ``case``: the input ``messages``, the
``iteration``, the ``settings`` the test changed and the ``summarizer`` mode (a fault, a
fixed reply, or the deterministic summary). `replay` starts the suite's summarizer test
double in that mode, builds the target's compactor with those settings, calls ``compact``
once and judges the output with the summarizer exchanges that call made
(`formats.WireFormat.findings`, as the suite judges a call while it happens); `judge` says
whether the failure still reproduces. A single failure written on its own (a ``compaction-suite matrix``
reproducer: its ``clause``, ``target``, ``case``, failing ``output`` and the ``env`` the target is
built with) loads the same way (`load`).

``compaction-suite reproduce REPORT [CLAUSE] [TARGET]`` is the command (exit 1 while the failure
reproduces, 0 once it does not); ``python -m compaction_suite.conformance.reproduce`` runs it too.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from compaction_suite.inputs import InputError, read_json

from . import formats
from .capabilities import declared
from .clauses import crash_clause, failed_summary_clause, fault_clauses
from .judges import ACCEPTED, requests_accepted
from .settings import Settings, connected
from .summarizer_server import SummarizerServer
from .target import build, call_compact, resolve

REPORT_FORMAT = "compaction-suite-report"


@dataclass
class Failure:
    """One recorded failure: which clause, against which target, the call that showed it."""

    clause: str
    target: str
    case: dict[str, Any]
    output: Any = None
    """What the compactor returned when the clause failed (None when the report has none)."""
    reason: str = ""
    env: dict[str, str] = field(default_factory=dict)
    """Environment variables the target is built with (a matrix reproducer's adapter options)."""


@dataclass
class Replayed:
    """One replayed call: the output (or the exception's text) and what the oracle found: the
    clauses judged on every output, and the in-flight clause (CORE-9, RESP-8, ANTH-6) when the
    case's history waits for a tool result."""

    output: Any = None
    raised: str | None = None
    problems: dict[str, str] = field(default_factory=dict)
    summarizer_requests: int = 0
    wire_format: str = formats.CHAT
    providers: tuple[str, ...] = ()
    """The provider rule sets the target declares (CORE-17 judges those)."""


@dataclass(frozen=True)
class Verdict:
    """Whether the failure reproduced, and why (one line)."""

    reproduces: bool
    why: str


def case_of(report: dict[str, Any], clause_id: str) -> dict[str, Any]:
    """The case of ``clause_id``'s failure in a loaded report; raises KeyError when it has none."""
    case = report["clauses"].get(clause_id, {}).get("case")
    if not case:
        raise KeyError(f"{clause_id} has no failure to replay in this report")
    return case


def load(path: str | os.PathLike[str], clause: str | None = None) -> Failure:
    """The failure in a JSON report (of ``clause``, or its only failure with a case) or in a
    matrix reproducer; `InputError` says in one line why the file holds none."""
    data = read_json(path)
    if isinstance(data, dict) and "clauses" in data:
        return _from_report(path, data, clause)
    if isinstance(data, dict) and {"clause", "target", "case"} <= set(data):
        if clause is not None and clause.upper() != data["clause"]:
            raise InputError(f"{path}: this reproducer is of {data['clause']}, not {clause}")
        env = {str(k): str(v) for k, v in (data.get("env") or {}).items()}
        return Failure(data["clause"], data["target"], _case(path, data["case"]), data.get("output"), data.get("reason", ""), env)
    raise InputError(f"{path}: not a compaction-suite report (check --report) or matrix reproducer")


def _from_report(path: str | os.PathLike[str], data: dict[str, Any], clause: str | None) -> Failure:
    if data.get("format") != REPORT_FORMAT or not isinstance(data["clauses"], dict):
        raise InputError(f"{path}: not a compaction-suite report (its format is {data.get('format')!r}, not {REPORT_FORMAT!r})")
    replayable = [cid for cid, c in data["clauses"].items() if isinstance(c, dict) and c.get("case")]
    if clause is None:
        if len(replayable) != 1:
            named = f"name one of {', '.join(replayable)}" if replayable else f"its verdict is {data.get('verdict')!r}"
            raise InputError(f"{path}: {len(replayable)} failures to replay; {named}")
        clause = replayable[0]
    entry = data["clauses"].get(clause.upper())
    if not isinstance(entry, dict):
        raise InputError(f"{path}: no clause {clause} in this report")
    if not entry.get("case"):
        raise InputError(f"{path}: {clause.upper()} has no failure to replay (status {entry.get('status')!r})")
    return Failure(clause.upper(), str(data.get("compactor")), _case(path, entry["case"]), entry.get("output"), entry.get("reason", ""))


def _case(path: str | os.PathLike[str], case: Any) -> dict[str, Any]:
    if not isinstance(case, dict) or "messages" not in case or not isinstance(case.get("iteration"), int):
        raise InputError(f"{path}: the failure's case is not a replayable case (it needs 'messages' and an integer 'iteration')")
    return case


def replay(case: dict[str, Any], target: str, env: Mapping[str, str] | None = None, *, summarizes: bool = False) -> Replayed:
    """Run ``case`` once against ``target`` (a TARGET string) and judge the output, with the
    summarizer exchanges of the call (CORE-12, CORE-13, CORE-18) unless the case's summarizer fails
    on every request (CORE-11's to judge, as in the suite). CORE-12 judges an output that asked no
    summarizer only when the target is known to summarize (``summarizes``: the suite found it so,
    `suite.Suite.settle`). A target that cannot be resolved or built raises (`TargetError`,
    `StartupFailed`); a ``compact`` that raises is what is replayed (``raised``)."""
    with _environment(env or {}):
        resolved = resolve(target)
        try:
            with SummarizerServer() as server:
                server.set_mode(case.get("summarizer") or {})
                settings = connected(Settings().with_(**case.get("settings", {})), server.base_url)
                compactor = build(resolved, settings)
                result = Replayed(wire_format=formats.declared(compactor), providers=declared(compactor).providers)
                server.answer_as(declared(compactor).summarizer_providers)  # SPEC CORE-13 Decision
                try:
                    result.output = call_compact(compactor, json.loads(json.dumps(case["messages"])), case["iteration"])
                except Exception as error:  # noqa: BLE001 - the crash is what is replayed
                    result.raised = f"{type(error).__name__}: {error}"
                result.summarizer_requests, exchanges = len(server.requests), server.exchanges
        finally:
            resolved.close()
    mode = case.get("summarizer") or {}
    judged = None if mode.get("fault") and mode.get("times") is None else exchanges if exchanges or summarizes else None
    if judged is not None:
        result.problems.update({c: r for c, r in [(ACCEPTED, requests_accepted(judged))] if r})
    if result.raised is None:
        result.problems.update(formats.get(result.wire_format).findings(case["messages"], result.output, result.providers, judged))
    return result


@contextlib.contextmanager
def _environment(env: Mapping[str, str]) -> Iterator[None]:
    """``env`` set while the target is resolved, built and called; the environment restored after."""
    before = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def judge(failure: Failure, done: Replayed) -> Verdict:
    """Whether ``done`` shows the failure again (SPEC Part C, ``reproduce``). It does when ``compact``
    raises, when the clause (or any clause judged on one output) breaks on the output, or, for a
    clause judged over more than one call, when the output is the very one that failed."""
    clause, wire_format, crashed = failure.clause, formats.get(done.wire_format), crash_clause()
    if done.raised is not None:
        also = "" if clause == crashed else f" ({crashed}: no crash)"
        return Verdict(True, f"compact raised {done.raised}{also}")
    problems = dict(done.problems)
    if clause == failed_summary_clause() and (failure.case.get("summarizer") or {}).get("fault"):
        problem = wire_format.no_failed_summary(failure.case["messages"], done.output)
        if problem:
            problems[clause] = problem
    if clause in problems:
        return Verdict(True, f"{clause}: {problems[clause]}")
    if problems:
        return Verdict(True, f"{clause} holds on this call, but it breaks " + "; ".join(f"{c}: {r}" for c, r in problems.items()))
    if clause in (*wire_format.judged, wire_format.in_flight_clause, *fault_clauses()):
        return Verdict(False, f"{clause} holds on the replayed call")
    if failure.output is not None and formats.same(done.output, failure.output):
        return Verdict(True, f"the output is the one that failed {clause}" + (f" ({failure.reason})" if failure.reason else ""))
    return Verdict(False, f"the output differs from the one that failed {clause}, which is not judged on one call: "
                          f"confirm with compaction-suite check TARGET --clause {clause}")  # fmt: skip


def main(argv: list[str]) -> int:
    """``compaction-suite reproduce ARGV`` (the command's contract: exit 1 while the failure reproduces)."""
    from compaction_suite.cli import main as command

    try:
        command.main(["reproduce", *argv], prog_name="compaction-suite")
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else 1
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
