"""A TEST DOUBLE of the OpenAI chat-completions API: the suite's summarizer model.

It also answers the OpenAI Responses API (``POST /v1/responses``), its compact endpoint
(``POST /v1/responses/compact``), the Anthropic Messages API (``POST /v1/messages``) and Amazon
Bedrock's Converse API (``POST /model/{modelId}/converse`` and ``/converse-stream``), with the
same modes and faults, in each API's own shapes (`conformance.summarizer_apis`; SPEC Part A,
"Wire formats"), so compactors that summarize through those APIs are checked too.

Compactors under test call their summarizer through the official ``openai``
client. The conformance suite points that client at this local HTTP server
(``SummarizerServer.base_url``) so it controls every answer offline:

* deterministic mode (default): the answer is derived only from the request
  messages, so identical requests get identical bodies. It is short (bounded by
  ``MAX_SUMMARY_CHARS``), names a SHA-256 of the request messages and a few plain
  words of the last user message, and never repeats anything that looks like an
  identifier (UUIDs, ``ent-...``, digits, hex, ``id`` values). The suite relies on
  that: a compactor must keep entity ids even when the summarizer omits them;
* fixed mode: ``reply_with(text)`` makes every answer ``text``;
* faults: ``fault(name, times=N, **params)`` makes the next ``N`` requests (or all
  of them) fail in one of the ways listed in ``FAULTS``: HTTP 429/500/503 with an
  OpenAI-style error body, a body that is not JSON, no choices, empty or null
  content, a hang, a dropped connection, a truncated body or stream. Each API sends
  only the faults its provider is known to send (`summarizer_apis.SENT`, each with
  its source); a request to an API that does not send the fault set is answered
  normally and leaves the fault in place (counted as ``unsent:<fault>``);
* validity: each request is checked with its provider's own rules and, where one is
  broken, answered HTTP 400 with the provider's own error text, as the real API
  answers it (a half call/result pair in a summarizer request, SPEC CORE-13), and with
  the request rules of the providers the target says its summarizer requests reach as sent
  (``answer_as``: Bedrock's tool config, `conformance.providers.REQUEST_RULES`);
* a context window: ``window(N)`` makes the model's context window ``N`` tokens; a request whose
  prompt (its ``usage.prompt_tokens``) exceeds it is answered HTTP 400 as each API answers it
  (`summarizer_apis.OVER_WINDOW`: ``context_length_exceeded``, "prompt is too long"; SPEC WIN-1).
  None (the default): no window.

Every request is kept with what it got (`Exchange`: status, the answer's text, the items
returned, the rejection), so the suite can tell whether a summary in a compactor's output
stands for an answer, and what the request that got it held (SPEC CORE-12).

``usage`` is real: exact ``o200k_base`` counts (``compaction_suite.text``, the module the
reference and the verifier share) of the request messages with the chat overhead OpenAI
documents (SPEC TOK-2) and of the answer. Streaming (``"stream": true``) answers with SSE chunks, plus a usage
chunk when ``stream_options.include_usage`` is set.

Nothing here is a real model. Every response says so: the
``X-Test-Double: compaction-suite summarizer`` header, ``system_fingerprint``,
the ids and error messages. ``model`` echoes the requested model so compactors
that check it still work. The server binds 127.0.0.1 on an ephemeral port and
runs werkzeug's threaded development server in a daemon thread.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import select
import socket
import string
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server
from werkzeug.wrappers import Request, Response

from compaction_suite.text import count_tokens, message_text, prompt_tokens

from . import anthropic_compaction, converse, eventstream, media, overflow, providers, tool_call_answers, tool_search
from .response_chains import Refusal, ResponseStore
from .summarizer_apis import (
    ANTHROPIC,
    CHAINED,
    COUNT_TOKENS,
    SCRIPTED,
    Api,
    anthropic_messages,
    api_for,
    chat_rejects,
    count_tokens_rejects,
    events_of,
    scripted_body,
    sends,
    server_compaction,
)
from .violation import Violation

TEST_DOUBLE_HEADER = "X-Test-Double"
TEST_DOUBLE_LABEL = "compaction-suite summarizer"
SYSTEM_FINGERPRINT = "fp_compaction-suite-test-double"
DEFAULT_MODEL = "compaction-suite-test-double"
CREATED = 1_700_000_000
"""The fixed ``created`` timestamp of every answer (determinism)."""

MAX_SUMMARY_CHARS = 300
MAX_SUMMARY_WORDS = 12
MAX_WORD_CHARS = 20
STREAM_PIECE_CHARS = 40

DEFAULT_HANG_SECONDS = 30.0
HANG_POLL_SECONDS = 0.05
SERVE_POLL_SECONDS = 0.05
STOP_GRACE_SECONDS = 5.0

FAULTS: dict[str, frozenset[str]] = {
    "429": frozenset({"retry_after"}),
    "500": frozenset(),
    "503": frozenset(),
    "malformed": frozenset({"content_type"}),
    "no_choices": frozenset(),
    "empty_content": frozenset(),
    "null_content": frozenset(),
    "hang": frozenset({"hang_seconds"}),
    "drop": frozenset(),
    "truncated_stream": frozenset({"chunks"}),
    "tool_call": frozenset(),
}
"""Fault names and the parameters each accepts (besides ``times``). ``tool_call`` answers with a
call of a tool the request offers (`conformance.tool_call_answers`); a request offering none is
answered normally, the fault left in place (counted ``unsent:tool_call``)."""

_ERRORS: dict[str, tuple[int, str, str]] = {
    "429": (429, "requests", "rate_limit_exceeded"),
    "500": (500, "server_error", "internal_error"),
    "503": (503, "server_error", "service_unavailable"),
}
"""HTTP fault -> (status, error type, error code)."""

CHAT_PATHS = re.compile(r"^(?:/v1|/openai/v1|/openai/deployments/[^/]+)/chat/completions$")
"""``/v1/chat/completions``, Groq's ``/openai/v1/chat/completions`` (the ``groq`` client's path) and
Azure's ``/openai/deployments/<name>/chat/completions``."""
CONVERSATIONS = re.compile(r"^/v1/conversations$")
"""The Conversations API's create (``POST /v1/conversations``): a conversation a response may name
(`response_chains`), answered with its id; not a summarizer exchange."""

