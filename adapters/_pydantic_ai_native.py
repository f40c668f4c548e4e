"""pydantic-ai's own compaction: ``OpenAICompaction`` driven by pydantic-ai's ``Agent`` loop on the
suite's Responses test double (SPEC Part A, "Wire formats", Decision: pydantic-ai's native compaction).

The history arrives as Responses input items. Its last model step (the assistant items after the
last request, `last_step`) is what the agent's model answers; everything before it is the
``message_history`` the ``Agent`` is run with, converted to pydantic-ai's own messages
(`to_messages`), the system and developer messages as the agent's ``instructions``. The agent's model
is pydantic-ai's ``OpenAIResponsesModel`` on an ``AsyncOpenAI`` pointed at the double, each request
carrying the step to answer with (`summarizer_apis.SCRIPTED`, in ``extra_body``); its tools answer the
step's calls with the history's outputs. ``OpenAICompaction`` compacts as it does for users: stateless,
through ``POST /v1/responses/compact`` from its ``before_model_request`` hook; stateful, by
``context_management`` on the request, the double answering a compaction item before the step when
the request's input crosses ``compact_threshold`` (OpenAI's compaction guide).

The output is what the model is sent after the compaction: the ``input`` of the request pydantic-ai
sends once the step and its outputs are recorded (a step without calls: the request of the next turn,
its probe user message taken off the end), read on the wire by an ``httpx`` request hook, which ends
the run there. A history pydantic-ai records no run of (an item it has no part for, such as a custom tool
call; no model step at its end) is returned unchanged. Standard library at import time.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, cast

from ._common import requires
from ._native import MODEL_ITEMS, item_kind, last_model_step, said_by_model
from .pydantic_ai import EXTRA

PROBE = "compaction-suite: next turn (probe)"
"""The user prompt of the next turn, sent when the history's last step made no call: it is the last
input item of the request read, and taken off the output."""
MODEL_NAME = "gpt-4.1"
"""An OpenAI model name (pydantic-ai's profile for it speaks the Responses API); the double answers any."""


class NotRecorded(ValueError):
    """A history pydantic-ai's loop does not record (an item type it has no part for, such as a custom tool call)."""


class Sent(Exception):
    """Raised by the request hook once it has read the request after the compaction: ends the run."""

    def __init__(self, body: dict[str, Any]) -> None:
        super().__init__("request read")
        self.body = body


MODEL_SAYS = (*MODEL_ITEMS, "compaction")
"""What pydantic-ai records as the model's: a compaction item it answered too."""


def _said_by_model(item: dict[str, Any]) -> bool:
    return said_by_model(item, MODEL_SAYS)


def last_step(items: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]] | None:
    """(the items before the last model step, the step, its calls' outputs by ``call_id``), or None when
    pydantic-ai's loop cannot have produced the history's end: no model step after a request, or items
    after the step other than the outputs of its calls, in their order."""
    found = last_model_step(items, MODEL_SAYS)
    if found is None or found[0] == 0:
        return None
    start, end, outputs = found
    return items[:start], items[start:end], outputs


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(str(p.get("text", "")) for p in content or [] if isinstance(p, dict))


def binary(pm: Any, url: str) -> Any:
    """pydantic-ai's ``BinaryContent`` for a ``data:`` URL (``from_data_uri``, or the URL decoded where a
    release has no such constructor, as its users build one from bytes)."""
    if hasattr(pm.BinaryContent, "from_data_uri"):
        return pm.BinaryContent.from_data_uri(url)
    import base64

    head, _, data = url.partition(",")
    return pm.BinaryContent(data=base64.b64decode(data), media_type=head[len("data:") :].split(";")[0])


def _user_content(pm: Any, content: Any) -> Any:
    if isinstance(content, str):
        return content
    out: list[Any] = []
    for part in content or []:
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text"):
            out.append(part.get("text", ""))
        elif kind == "input_image" and isinstance(part.get("image_url"), str):
            url = part["image_url"]
            meta = {"detail": part["detail"]} if part.get("detail") else None
            out.append(binary(pm, url) if url.startswith("data:") else pm.ImageUrl(url=url, vendor_metadata=meta))
        elif kind == "input_file" and str(part.get("file_data", "")).startswith("data:"):
            out.append(binary(pm, part["file_data"]))  # a PDF inline, as a tool that read one returns it
        else:
            raise NotRecorded(f"content part {part!r} has no pydantic-ai form here")
    return out


