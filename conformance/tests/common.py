"""What the conformance tests share: calling the compactor and reading histories."""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import Phase, assume
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from compaction_suite.conformance import formats, oracle
from compaction_suite.conformance.histories import agent_shaped, draw_files, draw_images_by_url
from compaction_suite.conformance.histories import histories as drawn_histories
from compaction_suite.conformance.histories import real_traffic as drawn_real_traffic
from compaction_suite.conformance.responses_histories import draw_custom_tool_calls, draw_programs, draw_rebuilt_items
from compaction_suite.conformance.suite import Subject, Suite, declared_capabilities
from compaction_suite.conformance.summarizer_apis import sends

draw_images_by_url(declared_capabilities().image_urls)  # imported afresh for each run, after the target started
draw_files(declared_capabilities().files != "none")
draw_custom_tool_calls(declared_capabilities().tool_calls == "any")
draw_rebuilt_items(declared_capabilities().responses_items == "rebuilt")
draw_programs(declared_capabilities().programs == "held")


def as_declared(history: list[dict]) -> list[dict]:
    """``history`` as the target's framework would hand it over: without system messages when
    the target declares its system prompt lives outside the list (SPEC Part A, Declarations)."""
    if declared_capabilities().system_outside:
        return [m for m in history if m.get("role") not in oracle.SYSTEM_ROLES]
    return history


def real_traffic(*args: Any, **kwargs: Any) -> st.SearchStrategy[list[dict]]:
    """`conformance.histories.real_traffic` as the target declares it is called (`as_declared`);
    its base, when given, is a strategy of `conformance.histories`, not a `shaped` one."""
    return drawn_real_traffic(*args, **kwargs).map(as_declared)


def shaped(base: st.SearchStrategy[list[dict]]) -> st.SearchStrategy[list[dict]]:
    """``base`` shaped as agents send them (`agent_shaped`) and as the target declares it is
    called (`as_declared`)."""
    return agent_shaped(base).map(as_declared)


def histories(*args: Any, **kwargs: Any) -> st.SearchStrategy[list[dict]]:
    """`conformance.histories.histories`, `shaped`: what every conformance test draws."""
    return shaped(drawn_histories(*args, **kwargs))


TARGET_FORMAT = pytest.mark.wire_format("target")
"""A test that draws its histories in the target's own wire format (`in_format`): its clause
means the same in every format (SPEC Part A, "Wire formats", the table of clauses)."""


def target_format() -> formats.WireFormat:
    """The running target's wire format (chat-completions outside a run)."""
    return formats.get(declared_capabilities().wire_format)


def in_format(**options: Any) -> st.SearchStrategy[Any]:
    """Histories in the running target's wire format, with `histories`' keyword options: for a
    chat-completions target exactly `histories(**options)` (same strategy, same examples); for
    another, the format's own strategy (`WireFormat.histories`, mapped from the same
    chat-completions draws), without the system prompt when the target keeps it outside.

    Resolved when a test module is imported, which the plugin does after the target started
    (`pytest_configure`); `checking.in_process` imports the test modules afresh for each run."""
    fmt = target_format()
    if fmt.name == formats.CHAT:
        return histories(**options)
    drawn = fmt.histories(**options)
    return drawn.map(fmt.without_system) if declared_capabilities().system_outside else drawn


FAULTS = ("429", "500", "503", "malformed", "no_choices", "empty_content", "null_content", "hang", "drop")
"""Every way the suite's summarizer fails (SPEC FAIL-1..4, CORE-11, EVT-3); each API sends those
its provider is known to send (`summarizer_apis.SENT`), a test of another is skipped."""
TRANSIENT = ("429", "500", "503", "hang", "drop", "tool_call")
"""The faults a client's own retries retry (the official ``openai`` client retries 408, 409, 429,
5xx, timeouts and dropped connections twice by default), and a tool call where the request offers
tools: sent once, then the answer (SPEC CORE-11 Decisions: transient faults; a tool call is not a
summary)."""
HANG_TIMEOUT = 0.3
"""The client timeout where the summarizer may hang: small, so a run stays short."""
FAULT_SWEEP = hypothesis_settings(max_examples=2, phases=(Phase.explicit, Phase.reuse, Phase.generate))
"""Two examples per fault, not shrunk: the fault, not the history's shape, is what such a test
is about (each example is one the target summarizes: `summarizing`), and shrinking under a
hanging summarizer costs a timeout per step."""
TRANSIENT_SWEEP = hypothesis_settings(max_examples=1, phases=(Phase.explicit, Phase.reuse, Phase.generate))
"""One example per transient fault (each waits out a client's retry backoff)."""
NO_SUMMARIZER = "the target made no request to the suite's summarizer when it compacted: no summarizer fault can reach it"
SERVER_SIDE = (
    "the target's summaries are the provider's server-side compaction inside its own model requests, which the test double "
    "does not fail: no summarizer fault can reach it (SPEC Part A, Wire formats, Decision: server-side compaction)"
)

