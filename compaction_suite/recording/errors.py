"""Re-recording the failure exchanges of the suite's summarizer TEST DOUBLE (``cassettes/errors/``).

``compaction-suite record-errors --out cassettes/errors`` records HTTP 429/500/503, malformed
and empty answers, a truncated body and a truncated stream, as the test double
(`compaction_suite.conformance.summarizer_server`) sends them, through the official ``openai``
client and the reference compactor (entry point ``reference``). See ``cassettes/README.md``.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

import openai
from vcr.request import Request as VcrRequest

from compaction_suite.conformance.settings import Settings, connected
from compaction_suite.conformance.summarizer_server import SummarizerServer
from compaction_suite.conformance.target import call_compact, last_event_json, resolve
from compaction_suite.reference.summarizer import Summarizer
from compaction_suite.reference.summary import transcript

from .endpoint import RecordingError
from .meta import Meta, history_record, interactions, settings_record
from .record import Recording, default_histories, load_history
from .scrub import recorder

REFERENCE = "reference"
"""The compactor whose summarizer calls meet the faults: the reference (seed 000), by its entry point."""


@dataclass(frozen=True)
class ErrorCase:
    name: str
    fault: str
    params: dict[str, Any]
    clause: str
    what: str
    stream: bool = False
    """Recorded through ``openai`` with ``stream=True`` (the reference compactor does not stream)."""


ERROR_CASES = (
    ErrorCase("rate-limit-429", "429", {"retry_after": "7"}, "FAIL-1", "HTTP 429 with Retry-After: 7 and an OpenAI-style error body"),
    ErrorCase("server-error-500", "500", {}, "FAIL-2", "HTTP 500 with an OpenAI-style error body"),
    ErrorCase("service-unavailable-503", "503", {}, "FAIL-2", "HTTP 503 with an OpenAI-style error body"),
    ErrorCase("malformed-body", "malformed", {}, "FAIL-3", "HTTP 200, application/json, a body that is not JSON"),
    ErrorCase("no-choices", "no_choices", {}, "FAIL-3", "HTTP 200, a chat.completion with an empty choices list"),
    ErrorCase("empty-content", "empty_content", {}, "FAIL-3", 'HTTP 200, a chat.completion whose content is ""'),
    ErrorCase(
        "truncated-body",
        "truncated_stream",
        {},
        "FAIL-4",
        "HTTP 200 whose JSON body is cut in half: the server closed the connection before Content-Length bytes",
    ),
    ErrorCase(
        "truncated-stream",
        "truncated_stream",
        {"chunks": 2},
        "FAIL-4",
        "a streamed answer (stream=true) cut after 2 SSE events: no finish_reason, no data: [DONE]",
        stream=True,
    ),
)

REPLAYED_CUT = {
    "stream": "the stream simply ends after the received events, with no finish_reason and no [DONE]",
    "body": "the compactor fails on the half JSON body instead (a malformed body, FAIL-3)",
}
"""What a client sees when a cut exchange is replayed (the cut itself is not recorded)."""
CUT_NOTE = (
    "vcrpy cannot record a connection cut mid-body: it reads the whole body before recording, and that read "
    "raises (httpx RemoteProtocolError), so nothing is recorded. This cassette was written by "
    "compaction_suite.recording.errors' capturing transport instead: the status, headers and every byte received "
    "before the cut, stored as a complete body. Live, the client saw the cut ({live}); on replay the "
    "client gets the same bytes without the cut, so {replay}."
)


def record_errors(out: str | os.PathLike[str], history: str | os.PathLike[str] | None = None, *, command: str | None = None) -> list[Recording]:
    """Record `ERROR_CASES` from the suite's test double, through the reference compactor (or ``openai``)."""
    history_path = Path(history) if history is not None else default_histories()[0]
    messages = load_history(history_path)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    with SummarizerServer() as server:
        return [_record_case(server, case, folder, history_path, messages, command) for case in ERROR_CASES]


