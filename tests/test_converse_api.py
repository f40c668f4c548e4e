"""The summarizer test double answers Amazon Bedrock's Converse API (issue 21: Strands' default model),
checked with boto3's own ``bedrock-runtime`` client pointed at it with ``endpoint_url``, offline:
``Converse`` and ``ConverseStream`` (the AWS event-stream framing, read by botocore's decoder), the
``ValidationException`` answers of the rules SPEC CORE-13's Converse Decision names, and the faults
Bedrock is documented to send."""

from __future__ import annotations

from typing import Any

import pytest

from compaction_suite.conformance import eventstream
from compaction_suite.conformance.summarizer_server import SummarizerServer

boto3 = pytest.importorskip("boto3", reason="boto3 comes with the frameworks extra (strands-agents)")
Config = pytest.importorskip("botocore.config").Config
EventStreamBuffer = pytest.importorskip("botocore.eventstream").EventStreamBuffer
ClientError = pytest.importorskip("botocore.exceptions").ClientError

MODEL = "us.anthropic.claude-sonnet-4-20250514-v1:0"
ASK = {"role": "user", "content": [{"text": "Please fix the failing build"}]}
USE = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "runCommand", "input": {"command": "make"}}}]}
RESULT = {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "make: ok"}], "status": "success"}}]}
SAID = {"role": "assistant", "content": [{"text": "It builds."}]}
THEN = {"role": "user", "content": [{"text": "Summarize this conversation."}]}
TOOLS = {"tools": [{"toolSpec": {"name": "noop", "description": "Does nothing.", "inputSchema": {"json": {"type": "object", "properties": {}}}}}]}


def client(server: SummarizerServer) -> Any:
    root = server.base_url.removesuffix("/v1")
    config = Config(retries={"total_max_attempts": 1}, read_timeout=5, connect_timeout=5)
    return boto3.client("bedrock-runtime", endpoint_url=root, region_name="us-west-2", aws_access_key_id="test", aws_secret_access_key="test", config=config)


def streamed_text(answer: dict[str, Any]) -> str:
    return "".join(e["contentBlockDelta"]["delta"].get("text", "") for e in answer["stream"] if "contentBlockDelta" in e)


def test_event_stream_messages_decode_with_botocore() -> None:
    """The encoder's messages are what botocore's own decoder reads back: headers, payload, both CRCs."""
    buffer = EventStreamBuffer()
    buffer.add_data(eventstream.event("messageStart", {"role": "assistant"}) + eventstream.event("contentBlockDelta", {"delta": {"text": "é"}}))
    decoded = list(buffer)
    assert [m.headers[":event-type"] for m in decoded] == ["messageStart", "contentBlockDelta"]
    assert decoded[1].payload.decode("utf-8") == '{"delta":{"text":"é"}}' and decoded[0].headers[":message-type"] == "event"


def test_converse_and_converse_stream_answer_the_same_text(server: SummarizerServer) -> None:
    bedrock = client(server)
    whole = bedrock.converse(modelId=MODEL, messages=[ASK, USE, RESULT, SAID, THEN], system=[{"text": "Summarize."}], toolConfig=TOOLS)
    streamed = bedrock.converse_stream(modelId=MODEL, messages=[ASK, USE, RESULT, SAID, THEN], system=[{"text": "Summarize."}], toolConfig=TOOLS)
    text = whole["output"]["message"]["content"][0]["text"]
    assert text.startswith("Deterministic test-double summary of 6 messages") and streamed_text(streamed) == text
    assert whole["stopReason"] == "end_turn" and whole["usage"]["inputTokens"] > 0
    assert [e.api for e in server.exchanges] == ["converse", "converse"] and server.exchanges[1].request.path.endswith("/converse-stream")


