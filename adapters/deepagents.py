"""Deep Agents (``deepagents``, on LangChain): the summarization middleware ``create_deep_agent`` installs.

Target (options in ``$COMPACTION_ADAPTER_OPTIONS``; research and declarations in ``adapters/README.md``)::

    compaction-suite check compaction_suite.adapters.deepagents:summarization

``create_deep_agent(model, ...)`` puts ``create_summarization_middleware(model, backend)`` in its
middleware stack (deepagents 0.4 on): a ``wrap_model_call`` that, before each model call, replaces
the older messages of the request by a summary written by the agent's own model, after offloading
them to ``/conversation_history/<session>.md`` on the backend; the graph state keeps every message.
The adapter runs it as the agent loop does: ``wrap_model_call`` on a model request holding the
history, the system prompt apart (``create_deep_agent``'s ``system_prompt`` goes in the request's
``system_message``), and the messages the model call receives are the output. Conversion is the
LangChain adapter's (``ChatOpenAI`` on the suite's summarizer, whose profile gives the model's
context window; ``format: "anthropic-messages"``: ``ChatAnthropic``, ``create_deep_agent``'s default
model, on the suite's ``/v1/messages``, with the Anthropic histories drawn as it stores them). Proven by ``tests/test_deepagents_loop.py`` with ``create_deep_agent``'s own loop.
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Callable
from typing import Any

from . import _deepagents_offloads as offloads
from ._common import CannotDrive, accepts, capabilities, factory, make, options, requires
from .langchain import approximate_tokens, chat_model, compacting, langchain_messages, model_sees

FRAMEWORK = "LangChain (deepagents)"
SUPPORTED: dict[str, str] = {
    "deepagents": ">=0.4.5,<0.8",
    "langchain": ">=1.0,<2",
    "langchain-core": ">=1.0,<2",
    "langchain-openai": ">=1.0,<2",
}
"""Agreed interface 3: from 0.4.5 (March 2026), the first release with ``create_summarization_middleware``,
the factory ``create_deep_agent`` builds its summarization middleware with; its ``trim_tokens_to_summarize``
keyword arrived in 0.6.8 (before it, a configuration that passes it is a contract error). 0.7 (July 2026
on) keeps the offload file under a session id carried in the state."""
SUPPORTED_BY_PATH: dict[str, dict[str, str]] = {
    "user_summarization": {"deepagents": ">=0.4.0,<0.8", "langchain": ">=1.0,<2", "langchain-core": ">=1.0,<2", "langchain-openai": ">=1.0,<2"},
    "eviction": {"deepagents": ">=0.3.0,<0.8", "langchain": ">=1.0,<2", "langchain-core": ">=1.0,<2", "langchain-openai": ">=1.0,<2"},
    "deep_agent": {"deepagents": ">=0.3.0,<0.8", "langchain": ">=1.0,<2", "langchain-core": ">=1.0,<2", "langchain-openai": ">=1.0,<2"},
}
"""`user_summarization` runs ``create_deep_agent`` itself, so it needs no factory of deepagents': from 0.4.0
(February 2026), whose ``create_deep_agent`` builds its own summarization from the model's profile
(``_compute_summarization_defaults``) and appends the user's middleware after it, on LangChain 1.x (0.4.x
was released beside langchain 1.2).
`eviction` drives ``FilesystemMiddleware`` alone, so it needs no summarization factory: from 0.3.0
(December 2025), whose middleware already takes ``tool_token_limit_before_evict`` and evicts in
``wrap_tool_call`` on a ``FilesystemBackend(virtual_mode=True)`` with ``download_files``.
`deep_agent` runs ``create_deep_agent`` with its own summarization alone: from 0.3.0, the first release whose
trigger and keep come from the model's profile (`_deepagents_stack`), three months of releases before the
``summarization`` factory's floor."""
DISTRIBUTIONS = ("deepagents", "langchain-core", "langchain", "langchain-openai", "langchain-anthropic")
SWEEP_INSTALL = (*DISTRIBUTIONS, "langchain-groq", "langchain-mistralai", "langchain-ollama")
"""A sweep's environment also holds the provider classes the reactive path's ``model`` option names
(`_langchain_models`), as the ``deepagents`` extra does, so those configurations run at each release."""
EXTRA = "deepagents"

