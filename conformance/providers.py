"""Provider rule sets a target declares (SPEC CORE-17; agreed interface 1).

A compactor says which providers its histories go to with ``capabilities["providers"]``, a list of
`NAMES` (default: ``["openai"]`` for chat-completions and responses, ``["anthropic"]`` for
anthropic-messages). Each named set adds its provider's rules to the wire format's own clauses;
an unknown name is a contract error. OpenAI's and Anthropic's first-party rules are the format's
clauses (CORE-1..6, RESP-1..9, ANTH-1..5), so their sets add nothing here.

A rule is judged on the compacted output only where the input keeps it: the input is the
caller's, and a history the provider would reject before compaction is not the compactor's doing.

A set may also hold rules on the requests a compaction sends the summarizer (`REQUEST_RULES`, SPEC
CORE-13 Decision): for a target declaring that its summarizer requests reach a provider as the test
double sees them (``capabilities["summarizer_providers"]``), the double answers a request breaking one
as the provider does, HTTP 400 with its text (`request_broken`). Not for ``providers``: a framework's
own client may repair the request on its way (Strands' ``BedrockModel`` adds a no-op tool to a request
holding tool blocks), so a rule on the request envelope says nothing of a request seen through another client.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .violation import Violation

if TYPE_CHECKING:
    from .formats import WireFormat

NAMES = ("openai", "anthropic", "bedrock-converse", "gemini", "dashscope-qwq")
DEFAULT = {"chat-completions": ("openai",), "responses": ("openai",), "anthropic-messages": ("anthropic",)}
"""The providers a target of each wire format is checked for when it declares none."""


@dataclass(frozen=True)
class Rule:
    """One provider rule: its slug, the provider's own error text, where that is reported, and the check."""

    name: str
    says: str
    source: str
    broken: Callable[[WireFormat, Any], str | None]
    """``broken(fmt, history)``: None when the history keeps the rule, else where it does not."""


def _first_turn_not_user(fmt: WireFormat, history: Any) -> str | None:
    """Where the first turn after the system prompt is not a user turn (None: it is, or there is none)."""
    turns = [item for r in fmt.rounds(history) for item in r]
    if not turns or fmt.role(turns[0]) == "user":
        return None
    return f"the first turn after the system prompt is {fmt.role(turns[0])!r}, not 'user'"


FIRST_TURN_USER = Rule(
    "first-turn-not-user",
    "A conversation must start with a user message. Try again with a conversation that starts with a user message.",
    "Bedrock Converse's ValidationException, quoted in langgenius/dify#12340 and elastic/kibana#246393; "
    "a sliding window leaving a non-user first message: strands-agents/sdk-typescript#727",
    _first_turn_not_user,
)
GEMINI_FIRST_TURN_USER = Rule(
    "first-turn-not-user",
    "Please ensure that multiturn requests alternate between user and model.",
    "the Gemini API rejecting a history whose first content is a model turn: NousResearch/hermes-agent#55427",
    _first_turn_not_user,
)


def _calls(fmt: WireFormat, item: Any) -> bool:
    """Whether ``item`` is a model turn calling a tool: a chat-completions assistant message with
    ``tool_calls``, an Anthropic assistant message holding a ``tool_use`` block."""
    if not isinstance(item, Mapping) or item.get("role") != "assistant":
        return False
    if fmt.name == "chat-completions":
        return bool(item.get("tool_calls"))
    content = item.get("content")
    return fmt.name == "anthropic-messages" and isinstance(content, list) and any(isinstance(b, Mapping) and b.get("type") == "tool_use" for b in content)


def _call_turn_after_model_turn(fmt: WireFormat, history: Any) -> str | None:
    """Where a model turn calling a tool follows another model turn (None: every one follows a user
    turn or a tool's result). Not judged on Responses items: how a client maps an assistant message and
    the call items after it onto Gemini's turns differs by client."""
    turns = [item for r in fmt.rounds(history) for item in r]
    for i in range(1, len(turns)):
        if _calls(fmt, turns[i]) and fmt.role(turns[i - 1]) == "assistant":
            return f"turn {i} after the system prompt, a model turn calling a tool, follows another model turn, not a user turn or a tool's result"
    return None


GEMINI_CALL_AFTER_USER = Rule(
    "call-turn-not-after-user-turn",
    "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
    "the Gemini API's HTTP 400 INVALID_ARGUMENT, quoted in google-gemini/gemini-cli#26486, lobehub/lobehub#7298 and, "
    "after a compaction, FMXExpress/PasClaw#262 (SPEC CORE-17 Decision: what Gemini accepts of tool calls and results)",
    _call_turn_after_model_turn,
)
RULES: dict[str, tuple[Rule, ...]] = {
    "openai": (),
    "anthropic": (),
    "bedrock-converse": (FIRST_TURN_USER,),
    "gemini": (GEMINI_FIRST_TURN_USER, GEMINI_CALL_AFTER_USER),
    "dashscope-qwq": (),
}


