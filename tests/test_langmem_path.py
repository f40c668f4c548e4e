"""langmem's ``SummarizationNode`` as ``create_react_agent``'s ``pre_model_hook``: the adapter's path
(``adapters/_langmem.py``) gives what LangGraph's own agent loop sends its model.

The agent model is ``ChatOpenAI`` on the scripted endpoint (``tests/scripted_endpoint.py``, a TEST DOUBLE
behind ``httpx.MockTransport``); the summarizer is ``ChatOpenAI`` on the suite's summarizer test double
(127.0.0.1).
"""

from __future__ import annotations

import warnings

import pytest
from scripted_endpoint import ScriptedEndpoint

from compaction_suite.conformance.settings import Settings, connected
from compaction_suite.conformance.summarizer_server import SummarizerServer

SYSTEM_PROMPT = "You are a coding agent. (langmem loop test)"


class Answering(ScriptedEndpoint):
    """The agent model answering text at once (a TEST DOUBLE): one model request per turn."""

    def answer(self, messages):
        return {"role": "assistant", "content": "answered"}


def read_file(path: str) -> str:
    """Read a file (the loop test's tool)."""
    return f"# {path}\n" + "x = 1\n" * 120


def _history():
    """A thread of tool rounds with ids, one call each (a cut between parallel results is langmem#126's
    fault, not this test's point), as the agent's state holds it, then a new user turn."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    messages = [HumanMessage("read the project files", id="h0")]
    for n in range(8):
        calls = [{"id": f"c{n}", "name": "read_file", "args": {"path": f"a{n}.py"}}]
        messages.append(AIMessage("", tool_calls=calls, id=f"a{n}"))
        messages += [ToolMessage(read_file(f"{c['id']}.py"), tool_call_id=c["id"], id=f"t{c['id']}") for c in calls]
    return [*messages, HumanMessage("now summarize what you read", id="h1")]


def test_create_react_agent_sends_its_model_the_hooks_llm_input_messages():
    """One turn of ``create_react_agent(pre_model_hook=SummarizationNode(..., output_messages_key=
    "llm_input_messages"))`` on a thread past the node's trigger: the model request holds the agent's prompt
    and then exactly what the adapter's ``hooked`` gives for that state (a summary was written)."""
    pytest.importorskip("langmem.short_term", reason="langmem is not installed (pip install -e '.[langchain]')")
    import httpx
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent

    from compaction_suite.adapters import _langmem
    from compaction_suite.adapters.langchain import from_langchain

    endpoint = Answering()
    with SummarizerServer() as server:
        settings = connected(Settings(), server.base_url)
        summarizer = ChatOpenAI(model=settings.model, base_url=settings.base_url, api_key=settings.api_key, max_retries=0)
        o = {**_langmem.DEFAULTS, "max_tokens": 1024, "max_summary_tokens": 256}
        model = ChatOpenAI(
            model="scripted", api_key="scripted", base_url="http://scripted.invalid/v1", max_retries=0,
            http_client=httpx.Client(transport=endpoint.transport()),
        )  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # create_react_agent's deprecation in favour of create_agent
            agent = create_react_agent(model, tools=[tool(read_file)], prompt=SYSTEM_PROMPT, pre_model_hook=_langmem.node(summarizer, o))
        agent.invoke({"messages": _history()})
        expected = from_langchain(_langmem.hooked(_langmem.node(summarizer, o), _history()))
        assert len(server.requests) == 2, "the node did not summarize (once in the loop, once for the expectation)"
    (request,) = endpoint.requests
    sent = request["messages"]
    assert sent[0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert [m["role"] for m in sent[1:]] == [m["role"] for m in expected]
    assert [m.get("content") for m in sent[1:]] == [m.get("content") for m in expected]
    assert len(expected) < len(_history())


def test_sizes_langmem_refuses_come_out_of_compact_not_the_factory():
    """``max_summary_tokens`` not below ``max_tokens``: the factory builds the node as a user's program does, and
    langmem's own refusal comes out of ``compact`` (CORE-10's crash), not out of the factory (a contract error)."""
    pytest.importorskip("langmem.short_term", reason="langmem is not installed (pip install -e '.[langchain]')")
    from compaction_suite.adapters.langchain import langmem_summarization

    with SummarizerServer() as server:
        compactor = langmem_summarization(connected(Settings(), server.base_url), max_tokens=256, max_summary_tokens=256)
        with pytest.raises(ValueError, match="max_summary_tokens"):
            compactor.compact([{"role": "user", "content": "hello"}], iteration=1)
