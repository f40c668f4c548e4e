"""Deep Agents' ``create_deep_agent`` invoked on the history: with its own summarization alone
(`built_in`), or with a user's ``SummarizationMiddleware`` passed to it (`user_middleware`, SPEC CORE-65).

`built_in` is how most users meet deepagents' summarization: the stack ``create_deep_agent`` builds, its
trigger and keep computed from the model's profile (85% and 10% of ``max_input_tokens``) from 0.3.0
(December 2025) on. Up to 0.3.6 that middleware is LangChain's ``SummarizationMiddleware`` built with
``trim_tokens_to_summarize=None``; from 0.3.7 deepagents' own subclass of it, which offloads the messages it
summarizes to ``/conversation_history/<thread>.md`` on the backend and rewrites the state in ``before_model``;
from 0.4.0 deepagents' own ``wrap_model_call`` class, from 0.4.5 built by
``create_summarization_middleware`` (the ``summarization`` factory's path, which builds the middleware
alone). 0.2.x summarizes at a fixed 170,000 tokens, past any history the suite draws, so the path starts
at 0.3.0.

deepagents documents customising summarization by passing LangChain's ``SummarizationMiddleware`` in
``create_deep_agent(middleware=[...])``. Which middleware then summarizes is ``create_deep_agent``'s
doing, so the adapter does not rebuild the stack: it calls ``create_deep_agent(model, middleware=[user's,
recorder], backend=...)`` and invokes the agent's own graph on the history. Up to 0.5.3 deepagents appends
the user's middleware after its own; from 0.5.4 to 0.6.12 its own answers to LangChain's name, so
``create_agent`` refuses the pair ("Please remove duplicate middleware instances.") and the user's agent
cannot be built; from 0.7.0 (its alphas from a8) a user middleware named like a built-in one replaces it
in place. The refusal is the framework's, so it comes out of ``compact`` (CORE-10's crash), never as a
contract error (SPEC, "The framework matrix and releases", Decision on a documented configuration the
framework refuses). The recorder, the innermost middleware, takes the messages of the model request
every summarization before it passed on, and answers it (the agent ends); those messages are the
output. The model is ``ChatOpenAI`` on the suite's summarizer with a ``max_input_tokens`` profile of
``window``, so every summary either middleware writes is a request the suite sees.
"""

from __future__ import annotations

import base64
import importlib
import importlib.util
import tempfile
from typing import Any

from ._common import capabilities, make, requires
from ._deepagents_offloads import HISTORY_PREFIX, reader
from .deepagents import SESSION, SESSION_KEY, THREAD
from .langchain import approximate_tokens, chat_model, compacting, langchain_messages

EXTRA = "deepagents"
# The agent is invoked in one conversation thread (`THREAD`), as a deep agent with a checkpointer is: from 0.3.7
# to 0.7.5 its summarization names the offload file after the config's ``thread_id`` (``_get_thread_id``; a new
# ``session_<8 hex>`` per invocation without one), so a summary names the same file for the same history; from
# 0.7.6 the file is named by the session id carried in the state (``SESSION_KEY``, deepagents PR #5470), a private
# channel the agent's input omits: the thread's checkpoint holds it, as after the thread's first summarization.


def _recorder(sent: list[Any]) -> Any:
    """An innermost ``AgentMiddleware`` that keeps the request's messages and answers without a model call.

    ``create_deep_agent`` lands a user's middleware ahead of its tail (prompt caching, memory, skills and,
    from 0.7.19, ``UnsupportedContentMiddleware``, the last one that rewrites the messages), so a recorder
    passed as itself would answer before that tail ran. From 0.7.19 the recorder therefore takes the
    ``UnsupportedContentMiddleware`` slot by its name (a user middleware named like a built-in one replaces
    it in place, 0.7.0 on) and runs that middleware itself before it records: what it keeps is what the
    model is sent (``tests/test_deepagents_loop.py``)."""
    middleware = requires("langchain.agents.middleware", EXTRA)
    lc = requires("langchain_core.messages", EXTRA)
    unsupported = getattr(importlib.import_module("deepagents.middleware"), "UnsupportedContentMiddleware", None)
    inner = unsupported() if unsupported is not None else None

    def record(request: Any) -> Any:
        sent[:] = list(request.messages)
        answer = lc.AIMessage(content="done")
        response = getattr(middleware, "ModelResponse", None)
        return response(result=[answer]) if response is not None else answer

    class CompactionSuiteRecorder(middleware.AgentMiddleware):  # type: ignore[name-defined]
        @property
        def name(self) -> str:
            return "UnsupportedContentMiddleware" if inner is not None else type(self).__name__

        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            return inner.wrap_model_call(request, record) if inner is not None else record(request)

    return CompactionSuiteRecorder()


def user_middleware(settings: Any, o: dict[str, Any]) -> Any:
    """``create_deep_agent(model, middleware=[SummarizationMiddleware(model, trigger=("tokens",
    user_trigger_tokens), keep=("messages", user_keep_messages)), recorder], backend=FilesystemBackend(...))``
    invoked on the history; declares the user's ``keep`` (CORE-65)."""
    lcmw = requires("langchain.agents.middleware", EXTRA)
    model = chat_model(settings, o, profile={"max_input_tokens": int(o["window"])})
    keep = int(o["user_keep_messages"])
    user = lcmw.SummarizationMiddleware(model=model, trigger=("tokens", int(o["user_trigger_tokens"])), keep=("messages", keep))
    declared = {**capabilities("outside"), "keeps": {"messages": keep}}
    return _invoked(o, model, [user], "deepagents.create_deep_agent[middleware=SummarizationMiddleware]", declared)


