"""Offline replay: a cassette played back with every outgoing connection refused.

`replaying` uses record mode ``none`` (an unrecorded request raises) and `no_network`, so a
request the cassette does not hold fails instead of reaching a network. `offline_settings`
points a compactor's clients at a local port where nothing listens: only the cassette can
answer.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from compaction_suite.conformance.settings import Settings

from .endpoint import Endpoint
from .scrub import player


class NetworkBlocked(OSError):
    """A connection was attempted during an offline replay."""


@contextlib.contextmanager
def no_network() -> Iterator[None]:
    """Refuse every outgoing IP connection in this process for the duration."""
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def refuse(self: Any, address: Any, real: Any) -> Any:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            raise NetworkBlocked(f"network access during an offline replay: connect{address!r}")
        return real(self, address)

    # The method-assign ignores: the class is patched on purpose, in this process only, restored in `finally`.
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
