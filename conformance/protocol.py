"""The ``cmd:`` plug-in: a compactor in any language, as a process speaking JSON lines.

A target ``cmd:<command>`` (SPEC Part A, "The plug-in contract") names a program
the suite starts once and talks to over its standard input and output, one JSON
object per line, in the versioned protocol of ``conformance/schema/v1/`` (see the
README there). `CommandTarget` is the factory the suite calls; each call resets
the process and returns a `CommandCompactor`, which behaves like a Python
compactor: ``compact``, ``profiles``, and ``estimate_tokens`` / ``last_event``
when the implementation declares those capabilities.

An implementation answers ``compact`` in one of four ways, and each maps to
what a Python compactor would do, so the suite judges both alike:

* a result: ``compact`` returns the messages;
* ``rejected``: `Rejected` (a ``ValueError``, SPEC CORE-9);
* ``skipped``: `ImplementationSkipped` (a case it does not support: reported
  skipped, never failed);
* ``errored``: `ImplementationErrored` (it crashed: reported errored, which is
  not a failed clause either).

Anything else (a line that is not JSON or not a valid answer, a wrong ``seq``,
no answer within the timeout, a process that died) is a `ProtocolError`, whose
message ends with the last lines the process wrote to standard error. After a
protocol error the process is killed; the next factory call starts a new one.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import queue
import shlex
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import IO, Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from referencing import Registry, Resource

__all__ = [
    "PROTOCOL",
    "VERSION",
    "REQUEST_SCHEMA_ID",
    "RESPONSE_SCHEMA_ID",
    "DEFAULT_TIMEOUT",
    "PREFIX",
    "CommandTarget",
    "CommandCompactor",
    "ProtocolError",
    "UnsupportedVersion",
    "Rejected",
    "ImplementationSkipped",
    "ImplementationErrored",
    "load_schema",
    "validator",
]

PROTOCOL = "compaction-suite"
"""The ``protocol`` field of ``start``."""
VERSION = 1
"""The protocol version this suite speaks."""
PREFIX = "cmd:"
"""How a target names a command (``cmd:node compactor.mjs``)."""

SCHEMA_DIR = Path(__file__).parent / "schema" / f"v{VERSION}"
REQUEST_SCHEMA_ID = f"urn:compaction-suite:protocol:v{VERSION}:request"
RESPONSE_SCHEMA_ID = f"urn:compaction-suite:protocol:v{VERSION}:response"

DEFAULT_TIMEOUT = 30.0
"""Seconds the suite waits for any one answer."""
STOP_TIMEOUT = 5.0
"""Seconds a process gets to exit after ``stop`` before it is killed."""
EXIT_GRACE = 2.0
"""Seconds to wait for an exit status after a process closed its standard output."""
STDERR_KEPT = 200
"""Lines of standard error kept in memory (older lines are dropped)."""
STDERR_SHOWN = 10
"""Lines of standard error quoted in a `ProtocolError`."""
LINE_CHARS = 500
"""Longest piece of one line quoted in a message."""

IMPLEMENTATION_LOGGER = logging.getLogger("compaction_suite.conformance.protocol.implementation")
"""Where the ``logs`` of an answer are re-emitted (so FAIL-5 sees them like a Python compactor's)."""

_EOF = None


# --- errors ------------------------------------------------------------------------


class ProtocolError(Exception):
    """The implementation broke the protocol: bad line, wrong seq, no answer, or it died.

    ``stderr`` holds the last lines it wrote to standard error (also in the message).
    """

    def __init__(self, message: str, stderr: Sequence[str] = ()) -> None:
        self.reason = message
        self.stderr = list(stderr)
        super().__init__(message + _stderr_block(self.stderr))


class UnsupportedVersion(ProtocolError):
    """The implementation refused ``start``: it does not speak this protocol version."""


class Rejected(ValueError):
    """The implementation refused the history (answer ``rejected``), as a compactor raises ``ValueError``."""


class ImplementationSkipped(Exception):
    """The implementation does not support this case (answer ``skipped``): report a skip, not a failure."""


class ImplementationErrored(Exception):
    """The implementation crashed on a request (answer ``errored``): report an error, not a failure.

    ``message`` is what it said; ``context`` is its optional debugging detail
    (a traceback, an object), appended to ``str(error)`` when present.
    """

    def __init__(self, message: str, context: Any = None) -> None:
        self.message = message
        self.context = context
        super().__init__(message if context is None else f"{message}\n{_render_context(context)}")


def _render_context(context: Any) -> str:
    return context if isinstance(context, str) else json.dumps(context, indent=2, ensure_ascii=False)


def _stderr_block(lines: Sequence[str]) -> str:
    if not lines:
        return "\nstderr: (nothing)"
    shown = lines[-STDERR_SHOWN:]
    return f"\nstderr (last {len(shown)} lines):\n" + "\n".join(f"  | {line}" for line in shown)


def _preview(text: str) -> str:
    return repr(text if len(text) <= LINE_CHARS else text[:LINE_CHARS] + "...")


# --- schemas -----------------------------------------------------------------------


def load_schema(name: str) -> dict[str, Any]:
    """The published schema ``request`` or ``response`` of this protocol version."""
    return json.loads((SCHEMA_DIR / f"{name}.json").read_text("utf-8"))


@cache
def _registry() -> Registry:
    ids = {"request": REQUEST_SCHEMA_ID, "response": RESPONSE_SCHEMA_ID}  # each schema's "$id" (tests/test_protocol.py)
    return Registry().with_resources((ids[name], Resource.from_contents(load_schema(name))) for name in ids)


@cache
def validator(ref: str) -> Draft202012Validator:
    """A validator for ``ref``: ``"request"``, ``"response"``, or a definition such as
    ``"response#/$defs/compact_answer"``."""
    name, _, pointer = ref.partition("#")
    base = {"request": REQUEST_SCHEMA_ID, "response": RESPONSE_SCHEMA_ID}[name]
    return Draft202012Validator({"$ref": f"{base}#{pointer}"}, registry=_registry())


def _history(messages: Any) -> Any:
    """The history as plain JSON: a list (chat-completions, responses) or a request dict (anthropic-messages)."""
    return dict(messages) if isinstance(messages, Mapping) else list(messages)


# --- the process ---------------------------------------------------------------------


class _Process:
    """A child process with line-oriented pipes that never block the caller.

    One thread writes requests (so a process that stops reading cannot block the
    suite), one reads answer lines into a queue (so waiting has a timeout), one
    keeps the tail of standard error.
    """

    def __init__(self, argv: list[str]) -> None:
        self.popen = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=os.getcwd()
        )
        self._answers: queue.Queue[bytes | None] = queue.Queue()
        self._requests: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=STDERR_KEPT)
        self._threads = [
            self._thread(self._read_stdout, "stdout"),
            self._thread(self._read_stderr, "stderr"),
            self._thread(self._write_stdin, "stdin"),
        ]

    def _thread(self, target: Callable[[], None], name: str) -> threading.Thread:
        thread = threading.Thread(target=target, name=f"cmd-{self.popen.pid}-{name}", daemon=True)
        thread.start()
        return thread

    def _read_stdout(self) -> None:
        with _pipe(self.popen.stdout) as stdout:
            for line in stdout:
                self._answers.put(line)
        self._answers.put(_EOF)

    def _read_stderr(self) -> None:
        with _pipe(self.popen.stderr) as stderr:
            for line in stderr:
                self._stderr.append(line.decode("utf-8", "replace").rstrip("\r\n")[:LINE_CHARS])

    def _write_stdin(self) -> None:
        stdin = _pipe(self.popen.stdin)
        try:
            while (data := self._requests.get()) is not None:
                stdin.write(data)
                stdin.flush()
        except OSError:
            pass  # the process is gone; the reader sees its end
        finally:
            try:
                stdin.close()
            except OSError:
                pass

    def send(self, data: bytes) -> None:
        self._requests.put(data)

    def close_stdin(self) -> None:
        self._requests.put(None)

    def next_line(self, timeout: float) -> bytes | None:
        """The next non-blank line of standard output; None at its end; raises ``queue.Empty`` on timeout."""
        while True:
            line = self._answers.get(timeout=timeout)
            if line is None:
                self._answers.put(None)  # stay at the end for later readers
                return None
            if line.strip():
                return line

    def stderr_lines(self, settle: bool = False) -> list[str]:
        """The kept tail of standard error; ``settle`` waits briefly for a dead process's last lines."""
        if settle:
            self._threads[1].join(timeout=EXIT_GRACE)
        return list(self._stderr)

    def exit_status(self, wait: float) -> int | None:
        try:
            return self.popen.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
        self.popen.wait()
        self.close_stdin()

    def stop(self, stop_line: bytes, timeout: float) -> int:
        """Send ``stop``, close standard input, wait; kill when it does not exit in time."""
        if self.popen.poll() is None:
            self.send(stop_line)
        self.close_stdin()
        if self.exit_status(timeout) is None:
            self.popen.kill()
        status = self.popen.wait()
        for thread in self._threads:
            thread.join(timeout=EXIT_GRACE)
        return status


