"""Where a recording is made: an OpenAI-compatible endpoint or an Azure OpenAI deployment
(`Endpoint`), and the local proxy through which a ``cmd:`` compactor's calls are recorded
(`ForwardingProxy`).

API keys come from ``OPENAI_API_KEY`` / ``AZURE_OPENAI_API_KEY``, never from the command
line. ``cmd:`` compactors make their HTTP calls in their own process, so they are pointed at
the proxy, whose upstream calls this process records; the proxy also adds the credentials,
so the compactor's process never sees the key.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import openai

from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.summarizer_server import QuietHandler

NO_KEY = "no-key"
"""The api key sent when the environment holds none (a local server needs none)."""
DEFAULT_TIMEOUT = 600.0
"""Seconds a summarizer call may take: a small model on a laptop CPU is slow."""
KEY_ENV = "OPENAI_API_KEY"
AZURE_KEY_ENV = "AZURE_OPENAI_API_KEY"


class RecordingError(Exception):
    """A recording could not be made or is unusable; the message says why."""


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
            import httpx  # type: ignore[no-redef,import-not-found,unused-ignore]
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