DEFAULTS: dict[str, Any] = {
    "window": 8000,
    "trim_tokens_to_summarize": "factory",
    "tool_messages": "plain",
    "format": "chat-completions",  # or "anthropic-messages": the model is ChatAnthropic, create_deep_agent's default
    "path": "request",  # "request": the messages wrap_model_call hands on; "reactive": the agent's model called, its overflow answer read (SPEC FIRE-5); "eviction", "compact_tool": adapters/_deepagents_offloads.py
    "model": "openai",  # path "reactive": the agent's LangChain class (openai, anthropic, groq, mistral, ollama; adapters/_langchain_models.py)
    "reactive_window": 8000,  # path "reactive": the agent model's context window on its double, at least the fixed sizes a profile-less model's recovery works in (adapters/README.md)
    "overflow_answer": None,  # path "reactive": the double's answer (conformance.overflow; None: the model's provider's own)
    "file_tool": "read_file",
    "evict_tokens": 500,  # path "eviction": FilesystemMiddleware's tool_token_limit_before_evict
}
USER_DEFAULTS: dict[str, Any] = {
    "window": 8000,
    "format": "chat-completions",
    "tool_messages": "plain",
    "user_trigger_tokens": 7600,
    "user_keep_messages": 20,
}
"""`user_summarization`: the model's window (its profile), and the trigger and keep of the user's
``SummarizationMiddleware`` (a trigger above the built-in one's 85% of the window, as a user who
raises it configures)."""
"""``window``: the model's ``max_input_tokens`` (its LangChain profile), from which
``create_summarization_middleware`` derives its trigger (85% of it) and what it keeps (10%), and
the window of its summarizer, which is the same model. ``trim_tokens_to_summarize``: ``"factory"``
calls the factory as ``create_deep_agent`` does, without it (deepagents#5913: the factory's own
default, ``None`` in 0.7.x, sends the whole older history); an integer or ``None`` passes it.
``path: "reactive"``: `reactive`. ``path: "eviction"``: ``FilesystemMiddleware``'s large tool result
eviction, ``evict_tokens`` its ``tool_token_limit_before_evict`` (20,000 by default in deepagents; 500
here, so that a drawn history holds results over it), the suite's tools kept as its own (deepagents
exempts its file tools, ``read_file`` among them, from eviction); ``path: "compact_tool"``: the agent's
``compact_conversation`` call, then its next model request (`_deepagents_offloads`).
``file_tool``: ``"read_file"`` holds the suite's ``readFile(path)`` calls as calls of the tool
``create_deep_agent`` always installs for reading files (``FilesystemMiddleware``'s
``read_file(file_path, offset, limit)``, whose results the middleware treats apart: its overflow clip
slices them, deepagents 0.7.32 ``_overflow_clip._read_file_original_path``), and gives them back
as they were; ``"suite"`` keeps the suite's name."""

FILE_TOOL = ("readFile", "path", "read_file", "file_path")
"""The suite's file-reading tool and its argument, and deepagents' own (``FilesystemMiddleware``)."""

TRIGGER_FRACTION = 0.85
"""``compute_summarization_defaults``: ``trigger=("fraction", 0.85)`` of ``max_input_tokens``
(deepagents 0.7.x, ``deepagents/middleware/summarization.py``), counted by
``count_tokens_approximately`` (about chars/4) over the messages, system message and tools."""

KEEP_FRACTION = 0.10
"""``compute_summarization_defaults``: ``keep=("fraction", 0.10)`` of ``max_input_tokens`` (deepagents 0.4.5 on)."""

SESSION_KEY = "_summarization_session_id"
SESSION = "session_compaction_suite"
"""The offload file's session id, as the state carries it after a thread's first summarization
(``_get_session_id``): fixed, so the same history gives the same summary message."""
THREAD = {"configurable": {"thread_id": SESSION}}
"""The config of one conversation thread named `SESSION` (`in_thread`, `_deepagents_stack`)."""


