"""The plug-in contract's own code (SPEC Part A, "The plug-in contract").

Resolving a TARGET to a compactor factory (`resolve`), calling a compactor's
``compact``, sync or async (`call_compact`), and reading its ``last_event``
(`last_event`). The verifier (``suite.py``), the recorder (``recording/``) and the
benchmarks all go through here, so a compactor is called the same way everywhere.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import importlib
import inspect
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

GROUP = "compaction_suite.compactors"
ENV = "COMPACTION_COMPACTOR"


class TargetError(Exception):
    """The target cannot be resolved; the message says why (a usage error)."""


class StartupFailed(Exception):
    """The target resolved but breaks the plug-in contract before any clause runs: its factory
    raises or returns no compactor, ``compact`` is missing or has the wrong signature, or a
    ``cmd:`` program cannot start. Reported as one line, exit 2 (Bowtie's ``StartupFailed``)."""


def check_compactor(compactor: Any, spec: str) -> None:
    """Raise `StartupFailed` unless ``compactor`` offers ``compact(messages, *, iteration)``
    (SPEC Part A, "The plug-in contract")."""
    if compactor is None:
        raise StartupFailed(f"{spec}: the factory returned None, not a compactor")
    compact = getattr(compactor, "compact", None)
    if not callable(compact):
        raise StartupFailed(f"{spec}: the factory returned {type(compactor).__name__}, which has no compact(messages, *, iteration) method")
    try:
        signature = inspect.signature(compact)
    except (TypeError, ValueError):
        return  # a builtin or C-implemented callable: nothing to check before calling it
    try:
        signature.bind([], iteration=1)
    except TypeError as error:
        raise StartupFailed(f"{spec}: compact{signature} cannot be called as compact(messages, *, iteration): {error}") from None


def first_line(error: BaseException) -> str:
    """An exception's message as one line (the contract's errors are one line each)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else "(no message)"


@dataclass
class Target:
    spec: str
    """What the user gave: ``module:attr``, an entry-point name, or ``cmd:<command>``."""
    factory: Callable[..., Any]
    origin: str
    """Where the factory comes from, for the report header."""
    version: str | None

    def close(self) -> None:
        close = getattr(self.factory, "close", None)
        if callable(close):
            close()


def build(target: Target, settings: Any) -> Any:
    """A compactor from ``target``'s factory, checked against the plug-in contract: `StartupFailed`
    when the factory raises or returns no compactor (SPEC Part A, "The plug-in contract")."""
    try:
        compactor = target.factory(settings)
    except Exception as error:
        raise StartupFailed(f"{target.spec}: the factory failed: {type(error).__name__}: {first_line(error)}") from error
    check_compactor(compactor, target.spec)
    return compactor


UNREACHABLE = "http://127.0.0.1:9/v1"
"""Where a probe's summarizer clients point: the factory only builds its compactor, nothing calls it."""


def probe(specs: Sequence[str], **changes: Any) -> dict[str, Target]:
    """Each TARGET resolved and its factory built once, with the settings ``changes``, before a
    long run uses it (SPEC Part C): `TargetError` or `StartupFailed` name the first that cannot be."""
    from .settings import Settings, connected

    settings = connected(Settings(**changes), UNREACHABLE)
    found = {}
    for spec in specs:
        found[spec] = resolve(spec)
        build(found[spec], settings)
    return found


def resolve(spec: str | None, *, timeout: float | None = None) -> Target:
    """The factory for ``spec``, or for ``$COMPACTION_COMPACTOR`` when ``spec`` is empty.

    A ``cmd:`` process gets ``timeout`` seconds to answer a request when given (else the
    protocol's default).
    """
    spec = spec or os.environ.get(ENV, "")
    if not spec:
        raise TargetError(f"no compactor given: name a TARGET (pytest: --compactor TARGET) or set {ENV}")
    if is_command(spec):
        from .protocol import PREFIX, CommandTarget

        command = spec[len(PREFIX) :].strip()
        if not command:
            raise TargetError("cmd: needs a command, as in cmd:node compactor.mjs")
        factory = CommandTarget(command) if timeout is None else CommandTarget(command, timeout=timeout)
        return Target(spec, factory, f"process `{command}`", None)
    if ":" in spec:
        return _from_module(spec, spec)
    return _from_entry_point(spec)


def _from_module(spec: str, path: str) -> Target:
    module_name, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise TargetError(f"cannot import {module_name!r} for target {spec!r}: {error}{_not_installed_hint(module_name, error)}") from error
    except SyntaxError as error:  # the target's own code: a contract error, never a crash of the suite
        where = f"{error.filename}:{error.lineno}" if error.filename else module_name
        raise TargetError(f"cannot import {module_name!r} for target {spec!r}: {where}: SyntaxError: {error.msg}") from error
    except Exception as error:
        raise TargetError(f"cannot import {module_name!r} for target {spec!r}: importing it raised {type(error).__name__}: {first_line(error)}") from error
    factory: Any = module
    for part in attr.split("."):
        factory = getattr(factory, part, None)
        if factory is None:
            raise TargetError(f"{module_name!r} has no attribute {attr!r} (target {spec!r})")
    if not callable(factory):
        raise TargetError(f"{path} is not callable: a target names a factory(settings) -> compactor")
    return Target(spec, factory, path, _version(module_name))


def _not_installed_hint(module_name: str, error: ImportError) -> str:
    """What to do when the target's own package is not importable (not when something it
    imports is missing): install it, or name the folder that holds it."""
    top = module_name.split(".")[0]
    if not isinstance(error, ModuleNotFoundError) or error.name != top:
        return ""
    here = (Path.cwd() / top).is_dir() or (Path.cwd() / f"{top}.py").is_file()
    folder = "." if here else f"DIR (the folder that holds {top}/)"
    return f"; install its package in this environment, or pass --path {folder} (pytest: --compaction-path)"


def _from_entry_point(name: str) -> Target:
    found = metadata.entry_points(group=GROUP, name=name)
    if not found:
        known = sorted(ep.name for ep in metadata.entry_points(group=GROUP))
        raise TargetError(
            f"unknown target {name!r}: not module:attr, not cmd:<command>, and no entry point of that name "
            f"in {GROUP} (registered: {', '.join(known) or 'none'})"
        )
    entry = next(iter(found))
    return _from_module(name, entry.value)


def _version(module_name: str) -> str | None:
    top = module_name.split(".")[0]
    for dist in _installed().get(top, []):
        return f"{dist} {metadata.version(dist)}"
    return getattr(importlib.import_module(top), "__version__", None)


def is_command(spec: str) -> bool:
    """Whether ``spec`` names a compactor in another process (``cmd:<command>``)."""
    return spec.startswith("cmd:")


def call_compact(compactor: Any, messages: list[dict[str, Any]], iteration: int) -> Any:
    """``compactor.compact(messages, iteration=...)``, awaited when it is ``async def``."""
    result = compactor.compact(messages, iteration=iteration)
    if inspect.isawaitable(result):
        result = asyncio.run(_awaited(result))
    return result


async def _awaited(result: Any) -> Any:
    return await result


def last_event(compactor: Any) -> dict[str, Any] | None:
    """``last_event`` as a dict (a mapping, a dataclass or an object with ``as_dict``), or None.

    Raises what reading the attribute raises: a compactor whose event cannot be read
    is the caller's finding (SPEC EVENT-*).
    """
    event = getattr(compactor, "last_event", None)
    if event is None or isinstance(event, Mapping):
        return dict(event) if event is not None else None
    if hasattr(event, "as_dict"):
        return dict(event.as_dict())
    if dataclasses.is_dataclass(event) and not isinstance(event, type):
        return dataclasses.asdict(event)
    return dict(vars(event))


def last_event_json(compactor: Any) -> dict[str, Any] | None:
    """`last_event` as JSON-ready data (non-JSON values as strings), or None when there is none
    or it cannot be read: for records (cassette meta files, benchmark reports), not for verdicts."""
    try:
        event = last_event(compactor)
    except (AttributeError, TypeError):
        return None
    return None if event is None else json.loads(json.dumps(event, default=str))


@functools.cache
def _installed() -> Mapping[str, list[str]]:
    """Top-level import names -> the distributions installing them: read once a process (it
    reads the metadata of every installed distribution)."""
    return metadata.packages_distributions()
