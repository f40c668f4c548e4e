"""Replay a recorded trace through a compactor as an agent loop would (benchmarks issue: replay harness).

The trace's rounds (SPEC ROUND-1) arrive one at a time. Each assistant round is the answer of
one model call, so before it (from the second call on) the harness does what seed 000's agent
loop does at its COMPACTION POINT: it calls ``compact(context, iteration=n)``, where ``n >= 1``
is the number of model calls made so far, and sends what comes back to the "model", i.e. it
measures that context.
Then the assistant round (the call's answer and the tool results) is appended. Rounds of other
kinds (user turns) are appended without a call. Compaction is therefore asked for at every round
boundary that precedes a model call, the only boundaries where it changes what a call costs.

Per model call the harness records the exact input tokens (`compaction_suite.reference.tokens.ExactTokens`,
o200k_base, chat overhead included), the tokens the provider's prompt cache would serve
(`compaction_suite.benchmarks.prices`), the output tokens (the assistant message the trace says the model
wrote), whether a compaction happened just before, and what the context still holds of the
trace's entity ids, latest task list and planted facts. After every compaction it checks the
structural clauses CORE-1..CORE-4 and CORE-6 on the result (`compaction_suite.conformance.oracle`) and keeps
any violation. The compactor may be anything the conformance contract accepts (a plain or
``async`` ``compact``); if it has ``observe_usage`` (the reference does) it is told each call's
exact input tokens, as a real loop tells it the response's ``usage.prompt_tokens``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from compaction_suite.conformance import formats, oracle
from compaction_suite.conformance.entities import CODING_AGENT_TASK_LISTS, IdRule, TaskListTools, entity_ids, latest_task_titles
from compaction_suite.conformance.target import call_compact, last_event_json
from compaction_suite.reference.tokens import ExactTokens

from .across_formats import Bridged, NotFaithful, for_replay
from .cache import CacheUse, Meter
from .prices import DEFAULT_PRICINGS, Pricing, cached_tokens
from .probes import Probes
from .views import Round as UnitRound
from .views import Unit, View, unit_tokens

ASSISTANT_KINDS = ("assistant", "tool_calls")
FORMAT_FREE = "any"
"""The format reported for a compactor that returns what it gets, whatever its shape (the baseline)."""


@dataclass
class Call:
    """One model call of the replayed run."""

    iteration: int
    """1-based: the n-th model call."""
    messages: int
    input_tokens: int
    cached_tokens: int
    """Tokens OpenAI's automatic cache would serve (its rule, `cache.openai_read`)."""
    output_tokens: int
    compacted: bool
    """A compaction changed the context just before this call."""
    entity_ids: float | None
    """Share of the entity ids created so far that the context still mentions (None: none yet)."""
    task_list: bool | None
    """Every title of the latest task list so far is in the context (None: no task list yet)."""
    facts: float | None
    """Share of the facts planted so far that the context still holds (None: none planted yet)."""
    probes: float | None = None
    """Share of the probes met so far (`probes.Probes`: ids, paths, the last error, task status,
    constraints) the context still holds (None: none met yet)."""
    cache: dict[str, CacheUse] = field(default_factory=dict)
    """What each priced provider's cache reads and writes on this call (`cache.Meter`), by pricing label."""


