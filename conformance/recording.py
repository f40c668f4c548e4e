"""Recorded provider runs: a compactor's real summarizer calls on vcrpy cassettes, replayed offline.

``compaction-suite record TARGET --base-url URL --model NAME`` calls TARGET's factory (any
target of the plug-in contract: ``module:attr``, a registered name, ``cmd:<command>``) with
`Settings` whose clients point at an OpenAI-compatible endpoint (or an Azure OpenAI
deployment), compacts each history at ``iteration`` inside a vcrpy cassette, then sends the
compacted history to the same endpoint as the agent's next call (``max_tokens=1``) so the
cassette also holds a real server's ``usage.prompt_tokens`` for it: seed 000's "verified"
figure, and proof that a real server accepts the compacted history. Each cassette gets a
``<history>.meta.json`` saying what produced it. ``cmd:`` compactors make their HTTP calls in
their own process, so they are pointed at a local forwarding proxy (`ForwardingProxy`) whose
upstream calls this process records; the proxy also adds the credentials, so the compactor's
process never sees the key.

``python -m compaction_suite.conformance.recording --out cassettes/errors`` re-records the failure exchanges
(HTTP 429/500/503, malformed and empty answers, a truncated body and stream) that the suite's
summarizer TEST DOUBLE (`compaction_suite.conformance.summarizer_server`) sends, through the official ``openai``
client and the reference compactor. See ``cassettes/README.md``.

Secrets are scrubbed when a cassette is written: the credential headers in
`SECRET_HEADERS` are dropped from requests and responses, and key-like strings (and the
literal key in use) are replaced by ``REDACTED`` in URLs, headers and bodies
(`scrub_text`). API keys come from ``OPENAI_API_KEY`` / ``AZURE_OPENAI_API_KEY``, never from
the command line.

Replay (`replaying`) uses record mode ``none`` and matches on method, path and body (vcrpy
compares JSON bodies parsed), with outgoing connections blocked, so a request the cassette
does not hold fails instead of reaching a network.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import json
import os
import platform
import re
import shlex
import socket
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import openai
import vcr
from vcr.request import Request as VcrRequest

from .settings import Settings, connected
from .suite import call_compact
from .summarizer_server import TEST_DOUBLE_HEADER, QuietHandler
from .target import Target, TargetError, resolve

FORMAT = "compaction-suite recording v1"
MATCH_ON = ("method", "path", "body")
"""How a replayed request finds its recording (vcrpy's ``body`` matcher parses JSON bodies)."""
SECRET_HEADERS = (
    "authorization",
    "proxy-authorization",
    "api-key",
    "x-api-key",
    "openai-organization",
    "openai-project",
    "cookie",
    "set-cookie",
)
"""Headers dropped from every recorded request and response."""
SECRET_QUERY = ("api-key", "api_key", "key", "access_token", "token")
"""Query parameters replaced in recorded URLs."""
REDACTED = "REDACTED"
NO_KEY = "no-key"
"""The api key sent when the environment holds none (a local server needs none)."""
DEFAULT_TIMEOUT = 600.0
"""Seconds a summarizer call may take: a small model on a laptop CPU is slow."""
CANONICAL_HISTORIES = ("parallel-tool-calls.json", "entities-and-progress.json", "earlier-summary.json")
KEY_ENV = "OPENAI_API_KEY"
AZURE_KEY_ENV = "AZURE_OPENAI_API_KEY"
VERIFY = {"max_tokens": 1, "temperature": 0}
"""The next agent call: only its ``usage.prompt_tokens`` matters."""

_KEY_PATTERNS = (
    re.compile(r"\bsk-[A-Za-z0-9][A-Za-z0-9_-]{15,}"),  # OpenAI-style (sk-..., sk-proj-...)
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key ids
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),  # JWTs
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
)
_PREFIXED_PATTERNS = (
    re.compile(r"(?i)(\bbearer\s+)(?!REDACTED)([A-Za-z0-9._~+/-]{12,}=*)"),
    re.compile(
        r"""(?i)((?:api[-_]?key|secret[-_]?key|access[-_]?token|client[-_]?secret|password)["']?\s*[:=]\s*["']?)"""
        r"""(?!REDACTED)([^\s"',;]{8,})"""
    ),
)


class RecordingError(Exception):
    """A recording could not be made or is unusable; the message says why."""


# --- scrubbing ------------------------------------------------------------------------


