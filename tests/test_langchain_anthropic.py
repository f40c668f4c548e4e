"""The LangChain adapter on Anthropic histories (``format: anthropic-messages``): its drawing of a
Messages API request as the LangChain messages an agent on ``ChatAnthropic`` holds, and the way back
through ``langchain-anthropic`` (``adapters/_langchain_anthropic.py``). The agent loop itself is
``tests/test_langchain_anthropic_loop.py``."""

from __future__ import annotations

import copy

import pytest

from compaction_suite.conformance.formats import anthropic as anth
from compaction_suite.conformance.settings import Settings

pytest.importorskip("langchain_anthropic", reason="langchain-anthropic is not installed (pip install -e '.[langchain]')")
pytest.importorskip("langchain.agents", reason="LangChain is not installed (pip install -e '.[langchain]')")

from compaction_suite.adapters import _langchain_anthropic as native

SIGNATURE = "EuYBCkQYAiJAc2lnbmF0dXJl"
REQUEST = {
    "system": [{"type": "text", "text": "You are a coding agent."}, {"type": "text", "text": "Be brief."}],
    "messages": [
        {"role": "user", "content": "[Context Summary]\n- the build failed before"},
        {"role": "user", "content": [{"type": "text", "text": "Fix the build."}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Run make first.", "signature": SIGNATURE},
            {"type": "text", "text": "Running it."},
            {"type": "tool_use", "id": "toolu_1", "name": "runCommand", "input": {"command": "make"}},
            {"type": "tool_use", "id": "toolu_2", "name": "readFile", "input": {"path": "Makefile"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "make: *** error 2"}], "is_error": True},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "all: build", "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": "<reminder>Keep the task list current.</reminder>"},
        ]},
        {"role": "assistant", "content": [
            {"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"},
            {"type": "tool_use", "id": "toolu_3", "name": "runCommand", "input": {"command": "make -k"}},
        ]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_3", "content": "ok"}]},
        {"role": "assistant", "content": "It builds now."},
    ],
}  # fmt: skip


