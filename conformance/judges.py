"""The format-independent clauses judged on every output and every call (SPEC CORE-12, CORE-13,
CORE-14, CORE-16, CORE-17, CORE-18), written once for every wire format through `WireFormat`.

Each check takes what one ``compact`` call showed: the history, the output, and the exchanges
the summarizer test double had with the target during that call (`summarizer_server.Exchange`:
each request, and the answer it got). It returns None when its clause holds, else a `Violation`.
None raises on a malformed output: judging malformed output is the structural clauses' job.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from . import error_marks, media, newest_results, placeholders, providers
from .formats import kept_or_marked
from .formats.responses import HOSTED_CALLS
from .oracle import SYSTEM_ROLES, canonical, same
from .placeholders import stated_counts
from .violation import Violation

if TYPE_CHECKING:
    from .formats import WireFormat
    from .summarizer_server import Exchange

NEEDLE = 40
"""How many letters and digits of a message's first line of text the summarizer request must hold
for the message to count as sent: enough to be that message, few enough that a transcript
truncating long tool outputs still shows it (SPEC CORE-12 Decision)."""
SHORTEST = 8
"""A line saying fewer letters and digits than this is not looked for: nothing tells it apart."""


NOT_ALNUM = re.compile(r"[^0-9A-Za-z]+")
"""A run of anything but ASCII letters and digits (removed as one)."""


def alnum(text: str) -> str:
    """``text`` reduced to its letters and digits: how texts are compared across transcripts that
    re-wrap, re-indent, quote or JSON-escape them."""
    return NOT_ALNUM.sub("", text)


def strings(value: Any) -> Iterable[str]:
    """Every string inside a JSON value (keys aside)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def _where(fmt: WireFormat, out: Any, index: int) -> str:
    items = fmt.items(out)
    item = items[index] if 0 <= index < len(items) else None
    return f"output item {index} ({fmt.role(item)})"


# --- CORE-12: a summary stands only for a summarizer answer to a request that held what it replaces


def new_items(fmt: WireFormat, history: Any, out: Any) -> list[tuple[int, Any]]:
    """The output's items that stand for nothing of the input: neither kept, masked in place,
    re-encoded (`WireFormat.corresponds`), nor input turns joined (`WireFormat.joins`)."""
    before = fmt.items(history)
    verbatim = set(map(canonical, before))
    return [(j, item) for j, item in enumerate(fmt.items(out)) if not _kept(fmt, before, verbatim, item, forward=False)]


def _marker(fmt: WireFormat, history: Any, item: Any) -> bool:
    """Whether output item ``item`` is a truncation's marker ("[... 3 messages elided ...]"),
    standing alone or added to an item of the input or to input turns joined: no summary (SPEC
    CORE-11 Decision: placeholders; CORE-21 judges the count it states)."""
    before = fmt.items(history)
    return kept_or_marked(before, item, fmt.corresponds) or fmt.joins(before, placeholders.without_placeholders(item)) > 0


def removed(fmt: WireFormat, history: Any, out: Any) -> list[Any]:
    """The input's items the output holds nothing of (neither kept, masked, re-encoded nor joined
    with their neighbours)."""
    after = fmt.items(out)
    verbatim = set(map(canonical, after))
    return [item for item in fmt.items(history) if not _kept(fmt, after, verbatim, item)]


def _kept(fmt: WireFormat, others: Sequence[Any], verbatim: set[str], item: Any, *, forward: bool = True) -> bool:
    """Whether ``item`` corresponds to one of ``others`` (``forward``: ``item`` is the input's,
    else the output's), or sits joined with its neighbours where the provider joins turns
    (`WireFormat.combined`, `WireFormat.joins`). ``verbatim`` holds the `canonical` forms of ``others``: every format's
    `corresponds` holds for the `same` item, so an item kept verbatim, most of an output, is
    found in the set instead of by comparing it with each of the others as JSON."""
    if canonical(item) in verbatim:
        return True
    if any(fmt.corresponds(item, o) if forward else fmt.corresponds(o, item) for o in others):
        return True
    return fmt.combined(item, others) if forward else fmt.joins(others, item) > 0


def _answered(item: Any, exchange: Exchange) -> bool:
    """Whether ``item`` carries ``exchange``'s answer: the answer's text, or an item it returned (a compaction item)."""
    if any(same(item, given) for given in exchange.output):
        return True
    answer = alnum(exchange.answer or "")[:NEEDLE]
    return bool(answer) and answer in alnum("\n".join(strings(item)))


ANSWERED = "CORE-12"
"""The clause `summary_stands_for_answer` judges, from the summarizer's answers."""
ACCEPTED = "CORE-13"
"""The clause `requests_accepted` judges, from the summarizer's requests."""
MEDIA_AS_MEDIA = "SUM-6"
"""The clause `media_as_text` judges, from the summarizer's requests."""


