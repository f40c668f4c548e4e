"""``trim_messages`` as ``create_react_agent``'s ``pre_model_hook`` (``path: "hook"``), LangGraph's documented
recipe, replayed turn by turn (``adapters/_langgraph_hook.py``, SPEC FIRE-7).

The agent model is ``ChatOpenAI`` on the adapter's context-window double (a TEST DOUBLE on 127.0.0.1);
nothing reaches a network.
"""

from __future__ import annotations

import warnings

import pytest
from test_langchain_paths import _rounds

from compaction_suite.conformance.settings import Settings

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _hooked(**given):
    from compaction_suite.adapters.langchain import trim_messages

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent's deprecation in favour of create_agent
        return trim_messages(Settings(base_url="http://127.0.0.1:9/v1", api_key="test", model="gpt-4o-mini"), path="hook", **given)


def test_the_hook_replay_sends_the_trimmed_view_and_gives_back_the_thread():
    """Below any overflow, the thread comes back as it went in (the hook leaves the state whole), while each
    model request holds only the trimmed view: the newest rounds within ``max_tokens``."""
    pytest.importorskip("langgraph.prebuilt", reason="LangGraph is not installed (pip install -e '.[langchain]')")
    history = [*_rounds(12, 20), {"role": "user", "content": "and the last one?"}]
    compactor = _hooked(max_tokens=600, window=8000)
    assert compactor.capabilities["request_window"] == 8000
    assert compactor.compact(history, iteration=1) == history
    requests = compactor.model_double.server().requests
    assert len(requests) == 12 * 2 + 1
    last = requests[-1].body["messages"]
    assert last[-1] == {"role": "user", "content": "and the last one?"} and len(last) < len(history)


def test_a_turn_over_the_trim_budget_sends_the_whole_history():
    """SPEC FIRE-7 Decision (a pasted log; langchain-ai/langgraph#8925): a user turn larger than the trim's
    budget but within the window, after rounds that with it pass the window. ``trim_messages`` (start on a
    human message) keeps nothing, the agent reads ``llm_input_messages or messages`` and sends everything:
    the double answers with OpenAI's overflow. With ``allow_partial`` the trim keeps part of the turn and
    the request fits."""
    pytest.importorskip("langgraph.prebuilt", reason="LangGraph is not installed (pip install -e '.[langchain]')")
    pasted = {"role": "user", "content": "here is the build log\n" + "log line: module finished without warnings\n" * 700}
    history = [*_rounds(8, 60), pasted, {"role": "assistant", "content": "the build passed"}]
    with pytest.raises(Exception, match="Input tokens exceed the configured limit of 8000 tokens"):
        _hooked(max_tokens=1024, window=8000).compact(history, iteration=1)
    assert _hooked(max_tokens=1024, window=8000, allow_partial=True).compact(history, iteration=1) == history