def to_messages(items: Sequence[dict[str, Any]], system: str) -> tuple[list[Any], list[str]]:
    """pydantic-ai messages for Responses input items (the system and developer messages apart, as the
    agent's instructions), as pydantic-ai records a Responses conversation: requests of user prompts and
    tool returns, responses of the model's items (``provider_name`` the model's ``system``)."""
    pm = requires("pydantic_ai.messages", EXTRA)
    names = {str(i.get("call_id")): str(i.get("name", "")) for i in items if item_kind(i) == "function_call"}
    instructions: list[str] = []
    out: list[Any] = []
    request: list[Any] = []
    response: list[Any] = []

    def flush() -> None:
        if request:
            out.append(pm.ModelRequest(parts=list(request)))
            request.clear()
        if response:
            out.append(pm.ModelResponse(parts=list(response), provider_name=system, model_name=MODEL_NAME))
            response.clear()

    for n, item in enumerate(items):
        kind, role = item_kind(item), item.get("role")
        if kind == "message" and role in ("system", "developer"):
            instructions.append(_text(item.get("content")))
            continue
        by_model = _said_by_model(item)
        if (by_model and request) or (not by_model and response):
            flush()
        if kind == "message" and role == "user":
            request.append(pm.UserPromptPart(content=_user_content(pm, item.get("content"))))
        elif kind == "function_call_output":
            call_id = str(item.get("call_id"))
            output = item.get("output")  # text, or the parts of a tool that read an image or a PDF (pydantic-ai's multimodal return)
            content = output if isinstance(output, str) else _user_content(pm, output)
            request.append(pm.ToolReturnPart(tool_name=names.get(call_id, ""), content=content, tool_call_id=call_id))
        elif kind == "message" and role == "assistant":
            response.append(pm.TextPart(content=_text(item.get("content")), id=item.get("id"), provider_name=system))
        elif kind == "function_call":
            response.append(
                pm.ToolCallPart(
                    tool_name=str(item.get("name", "")),
                    args=item.get("arguments"),
                    tool_call_id=str(item.get("call_id")),
                    id=item.get("id"),
                    provider_name=system,
                )
            )
        elif kind == "reasoning":
            summary = "\n".join(str(s.get("text", "")) for s in item.get("summary") or [] if isinstance(s, dict))
            response.append(
                pm.ThinkingPart(content=summary, id=item.get("id"), signature=item.get("encrypted_content"), provider_name=system)
            )
        elif kind == "compaction":
            details = {k: v for k, v in item.items() if k != "type"} | {"type": "compaction"}
            response.append(pm.CompactionPart(content=None, id=item.get("id"), provider_name=system, provider_details=details))
        else:
            raise NotRecorded(f"item {n}: {kind!r} has no pydantic-ai form here")
    flush()
    return out, instructions


def tools(pydantic_ai: Any, step: Sequence[dict[str, Any]], outputs: dict[str, Any], deferred: Sequence[str] = ()) -> list[Any]:
    """One tool per name the step calls, answering each call with the history's output for it; the ``deferred``
    names (`TOOL_SEARCH`) too, each hidden until a search finds it (``defer_loading``)."""

    pm = requires("pydantic_ai.messages", EXTRA)

    async def answer(ctx: Any, **_arguments: Any) -> Any:
        output = outputs[ctx.tool_call_id]  # an image or a PDF as the tool returns it (pydantic-ai's BinaryContent)
        return output if isinstance(output, str) else _user_content(pm, output)

    names = dict.fromkeys([*(str(i.get("name")) for i in step if item_kind(i) == "function_call"), *deferred])
    schema = {"type": "object", "properties": {}, "additionalProperties": True}
    made = [
        pydantic_ai.Tool.from_schema(answer, name=name, description=f"{name} (replayed)", json_schema=schema, takes_ctx=True)
        for name in names
    ]
    for tool in made:
        tool.defer_loading = tool.name in deferred
    return made