def summary_stands_for_answer(fmt: WireFormat, history: Any, out: Any, exchanges: Sequence[Exchange], *, held: bool = True) -> Violation | None:
    """CORE-12: when the output holds items standing for removed ones, one of them carries a
    summarizer answer given during this call, and (``held``) the requests answered held every
    removed item that says something (the first `NEEDLE` letters and digits of its first line)
    and every image it refers to by URL (`media_urls`)."""
    if not fmt.well_formed(out) or same(history, out):
        return None
    new = [(j, item) for j, item in new_items(fmt, history, out) if not _marker(fmt, history, item)]
    if not new:
        return None
    answering = [e for e in exchanges if any(_answered(item, e) for _, item in new)]
    if not answering:
        j, item = new[0]
        asked = f"asked {len(exchanges)} time(s), no answer of it is in the output" if exchanges else "never asked"
        return Violation("summary-without-summarizer-answer", f"{_where(fmt, out, j)} stands for removed items, but the summarizer was {asked} ({_preview(item)})")
    if not held:
        return None
    sent = alnum("\n".join(s for e in _and_summarized(answering, exchanges) for s in strings(e.body)))
    gone = removed(fmt, history, out)
    gone = [item for item in gone if not _behind_held_compaction(fmt, history, item, sent)]
    for item in gone:
        needle = _needle(fmt.said(item))
        if needle and needle not in sent:
            index = next(i for i, b in enumerate(fmt.items(history)) if b is item)
            return Violation(
                "summary-of-unsent-messages",
                f"the summary replaces input item {index} ({fmt.role(item)}), which the summarizer request it answers did not hold ({_preview(item)})",
            )
    for item in gone:  # a message the request never held is named first, its images after
        unsent = [url for url in media_urls(item) if alnum(url) not in sent]
        if unsent:
            index = next(i for i, b in enumerate(fmt.items(history)) if b is item)
            return Violation(
                "summary-of-unsent-media",
                f"the summary replaces input item {index} ({fmt.role(item)}), whose image {unsent[0]!r} the summarizer request it answers did not hold "
                f"(the request held its text, not its {len(unsent)} image reference(s))",
            )
    return None


MEDIA_KEYS = ("url", "image_url", "file_url")
"""The keys under which a content part refers to an image or file by URL: chat-completions
``image_url.url``, Responses ``input_image.image_url``, Anthropic ``source.url``."""


def media_urls(item: Any) -> list[str]:
    """The http(s) URLs by which ``item``'s content parts refer to images or files (SPEC CORE-12
    Decision: media). A ``data:`` URL is the payload itself, which a transcript may leave out."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                if key in MEDIA_KEYS and isinstance(inner, str) and inner.startswith(("https://", "http://")):
                    found.append(inner)
                else:
                    walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    walk(item)
    return found


def _behind_held_compaction(fmt: WireFormat, history: Any, item: Any, sent: str) -> bool:
    """Whether a compaction item of the input after ``item`` was held by the answered requests (``sent``: their
    letters and digits): a compaction item stands for the input before it, which the API reads through it (OpenAI's
    compaction guide; SPEC CORE-12 Decision: summaries of summaries), so a request holding it held ``item``. A
    compaction item is held when the requests hold the first `NEEDLE` letters and digits of its opaque content."""
    items = fmt.items(history)
    at = next((i for i, b in enumerate(items) if b is item), None)
    if at is None:
        return False
    for later in items[at + 1 :]:
        if isinstance(later, dict) and later.get("type") == "compaction":
            key = alnum(str(later.get("encrypted_content") or ""))[:NEEDLE]
            if key and key in sent:
                return True
    return False


def _and_summarized(answering: Sequence[Exchange], exchanges: Sequence[Exchange]) -> list[Exchange]:
    """``answering`` and, transitively, every exchange of the call whose whole answer a request of
    theirs held: a summary of an earlier summary of the same call stands for what that one held
    (SPEC CORE-12 Decision: summaries of summaries; Strands' reactive path summarizes again after
    each overflow, the earlier summary first in the next request)."""
    found = list(answering)
    for exchange in found:  # grows while it is walked: a breadth-first closure
        sent = alnum("\n".join(strings(exchange.body)))
        found += [e for e in exchanges if e not in found and e.answer and alnum(e.answer) and alnum(e.answer) in sent]
    return found


def _needle(said: str) -> str:
    """What a request must hold of an item that says ``said``: the first `NEEDLE` letters and digits
    of its first line saying at least `SHORTEST` ("" when none does). A line, because a message's
    text parts and a tool output's lines reach the request as separate strings."""
    return next((found[:NEEDLE] for line in said.splitlines() if len(found := alnum(line)) >= SHORTEST), "")


def _preview(item: Any) -> str:
    text = " ".join(" ".join(strings(item)).split())
    return repr(text[:60] + ("…" if len(text) > 60 else ""))


# --- CORE-13: every request sent to the summarizer is one its provider accepts


def requests_accepted(exchanges: Sequence[Exchange]) -> Violation | None:
    """CORE-13: no summarizer request of this call was rejected by the provider's rules (the test
    double answered it HTTP 400 with the provider's own text, as the real API does)."""
    for exchange in exchanges:
        if exchange.rejected is not None:
            return Violation(exchange.rejected.reason_id, f"the summarizer request to {exchange.request.path} is invalid: the provider answers HTTP 400 {str(exchange.rejected)!r}")
    return None


# --- CORE-14: the newest round is kept


def _folded(item: Any, out: Any, fmt: WireFormat, exchanges: Sequence[Exchange]) -> bool:
    """Whether ``item`` went into a provider compaction item of the output, returned by the compact
    endpoint for a request that held it (SPEC CORE-14 Decision: the provider's own compaction)."""
    for exchange in exchanges:
        returned = [o for o in exchange.output if isinstance(o, dict) and o.get("type") == "compaction"]
        kept = returned and any(same(r, o) for r in returned for o in fmt.items(out))
        if kept and any(same(item, sent) for sent in _input(exchange)):
            return True
    return False


