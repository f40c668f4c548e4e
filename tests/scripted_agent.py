"""An agent model for the OpenAI Agents SDK's loop tests: the SDK's ``OpenAIResponsesModel`` on the suite's
summarizer TEST DOUBLE, each request scripted (`summarizer_apis.SCRIPTED`) by a fixed policy: after a user
message ``ROUND_CALLS`` parallel ``read_file`` calls, after their outputs more calls until
``ROUNDS_PER_TURN`` rounds followed the last user message, then a text answer. The double stores and
chains each response as the Responses API does (`conformance.response_chains`)."""

from __future__ import annotations

import itertools
import json
from typing import Any

ROUND_CALLS = 2
ROUNDS_PER_TURN = 2


def _kind(item: dict[str, Any]) -> str:
    return str(item.get("type", "message" if "role" in item else ""))


def next_step(items: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """The policy's answer (its ``n``-th) to a request whose input is ``items``."""
    since_user: list[str] = []
    for item in reversed(items):
        if _kind(item) == "message" and item.get("role") == "user":
            break
        since_user.append(_kind(item))
    rounds = sum(1 for a, b in zip(since_user, [*since_user[1:], None]) if a == "function_call" and b != "function_call")
    if since_user and since_user[0] == "function_call_output" and rounds >= ROUNDS_PER_TURN:
        return [{"type": "message", "id": f"msg_loop{n}", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "text": f"done after {ROUNDS_PER_TURN} rounds", "annotations": []}]}]
    return [
        {"type": "function_call", "id": f"fc_loop{n}_{k}", "call_id": f"call_loop{n}_{k}", "name": "read_file", "arguments": json.dumps({"path": f"f{n}_{k}.py"}), "status": "completed"}
        for k in range(ROUND_CALLS)
    ]


def agent_model(client: Any) -> Any:
    """The scripted model on ``client`` (an ``AsyncOpenAI`` on the double), through the adapter's `scripted_model`."""
    from agents.models import openai_responses

    from compaction_suite.adapters.openai_agents import scripted_model

    answered = itertools.count(1)
    return scripted_model(openai_responses, lambda given: next_step(given, next(answered)))(model="gpt-4.1", openai_client=client)
