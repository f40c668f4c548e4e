"""Deep Agents' offloads: what its middleware writes to the backend and the message it leaves in the
context (SPEC STORE-30, STORE-31), driven as ``create_deep_agent``'s loop runs them.

* ``path: "eviction"``: ``FilesystemMiddleware``'s large tool result eviction. The tool node runs each
  tool call through the middleware's ``wrap_tool_call``, whose handler executes the tool; the middleware
  writes a result over ``tool_token_limit_before_evict`` tokens (chars/4) to
  ``/large_tool_results/<call id>`` and returns a notice naming the file. The adapter hands each tool
  result of the history to ``wrap_tool_call`` as its tool's answer, in order, on one backend (one
  agent's thread: each compaction a backend of its own, since each history is another thread's calls,
  whose ids the suite's histories reuse; before 0.4 ``FilesystemBackend.write`` refuses a path that
  exists), and the history with each result as the middleware returned it is the output: what the
  agent's state holds, and its model is sent, after those tool calls; ``read_offload`` reads the newest
  compaction's backend. ``format: "anthropic-messages"`` holds the history as an agent on ``ChatAnthropic``
  does (``_langchain_anthropic``: a failed call's ``is_error`` its ``ToolMessage``'s ``status``) and gives
  back what ``langchain-anthropic`` sends (SPEC CORE-62).
* ``path: "compact_tool"``: ``SummarizationToolMiddleware``'s ``compact_conversation`` tool, the agent
  compacting its own context. The model answers the history with a call of the tool (its usage as the
  provider reports it, the history's size); the tool runs on the agent's state as the tool node runs it
  (``ToolRuntime``), writing the older messages to ``/conversation_history/<session>.md`` and a
  summarization event into the state; the next model request goes through ``create_deep_agent``'s
  ``SummarizationMiddleware.wrap_model_call``, which sends the summary and the kept messages. The output
  is that request's messages without the compact call and its result (the agent's own step).

Either way ``read_offload(path)`` reads the backend (``download_files``, the raw bytes; the agent's
``read_file`` shows the same text with line numbers).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from ._common import capabilities, make, requires
from .langchain import approximate_tokens, chat_model, compacting, langchain_messages

EXTRA = "deepagents"
EVICTION_PREFIX = "/large_tool_results/"
HISTORY_PREFIX = "/conversation_history/"
COMPACT_CALL = "call_compaction_suite_compact"
"""The id of the agent's ``compact_conversation`` call (OpenAI's form)."""


def reader(backend: Any, root: str) -> Any:
    """``read_offload``: the backend's bytes at ``path`` (``download_files``), or None."""

    def read_offload(path: str) -> bytes | None:
        download = getattr(backend, "download_files", None)
        if callable(download):
            got = download([path])
            if got and getattr(got[0], "error", None) is None and getattr(got[0], "content", None) is not None:
                return bytes(got[0].content)
            return None
        file = Path(root) / path.lstrip("/")  # a release without download_files: the file it wrote
        return file.read_bytes() if file.is_file() else None

    return read_offload


def eviction(settings: Any, o: dict[str, Any]) -> Any:
    """``FilesystemMiddleware(backend=FilesystemBackend(<temp dir>, virtual_mode=True),
    tool_token_limit_before_evict=o["evict_tokens"])``'s ``wrap_tool_call`` on each tool result."""
    backends = requires("deepagents.backends", EXTRA)
    filesystem = requires("deepagents.middleware.filesystem", EXTRA)
    limit = int(o["evict_tokens"])
    folder = tempfile.TemporaryDirectory(prefix="compaction-suite-deepagents-evict-")
    threads: list[Any] = []  # each compaction's backend, the newest last

    def evicted(converted: list[Any]) -> list[Any]:
        root = Path(folder.name) / f"thread-{len(threads)}"
        root.mkdir()
        threads.append((backends.FilesystemBackend(root_dir=str(root), virtual_mode=True), str(root)))
        middleware = filesystem.FilesystemMiddleware(backend=threads[-1][0], tool_token_limit_before_evict=limit)
        return tool_node_results(middleware, converted)

    run = compacting(o, evicted)
    declared = {**capabilities("outside"), "offloads": [EVICTION_PREFIX], "offload_result_tokens": limit}
    if o["format"] == "anthropic-messages":  # ChatAnthropic's history: each tool_result a ToolMessage, is_error its status
        declared["wire_format"] = "anthropic-messages"
    elif o["format"] != "chat-completions":
        raise ValueError(f"path 'eviction' takes format 'chat-completions' or 'anthropic-messages', got {o['format']!r}")

    def estimate(history: Any) -> int:
        return approximate_tokens(langchain_messages(o, history))

    def read_offload(path: str) -> bytes | None:
        return reader(*threads[-1])(path) if threads else None

    compactor = make("deepagents.FilesystemMiddleware[eviction]", {"core"}, run, declared=declared, estimate=estimate)
    compactor.read_offload = read_offload
    compactor.offload = folder  # the backends' directory lives as long as the compactor
    return compactor