def _input(exchange: Exchange) -> list[Any]:
    body = exchange.body
    items = body.get("input") if isinstance(body, dict) else None
    return items if isinstance(items, list) else []


def newest_round_kept(fmt: WireFormat, history: Any, out: Any, exchanges: Sequence[Exchange] = ()) -> Violation | None:
    """CORE-14: a compacted output holds every item of the input's newest round (ROUND-1 in the
    format, system prompt aside): verbatim, masked in place or re-encoded, joined with its
    neighbours of the same role where the provider joins them (Anthropic), or (Responses) folded
    into a compaction item the compact endpoint returned for a request that held it; a tool result
    of it masked in place while an older one as large is kept verbatim is not kept
    (`newest_results.masked_newest`, SPEC CORE-14 Decision). A history waiting for a tool result is
    the in-flight clause's."""
    if not fmt.well_formed(out) or same(history, out) or fmt.in_flight(history):
        return None
    rounds = fmt.rounds(history)
    if not rounds:
        return None
    after = fmt.items(out)
    verbatim = set(map(canonical, after))
    for item in rounds[-1]:
        if not _kept(fmt, after, verbatim, item) and not fmt.combined(item, after) and not _folded(item, out, fmt, exchanges):
            index = next((i for i, b in enumerate(fmt.items(history)) if b is item), -1)
            return Violation("newest-round-dropped", f"input item {index} ({fmt.role(item)}) of the newest round is missing from the compacted output ({_preview(item)})")
    return newest_results.masked_newest(fmt, history, out, rounds[-1])


# --- CORE-30: tool rounds are removed oldest first


CALL_TYPES = ("function_call", "custom_tool_call", "local_shell_call", "computer_call", *HOSTED_CALLS)
"""The Responses item types that are a tool call (the model's, or a hosted tool's: `HOSTED_CALLS`)."""


def calls_tools(item: Any) -> bool:
    """Whether an item of any wire format is a tool call: a chat-completions message with
    ``tool_calls``, a Responses call item, a Messages API turn with a ``tool_use`` block."""
    if not isinstance(item, dict):
        return False
    if item.get("tool_calls") or item.get("type") in CALL_TYPES:
        return True
    content = item.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content)


def oldest_tool_rounds_first(fmt: WireFormat, history: Any, out: Any) -> Violation | None:
    """CORE-30: a compaction that only removes (every output item is one of the input's, kept or masked
    in place) removes tool rounds oldest first: no round with a tool call is gone whole while an older
    one is kept. A window that keeps a round older than the ones it drops has merged or lost its
    groups (microsoft/agent-framework#5237, fixed by #6299: colliding message ids merged groups, and
    the strategy excluded newer rounds while older ones stayed). Text rounds are not judged: keeping
    the first user message (the task) while dropping later ones is a documented design."""
    if not fmt.well_formed(out) or same(history, out) or fmt.in_flight(history):
        return None
    before, after = fmt.items(history), fmt.items(out)
    verbatim_before, verbatim_after = set(map(canonical, before)), set(map(canonical, after))
    if not all(_kept(fmt, before, verbatim_before, o, forward=False) for o in after):
        return None  # it wrote something (a summary, a digest, a marker): CORE-12/CORE-18 judge what stands for what
    kept_at: int | None = None
    for n, round_ in enumerate(fmt.rounds(history)):
        if not any(calls_tools(item) for item in round_):
            continue
        kept = any(_kept(fmt, after, verbatim_after, item) for item in round_)
        if kept:
            kept_at = n
        elif kept_at is not None:
            index = next((i for i, b in enumerate(before) if b is round_[0]), -1)
            older = fmt.rounds(history)[kept_at][0]
            at = next((i for i, b in enumerate(before) if b is older), -1)
            return Violation(
                "newer-tool-round-removed",
                f"the tool round at input item {index} ({_preview(round_[0])}) was removed while the older one at input item {at} ({_preview(older)}) was kept",
            )
    return None


# --- CORE-16: something besides the system prompt is left


def something_left(fmt: WireFormat, history: Any, out: Any) -> Violation | None:
    """CORE-16: a compacted output of a history with items besides its system prompt keeps some."""
    if not fmt.well_formed(out) or not any(fmt.rounds(history)) or any(fmt.rounds(out)):
        return None
    count = sum(len(r) for r in fmt.rounds(history))
    return Violation("history-emptied", f"nothing but the system prompt is left: the {count} other items of the input were all removed and nothing stands for them")


# --- CORE-18: what a summarizing compaction removes is replaced by the summary it obtained


ANSWER_MARK = 80
"""How many letters and digits of an answer show it (CORE-18): enough to tell two answers of one
call apart (the test double's open alike, then name the digest of their request, within 80), few
enough that a framework truncating a summary still shows it (SPEC CORE-18 Decision)."""


def _marks(exchange: Exchange) -> list[str]:
    """What shows ``exchange``'s answer in a text of letters and digits: the first `ANSWER_MARK` of
    its text, and the longest string of each compaction item it returned (its opaque blob; the
    messages the compact endpoint returns beside it are the request's own, no answer)."""
    marks = [alnum(exchange.answer or "")[:ANSWER_MARK]]
    marks += [max((alnum(s) for s in strings(given)), key=len, default="") for given in exchange.output if given.get("type") == "compaction"]  # the messages it returns are the request's own
    return [m for m in marks if len(m) >= SHORTEST]


