"""Core, a stated window: a compactor whose framework states how many items a compaction leaves
(``capabilities["kept_items"]``: Strands' ``SlidingWindowConversationManager(window_size=N)`` on its
routine path) leaves no more than that whenever it compacts a longer history (SPEC CORE-71).

A window exists to bound the history; a compaction that changes a history over it and still leaves it
over (a tool result masked in place instead of the window slid) lets the history grow past the window
call after call (strands-agents/harness-sdk#578: ``window_size=12``, twenty direct tool calls, the
history growing past 12). FIRE-1 holds there (the output differs): only the stated window tells it apart.
"""

from __future__ import annotations

import copy

from hypothesis import Phase, assume, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from compaction_suite.conformance import judges, oracle
from compaction_suite.conformance.assertions import require

from .common import TARGET_FORMAT, clause, in_format, run

pytestmark = TARGET_FORMAT

T = 1
"""The iteration every call is made at: a window fires on its size alone."""


def _over(window: int) -> st.SearchStrategy[object]:
    """Complete histories of several user turns and tool rounds, at least twice ``window`` chat messages long
    (so more than ``window`` items in every wire format), few parallel calls."""
    return in_format(min_rounds=6, max_rounds=12, max_parallel_calls=2, shapes=(), earlier_summary=False, long_outputs=False, min_messages=2 * window + 4)


@clause("CORE-71")
@hypothesis_settings(max_examples=5, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(data=st.data())
def test_a_compaction_leaves_at_most_the_stated_window(suite, data):
    """A history longer than the declared window, compacted (the output differs), holds at most that many
    items afterwards, system prompt aside; one returned as it came is not judged here (FIRE-1's)."""
    window = suite.capabilities.kept_items
    history = data.draw(_over(window), label="history")
    held = [item for item in suite.format.items(history) if suite.format.role(item) not in oracle.SYSTEM_ROLES]
    assume(len(held) > window)
    _, out = run(suite, copy.deepcopy(history), T, max_context_tokens=1)
    require(judges.kept_items_fit(suite.format, history, out, window), history, out)