substantial = histories(min_rounds=8, max_rounds=14)
"""Histories long enough that a compactor keeping a tail of rounds or of ten-odd messages
still has something older to compact (used where a clause needs a compaction to happen)."""
substantial_in_format = in_format(min_rounds=8, max_rounds=14)
"""`substantial`, in the target's wire format (the same strategy for a chat-completions target)."""

heavy = histories(min_rounds=20, max_rounds=32, max_parallel_calls=6, tools=("createEntity", "createEntity", "readFile", "runCommand", "reportProgress"))
"""Long agent runs: a long prefix to compact, many entity-creating results, up to six parallel
calls a round, tool outputs of tens of kB (a labelled variant: few examples, each large)."""


def clause(clause_id: str) -> pytest.MarkDecorator:
    """Mark a test with the SPEC clause it checks (``require`` reads it: a test names its clause once)."""
    return pytest.mark.clause(clause_id)


def iterations(suite_threshold: int = 8) -> st.SearchStrategy[int]:
    return st.integers(1, 2 * suite_threshold)


def run(suite: Suite, history: list[dict], iteration: int, **changes: Any) -> tuple[Subject, Any]:
    """A fresh compactor compacts a copy of ``history`` (so a mutation cannot leak into the check)."""
    suite.reset_server()
    subject = suite.new(**changes)
    return subject, subject.compact(copy.deepcopy(history), iteration)


SLOW_PAIR_RETRIES = 2
"""How many times a pair of runs that differ, one of them slower than the summarizer timeout, is
run again before it is judged (SPEC CORE-8 Decision: a client-side timeout)."""


def timed(compact: Callable[[], Any]) -> tuple[Any, float]:
    """``compact()``'s result and the seconds it took."""
    start = time.monotonic()
    out = compact()
    return out, time.monotonic() - start


def same_pair(first: Callable[[], Any], second: Callable[[], Any], same: Callable[[Any, Any], bool], timeout: float) -> tuple[Any, Any, float]:
    """Two outputs for CORE-8 to compare, and the seconds the slower run took. A pair that differs
    with a run as slow as ``timeout`` may hold a summarizer call its client gave up on, so answers
    that were not the same; such a pair is run again, up to `SLOW_PAIR_RETRIES` times, and the last
    pair is judged (SPEC CORE-8 Decision: a loaded machine)."""
    for _ in range(SLOW_PAIR_RETRIES + 1):
        (a, took_a), (b, took_b) = timed(first), timed(second)
        slowest = max(took_a, took_b)
        if same(a, b) or slowest < timeout:
            break
    return a, b, slowest


def compacted_twice(suite: Suite, history: list[dict], iteration: int, **changes: Any) -> tuple[Any, Any, float]:
    """`same_pair` over two fresh compactors compacting ``history`` (CORE-8)."""
    timeout = changes.get("summarizer_timeout", suite.settings.summarizer_timeout)

    def once() -> Any:
        return run(suite, history, iteration, **changes)[1]

    return same_pair(once, once, oracle.same, timeout)


def slow_note(seconds: float, timeout: float) -> str:
    """What a CORE-8 failure adds when a run took as long as the summarizer timeout."""
    return f" (a run took {seconds:.1f} s, past the {timeout} s summarizer timeout, in each of {SLOW_PAIR_RETRIES + 1} tries)" if seconds >= timeout else ""


def compacts(suite: Suite, history: list[dict]) -> bool:
    """Whether a fresh compactor compacts ``history`` when both triggers fire (iteration T, M=1).

    Clauses about *when* or *how* a compaction happens apply to such histories only: what a
    compactor keeps as its tail (rounds, messages) is its own business.
    """
    _, out = run(suite, history, suite.settings.threshold_iterations, max_context_tokens=1)
    return suite.format.well_formed(out) and changed(history, out)