def _carried(exchange: Exchange, text: str) -> bool:
    """Whether ``text`` (the letters and digits of an output or of a later request) holds ``exchange``'s answer."""
    return any(mark in text for mark in _marks(exchange))


def carried_answers(out_text: str, answered: Sequence[Exchange]) -> list[Exchange]:
    """The answered exchanges whose answer the output carries: in it, or folded into a carried
    answer (its request held the answer: a summary of summaries, a chunked summary merged)."""
    carried = [e for e in answered if _carried(e, out_text)]
    grew = True
    while grew:
        sent = [alnum("\n".join(strings(e.body))) for e in carried]
        more = [e for e in answered if e not in carried and any(_carried(e, s) for s in sent)]
        carried += more
        grew = bool(more)
    return carried


def summary_kept(fmt: WireFormat, history: Any, out: Any, exchanges: Sequence[Exchange]) -> Violation | None:
    """CORE-18: a compaction that removed input items after the summarizer answered it carries an
    answer in the output, and every removed item a request of this call held and got an answer for
    is carried by such an answer (in the output itself, or folded into one that is): a summary
    obtained and then lost, while what it replaced stays removed, is silent loss."""
    answered = [e for e in exchanges if _marks(e)]
    if not answered or not fmt.well_formed(out) or same(history, out):
        return None
    gone = removed(fmt, history, out)
    if not gone:
        return None
    out_text = alnum("\n".join(strings(fmt.items(out))))
    carried = carried_answers(out_text, answered)
    read_by = [(e, alnum("\n".join(strings(e.body)))) for e in answered]
    kept_by = alnum("\n".join(s for e in carried for s in strings(e.body)))
    for item in gone:
        needle = _needle(fmt.said(item))
        if not needle or needle in kept_by or not any(needle in sent for _, sent in read_by):
            continue
        index = next(i for i, b in enumerate(fmt.items(history)) if b is item)
        lost = next(e for e, sent in read_by if needle in sent)
        return Violation(
            "summary-lost",
            f"input item {index} ({fmt.role(item)}) was sent to the summarizer and removed, but no answer standing for it is in the output "
            f"(the summarizer answered {len(answered)} time(s), {len(carried)} answer(s) carried; lost: {_preview(lost.answer or list(lost.output))}; item: {_preview(item)})",
        )
    if not carried:
        return Violation(
            "summary-lost",
            f"the summarizer answered {len(answered)} time(s) during this compaction and {len(gone)} input item(s) were removed, "
            f"but no answer is in the output (first removed: {_preview(gone[0])}; an answer: {_preview(answered[0].answer or list(answered[0].output))})",
        )
    return None


# --- CORE-21: a placeholder that states how many messages it stands for states the true count


def _removed_count(fmt: WireFormat, history: Any, out: Any, new: Sequence[tuple[int, Any]]) -> tuple[int, int | None, int]:
    """How many input items the output no longer holds, as a framework counting its own messages may
    count them: at least the removed items with each run of neighbours of one role counted once (a
    framework holding parallel tool results in one message), at most every removed item (or, when
    duplicates hide removals, the input's items less those the output keeps, a join counted as the
    turns it joins); without a bound when
    an earlier summary was removed (None), since the count may be of everything removed so far.
    Returns (the least, the most, the removed items)."""
    before = fmt.items(history)
    gone_items = removed(fmt, history, out)
    gone = {id(item) for item in gone_items}
    low, previous = 0, None
    for index, item in enumerate(before):
        if id(item) not in gone:
            previous = None
            continue
        role = fmt.role(item)
        low += previous != (index - 1, role)
        previous = (index, role)
    fresh = {j for j, _ in new}
    kept = sum(max(1, fmt.joins(before, item)) for j, item in enumerate(fmt.items(out)) if j not in fresh)
    total = max(len(gone), len(before) - kept)
    return low, None if any(fmt.is_summary(item) for item in gone_items) else total, total


def count_stated(fmt: WireFormat, history: Any, out: Any, exchanges: Sequence[Exchange] = ()) -> Violation | None:
    """CORE-21: an output item standing for nothing of the input that states how many messages were
    removed ("Skipped 4 messages.") states a number between the removed items counted as a framework
    grouping parallel tool results would and all of them. A summarizer's answer inside the item is
    not read: only what the compactor itself wrote."""
    if not fmt.well_formed(out) or same(history, out):
        return None
    new = new_items(fmt, history, out)
    if not new:
        return None
    counted: tuple[int, int | None, int] | None = None
    for j, item in new:
        text = "\n".join(strings(item))
        for exchange in exchanges:
            if exchange.answer:
                text = text.replace(exchange.answer, "")
        for words, count in stated_counts(text):
            counted = counted or _removed_count(fmt, history, out, new)
            low, high, total = counted
            if count < low or (high is not None and count > high):
                between = f"at least {low}" if high is None else f"{low}" if low == high else f"{low} to {high}"
                return Violation(
                    "placeholder-count-wrong",
                    f"{_where(fmt, out, j)} says {words!r}, but the compaction removed {between} message(s) "
                    f"({total} input item(s); {low} counting each run of one role as one message)",
                )
    return None


# --- CORE-40: a tool result the compactor shortened fits the cap the framework states