def in_thread(call: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``call`` run as a node of an agent invoked with ``{"configurable": {"thread_id": SESSION}}``, as
    ``create_deep_agent`` with a checkpointer is: before 0.7.6 the middleware names its offload file after
    the config's ``thread_id`` (``_get_thread_id``, a new ``session_<8 hex>`` per call outside a runnable
    context), so a thread's summaries append to one file, as they do from 0.7.6 under the state's session
    id (deepagents PR #5470)."""
    config = requires("langchain_core.runnables.config", EXTRA)

    def threaded(converted: Any) -> Any:
        token = config.var_child_runnable_config.set(THREAD)
        try:
            return call(converted)
        finally:
            config.var_child_runnable_config.reset(token)

    return threaded

_MIDDLEWARE_ERRORS: list[dict[str, str]] = [
    {
        "quote": "The complete request is checked against the input budget after summarization. Irreducible input raises `ContextOverflowError`.",
        "source": "deepagents 0.7.32, deepagents/middleware/summarization.py (SummarizationMiddleware.wrap_model_call docstring)",
    },
    {
        "quote": "If a summary call still fails, the underlying error propagates rather than fabricating a summary.",
        "source": "langchain 1.5.2, langchain/agents/middleware/summarization.py (SummarizationMiddleware docstring, whose summary call deepagents makes)",
    },
]  # fmt: skip
DOCUMENTED: list[dict[str, Any]] = [
    {"factory": factory, "clause": "CORE-10", "options": {}, **documented}
    for factory in ("summarization", "deep_agent")  # deep_agent: the middleware create_deep_agent builds
    for documented in _MIDDLEWARE_ERRORS
]
"""Agreed interface 4: a history whose kept part cannot fit the model, and a summarizer error, raise by design."""

WHY = {
    "summarization": (
        "core only: a trigger at 85% of the model's window (no iteration trigger); the summary is a HumanMessage "
        "naming the backend file of the offloaded history, keeping 10% of the window; summarizer errors propagate; no event"
    ),
    "eviction": (
        "core only: FilesystemMiddleware writes a tool result over tool_token_limit_before_evict to the backend and leaves "
        "a notice naming the file; no summary, no summarizer, no event"
    ),
    "user_summarization": (
        "core only: create_deep_agent's own stack with the user's SummarizationMiddleware; its trigger and keep are the "
        "user's (from 0.7.0) or the built-in one's first (before); summarizer errors propagate; no event"
    ),
    "deep_agent": (
        "core only: create_deep_agent's own stack and summarization, a trigger at 85% of the model's window keeping 10% "
        "(from 0.3.0; LangChain's SummarizationMiddleware before 0.3.7); summarizer errors propagate; no event"
    ),
}
"""Why each factory claims only ``core``."""

BASE_CONFIGURATIONS: list[tuple[str, dict[str, Any]]] = [
    ("summarization", {}),
    ("summarization", {"trim_tokens_to_summarize": 4000}),
    ("summarization", {"path": "reactive"}),
    ("summarization", {"path": "eviction"}),
    ("summarization", {"path": "compact_tool"}),
    ("user_summarization", {}),
    ("deep_agent", {}),
    ("deep_agent", {"backend": "state"}),
    ("deep_agent", {"text_only": True}),
]
"""What ``compaction-suite matrix`` runs (``CONFIGURATIONS`` adds the reactive path on each installed
`PROVIDER_CLASSES` class): ``create_deep_agent``'s own configuration, the one
that trims what it summarizes to 4,000 tokens (the middleware class's own default), and the reactive path on ``ChatOpenAI``. Not yet its
configuration on ``ChatAnthropic`` (``format: "anthropic-messages"``): deepagents drops Claude's
reasoning blocks from the messages it keeps after a summary on purpose (``_drop_bound_reasoning``,
0.7.32), which ANTH-3's Decision judges in every turn while the API accepts it in a closed one
(``adapters/README.md``, Deep Agents)."""
PROVIDER_CLASSES = {"groq": "langchain_groq", "mistral": "langchain_mistralai", "ollama": "langchain_ollama"}
"""The reactive path's provider classes beyond ``ChatOpenAI`` (the ``deepagents`` extra brings them, and a
version sweep installs them, ``SWEEP_INSTALL``): their configurations run where the package is installed."""


def _middleware(model: Any, backend: Any, trim: Any) -> Any:
    """``create_summarization_middleware`` as ``create_deep_agent`` calls it (``"factory"``), or with
    ``trim_tokens_to_summarize`` given."""
    create = requires("deepagents.middleware.summarization", EXTRA).create_summarization_middleware
    if trim == "factory":
        return create(model, backend)
    if trim is not None and (isinstance(trim, bool) or not isinstance(trim, int) or trim < 1):
        raise ValueError(f"trim_tokens_to_summarize must be 'factory', a positive integer or null, got {trim!r}")
    if not accepts(create, "trim_tokens_to_summarize"):
        raise CannotDrive(
            "deepagents:summarization",
            "deepagents",
            "create_summarization_middleware takes trim_tokens_to_summarize from 0.6.8 on (the factory's own configuration runs)",
        )
    return create(model, backend, trim_tokens_to_summarize=trim)


def by_profile(window: int) -> dict[str, Any]:
    """What deepagents' summarization computes from a model profile of ``window`` tokens, declared: its
    trigger, its keep (SPEC CORE-65) and the summarizer's window (the same model)."""
    trigger, keep = {"tokens": int(window * TRIGGER_FRACTION)}, {"tokens": int(window * KEEP_FRACTION)}
    return {**capabilities("outside", trigger), "summarizer_window": window, "keeps": keep}


@factory
def summarization(settings: Any, **given: Any) -> Any:
    """``create_summarization_middleware(model, backend)`` with the model on the suite's summarizer
    (``ChatOpenAI``, or ``ChatAnthropic`` for ``format: anthropic-messages``) whose profile says its
    window, and a ``FilesystemBackend`` in a temporary directory."""
    o = options(DEFAULTS, given)
    if o["path"] == "reactive":
        return reactive(settings, o)
    if o["path"] == "eviction":
        return offloads.eviction(settings, o)
    if o["path"] == "compact_tool":
        return offloads.compact_tool(settings, o, _middleware, {SESSION_KEY: SESSION})
    if o["path"] != "request":
        raise ValueError(f"path must be 'request', 'reactive', 'eviction' or 'compact_tool', got {o['path']!r}")
    window = int(o["window"])
    backends = requires("deepagents.backends", EXTRA)
    model = chat_model(settings, o, profile={"max_input_tokens": window})
    offload = tempfile.TemporaryDirectory(prefix="compaction-suite-deepagents-")
    backend = backends.FilesystemBackend(root_dir=offload.name, virtual_mode=True)
    middleware = _middleware(model, backend, o["trim_tokens_to_summarize"])
    declared = by_profile(window)
    declared["offloads"] = [offloads.HISTORY_PREFIX]  # the history file and its media (SPEC STORE-30)
    if o["format"] == "anthropic-messages":
        declared["wire_format"] = "anthropic-messages"
    elif o["format"] == "responses":  # ChatOpenAI on the Responses API (the LangChain adapter's format): function calls only
        declared |= {"wire_format": "responses", "tool_calls": "function"}
    else:
        declared["subagents"] = "delegates"  # its delegated() hook (SPEC STORE-33)
    run = compacting(o, in_thread(lambda converted: model_sees(middleware, model, converted, {SESSION_KEY: SESSION})))
    if o["file_tool"] == "read_file":
        run = _as_deepagents_file_reads(run)
    elif o["file_tool"] != "suite":
        raise ValueError(f"file_tool must be 'read_file' or 'suite', got {o['file_tool']!r}")

    def estimate(history: Any) -> int:
        return approximate_tokens(langchain_messages(o, history))

    compactor = make("deepagents.SummarizationMiddleware", {"core"}, run, declared=declared, estimate=estimate)
    compactor.offload = offload  # the backend's directory lives as long as the compactor
    compactor.read_offload = offloads.reader(backend, offload.name)
    if o["format"] == "chat-completions":  # a parent and its sub-agent compacting in one run, on the same backend (SPEC STORE-33)
        from . import _deepagents_subagents

        compactor.delegated = _deepagents_subagents.delegating(settings, o, window, backend)
    return compactor


EVICTION_DEFAULTS: dict[str, Any] = {key: DEFAULTS[key] for key in ("evict_tokens", "tool_messages", "format")}
"""`eviction`'s options: those of ``summarization``'s ``path: "eviction"`` it reads."""


@factory
def eviction(settings: Any, **given: Any) -> Any:
    """``FilesystemMiddleware``'s large tool result eviction (``summarization`` with ``path: "eviction"``,
    `_deepagents_offloads.eviction`), driven on every release from 0.3.0 (``SUPPORTED_BY_PATH``)."""
    return offloads.eviction(settings, options(EVICTION_DEFAULTS, given))


DEEP_AGENT_DEFAULTS: dict[str, Any] = {**{key: USER_DEFAULTS[key] for key in ("window", "format", "tool_messages")}, "backend": "filesystem", "text_only": False}
"""`deep_agent`: the model's window (its profile), the wire format and the tool messages' shape; ``backend``:
``"filesystem"`` (a ``FilesystemBackend`` in a temporary directory) or ``"state"`` (none given:
``create_deep_agent``'s default ``StateBackend``, its files in the agent's state); ``text_only``: the model's
profile also says it takes no image, audio, video or PDF input (a text-only model, as models.dev's profiles
in LangChain's registry say of many), so the stack's multimodal scrub replaces each such block of a user
message or tool result on every request (``UnsupportedContentMiddleware``, which ``create_deep_agent`` adds
from 0.7.19; ``FilesystemMiddleware``'s own scrub before, where the release has one)."""


@factory
def deep_agent(settings: Any, **given: Any) -> Any:
    """``create_deep_agent`` with its own summarization alone, its own graph invoked on the history
    (`_deepagents_stack.built_in`): the stack its users run, from 0.3.0."""
    from . import _deepagents_stack

    o = options(DEEP_AGENT_DEFAULTS, given)
    return _deepagents_stack.built_in(settings, o, by_profile(int(o["window"])))


@factory
def user_summarization(settings: Any, **given: Any) -> Any:
    """``create_deep_agent`` given LangChain's ``SummarizationMiddleware`` (``trigger=("tokens",
    user_trigger_tokens), keep=("messages", user_keep_messages)``), the documented way to configure its
    summarization, its own graph invoked on the history (`_deepagents_stack`; SPEC CORE-65)."""
    from . import _deepagents_stack

    return _deepagents_stack.user_middleware(settings, options(USER_DEFAULTS, given))


def reactive(settings: Any, o: dict[str, Any]) -> Any:
    """``path: "reactive"`` (SPEC FIRE-5): the middleware's fallback after its model's overflow answer.
    The agent's model is ``model``'s LangChain class (`_langchain_models`) on a double of its own whose
    context window is ``reactive_window``, answered as that provider answers; the summarizer is the same
    class on the suite's summarizer, as ``create_deep_agent`` gives the middleware its own model. Neither
    has a profile (a model LangChain's registry does not know), so ``compute_summarization_defaults``
    gives a 170,000-token trigger and keeps 6 messages: the provider's answer, not the trigger, is what
    starts the summary. ``wrap_model_call``'s handler calls the model as ``create_agent``'s model node
    does (the system message first), so what the class raises on the answer is what the middleware
    catches, or not; the output is the messages of the call that was answered."""
    from . import _langchain_models as models
    from ._model_double import ModelDouble

    kind = models.kind_of(o["model"])
    window = int(o["reactive_window"])
    double = ModelDouble(window, models.answers(kind, o["overflow_answer"]) or None)
    offload = tempfile.TemporaryDirectory(prefix="compaction-suite-deepagents-")
    backends = requires("deepagents.backends", EXTRA)
    summarizer = models.chat_model(
        kind, settings.base_url or "", settings.api_key or "compaction-suite", settings.model, settings.summarizer_timeout
    )
    middleware = _middleware(
        summarizer, backends.FilesystemBackend(root_dir=offload.name, virtual_mode=True), o["trim_tokens_to_summarize"]
    )

    def answered(converted: list[Any]) -> list[Any]:
        agent_model = models.chat_model(kind, double.server().base_url, "compaction-suite", settings.model, settings.summarizer_timeout)
        return model_answers(middleware, agent_model, converted, {SESSION_KEY: SESSION})

    declared = {**capabilities("outside"), "reactive_window": window}
    if o["format"] == "anthropic-messages":
        declared["wire_format"] = "anthropic-messages"
    elif o["format"] != "chat-completions":
        raise ValueError(f"path 'reactive' takes format 'chat-completions' or 'anthropic-messages', got {o['format']!r}")

    def estimate(history: Any) -> int:
        return approximate_tokens(langchain_messages(o, history))

    compactor = make(
        f"deepagents.SummarizationMiddleware[reactive, {kind}]", {"core"}, compacting(o, answered), declared=declared, estimate=estimate
    )
    compactor.offload, compactor.model_double = offload, double  # both live as long as the compactor
    return compactor


def model_answers(middleware: Any, model: Any, converted: list[Any], state: dict[str, Any]) -> list[Any]:
    """The messages of the model call ``middleware.wrap_model_call`` got an answer to, its handler
    calling ``model`` as ``create_agent``'s model node does (``model.invoke`` on the system message and
    the request's messages); an error the middleware lets through escapes (the agent's crash)."""
    types = requires("langchain.agents.middleware.types", EXTRA)
    answered: list[Any] = []

    def call_model(request: Any) -> Any:
        system = [request.system_message] if getattr(request, "system_message", None) is not None else []
        result = request.model.invoke([*system, *request.messages])
        answered[:] = list(request.messages)
        return types.ModelResponse(result=[result])

    request = types.ModelRequest(
        model=model, messages=list(converted), system_prompt=None, tool_choice=None, tools=[], response_format=None,
        state={"messages": list(converted), **state}, runtime=None,
    )  # fmt: skip
    middleware.wrap_model_call(request, call_model)
    return answered


def _missing_classes() -> list[str]:
    import importlib.util

    return [kind for kind, module in PROVIDER_CLASSES.items() if importlib.util.find_spec(module) is None]


def __getattr__(name: str) -> Any:
    """``CONFIGURATIONS`` and ``NOT_ADAPTED`` (read by ``compaction-suite matrix``), computed when asked."""
    if name == "CONFIGURATIONS":
        missing = _missing_classes()
        return BASE_CONFIGURATIONS + [
            ("summarization", {"path": "reactive", "model": kind}) for kind in PROVIDER_CLASSES if kind not in missing
        ]
    if name == "NOT_ADAPTED":
        missing = _missing_classes()
        return (
            f"path 'reactive' with model={', '.join(missing)} not run: {', '.join(PROVIDER_CLASSES[k] for k in missing)} not installed"
            if missing
            else ""
        )
    raise AttributeError(name)


def _as_deepagents_file_reads(run: Any) -> Any:
    """``run`` on the history with the suite's ``readFile(path)`` calls as deepagents' ``read_file(file_path)``
    (chat-completions ``tool_calls``, Anthropic ``tool_use`` blocks), the calls it gives back unchanged
    restored to the suite's."""
    suite_name, suite_arg, name, arg = FILE_TOOL

    def renamed(call: dict[str, Any]) -> dict[str, Any] | None:
        if call.get("type") == "tool_use" and call.get("name") == suite_name and isinstance(call.get("input"), dict):
            return {**call, "name": name, "input": {(arg if k == suite_arg else k): v for k, v in call["input"].items()}}
        function = call.get("function") if call.get("type") == "function" else None
        if isinstance(function, dict) and function.get("name") == suite_name:
            try:
                given = json.loads(function.get("arguments") or "{}")
            except ValueError:
                return None
            if isinstance(given, dict):
                arguments = json.dumps({(arg if k == suite_arg else k): v for k, v in given.items()}, ensure_ascii=False)
                return {**call, "function": {**function, "name": name, "arguments": arguments}}
        return None

    def wrapped(history: Any) -> Any:
        originals: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}

        def walk(value: Any, back: bool) -> Any:
            if isinstance(value, list):
                return [walk(v, back) for v in value]
            if not isinstance(value, dict):
                return value
            if back and value.get("id") in originals and value == originals[value["id"]][1]:
                return copy.deepcopy(originals[value["id"]][0])
            changed = None if back else renamed(value)
            if changed is not None:
                originals[value["id"]] = (value, changed)
                return changed
            return {k: walk(v, back) for k, v in value.items()}

        return walk(run(walk(history, False)), True)

    return wrapped
