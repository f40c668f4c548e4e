"""The session object the conformance tests talk to: target, settings, summarizer.

Tests never build a compactor themselves: ``suite.new()`` calls the factory
afresh, so no state leaks between Hypothesis examples, and `Subject` hides
whether the compactor is sync, async or another process.

Every ``compact`` call goes through `Subject.compact`, which is also where the suite
watches what no single test owns (SPEC Part A, "Every output"): each output is judged for the
clauses judged on every output of the target's format (`clauses.every_output`: the format's
structural clauses and CORE-12, CORE-14, CORE-16, CORE-17), the summarizer requests the call made
for CORE-13, an exception escaping a valid history is a crash (CORE-10), each call is kept as the
case that replays it, and each compaction counts as an example that exercised the clause under
test.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from . import formats, judges, oracle
from .assertions import CHECKED
from .capabilities import Capabilities, CapabilityError, declared
from .clauses import PROFILES, clauses, crash_clause, fault_clauses
from .settings import Settings, connected
from .summarizer_server import Exchange, SummarizerServer
from .target import StartupFailed, Target, build, call_compact, last_event
from .target import first_line as _first_line
from .violation import Reasons, crash, message, reason_id

PROBE_ROUNDS = (12, 24, 48, 96, 192, 384)
"""The sizes of the fixed history the summarizer probe tries, growing until the target asks its
summarizer (a target with a trigger of its own, such as 2,000 tokens, needs more than 12 rounds)
or compacts without asking it (SPEC CORE-10/CORE-11 Decision: summarizer reach)."""

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
    reason_id: str = "unclassified"


@dataclass
class Observations:
    """What the suite saw across all tests: per clause, the examples that exercised it and
    the smallest violation found outside the clause's own tests."""

    exercised: dict[str, set[str]] = field(default_factory=dict)
    findings: dict[str, Finding] = field(default_factory=dict)
    seen_in: dict[str, dict[str, Reasons]] = field(default_factory=dict)
    """Per clause, every test a violation was found in, with every distinct reason (and its reason
    id) found there (the report lists them all; the smallest finding alone hides the others)."""
    reached: dict[str, set[str]] = field(default_factory=dict)
    """Per fault clause (CORE-10, CORE-11), the examples whose summarizer fault reached the
    summarizer: what exercises them for a target that summarizes (SPEC CORE-11 Decision)."""

    def exercise(self, clause_id: str, key: str) -> None:
        self.exercised.setdefault(clause_id, set()).add(key)

    def reach(self, clause_id: str, key: str) -> None:
        self.reached.setdefault(clause_id, set()).add(key)

    def find(self, clause_id: str, finding: Finding) -> None:
        self.seen_in.setdefault(clause_id, {}).setdefault(finding.test or "another test", Reasons()).add(finding.reason_id, finding.reason)
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
        start = len(self.suite.server.exchanges) if self.suite is not None else 0
        try:
            result = call_compact(self.compactor, messages, iteration)
        except ImplementationSkipped as skipped:
            pytest.skip(f"the implementation skipped this case: {skipped}")
        except ProtocolError:
            raise
        except ValueError as error:
            self._asked(case, start)
            in_flight = self.suite.format.in_flight if self.suite is not None else oracle.in_flight
            if not in_flight(json.loads(snapshot)):
                self._crashed(snapshot, case, error, "rejected a complete, valid history with ")
            raise
        except Exception as error:
            self._asked(case, start)
            self._crashed(snapshot, case, error)
            raise
        if self.suite is not None:
            self.suite.judge(case["messages"], result, case, snapshot, self._asked(case, start))
        return result

    def _asked(self, case: dict[str, Any], start: int) -> list[Exchange]:
        """The summarizer requests this call made (judged for CORE-13 whatever the call did)."""
        if self.suite is None:
            return []
        exchanges = self.suite.server.exchanges[start:]
        self.suite.judge_requests(case, exchanges)
        return exchanges

    def _case(self, snapshot: str, iteration: int) -> dict[str, Any]:
        """What replays this call: the history, the iteration, the changed settings, the summarizer's mode."""
        summarizer = self.suite.server.mode() if self.suite is not None else None
        case = {"messages": json.loads(snapshot), "iteration": iteration, "settings": _plain(self.changes), "summarizer": summarizer}
        if self.suite is not None:
            self.suite.last_case = case
        return case

    def _crashed(self, snapshot: str, case: dict[str, Any], error: BaseException, how: str = "") -> None:
        if self.suite is not None:
            fault = (case.get("summarizer") or {}).get("fault")
            under = f" under summarizer fault {fault}" if fault else ""
            reason = f"compact {how or 'raised '}{type(error).__name__}{under}: {message(error)}"
            self.suite.find(crash_clause(), reason, json.loads(snapshot), None, case, crash(error))

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
        self.summarizer_seen = False
        """Whether any call of this run asked the suite's summarizer (the target summarizes)."""
        self.trigger_rounds: int | None = None
        """The size of the probe history at which the target first asked its summarizer."""
        self.summarizer_apis: set[str] = set()
        """The APIs the target asked its summarizer through (``chat``, ``responses``, ``compact``, ``anthropic``)."""
        self.server_side_only = False
        """Whether every summary the probe saw was a server-side compaction (`Exchange.server_side`)."""
        self.pending: list[Finding] = []
        """CORE-12 findings on calls that asked no summarizer, kept until the run shows whether the
        target summarizes at all (a target that never does writes no summaries to judge)."""
        try:
            first = self._first()
            self.capabilities: Capabilities = declared(first.compactor)
            self.format: formats.WireFormat = formats.get(self.capabilities.wire_format)
            self.server.answer_as(self.capabilities.summarizer_providers)
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

    def judge(self, history: Any, out: Any, case: dict[str, Any], key: str, exchanges: list[Exchange] | None = None) -> None:
        """Judge one output for the clauses judged on every output of the target's wire format
        (its structural clauses, CORE-12, CORE-14, CORE-16, CORE-17) and count what it exercised
        (``key`` is ``history`` as sorted JSON; ``history`` is the case's copy, which nothing
        else changes; ``exchanges`` the summarizer requests the call made)."""
        exchanges = exchanges or []
        changed = json.dumps(out, sort_keys=True, default=str) != key
        self.calls += 1
        self.compacted += changed
        problems = {**self.format.structural(history, out), **judges.every_output(self.format, history, out, exchanges, self.capabilities.providers)}
        for clause_id in self.capabilities.waived():
            problems.pop(clause_id, None)
        for clause_id, problem in problems.items():
            if problem is not None:
                self.find(clause_id, problem, history, out, case)
        self._judge_answers(history, out, case, exchanges)
        if changed:
            digest = hashlib.sha1(key.encode()).hexdigest()
            for clause_id in {*self.format.judged, *([self.current] if self.current else [])}:
                self.observed.exercise(clause_id, digest)

    def judge_requests(self, case: dict[str, Any], exchanges: list[Exchange]) -> None:
        """CORE-13 and SUM-6 on the summarizer requests one call made, whatever the call returned or raised."""
        if not exchanges:
            return
        self.summarizer_seen = True
        self.observed.exercise(judges.ACCEPTED, hashlib.sha1(json.dumps(case["messages"], sort_keys=True, default=str).encode()).hexdigest())
        problem = judges.requests_accepted(exchanges)
        if problem is not None:
            self.find(judges.ACCEPTED, problem, case["messages"], None, case)
        if judges.inline_media(case["messages"]):
            self.observed.exercise(judges.MEDIA_AS_MEDIA, hashlib.sha1(json.dumps(case["messages"], sort_keys=True, default=str).encode()).hexdigest())
            problem = judges.media_as_text(case["messages"], exchanges)
            if problem is not None:
                self.find(judges.MEDIA_AS_MEDIA, problem, case["messages"], None, case)

    def _judge_answers(self, history: Any, out: Any, case: dict[str, Any], exchanges: list[Exchange]) -> None:
        """CORE-12 on one output, unless a persistent summarizer fault made the call fail (CORE-11's
        to judge); a finding on a call that asked no summarizer waits until the run shows the
        target summarizes (`settle`)."""
        mode = case.get("summarizer") or {}
        if mode.get("fault") and mode.get("times") is None:
            return
        problem = judges.summary_stands_for_answer(self.format, history, out, exchanges)
        if problem is None:
            return
        finding = Finding(problem, history, out, case, self.current_test, reason_id(problem, "unclassified"))
        if exchanges or self.summarizer_seen:
            self.observed.find(judges.ANSWERED, finding)
        else:
            self.pending.append(finding)

    def settle(self) -> None:
        """Before the report: the CORE-12 findings kept pending count if the target summarizes."""
        if self.summarizer_seen or self._calls_summarizer:
            for finding in self.pending:
                self.observed.find(judges.ANSWERED, finding)
        self.pending.clear()

    @property
    def summarizes(self) -> bool:
        """Whether the target asked the suite's summarizer in this run (probe included)."""
        return bool(self.summarizer_seen or self._calls_summarizer)

    @property
    def fault_swept(self) -> bool:
        """Whether the fault sweep reaches the target: it asked the suite's summarizer in this run, and not only
        through a provider's server-side compaction, which the test double does not fail (SPEC CORE-11 Decision:
        summarizer reach; Part A, Wire formats, Decision: server-side compaction)."""
        return self.summarizes and not self.server_side_only

    def reach(self, exchanges: list[Exchange], history: Any) -> None:
        """Count ``history`` as an example whose summarizer fault reached the summarizer (it
        exercises CORE-10 and CORE-11 for a target that summarizes) when the call asked it."""
        if exchanges and any(e.fault for e in exchanges):
            digest = hashlib.sha1(json.dumps(history, sort_keys=True, default=str).encode()).hexdigest()
            for clause_id in fault_clauses():
                self.observed.reach(clause_id, digest)

    def find(self, clause_id: str, reason: str, history: Any, output: Any, case: dict[str, Any] | None, reason_id_: str | None = None) -> None:
        found = reason_id_ or reason_id(reason, "unclassified")
        self.observed.find(clause_id, Finding(reason, history, output, case, self.current_test, found))

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
        """Whether the target asks the suite's summarizer when it compacts: probed once, on a fixed
        history with both triggers firing, grown (`PROBE_ROUNDS`) until the target asks its
        summarizer or compacts without asking it; decides who gets the fault sweep and how large
        its histories must be (SPEC CORE-11 Decision: summarizer reach)."""
        if self._calls_summarizer is None:
            self._calls_summarizer = False
            for rounds in PROBE_ROUNDS:
                asked, compacted = self._probe(rounds)
                if asked:
                    self._calls_summarizer, self.trigger_rounds = True, rounds
                if asked or compacted:
                    break
            self.server.reset()
        return self._calls_summarizer

    def _probe(self, rounds: int) -> tuple[bool, bool]:
        """Compact the probe history of ``rounds`` rounds: (asked the summarizer, compacted)."""
        self.server.reset()
        subject = Subject(self.target.factory(self.settings.with_(max_context_tokens=1)))
        history = self.format.from_chat(probe_history(self.capabilities, rounds))
        try:
            out = subject.compact(history, self.settings.threshold_iterations)
        except Exception:  # noqa: BLE001 - a crash here is judged by the tests, not the probe
            out = history
        exchanges = self.server.exchanges
        self.summarizer_apis |= {e.api for e in exchanges if not e.server_side}
        self.server_side_only = bool(exchanges) and all(e.server_side for e in exchanges) and not self.summarizer_apis
        return bool(exchanges), not oracle.same(out, history)

    def filler(self, rounds: int) -> list[dict]:
        """``rounds`` agent rounds in chat-completions form, ids of their own: what grows a drawn
        history to the target's summarizer trigger (`calls_summarizer`)."""
        return probe_history(self.capabilities, rounds, prefix="fill")[0 if self.capabilities.system_outside else 1 :]

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


def probe_history(capabilities: Capabilities, rounds: int = 12, prefix: str = "probe") -> list[dict]:
    """A fixed agent history with something to compact: a system prompt (unless declared
    outside), then user turns, tool rounds creating entities, and replies (call ids
    ``call_<prefix>_<n>``)."""
    messages: list[dict] = [] if capabilities.system_outside else [{"role": "system", "content": "You are a coding agent."}]
    for n in range(1, rounds + 1):
        call = {"id": f"call_{prefix}_{n}", "type": "function", "function": {"name": "createEntity", "arguments": json.dumps({"title": f"item {n}"})}}
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
