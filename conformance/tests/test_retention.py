"""Core, the configured retention: a compaction sends at least the newest messages its configuration
keeps, as they were (SPEC CORE-65; ``capabilities["keeps"]``, `conformance.retention`).

Seed 004 states a summarizing strategy's retention as part of its configuration ("The default shape
keeps 20 recent messages"), seed 000 keeps the newest rounds verbatim. A user who configures how much
is kept verbatim expects that much: deepagents' ``create_deep_agent`` added a user's
``SummarizationMiddleware`` after its own instead of in its place, so its own fired first and kept
its own share (deepagents#1485, fixed in 0.7.0).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import settings as hypothesis_settings

from compaction_suite.conformance import retention
from compaction_suite.conformance.assertions import require
from compaction_suite.conformance.histories import histories as drawn
from compaction_suite.conformance.settings import Settings

from .common import as_declared, changed, clause, run, summarizing

T = Settings().threshold_iterations
FEW = hypothesis_settings(max_examples=min(10, hypothesis_settings().max_examples), deadline=None)


@clause("CORE-65")
@FEW
@given(history=drawn(min_rounds=6, max_rounds=12, in_flight=False, long_outputs=False, shapes=(), multimodal=False).map(as_declared))
def test_compaction_keeps_what_it_declares(suite, history):
    """A compaction of a history grown to where the target summarizes ends with at least the newest
    messages its declared retention keeps, as they were (the tail whose tokens are at most half a
    token retention, by the suite's count)."""
    history = summarizing(suite, history)
    _, out = run(suite, history, T, max_context_tokens=1)
    if not (suite.format.well_formed(out) and changed(history, out)):
        return
    require(retention.kept_fewer(history, out, suite.capabilities.keeps, suite.format.tokens), history, out)