@dataclass
class Run:
    """A whole replay: every call, the compactions and what they cost and lost."""

    trace: str
    compactor: str
    trace_format: str = formats.CHAT
    compactor_format: str = formats.CHAT
    calls: list[Call] = field(default_factory=list)
    summarizer_prompt_tokens: int = 0
    summarizer_completion_tokens: int = 0
    violations: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    """Exceptions ``compact`` raised (the harness then goes on with the uncompacted context)."""
    not_comparable: list[str] = field(default_factory=list)
    """Compaction points with no faithful mapping between the trace's format and the compactor's
    (``"call n: reason"``): nothing was measured there, so the run's figures read n/a."""

    entity_ids_tracked: int = 0
    """How many entity ids the trace introduced (0: the id figures are n/a)."""
    pricings: tuple[Pricing, ...] = DEFAULT_PRICINGS
    """The bills the run is priced in (the first one gives ``cost_usd_*``)."""
    probes: dict[str, Any] = field(default_factory=dict)
    """Per probe kind: how many the trace introduced, the smallest share kept, the share kept at the end."""

    @property
    def comparable(self) -> bool:
        """Every compaction point was measured (no point without a faithful mapping)."""
        return not self.not_comparable

    @property
    def compactions(self) -> int:
        return sum(call.compacted for call in self.calls)

    @property
    def cumulative_input_tokens(self) -> int:
        return sum(call.input_tokens for call in self.calls)

    @property
    def peak_context_tokens(self) -> int:
        return max((call.input_tokens for call in self.calls), default=0)

    def cost(self, *, cache: bool, pricing: Pricing | None = None) -> float:
        """USD for the agent's calls plus the summarizer's (never cached), with or without the
        prompt cache, in ``pricing`` (default: the run's first)."""
        pricing = pricing or self.pricings[0]
        price = pricing.agent.price
        agent = 0.0
        for c in self.calls:
            use = c.cache.get(pricing.label, CacheUse(0, 0)) if cache else CacheUse(0, 0)
            agent += price.cost(c.input_tokens, use.read, c.output_tokens, use.written)
        summarizer = pricing.summarizer.price.cost(self.summarizer_prompt_tokens, 0, self.summarizer_completion_tokens)
        return agent + summarizer

    def costs(self) -> dict[str, dict[str, Any]]:
        """Each pricing's bill, without and with the cache, and the tokens its cache read and wrote."""
        return {
            p.label: {
                "provider": p.provider, "agent_model": p.agent.name, "summarizer_model": p.summarizer.name,
                "cost_usd_no_cache": usd(self.cost(cache=False, pricing=p)),
                "cost_usd_with_cache": usd(self.cost(cache=True, pricing=p)),
                "cache_read_tokens": sum(c.cache[p.label].read for c in self.calls if p.label in c.cache),
                "cache_written_tokens": sum(c.cache[p.label].written for c in self.calls if p.label in c.cache),
            }
            for p in self.pricings
        }  # fmt: skip

    def summary(self) -> dict[str, Any]:
        """The run's headline figures, JSON-ready."""
        return {
            "trace": self.trace,
            "compactor": self.compactor,
            "trace_format": self.trace_format,
            "compactor_format": self.compactor_format,
            "not_comparable": len(self.not_comparable),
            "not_comparable_reasons": self.not_comparable,
            "model_calls": len(self.calls),
            "compactions": self.compactions,
            "cumulative_input_tokens": self.cumulative_input_tokens,
            "cumulative_cached_tokens": sum(c.cached_tokens for c in self.calls),
            "peak_context_tokens": self.peak_context_tokens,
            "output_tokens": sum(c.output_tokens for c in self.calls),
            "summarizer_prompt_tokens": self.summarizer_prompt_tokens,
            "summarizer_completion_tokens": self.summarizer_completion_tokens,
            "cost_usd_no_cache": usd(self.cost(cache=False)),
            "cost_usd_with_cache": usd(self.cost(cache=True)),
            "costs": self.costs(),
            "min_entity_id_retention": worst(c.entity_ids for c in self.calls),
            "entity_ids_tracked": self.entity_ids_tracked,
            "task_list_always_kept": worst(c.task_list for c in self.calls),
            "min_fact_retention": worst(c.facts for c in self.calls),
            "final_fact_retention": self.calls[-1].facts if self.calls else None,
            "min_probe_retention": worst(c.probes for c in self.calls),
            "probes": self.probes,
            "violations": self.violations,
            "errors": self.errors,
        }


class _Tokens:
    """Exact o200k_base counts, each message counted once however often it is sent."""

    def __init__(self, view: View | None = None) -> None:
        self._exact = ExactTokens("o200k_base")
        self._view = view or View(formats.CHAT)
        self._memo: dict[int, tuple[Unit, int]] = {}

    def message(self, message: Unit) -> int:
        """A message's (a unit's) tokens; `views.unit_tokens` for a trace in another format."""
        held = self._memo.get(id(message))
        if held is None or held[0] is not message:
            held = (message, unit_tokens(self._view, message, self._exact))
            self._memo[id(message)] = held  # holding the message keeps its id from being reused
        return held[1]

    def prompt(self, messages: Sequence[Unit]) -> int:
        return self.total(sum(map(self.message, messages)), len(messages))

    def total(self, units: int, messages: int) -> int:
        """The prompt's tokens for ``messages`` messages whose own tokens sum to ``units``."""
        return self._exact.total(units, messages)


