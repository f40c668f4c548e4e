"""The Messages API's server-side compaction in the summarizer test double (SPEC Part A, "Wire formats",
Decision: the Messages API's server-side compaction; ANTH-7), read through the anthropic SDK's own beta
client, streamed and not."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import pytest

from compaction_suite.conformance import anthropic_compaction
from compaction_suite.conformance.formats import anthropic as anthropic_format
from compaction_suite.conformance.summarizer_apis import SCRIPTED
from compaction_suite.conformance.summarizer_server import SummarizerServer

STEP = [{"type": "text", "text": "Done."}]
LONG = "The build log line repeats with its warnings and the test names. " * 4000
"""About 56,000 tokens: past the API's minimum trigger."""


@pytest.fixture(scope="module")
def server() -> Iterator[SummarizerServer]:
    with SummarizerServer() as srv:
        yield srv


def client(server: SummarizerServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.base_url.removesuffix("/v1"), api_key="k", max_retries=0, timeout=30)


def ask(server: SummarizerServer, messages: list[dict[str, Any]], trigger: int = 50_000, *, stream: bool = False) -> Any:
    server.reset()
    edit = {"type": anthropic_compaction.EDIT, "trigger": {"type": "input_tokens", "value": trigger}}
    kwargs: dict[str, Any] = {
        "model": "claude-sonnet-4-6", "max_tokens": 1024, "messages": messages, "betas": [anthropic_compaction.BETA],
        "context_management": {"edits": [edit]}, "extra_body": {SCRIPTED: STEP},
    }  # fmt: skip
    beta = client(server).beta.messages
    if not stream:
        return beta.create(**kwargs)
    with beta.stream(**kwargs) as events:
        return events.get_final_message()


@pytest.mark.parametrize("stream", [False, True], ids=["parsed", "streamed"])
def test_past_the_trigger_the_answer_opens_with_the_compaction_block(server: SummarizerServer, stream: bool) -> None:
    answer = ask(server, [{"role": "user", "content": LONG}], stream=stream)
    assert [b.type for b in answer.content] == ["compaction", "text"]
    summary = answer.content[0].content
    assert summary and summary.startswith("Deterministic test-double summary")
    kinds = [i.type for i in answer.usage.iterations]
    assert kinds == ["compaction", "message"]
    compaction, message = answer.usage.iterations
    assert (answer.usage.input_tokens, answer.usage.output_tokens) == (message.input_tokens, message.output_tokens)
    assert compaction.input_tokens > 50_000 > message.input_tokens
    billed = [(s.api, s.input_tokens, s.output_tokens) for s in server.served]
    assert billed == [("compaction", compaction.input_tokens, compaction.output_tokens), ("model", message.input_tokens, message.output_tokens)]
    assert [e.api for e in server.exchanges] == ["anthropic"] and server.exchanges[0].server_side  # no fault sweep reaches it


def test_below_the_trigger_no_compaction(server: SummarizerServer) -> None:
    answer = ask(server, [{"role": "user", "content": "Fix the build."}])
    assert [b.type for b in answer.content] == ["text"]
    assert answer.usage.iterations is None
    assert [s.api for s in server.served] == ["model"] and not server.exchanges


def test_a_trigger_below_the_minimum_is_refused(server: SummarizerServer) -> None:
    with pytest.raises(anthropic.BadRequestError, match="at least 50000"):
        ask(server, [{"role": "user", "content": "Fix the build."}], trigger=1_000)


def test_a_request_is_read_from_its_compaction_block(server: SummarizerServer) -> None:
    """The blocks before the compaction block are dropped by the API: the long turn is not read again."""
    compacted = {"role": "assistant", "content": [{"type": "compaction", "content": "The build failed twice."}, *STEP]}
    answer = ask(server, [{"role": "user", "content": LONG}, compacted, {"role": "user", "content": "Go on."}])
    assert [b.type for b in answer.content] == ["text"] and answer.usage.input_tokens < 100


@pytest.mark.parametrize(
    ("block", "says"),
    [
        ({"type": "compaction", "content": "Summary.", "index": 0}, "messages.1.content.0.compaction.index: Extra inputs are not permitted"),
        ({"type": "compaction", "content": "Summary.", "encrypted_content": None}, "messages.1.content.0.compaction.encrypted_content: Extra inputs are not permitted"),
        ({"type": "compaction", "content": ""}, "messages.1.content.0.compaction.content: must be a non-empty string or null"),
    ],
    ids=["stream-index", "encrypted-content", "empty"],
)
def test_a_compaction_block_sent_back_as_the_api_refuses_it(server: SummarizerServer, block: dict[str, Any], says: str) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Fix the build."}, {"role": "assistant", "content": [block]}, {"role": "user", "content": "Go on."}]
    with pytest.raises(anthropic.BadRequestError, match=says.replace(".", r"\.")):
        ask(server, messages)


def test_a_failed_compaction_sent_back_is_accepted(server: SummarizerServer) -> None:
    """``content: null`` marks a failed compaction, which the server treats as a no-op."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Fix the build."}, {"role": "assistant", "content": [{"type": "compaction", "content": None}]}, {"role": "user", "content": "Go on."}]
    assert [b.type for b in ask(server, messages).content] == ["text"]


def test_anth7_judges_new_blocks_only() -> None:
    history: dict[str, Any] = {"messages": [{"role": "user", "content": "Fix it."}, {"role": "assistant", "content": [{"type": "compaction", "content": "S.", "index": 0}]}]}
    assert anthropic_format.check_compaction_blocks(history, history["messages"]) is None  # the caller's own block
    out = [{"role": "assistant", "content": [{"type": "compaction", "content": "S.", "index": 1}]}]
    found = anthropic_format.check_compaction_blocks(history, out)
    assert found is not None and found.reason_id == "compaction-block-extra-field"
    assert "messages.0.content.0.compaction.index: Extra inputs are not permitted" in str(found)
    empty = anthropic_format.check_compaction_blocks(history, [{"role": "assistant", "content": [{"type": "compaction", "content": ""}]}])
    assert empty is not None and empty.reason_id == "compaction-block-empty"
    assert anthropic_format.check_compaction_blocks(history, [{"role": "assistant", "content": [{"type": "compaction", "content": None, "cache_control": {"type": "ephemeral"}}]}]) is None
