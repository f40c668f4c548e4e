"""The session object the conformance tests talk to: target, settings, summarizer.

Tests never build a compactor themselves: ``suite.new()`` calls the factory
afresh, so no state leaks between Hypothesis examples, and `Subject` hides
whether the compactor is sync, async or another process.

Every ``compact`` call goes through `Subject.compact`, which is also where the suite
watches what no single test owns (SPEC Part A, "Every output"): each output is judged
for the structural clauses (CORE-1, CORE-2, CORE-3, CORE-4, CORE-6), an exception escaping a
valid history is a crash (CORE-10), each call is kept as the case that replays it, and
each compaction counts as an example that exercised the clause under test.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from . import formats, oracle
from .assertions import CHECKED
from .capabilities import Capabilities, CapabilityError, declared
from .clauses import CRASH, PROFILES, clauses
from .settings import Settings, connected
from .summarizer_server import SummarizerServer
from .target import StartupFailed, Target, build, call_compact, last_event
from .target import first_line as _first_line

ACTIVE: list[Suite] = []
"""The running suite (one per pytest session), for strategies that follow its declarations."""


@dataclass
class Finding:
    """A clause violation the suite saw on an output, in whichever test produced it."""

    reason: str
    history: Any
    output: Any
    case: dict[str, Any] | None
    test: str | None


@dataclass
class Observations:
    """What the suite saw across all tests: per clause, the examples that exercised it and
    the smallest violation found outside the clause's own tests."""

    exercised: dict[str, set[str]] = field(default_factory=dict)
    findings: dict[str, Finding] = field(default_factory=dict)
    seen_in: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per clause, every test a violation was found in outside the clause's own tests, with its
    first reason there (the report lists them all; the smallest finding alone hides the others)."""

    def exercise(self, clause_id: str, key: str) -> None:
        self.exercised.setdefault(clause_id, set()).add(key)

    def find(self, clause_id: str, finding: Finding) -> None:
        self.seen_in.setdefault(clause_id, {}).setdefault(finding.test or "another test", finding.reason.splitlines()[0] if finding.reason else "")
        kept = self.findings.get(clause_id)
        if kept is None or _size(finding.history) < _size(kept.history):
            self.findings[clause_id] = finding

    def count(self, clause_id: str) -> int:
        return len(self.exercised.get(clause_id, ()))


def _size(history: Any) -> int:
    return len(json.dumps(history, default=str))


class Subject:
    """One compactor instance under test, behind a uniform interface."""

    def __init__(self, compactor: Any, suite: Suite | None = None, changes: Mapping[str, Any] | None = None) -> None:
        self.compactor = compactor
        self.suite = suite
        self.changes = dict(changes or {})
        """The settings this example changed (part of the case that replays a failure)."""

    def compact(self, messages: list[dict], iteration: int) -> Any:
        """Call ``compact``; an implementation's 'skipped' answer skips the test.

        An exception other than a ``ValueError`` rejecting an in-flight history is recorded as a
        crash (CORE-10) and re-raised; every output is judged for the structural clauses."""
        from .protocol import ImplementationSkipped, ProtocolError

        snapshot = json.dumps(messages, sort_keys=True, default=str)
        case = self._case(snapshot, iteration)
        try:
            result = call_compact(self.compactor, messages, iteration)
        except ImplementationSkipped as skipped:
            pytest.skip(f"the implementation skipped this case: {skipped}")
        except ProtocolError:
            raise
        except ValueError as error:
            in_flight = self.suite.format.in_flight if self.suite is not None else oracle.in_flight
            if not in_flight(json.loads(snapshot)):
                self._crashed(snapshot, case, error, "rejected a complete, valid history with ")
            raise
        except Exception as error:
            self._crashed(snapshot, case, error)
            raise
        if self.suite is not None:
            self.suite.judge(case["messages"], result, case, snapshot)
        return result

    def _case(self, snapshot: str, iteration: int) -> dict[str, Any]:
        """What replays this call: the history, the iteration, the changed settings, the summarizer's mode."""
        summarizer = self.suite.server.mode() if self.suite is not None else None
        case = {"messages": json.loads(snapshot), "iteration": iteration, "settings": _plain(self.changes), "summarizer": summarizer}
        if self.suite is not None:
            self.suite.last_case = case
        return case

    def _crashed(self, snapshot: str, case: dict[str, Any], error: BaseException, how: str = "") -> None:
        if self.suite is not None:
            reason = f"compact {how or 'raised '}{type(error).__name__}: {_first_line(error)}"
            self.suite.find(CRASH, reason, json.loads(snapshot), None, case)

    def estimate(self, messages: list[dict]) -> int | None:
        """The compactor's own estimate, or None when it offers none."""
        estimate = getattr(self.compactor, "estimate_tokens", None)
        return None if estimate is None else int(estimate(json.loads(json.dumps(messages))))

    @property
    def event(self) -> dict[str, Any] | None:
        """``last_event`` as a dict (a mapping, a dataclass or an object with ``as_dict``)."""
        return last_event(self.compactor)

    @property
    def profiles(self) -> set[str]:
        return set(getattr(self.compactor, "profiles", None) or {"core"})


