"""Strands with its default model, ``BedrockModel``, against the summarizer double's Converse API
(issue 21: what Bedrock receives), proven with Strands' own agent loop.

``Agent(model=BedrockModel(...))`` on a history over the model's window: the double answers the
agent's request as Bedrock answers a prompt too long ("Input is too long for requested model."),
``BedrockModel`` turns that into ``ContextWindowOverflowException``, ``Agent`` calls the summarizing
manager's ``reduce_context``, whose summarization request and the retried agent request the double
receives as Bedrock would. The adapter (``model="bedrock"``, reactive path) must send the same
summarization request and judge, as its output, the history the loop sends next.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from compaction_suite.conformance import converse
from compaction_suite.conformance.formats.anthropic import tokens
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.summarizer_server import SummarizerServer
from compaction_suite.text import prompt_tokens

pytest.importorskip("strands.models.bedrock", reason="Strands Agents is not installed (pip install -e '.[strands]')")
from compaction_suite.adapters import strands as adapter

SYSTEM = "You are a coding agent."
BIG = "make: *** [Makefile:12: build] Error 2 " * 60


def _history() -> dict[str, Any]:
    """Two tool rounds with long results, then shorter turns, ending with the user's question."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Fix the build."}]
    for n in (1, 2):
        messages += [
            {"role": "assistant", "content": [{"type": "text", "text": f"Running step {n}."}, {"type": "tool_use", "id": f"toolu_{n}", "name": "runCommand", "input": {"command": f"make step{n}"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": BIG}]},
        ]  # fmt: skip
    messages += [
        {"role": "assistant", "content": [{"type": "text", "text": "Both steps fail in the linker."}]},
        {"role": "user", "content": "Try the other compiler."},
        {"role": "assistant", "content": [{"type": "text", "text": "Switched to clang; it links."}]},
        {"role": "user", "content": "Now run the tests and tell me what failed."},
    ]
    return {"system": SYSTEM, "messages": messages}


def _strands(messages: list[dict[str, Any]]) -> Any:
    return adapter.Conversion(copy.deepcopy(messages)).strands


def _sent(model: Any, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What ``BedrockModel`` sends for Anthropic ``messages`` (through the adapter's conversion)."""
    return model._format_bedrock_messages(_strands(messages))


def test_the_bedrock_loop_sends_what_the_adapter_judges() -> None:
    from strands import Agent
    from strands.agent.conversation_manager import SummarizingConversationManager

    history = _history()
    with SummarizerServer() as server:
        settings = Settings(base_url=server.base_url, api_key="test-double", summarizer_timeout=10.0)
        model = adapter._bedrock_model(settings)
        first = converse.as_messages({"system": [{"text": SYSTEM}], "messages": _sent(model, history["messages"])})
        server.window(prompt_tokens(first) - 1)  # the agent's request is one token over the model's window

        agent = Agent(
            model=model, system_prompt=SYSTEM, messages=_strands(history["messages"]),
            conversation_manager=SummarizingConversationManager(summary_ratio=0.3, preserve_recent_messages=4), callback_handler=None,
        )  # fmt: skip
        agent()
        loop = server.exchanges
        server.reset()
        server.window(prompt_tokens(first) - 1)
        compactor = adapter.summarizing(settings, model="bedrock", path="reactive", summary_ratio=0.3, preserve_recent_messages=4, context_window_limit=tokens(history) - 1)
        out = compactor.compact(copy.deepcopy(history), iteration=1)
        compaction = server.exchanges

    assert [e.request.path.rsplit("/", 1)[-1] for e in loop] == ["converse-stream"] * 3, "the overflowing request, the summarization, the retry"
    assert loop[0].over_window is not None and "Input is too long for requested model" in str(loop[0].over_window)
    summarization, retried = loop[1].request.body, loop[2].request.body
    assert loop[1].rejected is None and loop[1].answer and "toolConfig" in summarization, "Strands' no-op tool answers Bedrock's tool-config rule"
    assert [e.request.body for e in compaction] == [summarization], "the adapter sends the loop's summarization request"
    assert retried["messages"] == _sent(model, out["messages"]), "the loop sends next the history the adapter returns"
    assert len(out["messages"]) < len(history["messages"]) and loop[1].answer in str(out["messages"][0])


def test_bedrock_blocks_read_back_as_the_anthropic_blocks_they_came_from() -> None:
    """`renderer` for ``BedrockModel``: a Strands block sent as Converse reads back as the Anthropic block
    the adapter drew it from (tool use and result with its error status, thinking, redacted thinking, an image)."""
    with SummarizerServer() as server:
        render = adapter.renderer(adapter._bedrock_model(Settings(base_url=server.base_url, api_key="k")))
    drawn = [
        {"type": "text", "text": "hello"},
        {"type": "tool_use", "id": "toolu_1", "name": "runCommand", "input": {"command": "make"}},
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "boom"}], "is_error": True},
        {"type": "thinking", "thinking": "Run make first.", "signature": "EuYBsig"},
        {"type": "redacted_thinking", "data": "AAEC"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
    ]
    assert [render(adapter._block(block)) for block in drawn] == drawn


def test_the_model_option_is_checked() -> None:
    with pytest.raises(ValueError, match="model must be one of anthropic, bedrock"):
        adapter.sliding_window(Settings(), model="vertex")


def test_the_boto_session_alone_reaches_the_double(tmp_path, monkeypatch) -> None:
    """Releases before 1.8 take no ``endpoint_url``: the session's own AWS config file routes the client
    to the double, whatever AWS profile the environment names, with the dummy credentials."""
    monkeypatch.setenv("AWS_PROFILE", "someone-elses")
    with SummarizerServer() as server:
        session = adapter._boto_session(str(tmp_path), server.base_url.removesuffix("/v1"))
        bedrock = session.client("bedrock-runtime")
        answer = bedrock.converse(modelId="m", messages=[{"role": "user", "content": [{"text": "Fix the build."}]}])
        assert answer["output"]["message"]["content"][0]["text"].startswith("Deterministic test-double summary")
        assert bedrock.meta.region_name == adapter.BEDROCK_REGION and len(server.exchanges) == 1


TERRA = "us.openai.gpt-5.6-terra"
"""A Bedrock cross-region id of an OpenAI-served model: 1,050,000 tokens ("confirmed live limit: 1,050,000
tokens", strands-agents/harness-sdk#3718, openai.gpt-5.6-terra on Bedrock Mantle)."""


def _below_a_million_token_trigger() -> dict[str, Any]:
    """A history of some 2,700 tokens: a quarter of the trigger at 1% of TERRA's window (10,500 tokens),
    more than 1% of Strands' 200,000-token default."""
    history = _history()
    for message in history["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                block["content"] = BIG * 2
    assert 2_000 < tokens(history) < 10_500 // 2
    return history


def test_model_id_leaves_the_window_to_strands_and_the_trigger_to_the_model(monkeypatch) -> None:
    """``model_id`` on the proactive path: ``BedrockModel(model_id=...)`` with no ``context_window_limit``,
    so Strands resolves the window from its own table (the installed release finds TERRA's); the adapter
    declares the trigger at the model's real window. Where the lookup misses the id (1.54.0's single prefix
    strip, strands-agents/harness-sdk#4220), Strands falls back to 200,000 tokens and summarizes a history
    at a quarter of the declared trigger: what FIRE-2 names."""
    from strands.models import _defaults

    options = {"model": "bedrock", "model_id": TERRA, "context_window_limit": 1_050_000, "compression_threshold": 0.01, "preserve_recent_messages": 2}
    history = _below_a_million_token_trigger()
    with SummarizerServer() as server:
        settings = Settings(base_url=server.base_url, api_key="test-double", summarizer_timeout=10.0)
        compactor = adapter.summarizing(settings, **options)
        assert compactor.capabilities["trigger"] == {"tokens": 10_500}
        assert compactor.compact(copy.deepcopy(history), iteration=1) == history and not server.exchanges
        assert adapter._windowed_agent(settings, SYSTEM, [], None, "bedrock", TERRA, 4000).model.context_window_limit == 1_050_000

        monkeypatch.delitem(_defaults._CONTEXT_WINDOW_LIMITS, "gpt-5.6-terra")  # the id not found
        out = adapter.summarizing(settings, **options).compact(copy.deepcopy(history), iteration=1)
        assert out != history and f"/model/{TERRA}/converse-stream" in server.exchanges[0].request.path


def test_model_id_is_the_proactive_paths_option() -> None:
    with pytest.raises(ValueError, match="model_id applies to path=proactive"):
        adapter.summarizing(Settings(), path="reactive", model_id=TERRA)
    with pytest.raises(ValueError, match="model_id applies to path=proactive"):
        adapter.sliding_window(Settings(), path="reactive", model_id=TERRA)
