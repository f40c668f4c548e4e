"""The session object the conformance tests talk to: target, settings, summarizer.

Tests never build a compactor themselves: ``suite.new()`` calls the factory
afresh, so no state leaks between Hypothesis examples, and `Subject` hides
whether the compactor is sync, async or another process.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from .clauses import PROFILES
from .settings import Settings, connected
from .summarizer_server import SummarizerServer
from .target import StartupFailed, Target, check_compactor


class Subject:
    """One compactor instance under test, behind a uniform interface."""

    def __init__(self, compactor: Any, tally: Callable[[bool], None] | None = None) -> None:
        self.compactor = compactor
        self.tally = tally

    def compact(self, messages: list[dict], iteration: int) -> Any:
        """Call ``compact``; an implementation's 'skipped' answer skips the test."""
        from .protocol import ImplementationSkipped

        try:
            result = call_compact(self.compactor, messages, iteration)
        except ImplementationSkipped as skipped:
            pytest.skip(f"the implementation skipped this case: {skipped}")
        if self.tally is not None:
            self.tally(result != messages)
        return result

    def estimate(self, messages: list[dict]) -> int | None:
        """The compactor's own estimate, or None when it offers none."""
        estimate = getattr(self.compactor, "estimate_tokens", None)
        return None if estimate is None else int(estimate(copy.deepcopy(messages)))

    @property
    def event(self) -> dict[str, Any] | None:
        """``last_event`` as a dict (a mapping, a dataclass or an object with ``as_dict``)."""
        event = getattr(self.compactor, "last_event", None)
        if event is None or isinstance(event, Mapping):
            return dict(event) if event is not None else None
        if hasattr(event, "as_dict"):
            return event.as_dict()
        if dataclasses.is_dataclass(event):
            return dataclasses.asdict(event)
        return vars(event)

    @property
    def profiles(self) -> set[str]:
        return set(getattr(self.compactor, "profiles", None) or {"core"})


def call_compact(compactor: Any, messages: list[dict], iteration: int) -> Any:
    """``compactor.compact(messages, iteration=...)``, awaited when it is ``async def``."""
    result = compactor.compact(messages, iteration=iteration)
    if inspect.isawaitable(result):
        result = asyncio.run(_awaited(result))
    return result


async def _awaited(result: Any) -> Any:
    return await result


class Suite:
    """Everything a conformance run shares: the target, the summarizer server, the settings."""

    def __init__(self, target: Target, requested: list[str] | None, base: Settings | None = None) -> None:
        self.target = target
        self.server = SummarizerServer()
        self.server.start()
        self.settings = connected(base or Settings(), self.server.base_url)
        self.calls = 0
        self.compacted = 0
        """How many ``compact`` calls the tests made, and how many changed the history: a
        compactor that conforms by never compacting shows here."""
        try:
            self.claimed = self._first().profiles
        except BaseException:
            self.server.stop()
            raise
        unknown = sorted(self.claimed - set(PROFILES))
        self.unknown_profiles = unknown
        self.requested = set(requested) if requested else None

    def new(self, **changes: Any) -> Subject:
        """A fresh compactor from the factory, with ``changes`` applied to the settings."""
        settings = self.settings.with_(**changes) if changes else self.settings
        if "summarizer_timeout" in changes:
            settings = connected(settings, self.server.base_url)
        return Subject(self.target.factory(settings), self._tally)

    def _first(self) -> Subject:
        """The first compactor, checked against the plug-in contract: any failure here is the
        target's `StartupFailed`, not a clause's verdict."""
        start = getattr(self.target.factory, "start", None)
        if callable(start):  # a cmd: target: the process starts and names itself
            try:
                impl = start().get("implementation", {})
            except Exception as error:
                raise StartupFailed(f"{self.target.spec}: the program did not start: {_first_line(error).removeprefix(self.target.spec + ': ')}") from error
            self.target.version = self.target.version or f"{impl.get('name')} {impl.get('version')} ({impl.get('language')})"
        try:
            compactor = self.target.factory(self.settings)
        except Exception as error:
            raise StartupFailed(f"{self.target.spec}: the factory failed: {type(error).__name__}: {_first_line(error)}") from error
        check_compactor(compactor, self.target.spec)
        return Subject(compactor, self._tally)

    def _tally(self, changed: bool) -> None:
        self.calls += 1
        self.compacted += changed

    def reset_server(self) -> None:
        """Clear faults, fixed replies and recorded requests before an example."""
        self.server.reset()

    def active(self, profile: str) -> str | None:
        """None when ``profile``'s clauses run, else the reason they are skipped."""
        if profile not in self.claimed:
            return f"profile {profile!r} is not claimed by {self.target.spec} (claims {sorted(self.claimed)})"
        if self.requested is not None and profile not in self.requested:
            return f"profile {profile!r} was not requested (--compaction-profile)"
        return None

    def close(self) -> None:
        self.server.stop()
        self.target.close()


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else "(no message)"


def start(spec: str | None, requested: list[str] | None) -> Suite:
    """Resolve ``spec`` and start a conformance session; `TargetError` or `StartupFailed` say why not."""
    from .target import resolve

    return Suite(resolve(spec), requested)
