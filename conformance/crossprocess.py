"""A second process compacting what the suite sends it: CORE-8 and EVT-2 across processes.

``python -m compaction_suite.conformance.crossprocess TARGET`` reads JSON lines ``{"settings": {...},
"messages": [...], "iteration": n}`` (settings as ``Settings.as_json()``), builds a fresh
compactor from TARGET's factory for each, and answers ``{"messages": [...], "event": {...}}``
or ``{"error": "..."}`` on one line. The suite compares the answers with its own run:
the same input, iteration and summarizer answers must give the same output, and the same
configured prompt the same ``prompt_hash``, in every process (SPEC CORE-8, EVT-2 decisions).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from .settings import Settings, connected


def serve(spec: str) -> None:
    from .suite import Subject
    from .target import check_compactor, resolve

    target = resolve(spec)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        plain = dict(request["settings"])
        base_url = plain.pop("base_url")
        settings = connected(Settings(**plain), base_url)
        try:
            compactor = target.factory(settings)
            check_compactor(compactor, spec)
            subject = Subject(compactor)
            out = subject.compact(request["messages"], request["iteration"])
            answer: dict[str, Any] = {"messages": out, "event": _event(subject)}
        except Exception as error:  # noqa: BLE001 - reported to the suite, which judges it
            answer = {"error": f"{type(error).__name__}: {error}"}
        sys.stdout.write(json.dumps(answer, default=str) + "\n")
        sys.stdout.flush()
    target.close()


def _event(subject: Any) -> Any:
    try:
        return subject.event
    except Exception:  # noqa: BLE001 - an event that cannot be read is no event
        return None


class Worker:
    """The suite's side: one ``python -m compaction_suite.conformance.crossprocess TARGET`` process."""

    def __init__(self, spec: str) -> None:
        # The child finds what this process found: ``--path`` folders and pytest's rootdir included,
        # and nothing else first: ``-P`` keeps ``-m`` from putting the working directory ahead of them
        # (a clone's own ``compaction_suite/`` folder would shadow an installed wheel's).
        path = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))
        self.popen = subprocess.Popen(
            [sys.executable, "-P", "-m", "compaction_suite.conformance.crossprocess", spec],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
            env=dict(os.environ, PYTHONPATH=path),
        )

    def compact(self, settings: Settings, messages: list[dict], iteration: int) -> dict[str, Any]:
        assert self.popen.stdin is not None and self.popen.stdout is not None
        try:
            self.popen.stdin.write(json.dumps({"settings": settings.as_json(), "messages": messages, "iteration": iteration}) + "\n")
            self.popen.stdin.flush()
            line = self.popen.stdout.readline()
        except OSError:
            line = ""
        return json.loads(line) if line else {"error": f"the second process ended (status {self.popen.poll()}): {self._last_error()}"}

    def _last_error(self) -> str:
        if self.popen.poll() is None or self.popen.stderr is None:
            return "no answer"
        lines = self.popen.stderr.read().strip().splitlines()
        return lines[-1] if lines else "no message"

    def close(self) -> None:
        if self.popen.stdin is not None:
            try:
                self.popen.stdin.close()
            except OSError:
                pass  # it has ended already
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.popen.kill()


if __name__ == "__main__":
    serve(sys.argv[1])