class _Memory:
    """What the trace has introduced so far: entity ids, the latest task list, planted facts."""

    def __init__(self, facts: Sequence[str], id_rule: IdRule | None, task_lists: TaskListTools, view: View) -> None:
        self.id_rule, self.task_lists, self.view = id_rule, task_lists, view
        self.ids: list[str] = []
        self.tasks: list[str] = []
        self.has_tasks = False
        self.facts: list[str] = []
        self._unplanted = list(facts)
        self.probes = Probes(id_rule, task_lists)

    def learn(self, round_: UnitRound) -> None:
        messages = self.view.chat_messages(round_.units)
        self.probes.learn(messages)
        self.ids += [i for i in entity_ids(messages, self.id_rule) if i not in self.ids]
        tasks = latest_task_titles(messages, self.task_lists)
        if tasks is not None:
            self.tasks, self.has_tasks = tasks, True
        text = self.view.text(round_.units)
        planted = [f for f in self._unplanted if f in text]
        self.facts += planted
        self._unplanted = [f for f in self._unplanted if f not in planted]

    def retention(self, text: str) -> tuple[float | None, bool | None, float | None]:
        """(share of ids, whole task list, share of facts) found in ``text``; None for what
        the trace has not introduced yet, so a figure never reads 100% of nothing."""
        return (
            _share(self.ids, lambda i: oracle.mentions(text, i)),
            all(title in text for title in self.tasks) if self.has_tasks else None,
            _share(self.facts, lambda fact: fact in text),
        )


def _share(items: Sequence[str], found: Callable[[str], bool]) -> float | None:
    return sum(map(found, items)) / len(items) if items else None


def usd(cost: float) -> float:
    """A bill as the reports give it: to a millionth of a dollar. One rounding for every bill (a
    run's and a ceiling's), so that a ceiling that never compacts costs exactly what the baseline
    does, and its cut is 0, not a rounding's remainder."""
    return round(cost, 6)


def worst(values: Iterable[Any]) -> Any:
    """The smallest of the values that are not None, or None when all are (``n/a``)."""
    present = [v for v in values if v is not None]
    return min(present) if present else None


def common_prefix(a: Sequence[Unit], b: Sequence[Unit]) -> int:
    """How many messages ``a`` and ``b`` start with in common."""
    n = 0
    for x, y in zip(a, b):
        if x is not y and x != y:
            break
        n += 1
    return n


def replay(
    messages: Any,
    compactor: Any,
    *,
    trace: str = "trace",
    name: str = "compactor",
    facts: Sequence[str] = (),
    on_call: Callable[[], None] | None = None,
    id_rule: IdRule | None = None,
    task_lists: TaskListTools = CODING_AGENT_TASK_LISTS,
    trace_format: str = formats.CHAT,
    pricings: Sequence[Pricing] = DEFAULT_PRICINGS,
) -> Run:
    """Replay ``messages`` (a complete history in ``trace_format``) through ``compactor``; see
    the module docstring.

    A compactor of another wire format gets each context through the faithful conversion
    (`across_formats.Bridged`); a compaction point with none is counted in ``not_comparable``
    and the context goes on uncompacted (a compactor that returns what it gets, whatever its
    shape, sets ``format_free``: the baseline). ``id_rule`` and ``task_lists`` say which entity
    ids and task list the retention figures track (SPEC ENT-1, ENT-2; by default every
    identifier-like key and the task-list presets). ``pricings`` are the bills each call's cache
    use is measured for (`cache.Meter`).
    """
    view = View(trace_format)
    format_free = getattr(compactor, "format_free", False)
    own_format = FORMAT_FREE if format_free else formats.declared(compactor)
    if not format_free and own_format != trace_format:
        compactor = for_replay(compactor, trace_format)  # converted only where faithful
    run, tokens, memory = Run(trace, name, trace_format, own_format), _Tokens(view), _Memory(facts, id_rule, task_lists, view)
    run.pricings, meter = tuple(pricings), Meter(tuple(pricings))
    context: list[Unit] = []
    previous: list[Unit] = []
    text = ""
    for round_ in view.rounds(messages):
        if round_.kind in ASSISTANT_KINDS:
            before = context
            if run.calls:  # a compaction point follows a completed iteration
                context, text = _compaction_point(run, compactor, view, context, text)
            run.calls.append(_call(len(run.calls) + 1, context, previous, round_, context is not before, tokens, memory, text, meter))
            _observe(compactor, run.calls[-1].input_tokens)
            previous = context
            if on_call is not None:
                on_call()
        memory.learn(round_)
        run.entity_ids_tracked = len(memory.ids)
        context = context + list(round_.units)
        text += "\n" + view.text(round_.units)
    run.probes = {"tracked": memory.probes.counts(), "min": memory.probes.worst, "final": memory.probes.kept_now()}
    return run


SUMMARY_TOKENS = 150
"""The ideal compactor's summary: a fixed 150 tokens, message framing included (the issue's ceiling)."""