def _record_case(
    server: SummarizerServer, case: ErrorCase, folder: Path, history_path: Path, messages: list[dict[str, Any]], command: str | None
) -> Recording:
    """One failure exchange: the fault armed for one request, the request made inside a cassette."""
    server.reset()
    cassette_path = folder / f"{case.name}.yaml"
    cassette_path.unlink(missing_ok=True)
    iteration = Settings().threshold_iterations
    settings = connected(Settings(summarizer_timeout=10.0), server.base_url)
    capture = _Capture() if case.fault == "truncated_stream" else None
    if capture is not None:  # built outside the cassette: it calls the unpatched transport
        http_client = _capturing_http_client(capture)
        client = openai.OpenAI(base_url=server.base_url, api_key=settings.api_key, timeout=10.0, max_retries=0, http_client=http_client)
        settings = settings.with_(client=client)
    server.fault(case.fault, times=1, **case.params)
    with recorder().use_cassette(os.fspath(cassette_path)) as cassette:
        if case.stream:
            live = _stream_live(settings.client, messages)
            event, output = None, None
        else:
            compactor = resolve(REFERENCE).factory(settings)
            output = call_compact(compactor, copy.deepcopy(messages), iteration)
            event = last_event_json(compactor)
            live = (event or {}).get("failure_reason")
        note = None
        if capture is not None and capture.exchange is not None:
            cassette.append(*capture.exchange)  # through the recorder's scrubbing hooks
            if capture.cut:
                note = CUT_NOTE.format(live=live, replay=REPLAYED_CUT["stream" if case.stream else "body"])
        label = "streamed summary request (openai client, no compactor)" if case.stream else None
        exchanges = interactions(cassette, len(cassette.data), label)
    problem = None if len(exchanges) == 1 else f"expected one recorded exchange, got {len(exchanges)}"
    if case.fault == "truncated_stream" and not (capture and capture.cut):
        problem = "the test double did not cut the connection"
    meta = Meta(
        produced_by=(
            "the compaction-suite summarizer TEST DOUBLE (conformance/summarizer_server.py, fault "
            f"{case.fault!r}): real HTTP bytes from a local werkzeug server, not a model and not a provider"
        ),
        cassette=cassette_path.name,
        command=command,
        server={
            "api": "openai-compatible",
            "url": server.base_url,
            "host": urlsplit(server.base_url).netloc,
            "info": "compaction-suite summarizer test double (ephemeral port)",
        },
        model=settings.model,
        target=None if case.stream else {"spec": REFERENCE, "origin": resolve(REFERENCE).origin},
        history=history_record(history_path, messages),
        iteration=iteration,
        settings=settings_record(settings),
        interactions=exchanges,
        problem=problem,
        event=event,
        details={
            "fault": {"name": case.fault, **case.params},
            "clause": case.clause,
            "what": case.what,
            "client": "openai, stream=True (no compactor)" if case.stream else "the reference compactor (reference:seed_000) through openai",
            "live_failure": live,
            "capture_note": note,
            "output_is_input": None if output is None else output == messages,
        },
    )
    return Recording(cassette_path, meta.write(cassette_path), problem)


class _Capture:
    """The exchange the capturing transport saw, and whether the connection cut it short."""

    def __init__(self) -> None:
        self.exchange: tuple[VcrRequest, dict[str, Any]] | None = None
        self.cut = False


def _capturing_http_client(capture: _Capture) -> Any:
    """An ``httpx2.Client`` whose transport keeps the bytes of a response cut mid-body.

    vcrpy patches ``HTTPTransport.handle_request`` while a cassette is in use and its stub
    records nothing when the body read fails, so this transport calls the method as it was
    when the client was built (unpatched: build the client outside any cassette).
    """
    import httpx2 as httpx

    real_handle_request = httpx.HTTPTransport.handle_request

    class CapturingTransport(httpx.HTTPTransport):
        def handle_request(self, request: Any) -> Any:
            body = request.read()
            response = real_handle_request(self, request)
            received = bytearray()
            stream = cast(httpx.SyncByteStream, response.stream)
            try:
                for piece in stream:
                    received += piece
            except httpx.TransportError:
                capture.cut = True
                raise  # the client sees the cut, as it happened
            finally:
                stream.close()
                headers: dict[str, list[str]] = {}
                for key, value in response.headers.multi_items():
                    headers.setdefault(key, []).append(value)
                reason = response.extensions.get("reason_phrase", b"").decode("ascii", "replace")
                recorded = {"status": {"code": response.status_code, "message": reason}, "headers": headers, "body": {"string": bytes(received)}}
                capture.exchange = (VcrRequest(request.method, str(request.url), body, dict(request.headers)), recorded)
            return httpx.Response(
                response.status_code, headers=response.headers, stream=httpx.ByteStream(bytes(received)), extensions=response.extensions
            )

    return httpx.Client(transport=CapturingTransport())


def _stream_live(client: openai.OpenAI | None, messages: list[dict[str, Any]]) -> str | None:
    """Stream a summary request; the error the client saw, or None."""
    if client is None:
        raise RecordingError("the streamed case needs a client (connected settings)")
    request = Summarizer(Settings().model).request(transcript(messages[1:4]))
    try:
        for _ in client.chat.completions.create(**request, stream=True):
            pass
    except openai.OpenAIError as error:
        return f"{type(error).__name__}: {error}"
    return None
