"""The judges of SPEC STORE-30 to STORE-32 and CORE-65 on hand-made outputs, and deepagents' eviction path
on results without a call id (the installed release names each apart: deepagents#6302's fix)."""

from __future__ import annotations

import base64

import pytest

from compaction_suite.conformance import offloads, retention
from compaction_suite.conformance.formats import chat


def _round(call_id: str, text: str) -> list[dict]:
    call = {"id": call_id, "type": "function", "function": {"name": "search", "arguments": "{}"}}
    return [{"role": "assistant", "content": None, "tool_calls": [call]}, {"role": "tool", "tool_call_id": call_id, "content": text}]


HISTORY = [{"role": "user", "content": "find both"}, *_round("", "A" * 900), *_round("", "B" * 900), {"role": "assistant", "content": "done"}]


def _notice(path: str) -> str:
    return f"Result too large, saved to {path}"


def test_a_notice_that_reads_back_another_result_fails() -> None:
    store = {"/offloaded/unknown": b"B" * 900}
    out = [dict(m, content=_notice("/offloaded/unknown")) if m["role"] == "tool" else m for m in HISTORY]
    found = offloads.unreadable(HISTORY, out, store.get, ["/offloaded/"])
    assert found is not None and found.reason_id == "offload-not-the-result"
    assert "call ''" in str(found)


def test_notices_that_read_back_their_own_results_pass() -> None:
    store = {"/offloaded/1": b"A" * 900, "/offloaded/2": b"B" * 900}
    out, n = [], 0
    for m in HISTORY:
        if m["role"] == "tool":
            n += 1
            m = dict(m, content=_notice(f"/offloaded/{n}"))
        out.append(m)
    assert offloads.unreadable(HISTORY, out, store.get, ["/offloaded/"]) is None
    empty: dict[str, bytes] = {}
    nothing = offloads.unreadable(HISTORY, out, empty.get, ["/offloaded/"])
    assert nothing is not None and nothing.reason_id == "offload-path-empty"


PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(64))).decode()
WITH_IMAGE = [{"role": "user", "content": [{"type": "text", "text": "look at this chart"}, {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}]}, {"role": "assistant", "content": "a rising line"}, {"role": "user", "content": "thanks"}]
SUMMARY = [{"role": "user", "content": "Summary. The history is at /history/h.md"}, WITH_IMAGE[-1]]


def test_an_archive_without_the_image_fails_and_one_naming_its_file_passes() -> None:
    text_only = {"/history/h.md": b"<message>look at this chart</message><message>a rising line</message>"}
    found = offloads.unreadable(WITH_IMAGE, SUMMARY, text_only.get, ["/history/"])
    assert found is not None and found.reason_id == "offload-archive-incomplete" and "image part" in str(found)
    with_file = {"/history/h.md": b"look at this chart &amp; <image url=\"/history/media/1.png\" /> a rising line", "/history/media/1.png": base64.b64decode(PNG)}
    assert offloads.unreadable(WITH_IMAGE, SUMMARY, with_file.get, ["/history/"]) is None


def test_a_result_over_the_stated_size_kept_whole_fails() -> None:
    kept = offloads.kept_over_limit(HISTORY, HISTORY, 200)
    assert kept is not None and kept.reason_id == "large-result-not-offloaded"
    assert offloads.kept_over_limit(HISTORY, HISTORY, 300) is None


