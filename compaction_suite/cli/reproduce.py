"""``compaction-suite reproduce``: replay a failure from a check report or a matrix reproducer.

The replay and its verdict are `compaction_suite.conformance.reproduce`; this module parses the
arguments and prints what happened.
"""

from __future__ import annotations

import click

from .contract import INPUT_FILE, finish, path_option, use_paths


@click.command()
@click.argument("report", type=INPUT_FILE)
@click.argument("clause", required=False)
@click.argument("target", required=False)
@path_option
def reproduce(report, clause: str | None, target: str | None, paths: tuple[str, ...]) -> None:
    """Replay CLAUSE's failure from REPORT (check --report x.json, or a matrix reproducer).

    CLAUSE may be left out when the report holds one failure to replay; TARGET replays it
    against another compactor (default: the report's). The compactor is built and called once,
    with the summarizer test double in the recorded mode, and its output judged again.

    Exit status: 1 while the failure reproduces, 0 once it does not (so it can gate a fix),
    2 on a bad input or a target that cannot be imported or built.
    """
    from compaction_suite.conformance.assertions import render
    from compaction_suite.conformance.judges import ANSWERED
    from compaction_suite.conformance.reproduce import judge, load, replay

    use_paths(paths)
    failure = load(report, clause)
    done = replay(failure.case, target or failure.target, failure.env, summarizes=failure.clause == ANSWERED)
    case = failure.case
    click.echo(f"{failure.clause}: replayed against {target or failure.target} at iteration {case['iteration']} "
               f"with settings {case.get('settings', {})} and summarizer {case.get('summarizer')}")  # fmt: skip
    if done.raised is None:
        click.echo(f"  findings: {done.problems or 'none'}; summarizer requests: {done.summarizer_requests}")
        click.echo(render("input", case["messages"]))
        click.echo(render("output", done.output))
    verdict = judge(failure, done)
    click.echo(f"{failure.clause} {'still fails' if verdict.reproduces else 'no longer fails'}: {verdict.why}")
    finish(verdict.reproduces)