def scrub_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with the literal ``secrets`` and anything that looks like a credential replaced."""
    for secret in secrets:
        if secret and len(secret) >= 8:
            text = text.replace(secret, REDACTED)
    for pattern in _KEY_PATTERNS:
        text = pattern.sub(REDACTED, text)
    for pattern in _PREFIXED_PATTERNS:
        text = pattern.sub(lambda match: match.group(1) + REDACTED, text)
    return text


def _scrub_body(body: Any, secrets: Sequence[str]) -> Any:
    if isinstance(body, bytes):
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return body
        scrubbed = scrub_text(text, secrets)
        return body if scrubbed == text else scrubbed.encode("utf-8")
    if isinstance(body, str):
        return scrub_text(body, secrets)
    return body


def _scrub_url(url: str, secrets: Sequence[str]) -> str:
    parts = urlsplit(url)
    if not parts.query:
        return scrub_text(url, secrets)
    query = [(k, REDACTED if k.lower() in SECRET_QUERY else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    return scrub_text(urlunsplit(parts._replace(query=urlencode(query))), secrets)


def scrub_request(request: VcrRequest, secrets: Sequence[str] = ()) -> VcrRequest:
    """vcrpy ``before_record_request``: credential headers dropped, keys redacted in URL and body."""
    request = copy.copy(request)
    request.headers = {k: scrub_text(str(v), secrets) for k, v in request.headers.items() if k.lower() not in SECRET_HEADERS}
    request.uri = _scrub_url(request.uri, secrets)
    request.body = _scrub_body(request.body, secrets)
    return request


def scrub_response(response: dict[str, Any], secrets: Sequence[str] = ()) -> dict[str, Any]:
    """vcrpy ``before_record_response``: credential headers dropped, keys redacted in the body."""
    headers = {
        name: [scrub_text(str(v), secrets) for v in (values if isinstance(values, list) else [values])]
        for name, values in (response.get("headers") or {}).items()
        if name.lower() not in SECRET_HEADERS
    }
    body = response.get("body") or {}
    before = body.get("string")
    after = _scrub_body(before, secrets)
    if after != before:
        length = len(after.encode("utf-8") if isinstance(after, str) else after)
        headers = {n: ([str(length)] if n.lower() == "content-length" else v) for n, v in headers.items()}
    return {**response, "headers": headers, "body": {**body, "string": after}}


def recorder(secrets: Iterable[str] = ()) -> vcr.VCR:
    """A VCR that records every request (mode ``all``), scrubbed as the module docstring says."""
    secrets = tuple(s for s in secrets if s and len(s) >= 8)
    return vcr.VCR(
        record_mode="all",
        match_on=MATCH_ON,
        filter_headers=SECRET_HEADERS,
        filter_query_parameters=SECRET_QUERY,
        before_record_request=functools.partial(scrub_request, secrets=secrets),
        before_record_response=functools.partial(scrub_response, secrets=secrets),
        decode_compressed_response=True,
    )


def player(**options: Any) -> vcr.VCR:
    """A VCR that only replays (mode ``none``): an unrecorded request raises."""
    return vcr.VCR(record_mode="none", match_on=MATCH_ON, decode_compressed_response=True, **options)


# --- replay -----------------------------------------------------------------------------


class NetworkBlocked(OSError):
    """A connection was attempted during an offline replay."""


@contextlib.contextmanager
def no_network() -> Iterator[None]:
    """Refuse every outgoing IP connection in this process for the duration."""
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def refuse(self: socket.socket, address: Any, real: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            raise NetworkBlocked(f"network access during an offline replay: connect{address!r}")
        return real(self, address)

    socket.socket.connect = lambda self, address: refuse(self, address, real_connect)  # type: ignore[method-assign]
    socket.socket.connect_ex = lambda self, address: refuse(self, address, real_connect_ex)  # type: ignore[method-assign]
    try:
        yield
    finally:
        socket.socket.connect, socket.socket.connect_ex = real_connect, real_connect_ex  # type: ignore[method-assign]


@contextlib.contextmanager
def replaying(cassette: str | os.PathLike[str], *, block_network: bool = True, **options: Any) -> Iterator[Any]:
    """Replay ``cassette`` (yields vcrpy's Cassette: ``all_played``, ``play_count``, ``requests``)."""
    if not Path(cassette).is_file():
        raise FileNotFoundError(f"no cassette at {cassette}")
    with contextlib.ExitStack() as stack:
        if block_network:
            stack.enter_context(no_network())
        yield stack.enter_context(player(**options).use_cassette(os.fspath(cassette)))


def dead_port() -> int:
    """A local TCP port with nothing listening (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def meta_path(cassette: str | os.PathLike[str]) -> Path:
    """``<history>.meta.json`` beside ``<history>.yaml``."""
    path = Path(cassette)
    return path.with_name(path.stem + ".meta.json")


def load_meta(cassette: str | os.PathLike[str]) -> dict[str, Any]:
    return json.loads(meta_path(cassette).read_text(encoding="utf-8"))


def offline_endpoint(meta: Mapping[str, Any]) -> Endpoint:
    """The recording's endpoint moved to a local port where nothing listens: only the cassette can answer."""
    server = meta["server"]
    origin = f"http://127.0.0.1:{dead_port()}"
    if server.get("api") == "azure-openai":
        return Endpoint(meta["model"], azure_endpoint=origin, api_version=server.get("api_version"), api_key="replay", timeout=5.0)
    return Endpoint(meta["model"], base_url=origin + urlsplit(server["url"]).path, api_key="replay", timeout=5.0)


def offline_settings(meta: Mapping[str, Any]) -> Settings:
    """`Settings` as recorded (model, thresholds, prompt) with clients pointed nowhere (see `offline_endpoint`)."""
    return offline_endpoint(meta).settings(**{k: v for k, v in meta.get("settings", {}).items() if k in _SETTINGS_FIELDS})


_SETTINGS_FIELDS = ("threshold_iterations", "max_context_tokens", "keep_recent_rounds", "summary_prompt")


def event_of(compactor: Any) -> dict[str, Any] | None:
    """``last_event`` as a JSON-ready dict, or None (the compactor has none)."""
    from .suite import Subject

    try:
        event = Subject(compactor).event
    except AttributeError:
        return None
    return None if event is None else json.loads(json.dumps(event, default=str))


# --- the endpoint ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible ``base_url``, or an Azure OpenAI resource (``azure_endpoint`` +
    ``api_version``, the deployment named by ``model``)."""

    model: str
    base_url: str | None = None
    azure_endpoint: str | None = None
    api_version: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout: float = DEFAULT_TIMEOUT

    def __post_init__(self) -> None:
        if bool(self.base_url) == bool(self.azure_endpoint):
            raise RecordingError("give exactly one of --base-url and --azure-endpoint")
        if self.azure_endpoint and not self.api_version:
            raise RecordingError("an Azure endpoint needs --api-version")
        if not self.model:
            raise RecordingError("--model is required (for Azure: the deployment name)")

    @classmethod
    def from_env(cls, model: str, *, environ: Mapping[str, str] | None = None, **options: Any) -> Endpoint:
        """The endpoint with its key from ``AZURE_OPENAI_API_KEY`` (Azure) or ``OPENAI_API_KEY``."""
        environ = os.environ if environ is None else environ
        name = AZURE_KEY_ENV if options.get("azure_endpoint") else KEY_ENV
        return cls(model, api_key=environ.get(name) or None, **options)

    @property
    def azure(self) -> bool:
        return self.azure_endpoint is not None

    @property
    def url(self) -> str:
        """What a compactor appends ``/chat/completions`` to (an Azure deployment's URL for Azure)."""
        if self.azure_endpoint:
            return f"{self.azure_endpoint.rstrip('/')}/openai/deployments/{self.model}"
        return str(self.base_url).rstrip("/")

    def clients(self) -> tuple[openai.OpenAI, openai.AsyncOpenAI]:
        """Sync and async clients: no retries (each answer is recorded once), this endpoint's timeout."""
        common: dict[str, Any] = {"api_key": self.api_key or NO_KEY, "timeout": self.timeout, "max_retries": 0}
        if self.azure_endpoint:
            azure = {"azure_endpoint": self.azure_endpoint, "api_version": self.api_version, **common}
            return openai.AzureOpenAI(**azure), openai.AsyncAzureOpenAI(**azure)
        return openai.OpenAI(base_url=self.base_url, **common), openai.AsyncOpenAI(base_url=self.base_url, **common)

    def settings(self, *, base_url: str | None = None, api_key: str | None = None, **changes: Any) -> Settings:
        """`Settings` for a factory: this model and timeout, clients pointed here (no retries)."""
        client, async_client = self.clients()
        return Settings(
            model=self.model,
            base_url=base_url or self.url,
            api_key=api_key or self.api_key or NO_KEY,
            summarizer_timeout=self.timeout,
            client=client,
            async_client=async_client,
            **changes,
        )

    def auth_headers(self) -> dict[str, str]:
        if not self.api_key:
            return {}
        return {"api-key": self.api_key} if self.azure else {"Authorization": f"Bearer {self.api_key}"}

    def describe(self) -> dict[str, Any]:
        """Where the recording was made, without credentials."""
        url = self.azure_endpoint if self.azure_endpoint else str(self.base_url)
        info: dict[str, Any] = {"api": "azure-openai" if self.azure else "openai-compatible", "url": url, "host": urlsplit(url).netloc}
        if self.azure:
            info["api_version"] = self.api_version
            info["deployment"] = self.model
        return info


# --- the forwarding proxy for cmd: targets -------------------------------------------------------


class ForwardingProxy:
    """A local HTTP server forwarding every request to ``endpoint`` through this process's
    ``httpx`` client, so vcrpy records (or replays) the exchanges of a compactor running in
    another process. Credentials are added here; the compactor gets a placeholder key."""

    _FORWARDED_REQUEST = ("content-type", "accept", "user-agent")
    _DROPPED_RESPONSE = ("content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive")

    def __init__(self, endpoint: Endpoint) -> None:
        from werkzeug.serving import make_server

        try:
            import httpx2 as httpx
        except ImportError:  # openai < 3 uses httpx
            import httpx  # type: ignore[no-redef]
        self.endpoint = endpoint
        self._http = httpx.Client(timeout=endpoint.timeout)
        upstream = urlsplit(endpoint.url)
        self._origin = f"{upstream.scheme}://{upstream.netloc}"
        self._server = make_server("127.0.0.1", 0, self._app, threaded=True, request_handler=QuietHandler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="recording-proxy", daemon=True)

    @property
    def url(self) -> str:
        """The endpoint's URL with the proxy's origin (what the compactor is given as base_url)."""
        return f"http://127.0.0.1:{self._server.port}{urlsplit(self.endpoint.url).path}"

    def __enter__(self) -> ForwardingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
        self._http.close()

    def _app(self, environ: dict[str, Any], start_response: Any) -> Any:
        from werkzeug.wrappers import Request, Response

        request = Request(environ)
        query = dict(parse_qsl(request.query_string.decode("latin-1"), keep_blank_values=True))
        if self.endpoint.azure and "api-version" not in query:
            query["api-version"] = str(self.endpoint.api_version)
        url = self._origin + request.path + (f"?{urlencode(query)}" if query else "")
        headers = {k: v for k, v in request.headers.items() if k.lower() in self._FORWARDED_REQUEST}
        try:
            upstream = self._http.request(request.method, url, content=request.get_data(), headers={**headers, **self.endpoint.auth_headers()})
        except Exception as error:  # noqa: BLE001 - the compactor must see a failure, as it would without the proxy
            body = json.dumps({"error": {"message": f"recording proxy: {type(error).__name__}: {error}", "type": "proxy_error"}})
            return Response(body, status=502, mimetype="application/json")(environ, start_response)
        kept = [(k, v) for k, v in upstream.headers.items() if k.lower() not in self._DROPPED_RESPONSE]
        return Response(upstream.content, status=upstream.status_code, headers=kept)(environ, start_response)


# --- recording a target ----------------------------------------------------------------------------


@dataclass
class Recording:
    """One history recorded: where the files are and what happened."""

    cassette: Path
    meta: dict[str, Any]
    problem: str | None = None
    """Why the recording is unusable (not compacted, summarizer failed, next call rejected), or None."""


def default_histories() -> list[Path]:
    """The canonical histories: ``cassettes/histories/`` of the working directory, else of this checkout."""
    for root in (Path.cwd(), Path(__file__).resolve().parents[1]):
        folder = root / "cassettes" / "histories"
        if all((folder / name).is_file() for name in CANONICAL_HISTORIES):
            return [folder / name for name in CANONICAL_HISTORIES]
    raise RecordingError("no cassettes/histories/ here: pass --history FILE")


def slug(spec: str) -> str:
    """A directory name for a target: ``reference``, ``mypkg.check-factory``, ``cmd-node-compactor.mjs``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", spec).strip("-.")[:80] or "target"


def sha256_file(path: str | os.PathLike[str]) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def open_target(spec: str | None, timeout: float) -> Target:
    """`resolve`, with a ``cmd:`` process given ``timeout`` (plus a margin) to answer a compaction."""
    from .protocol import PREFIX, CommandTarget

    spec = spec or os.environ.get("COMPACTION_COMPACTOR", "")
    if spec.startswith(PREFIX):
        command = spec[len(PREFIX) :].strip()
        if not command:
            raise TargetError("cmd: needs a command, as in cmd:node compactor.mjs")
        return Target(spec, CommandTarget(command, timeout=timeout + 30), f"process `{command}`", None)
    return resolve(spec)


def _display_path(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def _versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for dist in ("compaction-suite", "openai", "vcrpy"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            found[dist] = metadata.version(dist)
    return found


def _header(response: Mapping[str, Any], name: str) -> str | None:
    for key, values in (response.get("headers") or {}).items():
        if key.lower() == name:
            return values[0] if isinstance(values, list) and values else values
    return None


def _interactions(cassette: Any, compactor_calls: int, label: str | None = None) -> list[dict[str, Any]]:
    rows = []
    for index, (request, response) in enumerate(cassette.data):
        purpose = label or ("summarizer call made by the compactor" if index < compactor_calls else "next agent call (verification)")
        rows.append({"index": index, "purpose": purpose, "method": request.method, "path": request.path, "status": response["status"]["code"]})
    return rows


def record(
    spec: str | None,
    histories: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    endpoint: Endpoint,
    *,
    iteration: int | None = None,
    name: str | None = None,
    model_file: str | os.PathLike[str] | None = None,
    server_info: str | None = None,
    command: str | None = None,
    produced_by: str | None = None,
) -> list[Recording]:
    """Record ``spec``'s compaction of each history against ``endpoint`` (module docstring)."""
    target = open_target(spec, endpoint.timeout)
    iteration = Settings().threshold_iterations if iteration is None else iteration
    model = None
    if model_file is not None:
        model = {"path": str(model_file), "name": Path(model_file).name, "bytes": Path(model_file).stat().st_size, "sha256": sha256_file(model_file)}
    folder = Path(out) / (name or slug(target.spec))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with contextlib.ExitStack() as stack:
            proxy = stack.enter_context(ForwardingProxy(endpoint)) if target.spec.startswith("cmd:") else None
            return [
                _record_one(target, Path(history), folder, endpoint, iteration, proxy, model, server_info, command, produced_by)
                for history in histories
            ]
    finally:
        target.close()


def _record_one(
    target: Target,
    history_path: Path,
    folder: Path,
    endpoint: Endpoint,
    iteration: int,
    proxy: ForwardingProxy | None,
    model_file: dict[str, Any] | None,
    server_info: str | None,
    command: str | None,
    produced_by: str | None,
) -> Recording:
    history = json.loads(history_path.read_text(encoding="utf-8"))
    cassette_path = folder / f"{history_path.stem}.yaml"
    cassette_path.unlink(missing_ok=True)  # mode "all" would keep old interactions the new ones do not match
    secrets = [endpoint.api_key] if endpoint.api_key else []
    if proxy is not None:
        settings = endpoint.settings(base_url=proxy.url, api_key=NO_KEY)
    else:
        settings = endpoint.settings()
    client = endpoint.clients()[0]
    verification: dict[str, Any] = {}
    with recorder(secrets).use_cassette(os.fspath(cassette_path)) as cassette:
        compactor, output, problem = _run(target, settings, history, iteration)
        compactor_calls = len(cassette.data)
        event = event_of(compactor) if compactor is not None else None
        problem = problem or _unusable(history, output, event)
        if problem is None:
            problem, verification, event = _verify(client, endpoint, compactor, output, event)
        interactions = _interactions(cassette, compactor_calls)
        server_header = _header(cassette.data[0][1], "server") if cassette.data else None
        double = any(_header(response, TEST_DOUBLE_HEADER.lower()) for _, response in cassette.data)
    meta = {
        "format": FORMAT,
        "produced_by": produced_by or _produced_by(endpoint, double),
        "cassette": cassette_path.name,
        "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": command,
        "recorded_with": _versions(),
        "server": {**endpoint.describe(), "info": server_info, "server_header": server_header},
        "model": endpoint.model,
        "model_file": model_file,
        "target": {"spec": target.spec, "origin": target.origin, "version": target.version},
        "history": {"path": _display_path(history_path), "sha256": sha256_file(history_path), "messages": len(history)},
        "iteration": iteration,
        "settings": {k: v for k, v in settings.as_json().items() if k not in ("api_key", "base_url")},
        "interactions": interactions,
        "verification": verification,
        "verified_prompt_tokens": verification.get("prompt_tokens"),
        "problem": problem,
        "event": event,
        "output": output,
    }
    text = scrub_text(json.dumps(meta, indent=2, ensure_ascii=False), secrets) + "\n"
    meta_path(cassette_path).write_text(text, encoding="utf-8")
    return Recording(cassette_path, json.loads(text), problem)


def _run(target: Target, settings: Settings, history: list[dict[str, Any]], iteration: int) -> tuple[Any, Any, str | None]:
    """(compactor, output, problem): a compactor that raises is a problem of the recording, not a crash."""
    try:
        compactor = target.factory(settings)
        return compactor, call_compact(compactor, copy.deepcopy(history), iteration), None
    except Exception as error:  # noqa: BLE001 - reported in the meta file and the exit status
        return None, None, f"the compactor raised {type(error).__name__}: {error}"


def _unusable(history: list[dict[str, Any]], output: Any, event: dict[str, Any] | None) -> str | None:
    """Why a compactor's answer cannot be verified: it did not compact, or its summarizer failed."""
    event = event or {}
    if not isinstance(output, list) or output == history:
        reason = event.get("failure_reason") or event.get("skipped_reason")
        return "the compactor did not compact" + (f": {reason}" if reason else "")
    if event.get("failure_reason"):
        return f"the summarizer failed: {event['failure_reason']}"
    return None


def _verify(
    client: openai.OpenAI, endpoint: Endpoint, compactor: Any, output: list[dict[str, Any]], event: dict[str, Any] | None
) -> tuple[str | None, dict[str, Any], dict[str, Any] | None]:
    """Send the compacted history as the agent's next call: (problem, verification, event).

    The server's ``usage.prompt_tokens`` is seed 000's verified figure; it is reported to the
    compactor (``observe_usage``) when it listens, and its event read again.
    """
    try:
        reply = client.chat.completions.create(model=endpoint.model, messages=output, **VERIFY)
    except openai.OpenAIError as error:
        problem = f"the endpoint rejected the compacted history: {type(error).__name__}: {error}"
        return problem, {"error": problem}, event
    usage = reply.usage.model_dump() if reply.usage is not None else None
    prompt_tokens = (usage or {}).get("prompt_tokens")
    if isinstance(prompt_tokens, int) and callable(getattr(compactor, "observe_usage", None)):
        compactor.observe_usage(prompt_tokens)
        event = event_of(compactor)
    request = {"model": endpoint.model, "messages": "the output below", **VERIFY}
    return None, {"request": request, "usage": usage, "prompt_tokens": prompt_tokens}, event


def _produced_by(endpoint: Endpoint, double: bool) -> str:
    """Who wrote the answers: the suite's test double says so in a header; anything else is taken as a model."""
    host = endpoint.describe()["host"]
    if double:
        return f"the compaction-suite summarizer TEST DOUBLE at {host} (not a model: its responses carry {TEST_DOUBLE_HEADER})"
    return f"real answers of {endpoint.model!r} at {host}"


# --- the failure exchanges of the test double ----------------------------------------------------------


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

CUT_NOTE = (
    "vcrpy cannot record a connection cut mid-body: it reads the whole body before recording, and that read "
    "raises (httpx RemoteProtocolError), so nothing is recorded. This cassette was written by "
    "compaction_suite.conformance.recording's capturing transport instead: the status, headers and every byte received "
    "before the cut, stored as a complete body. Live, the client saw the cut ({live}); on replay the "
    "client gets the same bytes without the cut, so {replay}."
)


def record_errors(out: str | os.PathLike[str], history: str | os.PathLike[str] | None = None, *, command: str | None = None) -> list[Recording]:
    """Record `ERROR_CASES` from the suite's test double, through the reference compactor (or ``openai``)."""
    from compaction_suite.reference.conformance_factory import seed_000

    from .summarizer_server import SummarizerServer

    history_path = Path(history) if history is not None else default_histories()[0]
    messages = json.loads(history_path.read_text(encoding="utf-8"))
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    iteration = Settings().threshold_iterations
    recordings = []
    with SummarizerServer() as server:
        for case in ERROR_CASES:
            server.reset()
            cassette_path = folder / f"{case.name}.yaml"
            cassette_path.unlink(missing_ok=True)
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
                    compactor = seed_000(settings)
                    output = call_compact(compactor, copy.deepcopy(messages), iteration)
                    event = event_of(compactor)
                    live = (event or {}).get("failure_reason")
                note = None
                if capture is not None and capture.exchange is not None:
                    cassette.append(*capture.exchange)  # through the recorder's scrubbing hooks
                    if capture.cut:
                        replay = (
                            "the stream simply ends after the received events, with no finish_reason and no [DONE]"
                            if case.stream
                            else "the compactor fails on the half JSON body instead (a malformed body, FAIL-3)"
                        )
                        note = CUT_NOTE.format(live=live, replay=replay)
                label = "streamed summary request (openai client, no compactor)" if case.stream else None
                interactions = _interactions(cassette, len(cassette.data), label)
            problem = None if len(interactions) == 1 else f"expected one recorded exchange, got {len(interactions)}"
            if case.fault == "truncated_stream" and not (capture and capture.cut):
                problem = "the test double did not cut the connection"
            meta = {
                "format": FORMAT,
                "produced_by": (
                    "the compaction-suite summarizer TEST DOUBLE (conformance/summarizer_server.py, fault "
                    f"{case.fault!r}): real HTTP bytes from a local werkzeug server, not a model and not a provider"
                ),
                "cassette": cassette_path.name,
                "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "command": command,
                "recorded_with": _versions(),
                "server": {
                    "api": "openai-compatible",
                    "url": server.base_url,
                    "host": urlsplit(server.base_url).netloc,
                    "info": "compaction-suite summarizer test double (ephemeral port)",
                },
                "model": settings.model,
                "fault": {"name": case.fault, **case.params},
                "clause": case.clause,
                "what": case.what,
                "client": "openai, stream=True (no compactor)" if case.stream else "the reference compactor (reference:seed_000) through openai",
                "target": None if case.stream else {"spec": "reference", "origin": "compaction_suite.reference.conformance_factory:seed_000"},
                "history": {"path": _display_path(history_path), "sha256": sha256_file(history_path), "messages": len(messages)},
                "iteration": iteration,
                "settings": {k: v for k, v in settings.as_json().items() if k not in ("api_key", "base_url")},
                "interactions": interactions,
                "live_failure": live,
                "capture_note": note,
                "problem": problem,
                "event": event,
                "output_is_input": None if output is None else output == messages,
            }
            meta_path(cassette_path).write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            recordings.append(Recording(cassette_path, meta, problem))
    return recordings


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
            try:
                for piece in response.stream:
                    received += piece
            except httpx.TransportError:
                capture.cut = True
                raise  # the client sees the cut, as it happened
            finally:
                response.stream.close()
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


def _stream_live(client: openai.OpenAI, messages: list[dict[str, Any]]) -> str | None:
    """Stream a summary request; the error the client saw, or None."""
    from compaction_suite.reference.summarizer import Summarizer
    from compaction_suite.reference.summary import transcript

    request = Summarizer(Settings().model).request(transcript(messages[1:4]))
    try:
        for _ in client.chat.completions.create(**request, stream=True):
            pass
    except openai.OpenAIError as error:
        return f"{type(error).__name__}: {error}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m compaction_suite.conformance.recording [--out DIR] [--history FILE]``: re-record the error cassettes."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m compaction_suite.conformance.recording", description=main.__doc__)
    parser.add_argument("--out", default="cassettes/errors", help="directory for the error cassettes (default: %(default)s)")
    parser.add_argument("--history", help="history to compact (default: cassettes/histories/parallel-tool-calls.json)")
    args = parser.parse_args(argv)
    command = shlex.join(["python", "-m", "compaction_suite.conformance.recording", *(sys.argv[1:] if argv is None else argv)])
    failed = 0
    for recording in record_errors(args.out, args.history, command=command):
        status = recording.problem or "ok"
        print(f"{recording.cassette}: {recording.meta['what']}: {status}")
        failed += recording.problem is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
