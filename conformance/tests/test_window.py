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
    history = oversized(suite, summarizing(suite, history), window)
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
    if out is not None and changed(history, out):
        over = None  # compacted: a request over the window it recovered from (a smaller one answered) is allowed
    elif out is not None:
        over = over or Violation("not-compacted-over-window", f"a history of more than {OVER} summarizer windows ({window} tokens each) came back unchanged")
    require(over, history, out)  # a crash is also CORE-10's
