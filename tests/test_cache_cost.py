"""The prompt-cache rules per provider and the bill per pricing (benchmarks/cache.py, prices.py; SPEC CACHE-1..4).

The Anthropic cases follow the examples of Anthropic's prompt-caching page (a breakpoint's
20-block lookback, billing positions A and C); the OpenAI ones its guide's sequence of cached
sizes (1024, 1152, 1280...).
"""

from __future__ import annotations

import pytest

from compaction_suite.benchmarks.cache import CacheUse, Meter, anthropic_use, blocks, breakpoints, marked, openai_read
from compaction_suite.benchmarks.lineup import NoCompaction
from compaction_suite.benchmarks.prices import ANTHROPIC, DEFAULT_PRICINGS, MODELS, OPENAI, Price, pricing, pricings
from compaction_suite.benchmarks.replay import replay
from compaction_suite.reference.tokens import ExactTokens

from message_builders import asks, call, reply, result, system, user

EXACT = ExactTokens("o200k_base")


def positions(per_block: int = 100):
    """Cumulative tokens and blocks of a request whose every unit is one block of ``per_block`` tokens."""
    return (lambda p: p * per_block), (lambda p: p)


def test_openai_reads_the_shared_prefix_from_1024_tokens_in_steps_of_128():
    assert [openai_read(n) for n in (1023, 1024, 1151, 1152, 1300, 5000)] == [0, 1024, 1024, 1152, 1280, 4992]


def test_anthropic_reads_the_previous_breakpoint_and_writes_up_to_the_last_one():
    tokens, count = positions()
    use, left = anthropic_use(tokens, count, (31,), shared=30, entries=frozenset({30}), min_tokens=1024)
    assert use == CacheUse(read=3000, written=100)
    assert left == {30, 31}


def test_anthropic_looks_back_20_blocks_from_each_breakpoint_only():
    tokens, count = positions()
    near, _ = anthropic_use(tokens, count, (49,), shared=30, entries=frozenset({30}), min_tokens=1024)
    far, _ = anthropic_use(tokens, count, (50,), shared=30, entries=frozenset({30}), min_tokens=1024)
    assert near.read == 3000 and far.read == 0 and far.written == 5000
    helped, _ = anthropic_use(tokens, count, (30, 50), shared=30, entries=frozenset({30}), min_tokens=1024)
    assert helped == CacheUse(3000, 2000)  # a breakpoint placed at the old end reaches it


def test_anthropic_finds_no_entry_past_a_change():
    """The page's example: block 25 modified, the entry at 30 no longer matches."""
    tokens, count = positions()
    use, _ = anthropic_use(tokens, count, (31,), shared=24, entries=frozenset({30}), min_tokens=1024)
    assert use == CacheUse(0, 3100)


def test_anthropic_caches_nothing_below_the_models_minimum():
    tokens, count = positions(per_block=10)
    use, left = anthropic_use(tokens, count, (5, 50), shared=0, entries=frozenset(), min_tokens=1024)
    assert use == CacheUse(0, 0) and not left


def test_breakpoints_are_the_marked_units_the_system_end_and_the_request_end_at_most_four():
    units = [system("s"), user("u"), reply("r"), user("v"), reply("w"), user("x"), reply("y")]
    assert breakpoints(units, [False] * 7) == (1, 7)
    assert breakpoints(units, [False, True, False, True, False, True, False]) == (2, 4, 6, 7)
    assert breakpoints(units, [True] * 7) == (4, 5, 6, 7)


def test_cache_control_is_read_on_messages_blocks_and_content_parts():
    assert marked({"role": "user", "content": [{"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}]})
    assert marked({"role": "system", "content": "x", "cache_control": {"type": "ephemeral"}})
    assert not marked(user("x"))
    assert blocks(asks(call("a"), call("b"), text="looking")) == 3 and blocks(reply("done")) == 1 and blocks(user("")) == 1


def history(rounds: int, parallel: int = 1, size: int = 300) -> list[dict]:
    words = " ".join(["lorem"] * size)
    out = [system(words), user("go")]
    for n in range(rounds):
        ids = [f"c{n}_{i}" for i in range(parallel)]
        out += [asks(*(call(i) for i in ids)), *(result(i, words) for i in ids)]
    return out + [reply("done")]


def test_an_append_only_history_reads_its_previous_prompt_from_both_caches():
    messages = history(8)
    run = replay(messages, NoCompaction())
    for before, call_ in zip(run.calls, run.calls[1:]):
        previous = before.input_tokens - 3  # the reply priming is not part of the prefix
        assert call_.cache["openai gpt-4.1"] == CacheUse(openai_read(previous), 0)
        anthropic = call_.cache["anthropic claude-sonnet-4-5"]
        if previous >= 1024:
            assert anthropic == CacheUse(previous, call_.input_tokens - 3 - previous)


def test_a_round_of_more_than_20_blocks_falls_back_to_the_system_prompts_entry():
    messages = history(3, parallel=25, size=1100)
    run = replay(messages, NoCompaction(), pricings=(pricing(ANTHROPIC),))
    system_tokens = EXACT.units(messages[0])
    second, third = (c.cache["anthropic claude-sonnet-4-5"] for c in run.calls[1:3])
    assert second.read == system_tokens  # 26 new blocks: the previous end is out of the lookback
    assert third.read == system_tokens


def test_a_compactor_that_marks_its_summary_is_read_from_there():
    """Anthropic reads from a breakpoint the compactor's output places (a content part's cache_control)."""
    summary = {"role": "user", "content": [{"type": "text", "text": "[Context Summary] " + "s " * 1500, "cache_control": {"type": "ephemeral"}}]}
    meter = Meter((pricing(ANTHROPIC),))
    first = [system("sys"), summary, user("a " * 40)]
    meter.use(first, 0, EXACT.units)
    changed = [first[0], summary, user("b " * 40)]  # the tail rewritten, the summary kept
    use = meter.use(changed, 2, EXACT.units)["anthropic claude-sonnet-4-5"]
    assert use.read == EXACT.units(first[0]) + EXACT.units(summary)


def test_a_call_is_priced_with_reads_writes_and_output():
    price = Price(input=3.0, cached_input=0.3, output=15.0, cache_write=3.75)
    assert price.cost(1_000_000, 600_000, 0, 300_000) == pytest.approx(0.3 + 0.18 + 1.125)
    assert Price(2.0, 0.5, 8.0).cost(1_000_000, 0, 0, 1_000_000) == pytest.approx(2.0)  # OpenAI: writes cost the input price


def test_pricings_from_the_command_line_choices():
    assert [p.label for p in DEFAULT_PRICINGS] == ["openai gpt-4.1", "anthropic claude-sonnet-4-5"]
    assert [p.label for p in pricings((ANTHROPIC,))] == ["anthropic claude-sonnet-4-5"]
    assert [p.label for p in pricings((), ("gpt-5.1",))] == ["openai gpt-5.1"]
    assert [p.label for p in pricings((OPENAI,), ("claude-opus-4-5",))] == ["openai gpt-4.1", "anthropic claude-opus-4-5"]
    with pytest.raises(ValueError, match="unknown model"):
        pricings((), ("gpt-0",))
    assert MODELS["claude-sonnet-4-5"].price.cache_write == pytest.approx(3.75)
    assert pricing(ANTHROPIC).write_to_read == pytest.approx(12.5) and pricing(OPENAI).write_to_read == pytest.approx(4.0)