RESULT_ROLES = ("tool", "function_call_output", "custom_tool_call_output")
"""The roles (`WireFormat.role`) of an item that is one tool result: a chat-completions ``tool``
message, a Responses output item. An Anthropic ``user`` message may hold several results and text
besides, so CORE-40 is not judged there yet (SPEC CORE-40 Decision)."""


def trimmed_results_fit(fmt: WireFormat, history: Any, out: Any, cap: int) -> Violation | None:
    """CORE-40: every tool result the compaction changed in place (the same call's result, other
    text: `WireFormat.corresponds` and not verbatim) holds at most ``cap`` characters of what the
    model reads (`WireFormat.said`). A result kept verbatim is not judged, however long: what to
    shorten is the framework's choice, how short is what it states."""
    if not fmt.well_formed(out) or same(history, out):
        return None
    before = [item for item in fmt.items(history) if fmt.role(item) in RESULT_ROLES]
    for j, after in enumerate(fmt.items(out)):
        if fmt.role(after) not in RESULT_ROLES:
            continue
        for item in before:
            if fmt.role(item) != fmt.role(after) or same(item, after) or not fmt.corresponds(item, after):
                continue
            was, now = len(fmt.said(item)), len(fmt.said(after))
            if now > cap:
                return Violation(
                    "trimmed-result-over-cap",
                    f"{_where(fmt, out, j)}: a tool result shortened from {was} to {now} characters, over the {cap} the framework states for a result it trims",
                )
    return None


# --- CORE-71: a compaction leaves no more items than the window the framework states


def kept_items_fit(fmt: WireFormat, history: Any, out: Any, window: int) -> Violation | None:
    """CORE-71: a compaction (the output differs from the input) of a history holding more than ``window`` items,
    system prompt aside, leaves at most ``window`` of them. A history returned as it came is not judged here
    (whether the framework fires is FIRE-1's)."""
    if not fmt.well_formed(out) or same(history, out):
        return None
    held = [item for item in fmt.items(history) if fmt.role(item) not in SYSTEM_ROLES]
    kept = [item for item in fmt.items(out) if fmt.role(item) not in SYSTEM_ROLES]
    if len(held) <= window or len(kept) <= window:
        return None
    return Violation(
        "kept-items-over-window",
        f"a history of {len(held)} items compacted to {len(kept)}, over the {window} the framework states it keeps (system prompt aside)",
    )


# --- CORE-50: a call sent as an item is not also restated in a message the compaction wrote


def call_ids(item: Any) -> list[str]:
    """The call ids a tool call or result item of any wire format carries: a chat-completions
    message's ``tool_calls`` ids or ``tool_call_id``, a Responses item's ``call_id`` (a hosted tool
    call without one, `HOSTED_CALLS`, by its item ``id``: the one id naming it), a Messages API
    turn's ``tool_use`` ids and ``tool_result`` ``tool_use_id`` s."""
    if not isinstance(item, dict):
        return []
    hosted = item.get("id") if item.get("type") in HOSTED_CALLS and not item.get("call_id") else None
    found = [c.get("id") for c in item.get("tool_calls") or [] if isinstance(c, dict)] + [item.get("tool_call_id"), item.get("call_id"), hosted]
    content = item.get("content")
    if isinstance(content, list):
        found += [b.get("id") if b.get("type") == "tool_use" else b.get("tool_use_id") for b in content if isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result")]
    return [i for i in found if isinstance(i, str) and len(i) >= 6]


RESTATED_MESSAGE_CHARS = 40
"""The fewest letters and digits a sent message's text holds for CORE-50 to match it restated: a
sentence, which no transcript carries by chance ("ok", "Done." do not count)."""

_ESCAPED = re.compile(r"\\u([0-9a-fA-F]{4})|\\([nrtbf])")


def _unescaped(text: str) -> str:
    """``text`` with the JSON escapes a transcript's rendering adds (``\\n``, ``\\u00e9``) read back, so
    that comparing letters and digits does not take an escape's letter for the message's own."""
    return _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)) if m.group(1) else " ", text)


def _lines(text: str) -> list[str]:
    """The lines of a message's text (its parts are joined one a line), each reduced to letters and
    digits (`alnum`), the empty ones left out: what a rendering keeps whole even where it writes the
    parts apart (a JSON record of a content list) or the lines apart."""
    return [line for line in map(alnum, text.splitlines()) if line]


def _message_texts(fmt: WireFormat, items: Sequence[Any]) -> list[tuple[int, str]]:
    """The messages among ``items`` (a user or assistant message with no call or result of its own),
    each with its text."""
    return [(j, fmt.said(item)) for j, item in enumerate(items) if not call_ids(item) and fmt.role(item) in ("user", "assistant")]


def _restated(said: str, written: str, others: Sequence[str]) -> bool:
    """Whether ``written`` (`alnum`) holds every line of a message's text ``said`` (`_lines`), more than
    that, and no other message (``others``, not the one ``written`` is) holding ``said`` and held by
    ``written`` explains it: a longer message restated carries the shorter one inside it."""
    lines, whole = _lines(said), alnum(said)
    if len(whole) < RESTATED_MESSAGE_CHARS or len(whole) >= len(written) or not all(line in written for line in lines):
        return False
    return not any(alnum(o) != whole and whole in alnum(o) and alnum(o) in written for o in others)


def _written_text(item: Any, exchanges: Sequence[Exchange]) -> str:
    """What the compaction itself wrote in ``item``: its strings without the summarizer's answers."""
    text = "\n".join(strings(item))
    for exchange in exchanges:
        if exchange.answer:
            text = text.replace(exchange.answer, "").replace(exchange.answer.strip(), "")
    return text


