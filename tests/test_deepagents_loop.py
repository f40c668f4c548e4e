"""Deep Agents' summarization shown with ``create_deep_agent``'s own loop (issue 21): what the adapter
(``adapters/deepagents.py``) declares, and what a history over the model's window does there.

The agent model is ``ChatOpenAI`` on the scripted endpoint (``tests/scripted_endpoint.py``, a TEST DOUBLE
behind ``httpx.MockTransport``, no network), given a context window: ``create_deep_agent`` summarizes
with the agent's own model, so the summary request goes to the same endpoint, which answers one over
the window as OpenAI does (HTTP 400 ``context_length_exceeded``, `summarizer_apis.OVER_WINDOW`).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from scripted_endpoint import ScriptedEndpoint

from compaction_suite.conformance.summarizer_apis import over_window_error
from compaction_suite.text import prompt_tokens

WINDOW = 8000
SYSTEM_PROMPT = "You are a coding agent. (deepagents loop test)"
SUMMARY = "Summary written by the scripted model (a test double)."
LOG = "\n".join(f"log line {n}: the parser module compiled and its tests passed without warnings." for n in range(450))
"""About 9,000 tokens of build log."""


def read_log(part: str) -> str:
    """Read a part of the build log (the loop tests' tool): 600 tokens."""
    return f"# {part}\n{LOG[: len(LOG) // 15]}"


class WindowedModel(ScriptedEndpoint):
    """The scripted agent model with a context window of ``WINDOW`` tokens (a TEST DOUBLE): a request
    over it gets OpenAI's 400; a request offering no tools (the summary call) gets ``SUMMARY``."""

    def __init__(self, rounds: int) -> None:
        super().__init__(tool="read_log")
        self.rounds = rounds
        self.made = 0
        self.over: list[int] = []
        """The prompt sizes of the requests answered 400."""

    def answer(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        if self.made < self.rounds:
            self.made += 1
            n = next(self._ids)
            return {"role": "assistant", "content": None, "tool_calls": [{"id": f"call_d{n}", "type": "function", "function": {"name": self.tool, "arguments": json.dumps({"part": f"p{n}"})}}]}
        return {"role": "assistant", "content": "the build is clean"}

    def handle(self, request: Any) -> Any:
        import httpx

        body = json.loads(request.content)
        tokens = prompt_tokens(body["messages"])
        if tokens > WINDOW:
            self.requests.append(body)
            self.over.append(tokens)
            return httpx.Response(400, json=over_window_error("chat", tokens, WINDOW, "[scripted test double]"))
        if not body.get("tools"):
            self.requests.append(body)
            message = {"role": "assistant", "content": SUMMARY}
            return httpx.Response(200, json={"id": "chatcmpl-scripted-summary", "object": "chat.completion", "created": 1_700_000_000, "model": "scripted", "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}], "usage": {"prompt_tokens": tokens, "completion_tokens": 12, "total_tokens": tokens + 12}})
        return super().handle(request)


def _deep_agent(endpoint: WindowedModel, tmp_path: Any) -> Any:
    pytest.importorskip("deepagents", reason="deepagents is not installed (pip install -e '.[deepagents]')")
    import httpx
    from deepagents import create_deep_agent
    from deepagents.backends import FilesystemBackend
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    model = ChatOpenAI(
        model="scripted", api_key=SecretStr("scripted"), base_url="http://scripted.invalid/v1", max_retries=0,
        http_client=httpx.Client(transport=endpoint.transport()), profile={"max_input_tokens": WINDOW},
    )  # fmt: skip
    return create_deep_agent(model=model, tools=[tool(read_log)], system_prompt=SYSTEM_PROMPT, backend=FilesystemBackend(root_dir=str(tmp_path), virtual_mode=True))


def _recording(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every model request the summarization middleware receives in the loop."""
    from deepagents.middleware.summarization import SummarizationMiddleware

    seen: list[Any] = []
    original = SummarizationMiddleware.wrap_model_call

    def wrap_model_call(self: Any, request: Any, handler: Any) -> Any:
        seen.append(request)
        return original(self, request, handler)

    monkeypatch.setattr(SummarizationMiddleware, "wrap_model_call", wrap_model_call)
    return seen


def test_the_middleware_sees_the_history_without_the_system_prompt_between_rounds(monkeypatch, tmp_path):
    """Declarations (``adapters/deepagents.py``): the system prompt is outside the messages it compacts
    (in the request's ``system_message``), and every call it sees has each tool call answered."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    seen = _recording(monkeypatch)
    endpoint = WindowedModel(rounds=1)
    _deep_agent(endpoint, tmp_path).invoke({"messages": [HumanMessage("read the log")]})
    assert len(seen) >= 2
    for request in seen:
        assert SYSTEM_PROMPT in str(request.system_message.content)
        assert not any(SYSTEM_PROMPT in str(m.content) for m in request.messages)
        calls = {c["id"] for m in request.messages if isinstance(m, AIMessage) for c in m.tool_calls}
        assert calls == {m.tool_call_id for m in request.messages if isinstance(m, ToolMessage)}


def _earlier_turns(rounds: int) -> list[Any]:
    """A thread's earlier turns, as a resumed thread hands them to ``invoke``: ``rounds`` reads of a
    1,500-token part of the log (each under the size at which deepagents moves a result to a file)."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    part = LOG[: len(LOG) // 6]
    messages: list[Any] = []
    for n in range(rounds):
        call = {"id": f"call_e{n}", "name": "read_log", "args": {"part": f"e{n}"}}
        messages += [HumanMessage(f"read part e{n} of the log"), AIMessage("", tool_calls=[call]), ToolMessage(f"# e{n}\n{part}", tool_call_id=call["id"]), AIMessage(f"part e{n} is clean")]
    return messages


def test_a_history_over_the_window_sends_the_summarizer_all_of_it(tmp_path):
    """deepagents#5913 in ``create_deep_agent``: a thread resumed with 18,000 tokens of earlier turns
    (over twice the model's 8,000) summarizes before its first model call, and the summary request holds
    the whole older history: the model answers 400 ``context_length_exceeded``. LangChain 1.4.4 on
    retries the summary call with a shorter prompt and the turn goes on; before it the error escapes the
    agent (a crash)."""
    import langchain.agents.middleware.summarization as lc_summarization
    from langchain_core.messages import HumanMessage

    endpoint = WindowedModel(rounds=1)
    agent = _deep_agent(endpoint, tmp_path)
    retries = hasattr(lc_summarization.SummarizationMiddleware, "_overflow_retry_prompt")
    try:
        agent.invoke({"messages": [*_earlier_turns(12), HumanMessage("read the last part")]})
        crashed = None
    except Exception as error:  # noqa: BLE001 - what escapes the agent is the point
        crashed = error
    summary_requests = [b for b in endpoint.requests if not b.get("tools")]
    assert endpoint.over and summary_requests, "the summary request went over the window"
    assert "# e0" in json.dumps(summary_requests[0]) and "# e11" in json.dumps(summary_requests[0]), "it held the whole older history"
    if retries:
        assert crashed is None and any(prompt_tokens(b["messages"]) <= WINDOW for b in summary_requests[1:])
    else:
        assert crashed is not None and "context_length_exceeded" in str(crashed)


def test_the_deep_agent_path_declares_the_trigger_and_keep_create_deep_agent_computes():
    """``deepagents:deep_agent`` (``create_deep_agent``'s own summarization) declares a token trigger and
    keep at the fractions of the profile's window that deepagents computes for that model at the installed
    release (``compute_summarization_defaults``, ``_compute_summarization_defaults`` before 0.7)."""
    summarization = pytest.importorskip("deepagents.middleware.summarization", reason="deepagents is not installed")
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    from compaction_suite.adapters import deepagents

    compute = getattr(summarization, "compute_summarization_defaults", None) or summarization._compute_summarization_defaults
    model = ChatOpenAI(model="scripted", api_key=SecretStr("scripted"), base_url="http://127.0.0.1:9/v1", profile={"max_input_tokens": WINDOW})
    computed = compute(model)
    settings = type("Settings", (), {"model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key": "k", "summarizer_timeout": 1.0})()
    declared = deepagents.deep_agent(settings).capabilities
    assert computed["trigger"][0] == computed["keep"][0] == "fraction"
    assert declared["trigger"] == {"tokens": int(WINDOW * computed["trigger"][1])}
    assert declared["keeps"] == {"tokens": int(WINDOW * computed["keep"][1])}
    assert declared["offloads"] == ["/conversation_history/"]  # 0.3.7 on: the summarized history's file (STORE-30)


def test_the_state_backend_offload_reads_back_as_download_files_gives_it():
    """``deep_agent(backend="state")`` reads an offload from the ``files`` channel of the agent's final state:
    a text (or its lines, before 0.5) as UTF-8, a binary file's base64 decoded, a missing file as None."""
    import base64

    from compaction_suite.adapters._deepagents_stack import _state_reader

    state = {"files": {
        "/conversation_history/s.md": {"content": "## Summarized", "encoding": "utf-8"},
        "/conversation_history/media/p.png": {"content": base64.b64encode(b"\x89PNG").decode(), "encoding": "base64"},
        "/old.md": {"content": ["a", "b"]},
    }}  # fmt: skip
    read = _state_reader(state)
    assert read("/conversation_history/s.md") == b"## Summarized"
    assert read("/conversation_history/media/p.png") == b"\x89PNG"
    assert read("/old.md") == b"a\nb"
    assert read("/conversation_history/none.md") is None


def test_a_text_only_model_is_sent_what_the_deep_agent_path_gives_back():
    """``deep_agent(text_only=True)``: ``create_deep_agent`` on a model whose profile takes no images, given a
    user message pasting a screenshot. Its own loop sends the model that message with the image replaced by
    the stack's notice (``UnsupportedContentMiddleware`` from 0.7.19, the last middleware to touch the
    messages); the adapter's output, recorded in that middleware's slot, holds the same message."""
    pytest.importorskip("deepagents", reason="deepagents is not installed (pip install -e '.[deepagents]')")
    import base64

    import httpx
    from deepagents import create_deep_agent
    from langchain_core.messages import HumanMessage
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    from compaction_suite.adapters import deepagents
    from compaction_suite.adapters._deepagents_stack import TEXT_ONLY
    from compaction_suite.conformance.histories import flat_png
    from compaction_suite.conformance.summarizer_server import SummarizerServer

    url = "data:image/png;base64," + base64.b64encode(flat_png(64, 64, 10)).decode()
    pasted = [{"type": "text", "text": "here is the failing build"}, {"type": "image_url", "image_url": {"url": url}}]
    endpoint = WindowedModel(rounds=0)
    profile = {"max_input_tokens": WINDOW, **dict.fromkeys(TEXT_ONLY, False)}
    model = ChatOpenAI(
        model="scripted", api_key=SecretStr("scripted"), base_url="http://scripted.invalid/v1", max_retries=0,
        http_client=httpx.Client(transport=endpoint.transport()), profile=profile,
    )  # fmt: skip
    create_deep_agent(model=model, system_prompt=SYSTEM_PROMPT).invoke({"messages": [HumanMessage(pasted)]})
    sent = [m for m in endpoint.requests[-1]["messages"] if m["role"] == "user"]
    with SummarizerServer() as server:
        settings = type("Settings", (), {"model": "m", "base_url": server.base_url, "api_key": "k", "summarizer_timeout": 5.0})()
        out = deepagents.deep_agent(settings, text_only=True).compact([{"role": "user", "content": pasted}], iteration=1)
    assert sent[-1]["content"] != pasted, "the text-only model was sent the image"
    assert not any("image_url" in json.dumps(m) for m in sent)
    assert [m for m in out if m["role"] == "user"][-1]["content"] == sent[-1]["content"]
