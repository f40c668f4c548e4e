"""Strands Agents: conversation managers, compactors of Anthropic-style messages.

Targets (each path its own factory option; research and shapes in ``adapters/README.md``)::

    compaction-suite check compaction_suite.adapters.strands:sliding_window
    COMPACTION_ADAPTER_OPTIONS='{"path": "reactive"}' compaction-suite check compaction_suite.adapters.strands:sliding_window
    compaction-suite check compaction_suite.adapters.strands:summarizing
    COMPACTION_ADAPTER_OPTIONS='{"preset": "auto"}' compaction-suite check compaction_suite.adapters.strands:context_manager

Paths: ``routine`` (``apply_management``, end of every invocation), ``proactive`` (the
summarizing manager's before-model-call threshold, Strands >= 1.40) and ``reactive``
(``reduce_context(agent, e=ContextWindowOverflowException)``, what ``Agent`` calls when its model
reports a context overflow). ``context_manager`` is the ``Agent(context_manager=...)`` component of
Strands >= 1.55 (strategy pipelines of offload, summarize and truncate steps), on its proactive
(before-model-call) and reactive (after an overflow) paths. History: ``agent.messages`` in Bedrock Converse blocks, mapped to and
from Anthropic blocks by Strands' own ``AnthropicModel`` formatter. Declarations proven by
``tests/test_adapter_format_loops.py`` and ``tests/test_strands_paths.py``.

Every factory takes ``model``: ``anthropic`` (the default above) or ``bedrock``, Strands' default
``BedrockModel`` on the double's Converse API through boto3 (`MODELS`), where each request Strands
sends is judged as what Bedrock receives and the history is read back from what ``BedrockModel``
sends; proven by ``tests/test_strands_bedrock.py``::

    COMPACTION_ADAPTER_OPTIONS='{"model": "bedrock", "path": "reactive"}' compaction-suite check compaction_suite.adapters.strands:summarizing
"""

from __future__ import annotations

import base64
import binascii
import copy
import functools
import importlib.util
import inspect
import json
import os
import tempfile
from collections.abc import Callable
from typing import Any

from . import _strands_reactive as reactive
from ._common import CannotDrive, accepts, factory, make, options, release, requires
from ._native import declared, double_refuses

FRAMEWORK = "Strands Agents"
DISTRIBUTIONS = ("strands-agents",)
EXTRA = "strands"
IMAGE_FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp"}
DOCUMENT_FORMATS = {"application/pdf": "pdf"}
"""An Anthropic ``document`` block's media type -> a Strands (Converse) ``document`` block's ``format``."""

SUPPORTED: dict[str, str] = {"strands-agents": ">=1.0,<2"}
"""Agreed interface 3: the 1.x releases (1.0.0, July 2025, on). The proactive path needs Strands >= 1.40
(``proactive_compression``), a structured-output summarizing agent an ``Agent`` taking
``structured_output_model``; below them that configuration is a contract error (`CannotDrive`)."""
SUPPORTED_BY_PATH: dict[str, dict[str, str]] = {"sliding_window": {"strands-agents": ">=0.1,<2"}}
"""The sliding window reaches back to the 0.1 releases (May 2025) on its reactive path: their ``Agent``
takes the same model, messages and manager, their manager's methods take the agent's ``messages`` where
1.x's take the agent (`_strands_reactive.subject`), their model classes answer through ``converse``
(`_strands_reactive.call`), and before 0.1.8 the event loop reduces first (`_strands_reactive.event_loop_reduction`).
Their routine path is refused in one line up to 0.2.1 (`DANGLING`). Proven by the bugs run at 0.1.0 and 0.1.8
(strands-agents/harness-sdk#152)."""
SWEEP_INSTALL = ("strands-agents[anthropic]",)
"""What a version sweep installs: the agent's model is Strands' ``AnthropicModel`` (the extra's ``anthropic``).
The ``ollama`` and ``mistralai`` clients ``OllamaModel`` and ``MistralModel`` need (`MODELS`) are not among
them: their configurations run where the client is installed (`LOCAL_MODELS`; a bug's run pins it, e.g.
``mistralai==1.12.4`` beside strands-agents 1.34.1, whose extra wants 1.x, 2.x from 1.46), and a sweep
installs them as their users do, through Strands' own extra (`sweep_install`)."""

SWEEP_EXTRAS = {"ollama": "ollama", "mistral": "mistral", "litellm": "litellm"}
"""Per `LOCAL_MODELS` kind, the extra of strands-agents that brings its client (its README's install line,
``pip install 'strands-agents[mistral]'``)."""


def sweep_install(factory: str, options: dict[str, Any]) -> tuple[str, ...]:
    """What a version sweep installs for one configuration: `SWEEP_INSTALL`, with the extra of the model
    kind whose client the ``anthropic`` extra does not bring (`SWEEP_EXTRAS`): a sweep of
    ``model="mistral"`` at strands-agents 1.62.0 otherwise met no ``mistralai`` and stopped on an
    ImportError (seventeenth session)."""
    extra = SWEEP_EXTRAS.get(str(options.get("model")))
    return (f"strands-agents[anthropic,{extra}]",) if extra else SWEEP_INSTALL

PROVIDERS = ["anthropic", "bedrock-converse"]
"""Agreed interface 1: Strands' default model is Bedrock (Converse API); this adapter sends through
``AnthropicModel``, so both rule sets apply to what Strands keeps."""