TEXT_ONLY = ("image_inputs", "audio_inputs", "video_inputs", "pdf_inputs", "image_tool_message", "pdf_tool_message")
"""The ``ModelProfile`` fields a text-only model's profile sets False, which deepagents' multimodal scrub
(``FilesystemMiddleware`` before 0.7.19, ``UnsupportedContentMiddleware`` from it) reads."""


def built_in(settings: Any, o: dict[str, Any], declared: dict[str, Any]) -> Any:
    """``create_deep_agent(model, middleware=[recorder], backend=FilesystemBackend(...))`` invoked on the
    history: its own summarization, whose trigger and keep, computed from the profile's window, the caller
    declares (``deepagents.by_profile``, as the ``summarization`` factory does for the middleware alone).
    From 0.3.7, whose summarization writes the messages it summarizes to ``/conversation_history/`` on the
    backend and names the file in the summary, that offload is declared and read back (SPEC STORE-30)."""
    profile: dict[str, Any] = {"max_input_tokens": int(o["window"])}
    if o.get("text_only"):  # a text-only model's profile (models.dev's, as LangChain's registry gives it): no media input
        profile |= dict.fromkeys(TEXT_ONLY, False)
    model = chat_model(settings, o, profile=profile)
    if o.get("backend", "filesystem") not in ("filesystem", "state"):
        raise ValueError(f"backend must be 'filesystem' or 'state', got {o['backend']!r}")
    if importlib.util.find_spec("deepagents.middleware.summarization") is not None:  # 0.3.7 on: the history offloaded
        declared = {**declared, "offloads": [HISTORY_PREFIX]}  # the file the summary names (SPEC STORE-30)
    return _invoked(o, model, [], "deepagents.create_deep_agent", declared, in_state=o.get("backend") == "state")


def _state_reader(state: dict[str, Any]) -> Any:
    """``read_offload`` for an agent on ``StateBackend``: the file at ``path`` in the ``files`` channel of the
    state its last invocation ended with (a ``content`` text, or its lines before 0.5; base64 for a binary
    file, decoded as ``download_files`` gives it), or None."""

    def read_offload(path: str) -> bytes | None:
        file = (state.get("files") or {}).get(path)
        if not isinstance(file, dict):
            return None
        content = file.get("content")
        if isinstance(content, list):
            content = "\n".join(str(line) for line in content)
        if not isinstance(content, str):
            return None
        return base64.b64decode(content) if file.get("encoding") == "base64" else content.encode()

    return read_offload


def _invoked(o: dict[str, Any], model: Any, middleware: list[Any], name: str, declared: dict[str, Any], *, in_state: bool = False) -> Any:
    """A compactor that invokes ``create_deep_agent(model, middleware=[*middleware, recorder], backend=...)``'s
    own graph on each history and returns the messages of the model request the recorder took. ``in_state``:
    no backend given, so the agent keeps its files in its state (``StateBackend``, ``create_deep_agent``'s
    default), where the offload is read back from."""
    deepagents = requires("deepagents", EXTRA)
    backends = requires("deepagents.backends", EXTRA)
    sent: list[Any] = []
    folder = tempfile.TemporaryDirectory(prefix="compaction-suite-deepagents-stack-")
    backend = backends.FilesystemBackend(root_dir=folder.name, virtual_mode=True)
    ended: dict[str, Any] = {}  # the state the last invocation ended with
    agent: Any = None
    refusal: AssertionError | None = None
    saver = requires("langgraph.checkpoint.memory", EXTRA).InMemorySaver()
    try:
        given = {} if in_state else {"backend": backend}
        agent = deepagents.create_deep_agent(model=model, middleware=[*middleware, _recorder(sent)], checkpointer=saver, **given)
    except AssertionError as refused:  # create_agent's refusal of two middlewares of one name (0.5.4-0.6.12)
        refusal = refused
    carries_session = SESSION_KEY in getattr(agent, "channels", {})

    def invoked(converted: list[Any]) -> list[Any]:
        if refusal is not None:
            raise refusal  # what the user's program meets building its agent (CORE-10)
        sent.clear()
        ended.clear()
        saver.delete_thread(SESSION)  # each compaction a fresh thread of the same name
        if carries_session:  # a private channel (omitted from the input from 0.7.6): written as the model node would
            agent.update_state(THREAD, {SESSION_KEY: SESSION}, as_node="model")
        ended.update(agent.invoke({"messages": list(converted)}, config=THREAD) or {})
        return list(sent)

    def estimate(history: Any) -> int:
        return approximate_tokens(langchain_messages(o, history))

    compactor = make(name, {"core"}, compacting(o, invoked), declared=declared, estimate=estimate)
    compactor.offload = folder
    if declared.get("offloads"):
        compactor.read_offload = _state_reader(ended) if in_state else reader(backend, folder.name)
    return compactor
