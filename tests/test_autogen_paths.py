"""AutoGen's declarative path (``adapters/autogen.py``, ``loaded_from: "component"``): a model context
with ``initial_messages``, serialized by ``dump_component`` and loaded back by ``load_component``, as
AutoGen Studio and a team's JSON configuration load it, then read by ``AssistantAgent``'s own loop.

microsoft/autogen#8207: at 0.7.5 ``BufferedChatCompletionContext._from_config`` passes
``config.model_dump()`` to the constructor, so the loaded initial messages are dicts; the agent's
OpenAI client refuses them (``ValueError: Unknown message type``). The other contexts pass the
validated messages and read them back as ``LLMMessage`` objects."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("autogen_agentchat", reason="AutoGen AgentChat is not installed (pip install -e '.[autogen]')")

SETTINGS = SimpleNamespace(model="gpt-4o", base_url="http://127.0.0.1:9/v1", api_key="k", summarizer_timeout=1.0, summary_prompt=None, async_client=None)
HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": "read a.py"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "print(1)"},
    {"role": "assistant", "content": "it prints 1"},
    {"role": "user", "content": "and b.py?"},
]


def _fixed_from_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """Double of autogen#8207's fix (not released): ``_from_config`` passes the validated messages."""
    from autogen_core.model_context import BufferedChatCompletionContext

    def _from_config(cls: Any, config: Any) -> Any:
        return cls(buffer_size=config.buffer_size, initial_messages=config.initial_messages)

    monkeypatch.setattr(BufferedChatCompletionContext, "_from_config", classmethod(_from_config))


def _loaded_buffered(buffer_size: int) -> Any:
    from autogen_core import ComponentModel
    from autogen_core.model_context import BufferedChatCompletionContext, ChatCompletionContext

    from compaction_suite.adapters.autogen import to_autogen

    context = BufferedChatCompletionContext(buffer_size=buffer_size, initial_messages=to_autogen(HISTORY)[0])
    text = context.dump_component().model_dump_json()
    return ChatCompletionContext.load_component(ComponentModel.model_validate_json(text))


def _agent_turn(context: Any) -> None:
    """One turn of ``AssistantAgent`` with ``context`` on autogen-ext's OpenAI client (no request is sent:
    the client converts the view before it sends anything)."""
    from autogen_agentchat.agents import AssistantAgent
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    from compaction_suite.adapters.autogen import MODEL_INFO

    client = OpenAIChatCompletionClient(model="gpt-4o", base_url="http://127.0.0.1:9/v1", api_key="k", model_info=MODEL_INFO, max_retries=0)  # type: ignore[arg-type]
    agent = AssistantAgent("coder", model_client=client, model_context=context)
    asyncio.run(agent.run(task="go on"))


def test_the_agent_loop_crashes_on_a_buffered_context_loaded_from_its_component() -> None:
    context = _loaded_buffered(3)
    if all(not isinstance(m, dict) for m in context._messages):
        pytest.skip("this autogen-core loads the buffered context's messages as LLMMessage objects (autogen#8207 fixed)")
    with pytest.raises(ValueError, match="Unknown message type"):
        _agent_turn(context)


def test_the_adapter_crashes_as_the_loop_does_and_not_at_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    from compaction_suite.adapters import autogen

    compactor = autogen.buffered(SETTINGS, buffer_size=3, loaded_from="component")
    if all(not isinstance(m, dict) for m in _loaded_buffered(3)._messages):
        pytest.skip("autogen#8207 fixed in this autogen-core")
    with pytest.raises(ValueError, match="Unknown message type"):
        asyncio.run(compactor.compact(HISTORY, iteration=0))
    _fixed_from_config(monkeypatch)
    assert asyncio.run(compactor.compact(HISTORY, iteration=0)) == HISTORY[-2:]  # the leading result message is dropped, as in code


@pytest.mark.parametrize(("factory", "options"), [("buffered", {"buffer_size": 3}), ("head_and_tail", {"head_size": 1, "tail_size": 2}), ("token_limited", {"token_limit": 30})])
def test_a_loaded_context_gives_what_the_context_built_in_code_gives(monkeypatch: pytest.MonkeyPatch, factory: str, options: dict[str, Any]) -> None:
    """The round trip changes nothing but the objects (conversion notes follow them), where the release loads
    the messages as messages: the declarative path is judged on the context's own view, never on the adapter."""
    from compaction_suite.adapters import autogen

    _fixed_from_config(monkeypatch)
    history = [*HISTORY[:1], {"role": "user", "name": "ana", "content": [{"type": "text", "text": "see"}]}, *HISTORY[1:]]
    built = asyncio.run(getattr(autogen, factory)(SETTINGS, **options).compact(history, iteration=0))
    loaded = asyncio.run(getattr(autogen, factory)(SETTINGS, **options, loaded_from="component").compact(history, iteration=0))
    assert loaded == built and json.dumps(loaded) != json.dumps(history)  # compacted, and alike
