"""Core, declared trigger: a target whose framework says when it compacts (``capabilities["trigger"]``,
`conformance.trigger`) compacts well past that point and not well below it (SPEC FIRE-1, FIRE-2); one
whose framework documents the configuration as never compacting (``"never"``) leaves every history
as it is (SPEC FIRE-6).

Every test draws in the target's own wire format (`TARGET_FORMAT`) and calls ``compact`` at iteration
1 with ``max_context_tokens`` set to `BUDGET`, each compactor's trigger read from that very compactor
(a target whose declaration follows its settings, as the reference's does, declares that budget)."""

from __future__ import annotations

import base64
import copy
import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import Phase, assume, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from compaction_suite.conformance import formats, media, oracle
from compaction_suite.conformance.assertions import require
from compaction_suite.conformance.capabilities import declared
from compaction_suite.conformance.histories import flat_png, pdf_part, png
from compaction_suite.conformance.responses_histories import REASONING_PAYLOAD_CHARS, reasoning_payload, with_reasoning
from compaction_suite.conformance.shapes import results
from compaction_suite.conformance.suite import Subject, Suite, declared_capabilities
from compaction_suite.conformance.trigger import PAST, Trigger
from compaction_suite.conformance.violation import Violation
from compaction_suite.text import prompt_tokens

from .common import TARGET_FORMAT, changed, clause, in_format, target_format

pytestmark = TARGET_FORMAT

BUDGET = 4000
"""``max_context_tokens`` in these tests: small, so a trigger that follows it is passed with a few
thousand tokens rather than 160,000."""
TOOL_RESULTS = 4
"""FIRE-1: at least this many tool results, so one kept pair or a few kept rounds leave something older."""
SCRIPTS: dict[str, tuple[str, ...]] = {
    "ascii": ("the", "build", "log", "shows", "no", "error", "in", "module", "parser", "tests", "passed", "deploy"),
    "accented-latin": ("café", "naïve", "résumé", "Straße", "façade", "jalapeño", "Ærøskøbing", "São", "Zürich", "élève", "déjà", "Ångström"),
    "cjk-and-emoji": ("構成ファイルを読み込みました", "测试全部通过", "数据库迁移完成", "빌드 성공", "오류 없음", "✅", "🚀", "🔥", "👍🏽", "🧪", "📦", "部署"),
}
"""The text of FIRE-2's histories: plain ASCII, accented Latin, and CJK with emoji (real traffic
has them; a counter of bytes or of JSON ``\\uXXXX`` escapes inflates them 2 to 12 times)."""
SCRIPT_SWEEP = hypothesis_settings(max_examples=3, phases=(Phase.explicit, Phase.reuse, Phase.generate))
"""Three examples per script, not shrunk: the size is forced, not hoped for."""


def _subject(suite: Suite) -> tuple[Subject, Trigger]:
    """A fresh compactor under `BUDGET` and the trigger it declares (the clause is not applicable
    to a target declaring none, so the first compactor declared one)."""
    suite.reset_server()
    subject = suite.new(max_context_tokens=BUDGET)
    trigger = declared(subject.compactor).trigger
    if trigger is None:  # the first compactor declared one, this one does not: the factory is inconsistent
        pytest.fail("the compactor declares no trigger, though the target's first compactor did")
    return subject, trigger


# --- FIRE-1: well past the trigger, something older to remove