def faulted(suite: Suite, fault: str, times: int | None = None, **changes: Any) -> Subject:
    """A fresh compactor (``changes`` to its settings) whose summarizer fails as ``fault`` from
    its next request on (``times`` requests, all when None), the server's record of earlier
    requests cleared; a hang lasts 10 s, well beyond `HANG_TIMEOUT`; a transient 429 asks for no
    wait (``Retry-After: 0``: a client retries after its own backoff)."""
    suite.reset_server()
    subject = suite.new(**changes)
    params: dict[str, Any] = {"hang_seconds": 10} if fault == "hang" else {"retry_after": "0"} if fault == "429" and times else {}
    suite.server.fault(fault, times=times, **params)
    return subject


def unsent(suite: Suite, fault: str) -> str | None:
    """Why ``fault`` cannot reach the target: none of the APIs it asks its summarizer through is
    known to send it (`summarizer_apis.SENT`); None when one is."""
    apis = sorted(suite.summarizer_apis)
    if not apis or any(sends(api, fault) for api in apis):
        return None
    return f"the {', '.join(apis)} API is not known to send the fault {fault!r} (no provider documentation or report: summarizer_apis.SENT)"


def asks(suite: Suite, history: Any) -> bool:
    """Whether a fresh compactor, both triggers firing and the summarizer well, compacts
    ``history`` and asks the summarizer doing it."""
    _, out = run(suite, history, suite.settings.threshold_iterations, max_context_tokens=1)
    return bool(suite.server.exchanges) and suite.format.well_formed(out) and changed(history, out)


def grown(suite: Suite, history: Any, rounds: int) -> Any:
    """``history`` with ``rounds`` agent rounds of its own (`Suite.filler`) before its first turn,
    after the system prompt: as large as the target's own trigger asks."""
    filler = suite.format.from_chat(suite.filler(rounds))
    if isinstance(history, dict):
        return {**history, "messages": [*filler["messages"], *history["messages"]]}
    lead = next((i for i, item in enumerate(history) if suite.format.role(item) not in oracle.SYSTEM_ROLES), len(history))
    return [*history[:lead], *filler, *history[lead:]]


def summarizing(suite: Suite, history: Any, fault: str | None = None) -> Any:
    """``history`` as a fault test meets the target with it: one on which the target really asks
    its summarizer, grown to the target's trigger when the drawn one is too small (SPEC CORE-11
    Decision: summarizer reach). Skips the test for a target that never asks the suite's
    summarizer, or whose summarizer API never sends ``fault``; rejects the example (Hypothesis
    ``assume``) where even the grown history is not summarized."""
    if not suite.calls_summarizer:
        pytest.skip(NO_SUMMARIZER)
    if fault is not None and suite.server_side_only:
        pytest.skip(SERVER_SIDE)
    if fault is not None and (why := unsent(suite, fault)):
        pytest.skip(why)
    if asks(suite, history):
        return history
    larger = grown(suite, history, suite.trigger_rounds or 12)
    assume(asks(suite, larger))
    return larger


def estimate(subject: Subject, history: Any) -> int:
    """The compactor's estimate, or chars/4 (in the target's wire format) when it offers none."""
    found = subject.estimate(history)
    if found is not None:
        return found
    return (subject.suite.format if subject.suite is not None else target_format()).tokens(history)


def compactable(history: Any, keep_rounds: int, fmt: formats.WireFormat | None = None) -> bool:
    """Something older than the last ``keep_rounds`` rounds, besides one earlier summary (TRIG-5);
    rounds as ``fmt`` (default chat-completions) counts them."""
    fmt = fmt or formats.get(formats.CHAT)
    older = [m for r in fmt.rounds(history)[:-keep_rounds or None] for m in r]
    return bool(older) and not (len(older) == 1 and fmt.is_summary(older[0]))


def well_formed(out: Any) -> bool:
    """A list of dicts: the structural clauses judge only that (CORE-6 judges the rest)."""
    return isinstance(out, list) and all(isinstance(m, dict) for m in out)


def changed(history: list[dict], out: Any) -> bool:
    return not oracle.same(history, out)


def summaries(out: list[dict]) -> list[dict]:
    return [m for m in out if oracle.is_summary(m)]