DEFAULTS: dict[str, dict[str, Any]] = {
    "sliding_window": {
        "window_size": 40, "path": "routine", "context_window": 2000, "model": "anthropic", "overflow_answer": None,
        "compression_threshold": 0.7, "model_id": None,
    },
    "summarizing": {
        "summary_ratio": 0.3, "preserve_recent_messages": 10, "context_window_limit": 4000, "compression_threshold": 0.7,
        "path": "proactive", "summarization_agent": False, "structured_output": False, "thinking": False, "model": "anthropic",
        "overflow_answer": None, "model_id": None,
    },
    "context_manager": {"preset": "auto", "context_window_limit": 2000, "path": "proactive", "thinking": False, "model": "anthropic", "overflow_answer": None},
    "summarizing_session": {
        "manager": "summarizing", "summary_ratio": 0.5, "preserve_recent_messages": 4, "window_size": 4, "pin_first": None, "pin": None, "model": "anthropic",
        "preset": "auto", "context_window_limit": 600,
    },
}  # fmt: skip
MODELS = ("anthropic", "bedrock", "openai", "openai-responses", "ollama", "mistral", "litellm")
"""The ``model`` option of every factory: Strands' ``AnthropicModel`` on the suite's ``/v1/messages``,
``BedrockModel`` (Strands' default model) on its Converse API, ``/model/{modelId}/converse-stream``
(`conformance.converse`), through boto3 with the double's address as the endpoint, ``OpenAIModel`` on
its chat-completions API or ``OpenAIResponsesModel`` on its Responses API (the OpenAI-compatible
endpoints users point them at: vLLM, gateways, Bedrock Mantle), ``LiteLLMModel`` (the ``litellm`` client,
routing ``openai/<model>`` to the double's chat-completions API), ``OllamaModel`` on its ``/api/chat``
(`conformance.ollama`) or ``MistralModel`` on Mistral's chat API (chat-completions, Mistral's own overflow
answer; the ``ollama`` and ``mistralai`` clients, Strands' ``ollama`` and ``mistral`` extras). With ``bedrock`` every request Strands
sends (the summarizer's and, in the loop, the agent's) is what Bedrock receives, checked with Bedrock's
own rules; with every model the reactive path's overflow is that model class's reading of its
provider's answer (`_strands_reactive`, ``overflow_answer``)."""
BEDROCK_REGION = "us-west-2"
"""Strands' own default region (``DEFAULT_BEDROCK_REGION``); its default model id is used as it is."""
WHY = {
    "summarizing_session": (
        "session only: an Agent with SummarizingConversationManager (or, manager=sliding_window, the sliding window; "
        "pin_first optional) under a FileSessionManager; its reduction and the session sync after it, a refused write "
        "(STORE-13) and reopening (STORE-15); "
        "one agent loop owns the session (session_appends: sequential)"
    ),
    "sliding_window": (
        "core only: message-count window (no iteration trigger); no summarizer; no events; routine path called anytime: "
        "after a tool interrupt the window also trims a history whose toolUse is unanswered (ANTH-6, policy); reactive "
        "path (after a context-overflow error) first blanks the oldest tool results, raises when it cannot trim"
    ),
    "summarizing": (
        "core only: proactive compression at a share of the model's context window, or reactive after a context-overflow "
        "error (no iteration trigger); the summary is a user message, not [Context Summary] + K rounds; a failed summary "
        "leaves the history on the proactive path and is re-raised on the reactive one (documented)"
    ),
    "context_manager": (
        "core only: Agent(context_manager=...) runs its strategy pipeline (tool-result truncation and dropping, "
        "summaries of the oldest messages at a share of the model's context window, an emergency truncation last) "
        "before each model call, or after a context-overflow error (no iteration trigger); a failed strategy is "
        "logged and skipped"
    ),
}
SLIDING_WINDOW: list[tuple[str, dict[str, Any]]] = [
    ("sliding_window", {"window_size": 6}),
    ("sliding_window", {"window_size": 12}),
    ("sliding_window", {"window_size": 12, "path": "reactive", "context_window": 1000}),
    ("sliding_window", {"window_size": 12, "path": "proactive", "context_window": 2000}),
]
SUMMARIZING: list[tuple[str, dict[str, Any]]] = [
    ("summarizing", {"preserve_recent_messages": 4, "context_window_limit": 2000}),
    ("summarizing", {"preserve_recent_messages": 10, "context_window_limit": 4000}),
    ("summarizing", {"preserve_recent_messages": 4, "path": "reactive", "context_window_limit": 1000}),
    ("summarizing", {"preserve_recent_messages": 4, "path": "reactive", "context_window_limit": 1000, "summarization_agent": True}),
    ("summarizing", {"preserve_recent_messages": 4, "path": "reactive", "context_window_limit": 1000, "summarization_agent": True, "structured_output": True}),
]
CONTEXT_MANAGER: list[tuple[str, dict[str, Any]]] = [
    ("context_manager", {"preset": "stale_tool_cleanup"}),
    ("context_manager", {"preset": "large_tool_offloading"}),
    ("context_manager", {"preset": "overflow_protection", "path": "reactive", "context_window_limit": 1000}),
]
"""The context manager's strategy presets that never ask a model (Strands >= 1.55)."""
CONTEXT_MANAGER_SUMMARIZING: list[tuple[str, dict[str, Any]]] = [
    ("context_manager", {"preset": "auto", "context_window_limit": 2000}),
    ("context_manager", {"preset": "agentic", "path": "reactive", "context_window_limit": 1000}),
    ("context_manager", {"preset": "proactive_summarization", "context_window_limit": 2000}),
]
"""Its presets that summarize through the agent's model."""
SESSIONS: list[tuple[str, dict[str, Any]]] = [
    ("summarizing_session", {}),
    ("summarizing_session", {"pin_first": 2}),
    ("summarizing_session", {"manager": "sliding_window", "pin_first": 2}),
]
CONTEXT_SESSIONS: list[tuple[str, dict[str, Any]]] = [("summarizing_session", {"manager": "context_manager"})]
"""The context manager under a ``FileSessionManager`` (its ``auto`` preset, from Strands 1.43, `CONTEXT_MANAGER_FROM`)."""
"""``CONFIGURATIONS`` (what ``compaction-suite matrix`` runs) is all of them, the summarizing ones only
while the suite's summarizer double answers Strands' streamed ``/v1/messages`` (see ``__getattr__``)."""
BEDROCK: list[tuple[str, dict[str, Any]]] = [
    ("summarizing", {"preserve_recent_messages": 4, "path": "reactive", "context_window_limit": 1000, "model": "bedrock"}),
    ("summarizing", {"preserve_recent_messages": 4, "path": "reactive", "context_window_limit": 1000, "summarization_agent": True, "structured_output": True, "model": "bedrock"}),
]
"""With Strands' default ``BedrockModel`` (`MODELS`): the path every release from 1.0 drives, whose summarizing
agent's request Bedrock judges (strands-agents/harness-sdk#998 at 1.10-1.11), and with a structured-output
summarizing agent (strands-agents/harness-sdk#1160 at 1.14): ``BedrockModel`` reads Bedrock's overflow answer
at every release, where ``AnthropicModel`` before 1.16.0 does not read Anthropic's "prompt is too long" (#1137), so
on Anthropic the reactive path of those releases ends at the first call."""

WINDOW_LOOKUPS: list[tuple[str, dict[str, Any]]] = [
    ("summarizing", {"model": "bedrock", "model_id": "us.openai.gpt-5.6-terra", "context_window_limit": 1_050_000, "compression_threshold": 0.01, "preserve_recent_messages": 4}),
]  # fmt: skip
"""The proactive path on a model Strands is not told the window of (`_named_model`): a Bedrock cross-region id
of an OpenAI-served model whose window is 1,050,000 tokens ("confirmed live limit: 1,050,000 tokens",
strands-agents/harness-sdk#3718, ``openai.gpt-5.6-terra`` on Bedrock Mantle), at 1% of it so that FIRE-1 and
FIRE-2 draw thousands of tokens, not a million; run where the release's own table lists the model
(`_lists_window`), where Strands claims to know its window (strands-agents/harness-sdk#4220: 1.54.0 strips one
prefix of the id and falls back to 200,000 tokens)."""