def ceilings(messages: Any, keep_rounds: Sequence[int], trace_format: str = formats.CHAT) -> dict[str, int]:
    """Cumulative input tokens of two compactors no strategy can beat, on the replay's schedule.

    ``ceiling K=k``: at every compaction point the context is the system messages, a
    ``SUMMARY_TOKENS`` summary (when more than ``k`` other rounds exist) and the last ``k``
    non-system rounds verbatim, with no summarizer cost: what an ideal compactor keeping
    ``k`` rounds sends. ``physical limit``: the system messages alone. The first call, before
    any compaction point, sends the whole context in both, as in every replay.
    """
    view = View(trace_format)
    tokens = _Tokens(view)
    system: list[Unit] = []
    others: list[tuple[int, int]] = []  # (token units, messages) of each non-system round so far
    totals = {**{f"ceiling K={k}": 0 for k in keep_rounds}, "physical limit": 0}
    context: list[Unit] = []
    calls = 0
    for round_ in view.rounds(messages):
        if round_.kind in ASSISTANT_KINDS:
            calls += 1
            if calls == 1:
                for key in totals:
                    totals[key] += tokens.prompt(context)
            else:
                for k in keep_rounds:
                    totals[f"ceiling K={k}"] += _ideal(tokens, system, others, k)
                totals["physical limit"] += tokens.prompt(system)
        if round_.kind == "system":
            system.append(round_.units[0])
        else:
            others.append((sum(map(tokens.message, round_.units)), len(round_.units)))
        context += round_.units
    return totals


def _ideal(tokens: _Tokens, system: list[Unit], others: list[tuple[int, int]], k: int) -> int:
    tail = others[-k:] if k else []
    units = sum(map(tokens.message, system)) + sum(u for u, _ in tail)
    count = len(system) + sum(n for _, n in tail)
    summary = SUMMARY_TOKENS if len(others) > k else 0
    return tokens.total(units, count) + summary


def _compaction_point(run: Run, compactor: Any, view: View, context: list[Unit], text: str) -> tuple[list[Unit], str]:
    """Ask for a compaction; keep the event's summarizer usage and any clause violation; a point
    with no faithful mapping to the compactor's format is counted as not comparable."""
    iteration = len(run.calls)
    try:
        out = call_compact(compactor, view.history(context), iteration)
    except NotFaithful as reason:  # raised by a Bridged compactor only: judged in its own format all the same
        run.violations += [f"call {iteration + 1}: {v}" for v in compactor.violations()]
        run.not_comparable.append(f"call {iteration + 1}: {reason}")
        return context, text
    except Exception as error:  # noqa: BLE001 - a benchmark reports a crashing compactor, it does not stop
        run.errors.append(f"call {iteration + 1}: {type(error).__name__}: {error}")
        return context, text
    if out == view.history(context):
        return context, text
    event = last_event_json(compactor) or {}
    run.summarizer_prompt_tokens += event.get("summarizer_prompt_tokens") or 0
    run.summarizer_completion_tokens += event.get("summarizer_completion_tokens") or 0
    judged = compactor.violations() if isinstance(compactor, Bridged) else view.violations(context, out)  # SPEC XFMT-6
    run.violations += [f"call {iteration + 1}: {v}" for v in judged]
    try:
        units = view.units(out)
    except (AttributeError, TypeError) as error:  # not the format's shape: CORE-6 or its peer says so
        run.errors.append(f"call {iteration + 1}: output not in {view.wire_format} shape: {error}")
        return context, text
    return units, view.text(units)


def _call(
    iteration: int,
    context: list[Unit],
    previous: list[Unit],
    answer: UnitRound,
    compacted: bool,
    tokens: _Tokens,
    memory: _Memory,
    text: str,
    meter: Meter,
) -> Call:
    shared = common_prefix(context, previous)
    prefix_tokens = sum(map(tokens.message, context[:shared])) if shared else 0
    ids, tasks, facts = memory.retention(text)
    return Call(
        iteration=iteration,
        messages=len(context),
        input_tokens=tokens.prompt(context),
        cached_tokens=cached_tokens(prefix_tokens),
        output_tokens=sum(map(tokens.message, answer.units[: answer.answer])),
        compacted=compacted,
        entity_ids=ids,
        task_list=tasks,
        facts=facts,
        probes=memory.probes.check(text, compacted),
        cache=meter.use(context, shared, tokens.message),
    )


def _observe(compactor: Any, prompt_tokens: int) -> None:
    """Report the call's input tokens as ``usage.prompt_tokens``, if the compactor listens (EVENT-2)."""
    observe = getattr(compactor, "observe_usage", None)
    if callable(observe):
        observe(prompt_tokens)