_ID_PREFIXES = ("ent", "id", "ids", "uuid", "guid")
_HEX = frozenset("0123456789abcdefABCDEF")
_PUNCTUATION = string.punctuation + "“”‘’«»…"


# --- what a request says ---------------------------------------------------------


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received: ``body`` is the parsed JSON (``None`` if it was not JSON)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Exchange:
    """One request and what the test double did with it."""

    request: RecordedRequest
    api: str
    """``chat``, ``responses``, ``compact`` or ``anthropic`` (``""`` for a path no API serves)."""
    answer: str | None = None
    """The text the request was answered with (None when it got none: a fault, a rejection)."""
    output: tuple[dict[str, Any], ...] = ()
    """The items answered (the compact endpoint's output), to recognise them in a compactor's output."""
    rejected: Violation | None = None
    """The provider's HTTP 400 text, when the request broke one of its rules (SPEC CORE-13)."""
    fault: str | None = None
    """The fault this request was answered with."""
    over_window: Violation | None = None
    """The provider's HTTP 400 text, when the request's prompt exceeded the context window (SPEC WIN-1)."""
    sent: Any = None
    """The request as the API reads it, when that differs from its body: its ``previous_response_id``
    resolved into the stored chain before its ``input`` (`response_chains`)."""
    server_side: bool = False
    """Whether this summary was the provider's server-side compaction inside the agent's own model request
    (the Messages API's ``compact_20260112`` edit): no separate summarizer request the fault sweep could fail
    (SPEC Part A, "Wire formats", Decision: server-side compaction)."""

    @property
    def body(self) -> Any:
        """What the request stood for: `sent` when the API resolved a chain, else the body received."""
        return self.sent if self.sent is not None else self.request.body


@dataclass(frozen=True)
class Served:
    """One answer the double billed (SPEC COST-1, COST-2): the request's ``path``, its API (``chat``,
    ``responses``, ``compact``, ``anthropic``, ``converse``; ``model`` for a scripted agent-model request),
    and the usage it carries. ``stated``: the answer told the client its usage (False only for a streamed
    chat completion without ``stream_options.include_usage``, which the provider bills all the same)."""

    path: str
    api: str
    input_tokens: int
    output_tokens: int
    stated: bool = True


def request_messages(request: RecordedRequest) -> list[dict[str, Any]] | None:
    """The chat-like messages the answer to ``request`` was computed from (its summary and its
    ``usage``), in whichever API it was asked; None for a request the server did not answer."""
    body = request.body
    if CHAT_PATHS.match(request.path):
        return body["messages"] if _invalid(body) is None else None
    api = api_for(request.path)
    return api.as_messages(body) if api is not None and api.invalid(body) is None else None


def request_usage(request: RecordedRequest) -> dict[str, int] | None:
    """The ``usage`` the test double answered ``request`` with in the deterministic mode (EVT-1): its
    chat-like messages' text and, in whichever API, the images and files the request carried as media,
    counted as its provider counts them (`_prompt`); None for a request it did not answer."""
    messages = request_messages(request)
    if messages is None:
        return None
    found = usage(messages, deterministic_summary(messages))
    if CHAT_PATHS.match(request.path):
        return found
    api = api_for(request.path)
    extra = _prompt(request.body, api) - prompt_tokens(messages)
    return {**found, "prompt_tokens": found["prompt_tokens"] + extra, "total_tokens": found["total_tokens"] + extra}


def usage(messages: Sequence[Mapping[str, Any]], content: str | None, tools: Any = None) -> dict[str, int]:
    prompt = prompt_tokens(messages) + media.tokens(messages, "openai") + tool_tokens(tools)
    completion = count_tokens(content) if content else 0
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def tool_tokens(tools: Any) -> int:
    """The prompt tokens of a chat-completions request's tool definitions: exact ``o200k_base`` counts of
    their JSON. The provider counts them in ``usage.prompt_tokens`` and against the context window (its
    own rendering of them is not published; the JSON is an approximation of it, labelled so)."""
    return count_tokens(json.dumps(tools, ensure_ascii=False, sort_keys=True)) if isinstance(tools, list) and tools else 0


SCRIPT_EXHAUSTED = "script_exhausted"
SCRIPT_EXHAUSTED_TEXT = "the scripted agent model has no answer left"
"""The error code and words of a scripted chat-completions request with no scripted answer left
(`SummarizerServer.script`): only this TEST DOUBLE sends them, so a replaying adapter can tell where its
history ends (a client that rewords the error keeps the words)."""