def restated_calls(fmt: WireFormat, history: Any, out: Any, exchanges: Sequence[Exchange] = ()) -> Violation | None:
    """CORE-50: no message the compaction wrote (an output item standing for nothing of the input and
    carrying no call of its own) restates, by its call id, a tool call or result the output also sends
    as an item, or, by its whole text, a message the output also sends (`_restated`). A
    summarizer's answer inside the message is not read: only what the compactor wrote."""
    if not fmt.well_formed(out) or same(history, out):
        return None
    sent: dict[str, int] = {}
    for j, item in enumerate(fmt.items(out)):
        for i in call_ids(item):
            sent.setdefault(i, j)
    mine = _message_texts(fmt, fmt.items(out))
    before = [t for _, t in _message_texts(fmt, fmt.items(history))]
    messages = [(k, t) for k, t in mine if len(alnum(t)) >= RESTATED_MESSAGE_CHARS]
    if not sent and not messages:
        return None
    written = [(j, _written_text(item, exchanges)) for j, item in new_items(fmt, history, out) if not call_ids(item)]
    for j, text in written:
        restated = [i for i in sent if i in text]
        if restated:
            return Violation(
                "call-restated-and-sent",
                f"{_where(fmt, out, j)}, written by the compaction, restates call {restated[0]!r}, which {_where(fmt, out, sent[restated[0]])} also sends "
                f"as it is ({len(restated)} call id(s) both restated and sent): the model reads each such action twice",
            )
    for j, text in written:
        others = before + [t for k, t in mine if k != j]
        said_in = alnum(_unescaped(text))
        quoted = [(k, said) for k, said in messages if k != j and _restated(said, said_in, others)]
        if quoted:
            k = quoted[0][0]
            return Violation(
                "message-restated-and-sent",
                f"{_where(fmt, out, j)}, written by the compaction, restates the whole text of {_where(fmt, out, k)} "
                f"({_preview(fmt.said(fmt.items(out)[k]))}), which the output also sends as it is ({len(quoted)} message(s) both restated and sent): "
                "the model reads that message twice",
            )
    return None


# --- CORE-60: a transcript the compactor writes itself carries each message it takes in whole

TRANSCRIPT_START_CHARS = 40
"""How many letters and digits of a message's start show a transcript took it in (CORE-60): a sentence's
worth, which no other text carries by chance."""


def transcript_whole(fmt: WireFormat, history: Any, out: Any, exchanges: Sequence[Exchange] = ()) -> Violation | None:
    """CORE-60: a compaction that asked no summarizer and wrote a message carrying the start of an input
    message it does not send as an item (a transcript it renders itself) carries that message whole
    (every line of it, `_lines`, in one output item) somewhere in the output; a start carried while the
    rest is nowhere is a message cut, and a transcript said to be the conversation so far then reads as
    the whole of it. The start is the first `TRANSCRIPT_START_CHARS` letters and digits of the message's
    first line (half that at least); a start another input message also holds is not read (that
    message may be the one carried)."""
    if exchanges or not fmt.well_formed(out) or same(history, out):
        return None
    written = [(j, alnum(_unescaped(_written_text(item, ())))) for j, item in new_items(fmt, history, out) if not call_ids(item)]
    if not written:
        return None
    before = _message_texts(fmt, fmt.items(history))
    carried = [w for _, w in written] + [alnum(_unescaped("\n".join(strings(item)))) for item in fmt.items(out)]
    verbatim = set(map(canonical, fmt.items(out)))
    for i, text in before:
        item, lines = fmt.items(history)[i], _lines(text)
        start = (lines or [""])[0][:TRANSCRIPT_START_CHARS]
        if len(alnum(text)) <= TRANSCRIPT_START_CHARS or len(start) < TRANSCRIPT_START_CHARS // 2 or _kept(fmt, fmt.items(out), verbatim, item):
            continue
        if any(all(line in c for line in lines) for c in carried):
            continue
        if any(k != i and (alnum(t).startswith(start) or start in alnum(t)) for k, t in before):
            continue
        cut = next((j for j, w in written if start in w), None)
        if cut is not None:
            return Violation(
                "transcript-cuts-message",
                f"{_where(fmt, out, cut)}, written by the compaction with no summarizer call, carries the start of input item {i} ({fmt.role(item)}) "
                f"but not the rest of it, which no output item holds ({len(alnum(text))} letters and digits, {_preview(fmt.said(item))}): the transcript drops part of the message without a word",
            )
    return None


# --- CORE-61: a transcript the compactor writes itself gives each message record a role

RECORD_ROLES = frozenset({"user", "assistant", "system", "developer", "tool", "function"})
"""The roles a message record may name (CORE-61): the message roles of every wire format."""


def _records(text: str) -> Iterable[dict[str, Any]]:
    """The JSON objects ``text`` holds outside one another (a transcript's records), left to right."""
    decoder, at = json.JSONDecoder(), text.find("{")
    while at != -1:
        try:
            value, end = decoder.raw_decode(text, at)
        except ValueError:
            at = text.find("{", at + 1)
            continue
        if isinstance(value, dict):
            yield value
        at = text.find("{", end)


