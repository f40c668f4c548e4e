"""Images and files in histories (`conformance.media`; SPEC CORE-31, SUM-6, FIRE-2 Decision: media):
what a media part is in each wire format, what a provider counts for it, and the judges that read them."""

from __future__ import annotations

import base64
from types import SimpleNamespace
from typing import Any

import pytest

from compaction_suite.conformance import formats, judges, media
from compaction_suite.conformance.histories import pdf_part, png

PNG = "data:image/png;base64," + base64.b64encode(png(64, 64, 7)).decode("ascii")
DATA = PNG.removeprefix("data:image/png;base64,")


def _chat_round(result: Any) -> list[dict[str, Any]]:
    call = {"id": "call_1", "type": "function", "function": {"name": "readFile", "arguments": '{"path": "assets/chart-0001.png"}'}}
    return [
        {"role": "user", "content": "Look at the chart."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": result},
    ]


IMAGE_RESULT = [{"type": "text", "text": "Read assets/chart-0001.png"}, {"type": "image_url", "image_url": {"url": PNG}}]


def test_a_tool_results_image_is_a_media_part_in_anthropic_and_responses() -> None:
    """The same chat-level result maps to an Anthropic ``tool_result`` image block and a Responses
    ``input_image`` output part, one payload in both."""
    anthropic = formats.get("anthropic-messages").from_chat(_chat_round(IMAGE_RESULT))
    responses = formats.get("responses").from_chat(_chat_round(IMAGE_RESULT))
    found = [media.parts(anthropic), media.parts(responses)]
    assert [[p["type"] for p in f] for f in found] == [["image"], ["input_image"]]
    assert {media.payload(f[0]) for f in found} == {DATA}


def test_a_json_schema_type_list_is_no_media_part() -> None:
    """A request's tool schema may say ``"type": ["string", "null"]`` (a pydantic optional field, as
    Strands' structured output sends it in a Converse ``toolConfig``): it is read past, not a media part
    (the summarizer double answered such a request with its own HTTP 500 before)."""
    schema = {"toolConfig": {"tools": [{"toolSpec": {"inputSchema": {"json": {"properties": {"summary": {"type": ["string", "null"]}}}}}}]}}
    assert media.parts(schema) == [] and media.tokens(schema, "anthropic") == 0
    entity = {"type": "tool_use", "id": "call_0002", "name": "createEntity", "input": {"type": "document", "title": "the"}}
    assert media.parts({"messages": [{"role": "assistant", "content": [entity]}]}) == [], "a tool input saying type 'document' carries no file"

def test_a_chat_tool_message_keeps_text_only() -> None:
    """A chat-completions ``tool`` message takes text parts only (openai-python's
    ``ChatCompletionToolMessageParam``): the chat histories draw no media in one."""
    chat = formats.get("chat-completions")
    assert chat.invalid(_chat_round("plain text")) is None


@pytest.mark.parametrize(
    ("size", "detail", "openai", "anthropic"),
    [((64, 64), "auto", 255, 6), ((64, 64), "low", 85, 6), ((1024, 1024), "high", 765, 1399), ((2048, 4096), "auto", 1105, 1640)],
)
def test_images_count_as_their_provider_counts_them(size: tuple[int, int], detail: str, openai: int, anthropic: int) -> None:
    """OpenAI's tiles (fit 2048, shorter side 768, 170 a 512-pixel tile plus 85) and Anthropic's
    width x height / 750 after a long edge of 1,568 (their vision guides)."""
    assert media.openai_image_tokens(*size, detail) == openai
    assert media.anthropic_image_tokens(*size) == anthropic


def test_a_png_is_measured_from_its_header_and_an_unseen_image_counts_a_tile() -> None:
    part = {"type": "image_url", "image_url": {"url": PNG}}
    assert media.image_size(part) == (64, 64)
    assert media.part_tokens(part, "openai") == 255
    unseen = {"type": "image_url", "image_url": {"url": "https://images.example.com/a.png"}}
    assert media.part_tokens(unseen, "openai") == media.openai_image_tokens(media.UNSEEN_SIDE, media.UNSEEN_SIDE)


def test_words_name_media_by_kind() -> None:
    assert media.named("[image removed: re-read assets/chart.png]", "image") == 1
    assert media.named("Output was truncated. The full content is at /charts/q3.png. Use read_file", "image") == 0
    assert media.named("[1 PDF document omitted]", "file") == 2


# --- CORE-31


def _anthropic(result: Any) -> dict[str, Any]:
    return formats.get("anthropic-messages").from_chat(_chat_round(result))


def _with_result(request: dict[str, Any], content: Any) -> dict[str, Any]:
    messages = [dict(m) for m in request["messages"]]
    block = dict(messages[-1]["content"][0])
    block["content"] = content
    messages[-1] = {**messages[-1], "content": [block]}
    return {**request, "messages": messages}


FMT = formats.get("anthropic-messages")
HISTORY = _anthropic(IMAGE_RESULT)


def test_an_image_dropped_under_a_truncation_notice_fails() -> None:
    """deepagents' overflow clip at 0.7.32: the text kept, the image gone, a notice naming no image."""
    notice = "Read assets/chart-0001.png\n\n[Output was truncated due to context window size limits. The full content is at assets/chart-0001.png.]"
    problem = judges.media_named(FMT, HISTORY, _with_result(HISTORY, notice))
    assert problem is not None and problem.reason_id == "media-dropped-silently"
    assert "without its image" in str(problem)


@pytest.mark.parametrize(
    "content",
    [
        pytest.param([{"type": "text", "text": "Read assets/chart-0001.png"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": DATA}}], id="kept"),
        pytest.param("Read assets/chart-0001.png [image omitted: re-read the file to see it]", id="named"),
        pytest.param("[cleared]", id="masked-whole"),
    ],
)
def test_an_image_kept_named_or_masked_whole_holds(content: Any) -> None:
    assert judges.media_named(FMT, HISTORY, _with_result(HISTORY, content)) is None



def test_an_item_kept_with_its_image_is_not_judged_against_another_saying_the_same() -> None:
    """A user turn kept verbatim with its image holds, though an earlier user turn without one says the
    same words (the reference's output on a drawn history, judged on every output, once failed here)."""
    chat = formats.get("chat-completions")
    image = {"type": "image_url", "image_url": {"url": PNG}}
    history = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "How do I the?"},
        {"role": "assistant", "content": "Like this."},
        {"role": "user", "content": "Older question."},
        {"role": "assistant", "content": "Older answer."},
        {"role": "user", "content": [{"type": "text", "text": "How do I the?"}, image]},
    ]
    out = [history[0], history[1], history[2], history[5]]
    assert judges.media_named(chat, history, out) is None
    assert judges.media_named(chat, history, [history[0], history[1], history[2], {"role": "user", "content": "How do I the? [truncated]"}]) is not None

# --- SUM-6


def _exchange(body: dict[str, Any]) -> Any:
    return SimpleNamespace(body=body, request=SimpleNamespace(path="/v1/chat/completions"))


def test_an_images_base64_in_a_summarizer_requests_text_fails() -> None:
    history = [{"role": "user", "content": [{"type": "text", "text": "What is this?"}, {"type": "image_url", "image_url": {"url": PNG}}]}]
    dumped = {"messages": [{"role": "user", "content": f"Summarize: {history!r}"}]}
    problem = judges.media_as_text(history, [_exchange(dumped)])
    assert problem is not None and problem.reason_id == "media-payload-as-text"
    as_media = {"messages": [{"role": "user", "content": [{"type": "text", "text": "Summarize:"}, {"type": "image_url", "image_url": {"url": PNG}}]}]}
    assert judges.media_as_text(history, [_exchange(as_media)]) is None


# --- FIRE-2's PDF


def test_fire2s_pdf_is_one_page_of_tens_of_kb_to_a_provider() -> None:
    """The PDF variant's part (SPEC FIRE-2 Decision: media): a valid one-page PDF whose embedded stream
    makes it tens of kB of base64, which the provider counts as one page, not by its size."""
    part = pdf_part(7, 24_000)
    raw = base64.b64decode(part["file"]["file_data"].split(",", 1)[1])
    assert raw.startswith(b"%PDF-1.4") and raw.rstrip().endswith(b"%%EOF") and raw.count(b"/Type /Page ") == 1
    assert len(part["file"]["file_data"]) > 30_000
    assert media.part_tokens(part, "openai") == media.PDF_PAGE_TOKENS == media.part_tokens(pdf_part(7), "anthropic")