def _pipe(stream: IO[bytes] | None) -> IO[bytes]:
    """One of the child's standard streams, which ``_Process`` opens as pipes: never None."""
    assert stream is not None, "opened with subprocess.PIPE"
    return stream


# --- the session: one process after its handshake --------------------------------------


class _Session:
    """One started process: the handshake's answer, request numbering, and the ask/answer loop."""

    def __init__(self, name: str, argv: list[str], timeout: float) -> None:
        self.name = name
        self.timeout = timeout
        self.broken = False
        self.generation = 0
        """How many resets were answered; a `CommandCompactor` is valid for one generation."""
        self._seq = 0
        self.lock = threading.RLock()
        """Held for one request and its answer (and by a compactor taking the process over)."""
        try:
            self.process = _Process(argv)
        except OSError as error:
            raise ProtocolError(f"{name}: could not start the process: {error}") from error
        self.hello = self._start()

    @property
    def implementation(self) -> dict[str, Any]:
        return self.hello["implementation"]

    @property
    def profiles(self) -> list[str]:
        return self.hello["profiles"]

    def capable(self, capability: str) -> bool:
        return bool(self.hello["capabilities"].get(capability, False))

    def _start(self) -> dict[str, Any]:
        answer = self.ask({"cmd": "start", "protocol": PROTOCOL, "version": VERSION}, "start_answer", "start")
        if not answer["ok"]:
            self.stop()
            raise UnsupportedVersion(
                f"{self.name}: refused protocol version {VERSION}: {answer['error']}", self.process.stderr_lines()
            )
        if answer["version"] != VERSION:
            raise self.fail(f"answered start with version {answer['version']}; the suite speaks {VERSION}")
        return answer

    def reset(self, settings: dict[str, Any]) -> int:
        """Send ``reset``; returns the new generation."""
        with self.lock:
            answer = self.ask({"cmd": "reset", "settings": settings}, "reset_answer", "reset")
            if not answer["ok"]:
                raise ImplementationErrored(f"{self.name}: reset failed: {answer['error']}")
            self.generation += 1
            return self.generation

    def ask_numbered(self, request: dict[str, Any], answer_def: str) -> dict[str, Any]:
        """`ask` for a request that carries the next ``seq`` (``compact``, ``estimate_tokens``)."""
        with self.lock:
            self._seq += 1
            numbered = {"cmd": request["cmd"], "seq": self._seq, **request}
            return self.ask(numbered, answer_def, f"{request['cmd']} (seq {self._seq})")

    def ask(self, request: dict[str, Any], answer_def: str, what: str) -> dict[str, Any]:
        """Send one request and return its validated answer, or raise `ProtocolError`."""
        with self.lock:
            if self.broken:
                raise ProtocolError(f"{self.name}: the process was ended by an earlier protocol error")
            self.process.send(_encode(request))
            line = self._receive(what)
            answer = self._parse(line, what)
            problem = best_match(validator(f"response#/$defs/{answer_def}").iter_errors(answer))
            if problem is not None:
                where = problem.json_path
                raise self.fail(f"invalid answer to {what}: {problem.message} (at {where}); the line was {_preview(line)}")
            if "seq" in request and answer.get("seq") != request["seq"]:
                raise self.fail(f"answered {what} with seq {answer.get('seq')}")
            return answer

    def _receive(self, what: str) -> str:
        try:
            raw = self.process.next_line(self.timeout)
        except queue.Empty:
            raise self.fail(f"did not answer {what} within {self.timeout:g} s") from None
        if raw is None:
            status = self.process.exit_status(EXIT_GRACE)
            ended = "closed its standard output" if status is None else f"exited with status {status}"
            raise self.fail(f"{ended} before answering {what}")
        return raw.decode("utf-8", "replace").rstrip("\r\n")

    def _parse(self, line: str, what: str) -> dict[str, Any]:
        try:
            return json.loads(line)
        except ValueError as error:
            raise self.fail(f"answered {what} with a line that is not JSON ({error}): {_preview(line)}") from None

    def fail(self, message: str) -> ProtocolError:
        """End the process (the stream can no longer be trusted) and build the error."""
        self.broken = True
        self.process.kill()
        return ProtocolError(f"{self.name}: {message}", self.process.stderr_lines(settle=True))

    def stop(self) -> int:
        self.broken = True
        return self.process.stop(_encode({"cmd": "stop"}), STOP_TIMEOUT)


