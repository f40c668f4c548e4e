"""LangChain on Responses histories (``format: responses``), proven with ``create_agent``'s own loop.

The agent's model is ``ChatOpenAI(use_responses_api=True, output_version="responses/v1")`` on a TEST
DOUBLE of ``POST /v1/responses`` served on 127.0.0.1 (`_ScriptedResponses`): it answers the first call
with a reasoning item (an opaque ``encrypted_content``) and a ``function_call``, the next with a reasoning
item and an assistant message. The user's turn holds an ``input_image`` part (langchain-ai/langchain#40741's
block). The adapter's drawing of the items the model was sent last must be the messages the loop stored,
and the way back what the client sends for them.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from json_endpoint import JSONEndpoint

pytest.importorskip("langchain_openai")
pytest.importorskip("langchain.agents")

from compaction_suite.adapters import _langchain_responses as responses
from compaction_suite.conformance.formats.responses import histories
from compaction_suite.conformance.responses_histories import TINY_PNG, draw_custom_tool_calls

IMAGE = f"data:image/png;base64,{TINY_PNG}"


def read_file(path: str) -> str:
    """Read a file (the loop test's tool)."""
    return f"contents of {path}"


def _reasoning(n: int) -> dict[str, Any]:
    return {"type": "reasoning", "id": f"rs_loop_{n}", "summary": [], "encrypted_content": f"gAAAAABloop{n}" + "x" * 64}


OUTPUTS = [
    [
        _reasoning(1),
        {
            "type": "function_call",
            "id": "fc_loop_1",
            "call_id": "call_loop_1",
            "name": "read_file",
            "arguments": json.dumps({"path": "a.py"}),
            "status": "completed",
        },
    ],
    [
        _reasoning(2),
        {
            "type": "message",
            "id": "msg_loop_2",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
        },
    ],
]
"""The scripted model's output items, one list per call."""


class _ScriptedResponses(JSONEndpoint):
    def __init__(self) -> None:
        super().__init__()
        self.requests: list[dict[str, Any]] = []

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        output = copy.deepcopy(OUTPUTS[min(len(self.requests), len(OUTPUTS) - 1)])
        self.requests.append(body)
        return 200, {
            "id": f"resp_loop_{len(self.requests)}", "object": "response", "created_at": 0, "status": "completed", "model": body.get("model"),
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "error": None, "incomplete_details": None,
            "metadata": {}, "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15, "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}},
        }  # fmt: skip


@pytest.fixture
def scripted():
    with _ScriptedResponses().running() as server:
        yield server


def _said(message: Any) -> tuple[Any, ...]:
    """What a message says to the model: its type, content and calls (ids and metadata aside)."""
    calls = [(c["id"], c["name"], c["args"]) for c in getattr(message, "tool_calls", [])]
    return (message.type, message.content, calls, getattr(message, "tool_call_id", None))


def test_the_drawing_is_what_chatopenai_stores_in_create_agent(scripted):
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(
        model="gpt-5",
        base_url=f"http://127.0.0.1:{scripted.server_address[1]}/v1",
        api_key="scripted",
        use_responses_api=True,
        output_version="responses/v1",
        max_retries=0,
    )
    agent = create_agent(model, tools=[read_file])
    user = {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "What is in a.py and this screenshot?"},
            {"type": "input_image", "image_url": IMAGE, "detail": "auto"},
        ],
    }
    state = agent.invoke({"messages": [user]})
    assert len(scripted.requests) == 2
    # The second request's input: the user turn, the first response's items, the tool's output.
    sent_items = scripted.requests[1]["input"]
    assert [i.get("type") for i in sent_items] == ["message", "reasoning", "function_call", "function_call_output"]
    assert sent_items[0]["content"][1] == user["content"][1]  # the input_image part goes as the caller gave it
    drawn = responses.to_langchain(sent_items).messages
    assert [_said(m) for m in drawn] == [_said(m) for m in state["messages"][:3]]
    assert responses.sent(state["messages"][:3]) == sent_items
    conversion = responses.to_langchain(sent_items)
    assert responses.from_langchain(conversion, conversion.messages) == sent_items


@settings(max_examples=30, suppress_health_check=list(HealthCheck), deadline=None)
@given(histories(min_rounds=2, max_rounds=6))
def test_every_drawn_history_comes_back_exactly_when_nothing_changed(history):
    conversion = responses.to_langchain(history)
    assert responses.from_langchain(conversion, conversion.messages) == history


@pytest.fixture(autouse=True)
def _function_calls_only():
    draw_custom_tool_calls(False)
    yield
    draw_custom_tool_calls(True)
