"""What users pay: a framework's reported usage against what the provider billed (SPEC Part A, COST).

A target declaring ``capabilities["usage"] = "reported"`` offers ``reported_usage()``: the input and
output tokens its framework itself reports (its run result's usage, its metrics object) for everything
the last ``compact`` call ran. The suite's test double keeps every answer it billed with its usage
(`summarizer_server.Served`). COST-1: the report leaves out none of it; COST-2: it counts none of it
twice (nor anything the provider never billed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .summarizer_server import Served
from .violation import Violation

HOOK = "reported_usage"
"""The compactor's member a target declaring ``usage: reported`` offers."""
FIELDS = ("input_tokens", "output_tokens")


class UsageHookError(ValueError):
    """A ``reported_usage()`` answer the suite cannot read (a contract error, not a verdict)."""


@dataclass(frozen=True)
class Tokens:
    input_tokens: int
    output_tokens: int

    def __str__(self) -> str:
        return f"{self.input_tokens} input and {self.output_tokens} output tokens"


def reported(compactor: Any) -> Tokens | None:
    """The framework's own report for the last ``compact`` call (`HOOK`), or None when it reports none
    (no run of its loop in that call). Raises `UsageHookError` for anything but a mapping of `FIELDS`
    to non-negative integers."""
    answer = getattr(compactor, HOOK)()
    if answer is None:
        return None
    if not isinstance(answer, Mapping) or not all(
        isinstance(answer.get(f), int) and not isinstance(answer.get(f), bool) and answer[f] >= 0 for f in FIELDS
    ):
        raise UsageHookError(f"{HOOK}() returned {answer!r}; expected None or a mapping of {' and '.join(FIELDS)} to non-negative integers")
    return Tokens(int(answer["input_tokens"]), int(answer["output_tokens"]))


def billed(served: Sequence[Served], *, stated_only: bool) -> Tokens:
    """The tokens the double billed over ``served`` (those whose answer stated its usage, with ``stated_only``)."""
    kept = [s for s in served if s.stated or not stated_only]
    return Tokens(sum(s.input_tokens for s in kept), sum(s.output_tokens for s in kept))


def _requests(served: Sequence[Served]) -> str:
    """Each request billed, by what it was: ``1 POST /v1/responses/compact (812 in, 40 out)``."""
    groups: dict[tuple[str, str], list[Served]] = {}
    for s in served:
        groups.setdefault((s.api, s.path), []).append(s)
    parts = []
    for (api, path), group in groups.items():
        what = "agent-model" if api == "model" else api
        parts.append(
            f"{len(group)} {what} POST {path} ({sum(s.input_tokens for s in group)} in, {sum(s.output_tokens for s in group)} out)"
        )
    return "; ".join(parts)


def _exactly(served: Sequence[Served], gap: Tokens) -> str:
    """The requests whose billed usage is exactly ``gap`` (one kind of request), said so, or ``""``."""
    groups: dict[tuple[str, str], Tokens] = {}
    for s in served:
        had = groups.get((s.api, s.path), Tokens(0, 0))
        groups[(s.api, s.path)] = Tokens(had.input_tokens + s.input_tokens, had.output_tokens + s.output_tokens)
    for (api, path), tokens in groups.items():
        if tokens == gap:
            return f": exactly the usage of the {'agent-model' if api == 'model' else api} request(s) POST {path}"
    return ""


def left_out(served: Sequence[Served], report: Tokens | None) -> Violation | None:
    """COST-1: the framework's report counts at least what the answers it got stated."""
    stated = [s for s in served if s.stated]
    owed = billed(stated, stated_only=True)
    if not stated or (owed.input_tokens == 0 and owed.output_tokens == 0):
        return None
    if report is None:
        return Violation("usage-left-out", f"the framework reported no usage for a run the provider billed {owed} ({_requests(stated)})")
    gap = Tokens(max(0, owed.input_tokens - report.input_tokens), max(0, owed.output_tokens - report.output_tokens))
    if gap == Tokens(0, 0):
        return None
    return Violation(
        "usage-left-out",
        f"the framework reported {report} for the run, but the provider billed {owed} over {len(stated)} requests "
        f"({_requests(stated)}): {gap} left out{_exactly(stated, gap)}",
    )


def counted_twice(served: Sequence[Served], report: Tokens | None) -> Violation | None:
    """COST-2: the framework's report counts no more than the provider billed (every answer, stated or not)."""
    if report is None:
        return None
    owed = billed(served, stated_only=False)
    excess = Tokens(max(0, report.input_tokens - owed.input_tokens), max(0, report.output_tokens - owed.output_tokens))
    if excess == Tokens(0, 0):
        return None
    billed_over = f"over {len(served)} requests ({_requests(served)})" if served else "(no request)"
    return Violation(
        "usage-counted-twice",
        f"the framework reported {report} for the run, but the provider billed {owed} {billed_over}: "
        f"{excess} counted twice or never billed{_exactly(served, excess)}",
    )
