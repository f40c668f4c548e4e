"""The request and response shapes of each API the summarizer TEST DOUBLE answers (SPEC Part A,
"Wire formats"; `conformance.summarizer_server` serves them with the same modes and faults).

- ``chat``: OpenAI chat-completions, ``POST /v1/chat/completions`` (and Azure's deployment path);
  its bodies live in `summarizer_server` itself.
- ``responses``: OpenAI Responses, ``POST /v1/responses``: the summary is one output
  ``message`` with an ``output_text`` part.
- ``compact``: ``POST /v1/responses/compact``, what ``client.responses.compact(model=...,
  input=[...])`` calls (the OpenAI Agents SDK's ``OpenAIResponsesCompactionSession`` does, with
  the session's items as ``input``; openai-agents 0.24.0,
  ``agents/memory/openai_responses_compaction_session.py``). The answer is a
  ``response.compaction`` object whose ``output`` is the input's user messages followed by one
  ``compaction`` item, as OpenAI's reference describes it, with the input's assistant messages
  among the user messages, their ids kept and their reasoning items not (gpt-5.4's output,
  openai/openai-agents-python#2727). The item's ``encrypted_content`` is
  NOT encrypted: it is ``testdouble-compaction:`` and the base64 of a JSON object holding the
  deterministic summary and the digests of the earlier compaction items the request held (what
  it folds), so a test can read what was "compacted" and RESP-5 can tell an earlier compaction
  item kept beside the new one that folds it; a compactor must treat it as opaque.
- ``anthropic``: Anthropic Messages, ``POST /v1/messages``: the summary is one ``text`` block,
  also streamed (``"stream": true``: the Messages API's server-sent events), as the Responses API
  is (its ``response.*`` events, `events_of`).
- ``converse``: Amazon Bedrock's Converse API, ``POST /model/{modelId}/converse`` and, streamed in
  the AWS event-stream framing, ``/converse-stream`` (`conformance.converse`): what boto3's
  ``bedrock-runtime`` client calls with an ``endpoint_url``, as Strands' ``BedrockModel`` does.
- ``ollama``: Ollama's native chat API, ``POST /api/chat``, streamed as newline-delimited JSON unless
  the request says ``"stream": false`` (`conformance.ollama`): what the ``ollama`` client calls, as
  Strands' ``OllamaModel`` does. Mistral's chat API is chat-completions (``/v1/chat/completions``,
  the ``mistralai`` client's path): the ``chat`` API, with Mistral's own overflow answer.

``responses`` and ``compact`` resolve ``previous_response_id`` against the responses the double
stored, and refuse a chain where the API does (`conformance.response_chains`); a ``responses``
request carrying `SCRIPTED` is an agent's model scripted by its caller, answered with its items.

Each API checks a request with its provider's own rules and answers what the provider answers
when one is broken: HTTP 400 with the provider's error text (`rejects`; SPEC CORE-13), apart from
what only this test double cannot do (`unsupported`). Each sends only the faults the provider is
known to send (`SENT`, each with its source).

Each API turns its request into chat-like ``{"role", "content"}`` messages (`as_messages`) so the
deterministic summary and the token counts are computed one way for all of them; the counts use
``o200k_base`` for every API (an approximation for Anthropic's tokenizer, labelled as such).
Nothing here is a real model: every id says ``testdouble``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from compaction_suite.text import count_tokens

from . import anthropic_compaction, converse, eventstream, ollama, oracle, overflow
from .violation import Violation

COMPACTION_PREFIX = "testdouble-compaction:"
CREATED = 1_700_000_000


def _digest(body: Any) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")).hexdigest()[:24]


def _texts(content: Any) -> str:
    """The text of a string content or of a list of text-bearing parts/blocks."""
    if isinstance(content, str):
        return content
    texts: list[str] = []
    for part in content or []:
        if isinstance(part, Mapping) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, Mapping) and part.get("type") == "tool_result":
            texts.append(_texts(part.get("content")))
        elif isinstance(part, Mapping) and part.get("type") == "tool_use":
            texts.append(f"{part.get('name')} {json.dumps(part.get('input'), sort_keys=True)}")
        elif isinstance(part, Mapping) and part.get("type") == "compaction" and isinstance(part.get("content"), str):
            texts.append(part["content"])  # the Messages API's server-side compaction summary (`anthropic_compaction`)
    return "\n".join(texts)


# --- requests -> chat-like messages


def responses_messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``instructions`` and ``input`` (a string or items) as chat-like messages; reasoning and
    compaction items are opaque and read as nothing."""
    messages: list[dict[str, Any]] = []
    if isinstance(body.get("instructions"), str):
        messages.append({"role": "system", "content": body["instructions"]})
    items = body.get("input")
    if isinstance(items, str):
        return [*messages, {"role": "user", "content": items}]
    for item in items or []:
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            messages.append({"role": item.get("role"), "content": _texts(item.get("content"))})
        elif kind in ("function_call", "custom_tool_call"):
            messages.append({"role": "assistant", "content": f"{item.get('name')} {item.get('arguments', item.get('input'))}"})
        elif kind in ("function_call_output", "custom_tool_call_output"):
            messages.append({"role": "tool", "content": _texts(item.get("output"))})
        elif kind in HOSTED_READ:
            messages += [{"role": role, "content": text} for role, text in HOSTED_READ[kind](item) if text]
    return messages