def _past(trigger: Trigger) -> st.SearchStrategy[Any]:
    """Histories of at least 6 rounds and 28 items sized to `PAST` times the trigger (with room for a
    system prompt and a count below chars/4), few parallel calls so a framework grouping a round's
    results in one message counts nearly as many; the padding's tool rounds give a compactor that
    only clears older tool results something to clear (`TOOL_RESULTS`)."""
    need = PAST * trigger.limit
    size = {"min_messages": max(need + 4, 28)} if trigger.kind == "messages" else {"min_tokens": need + need // 4 + 64, "min_messages": 28}
    return in_format(min_rounds=6, max_rounds=10, max_parallel_calls=2, shapes=(), earlier_summary=False, long_outputs=False, **size)


@clause("FIRE-1")
@hypothesis_settings(max_examples=3, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(data=st.data())
def test_compacts_well_past_its_declared_trigger(suite, data):
    subject, trigger = _subject(suite)
    history = data.draw(_past(trigger), label="history")
    fmt = target_format()
    held = trigger.size(fmt, history, system=False)
    assume(trigger.well_past(fmt, history) and len(results(history, fmt)) >= TOOL_RESULTS)
    out = subject.compact(copy.deepcopy(history), 1)
    if not fmt.well_formed(out):
        return  # a malformed output is the structural clauses' finding
    problem = None if changed(history, out) else Violation(
        "never-compacts", f"the history holds {held} {trigger.kind} ({held / trigger.limit:.1f}x the declared trigger of {trigger}), yet it was not compacted"
    )
    require(problem, history, out)


# --- FIRE-2: well below the trigger, in every script


def _words(script: str) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(SCRIPTS[script]), min_size=20, max_size=40)


def _below(trigger: Trigger, script: str, *, image: dict[str, Any] | None = None, media_tokens: int = 0) -> st.SearchStrategy[Any]:
    """A complete history at most half the trigger by its count, system prompt included: user turns,
    a tool round and replies (in that order, as many items as fit), its text in ``script``; in the
    Responses format each output after a reasoning item whose opaque payload has the size the API
    returns (`_reasoned`); the first user turn holding ``image`` (a chat-completions image or file part,
    which the provider counts as ``media_tokens``) beside its text, where one is given (then without
    reasoning items: what the history holds beside its text is that part alone, so a finding names it)."""
    return st.builds(
        lambda words, share, system, payloads: _conversation(trigger, words, share, system, payloads, image, media_tokens),
        _words(script), st.floats(0.5, 0.9), st.booleans(), _payloads(),
    )  # fmt: skip


def _payloads() -> st.SearchStrategy[list[str]]:
    """Opaque reasoning payloads at the sizes the Responses API returns (`REASONING_PAYLOAD_CHARS`)."""
    low, high = REASONING_PAYLOAD_CHARS
    return st.lists(st.builds(reasoning_payload, st.integers(0, 2**32), st.integers(low, high)), min_size=8, max_size=8)


def _reasoned(shape: list[str]) -> int:
    """The items ``shape`` makes in the Responses format with reasoning: one more before each call or reply."""
    return len(shape) + sum(kind in ("call", "reply") for kind in shape)


def _conversation(trigger: Trigger, words: list[str], share: float, system: bool, payloads: list[str], image: dict[str, Any] | None = None, media_tokens: int = 0) -> Any:
    half = trigger.limit // 2 - media_tokens
    items = max(1, trigger.most_items_below())
    fmt = target_format()
    reasoning = fmt.name == formats.RESPONSES and image is None  # the media variants' size is their part's alone
    shape = ["system"] * system + ["user", "call", "tool", "reply"] * (items // 4 + 1)
    shape = shape[:items]
    while len(shape) > 1 and (shape[-1] == "call" or (reasoning and _reasoned(shape) > items)):
        shape = shape[:-1]
    texts = sum(kind != "call" for kind in shape) or 1
    budget = 8 if trigger.kind == "messages" else max(1, int(half * share / texts))
    pool = itertools.cycle(words)
    chat: list[dict[str, Any]] = []
    for n, kind in enumerate(shape):
        text = "" if kind == "call" else _text(trigger, pool, budget)
        if kind == "call":
            chat.append({"role": "assistant", "content": None, "tool_calls": [{"id": f"call_fire_{n}", "type": "function", "function": {"name": "readFile", "arguments": json.dumps({"path": "src/app.py"})}}]})
        elif kind == "tool":
            chat.append({"role": "tool", "tool_call_id": f"call_fire_{n - 1}", "content": text})
        else:
            chat.append({"role": {"reply": "assistant"}.get(kind, kind), "content": text})
    if image is not None:
        first = next(m for m in chat if m["role"] == "user")
        first["content"] = [{"type": "text", "text": first["content"]}, image]
    history = chat if fmt.name == formats.CHAT else fmt.from_chat(chat)
    if reasoning:
        history = with_reasoning(history, itertools.cycle(payloads))
    return fmt.without_system(history) if declared_capabilities().system_outside else history


def _text(trigger: Trigger, pool: Iterator[str], budget: int) -> str:
    """Words from ``pool`` while the text stays within ``budget`` (words for a message trigger, tokens
    by the trigger's count for a token trigger)."""
    if trigger.kind == "messages":
        return " ".join(next(pool) for _ in range(budget))
    words = [next(pool)]
    while trigger.count(" ".join([*words, word := next(pool)])) <= budget:
        words.append(word)
    return " ".join(words)


@clause("FIRE-2")
@pytest.mark.parametrize("script", sorted(SCRIPTS))
@SCRIPT_SWEEP
@given(data=st.data())
def test_does_not_compact_well_below_its_declared_trigger(suite, script, data):
    subject, trigger = _subject(suite)
    if trigger.limit < (4 if trigger.kind == "messages" else 64):
        pytest.skip(f"a trigger of {trigger} leaves no history of two items or a few words at half of it")
    history = data.draw(_below(trigger, script), label="history")
    _left_alone(subject, trigger, history, f"; text: {script}", _opaque(history))


def _left_alone(subject: Subject, trigger: Trigger, history: Any, inside: str, after: str = "") -> None:
    """FIRE-2 on one history well below ``trigger`` (examples that are not are rejected): the output
    equals it; the reason states its size and, ``inside`` and ``after`` its share, what it holds."""
    fmt = target_format()
    held = trigger.size(fmt, history, system=True)
    assume(trigger.well_below(fmt, history) and fmt.rounds(history))
    out = subject.compact(copy.deepcopy(history), 1)
    problem = None if oracle.same(history, out) else Violation(
        "compacts-below-trigger",
        f"the history holds {held} {trigger.kind} ({held / trigger.limit:.0%} of the declared trigger of {trigger}{inside}){after}, yet it was compacted",
    )
    require(problem, history, out)


def _opaque(history: Any) -> str:
    """What the history holds beside its text that no provider counts: its reasoning items' opaque payloads."""
    payloads = [i["encrypted_content"] for i in history if isinstance(i, dict) and i.get("type") == "reasoning" and i.get("encrypted_content")] if isinstance(history, list) else []
    if not payloads:
        return ""
    return f"; beside it {len(payloads)} reasoning items' opaque encrypted_content, {sum(map(len, payloads))} characters the model never reads as text"


MEDIA_SIDE = 64
"""FIRE-2's image: a 64-pixel PNG of noise, about 16 kB of base64, which OpenAI counts as 255 tokens
and Anthropic as 6, and a counter reading its base64 as text as some 4,000 (SPEC FIRE-2 Decision: media)."""


@clause("FIRE-2")
@SCRIPT_SWEEP
@given(data=st.data())
def test_does_not_compact_well_below_its_declared_trigger_with_an_image(suite, data):
    """FIRE-2 where the history's first user turn holds an inline image: well below the trigger as the
    provider counts the image, so a framework counting its base64 as text compacts it (LangChain's
    ``count_tokens_approximately`` before langchain-core 1.2.8, langchain-ai/langchain#34873)."""
    subject, trigger = _subject(suite)
    if trigger.kind != "tokens" or trigger.limit < 4 * IMAGE_TOKENS:
        pytest.skip(f"a trigger of {trigger} counts no image, or leaves no room for one at half of it")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    url = "data:image/png;base64," + base64.b64encode(png(MEDIA_SIDE, MEDIA_SIDE, seed)).decode("ascii")
    image: dict[str, Any] = {"type": "image_url", "image_url": {"url": url}}
    history = data.draw(_below(trigger, "ascii", image=image, media_tokens=IMAGE_TOKENS), label="history")
    inside = f", its inline {MEDIA_SIDE}x{MEDIA_SIDE} image counted as the provider counts it, not its {len(url):,} characters of base64"
    _left_alone(subject, trigger, history, inside)


IMAGE_TOKENS = 255
"""What OpenAI counts for FIRE-2's image (`media.openai_image_tokens` of a 64-pixel square, detail auto)."""
PDF_BYTES = 24_000
"""FIRE-2's PDF: one page carrying an embedded stream of this many bytes (a font program or a scan's
image data), about 32 kB of base64, which a provider counts as a page (`media.PDF_PAGE_TOKENS`) and a
counter reading its base64 as text as some 8,000 tokens (SPEC FIRE-2 Decision: media)."""


@clause("FIRE-2")
@SCRIPT_SWEEP
@given(data=st.data())
def test_does_not_compact_well_below_its_declared_trigger_with_a_pdf(suite, data):
    """FIRE-2 where the history's first user turn holds an inline one-page PDF of tens of kB: well below
    the trigger as the provider counts a page, so a framework counting a file block's base64 as text
    compacts it (LangChain's ``count_tokens_approximately`` counts file, audio and video blocks by
    ``repr``, langchain-ai/langchain#38227)."""
    subject, trigger = _subject(suite)
    if trigger.kind != "tokens" or trigger.limit < 2 * (media.PDF_PAGE_TOKENS + 256):
        pytest.skip(f"a trigger of {trigger} counts no file, or leaves no room for a PDF page and some text at half of it")
    part = pdf_part(data.draw(st.integers(0, 2**32 - 1), label="seed"), PDF_BYTES)
    history = data.draw(_below(trigger, "ascii", image=part, media_tokens=media.PDF_PAGE_TOKENS), label="history")
    inside = f", its inline one-page PDF counted as the provider counts a page, not its {len(part['file']['file_data']):,} characters of base64"
    _left_alone(subject, trigger, history, inside)


# --- FIRE-6: a configuration documented as never compacting


NEVER_MESSAGES = 44
"""FIRE-6: at least this many items, twice the largest message count a framework keeps by default
(LangChain's ``SummarizationMiddleware`` keeps 20, and its 1.0 releases summarized past that with
the trigger disabled, langchain-ai/langchain#33701), so a configuration falling back to another
threshold meets it."""


def _disabled_past() -> st.SearchStrategy[Any]:
    """Histories past every size another threshold could name: `PAST` times the suite's budget in
    tokens and `NEVER_MESSAGES` items, in at least 6 rounds with tool results (FIRE-1's shapes)."""
    return in_format(
        min_rounds=6, max_rounds=12, max_parallel_calls=2, shapes=(), earlier_summary=False, long_outputs=False,
        min_tokens=PAST * BUDGET + BUDGET // 4, min_messages=NEVER_MESSAGES,
    )  # fmt: skip


@clause("FIRE-6")
@hypothesis_settings(max_examples=3, phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(data=st.data())
def test_never_compacts_when_declared_disabled(suite, data):
    suite.reset_server()
    subject = suite.new(max_context_tokens=BUDGET)
    if not declared(subject.compactor).never_compacts:
        pytest.fail("the compactor does not declare trigger 'never', though the target's first compactor did")
    history = data.draw(_disabled_past(), label="history")
    fmt = target_format()
    iteration = 2 * suite.settings.threshold_iterations  # past an iteration trigger too
    out = subject.compact(copy.deepcopy(history), iteration)
    problem = None if oracle.same(history, out) else Violation(
        "compacts-when-disabled",
        f"the configuration is declared never to compact (its framework documents it as disabled), yet a history of "
        f"{fmt.length(history)} items and {Trigger('tokens', 1).size(fmt, history, system=True)} tokens (chars/4) was compacted at iteration {iteration}",
    )
    require(problem, history, out)


# --- FIRE-7: the agent's whole model requests, replayed turn by turn


STEP = 25
"""FIRE-7: each added round holds a 1/STEP share of the window, so a trigger that counts the whole
request, or reads the provider's reported usage one response late, fires before a request is over
the window (SPEC FIRE-7 Decision: steady growth)."""
REQUEST_SWEEP = hypothesis_settings(max_examples=2, phases=(Phase.explicit, Phase.reuse, Phase.generate), deadline=None)
REASON_CHARS = 400
"""How much of the error's text the reason keeps (the provider's words come first)."""


def _steady(suite: Suite, history: Any, window: int) -> Any:
    """``history`` with rounds of its own before its first turn, each holding a 1/`STEP` share of the
    window of build log (pasted by the user, or read by a tool, in turn), until the added text holds
    more than `PAST` windows: the agent's requests pass the window somewhere on the way unless older
    rounds are compacted."""
    from .test_window import _joined, _pasted, _read, log_text

    rounds: list[dict[str, Any]] = []
    held = n = 0
    while held <= PAST * window:
        n += 1
        text = log_text(window // STEP, n)
        rounds += _pasted(n, text) if n % 2 else _read(n, text)
        held += window // STEP
    return _joined(suite, history, rounds)


@clause("FIRE-7")
@REQUEST_SWEEP
@given(history=in_format(min_rounds=2, max_rounds=4, max_parallel_calls=2, shapes=(), earlier_summary=False, long_outputs=False, multimodal=False))
def test_no_model_request_over_the_declared_window(suite, history):
    """Replayed through the target's own agent loop (system prompt and tool schemas beside the history),
    the history is compacted on the way without a model request over the declared window escaping as
    the provider's overflow answer."""
    window = suite.capabilities.request_window
    _replayed(suite, _steady(suite, history, window), window, "")


SCREENSHOT = (1280, 800)
"""A laptop screenshot's size: OpenAI counts it 1,105 tokens (6 tiles), Anthropic 1,366
(`conformance.media`); LangChain's ``count_tokens_approximately`` 85 (langchain-ai/langchain#39857)."""
BEFORE_SHOTS = 0.5
"""FIRE-7 (pasted screenshots): the text rounds before the screenshots hold this share of the window."""
SHOTS_SHARE = 0.55
"""FIRE-7 (pasted screenshots): the screenshots of the one turn hold at least this share of the window,
as the provider counts them; with the text before them the request passes the window."""


def _rounds_before(window: int) -> list[dict[str, Any]]:
    """Text rounds of a 1/`STEP` share of the window of build log each (pasted by the user, or read by
    a tool, in turn), as `_steady` draws them, up to `BEFORE_SHOTS` of the window (the test double's
    count, framing included)."""
    from .test_window import _pasted, _read, log_text

    rounds: list[dict[str, Any]] = []
    n = 0
    while prompt_tokens(rounds) < BEFORE_SHOTS * window:
        n += 1
        text = log_text(window // STEP, n)
        rounds += _pasted(n, text) if n % 2 else _read(n, text)
    return rounds


def _screenshots(suite: Suite, history: Any, window: int) -> tuple[Any, int]:
    """``history`` with text rounds of its own before its first turn (a 1/`STEP` share of the window of
    build log each, as `_steady` draws them) up to `BEFORE_SHOTS` of the window (the test double's count,
    framing included), then one user turn
    pasting `SCREENSHOT`-sized PNGs that hold `SHOTS_SHARE` of the window as the provider counts them,
    and the assistant's answer; also how many screenshots that turn pastes."""
    from .test_window import _joined

    rounds = _rounds_before(window)
    shots = max(1, -(-int(SHOTS_SHARE * window) // media.openai_image_tokens(*SCREENSHOT)))
    parts: list[dict[str, Any]] = [{"type": "text", "text": f"Here are {shots} screenshots of the failing build; what do they show?"}]
    for k in range(shots):
        data = base64.b64encode(flat_png(*SCREENSHOT, 60 + 40 * k)).decode("ascii")
        parts.append({"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}})
    rounds += [{"role": "user", "content": parts}, {"role": "assistant", "content": "Each screenshot shows the same test failing."}]
    return _joined(suite, history, rounds), shots


@clause("FIRE-7")
@REQUEST_SWEEP
@given(history=in_format(min_rounds=2, max_rounds=4, max_parallel_calls=2, shapes=(), earlier_summary=False, long_outputs=False, multimodal=False))
def test_no_model_request_over_the_declared_window_after_pasted_screenshots(suite, history):
    """Replayed as above, with one user turn pasting screenshots that hold more than half the window as
    the provider counts images: the agent sees them in the request it is about to send, so a trigger
    that counts them as its provider does compacts the older rounds first (SPEC FIRE-7 Decision: pasted
    screenshots). Chat-completions histories hold images in user turns."""
    window = suite.capabilities.request_window
    history, shots = _screenshots(suite, history, window)
    w, h = SCREENSHOT
    _replayed(
        suite, history, window,
        f" after a user turn pasting {shots} screenshot(s) of {w}x{h} pixels, {media.openai_image_tokens(w, h):,} tokens each as OpenAI counts an image,",
        "request-over-window-after-images",
    )  # fmt: skip


PASTED_SHARE = SHOTS_SHARE
"""FIRE-7 (pasted log): the log the one user turn pastes holds this share of the window, as the test
double counts it; with the text rounds before it the request passes the window, without them it fits."""


@clause("FIRE-7")
@REQUEST_SWEEP
@given(history=in_format(min_rounds=2, max_rounds=4, max_parallel_calls=2, shapes=(), earlier_summary=False, long_outputs=False, multimodal=False))
def test_no_model_request_over_the_declared_window_after_a_pasted_log(suite, history):
    """Replayed as above, with one user turn pasting a build log of more than half the window after text
    rounds of half of it: that turn alone fits the window, so dropping every older round leaves a request
    the model accepts, while a trim that keeps nothing of a turn larger than its own budget and a loop
    that then sends the whole history pass it (SPEC FIRE-7 Decision: a pasted log)."""
    from .test_window import _joined, _pasted, log_text

    window = suite.capabilities.request_window
    rounds = _rounds_before(window)
    n = 1 + sum(1 for m in rounds if m.get("role") == "user")
    pasted = log_text(int(PASTED_SHARE * window), n)
    history = _joined(suite, history, [*rounds, *_pasted(n, pasted)])
    _replayed(
        suite, history, window,
        f" after a user turn pasting a build log of {prompt_tokens(_pasted(n, pasted)[:1]):,} tokens (the window holds it alone),",
        "request-over-window-after-pasted-log",
    )  # fmt: skip


def _replayed(suite: Suite, history: Any, window: int, after: str, reason_id: str = "request-over-window") -> None:
    """The verdict of FIRE-7 on ``history`` replayed by a fresh subject: ``reason_id`` when the call
    raised (the provider's answer to a request over the window; CORE-10 records the crash too),
    ``after`` saying what the history held that the request passed the window with."""
    suite.reset_server()
    subject = suite.new()
    try:
        out = subject.compact(copy.deepcopy(history), 1)
    except Exception as error:  # noqa: BLE001 - the verdict
        text = f"{type(error).__name__}: {error}"[:REASON_CHARS]
        found = (
            f"replaying a history of {target_format().length(history)} items turn by turn,{after} the agent's model request exceeded "
            f"its declared window of {window} tokens (system prompt and tools beside the messages) and the run ended in {text}"
        )
        require(Violation(reason_id, found), history, None)
        return
    require(None, history, out)