def transcript_roles(fmt: WireFormat, history: Any, out: Any, exchanges: Sequence[Exchange] = ()) -> Violation | None:
    """CORE-61: a message the compaction wrote without a summarizer, holding messages as JSON records
    (``{"role": ..., "content": ...}``), names in each a message role: one of `RECORD_ROLES`, or one an
    input item or a record the input itself holds names. A record of a made-up role (a record re-read as
    a ``role: text`` line, its role the text before the first colon) is a message whose speaker the next
    model cannot tell, however whole its letters."""
    if exchanges or not fmt.well_formed(out) or same(history, out):
        return None
    known = RECORD_ROLES | {str(fmt.role(item)) for item in fmt.items(history)}
    known |= {r["role"] for s in strings(history) for r in _records(s) if isinstance(r.get("role"), str)}
    for j, item in new_items(fmt, history, out):
        made_up = [r for r in _records(_written_text(item, ())) if isinstance(r.get("role"), str) and r["role"] not in known] if not call_ids(item) else []
        if made_up:
            role = made_up[0]["role"]
            return Violation("transcript-record-role-made-up", f"{_where(fmt, out, j)}, written by the compaction with no summarizer call, holds a message record of role {role!r}, a role no message has ({len(made_up)} such record(s), {_preview(made_up[0])}): the next model cannot tell who said it")
    return None


# --- CORE-31: an image or file does not vanish from a kept item without a word


def _outside_media(value: Any) -> Iterable[str]:
    """Every string of ``value`` but those of its media parts (their data, URLs and types). A ``type``
    that is no string (a JSON schema's list of types, as a structured-output tool spec carries) names
    no media part."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict) and not (isinstance(value.get("type"), str) and value["type"] in media.KINDS):
        for v in value.values():
            yield from _outside_media(v)
    elif isinstance(value, list):
        for v in value:
            yield from _outside_media(v)


TRUNCATED = re.compile(r"truncat|clipped|shortened|omitted|elided|\[\s*\.\.\.|\.\.\.\s*\]", re.IGNORECASE)
"""Words by which a placeholder says the content it stands beside is only a part of it."""


def _lost(item: Any, after: Any) -> list[dict[str, Any]]:
    """The media parts of ``item`` that ``after`` no longer holds (none when it holds as many: re-encoded)."""
    mine, theirs = media.parts(item), media.parts(after)
    if len(theirs) >= len(mine):
        return []
    held = {media.payload(p) for p in theirs}
    return [p for p in mine if media.payload(p) not in held]


def _keeps(fmt: WireFormat, item: Any, after: Any) -> bool:
    """Whether output item ``after`` keeps input item ``item``: `WireFormat.corresponds`, or (a
    message without calls) the same role saying the same text."""
    if fmt.corresponds(item, after):
        return True
    return fmt.role(item) == fmt.role(after) and not calls_tools(item) and bool(fmt.said(item).strip()) and fmt.said(item) == fmt.said(after)


def _partial(said_before: str, said_after: str) -> bool:
    """Whether an output item shows part of what its input item said, or says it was truncated: the
    model reads what is left as the item's whole content, so a missing image must be named."""
    needle = _needle(said_before)
    return bool(needle and needle in alnum(said_after)) or bool(TRUNCATED.search(said_after))


def media_named(fmt: WireFormat, history: Any, out: Any) -> Violation | None:
    """CORE-31: an output item that keeps an input item (verbatim, masked in place, re-encoded, or a
    message saying the same text) and shows part of what it said, or says it was truncated, holds
    each of its images and files or names what is gone: a word for its kind ("image", "file",
    "document", a media type) that the input item did not already say. Held means its payload (URL,
    data, file id) is there; an item with as many media parts is re-encoded. An item masked whole by
    a placeholder stands for all of it; an item removed is CORE-12's. A part left standing as the whole
    has the model read an image's result as text (langchain-ai/deepagents#4954)."""
    if not fmt.well_formed(out) or same(history, out):
        return None
    outs = fmt.items(out)
    before = [(i, item) for i, item in enumerate(fmt.items(history)) if media.parts(item)]
    # an item some output item keeps with all its media is kept, whatever else says the same text
    before = [(i, item) for i, item in before if not any(_keeps(fmt, item, o) and not _lost(item, o) for o in outs)]
    if not before:
        return None
    for j, after in enumerate(outs):
        for index, item in before:
            lost = _lost(item, after)
            if not lost or not _keeps(fmt, item, after):
                continue
            read_before, read_after = "\n".join(_outside_media(item)), "\n".join(_outside_media(after))
            of = media.kind(lost[0])
            if not _partial(fmt.said(item), read_after) or media.named(read_after, of) > media.named(read_before, of):
                continue
            return Violation(
                "media-dropped-silently",
                f"{_where(fmt, out, j)} keeps input item {index} ({fmt.role(item)}) without its {of} "
                f"({len(lost)} of {len(media.parts(item))} media part(s) gone) and names none of it in their place: {_preview(after)}",
            )
    return None


# --- SUM-6: a summarizer request carries an image or file as media, never its data as text


PAYLOAD_PROBE = 64
"""How many characters from the middle of an inline payload show it in a request's text: the
middle, since images of one size share their header and trailer (SPEC SUM-6 Decision)."""