HOSTED_READ: dict[str, Any] = {
    "mcp_call": lambda i: [("assistant", f"{i.get('name')} {i.get('arguments')}"), ("tool", _texts(i.get("output")))],
    "code_interpreter_call": lambda i: [("assistant", i.get("code")), ("tool", "\n".join(o.get("logs", "") for o in i.get("outputs") or [] if isinstance(o, dict)))],
    "shell_call": lambda i: [("assistant", "\n".join((i.get("action") or {}).get("commands") or []))],
    "shell_call_output": lambda i: [("tool", "\n".join(o.get("stdout", "") + o.get("stderr", "") for o in i.get("output") or [] if isinstance(o, dict)))],
    "program": lambda i: [("assistant", i.get("code"))],
    "program_output": lambda i: [("tool", i.get("result"))],
}
"""What the model reads of a hosted tool call item (`formats.responses.HOSTED_CALLS`) or a hosted program's
(`formats.responses.PROGRAM_ITEMS`: its code, its result): the call and the output the API or the client put in it (an image generation call's result is an image, read as nothing
here)."""


def anthropic_messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The top-level ``system`` and ``messages`` as chat-like messages."""
    system = body.get("system")
    messages = [{"role": "system", "content": _texts(system)}] if system else []
    return messages + [{"role": m.get("role"), "content": _texts(m.get("content"))} for m in body.get("messages") or []]


# --- validity: what the real API answers with HTTP 400 (SPEC CORE-13), and what only the test double cannot do


def invalid_responses(body: Any) -> str | None:
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        return "the body must be a JSON object with a string 'model'"
    items = body.get("input")
    if not (isinstance(items, str) or (isinstance(items, list) and all(isinstance(i, dict) for i in items))):
        return "'input' must be a string or a list of items"
    return None


def invalid_compact(body: Any) -> str | None:
    if not isinstance(body, dict) or "model" not in body:
        return "the body must be a JSON object with 'model'"
    items = body.get("input")
    if items is None and not body.get("previous_response_id"):
        return "give 'input' or 'previous_response_id'"
    if items is not None and not (isinstance(items, str) or (isinstance(items, list) and all(isinstance(i, dict) for i in items))):
        return "'input' must be a string or a list of items"
    return None


def invalid_anthropic(body: Any) -> str | None:
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        return "the body must be a JSON object with a string 'model'"
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens: Field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        return "messages: must be a list of objects"
    return anthropic_compaction.invalid_edit(body)


def chat_rejects(body: Mapping[str, Any]) -> Violation | None:
    """The chat-completions API's own rules on a request's ``messages`` (the texts it answers with,
    quoted in miurla/morphic#136, run-llama/llama_index#10493 and router-for-me/CLIProxyAPI#2798; a call
    answered by two tool messages, agno-agi/agno#5116 and anomalyco/opencode#1211)."""
    messages = body["messages"]
    if not messages:
        return Violation("summarizer-request-empty", "[] is too short - 'messages'")
    problem = oracle.check_valid_messages(messages)
    if problem:
        return Violation("summarizer-request-invalid-message", f"Invalid 'messages': {problem}")
    for r in oracle.rounds(messages):
        opener = messages[r[0]]
        answering: dict[Any, int] = {}
        for i in r:
            if messages[i].get("role") == "tool" and (opener.get("role") != "assistant" or messages[i].get("tool_call_id") not in oracle.call_ids(opener)):
                return Violation("summarizer-request-orphan-tool-result", f"Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (param messages.[{i}].role)")
            call_id = messages[i].get("tool_call_id") if messages[i].get("role") == "tool" else None
            if call_id in answering:
                return Violation(
                    "summarizer-request-tool-call-answered-twice",
                    f"Invalid parameter: Duplicate value for 'tool_call_id' of '{call_id}', in messages[{answering[call_id]}] and messages[{i}]. (param messages.[{i}].tool_call_id)",
                )
            if call_id is not None:
                answering[call_id] = i
        answered = [messages[i].get("tool_call_id") for i in r[1:]]
        unanswered = [str(c) for c in oracle.call_ids(opener) if c not in answered]
        if unanswered:
            return Violation(
                "summarizer-request-unanswered-tool-call",
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "
                f"The following tool_call_ids did not have response messages: {', '.join(unanswered)} (param messages.[{r[0]}].role)",
            )
    return None


def responses_rejects(body: Mapping[str, Any]) -> Violation | None:
    """The Responses API's own rules on a request's ``input`` items (SPEC RESP-1, RESP-2, RESP-6: the
    texts quoted in continuedev/continue#10092 and Soju06/codex-lb#1168; RESP-3 where the request
    alone shows it: a reasoning item followed by no item the model wrote), for /v1/responses and its
    compact endpoint alike; an item id named twice, in the API's words (`response_chains.repeated_item`)."""
    from .formats import responses
    from .response_chains import DUPLICATE, Refusal, duplicate_text, repeated_item

    items = body.get("input")
    if not isinstance(items, list):
        return None
    repeated = repeated_item(items)
    if repeated is not None:
        return Refusal(DUPLICATE, duplicate_text(repeated[2]), param="input")  # the API's error names ``input``
    problem = responses.invalid(items)
    if problem:
        return Violation("summarizer-request-invalid-item", f"Invalid 'input': {problem}")
    called: set[tuple[str, Any]] = set()
    for item in items:
        kind = responses.kind(item)
        if kind in responses.ANSWERED_BY:
            called.update(responses.calls([item]))
        elif kind in responses.ANSWERS and responses.outputs([item])[0] not in called:
            return Violation("summarizer-request-orphan-tool-output", f"No tool call found for {'function' if kind == 'function_call_output' else 'custom tool'} call output with call_id {item.get('call_id')}.")
    answered = set(responses.outputs(items))
    for kind, call_id in responses.calls(items):
        if (kind, call_id) not in answered:
            return Violation("summarizer-request-unanswered-tool-call", f"No tool output found for {'function' if kind == 'function_call' else 'custom tool'} call {call_id}.")
    for i, item in enumerate(items):
        if responses.kind(item) == "reasoning" and not _model_output(items[i + 1] if i + 1 < len(items) else None):
            return Violation("summarizer-request-reasoning-without-its-item", f"Item '{item.get('id')}' of type 'reasoning' was provided without its required following item.")
    return None


def _model_output(item: Any) -> bool:
    """Whether ``item`` can be what a reasoning item preceded: an item the model wrote (an assistant
    message, a call, another reasoning item), not a user, system or developer message, a tool's output,
    a compaction item or nothing. SPEC RESP-3: the API answers a reasoning item without it "Item 'rs_…'
    of type 'reasoning' was provided without its required following item" (continuedev/continue#10163,
    openai/openai-agents-python#1660)."""
    from .formats import responses

    kind = responses.kind(item) if isinstance(item, dict) else None
    if kind is None or kind in responses.ANSWERS or kind == "compaction":
        return False
    return kind != "message" or item.get("role") == "assistant"


def anthropic_rejects(body: Mapping[str, Any]) -> Violation | None:
    """The Messages API's own rules on a request's ``system`` and ``messages`` (SPEC ANTH-1, ANTH-2,
    ANTH-5: the texts quoted in anthropics/claude-code#1237 and router-for-me/CLIProxyAPI#497)."""
    from .formats import anthropic

    problem = anthropic.invalid({k: v for k, v in body.items() if k in ("system", "messages")})
    if problem:
        return Violation("summarizer-request-invalid-message", problem)
    messages = body["messages"]
    refused = anthropic_compaction.rejects(messages)
    if refused:
        return Violation("summarizer-request-compaction-block", refused)
    for i, m in enumerate(messages):
        previous = messages[i - 1] if i > 0 and messages[i - 1].get("role") == "assistant" else {}
        for j, block in enumerate(anthropic.blocks(m)):
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in anthropic.tool_uses(previous):
                return Violation(
                    "summarizer-request-orphan-tool-result",
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {block.get('tool_use_id')}. "
                    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
                )
        following = anthropic.tool_results(messages[i + 1]) if i + 1 < len(messages) else []
        missing = [str(u) for u in anthropic.tool_uses(m) if u not in following]
        if missing:
            return Violation(
                "summarizer-request-unanswered-tool-call",
                f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {', '.join(missing)}. "
                "Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
            )
    return None


# --- response bodies


def _responses_usage(prompt: int, completion: int) -> dict[str, Any]:
    return {
        "input_tokens": prompt, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": completion, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + completion,
    }


def responses_body(body: Mapping[str, Any], content: str | None, prompt: int, completion: int, *, with_output: bool = True) -> dict[str, Any]:
    """A ``response`` whose output is one assistant message with ``content``; without output, the
    response the API gives when max_output_tokens ran out before any visible output: status
    ``incomplete`` and a reasoning item alone (OpenAI's reasoning guide)."""
    digest = _digest(body)
    message = {
        "type": "message", "id": f"msg_testdouble_{digest}", "status": "completed", "role": "assistant",
        "content": [{"type": "output_text", "text": content, "annotations": []}],
    }
    reasoning = {"type": "reasoning", "id": f"rs_testdouble_{digest}", "summary": []}
    return {
        "id": f"resp_testdouble_{digest}", "object": "response", "created_at": CREATED, "status": "completed" if with_output else "incomplete",
        "model": body.get("model"), "output": [message] if with_output else [reasoning], "instructions": body.get("instructions"),
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "error": None,
        "incomplete_details": None if with_output else {"reason": "max_output_tokens"},
        "metadata": {}, "usage": _responses_usage(prompt, completion),
    }


SCRIPTED = "testdouble_output"
"""A ``POST /v1/responses`` (or ``POST /v1/messages``) body key only this TEST DOUBLE reads: the output
items (the Messages API's content blocks) to answer with. An
agent's model scripted by its caller (an adapter replaying a history through a framework's own agent
loop, the framework's client sending it as ``extra_body``) is answered exactly that, stored and
chained as any response; it is the agent's model, not the summarizer: no fault, window or summary
applies, and it is no summarizer exchange (`SummarizerServer.model_requests`)."""


COUNT_TOKENS = re.compile(r"^/v1/messages/count_tokens$")
"""Anthropic's token counting endpoint, which a compactor may call to size a history (``ChatAnthropic``
as LangChain's ``token_counter``). It is no summarizer exchange: the double judges its request by the
Messages API's own rules, as the endpoint does ("Anthropic's countTokens API validates message
structure the same way as the chat API": RooCodeInc/Roo-Code#9873, quoting its HTTP 400
"messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks"; UKGovernmentBEIS/inspect_ai#3108,
"`tool_use` ids were found without `tool_result` blocks immediately after" from ``/messages/count_tokens``),
and answers ``{"input_tokens": n}``, n counted as the prompt of a request (SPEC Part A, "Wire formats",
Decision: the token counting endpoint)."""


def count_tokens_rejects(body: Any) -> str | None:
    """What the token counting endpoint answers ``body`` with HTTP 400: a malformed body (its text),
    or a request the Messages API's rules refuse (`anthropic_rejects`); None when it counts it. The
    endpoint takes no ``max_tokens``."""
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        return "the body must be a JSON object with a string 'model'"
    return invalid_anthropic({**body, "max_tokens": 1}) or anthropic_rejects(body)


def scripted_body(body: Mapping[str, Any], output: Sequence[Mapping[str, Any]], prompt: int = 0) -> dict[str, Any]:
    """A completed ``response`` answering ``body`` with the scripted ``output`` items, its ``usage`` the
    request's ``prompt`` tokens and the output's (`output_tokens`), as the API bills them (SPEC COST-1)."""
    answered = responses_body(body, "", prompt, output_tokens(output))
    return {**answered, "output": [dict(o) for o in output]}


def output_tokens(output: Sequence[Mapping[str, Any]]) -> int:
    """The output tokens of scripted Responses items: exact ``o200k_base`` counts of their JSON (the
    provider counts the text and call arguments it generates; the JSON approximates that, labelled so)."""
    return count_tokens(json.dumps([dict(o) for o in output], ensure_ascii=False, sort_keys=True)) if output else 0


def responses_events(body: Mapping[str, Any], content: str | None, prompt: int, completion: int, *, with_output: bool = True) -> list[tuple[str, dict[str, Any]]]:
    """The Responses API's server-sent events for `responses_body` (``"stream": true``): see `events_of`."""
    return events_of(responses_body(body, content, prompt, completion, with_output=with_output))


def events_of(response: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A ``response`` streamed as the Responses API streams it: ``response.created`` (in progress, no
    output), each output item ``added`` and ``done``, then ``response.completed`` (``incomplete`` for an
    incomplete one) with the whole response, each event numbered by ``sequence_number``."""
    started = {**response, "status": "in_progress", "output": []}
    events: list[tuple[str, dict[str, Any]]] = [("response.created", {"type": "response.created", "response": started})]
    for index, item in enumerate(response.get("output") or []):
        events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": index, "item": item}))
        events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": item}))
    last = "response.incomplete" if response.get("status") == "incomplete" else "response.completed"
    events.append((last, {"type": last, "response": dict(response)}))
    return [(name, {**data, "sequence_number": n}) for n, (name, data) in enumerate(events)]


def compaction_digest(item: Mapping[str, Any]) -> str:
    """A compaction item's identity, whatever its ``id``: the digest of its encrypted content."""
    return hashlib.sha256(str(item.get("encrypted_content")).encode("utf-8")).hexdigest()[:24]


def compaction_item(content: str, folds: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The (unencrypted, see the module docstring) compaction item of the test double, standing
    for ``content`` and folding the earlier compaction items ``folds``."""
    payload = json.dumps({"summary": content, "folds": [compaction_digest(f) for f in folds]}, sort_keys=True)
    encoded = COMPACTION_PREFIX + base64.b64encode(payload.encode("utf-8")).decode("ascii")
    return {"type": "compaction", "id": f"cmp_testdouble_{hashlib.sha256(encoded.encode()).hexdigest()[:24]}", "encrypted_content": encoded}


def compact_threshold(body: Mapping[str, Any]) -> int | None:
    """The ``compact_threshold`` of a ``POST /v1/responses`` body's server-side compaction
    (``context_management: [{"type": "compaction", "compact_threshold": N}]``), or None. Without a
    threshold the API picks its own default, which no history the suite draws reaches (taken as none)."""
    for edit in body.get("context_management") or []:
        if isinstance(edit, Mapping) and edit.get("type") == "compaction" and isinstance(edit.get("compact_threshold"), int):
            return int(edit["compact_threshold"])
    return None


def server_compaction(body: Mapping[str, Any], summary: str, tokens: int) -> dict[str, Any] | None:
    """The compaction item a ``POST /v1/responses`` answer starts with, or None: with server-side
    compaction on (`compact_threshold`) and the request's rendered input (``tokens``) reaching the
    threshold, the server compacts before it answers and its output holds the compaction item, then
    the model's items (OpenAI's compaction guide, developers.openai.com/api/docs/guides/compaction:
    "When the rendered token count crosses the configured threshold, the server runs server-side
    compaction ... The response stream includes the encrypted compaction item", emitted in the same
    stream before inference continues on the reduced context). The item stands for ``summary`` and
    folds the compaction items the input held."""
    threshold = compact_threshold(body)
    if threshold is None or tokens < threshold:
        return None
    earlier = [i for i in body.get("input") or [] if isinstance(i, Mapping) and i.get("type") == "compaction"]
    return compaction_item(summary, earlier)


def _payload(item: Any) -> dict[str, Any] | None:
    encoded = item.get("encrypted_content") if isinstance(item, Mapping) else None
    if not isinstance(encoded, str) or not encoded.startswith(COMPACTION_PREFIX):
        return None
    try:
        found = json.loads(base64.b64decode(encoded[len(COMPACTION_PREFIX) :]).decode("utf-8"))
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def compacted_text(item: Mapping[str, Any]) -> str | None:
    """What a test-double compaction item stands for (None for any other item)."""
    payload = _payload(item)
    return str(payload.get("summary")) if payload is not None else None


def folded(item: Any) -> list[str]:
    """The digests (`compaction_digest`) of the earlier compaction items a test-double compaction
    item folds (empty for any other item: a real provider's item cannot be read)."""
    payload = _payload(item)
    return [str(d) for d in payload.get("folds") or []] if payload is not None else []


def _input_parts(content: Any) -> list[Any]:
    """A user message's content as input parts (OpenAI's compact reference shows ``input_text`` parts)."""
    return [{"type": "input_text", "text": content}] if isinstance(content, str) else list(content or [])


def compact_body(body: Mapping[str, Any], content: str | None, prompt: int, completion: int, *, with_output: bool = True) -> dict[str, Any]:
    """A ``response.compaction``: the input's user messages and assistant messages in their order, then
    one compaction item. The assistant messages come back as sent, their ``id`` with them, without the
    reasoning items before them: what gpt-5.4's compact endpoint returns (openai/openai-agents-python#2727;
    OpenAI's reference lists the user messages only, gpt-5.2 returns the assistant messages without
    their ids). SPEC Part A, "Wire formats", Decision: the compact endpoint's output."""
    items = body.get("input")
    kept = [_compacted_message(i) for i in items or [] if isinstance(i, dict) and i.get("type", "message") == "message" and i.get("role") in ("user", "assistant")] if isinstance(items, list) else []
    if isinstance(items, str):
        kept = [{"type": "message", "role": "user", "content": _input_parts(items)}]
    earlier = [i for i in items if isinstance(i, dict) and i.get("type") == "compaction"] if isinstance(items, list) else []
    return {
        "id": f"resp_testdouble_{_digest(body)}", "object": "response.compaction", "created_at": CREATED,
        "output": [*kept, compaction_item(content or "", earlier)] if with_output else [], "usage": _responses_usage(prompt, completion),
    }


def _compacted_message(item: Mapping[str, Any]) -> dict[str, Any]:
    """A message as the compact endpoint returns it: a user message's content as input parts, an
    assistant message as it was sent (its ``id`` kept, as gpt-5.4 keeps it)."""
    if item.get("role") == "assistant":
        return {"type": "message", **item}
    return {"type": "message", "role": "user", "content": _input_parts(item.get("content"))}


THINKING_TYPES = ("enabled", "adaptive")
"""The Messages API's ``thinking.type`` values that turn extended thinking on; a model so asked answers
with a ``thinking`` block (its text and an opaque ``signature``) before its text (Anthropic's extended
thinking guide, docs.anthropic.com/en/docs/build-with-claude/extended-thinking)."""


def thinks(body: Mapping[str, Any]) -> bool:
    """Whether the request turns extended thinking on (SPEC ANTH-5 Decision on summaries from a thinking model)."""
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in THINKING_TYPES


def thinking_block(body: Mapping[str, Any]) -> dict[str, Any]:
    """The test double's thinking block: fixed text, a base64 signature unique to the request."""
    signature = base64.b64encode(f"testdouble-signature-{_digest(body)}".encode()).decode()
    return {"type": "thinking", "thinking": "testdouble: what the summary must keep", "signature": signature}


def anthropic_body(body: Mapping[str, Any], content: str | None, prompt: int, completion: int, *, with_output: bool = True) -> dict[str, Any]:
    """A Messages API ``message`` whose content is one text block with ``content``, after a thinking
    block when the request turns thinking on (`thinks`)."""
    blocks = ([thinking_block(body)] if thinks(body) else []) + [{"type": "text", "text": content}]
    return {
        "id": f"msg_testdouble_{_digest(body)}", "type": "message", "role": "assistant", "model": body.get("model"),
        "content": blocks if with_output else [],
        "stop_reason": "end_turn", "stop_sequence": None,
        "usage": {"input_tokens": prompt, "output_tokens": completion},
    }


STREAM_PIECE_CHARS = 40


def anthropic_events(body: Mapping[str, Any], content: str | None, prompt: int, completion: int, *, with_output: bool = True) -> list[tuple[str, dict[str, Any]]]:
    """The Messages API's server-sent events for `anthropic_body` (``"stream": true``):
    ``message_start``, a thinking block (``thinking_delta``, ``signature_delta``) when the request turns
    thinking on, one text block in ``text_delta`` pieces, ``message_delta``, ``message_stop``."""
    message = {**anthropic_body(body, content, prompt, completion, with_output=False), "stop_reason": None, "usage": {"input_tokens": prompt, "output_tokens": 0}}
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": message})]
    if with_output:
        index = 0
        if thinks(body):
            block = thinking_block(body)
            events.append(("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": block["thinking"]}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": block["signature"]}}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
            index = 1
        text = content or ""
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}))
        for at in range(0, len(text), STREAM_PIECE_CHARS):
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text[at : at + STREAM_PIECE_CHARS]}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": completion}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def openai_error(message: str, error_type: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type, "param": None, "code": code}}