TOOL_SEARCH_MODEL = "gpt-5.4"
"""The model of a run with tool search: the first OpenAI family pydantic-ai offers the provider's own
``tool_search`` on (``profiles/openai.py``, 2.25.0 and later), client-executed with a search strategy of the
user's (`by_name`)."""


def by_name(_ctx: Any, queries: Sequence[str], tool_defs: Sequence[Any]) -> list[str]:
    """A user's search strategy (``ToolSearch(strategy=...)``): the tools whose name is a word of a query."""
    words = {w for q in queries for w in str(q).split()}
    return [t.name for t in tool_defs if t.name in words]


def searchable(pydantic_ai: Any, history: list[Any], names: Sequence[str]) -> tuple[list[Any], list[Any]]:
    """(``history`` with the search round pydantic-ai records before the first call of each deferred tool, the
    ``ToolSearch`` capability searching them with `by_name`), for a run whose tools the history calls are
    deferred (pydantic/pydantic-ai#7189: ToolSearch beside a compaction)."""
    from ._common import CannotDrive
    from ._pydantic_ai_loop import with_searches

    capabilities = requires("pydantic_ai.capabilities", EXTRA)
    if not hasattr(capabilities, "ToolSearch"):
        raise CannotDrive("pydantic_ai:openai_compaction (tool_search)", "pydantic-ai-slim", "ToolSearch is missing")
    pm = requires("pydantic_ai.messages", EXTRA)
    return with_searches(pm, history, set(names)), [capabilities.ToolSearch(strategy=by_name)]


async def run(
    items: list[dict[str, Any]], settings: Any, capability: Any, model_settings: dict[str, Any] | None = None,
    *, between_turns: Callable[[list[Any]], list[Any]] | None = None, tool_search: bool = False,
) -> list[dict[str, Any]]:  # fmt: skip
    """What pydantic-ai's agent sends the model after the history's last step, with ``capability`` (and
    ``model_settings`` beside the script: ``openai_previous_response_id='auto'`` chains each request to the
    last response, the input then read as the chain the double resolves, `Chains`). Where the step ends the
    turn (a final answer), the next request is the next turn's: ``between_turns`` is what the messages go
    through before it (the user's store: a UI protocol's dump and load). With ``tool_search`` every tool the
    history calls is deferred and found by the provider's client-executed tool search (`searchable`); a run the
    model ends before the step (its search found nothing, `tool_search.search_first`) is read at its last request."""
    import openai
    import pydantic_ai
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from compaction_suite.conformance.summarizer_apis import SCRIPTED

    plan = last_step(items)
    if plan is None:
        return list(items)  # no run of pydantic-ai's loop ends in this history
    before, step, outputs = plan
    calls = any(item_kind(i) == "function_call" for i in step)
    stepped: list[bool] = []
    last: list[dict[str, Any]] = []
    chains = Chains()
    marks = {json.dumps(i, sort_keys=True) for i in step}

    async def read(request: Any) -> None:  # an httpx.Request of the client openai uses
        if request.url.path.rstrip("/").endswith("/responses"):
            body = chains.resolved(request)
            if stepped and body is not None:  # the request after the step (and its outputs) is recorded
                raise Sent(body)
            last[:] = [body] if body is not None else []

    async def answered(response: Any) -> None:  # its httpx.Response
        output = await chains.keep(response)
        if any(json.dumps(o, sort_keys=True) in marks for o in output):
            stepped.append(True)  # the double answered the step (not a search before it)

    try:
        to_messages(items, "openai")
    except NotRecorded:
        return list(items)  # pydantic-ai's loop records no such history
    http = openai.DefaultAsyncHttpxClient(event_hooks={"request": [read], "response": [answered]})
    client = openai.AsyncOpenAI(
        base_url=settings.base_url, api_key=settings.api_key, http_client=http, timeout=settings.summarizer_timeout, max_retries=0
    )
    model = OpenAIResponsesModel(TOOL_SEARCH_MODEL if tool_search else MODEL_NAME, provider=OpenAIProvider(openai_client=client))
    history, instructions = to_messages(before, model.system)
    deferred = list(dict.fromkeys(str(i.get("name")) for i in items if item_kind(i) == "function_call")) if tool_search else []
    history, searching = searchable(pydantic_ai, history, deferred) if tool_search else (history, [])
    agent = pydantic_ai.Agent(
        model, instructions="\n\n".join(instructions) or None, tools=tools(pydantic_ai, step, outputs, deferred),
        capabilities=[capability, *searching], model_settings=cast(Any, {**(model_settings or {}), "extra_body": {SCRIPTED: step}}),
    )  # fmt: skip
    try:
        try:
            result = await agent.run(None, message_history=history)
            if not calls:
                kept = result.all_messages()
                await agent.run(PROBE, message_history=kept if between_turns is None else between_turns(list(kept)))
        except Exception as error:
            sent = _sent(error)
            if sent is None:
                raise
            return _output(sent, probe=not calls)
        if tool_search and not stepped and last:
            return _output(last[0], probe=False)  # the model ended the run before the step
        raise RuntimeError("pydantic-ai sent no request after the history's last step")
    finally:
        await client.close()


