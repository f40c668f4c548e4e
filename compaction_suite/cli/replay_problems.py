"""What ``compaction-suite bench replay`` says after the replay: every compactor that raised or
broke a clause, on stdout (the run then exits 1; SPEC Part C), and the way to a comparable reading."""

from __future__ import annotations

from typing import Any

import click


def problems(results: dict[str, Any]) -> int:
    """Say on stdout what each compactor raised or broke, and point at the chat reading of a Claude
    Code trace no compaction point of which was comparable; how many runs found a problem."""
    problems = 0
    for run in results["runs"]:
        points = run["model_calls"] - 1
        for kind, found in (("raised", run["errors"]), ("broke a clause", run["violations"])):
            if found:
                click.echo(f"{run['compactor']} {kind} at {len(found)} of {points} compaction points of {run['trace']}; first: {found[0]}")
        problems += bool(run["errors"] or run["violations"])
        if points and run["not_comparable"] == points and run["trace_format"] == "anthropic-messages" and run["compactor_format"] == "chat-completions":
            click.echo(f"no compaction point of {run['trace']} was comparable for {run['compactor']}: "
                       "--trace-format claude-code-chat reads a Claude Code session as chat-completions (thinking blocks dropped)")  # fmt: skip
    return problems