ANTHROPIC_ERRORS = {429: "rate_limit_error", 500: "api_error", 529: "overloaded_error", 400: "invalid_request_error", 404: "not_found_error", 405: "invalid_request_error"}


def anthropic_error(message: str, status: int) -> dict[str, Any]:
    return {"type": "error", "error": {"type": ANTHROPIC_ERRORS.get(status, "api_error"), "message": message}}


@dataclass(frozen=True)
class Api:
    """One API the test double answers: how to read a request and write an answer or an error."""

    name: str
    path: re.Pattern[str]
    invalid: Callable[[Any], str | None]
    as_messages: Callable[[Mapping[str, Any]], list[dict[str, Any]]]
    body: Callable[..., dict[str, Any]]
    """``body(request, content, prompt_tokens, completion_tokens, with_output=True)``; without
    output it is the API's "no choices" answer."""
    error: Callable[[str, str, str | None, int], dict[str, Any]]
    events: Callable[..., list[tuple[str, dict[str, Any]]]] | None = None
    """The streamed answer (``"stream": true``) as (event name, data) pairs, like `body`; None:
    the test double answers this API unstreamed only (HTTP 400 for a streamed request)."""
    rejects: Callable[[Mapping[str, Any]], Violation | None] = lambda body: None
    """The provider's own rules on a well-shaped request: its HTTP 400 text when one is broken."""
    unsupported: Callable[[Any], str | None] = lambda body: None
    """What only this test double cannot answer (never a provider's rejection, never CORE-13's)."""
    statuses: Mapping[int, int] = field(default_factory=dict)
    """The status this API answers instead of another for the same fault (Anthropic's 529 for 503)."""
    streams: bool = False
    """Every request to this path is answered streamed (Converse's ``/converse-stream``), whatever its body."""
    stream_default: bool = False
    """Whether a request that says nothing of ``stream`` is answered streamed (Ollama's ``/api/chat``)."""
    frame: Callable[[str, dict[str, Any]], bytes] = lambda name, data: sse_event(name, data)
    """One streamed event as sent (server-sent events; Converse: the AWS event-stream framing)."""
    stream_mimetype: str = "text/event-stream"
    error_headers: Callable[[int], Mapping[str, str]] = lambda status: {}
    """Headers an error answer carries (Converse's ``x-amzn-ErrorType``, where botocore reads the code)."""

    def streamed(self, body: Mapping[str, Any]) -> bool:
        """Whether the answer to ``body`` is streamed."""
        return self.streams or bool(body.get("stream", self.stream_default))