ANSWERED = [  # (messages, toolConfig, Bedrock's answer: the reason id, None = accepted)
    ([ASK, USE, RESULT, SAID, THEN], None, "bedrock-converse:tool-blocks-without-tool-config"),
    ([ASK, USE, RESULT, SAID, THEN], TOOLS, None),
    ([ASK, SAID, THEN], None, None),
    ([SAID, THEN], None, "bedrock-converse:first-turn-not-user"),
    ([ASK, SAID, RESULT], TOOLS, "bedrock-converse:orphan-tool-result"),
    ([RESULT, SAID, THEN], TOOLS, "bedrock-converse:orphan-tool-result"),
    ([ASK, USE, RESULT, RESULT], TOOLS, "bedrock-converse:orphan-tool-result"),
    ([ASK, USE, THEN], TOOLS, "bedrock-converse:tool-use-without-result"),
    ([ASK, USE, SAID, THEN], TOOLS, "bedrock-converse:tool-use-without-result"),
    ([{"role": "user", "content": [USE["content"][0], {"text": "Summary of the work so far."}]}, SAID, THEN], TOOLS, "bedrock-converse:user-toolUse"),
    ([{"role": "user", "content": [{"reasoningContent": {"reasoningText": {"text": "weighing it"}}}, {"text": "Summary."}]}, SAID, THEN], None, "bedrock-converse:user-reasoningContent"),
    ([ASK, {"role": "assistant", "content": [{"text": " "}]}, THEN], None, "bedrock-converse:blank-text"),
    # one role's consecutive messages are one turn (SPEC, the Decision on Converse turns): accepted
    ([ASK, THEN, SAID], None, None),
    ([ASK, USE, RESULT, THEN], TOOLS, None),
    ([ASK, SAID, USE, RESULT], TOOLS, None),
]


@pytest.mark.parametrize(("messages", "tools", "reason_id"), ANSWERED)
def test_validation_exceptions_name_bedrocks_rules(server: SummarizerServer, messages: list, tools: dict | None, reason_id: str | None) -> None:
    """SPEC CORE-13, Converse Decision: Bedrock's ``ValidationException`` texts (cited in `conformance.converse`)."""
    bedrock = client(server)
    extra = {"toolConfig": tools} if tools is not None else {}
    if reason_id is None:
        assert streamed_text(bedrock.converse_stream(modelId=MODEL, messages=messages, **extra))
        assert server.exchanges[-1].rejected is None
        return
    for call in (bedrock.converse, bedrock.converse_stream):
        with pytest.raises(ClientError) as raised:
            call(modelId=MODEL, messages=messages, **extra)
        assert raised.value.response["Error"]["Code"] == "ValidationException"
        assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
        rejected = server.exchanges[-1].rejected
        assert rejected is not None and rejected.reason_id == reason_id and str(rejected).split(" (bedrock-converse")[0] in str(raised.value)


@pytest.mark.parametrize(("fault", "code"), [("429", "ThrottlingException"), ("500", "InternalServerException"), ("503", "ServiceUnavailableException")])
def test_documented_errors_carry_bedrocks_codes(server: SummarizerServer, fault: str, code: str) -> None:
    server.fault(fault, times=1)
    with pytest.raises(ClientError) as raised:
        client(server).converse_stream(modelId=MODEL, messages=[ASK])
    assert raised.value.response["Error"]["Code"] == code and server.counts[fault] == 1


def test_faults_bedrock_is_not_known_to_send_are_not_sent(server: SummarizerServer) -> None:
    server.fault("empty_content", times=1)
    assert streamed_text(client(server).converse_stream(modelId=MODEL, messages=[ASK]))
    assert server.counts["unsent:empty_content"] == 1


def test_a_forced_tool_is_called_streamed_and_whole(server: SummarizerServer) -> None:
    """``toolChoice: {"any": {}}`` forces a call of an offered tool (a ``toolUse`` block, stop reason ``tool_use``)."""
    bedrock = client(server)
    forced = {**TOOLS, "toolChoice": {"any": {}}}
    whole = bedrock.converse(modelId=MODEL, messages=[ASK], toolConfig=forced)
    assert whole["stopReason"] == "tool_use" and whole["output"]["message"]["content"][0]["toolUse"]["name"] == "noop"
    events = list(bedrock.converse_stream(modelId=MODEL, messages=[ASK], toolConfig=forced)["stream"])
    start = next(e["contentBlockStart"]["start"]["toolUse"] for e in events if "contentBlockStart" in e)
    assert start["name"] == "noop" and start["toolUseId"].startswith("tooluse_testdouble_")
    assert next(e["messageStop"]["stopReason"] for e in events if "messageStop" in e) == "tool_use"


def test_a_prompt_over_the_window_is_bedrocks_overflow_answer(server: SummarizerServer) -> None:
    """SPEC WIN-1: "Input is too long for requested model." (what Strands' ``BedrockModel`` maps to a context overflow)."""
    server.window(5)
    with pytest.raises(ClientError) as raised:
        client(server).converse_stream(modelId=MODEL, messages=[ASK, SAID, THEN])
    assert raised.value.response["Error"]["Code"] == "ValidationException" and "Input is too long for requested model" in str(raised.value)
    assert server.exchanges[-1].over_window is not None
