"""The reactive path with the overflow coming from the provider (SPEC FIRE-5, issue 21): the TEST
DOUBLE answers a request over the model's window with each provider's real overflow answer
(`conformance.overflow`), and Strands' own model classes read it.

Shown here: every answer as its client library raises it; Strands' own ``Agent`` loop reducing and
retrying on the double's answer through ``BedrockModel`` and crashing when the model class does not
recognise it (the shape of strands-agents/harness-sdk#1712, #1912, #3969); the adapter's reactive
path doing what that loop does, through each model class, and crashing where the loop crashes.
"""

from __future__ import annotations

import re

import pytest

from compaction_suite.conformance import overflow
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.summarizer_server import SummarizerServer

WINDOW = 1000


def _history(rounds: int = 8, *, last: str = "user") -> dict:
    messages: list[dict] = []
    for i in range(rounds):
        messages += [
            {"role": "user", "content": f"turn {i}: read the build log and say what failed " * 8},
            {"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{i}", "name": "read_file", "input": {"path": f"build-{i}.log"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "log line " * 60}]},
            {"role": "assistant", "content": f"round {i} read"},
        ]  # fmt: skip
    if last == "user":
        messages.append({"role": "user", "content": "what next?"})
    return {"system": "You are a coding agent.", "messages": messages}


@pytest.fixture
def server():
    with SummarizerServer() as double:
        yield double


# --- the catalogue


def test_every_overflow_answer_is_cited_and_fills_in_its_numbers():
    for api, answers in overflow.ANSWERS.items():
        assert answers and len({a.name for a in answers}) == len(answers), api
        for answer in answers:
            assert "#" in answer.source or "docs" in answer.source, (api, answer.name)
            status, body = overflow.answer(api, answer.name, 1234, 1000, {"model": "m", "max_tokens": 16}, "[double]")
            text = overflow.message(body)
            unfilled = re.search(r"\{(?:tokens|window|model|output|total|over)\}", text)
            assert status == answer.status and unfilled is None and text.endswith("[double]"), (api, answer.name, text)


def test_an_unknown_answer_is_refused_naming_the_choices(server):
    with pytest.raises(ValueError, match="input-too-long, prompt-too-long, mantle"):
        server.window(WINDOW, {"converse": "nope"})


@pytest.mark.parametrize("name", overflow.names("chat"))
def test_the_chat_answers_reach_the_openai_client_as_sent(server, name):
    openai = pytest.importorskip("openai")
    server.window(10, {"chat": name})
    client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
    with pytest.raises(openai.APIStatusError) as raised:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hello " * 40}])
    answer = overflow.chosen("chat", name)
    assert raised.value.status_code == answer.status
    assert str(getattr(raised.value, "code", None)) == str(answer.code if answer.shape != "vllm" else answer.status)
    assert answer.text.split("{")[0] in str(raised.value)
    assert server.mode()["overflow"] == {"chat": name}


def test_the_mantle_answer_of_the_responses_api(server):
    openai = pytest.importorskip("openai")
    server.window(10, {"responses": "bedrock-mantle"})
    client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
    with pytest.raises(openai.BadRequestError) as raised:
        client.responses.create(model="openai.gpt-5.6-terra", input="hello " * 40)
    assert raised.value.code == "validation_error" and "exceed model maximum (10) for openai.gpt-5.6-terra" in str(raised.value)


@pytest.mark.parametrize("name", overflow.names("converse"))
def test_the_converse_answers_reach_boto3_as_validation_exceptions(server, tmp_path, name):
    pytest.importorskip("boto3")
    from compaction_suite.adapters.strands import _boto_session

    server.window(10, {"converse": name})
    client = _boto_session(str(tmp_path), server.base_url.removesuffix("/v1")).client("bedrock-runtime")
    with pytest.raises(client.exceptions.ValidationException) as raised:
        client.converse(modelId="m", messages=[{"role": "user", "content": [{"text": "hello " * 40}]}])
    assert overflow.chosen("converse", name).text.split("{")[0] in str(raised.value)