def tool_node_results(middleware: Any, converted: list[Any]) -> list[Any]:
    """``converted`` with each ``ToolMessage`` as ``middleware.wrap_tool_call`` returns it when the tool
    answers with it: the request carries the call of the assistant message before it (the name and
    arguments the model sent) and the agent's state up to that call."""
    lc = requires("langchain_core.messages", EXTRA)
    prebuilt = requires("langgraph.prebuilt.tool_node", EXTRA)
    calls: dict[int, dict[str, Any]] = {}
    out: list[Any] = []
    opener: list[dict[str, Any]] = []
    for message in converted:
        if isinstance(message, lc.AIMessage):
            opener = list(message.tool_calls)
        if not isinstance(message, lc.ToolMessage):
            out.append(message)
            continue
        call = next((c for c in opener if c.get("id") == message.tool_call_id and id(c) not in calls), None) or {
            "id": message.tool_call_id, "name": message.name or "tool", "args": {}, "type": "tool_call"
        }  # fmt: skip
        calls[id(call)] = call
        request = prebuilt.ToolCallRequest(tool_call=call, tool=None, state={"messages": list(out)}, runtime=None)
        result = middleware.wrap_tool_call(request, lambda _request, answer=message: answer)
        out.append(result if isinstance(result, lc.ToolMessage) else message)
    return out


def compact_tool(settings: Any, o: dict[str, Any], build: Any, state: dict[str, Any]) -> Any:
    """``create_summarization_tool_middleware(model, backend)``'s ``compact_conversation`` called by the
    agent on the history, then ``create_deep_agent``'s ``SummarizationMiddleware`` on the next model
    request; the model on the suite's summarizer with a ``max_input_tokens`` of ``o["window"]``.
    ``build(model, backend, trim)`` is the summarization middleware as ``create_deep_agent`` builds it;
    ``state`` the agent's state besides its messages (the offload file's session id, so that the same
    history gives the same output). The suite's tools keep their names."""
    backends = requires("deepagents.backends", EXTRA)
    summarization = requires("deepagents.middleware.summarization", EXTRA)
    window = int(o["window"])
    model = chat_model(settings, o, profile={"max_input_tokens": window})
    folder = tempfile.TemporaryDirectory(prefix="compaction-suite-deepagents-compact-")
    backend = backends.FilesystemBackend(root_dir=folder.name, virtual_mode=True)
    automatic = build(model, backend, o["trim_tokens_to_summarize"])
    tool = summarization.SummarizationToolMiddleware(automatic).tools[0]
    run = compacting(o, lambda converted: after_compact_call(tool, automatic, model, converted, state))
    declared = {**capabilities("outside"), "offloads": [HISTORY_PREFIX]}

    def estimate(history: Any) -> int:
        return approximate_tokens(langchain_messages(o, history))

    compactor = make("deepagents.SummarizationToolMiddleware[compact_conversation]", {"core"}, run, declared=declared, estimate=estimate)
    compactor.read_offload = reader(backend, folder.name)
    compactor.offload = folder
    return compactor


def after_compact_call(tool: Any, automatic: Any, model: Any, converted: list[Any], given: dict[str, Any]) -> list[Any]:
    """The messages of the model request after the agent's ``compact_conversation`` call on ``converted``,
    the call and its result left out."""
    from .langchain import model_sees

    lc = requires("langchain_core.messages", EXTRA)
    prebuilt = requires("langgraph.prebuilt.tool_node", EXTRA)
    size = approximate_tokens(converted)
    call = lc.AIMessage(
        content="", tool_calls=[{"id": COMPACT_CALL, "name": tool.name, "args": {}, "type": "tool_call"}],
        usage_metadata={"input_tokens": size, "output_tokens": 12, "total_tokens": size + 12},
        response_metadata={"model_provider": "openai"}, id="compaction-suite-compact-call",
    )  # fmt: skip
    state: dict[str, Any] = {**given, "messages": [*converted, call]}
    runtime = prebuilt.ToolRuntime(state=state, context=None, config={}, stream_writer=lambda _chunk: None, tool_call_id=COMPACT_CALL, store=None)
    command = tool.func(runtime)
    update = dict(getattr(command, "update", None) or {})
    answer = [m for m in update.pop("messages", []) if isinstance(m, lc.ToolMessage)]
    state = {**state, **update, "messages": [*state["messages"], *answer]}
    sent = model_sees(automatic, model, state["messages"], {k: v for k, v in state.items() if k != "messages"})
    return [m for m in sent if not _compact_step(m)]


def _compact_step(message: Any) -> bool:
    """Whether ``message`` is the agent's compact call or its result."""
    if getattr(message, "tool_call_id", None) == COMPACT_CALL:
        return True
    return any(c.get("id") == COMPACT_CALL for c in getattr(message, "tool_calls", None) or [])