def _lists_window(configurations: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """The `WINDOW_LOOKUPS` whose model the installed release's window table lists (the id itself or what
follows one of its dots: ``gpt-5.6-terra`` for ``us.openai.gpt-5.6-terra``)."""
    try:
        table = requires("strands.models._defaults", EXTRA)._CONTEXT_WINDOW_LIMITS
    except (ImportError, AttributeError):
        return []

    def listed(model_id: str) -> bool:
        return any(model_id.split(".", cut)[-1] in table for cut in range(model_id.count(".") + 1))

    return [(f, o) for f, o in configurations if listed(str(o["model_id"]))]


OVERFLOW_ANSWERS: list[tuple[str, dict[str, Any]]] = [
    ("sliding_window", {"window_size": 12, "path": "reactive", "context_window": 1000, "model": model, "overflow_answer": answer})
    for model, answer in (
        ("bedrock", "prompt-too-long"), ("bedrock", "mantle"), ("bedrock", "stream-max-tokens"), ("openai", "vllm"), ("openai", "bedrock-gateway"), ("openai-responses", "bedrock-mantle"),
        ("anthropic", "max-tokens"), ("ollama", None), ("ollama", "context-shift-off"), ("mistral", None), ("litellm", None),
    )
]  # fmt: skip
"""The reactive path through each model class on the overflow answers other than its API's default, and
through ``OllamaModel`` and ``MistralModel`` on each of theirs (SPEC FIRE-5, `_strands_reactive`): whether
the class reads its provider's words as an overflow (strands-agents/harness-sdk#2052)."""
LOCAL_MODELS = {"ollama": "ollama", "mistral": "mistralai", "litellm": "litellm"}
"""The model kinds whose client library Strands' ``anthropic`` extra does not bring, with that library:
`OVERFLOW_ANSWERS` runs them only where it is installed (``NOT_ADAPTED`` says which were not run)."""
NO_DOCUMENTS = ("ollama",)
"""Model classes that cannot send a document block (SPEC Declarations, ``files``): Strands'
``OllamaModel`` raises ``TypeError: content_type=<document> | unsupported type`` on one, since
Ollama's chat API takes text and images only (its messages' ``images``); a history holding a PDF
is one its users cannot have, so the suite draws images only for it."""

DOCUMENTED: list[dict[str, Any]] = [
    {
        "factory": "summarizing", "clause": "CORE-10", "options": {"path": "reactive"},
        "quote": "When ``e`` is set (reactive overflow recovery), summarization failure is re-raised",
        "source": "strands-agents 1.62.0, strands/agent/conversation_manager/summarizing_conversation_manager.py (SummarizingConversationManager.reduce_context)",
    },
    {
        "factory": "summarizing", "clause": "COST-1", "options": {"path": "proactive", "summarization_agent": False},
        "quote": "This bypasses the full agent pipeline (lock, metrics, traces, tool loop)",
        "source": "strands-agents 1.62.0, strands/agent/conversation_manager/summarizing_conversation_manager.py (SummarizingConversationManager._generate_summary_with_model)",
    },
]  # fmt: skip
"""Agreed interface 4 (plain dicts of the ``Documented`` keys until ``_common.Documented`` lands). Not the
sliding window's reactive raise ("if the context cannot be reduced further"): at 1.35-1.36 it raised on
tool-heavy histories it could have trimmed (strands-agents/harness-sdk#2173), and a label by clause and
options cannot tell the two apart, so its crash stays a finding."""

NOT_ADAPTED_ALWAYS = "S3SessionManager (FileSessionManager restoring a managed conversation: summarizing_session)"

OVERFLOW = "prompt is too long: 210000 tokens > 200000 maximum"
"""The reactive path's trigger, as Anthropic's API words a context overflow (HTTP 400
``invalid_request_error``) and Strands' ``AnthropicModel.OVERFLOW_MESSAGES`` maps it to
``ContextWindowOverflowException``; ``tests/test_strands_paths.py`` drives it through a stand-in
endpoint on 127.0.0.1."""


# --- conversion ------------------------------------------------------------------------------


def _bytes(data: str) -> bytes:
    """The bytes of an opaque base64 string (its UTF-8 bytes when it is not base64)."""
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return data.encode("utf-8")


def _block(block: Any) -> Any:
    """One Anthropic content block as a Strands content block."""
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text":
        return {"text": block.get("text", "")}
    if kind == "tool_use":
        return {"toolUse": {"toolUseId": block.get("id"), "name": block.get("name"), "input": copy.deepcopy(block.get("input"))}}
    if kind == "tool_result":
        content = block.get("content", "")
        parts = [{"text": content}] if isinstance(content, str) else [_block(part) for part in content or []]
        return {"toolResult": {"toolUseId": block.get("tool_use_id"), "status": "error" if block.get("is_error") else "success", "content": parts}}
    if kind == "thinking":
        return {"reasoningContent": {"reasoningText": {"text": block.get("thinking", ""), "signature": block.get("signature", "")}}}
    if kind == "redacted_thinking":
        return {"reasoningContent": {"redactedContent": _bytes(str(block.get("data", "")))}}
    source = block.get("source") if kind in ("image", "document") else None
    if isinstance(source, dict) and source.get("type") == "base64" and source.get("media_type") in IMAGE_FORMATS:
        return {"image": {"format": IMAGE_FORMATS[source["media_type"]], "source": {"bytes": _bytes(str(source.get("data", "")))}}}
    if isinstance(source, dict) and source.get("type") == "base64" and source.get("media_type") in DOCUMENT_FORMATS:
        name = str(block.get("title") or "document").rsplit(".", 1)[0]  # Converse takes letters, digits, spaces, hyphens and brackets
        return {"document": {"format": DOCUMENT_FORMATS[source["media_type"]], "name": name, "source": {"bytes": _bytes(str(source.get("data", "")))}}}
    return copy.deepcopy(block)


def _blocks(content: Any) -> list[Any]:
    return [{"text": content}] if isinstance(content, str) else [_block(b) for b in content or []]


class Conversion:
    """Anthropic messages as Strands messages, remembering each original for the way back.

    ``holds``: whether the agent may hold a block (`_holds`); a block it cannot (a ``redacted_thinking``
    before `formats_redacted`, reasoning on a model class that makes none) is held apart and comes back
    with its message when the manager returns that message unchanged."""

    def __init__(self, messages: list[dict[str, Any]], *, holds: Callable[[Any], bool] = lambda block: True) -> None:
        self.strands: list[dict[str, Any]] = []
        self._originals: dict[int, tuple[dict[str, Any], dict[str, Any], list[Any]]] = {}
        for message in messages:
            blocks = _blocks(message.get("content"))
            blocks = [b for b in blocks if holds(b)]
            converted: dict[str, Any] = {"role": message.get("role"), "content": blocks}
            self._originals[id(converted)] = (message, converted, copy.deepcopy(converted["content"]))
            self.strands.append(converted)

    def back(self, messages: list[dict[str, Any]], render: Any) -> list[dict[str, Any]]:
        """The Anthropic messages for Strands' ``messages`` after the manager ran."""
        out = []
        for message in messages:
            original = self._originals.get(id(message))
            if original is not None and original[1] is message and message.get("content") == original[2] and message.get("role") == original[0].get("role"):
                out.append(copy.deepcopy(original[0]))
            else:
                out.append({"role": message.get("role"), "content": [b for b in (render(block) for block in message.get("content", [])) if b is not None]})
        return out


def _is_redacted(block: Any) -> bool:
    return isinstance(block, dict) and "redactedContent" in (block.get("reasoningContent") or {})


@functools.cache
def formats_redacted() -> bool:
    """Whether this release's ``AnthropicModel`` sends a ``redactedContent`` block. Before 1.62.0 it
    neither makes one of Anthropic's ``redacted_thinking`` (its stream has no case for it) nor formats
    one (``KeyError: 'reasoningText'``), so an agent on it never holds one: the adapter does not put
    one in its history (adapters/README.md, Strands; SPEC "The framework matrix and releases",
    the Decision on blocks a release's model cannot hold)."""
    model = requires("strands.models.anthropic", EXTRA).AnthropicModel(
        client_args={"api_key": "probe", "base_url": "http://127.0.0.1:9"}, model_id="probe", max_tokens=1
    )
    try:
        model._format_request_message_content({"reasoningContent": {"redactedContent": b"probe"}})
    except KeyError:
        return False
    return True


def _conversion(request: dict[str, Any], kind: str) -> Conversion:
    """The request's messages as Strands messages for an agent on the model ``kind`` (`_holds`)."""
    return Conversion(list(request.get("messages") or []), holds=_holds(kind))


NO_REASONING = ("ollama", "mistral")
"""Model kinds whose class makes no reasoning content (their streams have no case for it) and sends none
(``OllamaModel``: "content_type=<reasoningContent> | unsupported type", strands-agents 1.46.0), so an agent
on one never holds a ``reasoningContent`` block (SPEC, the Decision on blocks a release's model cannot hold)."""


def _holds(kind: str) -> Callable[[Any], bool]:
    """Whether an agent on the model ``kind`` can hold a block: no reasoning on a `NO_REASONING` kind; a
    ``redactedContent`` block on ``BedrockModel`` (Converse's blocks pass through at every release) and on
    ``AnthropicModel`` where `formats_redacted`; anything else."""
    if kind in NO_REASONING:
        return lambda block: not (isinstance(block, dict) and "reasoningContent" in block)
    redacted = kind == "bedrock" or formats_redacted()
    return lambda block: redacted or not _is_redacted(block)


def _system_text(system: Any) -> str | None:
    if system is None or isinstance(system, str):
        return system
    return "\n".join(str(b.get("text", "")) for b in system if isinstance(b, dict))


# --- the compactor ---------------------------------------------------------------------------


THINKING = {"type": "enabled", "budget_tokens": 1024}
"""Extended thinking as a Strands user turns it on for ``AnthropicModel`` (``params``: the smallest
budget the API takes, under ``max_tokens``); the model then answers every call, summaries included,
with a thinking block first."""


def _model(settings: Any, kind: str, *, thinking: bool = False, **config: Any) -> Any:
    """The agent's model on the suite's summarizer (`MODELS`): ``AnthropicModel`` on its ``/v1/messages``
    (the Anthropic client adds ``/v1`` itself), with extended ``thinking`` on when asked (`THINKING`),
    or `_bedrock_model`."""
    if kind == "bedrock":
        return _bedrock_model(settings, **config)
    if kind in ("openai", "openai-responses"):
        return _openai_model(settings, kind, **config)
    if kind in ("ollama", "mistral"):
        return _local_model(settings, kind, **config)
    if kind == "litellm":
        return _litellm_model(settings, **config)
    if thinking:
        config["params"] = {"thinking": dict(THINKING)}
    anthropic_model = requires("strands.models.anthropic", EXTRA)
    base_url = (settings.base_url or "").removesuffix("/v1") or None
    return anthropic_model.AnthropicModel(
        client_args={"base_url": base_url, "api_key": settings.api_key, "max_retries": 0, "timeout": settings.summarizer_timeout},
        model_id=settings.model, max_tokens=2048 if thinking else 1024, **config,
    )  # fmt: skip


def _openai_model(settings: Any, kind: str, **config: Any) -> Any:
    """Strands' ``OpenAIModel`` (chat-completions) or ``OpenAIResponsesModel`` (Responses) on the suite's
    summarizer, one attempt per call and the suite's timeout, as for ``AnthropicModel``."""
    client_args = {"base_url": settings.base_url, "api_key": settings.api_key, "max_retries": 0, "timeout": settings.summarizer_timeout}
    if kind == "openai":
        return requires("strands.models.openai", EXTRA).OpenAIModel(client_args=client_args, model_id=settings.model, params={"max_tokens": 1024}, **config)
    responses = requires("strands.models.openai_responses", EXTRA)
    return responses.OpenAIResponsesModel(client_args=client_args, model_id=settings.model, params={"max_output_tokens": 1024}, **config)


def _local_model(settings: Any, kind: str, **config: Any) -> Any:
    """Strands' ``OllamaModel`` (the ``ollama`` client on ``{host}/api/chat``) or ``MistralModel`` (the
    ``mistralai`` client on ``{server_url}/v1/chat/completions``) on the suite's summarizer, with the
    suite's timeout; neither client retries by default."""
    root = (settings.base_url or "").removesuffix("/v1")
    if kind == "ollama":
        ollama = requires("strands.models.ollama", EXTRA)
        return ollama.OllamaModel(root, ollama_client_args={"timeout": settings.summarizer_timeout}, model_id=settings.model, max_tokens=1024, **config)
    mistral = requires("strands.models.mistral", EXTRA)
    client_args = {"server_url": root, "timeout_ms": int(settings.summarizer_timeout * 1000)}
    return mistral.MistralModel(api_key=settings.api_key or "compaction-suite-test-double", client_args=client_args, model_id=settings.model, max_tokens=1024, **config)


def _litellm_model(settings: Any, **config: Any) -> Any:
    """Strands' ``LiteLLMModel`` routing ``openai/<model>`` to the suite's chat-completions API (``api_base``),
    one attempt per call and the suite's timeout: litellm's OpenAI provider, whose errors litellm maps to its
    own exceptions (an overflow to ``ContextWindowExceededError``), which the model class then reads."""
    litellm = requires("strands.models.litellm", EXTRA)
    client_args = {"api_base": settings.base_url, "api_key": settings.api_key or "compaction-suite", "timeout": settings.summarizer_timeout, "num_retries": 0}
    return litellm.LiteLLMModel(client_args=client_args, model_id=f"openai/{settings.model}", params={"max_tokens": 1024}, **config)


def _bedrock_model(settings: Any, **config: Any) -> Any:
    """Strands' ``BedrockModel`` at its default model id, on the suite's summarizer: a boto3 session whose
    AWS config names the double's address as its ``endpoint_url`` (every release from 1.0 takes a
    ``boto_session``; ``BedrockModel(endpoint_url=...)``, given too where it exists, arrived in 1.8), dummy
    credentials (the double reads no signature), one attempt per call and the suite's timeout, as for
    ``AnthropicModel``."""
    bedrock = requires("strands.models.bedrock", EXTRA)
    client_config = requires("botocore.config", EXTRA).Config(retries={"total_max_attempts": 1}, read_timeout=settings.summarizer_timeout, connect_timeout=settings.summarizer_timeout)
    endpoint = (settings.base_url or "").removesuffix("/v1")
    explicit = {"endpoint_url": endpoint} if accepts(bedrock.BedrockModel, "endpoint_url") else {}  # over an AWS_ENDPOINT_URL* in the environment
    with tempfile.TemporaryDirectory(prefix="compaction-suite-aws-") as folder:
        return bedrock.BedrockModel(boto_session=_boto_session(folder, endpoint), boto_client_config=client_config, max_tokens=1024, **explicit, **config)


def _boto_session(folder: str, endpoint: str) -> Any:
    """A boto3 session reading its region and ``endpoint_url`` from an AWS config file of its own in
    ``folder`` (the shared-config ``endpoint_url`` setting), with dummy credentials; the user's AWS
    files are not read. The file is read when the client is made, so ``folder`` may go after that."""
    import os

    botocore_session = requires("botocore.session", EXTRA).Session()
    path = os.path.join(folder, "config")
    with open(path, "w", encoding="utf-8") as config:
        config.write(f"[profile compaction-suite]\nregion = {BEDROCK_REGION}\nendpoint_url = {endpoint}\n")
    botocore_session.set_config_variable("config_file", path)
    botocore_session.set_config_variable("credentials_file", os.path.join(folder, "credentials"))
    botocore_session.set_config_variable("profile", "compaction-suite")
    botocore_session.set_credentials("compaction-suite-test-double", "compaction-suite-test-double")
    return requires("boto3", EXTRA).Session(botocore_session=botocore_session)


def _agent(
    settings: Any, system: Any, messages: list[dict[str, Any]], manager: Any, *,
    kind: str = "anthropic", thinking: bool = False, agent_args: dict[str, Any] | None = None, **config: Any,
) -> Any:  # fmt: skip
    """A Strands ``Agent`` whose model is `_model` (``kind``, ``thinking``) on the suite's summarizer; ``agent_args`` go to ``Agent``."""
    strands = requires("strands", EXTRA)
    return strands.Agent(model=_model(settings, kind, thinking=thinking, **config), system_prompt=_system_text(system), messages=messages, conversation_manager=manager, callback_handler=None, **(agent_args or {}))


def _summarization_agent(settings: Any, structured: bool, kind: str = "anthropic", thinking: bool = False) -> Any:
    """A dedicated summarizing ``Agent`` (``SummarizingConversationManager(summarization_agent=...)``) on
    the suite's summarizer, as a user builds one: its own ``AnthropicModel``, no tools (Strands adds its
    no-op tool while it summarizes), with ``structured_output`` a default structured-output model whose
    one field has a default (so the test double's empty tool input validates)."""
    agent = _agent(settings, None, [], None, kind=kind, thinking=thinking)
    if structured:
        pydantic = requires("pydantic", EXTRA)
        model = pydantic.create_model("Summary", summary=(str, ""))
        agent = requires("strands", EXTRA).Agent(model=agent.model, callback_handler=None, structured_output_model=model)
    return agent


def _from_converse(block: Any) -> Any:
    """One Converse content block (what ``BedrockModel`` sends) as an Anthropic block, the inverse of
    `_block`; a ``cachePoint`` marker is no block (None), an unknown block stays as it is."""
    if not isinstance(block, dict) or len(block) != 1:
        return copy.deepcopy(block)
    (kind, value), = block.items()
    if kind == "text":
        return {"type": "text", "text": value}
    if kind == "toolUse":
        return {"type": "tool_use", "id": value.get("toolUseId"), "name": value.get("name"), "input": copy.deepcopy(value.get("input"))}
    if kind == "toolResult":
        parts = [_from_converse({"text": json.dumps(p["json"])} if "json" in p else p) for p in value.get("content") or []]
        found = {"type": "tool_result", "tool_use_id": value.get("toolUseId"), "content": parts}
        return {**found, "is_error": True} if value.get("status") == "error" else found
    if kind == "reasoningContent" and "reasoningText" in value:
        return {"type": "thinking", "thinking": value["reasoningText"].get("text", ""), "signature": value["reasoningText"].get("signature", "")}
    if kind == "reasoningContent" and "redactedContent" in value:
        return {"type": "redacted_thinking", "data": base64.b64encode(value["redactedContent"]).decode("ascii")}
    if kind == "image" and isinstance(value.get("source", {}).get("bytes"), bytes):
        media = next((m for m, f in IMAGE_FORMATS.items() if f == value.get("format")), f"image/{value.get('format')}")
        return {"type": "image", "source": {"type": "base64", "media_type": media, "data": base64.b64encode(value["source"]["bytes"]).decode("ascii")}}
    if kind == "document" and isinstance(value.get("source", {}).get("bytes"), bytes):
        media = next((m for m, f in DOCUMENT_FORMATS.items() if f == value.get("format")), f"application/{value.get('format')}")
        return {"type": "document", "source": {"type": "base64", "media_type": media, "data": base64.b64encode(value["source"]["bytes"]).decode("ascii")}, "title": value.get("name")}
    if kind == "cachePoint":
        return None
    return copy.deepcopy(block)


def renderer(model: Any) -> Any:
    """How ``model`` sends one Strands content block, as an Anthropic block (None: not sent):
    ``AnthropicModel``'s own formatter, ``BedrockModel``'s read back from Converse (`_from_converse`), or,
    for an OpenAI model class, ``AnthropicModel``'s (the history is Strands' own blocks whatever its model;
    the target's format is Anthropic's)."""
    name = type(model).__name__
    if name == "BedrockModel" and not hasattr(model, "_format_request_message_content"):
        return _from_converse  # the 0.1 releases send the history's blocks as they are (``format_request``)
    if name == "BedrockModel":
        render = model._format_request_message_content
        return lambda block: _from_converse(render(block))
    return model._format_request_message_content if name == "AnthropicModel" else _anthropic_formatter()._format_request_message_content


@functools.cache
def _anthropic_formatter() -> Any:
    """An ``AnthropicModel`` used only for its block formatter (it never calls anything)."""
    return requires("strands.models.anthropic", EXTRA).AnthropicModel(
        client_args={"api_key": "probe", "base_url": "http://127.0.0.1:9"}, model_id="probe", max_tokens=1
    )


def _back(request: dict[str, Any], agent: Any, conversion: Conversion) -> dict[str, Any]:
    """The request with the agent's messages after the manager ran, as Strands would send them."""
    out = {k: copy.deepcopy(v) for k, v in request.items() if k != "messages"}
    out["messages"] = conversion.back(agent.messages, renderer(agent.model))
    if agent.system_prompt != _system_text(request.get("system")):
        out["system"] = agent.system_prompt  # never seen: Strands' managers leave the system prompt alone
    return out


def _declared(path: str, *, routine: bool = False, kind: str = "anthropic") -> dict[str, Any]:
    """What the adapter declares: ``called: anytime`` for the routine sliding window (after a tool
    interrupt it trims a history in flight), ``between_rounds`` otherwise (a model call, reactive or
    proactive, comes only with every toolUse answered), the providers (agreed interface 1), and
    ``files: none`` on a model class that sends no document (`NO_DOCUMENTS`)."""
    found: dict[str, Any] = declared("anthropic-messages", system_prompt="outside", called="anytime" if routine else "between_rounds")
    found["providers"] = list(PROVIDERS)
    if kind in NO_DOCUMENTS:
        found["files"] = "none"
    return found


def _path(value: Any, allowed: tuple[str, ...], name: str = "path") -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return str(value)


def _model_kind(value: Any, thinking: Any = False) -> str:
    """The ``model`` option (`MODELS`), its Strands module imported now: a missing one is a contract
    error at once, never a crash finding; ``thinking`` is driven on ``AnthropicModel`` only."""
    kind = _path(value, MODELS, "model")
    if thinking and kind != "anthropic":
        raise ValueError("thinking is driven on model=anthropic only (the other doubles answer no reasoning content)")
    module = {
        "bedrock": "strands.models.bedrock", "openai": "strands.models.openai", "openai-responses": "strands.models.openai_responses",
        "ollama": "strands.models.ollama", "mistral": "strands.models.mistral", "litellm": "strands.models.litellm",
    }.get(kind, "strands.models.anthropic")  # fmt: skip
    if kind == "litellm":
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm's own setting: its bundled cost map, no download at import
    try:
        requires(module, EXTRA)
    except ImportError as error:
        if kind in SWEEP_EXTRAS and importlib.util.find_spec(LOCAL_MODELS[kind]) is None:  # the client, not Strands, is missing
            raise ImportError(f"{module} needs {LOCAL_MODELS[kind]}, which is not installed: pip install 'strands-agents[{SWEEP_EXTRAS[kind]}]'") from error
        if kind != "openai-responses":
            raise
        raise CannotDrive("strands", "strands-agents", "its release has no OpenAIResponsesModel (model=openai-responses)") from None
    requires("strands.models.anthropic", EXTRA)  # the Anthropic blocks the history is read back in (`renderer`)
    return kind


def _summarizes_with(kind: str) -> str:
    """``kind`` for a factory that summarizes through the agent's model; ``openai-responses`` is refused:
    the Responses double streams no ``response.output_text.delta``, which ``OpenAIResponsesModel`` reads an
    answer from, so every summary would come back empty (a finding of the double, not of Strands)."""
    if kind == "openai-responses":
        raise ValueError("model=openai-responses is driven on sliding_window only (the Responses double streams no output_text deltas)")
    return kind


def _reactively(manager: Any, agent: Any, request: dict[str, Any], conversion: Conversion, window: int) -> None:
    """What ``Agent`` does when its model reports an overflow: ``reduce_context(agent, e=overflow)``, then
    the model call again, which overflows again while the request is over the model's ``window`` tokens
    (counted as the suite counts an Anthropic request, `conformance.formats.anthropic.tokens`). A history within the window
    never overflows, so it is left alone; a reduction that changes nothing ends the retries. The earlier path
    (``overflow_answer="adapter"``), kept as it was: its loop ends quietly after as many reductions as the
    history has messages; the model's own double (`reactive.reactively`) ends as ``Agent`` would not."""
    from compaction_suite.conformance.formats.anthropic import tokens

    for _ in range(len(agent.messages) + 1):
        if tokens(_back(request, agent, conversion)) <= window:
            return
        before = copy.deepcopy(agent.messages)
        manager.reduce_context(reactive.subject(manager.reduce_context, agent), e=overflow())
        if agent.messages == before:
            return


def _endpoint(kind: str, path: str, answer: Any, window: int) -> reactive.ModelEndpoint | None:
    """The agent model's own double for the reactive path (`_strands_reactive`), None on another path or
    with ``overflow_answer="adapter"`` (the adapter raising the overflow itself, `_reactively`)."""
    chosen = reactive.answer_option(kind, answer)
    return None if path != "reactive" or chosen == reactive.ADAPTER else reactive.ModelEndpoint(kind, window, chosen)


def _reactive_window(endpoint: reactive.ModelEndpoint | None) -> dict[str, Any]:
    """``reactive_window`` (SPEC FIRE-5) where the overflow comes from the model's own double, a window the
    suite takes (at least 1,000 tokens); nothing otherwise."""
    from compaction_suite.conformance.capabilities import SMALLEST_WINDOW

    window = endpoint.window_tokens if endpoint is not None else None
    return {"reactive_window": window} if window is not None and window >= SMALLEST_WINDOW else {}


def _main_model(settings: Any, kind: str, endpoint: reactive.ModelEndpoint, *, thinking: bool = False, **config: Any) -> Any:
    """The agent's model class as `_model` builds it, on ``endpoint`` (the main call's double)."""
    return _model(settings.with_(base_url=endpoint.server().base_url), kind, thinking=thinking, **config)


def overflow() -> Exception:
    """The ``ContextWindowOverflowException`` Strands' ``AnthropicModel`` raises for Anthropic's overflow answer."""
    return requires("strands.types.exceptions", EXTRA).ContextWindowOverflowException(OVERFLOW)


DANGLING = (
    "path=routine: its apply_management first drops a trailing user turn with no tool result (the turn a failed "
    "invocation left, _remove_dangling_messages), so it runs only at the end of an invocation, never on a history "
    "waiting for the model; use path=reactive"
)
"""Why the routine sliding window is not driven on the 0.1 releases whose manager cleans up after a failed
invocation (``apply_management``'s docstring: "If the event loop cycle fails, we may end up in an invalid
message state, and so this method will remove problematic messages from the end of the array"): the
suite's histories wait for the model, and dropping their newest turn there is that cleanup, not a compaction."""


KEEPS_NOTHING = (
    "window_size below 1 on path=routine: a window that keeps no message declares no trigger and no kept window (SPEC CORE-71, "
    "Decision on a window that keeps nothing); use path=reactive, where it is judged as any other configuration"
)
"""Why the routine sliding window refuses ``window_size=0`` (documented from 1.38.0: "Use 0 to clear all messages on
every reduction"): its declarations (``trigger``, ``kept_items``) are positive integers, and what it asks for, an
emptied history before a model call, is CORE-16's failure by design (strands-agents/harness-sdk#2205)."""


@factory
def sliding_window(settings: Any, **given: Any) -> Any:
    """``SlidingWindowConversationManager(window_size)`` on one of its paths: ``routine`` is
    ``apply_management(agent)`` (end of an invocation; with ``per_turn`` before each model call: the
    same method on the same history), ``reactive`` is `_reactively` over a model window of
    ``context_window`` tokens, ``proactive`` (Strands >= 1.40) the manager's before-model-call hook with
    ``compression_threshold`` on a model whose window is ``context_window`` (`_proactive_hook`; with
    ``model_id``, the window Strands resolves for that model, `_named_model`)."""
    o = options(DEFAULTS["sliding_window"], given)
    path = _path(o["path"], ("routine", "reactive", "proactive"))
    managers = requires("strands.agent.conversation_manager", EXTRA)
    kind = _model_kind(o["model"])
    if path == "routine" and hasattr(managers.SlidingWindowConversationManager, "_remove_dangling_messages"):
        raise CannotDrive("strands:sliding_window", "strands-agents", DANGLING)
    if path == "routine" and int(o["window_size"]) < 1:
        raise ValueError(KEEPS_NOTHING)
    proactive = _proactive_hook("sliding_window", path, o)
    endpoint = _endpoint(kind, path, o["overflow_answer"], int(o["context_window"]))

    def run(request: dict[str, Any]) -> dict[str, Any]:
        conversion = _conversion(request, kind)
        compression = {"proactive_compression": {"compression_threshold": float(o["compression_threshold"])}} if proactive else {}
        manager = managers.SlidingWindowConversationManager(window_size=int(o["window_size"]), **compression)
        if proactive is not None:
            agent = _windowed_agent(settings, request.get("system"), conversion.strands, manager, kind, o["model_id"], int(o["context_window"]))
            proactive(agent, manager)
            return _back(request, agent, conversion)
        agent = _agent(settings, request.get("system"), conversion.strands, manager, kind=kind)
        if path == "routine":
            manager.apply_management(reactive.subject(manager.apply_management, agent))
        elif endpoint is not None:
            reactive.reactively(agent, _main_model(settings, kind, endpoint), endpoint, reactive.reduced_by(manager, agent))
        else:
            _reactively(manager, agent, request, conversion, int(o["context_window"]))
        return _back(request, agent, conversion)

    declared = _declared(path, routine=path == "routine", kind=kind) | _reactive_window(endpoint)
    if path == "routine":  # "if len(messages) <= self.window_size: ... skipping context reduction" (the reactive path fires on an overflow)
        declared["trigger"] = {"messages": int(o["window_size"])}
        declared["kept_items"] = int(o["window_size"])  # "keeps the last window_size messages" (SPEC CORE-71)
    if path == "proactive":
        declared["trigger"] = proactive_trigger(o["compression_threshold"], o["context_window"])
    return make(f"strands.SlidingWindowConversationManager[{path}]", {"core"}, run, declared=declared, estimate=_tokens)


@factory
def summarizing(settings: Any, **given: Any) -> Any:
    """``SummarizingConversationManager(summary_ratio, preserve_recent_messages)`` on one of its paths,
    summarizing through the agent's model (Strands' ``AnthropicModel`` on the suite's ``/v1/messages``):
    ``proactive`` (Strands >= 1.40) runs Strands' own estimate of the next call's input tokens, then the
    manager's before-model-call hook, which summarizes when the estimate reaches ``compression_threshold``
    of ``context_window_limit``; ``reactive`` is `_reactively` over a window of ``context_window_limit`` tokens.
    ``summarization_agent`` summarizes through a dedicated agent instead (`_summarization_agent`; with
    ``structured_output``, one that has a default structured-output model). ``thinking`` turns extended
    thinking on for the model that summarizes (`THINKING`), so each summary answer opens with a thinking block."""
    o = options(DEFAULTS["summarizing"], given)
    path = _path(o["path"], ("proactive", "reactive"))
    if o["structured_output"] and not o["summarization_agent"]:
        raise ValueError("structured_output applies to a summarization_agent: set summarization_agent too")
    managers = requires("strands.agent.conversation_manager", EXTRA)
    kind = _summarizes_with(_model_kind(o["model"], o["thinking"]))
    hook = _proactive_hook("summarizing", path, o)
    proactive = hook is not None
    if o["structured_output"] and not accepts(requires("strands", EXTRA).Agent, "structured_output_model"):
        raise CannotDrive("strands:summarizing", "strands-agents", "its Agent takes no structured_output_model (structured_output)")
    endpoint = _endpoint(kind, path, o["overflow_answer"], int(o["context_window_limit"]))
    metrics: list[Any] = []

    def run(request: dict[str, Any]) -> dict[str, Any]:
        metrics.clear()
        conversion = _conversion(request, kind)
        kwargs: dict[str, Any] = {"summary_ratio": float(o["summary_ratio"]), "preserve_recent_messages": int(o["preserve_recent_messages"])}
        if proactive:
            kwargs["proactive_compression"] = {"compression_threshold": float(o["compression_threshold"])}
        if o["summarization_agent"]:
            kwargs["summarization_agent"] = _summarization_agent(settings, bool(o["structured_output"]), kind, bool(o["thinking"]))
        manager = managers.SummarizingConversationManager(**kwargs)
        if hook is not None:
            agent = _windowed_agent(settings, request.get("system"), conversion.strands, manager, kind, o["model_id"], int(o["context_window_limit"]), thinking=bool(o["thinking"]))
            hook(agent, manager)
            metrics.append(agent.event_loop_metrics)
            return _back(request, agent, conversion)
        agent = _agent(settings, request.get("system"), conversion.strands, manager, kind=kind, thinking=bool(o["thinking"]))
        if endpoint is not None:
            main = _main_model(settings, kind, endpoint, thinking=bool(o["thinking"]))
            reactive.reactively(agent, main, endpoint, reactive.reduced_by(manager, agent))
        else:
            _reactively(manager, agent, request, conversion, int(o["context_window_limit"]))
        return _back(request, agent, conversion)

    usage = {"usage": "reported", "trigger": proactive_trigger(o["compression_threshold"], o["context_window_limit"])} if proactive else {}
    compactor = make(f"strands.SummarizingConversationManager[{path}]", {"core"}, run, declared=_declared(path, kind=kind) | _reactive_window(endpoint) | usage, estimate=_tokens)
    compactor.reported_usage = lambda: _accumulated(metrics)
    return compactor


def _named_model(settings: Any, kind: str, model_id: Any) -> tuple[Any, dict[str, Any]]:
    """The settings and model config for the agent's model named ``model_id`` (None: the adapter's own
    choice, `_model`): ``BedrockModel(model_id=...)``, or the other classes' ``model_id`` through the
    settings' model. Strands is then not told the model's window: it resolves ``context_window_limit``
    itself (its lookup table by model id from 1.40, its 200,000-token default where the id is not found),
    as a user who names a model and sets nothing else meets it (strands-agents/harness-sdk#4220)."""
    if model_id is None:
        return settings, {}
    if not isinstance(model_id, str) or not model_id:
        raise ValueError(f"model_id must be a model id string, got {model_id!r}")
    return (settings, {"model_id": model_id}) if kind == "bedrock" else (settings.with_(model=model_id), {})


def proactive_trigger(threshold: Any, window: Any) -> dict[str, int]:
    """The proactive path's documented trigger (SPEC FIRE-1, FIRE-2): compress when ``projected_input_tokens /
    context_window_limit`` reaches ``compression_threshold`` (strands-agents 1.62.0, ``ConversationManager``'s
    before-model-call hook: ``ratio >= self._compression_threshold``), the projection Strands' own estimate of
    the request (text at characters / 4, the system prompt counted) on a history that carries no usage of an
    earlier call, as the suite's do. ``window`` is the model's window: the one Strands is given, or with
    ``model_id`` the named model's real window, which Strands must find by itself (`_named_model`)."""
    return {"tokens": max(1, int(float(threshold) * int(window)))}


def _proactive_hook(factory_name: str, path: str, o: dict[str, Any]) -> Callable[[Any, Any], None] | None:
    """On ``path="proactive"`` what the event loop does before each model call (Strands >= 1.40): its own
    estimate of the call's input tokens (``_estimate_input_tokens``), then the manager's before-model-call
    hook, which reduces when the estimate reaches ``compression_threshold`` of the model's window; None on
    another path, where ``model_id`` (the window Strands resolves) has no use and is refused."""
    if path != "proactive":
        if o["model_id"] is not None:
            raise ValueError("model_id applies to path=proactive (the window Strands resolves for the model sets its trigger)")
        return None
    if release("strands-agents") < (1, 40):
        raise CannotDrive(f"strands:{factory_name}", "strands-agents", "the proactive path (proactive_compression) arrived in 1.40.0; use path=reactive")
    events = requires("strands.hooks", EXTRA)
    event_loop = requires("strands.event_loop.event_loop", EXTRA)
    run_async = requires("strands._async", EXTRA).run_async

    def before_model_call(agent: Any, manager: Any) -> None:
        projected = run_async(lambda: event_loop._estimate_input_tokens(agent))
        manager._on_before_model_call_threshold(events.BeforeModelCallEvent(agent=agent, projected_input_tokens=projected))

    return before_model_call


def _windowed_agent(settings: Any, system: Any, messages: list[dict[str, Any]], manager: Any, kind: str, model_id: Any, window: int, **config: Any) -> Any:
    """`_agent` on the proactive path: its model told ``window`` as ``context_window_limit``, or, named by
    ``model_id``, told nothing (`_named_model`)."""
    named, model_config = _named_model(settings, kind, model_id)
    if model_id is None:
        model_config["context_window_limit"] = window
    return _agent(named, system, messages, manager, kind=kind, **model_config, **config)


def _accumulated(metrics: list[Any]) -> dict[str, int] | None:
    """The usage the agent reports (``AgentResult.metrics.accumulated_usage``, its ``event_loop_metrics``)
    after the manager's before-model-call hook summarized (SPEC COST-1): the proactive path only, where
    the hook runs inside the agent's invocation as users meet it; the reactive path here replays the
    agent's model calls outside its event loop, so its metrics would not be the framework's report."""
    if not metrics:
        return None
    used = metrics[-1].accumulated_usage
    return {"input_tokens": int(used.get("inputTokens", 0)), "output_tokens": int(used.get("outputTokens", 0))}


CONTEXT_MANAGER_PRESETS = ("auto", "agentic")
"""``Agent(context_manager=...)``'s own presets; any other ``preset`` is a strategy preset name,
passed as ``{"strategies": [name]}`` (a ``ContextManagerConfig``), as Strands' docstrings show."""
CONTEXT_MANAGER_FROM = {"auto": (1, 43), "agentic": (1, 44)}
"""Where each of ``Agent(context_manager=...)``'s own presets arrived: ``"auto"`` in 1.43.0 and ``"agentic"`` in
1.44.0 (``ContextManagerStrategy = Literal["auto"]``, then ``Literal["auto", "agentic"]``), as a facade that
``Agent._resolve_context_manager`` turns into a ``SummarizingConversationManager`` (with ``proactive_compression``
for ``"auto"``, without it for ``"agentic"``) and a ``ContextOffloader`` plugin; 1.55.0 replaced the facade by the
``ContextManager`` of ``strands._context_manager``, still taking both names. The same factory drives both forms,
through the agent's hooks as its event loop does."""
STRATEGY_PRESETS_FROM = (1, 56)
"""The first release whose ``Agent(context_manager=...)`` takes a ``ContextManagerConfig`` dict and
whose ``ContextManager(strategies=...)`` resolves preset names (``_context_manager/presets.py``):
1.55.0 takes ``"auto"``, ``"agentic"``, a ``ContextManager`` or ``False`` and raises ``ValueError``
("Unsupported context_manager value") on the dict."""


PRESET_UTILIZATION = {"proactive_summarization": 0.7}
"""The strategy presets that act at one share of the model's window, declared as that share in tokens (SPEC
FIRE-1, FIRE-2; `proactive_trigger`): "'proactive_summarization' — batch summarize oldest messages at 70%
utilization" (strands-agents 1.62.0, ``_context_manager/presets.py``:
``Offload.summarize("*").when(utilization=0.7, preserve_recent=0.7)``)."""


def _context_manager_value(factory_name: str, preset: str) -> Any:
    """What ``Agent(context_manager=...)`` is given for ``preset`` (`CONTEXT_MANAGER_PRESETS` as they
    are, a strategy preset as ``{"strategies": [preset]}``); a contract error (`CannotDrive`) below
    `CONTEXT_MANAGER_FROM`, and for a strategy preset below `STRATEGY_PRESETS_FROM`."""
    if preset in CONTEXT_MANAGER_FROM and release("strands-agents") < CONTEXT_MANAGER_FROM[preset]:
        arrived = ".".join(map(str, CONTEXT_MANAGER_FROM[preset])) + ".0"
        raise CannotDrive(f"strands:{factory_name}", "strands-agents", f"Agent(context_manager={preset!r}) arrived in {arrived}")
    if preset in CONTEXT_MANAGER_PRESETS:
        return preset
    if release("strands-agents") < STRATEGY_PRESETS_FROM:
        raise CannotDrive(f"strands:{factory_name}", "strands-agents", f"strategy presets (preset={preset!r}, context_manager={{'strategies': [...]}}) arrived in 1.56.0")
    return {"strategies": [preset]}


@factory
def context_manager(settings: Any, **given: Any) -> Any:
    """``Agent(context_manager=preset)`` (``"auto"``, ``"agentic"``) or
    ``Agent(context_manager={"strategies": [preset]})`` (a strategy preset: ``"proactive_summarization"``,
    ``"large_tool_offloading"``, ``"overflow_protection"``, ``"stale_tool_cleanup"``), its stash at
    Strands' default, on the model's ``context_window_limit``: ``proactive`` runs Strands' own estimate
    of the next call's input tokens and fires ``BeforeModelCallEvent`` through the agent's hooks, as
    the event loop does before each model call; ``reactive`` fires ``AfterModelCallEvent`` with the
    overflow error while the request is over the window and the manager asks for a retry, as the
    event loop does after an overflow (`_retried`); ``thinking`` as in `summarizing`."""
    o = options(DEFAULTS["context_manager"], given)
    path = _path(o["path"], ("proactive", "reactive"))
    kind = _summarizes_with(_model_kind(o["model"], o["thinking"]))
    preset = str(o["preset"])
    chosen = _context_manager_value("context_manager", preset)
    events = requires("strands.hooks", EXTRA)
    run_async = requires("strands._async", EXTRA).run_async
    event_loop = requires("strands.event_loop.event_loop", EXTRA)
    endpoint = _endpoint(kind, path, o["overflow_answer"], int(o["context_window_limit"]))

    def run(request: dict[str, Any]) -> dict[str, Any]:
        conversion = _conversion(request, kind)
        agent = _agent(
            settings, request.get("system"), conversion.strands, None,
            kind=kind, thinking=bool(o["thinking"]), agent_args={"context_manager": chosen}, context_window_limit=int(o["context_window_limit"]),
        )  # fmt: skip
        if path == "proactive":
            projected = run_async(lambda: event_loop._estimate_input_tokens(agent))
            run_async(lambda: agent.hooks.invoke_callbacks_async(events.BeforeModelCallEvent(agent=agent, projected_input_tokens=projected)))
        elif endpoint is not None:
            main = _main_model(settings, kind, endpoint, thinking=bool(o["thinking"]), context_window_limit=int(o["context_window_limit"]))
            reactive.reactively(agent, main, endpoint, reactive.retried_by(agent, events, run_async))
        else:
            _retried(agent, request, conversion, int(o["context_window_limit"]), events, run_async)
        return _back(request, agent, conversion)

    declared = _declared(path, kind=kind) | _reactive_window(endpoint)
    if path == "proactive" and preset in PRESET_UTILIZATION:
        declared["trigger"] = proactive_trigger(PRESET_UTILIZATION[preset], o["context_window_limit"])
    return make(f"strands.ContextManager[{preset}, {path}]", {"core"}, run, declared=declared, estimate=_tokens)


def _retried(agent: Any, request: dict[str, Any], conversion: Conversion, window: int, events: Any, run_async: Any) -> None:
    """What the event loop does after its model reports an overflow with a context manager: fire
    ``AfterModelCallEvent(exception=overflow)`` and call the model again when a hook set ``retry``;
    the model overflows again while the request is over ``window`` tokens (as `_reactively` counts)."""
    from compaction_suite.conformance.formats.anthropic import tokens

    for _ in range(len(agent.messages) + 1):
        if tokens(_back(request, agent, conversion)) <= window:
            return
        event = events.AfterModelCallEvent(agent=agent, exception=overflow())
        run_async(lambda event=event: agent.hooks.invoke_callbacks_async(event))
        if not event.retry:
            return


def _tokens(request: Any) -> int:
    from compaction_suite.conformance.formats.anthropic import tokens

    return int(tokens(request))


def _missing_clients() -> list[str]:
    """The `LOCAL_MODELS` kinds whose client library is not installed."""
    import importlib.util

    return [kind for kind, module in LOCAL_MODELS.items() if importlib.util.find_spec(module) is None]


@functools.cache
def summarizer_refused() -> str | None:
    """Why ``summarizing`` cannot run against the suite's summarizer double (None when it can):
    Strands' ``AnthropicModel`` always streams ``/v1/messages``."""
    return double_refuses("/messages", {"model": "m", "max_tokens": 16, "stream": True, "messages": [{"role": "user", "content": "hi"}]})


def _context_managers(configurations: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """The context-manager ``configurations`` this release drives (`_context_manager_value`): a preset of
    ``Agent(context_manager=...)`` from where it arrived (`CONTEXT_MANAGER_FROM`), a strategy preset from
    `STRATEGY_PRESETS_FROM`."""
    found = release("strands-agents")
    return [(f, o) for f, o in configurations if found >= CONTEXT_MANAGER_FROM.get(o.get("preset", "auto"), STRATEGY_PRESETS_FROM)]


def __getattr__(name: str) -> Any:
    """``CONFIGURATIONS`` and ``NOT_ADAPTED`` (read by ``compaction-suite matrix``), computed when asked."""
    if name == "CONFIGURATIONS":
        managers = _context_managers(CONTEXT_MANAGER)
        summarizing_ones = SUMMARIZING + BEDROCK + _lists_window(WINDOW_LOOKUPS) + _context_managers(CONTEXT_MANAGER_SUMMARIZING) + SESSIONS + _context_managers(CONTEXT_SESSIONS)
        missing = _missing_clients()
        answers = [(f, o) for f, o in OVERFLOW_ANSWERS if o["model"] not in missing]
        return SLIDING_WINDOW + answers + managers + ([] if summarizer_refused() else summarizing_ones)
    if name == "NOT_ADAPTED":
        refused = summarizer_refused()
        missing = _missing_clients()
        unrun = f"; model={', '.join(missing)} not run: {', '.join(LOCAL_MODELS[m] for m in missing)} not installed" if missing else ""
        return NOT_ADAPTED_ALWAYS + (f"; summarizing not run: {refused}" if refused else "") + unrun
    raise AttributeError(name)


class _Session:
    """A Strands agent's stored session as a user builds it (profile ``session``, SPEC STORE-13, STORE-15):
    ``Agent(agent_id=..., conversation_manager=SummarizingConversationManager(...), session_manager=
    FileSessionManager(session_id, storage_dir=path))`` on the suite's ``/v1/messages``. ``append`` is the
    agent's own ``_append_messages`` (each ``MessageAddedEvent`` writes the message to the session), ``load``
    ``agent.messages`` in Anthropic blocks (Strands' own formatter), ``compact`` what the agent does on a
    context overflow (``reduce_context(agent, e=overflow)``) and then at the end of its invocation (the
    session manager's ``sync_agent``, its ``AfterInvocationEvent`` hook), which stores the manager's state."""

    def __init__(
        self, settings: Any, path: str, manager: Any, kind: str = "anthropic", context_manager: Any = None, window: int | None = None, pin: int | None = None
    ) -> None:
        self._pin = pin
        strands_files = requires("strands.session.file_session_manager", EXTRA)
        self._store = strands_files.FileSessionManager(session_id="compaction-suite", storage_dir=path)
        config: dict[str, Any] = {} if window is None else {"context_window_limit": window}
        model = _model(settings, kind, **config)
        strands = requires("strands", EXTRA)
        chosen = {} if context_manager is None else {"context_manager": context_manager}
        self._agent = strands.Agent(agent_id="compaction-suite", model=model, conversation_manager=manager, session_manager=self._store, callback_handler=None, **chosen)
        self._context_manager = context_manager is not None

    async def append(self, request: dict[str, Any]) -> None:
        await self._agent._append_messages(*Conversion(list(request.get("messages") or [])).strands)

    def load(self) -> dict[str, Any]:
        render = renderer(self._agent.model)
        messages = [{"role": m.get("role"), "content": [b for b in (render(block) for block in m.get("content", [])) if b is not None]} for m in self._agent.messages]
        return {"messages": messages}

    def compact(self) -> None:
        manager = self._agent.conversation_manager
        if self._context_manager:  # the context manager's proactive hook, as the event loop fires it before a model call
            events = requires("strands.hooks", EXTRA)
            run_async = requires("strands._async", EXTRA).run_async
            event_loop = requires("strands.event_loop.event_loop", EXTRA)
            projected = run_async(lambda: event_loop._estimate_input_tokens(self._agent))
            run_async(lambda: self._agent.hooks.invoke_callbacks_async(events.BeforeModelCallEvent(agent=self._agent, projected_input_tokens=projected)))
        elif hasattr(manager, "window_size"):
            manager.apply_management(self._agent)  # the sliding window's end-of-invocation trim
        else:
            self._pin_past_head()
            manager.reduce_context(self._agent, e=overflow())
        self._store.sync_agent(self._agent)

    def _pin_past_head(self) -> None:
        """With ``pin=N``: the agent pins its N-th user text message (past the first, which a leading
        ``pin_first`` head covers) with Strands' own ``pin_message`` (``metadata.custom.pinned``, what the
        model-facing ``pin_context`` tool and a user's code set), after it was appended and before the
        reduction, as a pin is set during a conversation."""
        if self._pin is None:
            return
        pins = requires("strands.agent.conversation_manager.compression.pin_message", EXTRA)
        texts = [i for i, m in enumerate(self._agent.messages) if m.get("role") == "user" and any("text" in b for b in m.get("content", []))]
        if len(texts) > self._pin:
            pins.pin_message(self._agent.messages, texts[self._pin])


@factory
def summarizing_session(settings: Any, **given: Any) -> Any:
    """A Strands conversation manager under a ``FileSessionManager`` (`_Session`): ``session(path)`` for
    profile ``session``. ``manager``: ``summarizing`` (``SummarizingConversationManager(summary_ratio,
    preserve_recent_messages)``) or ``sliding_window`` (``SlidingWindowConversationManager(window_size)``);
    ``pin_first`` is either's. ``compact`` runs a history through a fresh session (the profile's tests
    drive the session itself)."""
    o = options(DEFAULTS["summarizing_session"], given)
    managers = requires("strands.agent.conversation_manager", EXTRA)
    requires("strands.session.file_session_manager", EXTRA)
    kind = _model_kind(o["model"])
    chosen = _path(o["manager"], ("summarizing", "sliding_window", "context_manager"))
    if chosen == "context_manager":
        return _context_manager_session(settings, o, kind)
    sliding = chosen == "sliding_window"
    manager = managers.SlidingWindowConversationManager if sliding else managers.SummarizingConversationManager
    kwargs: dict[str, Any] = (
        {"window_size": int(o["window_size"])} if sliding
        else {"summary_ratio": float(o["summary_ratio"]), "preserve_recent_messages": int(o["preserve_recent_messages"])}
    )  # fmt: skip
    if o["pin_first"] is not None:
        if "pin_first" not in inspect.signature(manager.__init__).parameters:
            raise CannotDrive("strands:summarizing_session", "strands-agents", f"{manager.__name__} has no pin_first")
        kwargs["pin_first"] = int(o["pin_first"])
    pin = None if o["pin"] is None else int(o["pin"])
    if pin is not None and (sliding or release("strands-agents") < (1, 54) or pin < 1):
        raise CannotDrive("strands:summarizing_session", "strands-agents", "pin (a user message pinned past the head, N >= 1) needs the summarizing manager's message pins (1.54.0 on)")

    def session(path: str) -> _Session:
        return _Session(settings, path, manager(**kwargs), kind, pin=pin)

    return _session_target(f"strands.{manager.__name__}[FileSessionManager]", session)


def _context_manager_session(settings: Any, o: dict[str, Any], kind: str) -> Any:
    """``Agent(context_manager=preset)`` (from each preset's release, `CONTEXT_MANAGER_FROM`, as `context_manager` builds it) under a
    ``FileSessionManager``: ``compact`` fires its proactive hook (Strands' own estimate of the next call's
    input tokens against ``context_window_limit``) and syncs the session, as the agent does around a model
    call (strands-agents/harness-sdk#4270: its reductions edit ``agent.messages`` in place and never reach
    the session, so a restored agent gets the unreduced history)."""
    preset = str(o["preset"])
    chosen = _context_manager_value("summarizing_session", preset)

    def session(path: str) -> _Session:
        return _Session(settings, path, None, kind, context_manager=chosen, window=int(o["context_window_limit"]))

    return _session_target(f"strands.ContextManager[{preset}][FileSessionManager]", session)


def _session_target(name: str, session: Any) -> Any:
    """A target of profile ``session`` on ``session(path)``; its ``compact`` runs a history through a fresh
    session (the profile's tests drive the session itself)."""

    async def run(request: dict[str, Any]) -> dict[str, Any]:
        """A history through a fresh session: appended, compacted, loaded (what the agent sends next)."""
        with tempfile.TemporaryDirectory(prefix="compaction-suite-strands-") as folder:
            stored = session(folder)
            await stored.append(request)
            stored.compact()
            return {**{k: copy.deepcopy(v) for k, v in request.items() if k != "messages"}, **stored.load()}

    declared = {**_declared("reactive"), "session_appends": "sequential"}  # one agent loop owns the session
    compactor = make(name, {"session"}, run, declared=declared, is_async=True)
    compactor.session = session
    return compactor