def test_the_converse_stream_answer_comes_inside_the_event_stream(server, tmp_path):
    """``stream-max-tokens`` on ``/converse-stream``: HTTP 200, then Bedrock's ``validationException``
    event, which botocore raises as ``EventStreamError`` (a ``ClientError``) while the stream is read."""
    pytest.importorskip("boto3")
    from botocore.exceptions import EventStreamError  # type: ignore[import-untyped]

    from compaction_suite.adapters.strands import _boto_session

    server.window(10, {"converse": "stream-max-tokens"})
    client = _boto_session(str(tmp_path), server.base_url.removesuffix("/v1")).client("bedrock-runtime")
    answer = client.converse_stream(modelId="m", messages=[{"role": "user", "content": [{"text": "hello " * 40}]}])
    assert answer["ResponseMetadata"]["HTTPStatusCode"] == 200
    with pytest.raises(EventStreamError) as raised:
        list(answer["stream"])
    assert raised.value.response["Error"]["Code"] == "validationException"
    assert "input length and `max_tokens` exceed context limit" in str(raised.value) and server.counts["over_window"] == 1


# --- Strands' own loop


def _bedrock_agent(server, messages, manager):
    strands = pytest.importorskip("strands")
    from compaction_suite.adapters.strands import _bedrock_model

    return strands.Agent(
        model=_bedrock_model(Settings(base_url=server.base_url)), messages=messages, conversation_manager=manager, callback_handler=None
    )


def _strands_messages(history):
    from compaction_suite.adapters.strands import Conversion

    return Conversion(history["messages"]).strands


@pytest.mark.parametrize("name", overflow.names("converse"))
def test_strands_agent_loop_reduces_and_retries_on_the_bedrock_overflow_answer(server, name):
    """Strands' ``Agent`` on ``BedrockModel``: the double's overflow answer becomes
    ``ContextWindowOverflowException``, the sliding window reduces, the call is retried and answered."""
    pytest.importorskip("strands")
    from strands.agent.conversation_manager import SlidingWindowConversationManager

    server.window(WINDOW, {"converse": name})
    agent = _bedrock_agent(server, _strands_messages(_history(last="assistant")), SlidingWindowConversationManager(window_size=12))
    agent("what next?")
    assert server.counts["over_window"] >= 1 and server.counts["summary"] == 1
    assert len(agent.messages) <= 12 and agent.messages[-1]["role"] == "assistant"


def test_strands_agent_loop_crashes_where_bedrock_model_does_not_recognise_the_answer(server, monkeypatch):
    """The same loop with ``BedrockModel``'s overflow texts as before 1.26.0 (no "prompt is too long"):
    the raw ``ValidationException`` ends the invocation (strands-agents/harness-sdk#1712, #1912)."""
    pytest.importorskip("strands")
    from botocore.exceptions import ClientError
    from strands.agent.conversation_manager import SlidingWindowConversationManager
    from strands.models import bedrock

    monkeypatch.setattr(
        bedrock,
        "BEDROCK_CONTEXT_WINDOW_OVERFLOW_MESSAGES",
        [m for m in bedrock.BEDROCK_CONTEXT_WINDOW_OVERFLOW_MESSAGES if "prompt is too long" not in m],
    )
    server.window(WINDOW, {"converse": "prompt-too-long"})
    agent = _bedrock_agent(server, _strands_messages(_history(last="assistant")), SlidingWindowConversationManager(window_size=12))
    with pytest.raises(ClientError, match="prompt is too long"):
        agent("what next?")


# --- the adapter's reactive path, through each model class


MODEL_ANSWERS = [
    (kind, name)
    for kind, api in (("anthropic", "anthropic"), ("bedrock", "converse"), ("openai", "chat"), ("openai-responses", "responses"), ("ollama", "ollama"))
    for name in overflow.names(api)
] + [("mistral", None), ("litellm", None)]
"""Each model class on each answer of its API; ``MistralModel`` on Mistral's own (its default, `_strands_reactive.DEFAULT_ANSWER`);
``LiteLLMModel`` on OpenAI's (litellm's OpenAI provider)."""
CLIENTS = {"ollama": "ollama", "mistral": "mistralai", "litellm": "litellm"}
"""The client library a model class needs beyond Strands' anthropic extra."""


UNRECOGNISED = {("anthropic", "max-tokens")}
"""Answers the installed release's model class does not read as an overflow (strands 1.62.0: ``AnthropicModel``
has no "input length and `max_tokens` exceed context limit"; harness-sdk#1078 was closed unmerged)."""


@pytest.mark.parametrize(("kind", "name"), MODEL_ANSWERS)
def test_the_adapter_reduces_on_each_answer_its_model_class_recognises(server, monkeypatch, kind, name):
    pytest.importorskip("strands")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm's bundled cost map: no download when imported
    if kind in CLIENTS:
        pytest.importorskip(CLIENTS[kind])
    from compaction_suite.adapters.strands import sliding_window

    compactor = sliding_window(
        Settings(base_url=server.base_url), window_size=12, path="reactive", context_window=WINDOW, model=kind, overflow_answer=name
    )
    history = _history()
    if (kind, name) in UNRECOGNISED:
        with pytest.raises(Exception, match="exceed context limit"):
            compactor.compact(history, iteration=1)
        return
    out = compactor.compact(history, iteration=1)
    assert len(out["messages"]) < len(history["messages"]) and out["messages"][0]["role"] == "user"


