"""pydantic-ai's own compaction (``OpenAICompaction``) proven with pydantic-ai's ``Agent`` loop on the suite's
Responses test double (a real HTTP server on 127.0.0.1), and the double's server-side compaction (issue 21).

The agent model is pydantic-ai's ``OpenAIResponsesModel`` on an ``AsyncOpenAI`` pointed at the double, each
request scripted (`summarizer_apis.SCRIPTED`): after a user prompt one ``read_file`` call, after its result a
text answer. What the model is sent is read from the double's record of the scripted requests.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from compaction_suite.conformance.settings import Settings, connected
from compaction_suite.conformance.summarizer_apis import SCRIPTED, compact_threshold, compacted_text, server_compaction

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

TURNS = 4
CALL = {
    "type": "function_call",
    "call_id": "call_next",
    "name": "read_file",
    "arguments": json.dumps({"path": "next.py"}),
    "status": "completed",
}


def _items(turns: int) -> list[dict]:
    """A Responses history of ``turns`` finished turns (a call, its output, an answer), then a turn whose call is answered."""
    items: list[dict] = [{"role": "developer", "content": "You are a coding agent. (loop test)"}]
    for i in range(turns):
        items += [
            {"type": "message", "role": "user", "content": f"Question {i} about module m{i}"},
            {
                "type": "function_call",
                "id": f"fc_{i}",
                "call_id": f"call_{i}",
                "name": "read_file",
                "arguments": json.dumps({"path": f"m{i}.py"}),
                "status": "completed",
            },
            {"type": "function_call_output", "call_id": f"call_{i}", "output": f"def f{i}(): ...\n" * 40},
            {
                "type": "message",
                "id": f"msg_{i}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": f"Module {i}.", "annotations": []}],
            },
        ]
    return [
        *items,
        {"type": "message", "role": "user", "content": "And the next one?"},
        dict(CALL, id="fc_next"),
        {"type": "function_call_output", "call_id": "call_next", "output": "x = 1\n"},
    ]


def _agent(server, capability, **model_settings):
    """``Agent`` with ``capability`` and the scripted Responses model: a call after a prompt, text after a result."""
    import openai
    from pydantic_ai import Agent, Tool
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    def read_file(path: str) -> str:
        return f"contents of {path}\n" * 20

    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="unused", max_retries=0)
    model = OpenAIResponsesModel("gpt-4.1", provider=OpenAIProvider(openai_client=client))
    answers = iter(range(1000))

    def settings_for(ctx):  # each request's scripted answer, from what the run holds so far
        last = ctx.messages[-1] if ctx.messages else None
        answered = last is not None and any(p.part_kind == "tool-return" for p in last.parts)
        n = next(answers)
        step = (
            [
                {
                    "type": "message",
                    "id": f"msg_loop{n}",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "done", "annotations": []}],
                }
            ]
            if answered
            else [dict(CALL, call_id=f"call_loop{n}", id=f"fc_loop{n}")]
        )
        return {"extra_body": {SCRIPTED: step}}

    from pydantic_ai.capabilities import AbstractCapability

    class Scripted(AbstractCapability):
        def get_model_settings(self):
            return settings_for

    return Agent(
        model, instructions="You are a coding agent. (loop test)", tools=[Tool(read_file)], capabilities=[capability, Scripted()],
        model_settings=model_settings or None,
    )  # fmt: skip


def _turns(agent) -> list:
    history: list = []
    for turn in range(TURNS):
        history = asyncio.run(agent.run(f"turn {turn}: read the next file", message_history=history or None)).all_messages()
    return history


def _inputs(server) -> list[list[dict]]:
    return [r.body["input"] for r in server.model_requests]


def test_server_compaction_answers_past_the_threshold_only():
    """The double's ``context_management`` compaction: an item standing for the request (folding the input's
    earlier compaction items) when the rendered input reaches ``compact_threshold``; none below it or without it."""
    body = {
        "model": "gpt-4.1",
        "input": [{"role": "user", "content": "hi"}],
        "context_management": [{"type": "compaction", "compact_threshold": 100}],
    }
    assert compact_threshold(body) == 100 and compact_threshold({"context_management": [{"type": "compaction"}]}) is None
    assert server_compaction(body, "summary", 99) is None
    item = server_compaction(body, "summary", 100)
    assert item is not None and item["type"] == "compaction" and compacted_text(item) == "summary"
    assert server_compaction({"input": body["input"]}, "summary", 10**6) is None


def test_openai_compaction_stateless_compacts_before_a_request_through_the_compact_endpoint(server):
    """Stateless ``OpenAICompaction`` in ``Agent``'s loop: past ``message_count_threshold`` it calls
    ``/v1/responses/compact`` from ``before_model_request`` and the request sent holds the compaction item
    first, then the current request: nothing before it."""
    pytest.importorskip("pydantic_ai.models.openai", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from pydantic_ai.models.openai import OpenAICompaction

    def at_a_new_prompt(messages) -> bool:  # a trigger (documented) compacting only when a turn starts
        return len(messages) > 6 and any(p.part_kind == "user-prompt" for p in messages[-1].parts)

    _turns(_agent(server, OpenAICompaction(trigger=at_a_new_prompt)))
    compacts = [e for e in server.exchanges if e.request.path.endswith("/responses/compact")]
    assert compacts, "the compact endpoint was never called"
    after = [i for i in _inputs(server) if any(x.get("type") == "compaction" for x in i)]
    assert after and all(i[0].get("type") == "compaction" for i in after)


def test_openai_compaction_stateless_mid_turn_sends_the_compact_endpoint_a_call_without_its_output(server):
    """Past the threshold mid-turn (the current request holding a round's tool returns) stateless
    ``OpenAICompaction`` sends ``/responses/compact`` every message but the current request: the last holds
    the round's calls, their outputs left out. The double refuses it as the Responses API refuses such input
    ("No tool output found for function call ..."; the double applies the rule to the compact endpoint alike)."""
    pytest.importorskip("pydantic_ai.models.openai", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from pydantic_ai.exceptions import ModelHTTPError
    from pydantic_ai.models.openai import OpenAICompaction

    with pytest.raises(ModelHTTPError, match="No tool output found for function call"):
        _turns(_agent(server, OpenAICompaction(message_count_threshold=6)))
    refused = [e for e in server.exchanges if e.rejected is not None]
    assert refused and refused[-1].request.path.endswith("/responses/compact")
    assert refused[-1].request.body["input"][-1]["type"] == "function_call"


def test_openai_compaction_stateful_sends_the_compaction_item_the_server_answered(server):
    """Stateful ``OpenAICompaction``: every request carries ``context_management``; past the threshold the
    double answers a compaction item first, pydantic-ai keeps it as a ``CompactionPart`` and sends it back on the
    next request, with everything after it. Whether it sends what came before it too is the release's
    (pydantic/pydantic-ai#7224, trimmed from 2.30.0): checked through the adapter by the bug list."""
    pytest.importorskip("pydantic_ai.models.openai", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from pydantic_ai.models.openai import OpenAICompaction

    history = _turns(_agent(server, OpenAICompaction(token_threshold=300)))
    bodies = [r.body for r in server.model_requests]
    assert bodies and all(compact_threshold(b) == 300 for b in bodies)
    assert any(p.part_kind == "compaction" for m in history for p in m.parts)
    later = [b["input"] for b in bodies if any(x.get("type") == "compaction" for x in b["input"])]
    assert later, "no request sent the compaction item back"


@pytest.mark.parametrize("stateless", [True, False])
def test_pydantic_ai_adapter_openai_compaction_matches_the_loop(server, stateless):
    """The adapter's ``openai_compaction`` is the loop's: one scripted request answers the history's last step
    (compacted before it, stateless; by the server, stateful), and the output is the input of the request
    pydantic-ai builds next, read before it is sent: the compaction item, then the step's call and output."""
    pytest.importorskip("pydantic_ai.models.openai", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from compaction_suite.adapters.pydantic_ai import openai_compaction

    size = {"message_count_threshold": 4} if stateless else {"message_count_threshold": None, "token_threshold": 500}
    compactor = openai_compaction(connected(Settings(), server.base_url), stateless=stateless, **size)
    history = _items(TURNS)
    out = asyncio.run(compactor.compact(history, iteration=1))
    (answered,) = server.model_requests  # the request after the step was read, not sent
    assert answered.body[SCRIPTED] == history[-2:-1]
    assert (compact_threshold(answered.body) == 500) is not stateless
    kinds = [i.get("type", "message") for i in out]
    assert kinds.count("compaction") == 1 and kinds[-2:] == ["function_call", "function_call_output"]
    assert out[-1] == history[-1] and len(out) < len(history)


def test_pydantic_ai_adapter_openai_compaction_below_threshold_sends_the_history():
    """Below its threshold nothing is compacted: the request after the step holds every item but the system
    prompt (the agent's instructions, sent apart)."""
    pytest.importorskip("pydantic_ai.models.openai", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from compaction_suite.adapters.pydantic_ai import openai_compaction
    from compaction_suite.conformance.summarizer_server import SummarizerServer

    history = _items(1)
    with SummarizerServer() as endpoint:
        out = asyncio.run(
            openai_compaction(connected(Settings(), endpoint.base_url), stateless=True, message_count_threshold=50).compact(history, iteration=1)
        )
        assert not endpoint.exchanges
    assert not any(i.get("type") == "compaction" for i in out)
    assert [i.get("call_id") for i in out if i.get("type") == "function_call_output"] == ["call_0", "call_next"]


PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
PDF = "data:application/pdf;base64,JVBERi0xLjQKJSVFT0YK"


def test_pydantic_ai_adapter_sends_a_tools_image_and_pdf_as_media_not_as_text():
    """A ``readFile`` output holding an image or a PDF (SPEC CORE-31's tool media) is what a pydantic-ai tool
    returns as ``BinaryContent``: the request after the step carries it as ``input_image``/``input_file`` parts,
    never as the JSON text of the parts (the adapter's conversion, not pydantic-ai, would have made that)."""
    pytest.importorskip("pydantic_ai.models.openai", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from compaction_suite.adapters.pydantic_ai import openai_compaction
    from compaction_suite.conformance.summarizer_server import SummarizerServer

    history = _items(1)
    history[-1] = {**history[-1], "output": [{"type": "input_text", "text": "Read assets/chart.png"}, {"type": "input_image", "image_url": PNG, "detail": "auto"}]}
    history[3] = {**history[3], "output": [{"type": "input_file", "filename": "report.pdf", "file_data": PDF}]}
    with SummarizerServer() as endpoint:
        out = asyncio.run(openai_compaction(connected(Settings(), endpoint.base_url), stateless=True, message_count_threshold=50).compact(history, iteration=1))
    outputs = {i["call_id"]: i["output"] for i in out if i.get("type") == "function_call_output"}
    assert [p["type"] for p in outputs["call_next"]] == ["input_text", "input_image"] and outputs["call_next"][1]["image_url"] == PNG
    assert [p["type"] for p in outputs["call_0"]] == ["input_file"] and outputs["call_0"][0]["file_data"] == PDF


def test_pydantic_ai_harness_adapter_holds_a_users_pdf():
    """A chat ``file`` part (a PDF inline) in a user turn is pydantic-ai's ``BinaryContent``, and a kept one
    comes back as the original dict (before, the conversion raised: a false CORE-10 on CORE-31's media round)."""
    pytest.importorskip("pydantic_ai")
    from compaction_suite.adapters.pydantic_ai import from_pydantic_ai, to_pydantic_ai

    messages = [{"role": "user", "content": [{"type": "text", "text": "Summarize the attached report."}, {"type": "file", "file": {"filename": "report.pdf", "file_data": PDF}}]}]
    converted, notes = to_pydantic_ai(messages)
    content = converted[0].parts[0].content
    assert content[1].media_type == "application/pdf"
    assert from_pydantic_ai(converted, notes) == messages


# --- openai_previous_response_id='auto' (server-managed state) -------------------------------------------


def _compaction_chainable(monkeypatch) -> None:
    """Double of pydantic-ai-slim 1.80-1.81 (pydantic/pydantic-ai#5086): ``compact_messages``' response is not
    marked as the compact endpoint's, so ``'auto'`` chains the next request to its id."""
    from pydantic_ai.models.openai import OpenAIResponsesModel

    real = OpenAIResponsesModel.compact_messages

    async def compact_messages(self, *args, **kwargs):
        response = await real(self, *args, **kwargs)
        response.provider_details = None
        return response

    monkeypatch.setattr(OpenAIResponsesModel, "compact_messages", compact_messages)


def _at_a_new_prompt(messages) -> bool:
    """A trigger (documented) compacting only when a turn starts: mid-turn, the compact request would chain to a
    response whose calls the current request answers, which the API refuses (openai-agents-python#2317)."""
    return len(messages) > 6 and any(p.part_kind == "user-prompt" for p in messages[-1].parts)


def test_openai_compaction_with_auto_chain_sends_the_compaction_item_and_never_its_id(server):
    """``openai_previous_response_id='auto'`` in ``Agent``'s loop: each request chains to the last response and
    sends what came after it; after a stateless compaction the request sends the compaction item with no
    ``previous_response_id`` (the compact endpoint stores nothing), and every request is accepted."""
    pytest.importorskip("pydantic_ai.models.openai", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from pydantic_ai.models.openai import OpenAICompaction

    history = _turns(_agent(server, OpenAICompaction(trigger=_at_a_new_prompt), openai_previous_response_id="auto"))
    bodies = [r.body for r in server.model_requests]
    assert any(p.part_kind == "compaction" for m in history for p in m.parts)
    assert any(b.get("previous_response_id") for b in bodies), "the loop never chained a request"
    after = [b for b in bodies if any(x.get("type") == "compaction" for x in b["input"])]
    assert after and all(not b.get("previous_response_id") for b in after)


def test_openai_compaction_chaining_to_the_compact_endpoint_answer_is_refused(server, monkeypatch):
    """With the compaction's response chainable (a double of 1.80-1.81), the request after the compaction names
    the compact endpoint's id, which the double refuses as the Responses API does (HTTP 400, "Previous response
    with id '...' not found."): the agent's run ends in pydantic-ai's ``ModelHTTPError``."""
    pytest.importorskip("pydantic_ai.models.openai", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from pydantic_ai.exceptions import ModelHTTPError
    from pydantic_ai.models.openai import OpenAICompaction

    _compaction_chainable(monkeypatch)
    with pytest.raises(ModelHTTPError, match=r"Previous response with id '[^']+' not found") as raised:
        _turns(_agent(server, OpenAICompaction(trigger=_at_a_new_prompt), openai_previous_response_id="auto"))
    assert raised.value.status_code == 400


@pytest.mark.parametrize("at", ["any_request", "turn_start"])
def test_pydantic_ai_adapter_auto_chain_is_read_as_the_double_resolves_it(server, monkeypatch, at):
    """The adapter with ``previous_response_id='auto'``: the request after the step chains to the step's response,
    and its output is that chain resolved (the compaction item, the prompt, the step and its output); with the
    compaction chainable (the double of 1.80-1.81) the run meets the double's refusal, as the loop does."""
    pytest.importorskip("pydantic_ai.models.openai", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from pydantic_ai.exceptions import ModelHTTPError

    from compaction_suite.adapters.pydantic_ai import openai_compaction

    compactor = openai_compaction(connected(Settings(), server.base_url), stateless=True, message_count_threshold=4, previous_response_id="auto", at=at)
    history = _items(TURNS)
    out = asyncio.run(compactor.compact(history, iteration=1))
    assert [i.get("type", "message") for i in out] == ["compaction", "message", "function_call", "function_call_output"]
    assert out[-3:] == [{"type": "message", "role": "user", "content": "And the next one?"}, *history[-2:]] or out[-2:] == history[-2:]
    _compaction_chainable(monkeypatch)
    with pytest.raises(ModelHTTPError, match="not found"):
        asyncio.run(compactor.compact(history, iteration=1))


def test_pydantic_ai_adapter_auto_chain_is_adapted_stateless_only():
    from compaction_suite.adapters.pydantic_ai import openai_compaction

    with pytest.raises(ValueError, match="stateless compaction only"):
        openai_compaction(connected(Settings(), "http://127.0.0.1:9/v1"), stateless=False, previous_response_id="auto")
    with pytest.raises(ValueError, match="turn_start"):
        openai_compaction(connected(Settings(), "http://127.0.0.1:9/v1"), stateless=False, at="turn_start")


def test_pydantic_ai_adapter_compacting_at_turn_start_leaves_a_mid_turn_step_alone(server):
    """``at: "turn_start"``: past the threshold, a step answering a round's results is sent with no compaction (the
    trigger sees a request of tool returns); a step after a user prompt is compacted before it."""
    pytest.importorskip("pydantic_ai.models.openai", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from compaction_suite.adapters.pydantic_ai import openai_compaction

    compactor = openai_compaction(connected(Settings(), server.base_url), stateless=True, message_count_threshold=4, at="turn_start")
    history = _items(TURNS)
    mid_turn = [*history, dict(CALL, call_id="call_more", id="fc_more"), {"type": "function_call_output", "call_id": "call_more", "output": "y = 2\n"}]
    assert not any(i.get("type") == "compaction" for i in asyncio.run(compactor.compact(mid_turn, iteration=1)))
    assert asyncio.run(compactor.compact(history, iteration=1))[0].get("type") == "compaction"


def test_pydantic_ai_adapter_at_turn_start_waits_when_the_prompt_follows_a_calls_output(server):
    """``at: "turn_start"``: a prompt sent after a round with no answer between joins the round's tool returns in one
    request; compacting before it would send the compact endpoint the round's call without its output (refused). The
    trigger waits for a request answering no call (here the next turn's), and the compaction keeps every pair."""
    pytest.importorskip("pydantic_ai.models.openai", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from compaction_suite.adapters.pydantic_ai import openai_compaction

    compactor = openai_compaction(connected(Settings(), server.base_url), stateless=True, message_count_threshold=4, at="turn_start")
    answer = {"type": "message", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "Done.", "annotations": []}]}
    history = [*_items(TURNS), {"type": "message", "role": "user", "content": "Never mind; summarize."}, dict(answer, id="msg_last")]
    out = asyncio.run(compactor.compact(history, iteration=1))
    assert all(e.rejected is None for e in server.exchanges), [e.rejected for e in server.exchanges]
    compacts = [e for e in server.exchanges if e.request.path.endswith("/responses/compact")]
    assert len(compacts) == 1 and compacts[0].request.body["input"][-1].get("role") == "assistant"  # the answer ending the history
    assert out[0].get("type") == "compaction"


def test_the_double_searches_for_a_deferred_tool_before_calling_it():
    """A scripted call of a deferred function the input has not loaded, in a request offering client tool search,
    is answered with the model's ``tool_search_call`` for it (in the declared schema); once that search loaded
    nothing, with an assistant message; a loaded tool, or a request without client search, gets the script."""
    from compaction_suite.conformance.tool_search import search_first

    search = {"type": "tool_search", "execution": "client", "parameters": {"type": "object", "properties": {"queries": {"type": "array"}}}}
    body = {"tools": [search, {"type": "function", "name": "read_file", "defer_loading": True}], "input": [{"role": "user", "content": "hi"}]}
    step = [dict(CALL)]
    (asked,) = search_first(body, step) or []
    assert asked["type"] == "tool_search_call" and asked["execution"] == "client" and asked["arguments"] == {"queries": ["read_file"]}
    answered = {"type": "tool_search_output", "call_id": asked["call_id"], "execution": "client", "status": "completed"}
    loaded = {**body, "input": [*body["input"], asked, {**answered, "tools": [{"type": "function", "name": "read_file"}]}]}
    assert search_first(loaded, step) is None
    (said,) = search_first({**body, "input": [*body["input"], asked, {**answered, "tools": []}]}, step) or []
    assert said["type"] == "message" and "read_file" in said["content"][0]["text"]
    assert search_first({**body, "tools": body["tools"][1:]}, step) is None


def test_pydantic_ai_adapter_tool_search_finds_the_tool_again_after_the_compaction(server):
    """``openai_compaction(tool_search=True)``: the history's tools are deferred, found before their first call; after
    the stateless compaction the model searches for the step's tool again (the double), and this release (2.26.0
    and later, pydantic/pydantic-ai#7189) finds it: the output holds the search, its answer loading the tool, then
    the step's call and output, and RESP-32 passes."""
    pytest.importorskip("pydantic_ai.capabilities", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from compaction_suite.adapters.pydantic_ai import openai_compaction
    from compaction_suite.conformance.formats.responses import check_called_tools_findable

    compactor = openai_compaction(connected(Settings(), server.base_url), stateless=True, message_count_threshold=8, tool_search=True)
    history = _items(TURNS)
    out = asyncio.run(compactor.compact(history, iteration=1))
    kinds = [i.get("type", "message") for i in out]
    assert kinds.count("compaction") == 1 and kinds[-4:] == ["tool_search_call", "tool_search_output", "function_call", "function_call_output"]
    assert [t["name"] for t in out[-3]["tools"]] == ["read_file"]
    assert check_called_tools_findable(history, out) is None


def test_pydantic_ai_adapter_history_processor_with_tool_search_finds_the_tool_again(server):
    """``history_processor(tool_search=True)``: the keep-recent processor as ``ProcessHistory`` on the Responses
    model, the history's tools deferred and each found before its first call. The window cuts the earlier turns and
    their search rounds; the model reaching again for ``read_file`` searches for it (the double), and this release
    (2.26.0 and later, pydantic/pydantic-ai#7259) finds it: the output ends in the search, its answer loading the tool,
    then the step's call and output, and RESP-32 passes (2.25.0 answered a search loading no tool)."""
    pytest.importorskip("pydantic_ai.capabilities", reason="Pydantic AI is not installed (pip install -e '.[pydantic-ai]')")
    from compaction_suite.adapters.pydantic_ai import history_processor
    from compaction_suite.conformance.formats.responses import check_called_tools_findable

    compactor = history_processor(connected(Settings(), server.base_url), max_messages=6, keep_messages=3, tool_search=True)
    assert compactor.capabilities["wire_format"] == "responses"
    history = _items(TURNS)
    out = asyncio.run(compactor.compact(history, iteration=1))
    kinds = [i.get("type", "message") for i in out]
    assert kinds[-4:] == ["tool_search_call", "tool_search_output", "function_call", "function_call_output"]
    assert [t["name"] for t in out[-3]["tools"]] == ["read_file"]
    assert len(out) < len(history)  # the window cut the earlier turns
    assert check_called_tools_findable(history, out) is None


def test_pydantic_ai_harness_sliding_window_on_responses_with_tool_search_finds_the_tool_again(server):
    """``sliding_window(in_agent="responses", tool_search=True)``: the harness's SlidingWindowCompaction in an
    ``Agent`` on the Responses model, the history's tools deferred; the window cuts the earlier turns and their search
    rounds, and the model reaching again for ``read_file`` finds it with this release's search (RESP-32 passes)."""
    pytest.importorskip("pydantic_ai_harness", reason="pydantic-ai-harness is not installed (pip install -e '.[pydantic-ai]')")
    from compaction_suite.adapters.pydantic_ai import sliding_window
    from compaction_suite.conformance.formats.responses import check_called_tools_findable

    settings = connected(Settings(), server.base_url)
    compactor = sliding_window(settings, max_messages=6, keep_messages=3, in_agent="responses", tool_search=True)
    assert compactor.capabilities["wire_format"] == "responses"
    history = _items(TURNS)
    out = asyncio.run(compactor.compact(history, iteration=1))
    kinds = [i.get("type", "message") for i in out]
    assert kinds[-4:] == ["tool_search_call", "tool_search_output", "function_call", "function_call_output"]
    assert len(out) < len(history)
    assert check_called_tools_findable(history, out) is None
    with pytest.raises(ValueError, match="in_agent must be"):
        sliding_window(settings, in_agent="elsewhere")