@dataclass(frozen=True)
class RequestRule:
    """One provider rule on a request sent to its model: its slug, the provider's text, its source, the check."""

    name: str
    says: str
    source: str
    broken: Callable[[str, Mapping[str, Any]], str | None]
    """``broken(api, body)``: None when the request keeps the rule, else where it does not (``api``:
    ``chat``, ``anthropic``, the test double's name for the API the request was sent to)."""


def _tool_blocks(api: str, body: Mapping[str, Any]) -> str | None:
    """Where a request first holds a tool call or a tool result (Converse's ``toolUse`` /
    ``toolResult`` once the client maps it), in the chat-completions or the Messages API shape."""
    from .formats import anthropic, chat

    messages = body.get("messages")
    for i, m in enumerate(messages if isinstance(messages, list) else []):
        if api == "chat" and ((isinstance(m, dict) and m.get("role") == "tool") or chat.call_ids(m)):
            return f"messages.[{i}] ({m.get('role')}) holds a tool {'result' if m.get('role') == 'tool' else 'call'}"
        if api == "anthropic" and (anthropic.tool_uses(m) or anthropic.tool_results(m)):
            return f"messages.{i} ({m.get('role')}) holds a {'tool_use' if anthropic.tool_uses(m) else 'tool_result'} block"
    return None


def _tool_blocks_without_tools(api: str, body: Mapping[str, Any]) -> str | None:
    """Where a request holds tool calls or results but defines no tool (no non-empty ``tools``)."""
    tools = body.get("tools")
    if isinstance(tools, list) and tools:
        return None
    found = _tool_blocks(api, body)
    return f"{found} but the request defines no tools" if found else None


TOOL_CONFIG = RequestRule(
    "tool-blocks-without-tool-config",
    "The toolConfig field must be defined when using toolUse and toolResult content blocks.",
    "Bedrock Converse's ValidationException, quoted in strands-agents/harness-sdk#998 (a summarization request "
    "holding the conversation's toolUse/toolResult blocks and no tools), langchain-ai/langchain-aws#591 and "
    "langchain-ai/langmem#102 (summarizer calls), langgenius/dify#16421",
    _tool_blocks_without_tools,
)


def _not_streamed(api: str, body: Mapping[str, Any]) -> str | None:
    """Where a chat-completions request does not ask for a streamed answer (``stream`` absent or false)."""
    if api != "chat" or body.get("stream") is True:
        return None
    return f"the request sets stream={body.get('stream')!r}, not true"


STREAM_ONLY = RequestRule(
    "non-streaming-request",
    "This model only support stream mode, please enable the stream parameter to access the model. ",
    "Alibaba Cloud Model Studio's OpenAI-compatible chat API for its stream-only QwQ models, HTTP 400 "
    "invalid_parameter_error, quoted in FoundationAgents/OpenManus#330 and infiniflow/ragflow#5912 (qwq-32b, "
    "qwq-plus); a compaction's summary request on such a model: pydantic/pydantic-ai-harness#619",
    _not_streamed,
)
REQUEST_RULES: dict[str, tuple[RequestRule, ...]] = {
    "openai": (),
    "anthropic": (),
    "bedrock-converse": (TOOL_CONFIG,),
    "gemini": (),
    "dashscope-qwq": (STREAM_ONLY,),
}
"""The rules each provider set adds on a request sent to its model (SPEC CORE-13): OpenAI's and
Anthropic's are the test double's own checks of their APIs (`conformance.summarizer_apis`)."""


def request_broken(declared: Sequence[str], api: str, body: Mapping[str, Any]) -> Violation | None:
    """CORE-13: the first rule of a declared provider that a summarizer request breaks, as the
    provider's HTTP 400 (its text), or None."""
    for provider in declared:
        for rule in REQUEST_RULES.get(provider, ()):
            where = rule.broken(api, body)
            if where is not None:
                return Violation(f"{provider}:{rule.name}", f"{rule.says} ({provider}: {where}; {rule.source})")
    return None


def unknown(names: Sequence[Any]) -> list[Any]:
    """The declared names that are no provider rule set."""
    return [name for name in names if name not in RULES]


def rules(declared: Sequence[str]) -> list[tuple[str, Rule]]:
    """(provider, rule) for every rule the declared providers add."""
    return [(provider, rule) for provider in declared for rule in RULES.get(provider, ())]


def broken(declared: Sequence[str], fmt: WireFormat, history: Any, out: Any) -> Violation | None:
    """CORE-17: the first rule of a declared provider that the output breaks and the input kept."""
    if not fmt.well_formed(out):
        return None
    for provider, rule in rules(declared):
        where = rule.broken(fmt, out)
        if where is not None and rule.broken(fmt, history) is None:
            return Violation(f"{provider}:{rule.name}", f"{where}: {provider} rejects it with HTTP 400 {rule.says!r} ({rule.source})")
    return None