def test_the_adapter_crashes_where_the_model_class_does_not_recognise_the_answer(server, monkeypatch):
    """A model class without the mapping (``OpenAIModel`` classifying nothing as an overflow, as
    before strands-agents/harness-sdk#1529 for a gateway's 500): the adapter's reactive path ends in the
    raw error, the crash the agent's loop has, never a reduction."""
    pytest.importorskip("strands")
    openai = pytest.importorskip("openai")
    from strands.models import openai as strands_openai

    from compaction_suite.adapters.strands import sliding_window

    monkeypatch.setattr(strands_openai, "classify_openai_error", lambda error: None, raising=False)
    compactor = sliding_window(
        Settings(base_url=server.base_url),
        window_size=12,
        path="reactive",
        context_window=WINDOW,
        model="openai",
        overflow_answer="bedrock-gateway",
    )
    with pytest.raises(openai.InternalServerError, match="Input is too long for requested model"):
        compactor.compact(_history(), iteration=1)


@pytest.mark.parametrize(("kind", "module", "name"), [("ollama", "ollama", "ollama-cloud"), ("ollama", "ollama", "context-shift-off"), ("mistral", "mistral", None)])
def test_the_adapter_crashes_with_the_raw_error_where_the_model_class_has_no_overflow_mapping(server, monkeypatch, kind, module, name):
    """``OllamaModel`` and ``MistralModel`` without their overflow texts (as before strands-agents 1.46.0,
    harness-sdk#2052, fixed by PR #2958): the provider's raw error ends the reactive path, a crash."""
    pytest.importorskip("strands")
    pytest.importorskip(CLIENTS[kind])
    import importlib

    from compaction_suite.adapters.strands import sliding_window

    monkeypatch.setattr(importlib.import_module(f"strands.models.{module}").__dict__[f"{kind.capitalize()}Model"], "OVERFLOW_MESSAGES", set())
    compactor = sliding_window(Settings(base_url=server.base_url), window_size=12, path="reactive", context_window=WINDOW, model=kind, overflow_answer=name)
    with pytest.raises(Exception, match="context length") as raised:
        compactor.compact(_history(), iteration=1)
    assert type(raised.value).__name__ != "ContextWindowOverflowException"


def test_strands_agent_loop_reduces_and_retries_on_ollamas_overflow_answer(server):
    """Strands' own ``Agent`` on ``OllamaModel`` at the double's ``/api/chat``: the cloud's "prompt too long"
    answer becomes ``ContextWindowOverflowException``, the sliding window reduces, the call is answered."""
    strands = pytest.importorskip("strands")
    pytest.importorskip("ollama")
    from strands.agent.conversation_manager import SlidingWindowConversationManager

    from compaction_suite.adapters.strands import _local_model

    server.window(WINDOW, {"ollama": "ollama-cloud"})
    model = _local_model(Settings(base_url=server.base_url), "ollama")
    agent = strands.Agent(model=model, messages=_strands_messages(_history(last="assistant")), conversation_manager=SlidingWindowConversationManager(window_size=12), callback_handler=None)
    agent("what next?")
    assert server.counts["over_window"] >= 1 and server.counts["summary"] == 1
    assert len(agent.messages) <= 12 and agent.messages[-1]["role"] == "assistant"


def test_a_history_within_the_window_is_sent_once_and_left_alone(server):
    pytest.importorskip("strands")
    from compaction_suite.adapters.strands import sliding_window

    compactor = sliding_window(Settings(base_url=server.base_url), window_size=2, path="reactive", context_window=100_000, model="bedrock")
    history = _history(2)
    assert compactor.compact(history, iteration=1)["messages"] == history["messages"]
    assert server.counts == {}  # the main call went to the model's own double, not the suite's summarizer


def test_the_overflow_answer_option_is_checked():
    pytest.importorskip("strands")
    from compaction_suite.adapters.strands import sliding_window

    with pytest.raises(ValueError, match="no overflow answer 'mantle'"):
        sliding_window(Settings(base_url="http://127.0.0.1:9/v1"), path="reactive", model="openai", overflow_answer="mantle")


# --- FIRE-5 (the clause's meta-tests: its control fails it in tests/test_negative_controls.py)


