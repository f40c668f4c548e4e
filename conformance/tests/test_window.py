"""Core, the summarizer's own context window: a summarizing target handed a history larger than
the context window of the model its summarizer asks (``capabilities["summarizer_window"]``) still
compacts it, trimming or chunking what it sends to fit that window (SPEC WIN-1).

The history the agent overflowed is the one that reaches the compactor: a tool result that filled
the context at once, a reactive path called after the provider's own overflow error, a trigger set
near the window. A compactor that sends it whole gets the provider's HTTP 400
(``context_length_exceeded``, "prompt is too long"; `summarizer_apis.OVER_WINDOW`) and crashes
(CORE-10), stores a summary of nothing (CORE-12) or never compacts again. It must trim or chunk
what it sends; what it then removes unread is CORE-12's and CORE-18's, judged on this output as on
every output.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import Phase, given
from hypothesis import settings as hypothesis_settings

from compaction_suite.conformance import judges, oracle
from compaction_suite.conformance.assertions import require
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.suite import Suite
from compaction_suite.conformance.violation import Violation
from compaction_suite.text import count_tokens

from .common import TARGET_FORMAT, changed, clause, substantial_in_format, summarizing

pytestmark = TARGET_FORMAT

T = Settings().threshold_iterations
OVER = 2
"""The history holds more than this many windows of tokens: no request holding all of it can fit."""
SHARE = 2
"""Each added part of the log (a tool result, or the text a user pasted) holds at most 1/SHARE of the window, so a compactor that sends whole
messages in pieces that fit (chunks, a trimmed tail) can: no single message is over the window."""
WINDOW_SWEEP = hypothesis_settings(max_examples=2, phases=(Phase.explicit, Phase.reuse, Phase.generate), deadline=None)
LOOP_SWEEP = hypothesis_settings(max_examples=1, phases=(Phase.explicit, Phase.reuse, Phase.generate), deadline=None)
"""One drawn history under the tool loop: the loop is the same for every example, and long."""
WORDS = ("module", "parser", "build", "tests", "passed", "cache", "deploy", "worker", "queue", "index", "schema", "report")


def log_text(tokens: int, seed: int) -> str:
    """Plain build-log lines holding about ``tokens`` o200k tokens (each line names its own number)."""
    lines: list[str] = []
    held = 0
    while held < tokens:
        words = " ".join(WORDS[(seed + len(lines) + k) % len(WORDS)] for k in range(6))
        line = f"log {seed}.{len(lines)}: {words} finished without warnings."
        lines.append(line)
        held += count_tokens(line) + 1
    return "\n".join(lines)


def oversized(suite: Suite, history: Any, window: int) -> Any:
    """``history`` with rounds of its own before its first turn (after the system prompt), each
    holding half the window of build log, until the added text alone holds more than `OVER`
    windows and the whole is well past a declared trigger (SPEC WIN-1 Decision). The log is pasted
    in the user's message in the first round and every other one after it, and read by a tool in
    the others: a compactor that sends the summarizer only the messages' text, or only the tool
    results, still sends more than a window when it sends all of that whole."""
    rounds: list[dict[str, Any]] = []
    held = n = 0
    trigger = suite.capabilities.trigger
    while held <= OVER * window or (trigger is not None and not trigger.well_past(suite.format, _joined(suite, history, rounds))):
        n += 1
        text = log_text(window // SHARE, n)
        rounds += _pasted(n, text) if n % 2 else _read(n, text)
        held += count_tokens(text)
    return _joined(suite, history, rounds)


def _pasted(n: int, text: str) -> list[dict[str, Any]]:
    """A round whose user pastes part ``n`` of the log into the conversation."""
    return [
        {"role": "user", "content": f"Here is part {n} of the build log; tell me what it says.\n{text}"},
        {"role": "assistant", "content": f"Part {n} of the build log shows every module finished without warnings."},
    ]


def _read(n: int, text: str) -> list[dict[str, Any]]:
    """A round whose tool reads part ``n`` of the log."""
    call = {"id": f"call_window_{n}", "type": "function", "function": {"name": "readBuildLog", "arguments": json.dumps({"part": n})}}
    return [
        {"role": "user", "content": f"Read part {n} of the build log and tell me what it says."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": text},
        {"role": "assistant", "content": f"Part {n} of the build log shows every module finished without warnings."},
    ]


def looped(suite: Suite, history: Any, window: int) -> Any:
    """``history`` with an agent's long tool loop before its first turn: short rounds (`_looked_up`, about
    200 tokens each) until they hold more than `OVER` windows and the whole is well past a declared
    trigger (SPEC WIN-1, the tool loop)."""
    rounds: list[dict[str, Any]] = []
    held = n = 0
    trigger = suite.capabilities.trigger
    while held <= OVER * window or (trigger is not None and not trigger.well_past(suite.format, _joined(suite, history, rounds))):
        n += 1
        added = _looked_up(n)
        rounds += added
        held += sum(count_tokens(str(m.get("content") or "")) + count_tokens(json.dumps(m.get("tool_calls") or "")) for m in added)
    return _joined(suite, history, rounds)


def _looked_up(n: int) -> list[dict[str, Any]]:
    """A short round of a coding agent's loop: a question, a call reading one file, its five short
    definitions, a one-line answer."""
    call = {"id": f"call_loop_{n}", "type": "function", "function": {"name": "readFile", "arguments": json.dumps({"path": f"src/jobs/handler_{n}.py"})}}
    source = "".join(f"def handle_{n}_{k}(event, retries={k}):\n    return process(event, queue='jobs-{n}', retries=retries)\n" for k in range(5))
    return [
        {"role": "user", "content": f"Open src/jobs/handler_{n}.py and tell me what it defines."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": source},
        {"role": "assistant", "content": f"src/jobs/handler_{n}.py defines five handlers for queue jobs-{n}, each retrying up to its own count."},
    ]


def _joined(suite: Suite, history: Any, rounds: list[dict[str, Any]]) -> Any:
    added = suite.format.from_chat(rounds)
    if isinstance(history, dict):
        return {**history, "messages": [*added["messages"], *history["messages"]]}
    lead = next((i for i, item in enumerate(history) if suite.format.role(item) not in oracle.SYSTEM_ROLES), len(history))
    return [*history[:lead], *added, *history[lead:]]


@clause("WIN-1")
@pytest.mark.judges("CORE-10", "CORE-12", "CORE-18")
@WINDOW_SWEEP
@given(history=substantial_in_format)
def test_compacts_a_history_larger_than_its_summarizers_window(suite, history):
    """The output is compacted; a request over the window fails unless the compaction recovered
    from the provider's answer (a smaller request answered, the output compacted)."""
    window = suite.capabilities.summarizer_window
    require(*compacted_within(suite, oversized(suite, summarizing(suite, history), window), window))