class Chains:
    """The responses the Responses API stored, as the client saw them answered (`response_chains.ResponseStore`,
    the double's own rules: ``/responses`` answers kept unless ``store`` is false, the compact endpoint's never):
    a request naming a ``previous_response_id`` is read as that stored chain followed by its ``input``."""

    def __init__(self) -> None:
        from compaction_suite.conformance.response_chains import ResponseStore
        from compaction_suite.conformance.summarizer_apis import SCRIPTED

        self._scripted = SCRIPTED
        self._store = ResponseStore()
        self._sent: dict[int, dict[str, Any]] = {}

    def resolved(self, request: Any) -> dict[str, Any] | None:
        """The body of ``request`` (an ``httpx.Request`` to ``/responses``) with its chain resolved, or None
        for a chain this client never saw stored (the API refuses it: the run meets the double's refusal)."""
        body, refusal = self._store.resolve(json.loads(request.content))
        if refusal is not None:
            return None
        self._sent[id(request)] = {k: v for k, v in body.items() if k != self._scripted}
        return self._sent[id(request)]

    async def keep(self, response: Any) -> list[dict[str, Any]]:
        """Keep the answer of a ``/responses`` request this client sent; its output items ([] for another)."""
        resolved = self._sent.pop(id(response.request), None)
        if resolved is None or response.status_code != 200:
            return []
        await response.aread()
        answer = json.loads(response.content)
        self._store.keep(resolved, answer)
        return [o for o in answer.get("output") or [] if isinstance(o, dict)]


def _sent(error: BaseException | None) -> dict[str, Any] | None:
    """The request body the hook read, from the exception the run ended in (the client may wrap it)."""
    while error is not None:
        if isinstance(error, Sent):
            return error.body
        error = error.__cause__ or error.__context__
    return None


def _drawn_search(item: dict[str, Any]) -> bool:
    """Whether ``item`` is a search round `searchable` drew (pydantic-ai sends it back as a ``tool_search_call``
    and its ``tool_search_output``): not the history's, so left out of the output, as the loop leaves it out."""
    from ._pydantic_ai_loop import SEARCH_ID

    return item_kind(item) in ("tool_search_call", "tool_search_output") and str(item.get("call_id", "")).startswith(SEARCH_ID)


def _output(body: dict[str, Any], *, probe: bool) -> list[dict[str, Any]]:
    items = [dict(i) for i in body.get("input") or [] if not _drawn_search(i)]
    if probe:
        last = items[-1] if items else {}
        if not (item_kind(last) == "message" and last.get("role") == "user" and _text(last.get("content")) == PROBE):
            raise RuntimeError("the request of the next turn does not end in its probe user message")
        items = items[:-1]
    return items