def sse_event(name: str, data: Any) -> bytes:
    """A named server-sent event."""
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


RESPONSES = Api("responses", re.compile(r"^/v1/responses$"), invalid_responses, responses_messages, responses_body, lambda m, t, c, s: openai_error(m, t, c), responses_events, rejects=responses_rejects)
COMPACT = Api("compact", re.compile(r"^/v1/responses/compact$"), invalid_compact, responses_messages, compact_body, lambda m, t, c, s: openai_error(m, t, c), rejects=responses_rejects)
CHAINED = frozenset({"responses", "compact"})
"""The APIs that resolve ``previous_response_id`` against the responses the double stored (`response_chains`)."""
ANTHROPIC = Api("anthropic", re.compile(r"^/v1/messages$"), invalid_anthropic, anthropic_messages, anthropic_body, lambda m, t, c, s: anthropic_error(m, s), anthropic_events, rejects=anthropic_rejects, statuses={503: 529})
CONVERSE = Api("converse", converse.PATH, converse.invalid, converse.as_messages, converse.body, lambda m, t, c, s: converse.error(m, s), converse.events, rejects=converse.rejects, error_headers=converse.error_headers)
CONVERSE_STREAM = replace(CONVERSE, path=converse.STREAM_PATH, streams=True, frame=converse.frame, stream_mimetype=eventstream.MIMETYPE)
OLLAMA = Api(
    "ollama", ollama.PATH, ollama.invalid, ollama.as_messages, ollama.body, lambda m, t, c, s: ollama.error(m, s), ollama.events,
    stream_default=True, frame=ollama.frame, stream_mimetype=ollama.MIMETYPE,
)  # fmt: skip
APIS = (RESPONSES, COMPACT, ANTHROPIC, CONVERSE, CONVERSE_STREAM, OLLAMA)
"""The APIs besides chat-completions, matched by path."""


