"""The ``gemini`` provider rule set (SPEC CORE-17 and its Decision on what Gemini accepts of tool calls
and results): a model turn calling a tool must follow a user turn or a tool's result, as the Gemini API's
HTTP 400 says, in chat-completions and Anthropic histories; judged only where the input kept it."""

from __future__ import annotations

from compaction_suite.conformance import formats, providers

CHAT = formats.get(formats.CHAT)
ANTH = formats.get(formats.ANTHROPIC)

ASK = {"role": "user", "content": "Fix the build."}
SAID = {"role": "assistant", "content": "Looking at it."}
CALL = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "run", "arguments": "{}"}}]}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "make: ok"}
DONE = {"role": "assistant", "content": "It builds."}


def test_a_call_after_a_user_turn_or_a_result_keeps_the_rule() -> None:
    history = [{"role": "system", "content": "Be brief."}, ASK, CALL, RESULT, DONE]
    assert providers.broken(["gemini"], CHAT, history, history) is None


def test_a_call_after_another_model_turn_is_rejected_where_the_input_kept_the_rule() -> None:
    history = [ASK, SAID, {"role": "user", "content": "Go on."}, CALL, RESULT, DONE]
    out = [ASK, SAID, CALL, RESULT, DONE]  # the user turn between the two model turns dropped
    found = providers.broken(["gemini"], CHAT, history, out)
    assert found is not None and found.reason_id == "gemini:call-turn-not-after-user-turn", found
    assert "function call turn comes immediately after a user turn" in found and "turn 2" in found
    assert providers.broken(["gemini"], CHAT, out, out) is None, "the input broke it first: the caller's"
    assert providers.broken(["openai"], CHAT, history, out) is None, "OpenAI accepts consecutive assistant messages"


def test_the_rule_reads_anthropic_histories_too() -> None:
    history = ANTH.from_chat([ASK, SAID, {"role": "user", "content": "Go on."}, CALL, RESULT, DONE])
    out = {**history, "messages": [history["messages"][0], history["messages"][1], *history["messages"][3:]]}
    found = providers.broken(["gemini"], ANTH, history, out)
    assert found is not None and found.reason_id == "gemini:call-turn-not-after-user-turn"
    assert providers.broken(["bedrock-converse"], ANTH, history, out) is None
