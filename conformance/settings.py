"""`Settings`: what the suite hands a compactor factory (SPEC Part A, "The plug-in contract")."""

from __future__ import annotations

import functools
import ssl
from dataclasses import dataclass, field, replace
from typing import Any

import openai


@dataclass(frozen=True)
class Settings:
    """The configuration a factory builds its compactor from.

    ``client`` and ``async_client`` point at the summarizer the suite controls;
    ``base_url``/``api_key`` are the same endpoint for compactors that build
    their own client (``cmd:`` targets always do).
    """

    threshold_iterations: int = 8
    max_context_tokens: int = 80_000
    keep_recent_rounds: int = 2
    model: str = "compaction-suite-summarizer"
    summary_prompt: str | None = None
    """An operator's override of the summarization prompt; None means the compactor's default."""
    summarizer_max_tokens: int | None = None
    """An operator's bound on a summary's length, the summarization request's ``max_tokens``; None
    means the compactor's default (SPEC PROBE-4)."""
    base_url: str | None = None
    api_key: str = "compaction-suite-test-double"
    summarizer_timeout: float = 2.0
    client: openai.OpenAI | None = field(default=None, repr=False, compare=False)
    async_client: openai.AsyncOpenAI | None = field(default=None, repr=False, compare=False)

    def with_(self, **changes: Any) -> Settings:
        """A copy with some fields changed; the clients stay as they are (`connected` points them elsewhere)."""
        return replace(self, **changes)

    def as_json(self) -> dict[str, Any]:
        """The settings a ``cmd:`` compactor receives (no client objects)."""
        return {
            "threshold_iterations": self.threshold_iterations,
            "max_context_tokens": self.max_context_tokens,
            "keep_recent_rounds": self.keep_recent_rounds,
            "model": self.model,
            "summary_prompt": self.summary_prompt,
            "base_url": self.base_url,
            "api_key": self.api_key,
            "summarizer_timeout": self.summarizer_timeout,
            "summarizer_max_tokens": self.summarizer_max_tokens,
        }


def connected(settings: Settings, base_url: str) -> Settings:
    """``settings`` with clients pointed at ``base_url``; retries off so each fault is seen once."""
    api_key, timeout = settings.api_key, settings.summarizer_timeout
    return replace(
        settings,
        base_url=base_url,
        client=openai.OpenAI(
            base_url=base_url, api_key=api_key, timeout=timeout, max_retries=0, http_client=openai.DefaultHttpxClient(verify=_tls())
        ),
        async_client=openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key, timeout=timeout, max_retries=0, http_client=openai.DefaultAsyncHttpxClient(verify=_tls())
        ),
    )


@functools.cache
def _tls() -> ssl.SSLContext:
    """The TLS context every client `connected` makes verifies with (httpx's default: certifi's CA
    bundle, hostnames checked). One per process: a client of its own loads the bundle each time,
    about 20 ms of CPU, and the battery makes clients dozens of times (`benchmarks/results/battery.md`).
    Made with the standard library and certifi, not httpx: the openai client may run on httpx2
    (openai 3.x), where httpx is not installed."""
    try:
        import certifi
    except ImportError:  # no certifi: the system's CA store
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())
