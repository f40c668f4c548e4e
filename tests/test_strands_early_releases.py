"""Strands 0.1 (May-June 2025) on the sliding window's reactive path (`adapters.strands.SUPPORTED_BY_PATH`).

The installed Strands is 1.x, so what differs at 0.1 is shown with doubles standing in for its
interfaces, each as 0.1's source has it (strands-agents 0.1.4 and 0.1.7): a manager method taking
``messages``, a model class answering through a synchronous ``converse``, the event loop's own
``handle_input_too_long_error``, and a manager dropping dangling messages. The releases themselves are
driven by ``compaction-suite matrix --bugs`` (strands-agents/harness-sdk#152 at 0.1.0 and 0.1.8).
"""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from compaction_suite.conformance.settings import Settings


def _reactive() -> Any:
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    from compaction_suite.adapters import _strands_reactive

    return _strands_reactive


class _Agent:
    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.messages = messages


def _result(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "status": "success", "content": [{"text": text}]}}]}


def test_a_manager_method_taking_messages_is_given_the_agents_messages():
    reactive = _reactive()
    agent = _Agent([{"role": "user", "content": [{"text": "hi"}]}])

    def old(messages: list[Any], e: Exception | None = None) -> None:  # 0.1.0-0.1.6: apply_management(messages)
        """A double of the 0.1 signature."""

    def new(agent: Any, e: Exception | None = None) -> None:  # 0.1.7 on: apply_management(agent)
        """A double of the later signature."""

    assert reactive.subject(old, agent) is agent.messages
    assert reactive.subject(new, agent) is agent


def test_a_model_class_with_converse_is_called_through_it():
    """0.1's ``Model.converse(messages, tool_specs, system_prompt)`` is a synchronous generator; an error
    it raises while read is the call's."""
    reactive = _reactive()
    seen: list[Any] = []

    class Converses:  # double: a 0.1 model class
        def converse(self, messages: list[Any], tool_specs: Any = None, system_prompt: str | None = None) -> Any:
            seen.append((len(messages), system_prompt))
            yield {"messageStart": {"role": "assistant"}}
            raise RuntimeError("overflow while streaming")

    with pytest.raises(RuntimeError, match="overflow while streaming"):
        reactive.call(Converses(), [{"role": "user", "content": [{"text": "hi"}]}], "sys")
    assert seen == [(1, "sys")]


