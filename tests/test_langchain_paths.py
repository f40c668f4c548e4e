"""LangChain's compaction paths and labels, shown with ``create_agent``'s own tool loop (issue 21, points 1 and 4).

The agent model is ``ChatOpenAI`` on the scripted endpoint (``tests/scripted_endpoint.py``, a TEST DOUBLE
behind ``httpx.MockTransport``); a summarizer is ``ChatOpenAI`` on the suite's summarizer test double, a
real HTTP server on 127.0.0.1, in the fault under test. Each test records what the middleware received and
what the state holds after the turn.
"""

from __future__ import annotations

import pytest
from scripted_endpoint import ScriptedEndpoint

from compaction_suite.conformance import oracle
from compaction_suite.conformance.settings import Settings, connected
from compaction_suite.conformance.summarizer_server import SummarizerServer

SYSTEM_PROMPT = "You are a coding agent. (loop test)"
SUMMARY_PREFIX = "Here is a summary of the conversation to date:"


def read_file(path: str) -> str:
    """Read a file (the loop tests' tool)."""
    return f"# {path}\n" + "def handler(event):\n    return process(event)\n" * 25


class LongLoop(ScriptedEndpoint):
    """The scripted agent model, making ``rounds`` tool rounds after each user message (a TEST DOUBLE)."""

    def __init__(self, rounds: int) -> None:
        super().__init__()
        self.rounds = rounds
        self.made = 0

    def answer(self, messages):
        last = messages[-1]
        if last.get("role") == "user" and str(last.get("content", "")).startswith("turn "):
            self.made = 0  # a new turn (a summary, also a user message, is not one)
        if self.made < self.rounds:
            self.made += 1
            n = next(self._ids)
            return {"role": "assistant", "content": None, "tool_calls": [{"id": f"call_l{n}", "type": "function", "function": {"name": self.tool, "arguments": f'{{"path": "f{n}.py"}}'}}]}
        return {"role": "assistant", "content": f"done after {self.made} tool rounds"}


def _agent(middleware, endpoint):
    pytest.importorskip("langchain.agents", reason="LangChain is not installed (pip install -e '.[langchain]')")
    import httpx
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(
        model="scripted", api_key="scripted", base_url="http://scripted.invalid/v1", max_retries=0,
        http_client=httpx.Client(transport=endpoint.transport()),
    )  # fmt: skip
    return create_agent(model, tools=[tool(read_file)], system_prompt=SYSTEM_PROMPT, middleware=[middleware])


def _turns(agent, turns: int, messages=None):
    from langchain_core.messages import HumanMessage

    messages = list(messages or [])
    for turn in range(turns):
        messages = agent.invoke({"messages": [*messages, HumanMessage(f"turn {turn}: read the files")]})["messages"]
    return messages


def _summarizer(settings):
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model=settings.model, base_url=settings.base_url, api_key=settings.api_key)  # the client's default retries


# --- ContextEditingMiddleware -------------------------------------------------------------------------


def test_langchain_context_editing_clears_tool_results_in_the_model_request_between_rounds():
    """``ContextEditingMiddleware(ClearToolUsesEdit)`` in ``create_agent``: ``wrap_model_call`` runs before
    every model call with every call answered, the system prompt apart; the model receives old results as
    the placeholder, the state keeps them; the adapter gives what the model received."""
    pytest.importorskip("langchain.agents.middleware", reason="LangChain is not installed (pip install -e '.[langchain]')")
    from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware

    from compaction_suite.adapters.langchain import context_editing, from_langchain

    seen: list[list[dict]] = []

    class Recording(ContextEditingMiddleware):
        def wrap_model_call(self, request, handler):
            seen.append(from_langchain(list(request.messages)))
            return super().wrap_model_call(request, handler)

    endpoint = LongLoop(rounds=4)
    state = _turns(_agent(Recording(edits=[ClearToolUsesEdit(trigger=500, keep=1)]), endpoint), 2)
    assert len(seen) == len(endpoint.requests)
    for history in seen:
        assert oracle.check_calls_have_one_result(history) is None and not [m for m in history if m["role"] == "system"]
    assert any(h[-1]["role"] == "tool" for h in seen)  # mid-turn
    sent_tools = [m["content"] for m in endpoint.requests[-1]["messages"] if m["role"] == "tool"]
    assert sent_tools[:-1] == ["[cleared]"] * (len(sent_tools) - 1) and sent_tools[-1] != "[cleared]"
    assert all(m.content != "[cleared]" for m in state if m.type == "tool")  # the edit is per request
    assert all(body["messages"][0]["role"] == "system" for body in endpoint.requests)
    compactor = context_editing(Settings(base_url="http://127.0.0.1:9/v1"), trigger=500, keep=1)
    out = compactor.compact(seen[-1], iteration=1)
    assert [m.get("content") for m in out if m["role"] == "tool"] == sent_tools
    assert compactor.capabilities == {"called": "between_rounds", "system_prompt": "outside"}


