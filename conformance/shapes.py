"""The shapes where real compaction bugs live (issue 20), in every wire format the provider takes
them in: a labelled strategy that draws each one in every history (`drawn`), a test that says
whether a history has it (`has`), the share at which the general strategies draw it
(`measure`), and histories sized to a target's own trigger (`sized`).

The shapes (SPEC Part A, "Histories the suite draws", which gives each one's source and share):

- ``wide-round``: 6 to 16 parallel calls in one of the two newest rounds;
- ``mixed-results``: tool results both as plain text and as a list of text parts or blocks;
- ``non-adjacent-pair`` (Responses only): an item between a call and its output;
- ``long-tool-loop``: the only user turn first, then tool rounds only;
- ``newest-over-budget``: the newest round alone is larger than the suite's default budget;
- ``summary-chain``: two or three earlier summaries (``[Context Summary]`` messages, Responses
  ``compaction`` items);
- ``huge-result``: one tool result of 20,000 to 30,000 tokens in an older round;
- ``entity-burst``: three older rounds creating 24 to 36 entities (ENT-1 ids).

The general strategies (`conformance.histories.histories` and each format's) mix the
generator's shapes in (``shapes=None``); ``mixed-results`` comes from the real-traffic variants
(`agent_shaped`, `real_traffic`, each format's ``_as_sent``) and ``non-adjacent-pair`` from
`conformance.responses_histories`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from compaction_suite.text import chars_per_four

from . import anthropic_histories, formats, histories, oracle, responses_histories
from .entities import entity_ids
from .formats import anthropic, responses

GENERATED = histories.SHAPES
"""The shapes `conformance.histories.histories` draws itself (its ``shapes`` option)."""
ENTITY_BURST = histories.BURST_ROUNDS * histories.BURST_CALLS[0]
"""How many entity-creating results make an ``entity-burst`` (24: three rounds of at least eight)."""
WIDE = histories.WIDE_CALLS[0]


# --- reading a history in any format ------------------------------------------------------


def results(history: Any, fmt: formats.WireFormat) -> list[tuple[bool, str]]:
    """Each tool result as (structured: a list of parts or blocks rather than a string, its text)."""
    if fmt.name == formats.RESPONSES:
        found = [i.get("output") for i in history if responses.kind(i) in responses.ANSWERS]
    elif fmt.name == formats.ANTHROPIC:
        found = [b.get("content") for m in anthropic.messages_of(history) or [] for b in anthropic.blocks(m) if b.get("type") == "tool_result"]
    else:
        found = [m.get("content") for m in history if m.get("role") == "tool"]
    return [(isinstance(c, list), c if isinstance(c, str) else _parts_text(c)) for c in found]


def _parts_text(content: Any) -> str:
    return "\n".join(p["text"] for p in content or [] if isinstance(p, dict) and isinstance(p.get("text"), str))


def call_groups(history: Any, fmt: formats.WireFormat) -> list[tuple[int, int]]:
    """Each assistant turn's parallel calls as (its position, how many calls)."""
    if fmt.name == formats.ANTHROPIC:
        messages = anthropic.messages_of(history) or []
        return [(i, len(anthropic.tool_uses(m))) for i, m in enumerate(messages) if anthropic.tool_uses(m)]
    if fmt.name == formats.CHAT:
        return [(i, len(oracle.call_ids(m))) for i, m in enumerate(history) if oracle.call_ids(m)]
    groups: list[tuple[int, int]] = []
    for i, item in enumerate(history):
        if responses.kind(item) in responses.ANSWERED_BY:
            previous = responses.kind(history[i - 1]) if i else None
            if previous in responses.ANSWERED_BY:
                groups[-1] = (groups[-1][0], groups[-1][1] + 1)
            else:
                groups.append((i, 1))
    return groups


def user_turns(history: Any, fmt: formats.WireFormat) -> list[int]:
    """Where the person spoke: user messages that are neither an earlier summary, nor tool results
    (Anthropic), nor (Responses) a message sent while a tool ran or re-sent by the compact endpoint."""
    if fmt.name == formats.ANTHROPIC:
        messages = anthropic.messages_of(history) or []
        return [i for i, m in enumerate(messages) if m.get("role") == "user" and not anthropic.tool_results(m) and not anthropic.is_summary(m)]
    if fmt.name == formats.CHAT:
        return [i for i, m in enumerate(history) if m.get("role") == "user" and not oracle.is_summary(m)]
    found = []
    for i, item in enumerate(history):
        if responses.kind(item) != "message" or item.get("role") != "user" or responses.is_summary(item):
            continue
        if _parts_text(item.get("content")) in responses_histories.STEERS or _resent(history, i):
            continue
        found.append(i)
    return found


def _resent(items: Sequence[Any], i: int) -> bool:
    """Whether the user message at ``i`` is one the compact endpoint returned before its compaction item."""
    while i < len(items) and responses.kind(items[i]) == "message" and items[i].get("role") == "user":
        i += 1
    return i < len(items) and responses.kind(items[i]) == "compaction"


