"""Core, a stated cap on trimmed tool results: a compactor that shortens tool results in place to a
size its framework states (``capabilities["trimmed_result_chars"]``: the OpenAI Agents SDK's
``ToolOutputTrimmer(max_output_chars=N)``) leaves no result it shortened longer than that
(SPEC CORE-40).

A trimming filter exists to keep each old result under a stated size; a replacement that keeps
its own header and a preview past that size is shorter than the original and still over what the
user configured (openai/openai-agents-python#4622: a 1,000-character output trimmed to 260 under
``max_output_chars=40``). CORE-7 (never larger) and CORE-15 (reclaims half) hold there: only the
stated cap tells it apart.
"""

from __future__ import annotations

import copy

from hypothesis import given

from compaction_suite.conformance import judges
from compaction_suite.conformance.assertions import require
from compaction_suite.conformance.settings import Settings

from .common import TARGET_FORMAT, changed, clause, in_format, run

pytestmark = TARGET_FORMAT

T = Settings().threshold_iterations


def over_the_cap(fmt, history, cap):
    """``history`` with every tool result's text repeated to at least `LONGER` times ``cap`` plus
    `MARGIN` characters, and `FLOOR` at least (an agent reading long files): a trimmer has something
    to shorten in every older result, whatever its preview and header (a forced shape, not a
    hoped-for one), a preview its user set longer than the cap too (openai-agents-python#4686)."""
    wanted = max(LONGER * cap + MARGIN, FLOOR)
    items = copy.deepcopy(history)
    for item in fmt.items(items):
        key = "content" if fmt.role(item) == "tool" else "output"
        text = item.get(key) if fmt.role(item) in judges.RESULT_ROLES else None
        if isinstance(text, str) and text and len(text) < wanted:
            item[key] = (text + "\n") * (wanted // (len(text) + 1) + 1)
    return items


LONGER, MARGIN = 8, 400
FLOOR = 16_000
"""The shortest a forced result is, in characters (about 4,000 tokens: one long file read): longer than
a trimmer's preview, which its options set apart from the cap."""


@clause("CORE-40")
@given(history=in_format(min_rounds=6, max_rounds=12))
def test_shortened_results_fit_the_stated_cap(suite, history):
    """Every tool result a forced compaction changed in place holds at most the declared number of
    characters; a result it kept verbatim, however long, is not judged. Every result of the drawn
    history is made longer than the cap first (`over_the_cap`)."""
    cap = suite.capabilities.trimmed_result_chars
    history = over_the_cap(suite.format, history, cap)
    _, out = run(suite, history, T, max_context_tokens=1)
    if not (suite.format.well_formed(out) and changed(history, out)):
        return
    require(judges.trimmed_results_fit(suite.format, history, out, cap), history, out)