def scripted_chat_body(body: Mapping[str, Any], message: Mapping[str, Any]) -> dict[str, Any]:
    """A ``chat.completion`` answering ``body`` with the scripted assistant ``message`` (its content and
    tool calls), ``usage`` over the whole request, tool definitions included."""
    calls = [dict(c) for c in message.get("tool_calls") or []]
    content = message.get("content")
    text = content if isinstance(content, str) else None
    answered = completion_body(body, text, finish_reason="tool_calls" if calls else "stop")
    answered["choices"][0]["message"] = {"role": "assistant", "content": text, "refusal": None, **({"tool_calls": calls} if calls else {})}
    completion = count_tokens(text or "") + sum(count_tokens(json.dumps(c.get("function", {}), ensure_ascii=False)) for c in calls)
    prompt = answered["usage"]["prompt_tokens"]
    answered["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    return answered


# --- the deterministic answer ----------------------------------------------------


def messages_digest(messages: Sequence[Any]) -> str:
    """SHA-256 of the canonical JSON of the request messages."""
    canonical = json.dumps(messages, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _looks_like_id(word: str) -> bool:
    lowered = word.lower()
    return (
        lowered in _ID_PREFIXES
        or (len(word) >= 6 and set(word) <= _HEX)
        or (any(c.isupper() for c in word[1:]) and not word.isupper())
    )


def plain_words(text: str) -> list[str]:
    """Words of ``text`` that cannot be identifiers: letters only, short, not hex, not mixed case."""
    words = (raw.strip(_PUNCTUATION) for raw in text.split())
    return [w for w in words if w.isalpha() and len(w) <= MAX_WORD_CHARS and not _looks_like_id(w)]


def _last_user_text(messages: Sequence[Mapping[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return " ".join(message_text(message))
    return ""


def deterministic_summary(messages: Sequence[Mapping[str, Any]]) -> str:
    """The default answer: a function of the request messages only, short, with no identifiers."""
    words = " ".join(plain_words(_last_user_text(messages))[:MAX_SUMMARY_WORDS]) or "(no user text)"
    head = (
        f"Deterministic test-double summary of {len(messages)} messages "
        f"(sha256 {messages_digest(messages)[:8]} of the request messages): "
    )
    return (head + words)[:MAX_SUMMARY_CHARS]


# --- response bodies ---------------------------------------------------------------


def _completion_id(body: Any) -> str:
    canonical = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "chatcmpl-testdouble-" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:24]


def _envelope(body: Mapping[str, Any], obj: str) -> dict[str, Any]:
    return {
        "id": _completion_id(body),
        "object": obj,
        "created": CREATED,
        "model": body.get("model") or DEFAULT_MODEL,
        "system_fingerprint": SYSTEM_FINGERPRINT,
    }


def completion_body(body: Mapping[str, Any], content: str | None, *, with_choices: bool = True, finish_reason: str = "stop") -> dict[str, Any]:
    """A ``chat.completion`` answering ``body`` with ``content`` (``finish_reason`` "content_filter":
    Azure OpenAI's answer whose content its filter withheld)."""
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": content, "refusal": None},
        "logprobs": None,
        "finish_reason": finish_reason,
    }
    return {
        **_envelope(body, "chat.completion"),
        "choices": [choice] if with_choices else [],
        "usage": usage(body["messages"], content, body.get("tools")),
    }


def _chunk(body: Mapping[str, Any], choices: list[dict[str, Any]], include_usage: bool) -> dict[str, Any]:
    chunk = {**_envelope(body, "chat.completion.chunk"), "choices": choices}
    if include_usage:
        chunk["usage"] = None
    return chunk


def _delta(delta: dict[str, Any], finish_reason: str | None = None) -> list[dict[str, Any]]:
    return [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}]


def stream_chunks(
    body: Mapping[str, Any], content: str | None, *, with_choices: bool = True
) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects of a streamed answer, usage chunk included if asked."""
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    if with_choices:
        text = content or ""
        pieces = [text[start : start + STREAM_PIECE_CHARS] for start in range(0, len(text), STREAM_PIECE_CHARS)]
        deltas = [
            _delta({"role": "assistant", "content": "" if content is not None else None}),
            *(_delta({"content": piece}) for piece in pieces),
            _delta({}, "stop"),
        ]
    else:
        deltas = [[]]
    chunks = [_chunk(body, choices, include_usage) for choices in deltas]
    if include_usage:
        chunks.append({**_chunk(body, [], False), "usage": usage(body["messages"], content, body.get("tools"))})
    return chunks


def sse(data: Any) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"data: {payload}\n\n".encode()


def error_body(message: str, error_type: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type, "param": None, "code": code}}


def _json_response(data: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> Response:
    text = json.dumps(data, ensure_ascii=False)
    return Response(text, status=status, headers=dict(headers or {}), mimetype="application/json")


def _error_response(
    status: int, message: str, error_type: str, code: str | None, headers: Mapping[str, str] | None = None, api: Api | None = None, *, provider_text: bool = False
) -> Response:
    """An OpenAI-style error: ``{"error": {"message", "type", "param", "code"}}`` (or ``api``'s own
    shape). Its message says it comes from the test double; a provider's own rejection text
    (``provider_text``) is given as the provider words it, the label after it."""
    text = f"{message} (compaction-suite test double)" if not provider_text else f"{message} [compaction-suite test double]"
    body = error_body(text, error_type, code) if api is None else api.error(text, error_type, code, status)
    return _json_response(body, status, {**(api.error_headers(status) if api is not None else {}), **(headers or {})})


# --- connection tricks -------------------------------------------------------------


def _raw_socket(request: Request) -> socket.socket:
    """The client's socket; werkzeug's development server puts it in the environ."""
    sock = request.environ.get("werkzeug.socket")
    if sock is None:
        raise RuntimeError("werkzeug did not expose the connection socket (environ['werkzeug.socket'])")
    return sock


def _close_connection(sock: socket.socket) -> None:
    """End the connection now, whatever was or was not sent (FIN, no HTTP response or no terminator)."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _peer_closed(sock: socket.socket) -> bool:
    """Whether the client has gone away (the request body was already read, so readable means EOF)."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        return bool(readable) and sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


# --- the server ----------------------------------------------------------------------


@dataclass
class _Fault:
    name: str
    remaining: int | None
    params: dict[str, Any] = field(default_factory=dict)


class QuietHandler(WSGIRequestHandler):
    """werkzeug's handler without the per-request access log; errors are still logged."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


class SummarizerServer:
    """The suite's summarizer: an OpenAI-compatible TEST DOUBLE on 127.0.0.1 (see the module docstring).

    Use as a context manager, or call ``start()`` and ``stop()``. Thread-safe.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._requests: list[RecordedRequest] = []
        self._exchanges: list[Exchange] = []
        self._counts: Counter[str] = Counter()
        self._errors: list[str] = []
        self._fault: _Fault | None = None
        self._fixed: str | None = None
        self._providers: tuple[str, ...] = ()
        self._window: int | None = None
        self._answers: dict[str, str] = {}
        self._chains = ResponseStore()
        self._model_requests: list[RecordedRequest] = []
        self._token_counts: list[RecordedRequest] = []
        self._served: list[Served] = []
        self._script: list[dict[str, Any]] | None = None
        self._in_flight = 0
        self._stopping = threading.Event()
        self._released = threading.Event()
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle

    def start(self) -> SummarizerServer:
        if self._server is not None or self._stopping.is_set():
            raise RuntimeError("a SummarizerServer starts once")
        count_tokens("")  # fail here, not as an HTTP 500, if the tokenizer cannot load
        self._server = make_server(
            "127.0.0.1", 0, self._wsgi_app, threaded=True, request_handler=QuietHandler
        )
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": SERVE_POLL_SECONDS},
            name=f"summarizer-test-double:{self._server.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; hanging requests are released at once (their connections are dropped)."""
        self._stopping.set()
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()
        with self._cond:
            self._cond.wait_for(lambda: self._in_flight == 0, timeout=STOP_GRACE_SECONDS)

    def __enter__(self) -> SummarizerServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the server is not started")
        return self._server.port

    @property
    def base_url(self) -> str:
        """For ``openai.OpenAI(base_url=...)``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def azure_endpoint(self) -> str:
        """For ``openai.AzureOpenAI(azure_endpoint=...)`` (deployments under ``/openai/deployments``)."""
        return f"http://127.0.0.1:{self.port}"

    # behaviour

    def answer_as(self, declared: Sequence[str]) -> None:
        """Answer also by the request rules of the providers ``declared`` (a target's
        ``capabilities["summarizer_providers"]``, `providers.REQUEST_RULES`, SPEC CORE-13 Decision): a
        request breaking one is answered HTTP 400 with the provider's text. Kept across `reset`: it is
        the target's, not an example's."""
        with self._cond:
            self._providers = tuple(declared)

    def reply_with(self, text: str | None) -> None:
        """Answer every request with ``text``; ``None`` returns to the deterministic summary."""
        with self._cond:
            self._fixed = text

    def script(self, answers: Sequence[Mapping[str, Any]] | None) -> None:
        """An agent's model scripted by its caller on chat completions (an adapter replaying a history
        through a framework's own agent loop): each later chat-completions request the API's rules and
        the window accept is answered with the next of ``answers`` (assistant messages: ``content``,
        ``tool_calls``), its ``usage`` over the whole request, tool definitions included; with none left,
        HTTP 400 with the code `SCRIPT_EXHAUSTED`. ``None``: back to summaries."""
        with self._cond:
            self._script = None if answers is None else [dict(a) for a in answers]

    def fault(self, name: str | None, *, times: int | None = None, **params: Any) -> None:
        """Fail the next ``times`` requests (all if ``None``) with fault ``name``; ``fault(None)`` clears.

        Parameters: ``retry_after`` for "429" (default "1"), ``content_type`` for
        "malformed" (default "application/json": the client then fails to decode
        the body; with another type the client does not parse it at all),
        ``hang_seconds`` for "hang" (default 30), ``chunks`` for "truncated_stream"
        (SSE chunks sent before the connection is closed, default 2).
        """
        if name is None:
            with self._cond:
                self._fault = None
            return
        if name not in FAULTS:
            raise ValueError(f"unknown fault {name!r}; known: {', '.join(FAULTS)}")
        unknown = set(params) - FAULTS[name]
        if unknown:
            raise ValueError(f"fault {name!r} takes no parameter {', '.join(sorted(unknown))}")
        if times is not None and times < 1:
            raise ValueError("times must be at least 1 (or None for every request)")
        with self._cond:
            self._fault = _Fault(name, times, params)
            self._released.clear()

    def release(self) -> None:
        """Answer every request a "hang" fault holds now, normally: a test holds a compaction's
        request while something else happens to the session (SPEC STORE-14), then lets it finish."""
        self._released.set()

    def window(self, tokens: int | None, answers: Mapping[str, str] | None = None) -> None:
        """The model's context window: a request whose prompt holds more than ``tokens`` tokens is
        answered as its API answers it (SPEC WIN-1, FIRE-5): ``answers`` names, per API, which of its
        real overflow answers (`conformance.overflow.ANSWERS`; an API not named: its default); None:
        no window (the default)."""
        if tokens is not None and tokens < 1:
            raise ValueError("a context window holds at least 1 token (or None for no window)")
        for api, name in (answers or {}).items():
            overflow.chosen(api, name)
        with self._cond:
            self._window = tokens
            self._answers = dict(answers or {})

    @property
    def context_window(self) -> int | None:
        with self._cond:
            return self._window

    def mode(self) -> dict[str, Any]:
        """How the next request will be answered: ``{"fault": name or None, "params": {...},
        "reply": fixed text or None, "window": tokens or None}`` (None reply: the deterministic
        summary; None window: none, SPEC WIN-1). Reports carry it
        so a failure can be replayed."""
        with self._cond:
            fault = self._fault
            return {
                "fault": fault.name if fault else None,
                "params": dict(fault.params) if fault else {},
                "times": fault.remaining if fault else None,
                "reply": self._fixed,
                "window": self._window,
                **({"overflow": dict(self._answers)} if self._answers else {}),
            }

    def set_mode(self, mode: Mapping[str, Any]) -> None:
        """Answer as `mode` says (what `mode()` returned)."""
        self.reply_with(mode.get("reply"))
        self.window(mode.get("window"), mode.get("overflow"))
        self.fault(mode.get("fault"), times=mode.get("times"), **(mode.get("params") or {}))

    # what happened

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received, in order (a copy)."""
        with self._cond:
            return list(self._requests)

    @property
    def exchanges(self) -> list[Exchange]:
        """Every request received with what it got, in order (a copy of the list)."""
        with self._cond:
            return list(self._exchanges)

    @property
    def model_requests(self) -> list[RecordedRequest]:
        """The scripted agent-model requests received (`summarizer_apis.SCRIPTED`), in order (a copy):
        no summarizer exchange, so never judged as one."""
        with self._cond:
            return list(self._model_requests)

    @property
    def token_counts(self) -> list[RecordedRequest]:
        """The token counting requests received (`summarizer_apis.COUNT_TOKENS`), in order (a copy):
        no summarizer exchange, so never judged as one."""
        with self._cond:
            return list(self._token_counts)

    @property
    def served(self) -> list[Served]:
        """Every answer billed, in order, with its usage (a copy): what a framework's reported usage is
        judged against (SPEC COST-1, COST-2)."""
        with self._cond:
            return list(self._served)

    def _bill(self, path: str, api: str, prompt: int, completion: int, *, stated: bool = True) -> None:
        with self._cond:
            self._served.append(Served(path, api, prompt, completion, stated))

    def stored(self, response_id: str) -> bool:
        """Whether the double stored the response ``response_id`` (a later request may chain it)."""
        return response_id in self._chains

    @property
    def bodies(self) -> list[Any]:
        """The parsed JSON bodies of ``requests``."""
        return [recorded.body for recorded in self.requests]

    @property
    def counts(self) -> dict[str, int]:
        """Requests answered per mode: "summary", "fixed", a fault name, "bad_request", "not_found"."""
        with self._cond:
            return dict(self._counts)

    @property
    def errors(self) -> list[str]:
        """Tracebacks of bugs in the test double itself (answered with HTTP 500); should stay empty."""
        with self._cond:
            return list(self._errors)

    @property
    def in_flight(self) -> int:
        """Requests whose answer has not been produced yet (a hanging request counts)."""
        with self._cond:
            return self._in_flight

    def wait_for_requests(self, count: int, timeout: float) -> bool:
        """Block until ``count`` requests were received; ``False`` on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: len(self._requests) >= count, timeout=timeout)

    def reset(self) -> None:
        """Back to the deterministic mode with no fault and no window, and forget what was recorded."""
        self.reply_with(None)
        self.fault(None)
        self.window(None)
        self.script(None)
        self.clear()

    def clear(self) -> None:
        """Forget recorded requests, counts, errors and stored responses (the mode and fault stay)."""
        with self._cond:
            self._requests.clear()
            self._exchanges.clear()
            self._model_requests.clear()
            self._token_counts.clear()
            self._served.clear()
            self._counts.clear()
            self._errors.clear()
        self._chains.clear()

    # the WSGI application

    def _wsgi_app(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        request = Request(environ)
        with self._cond:
            self._in_flight += 1
        try:
            response = self._handle(request)
        except Exception:  # noqa: BLE001 - any bug in the double becomes a 500 and a recorded error, never a hang
            with self._cond:
                self._errors.append(traceback.format_exc())
            response = _error_response(500, "bug in the summarizer test double", "test_double_error", None)
            response.headers["X-Test-Double-Error"] = "1"
        finally:
            with self._cond:
                self._in_flight -= 1
                self._cond.notify_all()
        response.headers[TEST_DOUBLE_HEADER] = TEST_DOUBLE_LABEL
        return response(environ, start_response)

    def _record(self, request: Request, api: str) -> Exchange:
        raw = request.get_data(cache=True)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {key.lower(): value for key, value in request.headers.items()}
        exchange = Exchange(RecordedRequest(request.method, request.path, headers, body), api)
        with self._cond:
            self._requests.append(exchange.request)
            self._exchanges.append(exchange)
            self._cond.notify_all()
        return exchange

    def _count(self, mode: str) -> None:
        with self._cond:
            self._counts[mode] += 1

    def _handle(self, request: Request) -> Response:
        if COUNT_TOKENS.match(request.path) and request.method == "POST":
            return self._count_tokens(request)
        if CONVERSATIONS.match(request.path) and request.method == "POST":
            return self._open_conversation(request)
        api = None if CHAT_PATHS.match(request.path) else api_for(request.path)
        if api is not None and api.name == "responses" and request.method == "POST" and isinstance(_parsed(request), dict) and SCRIPTED in _parsed(request):
            return self._scripted(request, api)
        if api is not None and api.name == "anthropic" and request.method == "POST" and isinstance(_parsed(request), dict) and SCRIPTED in _parsed(request):
            return self._scripted_messages(request, api)
        exchange = self._record(request, "chat" if CHAT_PATHS.match(request.path) else api.name if api else "")
        body = exchange.request.body
        if api is None and not CHAT_PATHS.match(request.path):
            self._count("not_found")
            message = f"no route {request.method} {request.path}"
            return _error_response(404, message, "invalid_request_error", "unknown_url")
        if request.method != "POST":
            self._count("bad_request")
            return _error_response(405, "use POST", "invalid_request_error", "method_not_allowed", api=api)
        unsupported = api.unsupported(body) if api is not None else None
        if unsupported:
            self._count("unsupported")
            return _error_response(400, unsupported, "invalid_request_error", "unsupported_by_test_double", api=api)
        problem = _invalid(body) if api is None else api.invalid(body)
        if problem is None and api is not None and api.name in CHAINED:
            body, refusal = self._chains.resolve(body)
            exchange.sent = body if refusal is None and body != exchange.request.body else None
            if refusal is not None:
                self._count("bad_request")
                exchange.rejected = refusal
                return _refused(refusal, api)
        rejected = Violation("summarizer-request-invalid", problem) if problem else (chat_rejects(body) if api is None else api.rejects(body))
        rejected = rejected or providers.request_broken(self._providers, exchange.api, body)
        if rejected:
            self._count("bad_request")
            exchange.rejected = rejected
            return _rejected(rejected, api)
        over = self._over_window(exchange, body, api)
        if over is not None:
            return over
        scripted = self._scripted_chat(body, request.path) if api is None else None
        if scripted is not None:
            return scripted
        forced = tool_call_answers.forced(exchange.api, body) if exchange.api != "compact" else None
        if forced is not None:
            self._count("tool_call_forced")
            self._bill(request.path, exchange.api, *_billed(body, None, api), stated=_states_usage(body, api))
            return _tool_call(body, forced, api)
        fault, fixed = self._next_mode(exchange.api, body)
        if fault is not None:
            self._count(fault.name)
            exchange.fault = fault.name
            return self._faulty(request, body, fault, api)
        content = fixed if fixed is not None else deterministic_summary(_messages(body, api))
        self._count("fixed" if fixed is not None else "summary")
        response, output, answered = _answer(body, content, api=api)
        exchange.answer, exchange.output = content, tuple(output)
        self._bill(request.path, exchange.api, *_billed(body, content, api), stated=_states_usage(body, api))
        if api is not None and api.name == "responses" and answered is not None:
            self._chains.keep(body, answered)
        return response

    def _open_conversation(self, request: Request) -> Response:
        """``POST /v1/conversations``: a new conversation holding the body's ``items``, as the API answers
        its create (``id``, ``object``, ``created_at``, ``metadata``)."""
        body = _parsed(request)
        body = body if isinstance(body, dict) else {}
        name = self._chains.open_conversation(body.get("items"))
        return _json_response({"id": name, "object": "conversation", "created_at": int(time.time()), "metadata": body.get("metadata") or {}})

    def _count_tokens(self, request: Request) -> Response:
        """Anthropic's token counting endpoint (`summarizer_apis.COUNT_TOKENS`): the request judged by
        the Messages API's rules, answered with its prompt's size; no fault, window or summary applies."""
        body = _parsed(request)
        with self._cond:
            self._token_counts.append(RecordedRequest(request.method, request.path, {k.lower(): v for k, v in request.headers.items()}, body))
        refused = count_tokens_rejects(body)
        if refused is not None:
            return _error_response(400, refused, "invalid_request_error", None, api=ANTHROPIC, provider_text=True)
        return _json_response({"input_tokens": prompt_tokens(anthropic_messages(body))})

    def _scripted_request(self, request: Request, api: Api, what: str) -> tuple[dict[str, Any], list[dict[str, Any]], Response | None]:
        """A scripted agent-model request recorded (`model_requests`): its body, its script (`SCRIPTED`, a list
        of ``what``) and the HTTP 400 for a body the API or the script does not take (else None)."""
        body = _parsed(request)
        with self._cond:
            self._model_requests.append(RecordedRequest(request.method, request.path, {k.lower(): v for k, v in request.headers.items()}, body))
        script = body.get(SCRIPTED)
        problem = api.invalid(body) or (None if isinstance(script, list) and all(isinstance(o, dict) for o in script) else f"'{SCRIPTED}' must be a list of {what}")
        return body, script if isinstance(script, list) else [], _error_response(400, problem, "invalid_request_error", None, api=api) if problem else None

    def _scripted(self, request: Request, api: Api) -> Response:
        """An agent's model scripted by its caller (`summarizer_apis.SCRIPTED`): its chain resolved and
        judged by the API's rules as any request's, then answered with the scripted items and stored; with
        server-side compaction on, after the compaction item it calls for (`summarizer_apis.server_compaction`).
        A scripted call of a deferred tool the input has not loaded is preceded by the model's client tool
        search for it (`tool_search.search_first`)."""
        body, output, problem = self._scripted_request(request, api, "items")
        if problem is not None:
            return problem
        resolved, refusal = self._chains.resolve({k: v for k, v in body.items() if k != SCRIPTED})
        if refusal is not None:
            return _refused(refusal, api)
        rejected = api.rejects(resolved)
        if rejected:
            return _rejected(rejected, api)
        messages = api.as_messages(resolved)
        prompt = prompt_tokens(messages)
        compacted = server_compaction(resolved, deterministic_summary(messages), prompt)
        output = tool_search.search_first(resolved, output) or output  # a deferred tool is searched for first
        answered = scripted_body(resolved, [compacted, *output] if compacted else output, prompt)
        self._bill(request.path, "model", prompt, answered["usage"]["output_tokens"])
        self._chains.keep(resolved, answered)
        if body.get("stream"):
            return Response(iter([f"event: {name}\n".encode() + sse(data) for name, data in events_of(answered)]), mimetype="text/event-stream")
        return _json_response(answered)

    def _scripted_messages(self, request: Request, api: Api) -> Response:
        """An agent's model on the Messages API scripted by its caller (`summarizer_apis.SCRIPTED`: the
        content blocks to answer with), judged by the API's rules as any request's; with the
        ``compact_20260112`` edit and the input reaching its trigger, compacted first as the API compacts
        (`anthropic_compaction`): the compaction is recorded as a summarizer exchange and billed as its own
        iteration, and the answer opens with the compaction block."""
        body, blocks, problem = self._scripted_request(request, api, "content blocks")
        if problem is not None:
            return problem
        sent = {k: v for k, v in body.items() if k != SCRIPTED}
        edit = anthropic_compaction.edit(sent)
        if edit is not None and edit.get("pause_after_compaction"):
            return _error_response(400, "pause_after_compaction is not answered by this test double", "invalid_request_error", "unsupported_by_test_double", api=api)
        rejected = api.rejects(sent)
        if rejected:
            return _error_response(400, rejected, "invalid_request_error", None, api=api, provider_text=True)
        read = {**sent, "messages": anthropic_compaction.read_from(sent["messages"])}
        prompt, completion = _prompt(read, api), anthropic_compaction.blocks_tokens(blocks)
        usage: dict[str, Any] = {"input_tokens": prompt, "output_tokens": completion}
        if edit is not None and prompt >= anthropic_compaction.trigger(edit):
            summary = deterministic_summary(api.as_messages(read))
            exchange = self._record(request, api.name)
            exchange.answer, exchange.server_side = summary, True
            reduced = _prompt({**read, "messages": [{"role": "assistant", "content": [anthropic_compaction.compaction_block(summary)]}]}, api)
            self._bill(request.path, anthropic_compaction.ITERATION, prompt, count_tokens(summary))
            usage = {"input_tokens": reduced, "output_tokens": completion, "iterations": anthropic_compaction.iterations((prompt, count_tokens(summary)), (reduced, completion))}
            blocks = [anthropic_compaction.compaction_block(summary), *blocks]
        self._bill(request.path, "model", usage["input_tokens"], completion)
        stop = "tool_use" if any(b.get("type") == "tool_use" for b in blocks) else "end_turn"
        message = {
            "id": f"msg_testdouble_{messages_digest([sent])[:24]}", "type": "message", "role": "assistant", "model": sent.get("model"),
            "content": [dict(b) for b in blocks], "stop_reason": stop, "stop_sequence": None, "usage": usage,
        }  # fmt: skip
        if api.streamed(sent):
            return Response(iter([api.frame(name, data) for name, data in anthropic_compaction.events(message)]), mimetype=api.stream_mimetype)
        return _json_response(message)

    def _scripted_chat(self, body: dict[str, Any], path: str) -> Response | None:
        """The next scripted answer (`script`), or the `SCRIPT_EXHAUSTED` error; None when no script is set."""
        with self._cond:
            if self._script is None:
                return None
            message = self._script.pop(0) if self._script else None
        if message is None:
            self._count("script_exhausted")
            return _error_response(400, SCRIPT_EXHAUSTED_TEXT, "invalid_request_error", SCRIPT_EXHAUSTED)
        self._count("scripted")
        answered = scripted_chat_body(body, message)
        self._bill(path, "model", answered["usage"]["prompt_tokens"], answered["usage"]["completion_tokens"])
        return _json_response(answered)

    def _over_window(self, exchange: Exchange, body: dict[str, Any], api: Api | None) -> Response | None:
        """HTTP 400 in ``api``'s words when the request's prompt (counted as its ``usage`` is)
        exceeds the context window (SPEC WIN-1), else None."""
        with self._cond:
            window, answers = self._window, self._answers
        if window is None:
            return None
        tokens = _prompt(body, api) + (tool_tokens(body.get("tools")) if api is None else 0)
        if tokens <= window:
            return None
        self._count("over_window")
        status, error = overflow.answer(exchange.api, answers.get(exchange.api), tokens, window, body, overflow.LABEL)
        exchange.over_window = Violation("summarizer-request-over-window", overflow.message(error))
        if api is not None and api.streams and overflow.in_stream(exchange.api, answers.get(exchange.api)):
            return Response(iter([eventstream.exception("validationException", error)]), mimetype=api.stream_mimetype)
        return _json_response(error, status, api.error_headers(status) if api is not None else None)

    def _next_mode(self, api: str, body: Mapping[str, Any]) -> tuple[_Fault | None, str | None]:
        """The fault for this request (using up one of its ``times``), and the fixed reply. A fault
        the API ``api`` is not known to send is not sent there (it stays set, counted ``unsent:``);
        nor is a tool call to a request that offers no tool."""
        with self._cond:
            fault = self._fault
            if fault is not None and (not sends(api, fault.name) or (fault.name == "tool_call" and tool_call_answers.offered(api, body) is None)):
                self._counts[f"unsent:{fault.name}"] += 1
                return None, self._fixed
            if fault is not None and fault.remaining is not None:
                fault.remaining -= 1
                if fault.remaining <= 0:
                    self._fault = None
            return fault, self._fixed

    def _faulty(self, request: Request, body: dict[str, Any], fault: _Fault, api: Api | None = None) -> Response:
        """The fault, in the shapes of the API asked (``api``; None: chat-completions): "no choices"
        is an empty ``output`` (Responses, compact) or ``content`` (Anthropic)."""
        name = fault.name
        if name in _ERRORS:
            status, error_type, code = _ERRORS[name]
            status = api.statuses.get(status, status) if api is not None else status
            headers = {"Retry-After": str(fault.params.get("retry_after", "1"))} if name == "429" else {}
            return _error_response(status, f"simulated HTTP {status}", error_type, code, headers, api)
        if name == "malformed":
            return _malformed(body, str(fault.params.get("content_type", "application/json")))
        if name == "no_choices":
            return _answer(body, None, with_choices=False, api=api)[0]
        if name == "empty_content":
            return _answer(body, "", api=api)[0]
        if name == "null_content":
            return _answer(body, None, api=api, finish_reason="content_filter")[0]
        if name == "tool_call":
            return _tool_call(body, str(tool_call_answers.offered(api.name if api is not None else "chat", body)), api)
        if name == "hang":
            return self._hang(request, body, float(fault.params.get("hang_seconds", DEFAULT_HANG_SECONDS)), api)
        if name == "drop":
            _close_connection(_raw_socket(request))
            return Response(b"")
        return _truncated(request, body, int(fault.params.get("chunks", 2)), api)

    def _hang(self, request: Request, body: dict[str, Any], seconds: float, api: Api | None = None) -> Response:
        """Answer normally after ``seconds``; drop the connection if the server stops or the client leaves."""
        sock = _raw_socket(request)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self._stopping.wait(HANG_POLL_SECONDS) or _peer_closed(sock):
                _close_connection(sock)
                return Response(b"")
            if self._released.is_set():
                break
        with self._cond:
            fixed = self._fixed
        return _answer(body, fixed if fixed is not None else deterministic_summary(_messages(body, api)), api=api)[0]


def _parsed(request: Request) -> Any:
    """The request's JSON body (None when it is not JSON)."""
    raw = request.get_data(cache=True)
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


def _rejected(rejected: str, api: Api | None) -> Response:
    """The provider's HTTP 400 for a request its rules refuse, with the ``code`` and ``param`` a
    `Refusal` carries (an item id named twice in one input names ``input``)."""
    if isinstance(rejected, Refusal) and api is not None:
        return _refused(rejected, api)
    return _error_response(400, rejected, "invalid_request_error", None, api=api, provider_text=True)


def _refused(refusal: Refusal, api: Api) -> Response:
    """The API's HTTP 400 for a chain it refuses (`response_chains`), its ``code`` and ``param`` with it."""
    response = _error_response(400, refusal, "invalid_request_error", refusal.code, api=api, provider_text=True)
    if refusal.param:
        body = json.loads(response.get_data())
        body["error"]["param"] = refusal.param
        response.set_data(json.dumps(body, ensure_ascii=False))
    return response


def _invalid(body: Any) -> str | None:
    """Why ``body`` is not a chat-completions request, or ``None``."""
    if not isinstance(body, dict):
        return "the body is not a JSON object"
    messages = body.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return "'messages' must be a list of objects"
    return None


def _messages(body: dict[str, Any], api: Api | None) -> list[dict[str, Any]]:
    """The request's messages, chat-like (what the summary and the usage are computed from)."""
    return body["messages"] if api is None else api.as_messages(body)


def _billed(body: dict[str, Any], content: str | None, api: Api | None) -> tuple[int, int]:
    """The input and output tokens of an answer with ``content`` (None: a tool call or no text), as its
    body states them (`usage`, `_api_body`)."""
    if api is None:
        counted = usage(body["messages"], content, body.get("tools"))
        return counted["prompt_tokens"], counted["completion_tokens"]
    return _prompt(body, api), count_tokens(content) if content else 0


def _states_usage(body: dict[str, Any], api: Api | None) -> bool:
    """Whether the answer tells the client its usage: every API's does, but a streamed chat completion
    carries it only when ``stream_options.include_usage`` asks (OpenAI's streaming reference)."""
    return api is not None or not body.get("stream") or bool((body.get("stream_options") or {}).get("include_usage"))


def _prompt(body: dict[str, Any], api: Api | None) -> int:
    """The request's prompt tokens: its text (`prompt_tokens`) and its images and files as the
    provider counts them (`media.tokens`: Anthropic's formula for the Messages and Converse APIs,
    OpenAI's for the others; SPEC SUM-6 Decision)."""
    provider = "anthropic" if api is not None and api.name in ("anthropic", "converse") else "openai"
    return prompt_tokens(_messages(body, api)) + media.tokens(body.get("messages") if api is None else body, provider)


def _api_body(body: dict[str, Any], content: str | None, api: Api, *, with_choices: bool = True) -> dict[str, Any]:
    prompt = _prompt(body, api)
    return api.body(body, content, prompt, count_tokens(content) if content else 0, with_output=with_choices)


def _api_events(body: dict[str, Any], content: str | None, api: Api, *, with_choices: bool = True) -> list[bytes]:
    assert api.events is not None
    prompt = _prompt(body, api)
    pairs = api.events(body, content, prompt, count_tokens(content) if content else 0, with_output=with_choices)
    return [api.frame(name, data) for name, data in pairs]


def _answer(
    body: dict[str, Any], content: str | None, *, with_choices: bool = True, api: Api | None = None, finish_reason: str = "stop"
) -> tuple[Response, list[dict[str, Any]], dict[str, Any] | None]:
    """The answer, the output items it holds (the compact endpoint's, to recognise them later) and, for
    another API than chat-completions, the answer's body (a Responses answer is stored: `response_chains`)."""
    if api is not None:
        answered = _api_body(body, content, api, with_choices=with_choices)
        output = answered.get("output") if api.name == "compact" else None
        kept = [o for o in output or [] if isinstance(o, dict)]
        if api.streamed(body):
            return Response(iter(_api_events(body, content, api, with_choices=with_choices)), mimetype=api.stream_mimetype), kept, answered
        return _json_response(answered), kept, answered
    if not body.get("stream"):
        return _json_response(completion_body(body, content, with_choices=with_choices, finish_reason=finish_reason)), [], None
    events = [sse(chunk) for chunk in stream_chunks(body, content, with_choices=with_choices)]
    return Response(iter([*events, sse("[DONE]")]), mimetype="text/event-stream"), [], None


def _tool_call(body: dict[str, Any], name: str, api: Api | None) -> Response:
    """An answer calling the tool ``name`` instead of text, in ``api``'s shapes (None: chat-completions),
    streamed when asked (`conformance.tool_call_answers`)."""
    if api is None:
        return _chat_tool_call(body, name)
    if api.name == "anthropic":
        block = tool_call_answers.anthropic_block(body, name)
        if body.get("stream"):
            events = _api_events_raw(body, api)
            message_delta = next(data for event, data in events if event == "message_delta")
            message_delta["delta"]["stop_reason"] = "tool_use"
            pairs = [events[0], *tool_call_answers.anthropic_events(block), *events[1:]]
            return Response(iter([f"event: {event}\n".encode() + sse(data) for event, data in pairs]), mimetype="text/event-stream")
        answered = _api_body(body, None, api, with_choices=False)
        return _json_response({**answered, "content": [block], "stop_reason": "tool_use"})
    if api.name == "converse":
        return _converse_tool_call(body, name, api)
    answered = {**_api_body(body, None, api, with_choices=False), "status": "completed", "incomplete_details": None, "output": [tool_call_answers.responses_item(body, name)]}
    if body.get("stream"):
        return Response(iter([f"event: {event}\n".encode() + sse(data) for event, data in events_of(answered)]), mimetype="text/event-stream")
    return _json_response(answered)


def _converse_tool_call(body: dict[str, Any], name: str, api: Api) -> Response:
    """Converse's answer calling ``name``: a ``toolUse`` block, stop reason ``tool_use`` (streamed on ``/converse-stream``)."""
    call = tool_call_answers.converse_block(body, name)
    if api.streamed(body):
        pairs = converse.tool_call_events(call, prompt_tokens(api.as_messages(body)))
        return Response(iter([api.frame(event, data) for event, data in pairs]), mimetype=api.stream_mimetype)
    answered = _api_body(body, None, api, with_choices=False)
    return _json_response({**answered, "output": {"message": {"role": "assistant", "content": [call]}}, "stopReason": "tool_use"})


def _chat_tool_call(body: dict[str, Any], name: str) -> Response:
    if not body.get("stream"):
        answered = completion_body(body, None, finish_reason="tool_calls")
        answered["choices"][0]["message"] = tool_call_answers.chat_message(body, name)
        return _json_response(answered)
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    deltas = [*(_delta(d) for d in tool_call_answers.chat_deltas(body, name)), _delta({}, "tool_calls")]
    chunks = [_chunk(body, choices, include_usage) for choices in deltas]
    if include_usage:
        chunks.append({**_chunk(body, [], False), "usage": usage(body["messages"], None, body.get("tools"))})
    return Response(iter([*(sse(c) for c in chunks), sse("[DONE]")]), mimetype="text/event-stream")


def _api_events_raw(body: dict[str, Any], api: Api) -> list[tuple[str, dict[str, Any]]]:
    """``api``'s streamed events of an answer without output (start, delta, stop), to put content blocks in."""
    assert api.events is not None
    return api.events(body, None, prompt_tokens(api.as_messages(body)), 0, with_output=False)


def _malformed(body: dict[str, Any], content_type: str) -> Response:
    """HTTP 200 whose body (or first SSE event) is not JSON."""
    if body.get("stream"):
        return Response(iter([sse("{this is not json"), sse("[DONE]")]), mimetype="text/event-stream")
    return Response('{"id": "chatcmpl-testdouble", "choices": [ <this is not json', content_type=content_type)


def _truncated(request: Request, body: dict[str, Any], chunks: int, api: Api | None = None) -> Response:
    """A stream cut after ``chunks`` SSE events (no [DONE]); a JSON body cut in half otherwise."""
    sock = _raw_socket(request)
    if api is not None and api.streamed(body):
        events = _api_events(body, deterministic_summary(api.as_messages(body)), api)[:chunks]
        return Response(_then_close(events, sock), mimetype=api.stream_mimetype)
    if api is not None:
        payload = json.dumps(_api_body(body, deterministic_summary(api.as_messages(body)), api)).encode("utf-8")
        response = Response(_then_close([payload[: len(payload) // 2]], sock), mimetype="application/json")
        response.headers["Content-Length"] = str(len(payload))
        return response
    if body.get("stream"):
        all_chunks = stream_chunks(body, deterministic_summary(body["messages"]))
        events = [sse(chunk) for chunk in all_chunks[:chunks]]
        return Response(_then_close(events, sock), mimetype="text/event-stream")
    payload = json.dumps(completion_body(body, deterministic_summary(body["messages"]))).encode("utf-8")
    response = Response(_then_close([payload[: len(payload) // 2]], sock), mimetype="application/json")
    response.headers["Content-Length"] = str(len(payload))
    return response


def _then_close(pieces: list[bytes], sock: socket.socket) -> Iterator[bytes]:
    """Yield ``pieces`` (werkzeug flushes each), then close the connection before the body ends."""
    yield from pieces
    _close_connection(sock)