def _newest_round_tokens(history: Any, fmt: formats.WireFormat) -> int:
    rounds = fmt.rounds(history)
    if not rounds:
        return 0
    if fmt.name == formats.ANTHROPIC:
        return fmt.tokens({"messages": rounds[-1]})
    return chars_per_four(rounds[-1]) if fmt.name == formats.CHAT else fmt.tokens(rounds[-1])


def _non_adjacent(items: Any, fmt: formats.WireFormat) -> bool:
    """(Responses) an output whose call is separated from it by an item that is neither a call nor an output."""
    if fmt.name != formats.RESPONSES:
        return False
    called: dict[Any, int] = {}
    for i, item in enumerate(items):
        if responses.kind(item) in responses.ANSWERED_BY:
            called[item.get("call_id")] = i
        elif responses.kind(item) in responses.ANSWERS and item.get("call_id") in called:
            between = items[called[item.get("call_id")] + 1 : i]
            if any(responses.kind(b) not in (*responses.ANSWERED_BY, *responses.ANSWERS) for b in between):
                return True
    return False


def _long_tool_loop(history: Any, fmt: formats.WireFormat) -> bool:
    turns = user_turns(history, fmt)
    return len(turns) == 1 and sum(at > turns[0] for at, _ in call_groups(history, fmt)) >= 3


def _entity_results(history: Any, fmt: formats.WireFormat) -> int:
    """How many tool results carry an entity id (ENT-1)."""
    return sum(bool(entity_ids([{"role": "tool", "tool_call_id": "", "content": text}])) for _, text in results(history, fmt))


# --- the shapes ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    name: str
    wire_formats: tuple[str, ...]
    """The wire formats whose provider takes the shape."""
    detect: Callable[[Any, formats.WireFormat], bool]
    defaults: dict[str, Any]
    """Options of the forced strategy (`drawn`) a caller does not give."""


_EVERY = formats.NAMES
SHAPES: dict[str, Shape] = {
    s.name: s
    for s in (
        Shape("wide-round", _EVERY, lambda h, f: any(n >= WIDE for _, n in call_groups(h, f)), {"min_rounds": 4}),
        Shape("mixed-results", _EVERY, lambda h, f: len({structured for structured, _ in results(h, f)}) == 2, {"min_rounds": 4}),
        Shape("non-adjacent-pair", (formats.RESPONSES,), _non_adjacent, {"min_rounds": 4}),
        Shape("long-tool-loop", _EVERY, _long_tool_loop, {"min_rounds": 24, "max_rounds": 40}),
        Shape("newest-over-budget", _EVERY, lambda h, f: _newest_round_tokens(h, f) > histories.BUDGET_TOKENS, {"min_rounds": 3}),
        Shape("summary-chain", _EVERY, lambda h, f: sum(map(f.is_summary, _items(h, f))) >= 2, {"min_rounds": 3}),
        Shape("huge-result", _EVERY, lambda h, f: any(len(text) >= histories.HUGE_CHARS[0] for _, text in results(h, f)), {"min_rounds": 4}),
        Shape("entity-burst", _EVERY, lambda h, f: _entity_results(h, f) >= ENTITY_BURST, {"min_rounds": 6}),
    )
}
"""Every labelled shape, by name (a conformance test forcing one is marked ``shape(name)``)."""
REPRESENTATIONS = {
    "plain-results": lambda h, f: any(not structured for structured, _ in results(h, f)),
    "structured-results": lambda h, f: any(structured for structured, _ in results(h, f)),
}
"""Each native result representation apart (``mixed-results`` has both in one history)."""


def _items(history: Any, fmt: formats.WireFormat) -> list[Any]:
    return (anthropic.messages_of(history) or []) if fmt.name == formats.ANTHROPIC else list(history)


def has(name: str, history: Any, wire_format: str = formats.CHAT) -> bool:
    """Whether ``history`` (in ``wire_format``) has the shape ``name`` (or a `REPRESENTATIONS` one)."""
    detect = SHAPES[name].detect if name in SHAPES else REPRESENTATIONS[name]
    return detect(history, formats.get(wire_format))


def format_histories(wire_format: str) -> Callable[..., SearchStrategy[Any]]:
    """The general strategy of ``wire_format`` (keyword options as `conformance.histories.histories`)."""
    strategies: dict[str, Callable[..., SearchStrategy[Any]]] = {
        formats.CHAT: histories.histories,
        formats.RESPONSES: responses_histories.histories,
        formats.ANTHROPIC: anthropic_histories.histories,
    }
    return strategies[wire_format]


def drawn(name: str, wire_format: str = formats.CHAT, **options: Any) -> SearchStrategy[Any]:
    """Histories in ``wire_format`` that all have the shape ``name``: what a test forcing it draws
    (`Shape.defaults` fill the options not given: a ``long-tool-loop`` has 24 to 40 rounds)."""
    shape = SHAPES[name]
    if wire_format not in shape.wire_formats:
        raise ValueError(f"the {wire_format} provider does not take the shape {name!r} (only {', '.join(shape.wire_formats)})")
    options = {**shape.defaults, **options}
    options["max_rounds"] = max(options.get("max_rounds", 10), options["min_rounds"])
    fmt, draw = formats.get(wire_format), format_histories(wire_format)
    if name in GENERATED:
        return draw(shapes=(name,), **options)
    if name == "non-adjacent-pair":
        return draw(interleaved=True, **options).filter(lambda h: _non_adjacent(h, fmt))
    return draw(**options).filter(lambda h: len(results(h, fmt)) >= 2).flatmap(lambda h: _both_kinds(h, fmt))