def _plain(changes: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in changes.items() if isinstance(v, (str, int, float, bool, type(None)))}


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
        self.observed = Observations()
        self.current: str | None = None
        """The clause whose test is running (set by the plugin)."""
        self.current_test: str | None = None
        self.last_case: dict[str, Any] | None = None
        self._calls_summarizer: bool | None = None
        try:
            first = self._first()
            self.capabilities: Capabilities = declared(first.compactor)
            self.format: formats.WireFormat = formats.get(self.capabilities.wire_format)
        except CapabilityError as error:
            self.server.stop()
            raise StartupFailed(f"{target.spec}: {error}") from error
        except BaseException:
            self.server.stop()
            raise
        self.claimed = first.profiles
        self.unknown_profiles = sorted(self.claimed - set(PROFILES))
        self.requested = set(requested) if requested else None
        ACTIVE[:] = [self]
        CHECKED[:] = [self._checked]

    def _checked(self, clause_id: str, history: Any) -> None:
        if clauses()[clause_id].exercised_by_check and history is not None:
            self.exercise(clause_id, history)

    def new(self, **changes: Any) -> Subject:
        """A fresh compactor from the factory, with ``changes`` applied to the settings."""
        settings = self.settings.with_(**changes) if changes else self.settings
        if "summarizer_timeout" in changes:
            settings = connected(settings, self.server.base_url)
        return Subject(self.target.factory(settings), self, changes)

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
        return Subject(build(self.target, self.settings))

    # what every call shows

    def judge(self, history: Any, out: Any, case: dict[str, Any], key: str) -> None:
        """Judge one output for the structural clauses of the target's wire format (CORE-1..4
        and CORE-6 for chat-completions, RESP-1..7, ANTH-1..5) and count what it exercised
        (``key`` is ``history`` as sorted JSON; ``history`` is the case's copy, which nothing
        else changes)."""
        changed = json.dumps(out, sort_keys=True, default=str) != key
        self.calls += 1
        self.compacted += changed
        problems = self.format.structural(history, out)
        if self.capabilities.system_outside:
            problems.pop("CORE-3", None)
        for clause_id, problem in problems.items():
            if problem is not None:
                self.find(clause_id, problem, history, out, case)
        if changed:
            digest = hashlib.sha1(key.encode()).hexdigest()
            for clause_id in {*self.format.judged, *([self.current] if self.current else [])}:
                self.observed.exercise(clause_id, digest)

    def find(self, clause_id: str, reason: str, history: Any, output: Any, case: dict[str, Any] | None) -> None:
        self.observed.find(clause_id, Finding(reason, history, output, case, self.current_test))

    def exercise(self, clause_id: str, history: Any) -> None:
        """Count ``history`` as an example that exercised ``clause_id`` without a compaction
        (clauses whose point is that nothing changes: TRIG-1, TRIG-5, CORE-9)."""
        self.observed.exercise(clause_id, hashlib.sha1(json.dumps(history, sort_keys=True, default=str).encode()).hexdigest())

    @property
    def summarizer_probed(self) -> bool | None:
        """`calls_summarizer` if it was probed in this run, else None (the report's ``calls_summarizer``)."""
        return self._calls_summarizer

    @property
    def calls_summarizer(self) -> bool:
        """Whether the target asks the suite's summarizer when it compacts (probed once, on a
        fixed history with both triggers firing); decides who gets the fault sweep (SPEC CORE-11)."""
        if self._calls_summarizer is None:
            self.server.reset()
            subject = Subject(self.target.factory(self.settings.with_(max_context_tokens=1)))
            try:
                subject.compact(self.format.from_chat(probe_history(self.capabilities)), self.settings.threshold_iterations)
            except Exception:  # noqa: BLE001 - a crash here is judged by the tests, not the probe
                pass
            self._calls_summarizer = bool(self.server.requests)
            self.server.reset()
        return self._calls_summarizer

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
        ACTIVE[:] = [s for s in ACTIVE if s is not self]
        CHECKED[:] = [listener for listener in CHECKED if listener != self._checked]
        self.server.stop()
        self.target.close()


def probe_history(capabilities: Capabilities, rounds: int = 12) -> list[dict]:
    """A fixed agent history with something to compact: a system prompt (unless declared
    outside), then user turns, tool rounds creating entities, and replies."""
    messages: list[dict] = [] if capabilities.system_outside else [{"role": "system", "content": "You are a coding agent."}]
    for n in range(1, rounds + 1):
        call = {"id": f"call_probe_{n}", "type": "function", "function": {"name": "createEntity", "arguments": json.dumps({"title": f"item {n}"})}}
        messages += [
            {"role": "user", "content": f"Please create item {n} and tell me how the build went."},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call["id"], "content": json.dumps({"id": f"ent-{n:012x}", "title": f"item {n}"})},
            {"role": "assistant", "content": f"Created item {n}; the build log shows no error. " * 8},
        ]
    return messages


def declared_capabilities() -> Capabilities:
    """The running suite's declarations (defaults outside a run)."""
    return ACTIVE[0].capabilities if ACTIVE else Capabilities()


def start(spec: str | None, requested: list[str] | None) -> Suite:
    """Resolve ``spec`` and start a conformance session; `TargetError` or `StartupFailed` say why not."""
    from .target import resolve

    return Suite(resolve(spec), requested)