# --- SummarizationMiddleware: labels from the loop --------------------------------------------------------


def _summarization(settings, **kw):
    from langchain.agents.middleware import SummarizationMiddleware

    return SummarizationMiddleware(_summarizer(settings), trigger=("tokens", kw.pop("trigger_tokens")), keep=("messages", kw.pop("keep_messages")), **kw)


def test_langchain_summarization_2000_20_raises_in_create_agent_under_a_persistent_500():
    """``SummarizationMiddleware(trigger_tokens=2000, keep_messages=20)`` reaches its summarizer in a
    four-turn session; with the summarizer answering HTTP 500 every time (its retries spent), the agent's
    turn raises: a crash, which LangChain documents (``DOCUMENTED``)."""
    pytest.importorskip("langchain.agents.middleware", reason="LangChain is not installed (pip install -e '.[langchain]')")
    import openai

    with SummarizerServer() as server:
        server.fault("500")
        agent = _agent(_summarization(connected(Settings(), server.base_url), trigger_tokens=2000, keep_messages=20), LongLoop(rounds=2))
        with pytest.raises(openai.InternalServerError):
            _turns(agent, 4)
        assert server.requests, "the summarizer was never called"


def test_langchain_summarization_2000_20_stores_an_empty_summary_in_create_agent():
    """The same configuration with the summarizer answering empty content: the state's older messages are
    replaced by LangChain's summary framing with nothing after it (loss, CORE-11)."""
    pytest.importorskip("langchain.agents.middleware", reason="LangChain is not installed (pip install -e '.[langchain]')")
    with SummarizerServer() as server:
        server.fault("empty_content")
        state = _turns(_agent(_summarization(connected(Settings(), server.base_url), trigger_tokens=2000, keep_messages=20), LongLoop(rounds=2)), 4)
        assert server.requests, "the summarizer was never called"
    summaries = [m for m in state if m.type == "human" and str(m.content).startswith(SUMMARY_PREFIX)]
    assert [str(m.content).strip() for m in summaries] == [SUMMARY_PREFIX]


def test_langchain_summarization_writes_a_placeholder_summary_without_calling_its_summarizer():
    """The label of the CORE-11 reproducers "under HTTP 500": in a long tool loop after the only user
    message, no human message falls in the summary's trim window, and the middleware replaces the older
    history with "Previous conversation was too long to summarize." *without calling the summarizer*
    (langchain-ai/langchain#39261), healthy or failing: the finding is that, not a summarizer failure."""
    pytest.importorskip("langchain.agents.middleware", reason="LangChain is not installed (pip install -e '.[langchain]')")
    for fault in (None, "500"):
        with SummarizerServer() as server:
            if fault:
                server.fault(fault)
            middleware = _summarization(connected(Settings(), server.base_url), trigger_tokens=1500, keep_messages=4, trim_tokens_to_summarize=300)
            state = _turns(_agent(middleware, LongLoop(rounds=12)), 1)
            assert not server.requests, f"the summarizer was called (fault {fault})"
        summaries = [str(m.content) for m in state if m.type == "human" and str(m.content).startswith(SUMMARY_PREFIX)]
        assert summaries and "Previous conversation was too long to summarize." in summaries[0], fault