def _probe(payload: str) -> str:
    if len(payload) < 2 * PAYLOAD_PROBE or payload.startswith(("https://", "http://")):
        return ""
    middle = len(payload) // 2
    return payload[middle - PAYLOAD_PROBE // 2 : middle + PAYLOAD_PROBE // 2]


def inline_media(history: Any) -> list[dict[str, Any]]:
    """The media parts of ``history`` whose payload is inline data long enough to be looked for."""
    return [part for part in media.parts(history) if _probe(media.payload(part))]


def media_as_text(history: Any, exchanges: Sequence[Exchange]) -> Violation | None:
    """SUM-6: no summarizer request of this call holds the inline data of an image or file of the
    history in its text (a transcript rendering a message's content whole, base64 and all): the
    provider reads it as text, thousands of tokens for a small image, where it counts the image as
    an image for a few hundred, and the summarizer reads noise."""
    probes = [(part, probe) for part in inline_media(history) if (probe := _probe(media.payload(part)))]
    if not probes:
        return None
    for exchange in exchanges:
        text = "\n".join(_outside_media(exchange.body))
        for part, probe in probes:
            if probe in text:
                length = len(media.payload(part))
                return Violation(
                    "media-payload-as-text",
                    f"the summarizer request to {exchange.request.path} holds the base64 data of an {media.kind(part)} of the history as text "
                    f"({length:,} characters, about {length // 4:,} tokens read as text; the provider counts the {media.kind(part)} itself as {media.part_tokens(part, 'openai'):,})",
                )
    return None


# --- CORE-43: no output item holds an image's or file's inline data as text


FRAGMENT = 48
"""How many consecutive characters of an inline payload, in an output item's text, show its data
there as text (SPEC CORE-43 Decision): any 48 of them, where SUM-6 looks for the middle, since a
compactor that cuts a rendering short keeps its start."""

FRAGMENT_STEP = 8
"""The step between the windows of a base64 run tried against the payloads: a fragment of 55
characters or more holds one of them whole."""

BASE64_RUN = re.compile(rf"[A-Za-z0-9+/]{{{FRAGMENT},}}")


def _fragment_of(run: str, payloads: Sequence[str], history_text: str) -> str | None:
    """The payload ``run`` (a base64 run of an output's text) holds a window of, where the history's
    own text did not hold that window already."""
    for start in range(0, len(run) - FRAGMENT + 1, FRAGMENT_STEP):
        window = run[start : start + FRAGMENT]
        if window in history_text:
            continue
        for payload in payloads:
            if window in payload:
                return payload
    return None


def media_data_in_text(fmt: WireFormat, history: Any, out: Any) -> Violation | None:
    """CORE-43: no output item holds, in its text (outside its media parts), 48 consecutive
    characters of the inline data of an image or file of the history that the history's own text
    did not hold: the model reads base64 as text, a token for every three or four characters, and
    reads noise where an image was (a trimmer slicing ``str()`` of a tool output's content list,
    openai/openai-agents-python#4173)."""
    if not fmt.well_formed(out) or same(history, out):
        return None
    parts = {media.payload(part): part for part in inline_media(history)}
    if not parts:
        return None
    history_text = "\n".join(_outside_media(history))
    for j, after in enumerate(fmt.items(out)):
        for run in BASE64_RUN.findall("\n".join(_outside_media(after))):
            payload = _fragment_of(run, list(parts), history_text)
            if payload is None:
                continue
            of = media.kind(parts[payload])
            article = "an" if of[0] in "aeiou" else "a"
            return Violation(
                "media-data-as-text",
                f"{_where(fmt, out, j)} holds {len(run):,} characters of the base64 data of {article} {of} of the history as text "
                f"(about {len(run) // 4:,} tokens the model reads as text, where the {of} whole is {media.part_tokens(parts[payload], 'openai'):,} as media): {_preview(after)}",
            )
    return None


# --- all of them, on one output


def every_output(fmt: WireFormat, history: Any, out: Any, exchanges: Sequence[Exchange], declared: Sequence[str]) -> dict[str, Violation | None]:
    """CORE-14, CORE-16, CORE-17, CORE-18, CORE-21, CORE-31, CORE-43, CORE-50, CORE-60, CORE-61 and CORE-62 on one output (CORE-12 is judged apart: it needs to
    know whether the summarizer failed and whether the target summarizes at all)."""
    return {
        "CORE-14": newest_round_kept(fmt, history, out, exchanges),
        "CORE-16": something_left(fmt, history, out),
        "CORE-17": providers.broken(declared, fmt, history, out),
        "CORE-18": summary_kept(fmt, history, out, exchanges),
        "CORE-21": count_stated(fmt, history, out, exchanges),
        "CORE-31": media_named(fmt, history, out),
        "CORE-43": media_data_in_text(fmt, history, out),
        "CORE-50": restated_calls(fmt, history, out, exchanges),
        "CORE-60": transcript_whole(fmt, history, out, exchanges),
        "CORE-61": transcript_roles(fmt, history, out, exchanges),
        "CORE-62": error_marks.error_mark_kept(fmt, history, out),
    }


# --- WIN-1: no summarizer request over the summarizer model's context window


def within_window(exchanges: Sequence[Exchange]) -> Violation | None:
    """WIN-1: no summarizer request of this call held more than the summarizer model's context
    window (the test double answered it HTTP 400 as the provider does: ``context_length_exceeded``,
    "prompt is too long")."""
    for exchange in exchanges:
        if exchange.over_window is not None:
            return Violation(
                "summarizer-request-over-window",
                f"the summarizer request to {exchange.request.path} exceeds the summarizer's context window: the provider answers HTTP 400 {str(exchange.over_window)!r}",
            )
    return None