def _early_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Doubles of 0.1.7's ``strands.event_loop.error_handler`` (its ``handle_input_too_long_error``) and
    ``message_processor`` (its newest-first search and its replacement text), as that release has them."""
    handler = types.ModuleType("strands.event_loop.error_handler")
    handler.handle_input_too_long_error = lambda *args, **kwargs: None  # type: ignore[attr-defined]
    processor = types.ModuleType("strands.event_loop.message_processor")

    def find(messages: list[Any]) -> int | None:
        found = [i for i, m in enumerate(messages) if any("toolResult" in b for b in m["content"])]
        return found[-1] if found else None

    def truncate(messages: list[Any], index: int) -> bool:
        for block in messages[index]["content"]:
            block["toolResult"].update(status="error", content=[{"text": "The tool result was too large!"}])
        return True

    processor.find_last_message_with_tool_results = find  # type: ignore[attr-defined]
    processor.truncate_tool_results = truncate  # type: ignore[attr-defined]
    import strands.event_loop as package

    monkeypatch.setitem(sys.modules, "strands.event_loop.error_handler", handler)
    monkeypatch.setitem(sys.modules, "strands.event_loop.message_processor", processor)
    monkeypatch.setattr(package, "error_handler", handler, raising=False)
    monkeypatch.setattr(package, "message_processor", processor, raising=False)


def test_the_installed_release_has_no_event_loop_reduction():
    reactive = _reactive()
    assert reactive.event_loop_reduction(_Agent([])) is None


def test_before_0_1_8_the_event_loop_masks_the_newest_result_and_retries_whatever_it_changed(monkeypatch):
    """``handle_input_too_long_error`` masks the newest tool result and calls the loop again even when the
    mask was already there, so an overflow that masking does not cure retries without end (#152); a
    history without a tool result reaches the manager's ``reduce_context``."""
    reactive = _reactive()
    from strands.types.exceptions import ContextWindowOverflowException

    _early_event_loop(monkeypatch)
    agent = _Agent([{"role": "user", "content": [{"text": "task"}]}, _result("old"), {"role": "user", "content": [{"text": "q"}]}, _result("new")])
    calls: list[Any] = []

    class Manager:  # double: the manager, recording what reaches it
        def reduce_context(self, agent: Any, e: Exception | None = None) -> None:
            calls.append(e)

    reduce = reactive.reduced_by(Manager(), agent)
    overflow = ContextWindowOverflowException("input length and `max_tokens` exceed context limit")
    assert reduce(overflow) and reduce(overflow)  # the second changes nothing and still retries
    assert agent.messages[3]["content"][0]["toolResult"]["content"] == [{"text": "The tool result was too large!"}]
    assert agent.messages[1] == _result("old") and calls == []
    assert not reduce(RuntimeError("not an overflow"))

    plain = _Agent([{"role": "user", "content": [{"text": "task"}]}])
    assert not reactive.reduced_by(Manager(), plain)(overflow) and calls == [overflow]


def test_the_routine_path_is_refused_where_the_manager_drops_dangling_messages(monkeypatch):
    """0.1's ``apply_management`` first drops a trailing user turn (the cleanup after a failed invocation):
    the routine path is one line naming why, the reactive path still runs."""
    pytest.importorskip("strands")
    from strands.agent.conversation_manager import SlidingWindowConversationManager

    from compaction_suite.adapters import strands
    from compaction_suite.adapters._common import CannotDrive

    monkeypatch.setattr(SlidingWindowConversationManager, "_remove_dangling_messages", lambda self, messages: None, raising=False)
    settings = Settings(base_url="http://127.0.0.1:9/v1")
    with pytest.raises(CannotDrive, match=r"adapter strands:sliding_window cannot drive strands-agents .*: path=routine: .*dangling"):
        strands.sliding_window(settings, window_size=6)
    assert strands.sliding_window(settings, window_size=6, path="reactive") is not None


def test_a_bedrock_model_without_a_block_formatter_is_read_back_as_its_blocks():
    """0.1's ``BedrockModel.format_request`` sends the history's Converse blocks as they are (it has no
    ``_format_request_message_content``), so the adapter reads them back directly."""
    pytest.importorskip("strands")
    from compaction_suite.adapters import strands

    BedrockModel = type("BedrockModel", (), {})  # double: a 0.1 BedrockModel, by its class name
    render = strands.renderer(BedrockModel())
    assert render({"text": "hi"}) == {"type": "text", "text": "hi"}
    assert render({"toolUse": {"toolUseId": "t1", "name": "read", "input": {}}}) == {"type": "tool_use", "id": "t1", "name": "read", "input": {}}


def test_the_context_manager_facade_is_driven_from_where_each_preset_arrived(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Agent(context_manager="auto")`` arrived in 1.43.0 and ``"agentic"`` in 1.44.0, as a facade over a
    ``SummarizingConversationManager`` and a ``ContextOffloader``; 1.55.0 replaced it by ``ContextManager``.
    Each preset runs from its release, a strategy preset from 1.56.0, and below that the factory says so."""
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install -e '.[strands]')")
    from compaction_suite.adapters import strands
    from compaction_suite.adapters._common import CannotDrive

    def at(found: tuple[int, ...]) -> None:
        monkeypatch.setattr(strands, "release", lambda distribution: found)

    at((1, 43, 0))
    assert strands._context_manager_value("context_manager", "auto") == "auto"
    with pytest.raises(CannotDrive, match=r"context_manager='agentic'\) arrived in 1\.44\.0"):
        strands._context_manager_value("context_manager", "agentic")
    assert [o.get("preset") for _, o in strands._context_managers(strands.CONTEXT_MANAGER_SUMMARIZING)] == ["auto"]
    at((1, 42, 0))
    with pytest.raises(CannotDrive, match=r"context_manager='auto'\) arrived in 1\.43\.0"):
        strands._context_manager_value("context_manager", "auto")
    assert strands._context_managers(strands.CONTEXT_MANAGER_SUMMARIZING + strands.CONTEXT_SESSIONS) == []
    at((1, 55, 0))
    assert strands._context_managers(strands.CONTEXT_MANAGER) == []
    with pytest.raises(CannotDrive, match="strategy presets"):
        strands._context_manager_value("context_manager", "stale_tool_cleanup")
    at((1, 56, 0))
    assert strands._context_manager_value("context_manager", "stale_tool_cleanup") == {"strategies": ["stale_tool_cleanup"]}