def _encode(request: dict[str, Any]) -> bytes:
    """One request line: ASCII-only JSON, so any implementation's decoder reads it."""
    try:
        text = json.dumps(request, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as error:
        # Not a ValueError: the suite would take that for the implementation rejecting the history.
        raise TypeError(f"the request cannot be sent as JSON: {error}") from None
    return text.encode("ascii") + b"\n"


# --- the public face ---------------------------------------------------------------------


class CommandTarget:
    """The factory of a ``cmd:<command>`` target: ``target(settings) -> CommandCompactor``.

    The process starts on the first call (``shlex.split(command)``, no shell,
    the current directory) and answers ``start`` once; every call sends
    ``reset`` with ``settings.as_json()``. A compactor from an earlier call is
    stale once the next call resets the process. ``close()`` stops the process;
    it also runs at interpreter exit. Usable as a context manager.
    """

    def __init__(self, command: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.command = command
        self.argv = shlex.split(command)
        if not self.argv:
            raise ValueError("a cmd: target needs a command")
        self.timeout = timeout
        self.name = f"{PREFIX}{command}"
        self.returncode: int | None = None
        """The exit status of the last process, once it ended."""
        self._session: _Session | None = None
        self._refusal: UnsupportedVersion | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"CommandTarget({self.command!r})"

    def __call__(self, settings: Any) -> CommandCompactor:
        with self._lock:
            session = self._ensure_started()
            settings_json = _settings_json(settings)
            return CommandCompactor(session, session.reset(settings_json), settings_json)

    def start(self) -> dict[str, Any]:
        """Start the process if needed and return its answer to ``start`` (implementation, profiles, capabilities)."""
        with self._lock:
            return dict(self._ensure_started().hello)

    @property
    def stderr(self) -> list[str]:
        """The last lines the current (or last) process wrote to standard error."""
        return [] if self._session is None else self._session.process.stderr_lines()

    def close(self) -> None:
        """Send ``stop`` and wait for the process; kill it when it does not exit within 5 s."""
        with self._lock:
            session, self._session = self._session, None
            atexit.unregister(self.close)
            if session is not None:
                self.returncode = session.stop()

    def __enter__(self) -> CommandTarget:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _ensure_started(self) -> _Session:
        if self._refusal is not None:
            raise UnsupportedVersion(self._refusal.reason, self._refusal.stderr)
        if self._session is not None and not self._session.broken:
            return self._session
        if self._session is not None:
            self.returncode = self._session.stop()
        self._session = None
        try:
            session = _Session(self.name, self.argv, self.timeout)
        except UnsupportedVersion as refusal:
            self._refusal = refusal
            raise
        self._session = session
        atexit.register(self.close)
        return session


def _settings_json(settings: Any) -> dict[str, Any]:
    as_json = getattr(settings, "as_json", None)
    return as_json() if callable(as_json) else dict(settings)


class CommandCompactor:
    """A compactor backed by a process: what ``CommandTarget(...)(settings)`` returns.

    ``estimate_tokens`` and ``last_event`` exist (``hasattr``) only when the
    implementation declared the capability of that name.

    The process holds one compactor at a time, the one of the last ``reset``.
    An older `CommandCompactor` can still be used where that is exact: it
    resets the process back to its own settings first, which is exact for
    ``estimate_tokens`` (it depends on the settings and messages only) and for
    a ``compact`` when this compactor has not compacted before (it had no state
    yet). A ``compact`` on an older compactor that has (or had) state raises
    ``RuntimeError`` rather than silently run on a fresh one.
    """

    def __init__(self, session: _Session, generation: int, settings: dict[str, Any]) -> None:
        self._session = session
        self._generation = generation
        self._settings = settings
        self._has_state = False
        """True once ``compact`` was sent: the process then holds state a reset would lose."""
        self._state_lost = False
        """True once a reset for this compactor dropped its state: ``compact`` is refused from then on."""
        self._last_event: dict[str, Any] | None = None
        self.implementation: dict[str, Any] = dict(session.implementation)
        self.profiles: set[str] = set(session.profiles)
        self.capabilities: dict[str, Any] = dict(session.hello.get("capabilities") or {})
        """The ``start`` answer's capabilities, including the declarations ``called`` and
        ``system_prompt`` (protocol 1.1, SPEC Part A "Declarations")."""

    @property
    def _format(self) -> dict[str, str]:
        """``{"format": ...}`` for an implementation that declared a wire format other than
        chat-completions (protocol 1.2); nothing otherwise, so a 1.0 implementation sees no change."""
        wire_format = self.capabilities.get("wire_format", "chat-completions")
        return {} if wire_format == "chat-completions" else {"format": wire_format}

    def __repr__(self) -> str:
        return f"<CommandCompactor {self._session.name} {self.implementation.get('name')!r}>"

    def compact(self, messages: Any, *, iteration: int) -> Any:
        """Ask the process to compact ``messages`` (a history in its declared wire format);
        raises `Rejected`, `ImplementationSkipped`, `ImplementationErrored` or `ProtocolError`
        per its answer."""
        self._last_event = None
        request = {"cmd": "compact", "messages": _history(messages), **self._format, "iteration": iteration}
        answer = self._ask(request, "compact_answer_in_format" if self._format else "compact_answer")
        _answer_or_raise(answer)
        self._last_event = answer.get("event")
        return answer["messages"]

    @property
    def estimate_tokens(self) -> Callable[[Sequence[Mapping[str, Any]]], int]:
        """``estimate_tokens(messages) -> int`` (only with the ``estimate_tokens`` capability)."""
        if not self._session.capable("estimate_tokens"):
            raise AttributeError("estimate_tokens: the implementation did not declare this capability")
        return self._estimate_tokens

    @property
    def last_event(self) -> dict[str, Any] | None:
        """The event of the last ``compact`` answer (only with the ``last_event`` capability)."""
        if not self._session.capable("last_event"):
            raise AttributeError("last_event: the implementation did not declare this capability")
        return self._last_event

    def _estimate_tokens(self, messages: Sequence[Mapping[str, Any]]) -> int:
        answer = self._ask({"cmd": "estimate_tokens", "messages": _history(messages), **self._format}, "estimate_tokens_answer")
        _answer_or_raise(answer)
        return answer["tokens"]

    def _ask(self, request: dict[str, Any], answer_def: str) -> dict[str, Any]:
        session = self._session
        with session.lock:
            stale = session.generation != self._generation and not session.broken
            if request["cmd"] == "compact" and (self._state_lost or (stale and self._has_state)):
                raise RuntimeError(
                    f"this compactor of {session.name} is stale: the process was reset for another one, "
                    "and this one's state (from its earlier compact calls) is gone"
                )
            if stale:
                self._take_over()
            if request["cmd"] == "compact":
                self._has_state = True
            answer = session.ask_numbered(request, answer_def)
        _emit_logs(answer.get("logs", ()))
        return answer

    def _take_over(self) -> None:
        """Reset the process back to this (older) compactor's settings; its state, if any, is lost."""
        self._state_lost = self._has_state
        self._generation = self._session.reset(self._settings)


def _answer_or_raise(answer: dict[str, Any]) -> None:
    """Turn the ``rejected``/``skipped``/``errored`` answers into the matching exception."""
    if "rejected" in answer:
        raise Rejected(answer["rejected"]["message"])
    if "skipped" in answer:
        raise ImplementationSkipped(answer["skipped"]["message"])
    if "errored" in answer:
        raise ImplementationErrored(answer["errored"]["message"], answer["errored"].get("context"))


def _emit_logs(records: Sequence[Mapping[str, str]]) -> None:
    for record in records:
        IMPLEMENTATION_LOGGER.log(logging.getLevelName(record["level"]), "%s", record["message"])