def test_the_request_is_drawn_as_chat_anthropic_stores_it_and_comes_back_unchanged():
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    conversion = native.to_langchain(copy.deepcopy(REQUEST))
    kinds = [type(m).__name__ for m in conversion.messages]
    assert kinds == ["HumanMessage", "HumanMessage", "AIMessage", "ToolMessage", "ToolMessage", "HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    opened = conversion.messages[2]
    assert isinstance(opened, AIMessage)
    assert [{k: v for k, v in b.items() if v is not None} for b in opened.content] == REQUEST["messages"][2]["content"]  # as the SDK parsed them
    assert [(c["id"], c["name"], c["args"]) for c in opened.tool_calls] == [("toolu_1", "runCommand", {"command": "make"}), ("toolu_2", "readFile", {"path": "Makefile"})]
    assert opened.response_metadata["model_provider"] == "anthropic"
    failed, cached, reminder = conversion.messages[3:6]
    assert isinstance(failed, ToolMessage) and failed.status == "error" and failed.tool_call_id == "toolu_1"
    assert isinstance(cached, ToolMessage) and cached.content == [{"type": "text", "text": "all: build", "cache_control": {"type": "ephemeral"}}]
    assert isinstance(reminder, HumanMessage)
    assert conversion.messages[-1].content == "It builds now."  # one text block: a string, as ChatAnthropic stores it
    assert native.from_langchain(conversion, conversion.messages) == REQUEST


def test_what_a_compactor_changed_is_sent_as_langchain_anthropic_sends_it():
    from langchain_core.messages import HumanMessage

    conversion = native.to_langchain(copy.deepcopy(REQUEST))
    kept = [HumanMessage("Here is a summary of the conversation to date:\n\nmake failed."), *conversion.messages[6:]]
    out = native.from_langchain(conversion, kept)
    assert out["system"] == REQUEST["system"]
    assert out["messages"] == [{"role": "user", "content": "Here is a summary of the conversation to date:\n\nmake failed."}, *REQUEST["messages"][4:]]
    # the open turn now opens without the thinking block it had: ANTH-3, as the API would answer
    cut = native.from_langchain(conversion, [conversion.messages[0], *conversion.messages[6:8]])
    request = {**REQUEST, "messages": REQUEST["messages"][:-1]}
    assert anth.check_final_turn_opens_with_thinking(request, cut["messages"]) is None  # redacted thinking opens it
    edited = conversion.messages[3].model_copy(update={"content": "[cleared]"})
    sent = native.from_langchain(conversion, [*conversion.messages[:3], edited, *conversion.messages[4:]])
    assert sent["messages"][3]["content"][0] == {"type": "tool_result", "content": "[cleared]", "tool_use_id": "toolu_1", "is_error": True}
    assert sent["messages"][:3] == REQUEST["messages"][:3] and sent["messages"][4:] == REQUEST["messages"][4:]


def test_a_system_prompt_in_the_state_is_a_leading_system_message():
    from langchain_core.messages import SystemMessage

    conversion = native.to_langchain(copy.deepcopy(REQUEST), system_in_state=True)
    assert isinstance(conversion.messages[0], SystemMessage) and conversion.messages[0].content == REQUEST["system"]
    assert native.from_langchain(conversion, conversion.messages) == REQUEST
    assert "system" not in native.from_langchain(conversion, conversion.messages[1:])  # dropped from the state: not sent


@pytest.mark.parametrize("factory", ["trim_messages", "summarization_middleware", "context_editing"])
def test_every_langchain_path_declares_the_format(factory):
    from compaction_suite.adapters import langchain

    compactor = getattr(langchain, factory)(Settings(base_url="http://127.0.0.1:9/v1"), format="anthropic-messages")
    assert compactor.capabilities["wire_format"] == "anthropic-messages"
    assert compactor.compact(copy.deepcopy({"messages": REQUEST["messages"][:2]}), iteration=1) == {"messages": REQUEST["messages"][:2]}
    with pytest.raises(ValueError, match="format must be one of"):
        getattr(langchain, factory)(Settings(base_url="http://127.0.0.1:9/v1"), format="anthropic")


def test_deepagents_declares_the_format():
    pytest.importorskip("deepagents", reason="deepagents is not installed (pip install -e '.[deepagents]')")
    from compaction_suite.adapters.deepagents import summarization

    compactor = summarization(Settings(base_url="http://127.0.0.1:9/v1"), format="anthropic-messages")
    assert compactor.capabilities["wire_format"] == "anthropic-messages"
    assert compactor.compact(copy.deepcopy({"messages": REQUEST["messages"][:2]}), iteration=1) == {"messages": REQUEST["messages"][:2]}


def test_every_drawn_history_comes_back_exactly_when_nothing_changed():
    """Each history the suite draws (thinking, redacted thinking, results as text blocks, ``is_error``,
    reminders after results, ``cache_control``, plain-string turns, consecutive user turns) survives
    the drawing and the way back unchanged, in both places of the system prompt."""
    from hypothesis import HealthCheck, given, settings

    @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(anth.histories(max_rounds=8, system=None))
    def round_trip(history):
        for in_state in (False, True):
            conversion = native.to_langchain(copy.deepcopy(history), system_in_state=in_state)
            assert native.from_langchain(conversion, conversion.messages) == history

    round_trip()


def test_context_editing_masks_results_and_inputs_in_place_and_keeps_request_messages_apart():
    """``ClearToolUsesEdit(clear_tool_inputs=True)`` on the LangChain messages: a cleared call's input and
    its result are masked in place (``corresponds``, as chat-completions takes a call masked in place),
    the thinking blocks stay, and two user turns the client would join stay two messages."""
    from compaction_suite.adapters.langchain import context_editing

    request = copy.deepcopy({"messages": [*REQUEST["messages"][1:6], {"role": "user", "content": "Now run the tests."}, REQUEST["messages"][6]]})
    compactor = context_editing(Settings(base_url="http://127.0.0.1:9/v1"), trigger=1, keep=0, clear_tool_inputs=True, format="anthropic-messages")
    out = compactor.compact(copy.deepcopy(request), iteration=1)
    assert len(out["messages"]) == len(request["messages"])
    cleared = out["messages"][1]
    assert [b["type"] for b in cleared["content"]] == ["thinking", "text", "tool_use", "tool_use"] and cleared["content"][0] == request["messages"][1]["content"][0]
    assert cleared["content"][2]["input"] == {} and anth.corresponds(request["messages"][1], cleared)
    assert out["messages"][4]["content"][0]["content"] == "[cleared]" and out["messages"][5] == request["messages"][5]  # not joined
    assert all(anth.corresponds(before, after) for before, after in zip(request["messages"], out["messages"], strict=True))
    assert anth.check_final_turn_opens_with_thinking(request, out["messages"]) is None


def test_trim_messages_counting_with_chat_anthropic_sends_the_endpoint_reversed_prefixes():
    """``token_counter: model`` (``ChatAnthropic`` as ``trim_messages``'s counter, as LangChain documents a
    chat model counter): ``strategy="last"`` sizes prefixes of the *reversed* history, so the provider's
    token counting endpoint receives a ``tool_result`` before its ``tool_use`` and answers HTTP 400, which
    escapes ``trim_messages`` (crash; langchain-ai/langchain#29637, open). SPEC "Wire formats", Decision
    (the token counting endpoint)."""
    from compaction_suite.adapters.langchain import trim_messages
    from compaction_suite.conformance.summarizer_server import SummarizerServer

    history = {"messages": []}
    for i in range(3):
        history["messages"] += [
            {"role": "user", "content": f"read file {i}"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{i}", "name": "read", "input": {"path": f"f{i}"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "x " * 200}]},
            {"role": "assistant", "content": f"file {i} read"},
        ]
    with SummarizerServer() as server:
        compactor = trim_messages(Settings(base_url=server.base_url), format="anthropic-messages", token_counter="model", max_tokens=300)
        with pytest.raises(Exception, match="unexpected `tool_use_id` found in `tool_result` blocks"):
            compactor.compact(history, iteration=1)
        refused = server.token_counts[-1].body["messages"]
    assert refused[0]["role"] == "user" and refused[0]["content"][0]["type"] == "tool_result"  # the newest result first: reversed


@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-5-mini", "davinci-002"])
def test_trim_messages_counting_with_chat_openai_runs_offline_on_the_agents_model(model):
    """``token_counter: model`` on chat-completions: ``ChatOpenAI`` named ``counter_model`` counts with tiktoken,
    whose ranks ``compaction_suite.bpe`` installs offline; a model its ``get_num_tokens_from_messages`` does not
    frame raises from ``compact`` (langchain-ai/langchain#38700: o1/o3/o4 until langchain-openai 1.5.2)."""
    from compaction_suite.adapters.langchain import trim_messages

    history = [{"role": "user", "content": "read the file"}, {"role": "assistant", "content": "x " * 600}, {"role": "user", "content": "and now?"}]
    compactor = trim_messages(Settings(), token_counter="model", counter_model=model, max_tokens=100, start_on=None, end_on=None)
    if model.startswith(("gpt-4", "gpt-5")):
        assert compactor.compact(history, iteration=1) == history[-1:]  # the reply alone is over 100 tokens
    else:
        with pytest.raises(NotImplementedError, match=model):
            compactor.compact(history, iteration=1)