def test_langchain_tool_messages_native_shape_is_what_create_agent_records():
    """``tool_messages: "native"``: a ``response_format="content_and_artifact"`` tool makes ``create_agent``
    record a ``ToolMessage`` with an ``artifact`` beside its content; the adapter draws the same fields, and
    langchain_openai sends neither (the OpenAI request holds the content only)."""
    pytest.importorskip("langchain.agents", reason="LangChain is not installed (pip install -e '.[langchain]')")
    import httpx
    from langchain.agents import create_agent
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    from compaction_suite.adapters.langchain import from_langchain, to_langchain

    @tool(response_format="content_and_artifact")
    def read_file(path: str):
        """Read a file, returning its text and the raw bytes read."""
        return f"contents of {path}", {"raw": f"contents of {path}"}

    endpoint = ScriptedEndpoint()
    model = ChatOpenAI(model="scripted", api_key="scripted", base_url="http://scripted.invalid/v1", max_retries=0, http_client=httpx.Client(transport=endpoint.transport()))
    state = create_agent(model, tools=[read_file]).invoke({"messages": [HumanMessage("read the files")]})["messages"]
    recorded = [m for m in state if m.type == "tool"]
    assert recorded and all(m.artifact == {"raw": m.content} and m.status == "success" for m in recorded)
    sent = [m for m in endpoint.requests[-1]["messages"] if m["role"] == "tool"]
    assert all(set(m) == {"role", "content", "tool_call_id"} for m in sent)
    drawn, notes = to_langchain(from_langchain(state), tool_messages="native")
    assert [(m.artifact, m.status) for m in drawn if m.type == "tool"] == [(m.artifact, m.status) for m in recorded]
    assert from_langchain(drawn, notes) == from_langchain(state)


# --- path "agent": create_agent replaying a history (SPEC FIRE-7) -----------------------------------------


def _replaying(server: SummarizerServer, **given):
    from compaction_suite.adapters.langchain import summarization_middleware

    settings = Settings(base_url=server.base_url, api_key="test", model="gpt-4o-mini")
    options = {"path": "agent", "trigger_tokens": None, "trigger_fraction": 0.8, "window": 4000, "tools": 10, "system_prompt_tokens": 700}
    return summarization_middleware(settings, **{**options, **given})


def _rounds(n: int, size: int) -> list[dict]:
    import json

    found: list[dict] = []
    for k in range(n):
        call = {"id": f"call_r{k}", "type": "function", "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/m{k}.py"})}}
        found += [
            {"role": "user", "content": f"turn {k}: read src/m{k}.py"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call["id"], "content": f"# m{k}\n" + "def parse(x):\n    return x\n" * size},
            {"role": "assistant", "content": f"m{k} defines parse."},
        ]
    return found


def test_the_replay_gives_back_a_history_its_trigger_leaves_alone_exactly():
    """Replayed through ``create_agent`` below the trigger, the history comes back as it went in: each
    model answer is the history's own (the double's script), each tool result the history's, in order;
    the agent's model saw the system prompt and every tool beside the messages."""
    pytest.importorskip("langchain.agents", reason="LangChain is not installed (pip install -e '.[langchain]')")
    history = [*_rounds(3, 5), {"role": "user", "content": "and the last one?"}]
    with SummarizerServer() as server:
        compactor = _replaying(server)
        assert compactor.capabilities["request_window"] == 4000
        assert compactor.compact(history, iteration=1) == history
        requests = compactor.model_double.server().requests
        assert not server.requests  # no summary asked
    assert len(requests) == 3 * 2 + 1  # two model calls a turn, and the last user turn's, which the history does not answer
    first = requests[0].body
    assert first["messages"][0]["role"] == "system" and len(first["tools"]) == 1 + 10