@pytest.mark.parametrize(
    ("ids", "shown"),
    [
        (["call_a", "call_b"], "(tool, call 'call_a'): a result"),
        (["", ""], "(tool, call '' (the id of 2 results)): a result"),
        ([f"call_{'7' * 36}__thought__{'S' * 1_460}"] * 2, f"(tool, call 'call_{'7' * 35}...' (an id of 1,512 characters) (the id of 2 results))"),
        ([f"call_{'7' * 35}", "call_b"], f"(tool, call 'call_{'7' * 35}'): a result"),
    ],
)
def test_the_reason_shows_an_ids_length_and_how_many_results_share_it(ids: list[str], shown: str) -> None:
    """SPEC STORE-31 Decision (the id in the reason): the facts of an id a by-id offload fails on."""
    history = [{"role": "user", "content": "find both"}, *_round(ids[0], "A" * 900), *_round(ids[1], "B" * 900)]
    kept = offloads.kept_over_limit(history, history, 200)
    assert kept is not None and shown in str(kept)


def test_retention_counts_the_newest_messages_kept_as_they_were() -> None:
    history = [{"role": "user", "content": f"turn {i}"} if i % 2 == 0 else {"role": "assistant", "content": f"reply {i}"} for i in range(12)]
    summary = {"role": "user", "content": "[Context Summary] earlier turns"}
    assert retention.kept_fewer(history, [summary, *history[-8:]], ("messages", 8), chat.FORMAT.tokens) is None
    found = retention.kept_fewer(history, [summary, *history[-3:]], ("messages", 8), chat.FORMAT.tokens)
    assert found is not None and "ends with 3" in str(found)


def test_a_cut_may_move_past_the_results_of_a_round() -> None:
    history = [{"role": "user", "content": "go"}, *_round("c1", "one"), *_round("c2", "two"), {"role": "assistant", "content": "done"}]
    assert retention.wanted(history, "messages", 4, chat.FORMAT.tokens) == 3  # the 4th newest is c1's result


def test_deepagents_eviction_names_results_without_an_id_apart() -> None:
    pytest.importorskip("deepagents")
    from compaction_suite.adapters import deepagents
    from compaction_suite.conformance.settings import Settings

    compactor = deepagents.summarization(Settings(), path="eviction", evict_tokens=100)
    out = compactor.compact(HISTORY, iteration=1)
    paths = [offloads.named_paths(m, ["/large_tool_results/"]) for m in out if m["role"] == "tool"]
    assert len({p[0] for p in paths}) == 2
    assert offloads.unreadable(HISTORY, out, compactor.read_offload, compactor.capabilities["offloads"]) is None


FIRST = [{"role": "user", "content": "fetch the page"}, *_round("call_1", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nfirst body"), {"role": "assistant", "content": "fetched"}]
LATER = [{"role": "user", "content": "and the second"}, *_round("call_2", "second body"), {"role": "assistant", "content": "fetched again"}, {"role": "user", "content": "thanks"}]
ARCHIVED = {"role": "user", "content": "Summary. The history is at /history/h.md"}


def test_a_later_summary_naming_no_archive_fails() -> None:
    """STORE-32: the second compaction of a session removed messages and named no archive (deepagents#2247)."""
    second = [ARCHIVED, *LATER]
    out = [{"role": "user", "content": "Summary of it all."}, LATER[-1]]
    found = offloads.not_continued([*FIRST, *LATER], second, out, {"/history/h.md": b"fetch the page"}.get, ["/history/"])
    assert found is not None and found.reason_id == "archive-not-continued" and "names no path" in str(found)


def test_a_later_summary_whose_archive_holds_what_it_removed_passes() -> None:
    """STORE-32: the archive named holds every session message the second compaction removed; the first
    summary, the compaction's own message, is not asked of it."""
    second = [ARCHIVED, *LATER]
    out = [ARCHIVED, LATER[-1]]
    held = {"/history/h.md": "\n".join(m["content"] or "" for m in FIRST + LATER).encode() + b' {}'}
    assert offloads.not_continued([*FIRST, *LATER], second, out, held.get, ["/history/"]) is None
    partial = {"/history/h.md": b"fetch the page first body"}
    found = offloads.not_continued([*FIRST, *LATER], second, out, partial.get, ["/history/"])
    assert found is not None and found.reason_id == "archive-not-continued" and "hold nothing of its text" in str(found)
