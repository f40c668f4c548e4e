"""Tool results the provider marks as errors (SPEC CORE-62), on targets of the Messages API format.

A failed call's result is as often the one a compaction reaches for as any: a build log or a
traceback is long, and it is old by the time the context fills. The histories here are the
Anthropic histories the suite draws with the results of every round but the newest marked
``is_error`` and holding a failing command's output (`with_failed_calls`), so that a compaction
clearing, shortening or offloading old results meets marked ones; CORE-62 is judged on every
output as well. The histories draw no other long output: the failed calls are the test's long
results, and a newest round past a small window (a reactive target's) would only end the run.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import assume, given
from hypothesis import settings as hypothesis_settings

from compaction_suite.conformance import error_marks
from compaction_suite.conformance.assertions import require
from compaction_suite.conformance.formats import anthropic
from compaction_suite.conformance.settings import Settings

from .common import clause, run
from .test_formats import ANTHROPIC, drawn

T = Settings().threshold_iterations
FEW = hypothesis_settings(max_examples=min(10, hypothesis_settings().max_examples), deadline=None)

ERROR_CHARS = 2_400
"""How long a failed call's output is (a 40-line traceback, about 600 tokens), or more: past a
declared offload size (`failed_output`)."""

FAILURE = 'Traceback (most recent call last):\n  File "/srv/app/jobs/build.py", line {n}, in run\n    step.execute(context)\nRuntimeError: step {n} failed: exit status 2\n'


def failed_output(chars: int) -> str:
    """A failing command's output of at least ``chars`` characters: a traceback, frame after frame."""
    lines: list[str] = []
    n = 0
    while sum(len(line) for line in lines) < chars:
        n += 1
        lines.append(FAILURE.format(n=n))
    return "".join(lines)


def with_failed_calls(request: dict[str, Any], chars: int = ERROR_CHARS) -> dict[str, Any]:
    """``request`` with each ``tool_result`` of every message but the newest holding results marked
    ``is_error: true``, its content a text block of a failing command's output (`failed_output`);
    the newest round's results as drawn (CORE-14 keeps them)."""
    out = copy.deepcopy(request)
    holders = [m for m in out.get("messages", []) if anthropic.tool_results(m)]
    for message in holders[:-1]:
        for block in message["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                block["content"] = [{"type": "text", "text": failed_output(chars)}]
                block["is_error"] = True
    return out


def without_documents(request: dict[str, Any]) -> dict[str, Any]:
    """``request`` with each PDF a tool result holds (`with_tool_media`'s ``readFile`` results) named in a
    text block instead, as `test_core.test_media_kept_or_named` leaves files out for a target declaring an
    agent window: the newest round is kept whole, and a document there may alone be over that window."""
    out = copy.deepcopy(request)
    for message in out.get("messages", []):
        for block in anthropic.blocks(message):
            if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                block["content"] = [{"type": "text", "text": f"(a PDF, {p.get('title', 'untitled')})"} if p.get("type") == "document" else p for p in block["content"]]
    return out


def error_chars(suite: Any) -> int:
    """`ERROR_CHARS`, or past twice a declared offload size (chars/4), so that the framework offloads
    each failed call's output by its own words; at most a twentieth of a declared agent window (reactive
    or request, chars/4), so that what the framework keeps of the history (two results a round at most,
    `test_a_failed_call_stays_marked`) fits it: the test is about the mark, not an overflow."""
    caps = suite.capabilities
    chars = max(ERROR_CHARS, 8 * caps.offload_result_tokens + 400) if caps.offload_result_tokens else ERROR_CHARS
    windows = [w for w in (caps.reactive_window, caps.request_window) if w]
    return min(chars, 4 * min(windows) // 20) if windows else chars


@ANTHROPIC
@clause("CORE-62")
@FEW
@given(history=drawn(anthropic, min_rounds=3, max_rounds=8, max_parallel_calls=2, shapes=(), in_flight=False, long_outputs=False))
def test_a_failed_call_stays_marked(suite, history):
    """A forced compaction (iteration T, M=1) of a history whose older results are failed calls: a result
    whose content it replaces in place keeps ``is_error`` (deepagents PR #1482: FilesystemMiddleware
    rebuilt an evicted ToolMessage without its status, and langchain-anthropic sent ``is_error: false``)."""
    history = with_failed_calls(history, error_chars(suite))
    assume(error_marks.marked(suite.format, history))  # a history of one tool round has no older failed call
    if suite.capabilities.reactive_window is not None:  # a PDF alone (1,500 tokens a page) may be over the agent model's window
        history = without_documents(history)
    _, out = run(suite, history, T, max_context_tokens=1)
    require(error_marks.error_mark_kept(suite.format, history, out), history, out)