@st.composite
def _both_kinds(draw: st.DrawFn, history: Any, fmt: formats.WireFormat) -> Any:
    """``history`` (at least two tool results) with each result as plain text or as parts (chat
    text parts, Responses ``input_text`` parts, Anthropic text blocks), both kinds present."""
    count = len(results(history, fmt))
    kinds = [draw(st.booleans()) for _ in range(count)]
    if len(set(kinds)) == 1:
        kinds[draw(st.integers(0, count - 1))] = not kinds[0]
    out = json.loads(json.dumps(history))
    for block, structured in zip(_result_holders(out, fmt), kinds):
        key = "output" if fmt.name == formats.RESPONSES else "content"
        text = block[key] if isinstance(block[key], str) else _parts_text(block[key])
        part = {"type": "input_text" if fmt.name == formats.RESPONSES else "text", "text": text}
        block[key] = [part] if structured else text
    return out


def _result_holders(history: Any, fmt: formats.WireFormat) -> list[dict[str, Any]]:
    """The dicts holding each tool result's content (in the order of `results`)."""
    if fmt.name == formats.RESPONSES:
        return [i for i in history if responses.kind(i) in responses.ANSWERS]
    if fmt.name == formats.ANTHROPIC:
        return [b for m in history["messages"] if isinstance(m.get("content"), list) for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    return [m for m in history if m.get("role") == "tool"]


def sized(wire_format: str = formats.CHAT, *, tokens: int = 0, messages: int = 0, rounds: int = 0, **options: Any) -> SearchStrategy[Any]:
    """Histories in ``wire_format`` at least ``tokens`` tokens (the format's chars/4 over what the
    model reads, SPEC TOK-1: `WireFormat.tokens`), ``messages`` items long (`WireFormat.length`)
    and ``rounds`` rounds (ROUND-1: `WireFormat.rounds`) long, so a target whose trigger reads any
    of them really compacts (SPEC Part A, "Histories the suite draws"; agreed interface 5: the
    fault tests size their histories with it to a summarizing target's own trigger).

    Filler tool rounds of plain text are inserted after the first round (`histories.padded`), so
    the tail a compactor keeps is as drawn; ``options`` are the format's strategy's. A target that
    keeps its system prompt outside the list sees that much less: ask for its size beside it."""
    fmt = formats.get(wire_format)
    least = max(rounds, options.pop("min_rounds", 0))
    options["max_rounds"] = max(options.get("max_rounds", 10), least)
    drawn_ = format_histories(wire_format)(min_rounds=least, min_tokens=tokens, min_messages=messages, **options)
    return drawn_.filter(lambda h: fmt.tokens(h) >= tokens and fmt.length(h) >= messages and len(fmt.rounds(h)) >= rounds)


# --- measuring the shares --------------------------------------------------------------------


def general(wire_format: str) -> SearchStrategy[Any]:
    """What most conformance tests draw in ``wire_format``: the CORE tests' mix of agent-shaped and
    real-traffic chat histories, or the format's own strategy."""
    if wire_format == formats.CHAT:
        return histories.agent_shaped(histories.histories()) | histories.real_traffic()
    return format_histories(wire_format)()


def measure(strategy: SearchStrategy[Any], wire_format: str, *, examples: int, runs: int) -> dict[str, tuple[float, float]]:
    """Per shape of ``wire_format`` (and per result representation): (the share of examples that
    have it, the share of runs that met it at least once), over ``runs`` runs of ``examples``
    examples as one conformance test draws them (Hypothesis' generate phase, one seed per run,
    as each derandomized test has its own)."""
    fmt = formats.get(wire_format)
    detectors = {n: s.detect for n, s in SHAPES.items() if wire_format in s.wire_formats} | REPRESENTATIONS
    per_run = [_shapes_seen(strategy, lambda h: {n for n, d in detectors.items() if d(h, fmt)}, examples, run) for run in range(runs)]
    total = sum(map(len, per_run))
    return {
        name: (sum(name in s for run in per_run for s in run) / total, sum(any(name in s for s in run) for run in per_run) / runs)
        for name in detectors
    }


def _shapes_seen(strategy: SearchStrategy[Any], detect: Callable[[Any], set[str]], examples: int, run: int) -> list[set[str]]:
    """The shapes of each example one run of ``examples`` examples (seed ``run``) draws."""
    seen: list[set[str]] = []

    @seed(run)
    @settings(max_examples=examples, database=None, phases=[Phase.generate], deadline=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(history: Any) -> None:
        seen.append(detect(history))

    collect()
    return seen