def api_for(path: str) -> Api | None:
    return next((api for api in APIS if api.path.match(path)), None)


# --- a request over the model's context window (SPEC WIN-1): each API's own answer (`conformance.overflow`)

OVER_WINDOW: dict[str, str] = {api: answers[0].text for api, answers in overflow.ANSWERS.items()}
"""The default text each API answers a request whose prompt exceeds the model's context window
(`overflow.ANSWERS` holds every real answer, each with its status, code and source)."""


def over_window_error(api_name: str, tokens: int, window: int, label: str, *, answer: str | None = None, body: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The error body ``api_name`` answers a prompt of ``tokens`` tokens over a ``window``-token
    context window, its message followed by ``label`` (the test double says so): the API's answer
    ``answer`` (`overflow.ANSWERS`; None, its default), its numbers read from the request ``body``."""
    return overflow.answer(api_name, answer, tokens, window, body or {}, label)[1]


# --- faults as each provider sends them (SPEC Part A, "Faults"; issue 20 point 3)

OPENAI_ERROR_CODES = "OpenAI's error codes guide (platform.openai.com/docs/guides/error-codes)"
ANTHROPIC_ERRORS_PAGE = "Anthropic's API errors page (docs.anthropic.com/en/api/errors)"
CONVERSE_ERRORS = "the Converse API reference, Errors (docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html)"
OPENAI_COMMON: dict[str, str] = {
    "429": f"{OPENAI_ERROR_CODES}: 429 'Rate limit reached for requests'",
    "500": f"{OPENAI_ERROR_CODES}: 500 'The server had an error while processing your request'",
    "503": f"{OPENAI_ERROR_CODES}: 503 'The engine is currently overloaded, please try again later'",
    "malformed": "run-llama/llama_index#920: a JSONDecodeError on a body the OpenAI API answered with",
    "hang": "langchain-ai/langchain#21919: openai.APITimeoutError, a request the API did not answer in time",
    "drop": "Significant-Gravitas/AutoGPT#2241: RemoteDisconnected, the OpenAI API closing the connection without a response",
    "truncated_stream": "openai/openai-python#2356: an o3-mini stream ending in 'peer closed connection without sending complete message body'",
}
TOOL_CALL = (
    "{guide}: a request offering tools may be answered with a call of one instead of text; "
    "strands-agents/harness-sdk#1947: claude-3-haiku calling the no-op tool its summarization request offered"
)
OPENAI_TOOL_CALL = TOOL_CALL.format(guide="OpenAI's function-calling guide (platform.openai.com/docs/guides/function-calling)")
SENT: dict[str, dict[str, str]] = {
    "chat": {
        **OPENAI_COMMON,
        "no_choices": "InternLM/MindSearch#310: Azure OpenAI answering {\"choices\": [], \"prompt_filter_results\": [...]}",
        "empty_content": "codelibs/fess#3061: a reasoning model answering finish_reason 'length' with empty content",
        "null_content": "promptfoo/promptfoo#2822, microsoft/semantic-kernel#5240: Azure OpenAI's finish_reason 'content_filter' with no content",
        "tool_call": OPENAI_TOOL_CALL,
    },
    "responses": {
        **OPENAI_COMMON,
        "no_choices": "OpenAI's reasoning guide (platform.openai.com/docs/guides/reasoning): a response 'incomplete' at "
        "max_output_tokens before any visible output, its output reasoning items only (quoted in NVIDIA-NeMo/Switchyard#796)",
        "tool_call": OPENAI_TOOL_CALL,
    },
    "compact": OPENAI_COMMON,
    "anthropic": {
        "429": f"{ANTHROPIC_ERRORS_PAGE}: 429 rate_limit_error",
        "500": f"{ANTHROPIC_ERRORS_PAGE}: 500 api_error",
        "503": f"{ANTHROPIC_ERRORS_PAGE}: 529 overloaded_error, which the Messages API sends where OpenAI sends 503 "
        "(answered as 529: anthropics/claude-code#49011 quotes it)",
        "no_choices": "anthropics/anthropic-sdk-typescript#459: an answer whose content is an empty list",
        "empty_content": "anthropics/anthropic-sdk-python#461: an answer holding an empty text block",
        "hang": "anthropics/claude-code#3855 and gptme/gptme#701: Messages API requests timing out or never answered",
        "drop": "kortix-ai/suna#66: the Anthropic API closing a connection without a complete body",
        "truncated_stream": "kortix-ai/suna#66: an Anthropic stream ending in 'peer closed connection without sending complete message body'",
        "tool_call": TOOL_CALL.format(guide="Anthropic's tool-use guide (docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use)"),
    },
    "converse": {
        "429": f"{CONVERSE_ERRORS}: 429 ThrottlingException",
        "500": f"{CONVERSE_ERRORS}: 500 InternalServerException",
        "503": f"{CONVERSE_ERRORS}: 503 ServiceUnavailableException",
        "tool_call": TOOL_CALL.format(guide="Bedrock's tool-use guide (docs.aws.amazon.com/bedrock/latest/userguide/tool-use-inference-call.html: stopReason tool_use)"),
    },
}
"""For each API the test double answers, the faults that API is known to send, each with the
provider's documentation or a public report showing it. A fault absent here is never sent on that
API: the compact endpoint answers no empty or missing compaction item (no report of one), Anthropic
no null text and no body that is not JSON, the Responses API no null text, Converse only its
documented error statuses and tool calls (no report found of its other faults), and Ollama's
``/api/chat`` none (no report of one established)."""


def sends(api_name: str, fault: str) -> bool:
    """Whether the API ``api_name`` (``chat``, ``responses``, ``compact``, ``anthropic``, ``converse``) is known to send ``fault``."""
    return fault in SENT.get(api_name, {})