@clause("WIN-1")
@pytest.mark.judges("CORE-10", "CORE-12", "CORE-18")
@LOOP_SWEEP
@given(history=substantial_in_format)
def test_compacts_a_long_tool_loop_larger_than_its_summarizers_window(suite, history):
    """As above for an agent's long loop of short rounds (a short question, a tool call, a short
    result, a short answer): a compactor that bounds what it sends by its count of the messages'
    text, then sends the summarizer more than that (each message's bookkeeping rendered beside it,
    langchain-ai/langchain#34517), overflows here, where a few large messages hide it."""
    window = suite.capabilities.summarizer_window
    require(*compacted_within(suite, looped(suite, summarizing(suite, history), window), window))


def compacted_within(suite: Suite, history: Any, window: int) -> tuple[Violation | None, Any, Any]:
    """The WIN-1 verdict on one compaction of ``history`` with the summarizer's window set, and the
    history and output it judged. A request over the window is forgiven only where the compaction
    recovered from the provider's answer: a later summarizer request was answered and the output is
    compacted (SPEC WIN-1 Decision, recovering); an error stored in place of a summary is not that."""
    suite.reset_server()
    subject = suite.new(max_context_tokens=1)
    suite.server.window(window)
    out = None
    try:
        out = subject.compact(copy.deepcopy(history), T)
    except Exception:  # noqa: BLE001 - a crash is CORE-10's verdict, recorded by the suite; the requests are judged below
        pass
    finally:
        suite.server.window(None)
    over = judges.within_window(suite.server.exchanges)
    if out is not None and changed(history, out) and recovered(suite.server.exchanges):
        over = None
    elif out is not None and not changed(history, out):
        over = over or Violation("not-compacted-over-window", f"a history of more than {OVER} summarizer windows ({window} tokens each) came back unchanged")
    return over, history, out  # a crash is also CORE-10's


def recovered(exchanges: Any) -> bool:
    """Whether a summarizer request after the first one over the window was answered (or none was over)."""
    over = next((i for i, e in enumerate(exchanges) if e.over_window is not None), None)
    return over is None or any(e.answer is not None for e in exchanges[over + 1 :])