def _pasting_screenshots(shots: int) -> dict:
    import base64

    from compaction_suite.conformance.histories import flat_png

    images = [{"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(flat_png(1280, 800, 50 * k)).decode()}} for k in range(shots)]
    return {"role": "user", "content": [{"type": "text", "text": f"here are {shots} screenshots of the failing build"}, *images]}


@pytest.mark.parametrize(("tokens_per_image", "overflows"), [(None, True), (1105, False)])
def test_pasted_screenshots_pass_the_window_unless_the_counter_counts_them_as_the_provider_does(tokens_per_image, overflows):
    """SPEC FIRE-7 Decision (pasted screenshots; langchain-ai/langchain#39857): a turn pasting three 1280x800
    screenshots (1,105 tokens each to OpenAI) after about half a window of text. ``count_tokens_approximately``
    counts each image as 85, so the trigger stays below 80% and the request goes out over the window; the
    same agent with ``token_counter=count_tokens_approximately(tokens_per_image=1105)`` summarizes first."""
    pytest.importorskip("langchain.agents", reason="LangChain is not installed (pip install -e '.[langchain]')")
    history = [*_rounds(10, 30), _pasting_screenshots(3), {"role": "assistant", "content": "each shows the same failure"}, {"role": "user", "content": "and now?"}]
    with SummarizerServer() as server:
        compactor = _replaying(server, window=6000, tools=0, system_prompt_tokens=0, keep_messages=6, tokens_per_image=tokens_per_image)
        if overflows:
            with pytest.raises(Exception, match="Input tokens exceed the configured limit of 6000 tokens"):
                compactor.compact(history, iteration=1)
        else:
            out = compactor.compact(history, iteration=1)
            assert server.requests and out[-3:] == history[-3:]


def test_the_replay_summarizes_on_the_way_and_the_model_reports_usage_over_the_whole_request():
    pytest.importorskip("langchain.agents", reason="LangChain is not installed (pip install -e '.[langchain]')")
    history = _rounds(40, 12)
    with SummarizerServer() as server:
        compactor = _replaying(server)
        out = compactor.compact(history, iteration=1)
        summaries = len(server.requests)
    assert summaries and len(out) < len(history) and oracle.same(out[-4:], history[-4:])
    assert str(out[0]["content"]).startswith(SUMMARY_PREFIX)


# --- summarizer=: a summarizer of its own, smaller than the agent's model (langchain 1.4.5 on) --------------


def test_a_summarizer_of_its_own_meets_its_window_and_the_middleware_retries_with_the_middle_cut():
    """``SummarizationMiddleware(model, summarizer=ChatOpenAI(profile={"max_input_tokens": 2000}))`` in
    ``create_agent``'s loop, its trigger (3,000 tokens) above the summarizer's window: the summary is asked of
    the summarizer, never the agent's model; the first summary prompt is over the window and answered as
    OpenAI answers it (``context_length_exceeded``), and the middleware asks again with the middle of the
    history cut out, which fits (langchain 1.4.4 on). What the adapter's ``summarizer_window`` declares: the
    window of the model the middleware sends its summary prompts to."""
    middleware_module = pytest.importorskip("langchain.agents.middleware", reason="LangChain is not installed (pip install -e '.[langchain]')")
    if "summarizer" not in __import__("inspect").signature(middleware_module.SummarizationMiddleware.__init__).parameters:
        pytest.skip("this langchain's SummarizationMiddleware takes no summarizer= (1.4.5 on)")
    import httpx
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    from compaction_suite.adapters.langchain import summarization_middleware

    endpoint = LongLoop(rounds=6)
    model = ChatOpenAI(model="scripted", api_key="scripted", base_url="http://scripted.invalid/v1", max_retries=0, http_client=httpx.Client(transport=endpoint.transport()))
    with SummarizerServer() as server:
        server.window(2000)
        settings = connected(Settings(), server.base_url)
        summarizer = ChatOpenAI(model=settings.model, base_url=settings.base_url, api_key=settings.api_key, max_retries=0, profile={"max_input_tokens": 2000})
        middleware = middleware_module.SummarizationMiddleware(model, trigger=("tokens", 3000), keep=("messages", 6), summarizer=summarizer)
        agent = create_agent(model, tools=[tool(read_file)], system_prompt=SYSTEM_PROMPT, middleware=[middleware])
        state = _turns(agent, 3)
        prompts = [str(r.body["messages"]) for r in server.requests if isinstance(r.body, dict) and r.body.get("messages")]
        declared = summarization_middleware(settings, trigger_tokens=3000, keep_messages=6, summarizer_window=2000).capabilities
    assert prompts, "the summarizer was never asked"
    assert not any(str(r["messages"][0].get("content", "")).startswith("<role>") for r in endpoint.requests), "the agent's model was asked a summary"
    assert "middle of conversation omitted" not in prompts[0] and "middle of conversation omitted" in prompts[1]
    assert any(m.type == "human" and str(m.content).startswith(SUMMARY_PREFIX) for m in state)
    assert declared["summarizer_window"] == summarizer.profile["max_input_tokens"]
