"""langmem's ``SummarizationNode`` as LangGraph's prebuilt ReAct agent runs it: its ``pre_model_hook``.

``create_react_agent(model, tools, pre_model_hook=SummarizationNode(..., output_messages_key=
"llm_input_messages"))`` (langmem's documented recipe; langgraph ``chat_agent_executor``) runs the node on
the agent's state before every model call; the node returns ``llm_input_messages``, which the agent's
model node sends instead of ``state["messages"]`` (after the agent's ``prompt``, a system message kept
outside the hook), and ``context["running_summary"]``, which the state keeps for the next call.

The adapter runs the node on a state holding the history (and no running summary: each compaction is a
fresh thread) and hands back ``llm_input_messages``; ``tests/test_langmem_path.py`` shows
``create_react_agent``'s own loop sends its model exactly those messages. The node's sizes are
langmem's: ``max_tokens`` (what the output must fit), ``max_tokens_before_summary`` (the trigger;
``None`` is ``max_tokens``), ``max_summary_tokens`` (kept for the summary); the token counter
``count_tokens_approximately``, its default.
"""

from __future__ import annotations

from typing import Any

from ._common import CannotDrive, requires

EXTRA = "langchain"

DEFAULTS: dict[str, Any] = {
    "max_tokens": 1024,
    "max_tokens_before_summary": None,
    "max_summary_tokens": 256,
    "system": "agent",  # "agent": create_react_agent's prompt (outside the hook); "state": a SystemMessage in the state
    "tool_messages": "plain",
    "format": "chat-completions",
    "summarizer": "agent",  # "agent": the agent's own chat model; "bedrock": ChatBedrockConverse (langchain-aws) on Bedrock's Converse API
}
"""``SummarizationNode``'s sizes as langmem's guide sets them for a ReAct agent, scaled to the suite's
histories (its default ``max_summary_tokens`` is 256). ``summarizer``: the node's ``model``, a class of its
own (langmem's recipe binds a summarization model apart from the agent's): ``"bedrock"`` is
``ChatBedrockConverse`` on the suite's Bedrock Converse API, which the node sends the messages it
summarizes as they are (``toolUse``/``toolResult`` blocks among them, langmem#102)."""


def node(model: Any, o: dict[str, Any]) -> Any:
    """The ``SummarizationNode`` the agent's ``pre_model_hook`` is, its summarizer ``model``. Sizes langmem
    refuses (``max_summary_tokens`` not below ``max_tokens``) are built as given: langmem raises on them when
    the node runs, inside ``compact`` (the framework's crash, CORE-10; SPEC "The framework matrix and
    releases", Decision on a documented configuration the framework refuses), never here."""
    short_term = requires("langmem.short_term", EXTRA)
    utils = requires("langchain_core.messages", EXTRA).utils
    return short_term.SummarizationNode(
        model=model,
        max_tokens=int(o["max_tokens"]),
        max_tokens_before_summary=None if o["max_tokens_before_summary"] is None else int(o["max_tokens_before_summary"]),
        max_summary_tokens=int(o["max_summary_tokens"]),
        token_counter=utils.count_tokens_approximately,
        output_messages_key="llm_input_messages",
    )


def hooked(hook: Any, converted: list[Any]) -> list[Any]:
    """What the agent's model is sent after ``hook`` ran on a state holding ``converted``: its
    ``llm_input_messages`` (langgraph's ``call_model`` reads that key before ``messages``)."""
    update = hook.invoke({"messages": list(converted)})
    if "llm_input_messages" not in update:
        raise CannotDrive("langchain:langmem_summarization", "langmem", "SummarizationNode gave no llm_input_messages")
    return list(update["llm_input_messages"])


def trigger(o: dict[str, Any]) -> dict[str, int]:
    """The documented trigger: "Maximum number of tokens to accumulate before triggering summarization.
    Defaults to the same value as `max_tokens` if not provided." (langmem 0.0.30, ``summarize_messages``),
    counted by ``count_tokens_approximately`` over the messages after a leading system message."""
    before = o["max_tokens_before_summary"]
    return {"tokens": int(o["max_tokens"] if before is None else before)}


def counted(messages: list[Any]) -> int:
    """The node's own count of ``messages``: ``count_tokens_approximately`` of each message after a
    leading ``SystemMessage``, summed (``_preprocess_messages``)."""
    lc = requires("langchain_core.messages", EXTRA)
    rest = messages[1:] if messages and isinstance(messages[0], lc.SystemMessage) else messages
    return sum(int(lc.utils.count_tokens_approximately([m])) for m in rest)