def test_fire_5_holds_for_a_reactive_loop_that_recognises_the_answer(tmp_path):
    from checking import in_process

    checked = in_process(tmp_path, "broken.compactors:ReactiveLoop", clauses=("FIRE-5",))
    assert checked.exit_code == 0 and checked.clause("FIRE-5")["status"] == "pass", checked.output[-2000:]


def test_fire_5_judges_strands_reactive_path_through_its_model_class(tmp_path, monkeypatch):
    """At the installed release ``OpenAIModel`` recognises a Bedrock-backed gateway's answer and FIRE-5
    holds; without its classifier (as before harness-sdk#1529) the same run fails FIRE-5 with the
    provider's words."""
    pytest.importorskip("strands")
    from strands.models import openai as strands_openai

    from checking import in_process

    monkeypatch.setenv("COMPACTION_ADAPTER_OPTIONS", '{"window_size": 12, "path": "reactive", "context_window": 1000, "model": "openai", "overflow_answer": "bedrock-gateway"}')
    target = "compaction_suite.adapters.strands:sliding_window"
    (tmp_path / "holds").mkdir()
    (tmp_path / "fails").mkdir()
    held = in_process(tmp_path / "holds", target, clauses=("FIRE-5",), fast=True)
    assert held.clause("FIRE-5")["status"] == "pass", held.output[-2000:]
    monkeypatch.setattr(strands_openai, "classify_openai_error", lambda error: None, raising=False)
    broken = in_process(tmp_path / "fails", target, clauses=("FIRE-5",), fast=True)
    found = broken.clause("FIRE-5")
    assert found["status"] == "fail" and found["reason_id"] == "overflow-answer-not-recovered", found
    assert "Input is too long for requested model" in found["reason"]


def test_the_adapter_crashes_where_lite_llm_model_does_not_map_litellms_overflow(server, monkeypatch):
    """``LiteLLMModel`` without its ``except ContextWindowExceededError`` (as before strands-agents 1.11.0,
    harness-sdk#974, fixed by PR #994): litellm's own overflow exception ends the reactive path, a crash."""
    pytest.importorskip("strands")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    litellm = pytest.importorskip("litellm")
    from strands.models import litellm as strands_litellm

    from compaction_suite.adapters.strands import sliding_window

    class NeverRaised(Exception):
        """Stands for the exception class the release did not catch."""

    monkeypatch.setattr(strands_litellm, "ContextWindowExceededError", NeverRaised)
    compactor = sliding_window(Settings(base_url=server.base_url), window_size=12, path="reactive", context_window=WINDOW, model="litellm")
    with pytest.raises(litellm.ContextWindowExceededError, match="Input tokens exceed the configured limit"):
        compactor.compact(_history(), iteration=1)


def _recent_mass(rounds: int = 6) -> dict:
    """Small rounds, then a newest round whose parallel tool results together exceed `WINDOW`: the tokens
    sit inside ``preserve_recent_messages`` (Strands' default 10), which no summary of older messages frees."""
    messages: list[dict] = []
    for i in range(rounds):
        messages += [{"role": "user", "content": f"turn {i}: what failed?"}, {"role": "assistant", "content": f"round {i} done"}]
    reads = range(4)
    messages += [
        {"role": "user", "content": "read the four build logs"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{k}", "name": "read_file", "input": {"path": f"b{k}.log"}} for k in reads]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{k}", "content": "log line " * 150} for k in reads]},
    ]  # fmt: skip
    return {"system": "You are a coding agent.", "messages": messages}


def test_a_reduction_that_never_fits_ends_in_unbounded_retry_not_a_silent_return(server):
    """``Agent`` retries after every ``reduce_context`` with no bound (strands-agents/harness-sdk#3338):
    when each summary leaves the request over the window the adapter's loop says so instead of handing
    back a history the model never accepted; one the reduction fits still comes back."""
    pytest.importorskip("strands")
    from compaction_suite.adapters import _strands_reactive as reactive
    from compaction_suite.adapters.strands import summarizing

    compactor = summarizing(Settings(base_url=server.base_url), path="reactive", context_window_limit=WINDOW, model="anthropic")
    with pytest.raises(reactive.UnboundedRetry, match="reductions in a row each left the request over the model's 1000-token window"):
        compactor.compact(_recent_mass(), iteration=1)
    fits = summarizing(Settings(base_url=server.base_url), path="reactive", context_window_limit=WINDOW, model="anthropic", preserve_recent_messages=2)
    out = fits.compact(_history(4), iteration=1)
    assert out["messages"], out
