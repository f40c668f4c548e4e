"""OpenAI Agents SDK: ``OpenAIResponsesCompactionSession``, a compactor of Responses input items.

Target (research and declarations in ``adapters/README.md``)::

    compaction-suite check compaction_suite.adapters.openai_agents:responses_compaction

``compact(items)`` stores the items in the SDK's ``SQLiteSession`` (in memory; ``session_limit`` sets its
documented read limit), wraps it in ``OpenAIResponsesCompactionSession`` with an ``AsyncOpenAI`` on the
suite's summarizer test double (``/v1/responses/compact``), calls ``run_compaction`` as the ``Runner``
does after a model response, in ``input`` mode, and returns every stored item. ``runner`` is the ``Runner``'s
path: ``Runner.run`` (or ``run_streamed``) with the compaction session, its agent model the SDK's
``OpenAIResponsesModel`` on the suite's double scripted with the history's last step, so the SDK's own
loop writes the session and compacts after the response as it does for users, by ``previous_response_id``
where the release (0.6.6-0.6.8: the only mode) or ``compaction_mode`` says so, against the chains the
double stored (`conformance.response_chains`). ``runner_session`` is the stored session as the ``Runner``
writes it (each appended turn run through ``Runner.run``), with the session's own removals (``pop_item``,
``clear_session``) and its documented manual compaction. ``handoff_history`` is the transcript a handoff
nests for the next agent (``RunConfig(nest_handoff_history=True)``): what that agent's model receives.
``tool_output_trimmer`` is the SDK's built-in ``call_model_input_filter``, ``ToolOutputTrimmer``, which the
``Runner`` calls on the model's input before each model call: what the model then receives.
``sandbox_compaction`` is a ``SandboxAgent`` (0.14.0 on) with the SDK's default capabilities run by the ``Runner``
on the SDK's local sandbox client, the API compacting server-side at its ``Compaction`` capability's threshold:
the model's input on the user's next turn, which the capability cuts at the newest compaction item.
Declarations proven by
``tests/test_adapter_format_loops.py``, ``tests/test_openai_agents_paths.py`` and ``tests/test_session_loops.py``.
"""

from __future__ import annotations

import inspect
import itertools
import os
import tempfile
from typing import Any

from ._common import CannotDrive, accepts, factory, make, options, requires
from ._native import declared, double_refuses, item_kind, last_model_step

FRAMEWORK = "OpenAI Agents SDK"
SUPPORTED: dict[str, str] = {"openai-agents": ">=0.6.6,<0.25"}
"""Agreed interface 3: from 0.6.6, where ``OpenAIResponsesCompactionSession`` arrived. Its ``input`` mode
arrived in 0.6.9; at 0.6.6-0.6.8 the session compacts only by ``previous_response_id``, so
``responses_compaction`` (``input`` mode) is a contract error there (`CannotDrive`) and ``runner`` drives
that mode through the SDK's ``Runner`` against the double's stored response chains."""

SUPPORTED_BY_PATH: dict[str, dict[str, str]] = {
    "tool_output_trimmer": {"openai-agents": ">=0.9,<0.25"},
    "handoff_history": {"openai-agents": ">=0.6.0,<0.25"},
    "sandbox_compaction": {"openai-agents": ">=0.14,<0.25"},
    "encrypted_session": {"openai-agents": ">=0.8,<0.25"},
}
"""``agents.extensions.ToolOutputTrimmer`` arrived in 0.9.0 (openai/openai-agents-python#2468; 0.9.0's wheel
holds it, with the ``CallModelData`` it is called with). The handoff's nesting (``RunConfig.nest_handoff_history``)
arrived in 0.6.0 (openai/openai-agents-python#1996, on by default until 0.7.0); ``handoff_history`` needs no
compaction session, so it reaches back to there. The sandbox agents (``agents.sandbox``: ``SandboxAgent``, its
``Compaction`` capability, ``RunConfig(sandbox=SandboxRunConfig(...))`` and the local ``UnixLocalSandboxClient``)
arrived in 0.14.0 (absent from 0.13.6's wheel, present in 0.14.0's, read 2026-11-28)."""

DOCUMENTED: list[dict[str, Any]] = [
    {
        "factory": "handoff_history", "clause": "CORE-14", "options": {"input_filter": None},
        "quote": "compact prior run history into ordered assistant summary segments while preserving lossless message items in their original positions",
        "source": "openai-agents 0.24.0, agents/run_config.py (RunConfig.nest_handoff_history docstring)",
    },
    {
        "factory": "handoff_history", "clause": "CORE-14", "options": {"input_filter": "remove_all_tools"},
        "quote": "Filters out all tool items: file search, web search and function calls+output.",
        "source": "openai-agents 0.24.0, agents/extensions/handoff_filters.py (remove_all_tools docstring)",
    },
    {
        "factory": "runner", "clause": "CORE-14", "options": {"tripwire": True}, "reason": r"is masked in place \(now 'Output withheld by an output guardrail\.'\)",
        "quote": "Customize the data-free placeholder retained for terminal tool output rejected by an output guardrail.",
        "source": "openai-agents 0.24.0, agents/run_config.py (RunConfig.output_guardrail_blocked_message docstring)",
    },
]  # fmt: skip
"""Agreed interface 4: the SDK documents no compaction failure behaviour (a compact endpoint error
propagates out of ``Runner.run``, undocumented); the handoff's nesting folds the assistant's items,
the newest round's too, into the summary text by design; from 0.22.0 a tool output an output guardrail
rejected as the run's final output (``tripwire``) is stored as a data-free placeholder, by design (only
that reason: a tool call or output the tripped run leaves out of the session is not documented, the
SDK's guardrail docs say the completed tool items are persisted)."""
DISTRIBUTIONS = ("openai-agents",)
EXTRA = "openai-agents"
COMPACT_MODEL = "gpt-4.1"
"""The SDK accepts only OpenAI model names here; the suite's double answers any name."""

DEFAULTS: dict[str, dict[str, Any]] = {
    "responses_compaction": {"threshold": 10, "session_limit": None},
    "responses_session": {"threshold": 4},
    "runner": {"threshold": 10, "store": True, "streamed": False, "compaction_mode": None, "session_limit": None, "input_turns": None, "abandoned": False, "approved": None, "stop_on_first_tool": False, "tripwire": False, "gated": False, "guardrail_fails": False, "max_turns_handler": False, "server_compaction": None},
    "runner_session": {"threshold": 100, "store": True, "compaction_mode": None},
    "handoff_history": {"store": True, "hosted_tools": False, "said": False, "hops": 1, "returned": "next_agent", "chained": False, "conversation": False, "input_filter": None},
    "tool_output_trimmer": {"recent_turns": 2, "max_output_chars": 500, "preview_chars": 200},
    "sandbox_compaction": {"threshold": 3800, "store": True, "streamed": False},
    "encrypted_session": {"ttl": 600, "approval_wait": 300, "streamed": False},
}
"""``session_limit``: for ``responses_compaction`` the underlying session's ``SessionSettings(limit=...)``
(how many items its reads return), a documented session setting the compaction session reads its
candidates through; for ``runner`` the run's ``RunConfig(session_settings=SessionSettings(limit=...))``
(0.8.0 on), the documented setting by which the ``Runner`` reads only the newest items of the session
into the model's input (what it sends the model is judged by the double as the API judges it).
``chained``: for ``handoff_history`` the run continues by the server's stored responses (``Runner.run(...,
auto_previous_response_id=True)``, the SDK's documented server-managed conversation: each call after the first sends
``previous_response_id`` and only the items the chain lacks), so what the next agent's model receives is the stored
chain followed by its request's input, as the API resolves it (`scripted_model`'s ``chains``).
``conversation``: for ``handoff_history`` the run continues in a server-side conversation instead (the Conversations
API: ``client.conversations.create()``, then ``Runner.run(..., conversation_id=...)``, the SDK's other documented
server-managed state), the double holding the conversation's items as the API does (`conformance.response_chains`).
``input_filter``: for ``handoff_history`` the handoff's ``input_filter``, one the SDK ships by name
(``"remove_all_tools"``: ``agents.extensions.handoff_filters.remove_all_tools``, the filter its handoff docs show),
which takes precedence over the nesting as the SDK documents; None: no filter (the nesting applies).
``returned``: for ``handoff_history`` what ``compact`` returns, ``next_agent`` (the input the next agent's model
receives) or ``next_turn`` (the run's history as the SDK hands it back for the user's next turn, `next_turn_input`).
``input_turns``: for ``runner`` a ``RunConfig(call_model_input_filter=...)`` keeping the model's input from its
``input_turns``-th newest user message on (`newest_turns`), the use the SDK documents for the filter ("edit
the input sent to the model e.g. to stay within a token limit", ``RunConfig.call_model_input_filter``).
``abandoned``: for ``runner`` an earlier run in the same session ended on a tool call awaiting approval and the
user sent the history's last turn instead of resuming it (`abandon_approval`).
``approved``: for ``runner`` an earlier run in the same session parked on a tool call awaiting approval, of an
agent with an output guardrail and the ``tool_use_behavior`` named (`APPROVALS`), and the user approved and
resumed it as the SDK documents (``RunState.approve``, then ``Runner.run`` on the state) before sending the
history's last turn (`resume_approval`).
``stop_on_first_tool``: for ``runner`` the agent's ``tool_use_behavior="stop_on_first_tool"`` ("the output from the
first tool call is treated as the final result", ``Agent.tool_use_behavior``): a last step of calls ends the run.
``tripwire``: for ``runner`` (with ``stop_on_first_tool``) the agent has an output guardrail whose tripwire trips on
the run's final output, so the run ends in the SDK's documented ``OutputGuardrailTripwireTriggered`` ("if triggered,
the agent's execution will be halted", ``GuardrailFunctionOutput.tripwire_triggered``) after the last step's tools ran (`_run_ended`).
``gated``: for ``runner`` the last step's tools are declared ``needs_approval=True``: the run parks on the step's
calls, the user approves each (``RunState.approve``) and resumes the run on its state (``run_streamed`` with
``streamed``), the documented human-in-the-loop flow (`_approved_turn`), the tools then answering.
``guardrail_fails``: for ``runner`` the agent has an output guardrail that runs its own check agent on a model, as
the SDK's guardrail docs build one, and the API answers that model's request with HTTP 500 (OpenAI's error codes
guide: "500 - The server had an error while processing your request", `summarizer_apis.SENT`; its own double,
`GUARDRAIL_DOUBLE`), so the guardrail raises instead of returning a verdict: the run ends in that error, which the
user's code catches (`_FailingGuardrail`). The SDK documents what the session keeps then: "the runner treats the
verdict as unknown and asks the configured session to persist the completed final-turn items before surfacing the
guardrail exception" (docs/guardrails.md, 0.22.0).
``max_turns_handler``: for ``runner`` the run has a ``max_turns`` error handler (``error_handlers={"max_turns": ...}``,
0.8.0 on, documented "to return a controlled final output instead of ending the run with the corresponding error")
whose final output is the history's closing message: for a history whose last turn ends in a step of calls, their
outputs and one assistant text message (`handled_step`), the model answers the step, the tools answer its calls, the
turn limit (``max_turns=1``) ends the run and the handler answers with the message's text, which the SDK stores as the
run's final message (``include_in_history``, its default); any other history is returned unchanged.
``server_compaction``: for ``runner`` the agent's ``ModelSettings(context_management=[{"type": "compaction",
"compact_threshold": N}])`` (0.16.0 on, "to enable server-side compaction when the rendered context crosses a token
threshold", its docstring): the double answers a request whose input reaches N tokens with the compaction item
first, then the step (OpenAI's compaction guide), and the SDK stores that item in the session with the run's other
items (a ``CompactionItem``); the output is every stored item, what the ``Runner`` reads into the next turn's input.
The session is then the ``SQLiteSession`` itself, without ``OpenAIResponsesCompactionSession`` (``threshold`` and
``compaction_mode`` unused): the server compacts, the suite's summarizer is never asked, as for a user who lets the
API compact.
``threshold``: for ``sandbox_compaction`` the ``Compaction`` capability's ``StaticCompactionPolicy(threshold=N)``, the
``compact_threshold`` it asks the API for; the SDK's sandbox instructions alone (its base prompt, the capabilities'
instructions and the workspace's layout, sent as ``instructions``) count some 3,600 tokens at 0.24.0, so a threshold
below that compacts every request.
``ttl``, ``approval_wait``: for ``encrypted_session`` the ``EncryptedSession``'s ``ttl`` (600 s, its default) and the
seconds between the run parking on the step's calls and the user approving them; the next turn comes ``ttl + 1`` seconds
after the calls were written."""
WHY = {
    "responses_compaction": (
        "core only: item-count trigger (no iteration trigger); the summary is the compact endpoint's opaque "
        "compaction item; endpoint errors propagate; session_limit: the underlying session's read limit"
    ),
    "responses_session": (
        "session only: OpenAIResponsesCompactionSession over a file SQLiteSession, its stored history under a refused "
        "write (STORE-13), appends while responses.compact is in flight (STORE-14) and reopening (STORE-15)"
    ),
    "runner_session": (
        "session only: OpenAIResponsesCompactionSession over a file SQLiteSession written by Runner.run (each appended turn "
        "replayed through the SDK's loop, so the double stores its response chain), with pop_item and clear_session "
        "(STORE-18, STORE-19) and the documented manual run_compaction(force), which compacts by the response id the "
        "session kept (previous_response_id where stored); threshold: the Runner's own trigger after each turn"
    ),
    "runner": (
        "core only: Runner.run (run_streamed with streamed) replaying the history's last step through the SDK's own loop, "
        "compacting as the Runner does after a response (by previous_response_id where the release or compaction_mode says "
        "so, against the double's stored chains); store: ModelSettings(store=...); session_limit: RunConfig(session_settings="
        "SessionSettings(limit=...)), the session items the Runner reads into the model's input; input_turns: a call_model_input_filter "
        "keeping the model's input from its input_turns-th newest user message on; abandoned: before the last turn a run "
        "in the same session ended on a call awaiting approval (needs_approval: in 0.9.0, not in 0.6.6; the reasoning model's reasoning item "
        "first where the history reasons), stored by the SDK without its output, and the user sent the last turn instead of "
        "resuming (the output leaves that run's items out); approved: before the last turn such a run of an agent with an output "
        "guardrail and tool_use_behavior stop_on_first_tool or StopAtTools (another tool) is approved (RunState.approve) and "
        "resumed, the tool answering (the output leaves that run's items out); stop_on_first_tool: the agent's tool_use_behavior, "
        "a last step of calls ends the run; tripwire (with stop_on_first_tool): an output guardrail trips on the run's final output "
        "after the step's tools ran (a history whose last step holds the model's message, which the tripped run does not store, is "
        "returned unchanged); gated: the last step's tools need approval, the run parks on them, the user approves and resumes it "
        "(run_streamed with streamed); guardrail_fails: the agent's output guardrail runs its own check agent, whose model request "
        "the API answers with HTTP 500, so the guardrail raises and the run ends in that error; max_turns_handler: a history whose "
        "last turn ends in a step of calls, their outputs and one assistant text message is run to the turn limit after the step, "
        "a max_turns error handler answering with that message (other histories returned unchanged); server_compaction: "
        "the agent's ModelSettings(context_management=...) at that compact_threshold over a plain SQLiteSession (no compaction "
        "session), the Responses API compacting server-side (the double answers the compaction item before the step) and the "
        "SDK storing that item in the session; no declared "
        "trigger (the Runner compacts after a response, on candidate items)"
    ),
    "tool_output_trimmer": (
        "core only: ToolOutputTrimmer, the SDK's call_model_input_filter, on the model's input as the Runner calls it "
        "before each model call: tool outputs before the last recent_turns user messages over max_output_chars are "
        "shortened in place to a header and a preview of preview_chars (declared trimmed_result_chars: max_output_chars, "
        "SPEC CORE-40); no summarizer, no trigger (every call filters)"
    ),
    "handoff_history": (
        "core only: Runner.run with RunConfig(nest_handoff_history=True), the agent's model answering the history with a handoff "
        "(its reasoning item first where the history holds reasoning); the output is the input the next agent's model receives, "
        "the transcript nested into one assistant summary message by the SDK (no summarizer model, no trigger: every handoff nests); "
        "hosted_tools: the first agent's handoff step also holds the calls its server-run tools made in the same response "
        "(a remote MCP call, a code interpreter call, an image generation call), which the SDK records without running user code; "
        "said: each handing agent's step also holds the message it says beside its handoff call ('I am handing this conversation over "
        "to …'); hops=2: the second agent hands off again, so the third agent's model receives the transcript nested twice (the first "
        "<CONVERSATION HISTORY> re-read at the second handoff, as a triage -> specialist -> specialist chain runs); "
        "returned=next_turn: the output is the run's history for the user's next turn (RunResult.to_input_list, the SDK's "
        "documented continuation: mode='normalized' from 0.12.2) after the second agent answered; chained: the run continues by the "
        "server's stored responses (auto_previous_response_id=True), so the output is the stored chain the next agent's request names "
        "followed by its input, what its model reads as the API resolves it; conversation: likewise in a Conversations API "
        "conversation (client.conversations.create(), Runner.run(conversation_id=...)); input_filter=remove_all_tools: the handoff "
        "carries the SDK's shipped remove_all_tools filter, which takes precedence over the nesting"
    ),
    "sandbox_compaction": (
        "core only: a SandboxAgent (default capabilities, Compaction at StaticCompactionPolicy(threshold)) run by Runner.run on "
        "the SDK's local UnixLocalSandboxClient over a plain SQLiteSession: the history's last turn replayed (max_turns=1), the "
        "API compacting server-side where a request reaches the threshold (the double answers the compaction item before the "
        "step), then the user's next turn; the output is that turn's model input, which the capability cuts at its newest "
        "compaction item (process_context), the probe taken off; streamed: run_streamed; store: ModelSettings(store=...); "
        "no declared trigger (the API compacts on its own count)"
    ),
    "encrypted_session": (
        "core only: EncryptedSession(ttl) over a SQLiteSession written and read by Runner.run under a clock the adapter sets: "
        "the last step's tools need approval, the run parks on the calls, the user approves approval_wait seconds later and "
        "resumes it, and the next turn comes ttl + 1 seconds after the calls were written; the output is that turn's model "
        "input, the items the session still reads (every expired item silently skipped, as documented); a history whose "
        "last step makes no call is returned unchanged"
    ),
}
CONFIGURATIONS: list[tuple[str, dict[str, Any]]] = [
    ("responses_compaction", {"threshold": 4}),
    ("responses_compaction", {"threshold": 10}),
    ("responses_compaction", {"threshold": 4, "session_limit": 8}),
    ("responses_session", {"threshold": 4}),
    ("runner_session", {}),
    ("runner", {"threshold": 4}),
    ("runner", {"threshold": 4, "streamed": True}),
    ("runner", {"threshold": 4, "store": False}),
    ("runner", {"threshold": 4, "session_limit": 8}),
    ("runner", {"threshold": 4, "input_turns": 1}),
    ("runner", {"threshold": 4, "abandoned": True}),
    ("runner", {"threshold": 100, "approved": "stop_at_tools"}),
    ("runner", {"threshold": 100, "streamed": True, "stop_on_first_tool": True, "tripwire": True}),
    ("runner", {"threshold": 100, "streamed": True, "stop_on_first_tool": True, "tripwire": True, "gated": True}),
    ("runner", {"threshold": 100, "streamed": True, "guardrail_fails": True}),
    ("runner", {"threshold": 100, "max_turns_handler": True, "guardrail_fails": True}),
    ("runner", {"server_compaction": 500}),
    ("handoff_history", {}),
    ("handoff_history", {"hosted_tools": True}),
    ("handoff_history", {"returned": "next_turn"}),
    ("handoff_history", {"said": True, "hops": 2}),
    ("handoff_history", {"chained": True}),
    ("handoff_history", {"conversation": True}),
    # conversation with input_filter="remove_all_tools" is a reported bug's target only (openai-agents-python#2151):
    # from 0.14.1 the SDK refuses the pair up front with a UserError, the fix, which a row here would show as a crash.
    ("handoff_history", {"input_filter": "remove_all_tools"}),
    ("tool_output_trimmer", {}),
    ("tool_output_trimmer", {"max_output_chars": 40, "preview_chars": 20}),
    ("sandbox_compaction", {"threshold": 3800}),
    ("encrypted_session", {}),
]
"""What ``compaction-suite matrix`` runs: histories as the SDK's sessions store them."""
NOT_ADAPTED = (
    "the Runner replays a history's last step only when the SDK's loop can produce it (model items, then the outputs of "
    "its function calls in their order): a custom tool call or an item between a call and its output is returned unchanged; "
    "the Runner's own previous_response_id / conversation_id for runner (server-managed state, no local session to compact; "
    "handoff_history drives auto_previous_response_id with chained and conversation_id with conversation, where the SDK from 0.14.1 turns nest_handoff_history off and refuses an input filter); a custom handoff_history_mapper or handoff input_filter (the user's code: only the SDK's remove_all_tools is driven); "
    "OpenAIConversationsSession (server-side history, never compacted locally); sandbox_compaction runs the sandbox agents on "
    "the SDK's local client only (docker and hosted sandbox clients, a sandbox Memory capability and a dynamic compaction "
    "policy are not driven)"
)

_ids = itertools.count(1)


def __getattr__(name: str) -> Any:
    """``UNAVAILABLE`` (read by ``compaction-suite matrix``), computed when asked."""
    if name == "UNAVAILABLE":
        return double_refuses("/responses/compact", {"model": COMPACT_MODEL, "input": [{"type": "message", "role": "user", "content": "hi"}]})
    raise AttributeError(name)


@factory
def responses_compaction(settings: Any, **given: Any) -> Any:
    """``OpenAIResponsesCompactionSession`` over an in-memory ``SQLiteSession``, compacting through
    the suite's summarizer (``/v1/responses/compact``) when ``threshold`` candidate items are stored."""
    o = options(DEFAULTS["responses_compaction"], given)
    memory = requires("agents.memory", EXTRA)
    openai = requires("openai", EXTRA)
    threshold = int(o["threshold"])
    parameters = inspect.signature(memory.OpenAIResponsesCompactionSession.__init__).parameters
    if "compaction_mode" not in parameters:
        raise CannotDrive("openai_agents:responses_compaction", "openai-agents", "OpenAIResponsesCompactionSession has no compaction_mode='input' before 0.6.9 (openai_agents:runner drives its previous_response_id mode through the Runner)")
    if o["session_limit"] is not None and not hasattr(memory, "SessionSettings"):
        raise CannotDrive("openai_agents:responses_compaction", "openai-agents", "SessionSettings (session_limit) is missing")

    def should_compact(context: dict[str, Any]) -> bool:
        return len(context["compaction_candidate_items"]) >= threshold

    async def run(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        n = next(_ids)
        client = openai.AsyncOpenAI(base_url=settings.base_url, api_key=settings.api_key, timeout=settings.summarizer_timeout, max_retries=0)
        limit = o["session_limit"]
        extra = {"session_settings": memory.SessionSettings(limit=int(limit))} if limit is not None else {}
        store = memory.SQLiteSession(f"compaction-suite-{n}", **extra)
        try:
            await store.add_items(items)
            session = memory.OpenAIResponsesCompactionSession(
                f"compaction-suite-{n}", store, client=client, model=COMPACT_MODEL,
                compaction_mode="input", should_trigger_compaction=should_compact,
            )  # fmt: skip
            await session.run_compaction({"response_id": f"resp_compaction_suite_{n}", "store": False})
            return list(await store.get_items(limit=10**9) if limit is not None else await session.get_items())  # every stored item, past the read limit
        finally:
            store.close()
            await client.close()

    capabilities: dict[str, Any] = {**declared("responses", system_prompt="outside"), "trigger": {"messages": threshold}, **programs_held(requires("agents", EXTRA))}  # candidate items <= items
    return make("openai_agents.OpenAIResponsesCompactionSession", {"core"}, run, declared=capabilities, is_async=True)


class _Session:
    """The SDK's stored session as a user builds it (profile ``session``, SPEC STORE-13..15): a file
    ``SQLiteSession`` at ``path`` under ``OpenAIResponsesCompactionSession``, compacting in ``input``
    mode through the suite's ``/v1/responses/compact``. ``append`` is the session's ``add_items`` (what
    ``Runner`` writes), ``load`` its ``get_items`` (what ``Runner`` gives the model), ``compact`` its
    ``run_compaction`` after a response, as ``Runner`` calls it."""

    def __init__(self, memory: Any, openai: Any, settings: Any, path: str, threshold: int) -> None:
        self._client = openai.AsyncOpenAI(base_url=settings.base_url, api_key=settings.api_key, timeout=settings.summarizer_timeout, max_retries=0)
        self._store = memory.SQLiteSession("compaction-suite", path)
        self._session = memory.OpenAIResponsesCompactionSession(
            "compaction-suite", self._store, client=self._client, model=COMPACT_MODEL, compaction_mode="input",
            should_trigger_compaction=lambda context: len(context["compaction_candidate_items"]) >= threshold,
        )  # fmt: skip
        self._closed = False

    async def append(self, items: list[dict[str, Any]]) -> None:
        await self._session.add_items(items)

    async def load(self) -> list[Any]:
        return list(await self._session.get_items())

    async def compact(self) -> None:
        await self._session.run_compaction({"response_id": f"resp_compaction_suite_{next(_ids)}", "store": False})

    async def pop(self) -> Any:
        """``Session.pop_item``: the newest item, removed (SPEC STORE-18)."""
        return await self._session.pop_item()

    async def clear(self) -> None:
        """``Session.clear_session`` (SPEC STORE-19)."""
        await self._session.clear_session()

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._store.close()
            await self._client.close()


@factory
def responses_session(settings: Any, **given: Any) -> Any:
    """``OpenAIResponsesCompactionSession`` over a file ``SQLiteSession`` (`_Session`): ``session(path)``
    for profile ``session``; ``compact`` is `responses_compaction`'s (the profile's tests do not call it)."""
    o = options(DEFAULTS["responses_session"], given)
    memory = requires("agents.memory", EXTRA)
    openai = requires("openai", EXTRA)
    threshold = int(o["threshold"])
    compactor = responses_compaction(settings, threshold=threshold)
    compactor.profiles = frozenset({"session"})
    compactor.capabilities = {**compactor.capabilities, "session_removes": list(REMOVES)}
    compactor.session = lambda path: _Session(memory, openai, settings, path, threshold)
    return compactor


REMOVES = ("pop", "clear")
"""What the SDK's ``Session`` protocol has that removes items: ``pop_item`` and ``clear_session`` (no removal by id)."""


# --- the Runner's path (SPEC Part A, "Wire formats", Decision: response chains)

SCRIPTED = "testdouble_output"
"""The key of a request body the suite's double answers as a scripted model (`conformance.summarizer_apis.SCRIPTED`)."""


def last_step(items: list[dict[str, Any]]) -> tuple[list[Any], list[Any], list[Any], dict[str, Any]] | None:
    """The history as the ``Runner`` would have written it in one run: (the items stored before the run,
    the run's input from the last user message up to the last model step, that step's items, its calls'
    outputs by ``call_id``); None when the SDK's loop cannot have produced the last step (no user message,
    a custom tool call, an item between a call and its output, outputs not those of the step's calls in
    their order, a call still without its output)."""
    users = [n for n, i in enumerate(items) if item_kind(i) == "message" and i.get("role") == "user"]
    if not users:
        return None
    turn = items[users[-1] :]
    found = last_model_step(turn)
    if found is None:
        return None
    start, end, outputs = found
    return items[: users[-1]], turn[:start], turn[start:end], outputs


def _argument(args: tuple[Any, ...], kwargs: dict[str, Any], name: str, index: int) -> Any:
    """``OpenAIResponsesModel.get_response``'s argument ``name``, given by keyword or at position ``index``, or None."""
    return kwargs[name] if name in kwargs else (args[index] if len(args) > index else None)


def scripted_model(models: Any, answer: Any, chains: dict[str, list[dict[str, Any]]] | None = None) -> Any:
    """The SDK's ``OpenAIResponsesModel`` whose every request carries the items to answer with
    (``extra_body``), ``answer(input_items)``: the suite's double answers it with those items, stores
    and chains the response as the API does (a model scripted through the double, no network).
    With ``chains`` (response id -> what that response stands for: its resolved input, then its output),
    ``answer`` receives what the model reads as the API resolves it: the chain its request's
    ``previous_response_id`` (or ``conversation_id``) names, then its ``input`` (OpenAI's "Conversation state"
    guide; `conformance.response_chains`), and each answered response is added to ``chains`` (and stands
    for its conversation's items from then on)."""

    class Scripted(models.OpenAIResponsesModel):
        def _scripted(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any], list[dict[str, Any]]]:
            import dataclasses

            named = "model_settings" in kwargs
            settings = kwargs["model_settings"] if named else args[2]
            given = kwargs["input"] if "input" in kwargs else args[1]
            given = [{"type": "message", "role": "user", "content": given}] if isinstance(given, str) else [i if isinstance(i, dict) else i.model_dump(exclude_unset=True) for i in given]
            if chains is not None:
                named_chain = _argument(args, kwargs, "previous_response_id", 7) or _argument(args, kwargs, "conversation_id", 8)
                given = [*chains.get(named_chain, []), *given] if named_chain else given
            scripted = dataclasses.replace(settings, extra_body={**(settings.extra_body or {}), SCRIPTED: answer(given)})
            called = (args, {**kwargs, "model_settings": scripted}) if named else ((*args[:2], scripted, *args[3:]), kwargs)
            return (*called, given)

        async def get_response(self, *args: Any, **kwargs: Any) -> Any:
            conversation = _argument(args, kwargs, "conversation_id", 8)
            args, kwargs, read = self._scripted(args, kwargs)
            response = await super().get_response(*args, **kwargs)
            if chains is not None and getattr(response, "response_id", None):
                chain = [*read, *(i if isinstance(i, dict) else i.model_dump(exclude_unset=True) for i in response.output)]
                chains[response.response_id] = chain
                if conversation:
                    chains[conversation] = chain
            return response

        async def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            args, kwargs, _ = self._scripted(args, kwargs)
            async for event in super().stream_response(*args, **kwargs):
                yield event

    return Scripted


@factory
def runner(settings: Any, **given: Any) -> Any:
    """``Runner.run`` (``streamed``: ``run_streamed``) with ``OpenAIResponsesCompactionSession`` over an
    in-memory ``SQLiteSession``: ``compact(items)`` stores the items before the history's last user message
    (earlier runs), runs the last turn with the agent's model answering the history's last step and its tools
    answering that step's calls with the history's outputs, and returns every stored item. The SDK's loop
    writes the turn and compacts after the response (``threshold`` candidate items), with ``store`` in the
    model settings and the SDK's default ``compaction_mode`` unless one is given."""
    o = options(DEFAULTS["runner"], given)
    agents = requires("agents", EXTRA)
    memory = requires("agents.memory", EXTRA)
    models = requires("agents.models.openai_responses", EXTRA)
    openai = requires("openai", EXTRA)
    threshold = int(o["threshold"])
    mode = {"compaction_mode": o["compaction_mode"]} if o["compaction_mode"] is not None else {}
    if mode and not accepts(memory.OpenAIResponsesCompactionSession.__init__, "compaction_mode"):
        raise CannotDrive("openai_agents:runner", "openai-agents", "OpenAIResponsesCompactionSession has no compaction_mode before 0.6.9")
    limit = o["session_limit"]
    if limit is not None and not (hasattr(memory, "SessionSettings") and accepts(agents.RunConfig, "session_settings")):
        raise CannotDrive("openai_agents:runner", "openai-agents", "RunConfig has no session_settings (session_limit) before 0.8.0")
    read = {"session_settings": memory.SessionSettings(limit=int(limit))} if limit is not None else {}
    if o["input_turns"] is not None:
        if not accepts(agents.RunConfig, "call_model_input_filter"):
            raise CannotDrive("openai_agents:runner", "openai-agents", "RunConfig has no call_model_input_filter (input_turns)")
        read["call_model_input_filter"] = newest_turns(_run_config_module(agents), int(o["input_turns"]))
    if o["abandoned"] and "needs_approval" not in inspect.signature(agents.FunctionTool).parameters:
        raise CannotDrive("openai_agents:runner", "openai-agents", "FunctionTool has no needs_approval (abandoned)")
    if o["approved"] not in (None, *APPROVALS):
        raise ValueError(f"approved must be one of {APPROVALS} or None, not {o['approved']!r}")
    for gate in ("approved", "gated"):
        if o[gate] and not (hasattr(agents, "RunState") and "needs_approval" in inspect.signature(agents.FunctionTool).parameters):
            raise CannotDrive("openai_agents:runner", "openai-agents", f"no RunState or FunctionTool.needs_approval ({gate})")
    if o["tripwire"] and not o["stop_on_first_tool"]:
        raise ValueError("tripwire needs stop_on_first_tool (only then does a step of calls end the run, where the guardrail runs)")
    if o["tripwire"] and o["guardrail_fails"]:
        raise ValueError("tripwire and guardrail_fails are two verdicts of one guardrail: give one")
    if o["max_turns_handler"] and not accepts(agents.Runner.run, "error_handlers"):
        raise CannotDrive("openai_agents:runner", "openai-agents", "Runner.run has no error_handlers (max_turns_handler) before 0.8.0")
    failing = _FailingGuardrail(agents, openai, settings) if o["guardrail_fails"] else None
    server = o["server_compaction"]
    if server is not None and not accepts(agents.ModelSettings, "context_management"):
        raise CannotDrive("openai_agents:runner", "openai-agents", "ModelSettings has no context_management (server_compaction) before 0.16.0")
    shape = _Shape(agents, stop=bool(o["stop_on_first_tool"]), trips=bool(o["tripwire"]), gated=bool(o["gated"]), failing=failing, server_compaction=int(server) if server is not None else None)
    _loop_starts(agents, "openai_agents:runner")
    counted = _RunUsage(agents)

    async def run(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        counted.runs.clear()
        handled = handled_step(items) if o["max_turns_handler"] else None
        if o["max_turns_handler"] and handled is None:
            return list(items)  # no run the turn limit ends with the handler's answer ends in this history
        plan = handled[:4] if handled is not None else last_step(items)
        if plan is None:
            return list(items)  # no run of the SDK's loop ends in this history
        stored, turn, step, outputs = plan
        if not returnable(agents, outputs):
            return list(items)  # a tool result no tool of the SDK returns as the history holds it
        if o["tripwire"] and not _retained_on_tripwire(step):
            return list(items)  # the history shows an item delivered which the tripped run does not store
        n = next(_ids)
        client = openai.AsyncOpenAI(base_url=settings.base_url, api_key=settings.api_key, timeout=settings.summarizer_timeout, max_retries=0)
        store = memory.SQLiteSession(f"compaction-suite-runner-{n}")
        try:
            await store.add_items(stored)
            session = store if server is not None else memory.OpenAIResponsesCompactionSession(
                f"compaction-suite-runner-{n}", store, client=client, model=COMPACT_MODEL,
                should_trigger_compaction=lambda context: len(context["compaction_candidate_items"]) >= threshold, **mode,
            )  # fmt: skip
            left: list[dict[str, Any]] = []
            if o["abandoned"]:
                left = await abandon_approval(agents, models, client, session, f"{n}", reasons=any(item_kind(i) == "reasoning" for i in items), **read)
            if o["approved"]:
                left = await resume_approval(agents, models, client, session, f"{n}", str(o["approved"]), **read)
            agent = _replaying(agents, models, client, step, outputs, store=bool(o["store"]), shape=shape)
            ending = {"error_handlers": {"max_turns": _answering(agents, handled[4])}} if handled is not None else {}
            await _run_turn(agents, agent, turn, session, streamed=bool(o["streamed"]), hooks=counted.hooks, gated=bool(o["gated"]), failing=failing, ending=ending, **read)
            return [i for i in await store.get_items() if not any(_same_item(i, a) for a in left)]
        finally:
            store.close()
            await client.close()

    capabilities: dict[str, Any] = {**declared("responses", system_prompt="outside"), "usage": "reported"}
    compactor = make("openai_agents.Runner+OpenAIResponsesCompactionSession", {"core"}, run, declared=capabilities, is_async=True)
    compactor.reported_usage = counted.reported
    return compactor


APPROVALS = ("stop_on_first_tool", "stop_at_tools")
"""The ``tool_use_behavior`` of the agent whose approved run ``approved`` resumes (`resume_approval`)."""
ABANDONED_REQUEST = "Deploy the release to production now."
"""The user message of the run `abandon_approval` leaves waiting on an approval (a tool a user gates)."""


async def abandon_approval(agents: Any, models: Any, client: Any, session: Any, n: str, *, reasons: bool, **read: Any) -> list[dict[str, Any]]:
    """One run of the SDK's loop in ``session`` that ends waiting on an approval: the user asks for a
    deploy, the agent's model answers with a call to a tool declared ``needs_approval=True`` (its reasoning
    item first where ``reasons``, as a reasoning model answers), and ``Runner.run`` returns with the call in
    ``interruptions``, the SDK having stored the turn and the model's items, the call without an output.
    The user then sends the next message instead of resuming the run (``RunState.approve``/``reject``, the
    documented resume, which writes the call's output): the session holds a call the SDK's own
    ``drop_orphan_function_calls`` removes from the next model input ("so resumptions or retries do not
    replay stale tool calls", agents/run_internal/items.py). Returns the items the run stored, which stand
    for nothing of the history."""
    call = {"type": "function_call", "id": f"fc_abandoned_{n}", "call_id": f"call_abandoned_{n}", "name": "deploy_release", "arguments": '{"target": "production"}', "status": "completed"}
    step = ([{"type": "reasoning", "id": f"rs_abandoned_{n}", "summary": [], "encrypted_content": f"gAAAAAabandoned{n}"}] if reasons else []) + [call]

    async def refuse(_context: Any, _arguments: str) -> str:
        raise AssertionError("an approval the user never gave ran the tool")

    schema = {"type": "object", "properties": {}, "additionalProperties": True}
    tool = agents.FunctionTool(name="deploy_release", description="Deploy a release (asks the user first)", params_json_schema=schema, on_invoke_tool=refuse, strict_json_schema=False, needs_approval=True)
    model = scripted_model(models, lambda _given: step)(model=COMPACT_MODEL, openai_client=client)
    agent = agents.Agent(name="compaction-suite", model=model, tools=[tool])
    merge = {} if "session_settings" in read else {"session_input_callback": lambda history, new: history + new}
    request = {"type": "message", "role": "user", "content": ABANDONED_REQUEST}
    result = await agents.Runner.run(agent, [request], session=session, run_config=agents.RunConfig(tracing_disabled=True, **merge, **read), max_turns=2)
    if not result.interruptions:
        raise AssertionError("the run with a call awaiting approval ended without an interruption")
    return [request, *step]


APPROVED_OUTPUT = "Release deployed to production."
"""What the approved tool of `resume_approval` answers."""
APPROVED_ANSWER = "The release is deployed."
"""What the agent's model says once the approved tool answered (`resume_approval`)."""


async def resume_approval(agents: Any, models: Any, client: Any, session: Any, n: str, behavior: str, **read: Any) -> list[dict[str, Any]]:
    """The SDK's documented human-in-the-loop flow in ``session`` (docs/human_in_the_loop.md: "approve or
    reject each interruption, then resume by passing the state back to ``Runner.run``"): the user asks for a
    deploy, the agent's model calls a tool declared ``needs_approval=True``, ``Runner.run`` returns with the
    call in ``interruptions``; the user approves (``result.to_state()``, ``RunState.approve``) and resumes
    (``Runner.run(agent, state, session=...)``): the tool runs and the model answers `APPROVED_ANSWER`. The
    agent has an output guardrail that never trips and the ``tool_use_behavior`` ``behavior``: ``stop_on_first_tool``
    (the approved tool's output ends the run) or ``stop_at_tools`` (``StopAtTools`` naming another tool, so the
    approved one is not terminal and the model answers after it). Returns the items the runs stored, which stand
    for nothing of the history."""
    call = {"type": "function_call", "id": f"fc_approved_{n}", "call_id": f"call_approved_{n}", "name": "deploy_release", "arguments": '{"target": "production"}', "status": "completed"}
    said = {"type": "message", "role": "assistant", "id": f"msg_approved_{n}", "status": "completed", "content": [{"type": "output_text", "text": APPROVED_ANSWER, "annotations": []}]}

    def answer(given: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [said] if given and item_kind(given[-1]) == "function_call_output" else [call]

    async def deploy(_context: Any, _arguments: str) -> str:
        return APPROVED_OUTPUT

    @agents.output_guardrail
    async def allowed(_context: Any, _agent: Any, _output: Any) -> Any:
        return agents.GuardrailFunctionOutput(output_info="allowed", tripwire_triggered=False)

    schema = {"type": "object", "properties": {}, "additionalProperties": True}
    tool = agents.FunctionTool(name="deploy_release", description="Deploy a release (asks the user first)", params_json_schema=schema, on_invoke_tool=deploy, strict_json_schema=False, needs_approval=True)
    stop = "stop_on_first_tool" if behavior == "stop_on_first_tool" else {"stop_at_tool_names": ["close_ticket"]}
    model = scripted_model(models, answer)(model=COMPACT_MODEL, openai_client=client)
    agent = agents.Agent(name="compaction-suite", model=model, tools=[tool], output_guardrails=[allowed], tool_use_behavior=stop)
    merge = {} if "session_settings" in read else {"session_input_callback": lambda history, new: history + new}
    config = agents.RunConfig(tracing_disabled=True, **merge, **read)
    request = {"type": "message", "role": "user", "content": ABANDONED_REQUEST}
    result = await agents.Runner.run(agent, [request], session=session, run_config=config, max_turns=3)
    if not result.interruptions:
        raise AssertionError("the run with a call awaiting approval ended without an interruption")
    state = result.to_state()
    for interruption in result.interruptions:
        state.approve(interruption)
    await agents.Runner.run(agent, state, session=session, run_config=config, max_turns=3)
    return [request, call, {"type": "function_call_output", "call_id": call["call_id"]}, said]


def _same_item(stored: Any, made: dict[str, Any]) -> bool:
    """Whether the stored item ``stored`` is the item ``made`` (by its id, or a message by its text)."""
    stored = stored if isinstance(stored, dict) else stored.model_dump(exclude_unset=True)
    if "id" in made:
        return stored.get("id") == made["id"]
    if "call_id" in made:
        return item_kind(stored) == item_kind(made) and stored.get("call_id") == made["call_id"]
    return item_kind(stored) == "message" and stored.get("role") == made["role"] and stored.get("content") in (made["content"], [{"type": "input_text", "text": made["content"]}])


def _run_config_module(agents: Any) -> Any:
    """The module holding ``ModelInputData``, what a ``call_model_input_filter`` returns: ``agents.run_config``
    where the release has it, else ``agents.run`` (0.6.x, where ``RunConfig`` and its filter types lived; the
    release sweep found ``input_turns`` refused at 0.6.6 by an import of the later module, branch openai,
    2026-11-28)."""
    import importlib.util

    module = requires("agents.run_config" if importlib.util.find_spec("agents.run_config") else "agents.run", EXTRA)
    if not hasattr(module, "ModelInputData"):
        raise CannotDrive("openai_agents:runner", "openai-agents", "no ModelInputData for call_model_input_filter (input_turns)")
    return module


def newest_turns(run_config: Any, turns: int) -> Any:
    """A ``call_model_input_filter`` keeping the model's input from its ``turns``-th newest user message on
    (all of it when it holds fewer): a cut at a user message never parts a call from its output."""

    def keep(data: Any) -> Any:
        items = list(data.model_data.input)
        users = [n for n, i in enumerate(items) if item_kind(i) == "message" and i.get("role") == "user"]
        start = users[-turns] if len(users) >= turns else 0
        return run_config.ModelInputData(input=items[start:], instructions=data.model_data.instructions)

    return keep


class _RunUsage:
    """The usage the SDK reports for the runs of one ``compact`` call (SPEC COST-1, COST-2): the run's own
    ``Usage`` object, the one ``RunResult.context_wrapper.usage`` is, taken from the context its
    ``on_agent_start`` hook gets (the run's wrapper, or from 0.2x an ``AgentHookContext`` sharing its
    ``usage``), and read after the run, whatever ended it (``MaxTurnsExceeded`` after a step of calls)."""

    def __init__(self, agents: Any) -> None:
        self.runs: list[Any] = []
        runs = self.runs

        class Counted(agents.RunHooks):
            async def on_agent_start(self, context: Any, agent: Any) -> None:
                if not any(u is context.usage for u in runs):
                    runs.append(context.usage)

        self.hooks = Counted()

    def reported(self) -> dict[str, int] | None:
        """The input and output tokens the SDK counted over the call's runs; None when no run started."""
        if not self.runs:
            return None
        return {"input_tokens": sum(int(u.input_tokens) for u in self.runs), "output_tokens": sum(int(u.output_tokens) for u in self.runs)}


def _loop_starts(agents: Any, target: str) -> None:
    """Raise `CannotDrive` where the SDK's loop cannot start beside the installed ``openai``: 0.6.6, 0.9.0
    and 0.15.0 beside openai 2.54, whose ``InputTokensDetails`` requires a field the SDK's ``Usage`` default
    lacks (0.24.0 starts). Only an environment with a newer ``openai`` than the release's day gets there: a
    sweep with ``--companions today``, an offline one (``--no-index``: nothing dated) or a ``--bugs`` entry
    that pins no ``openai``; the default sweep (``--companions release``) installs each release beside its
    day's openai (2.15.0, 2.21.0, 2.33.0), where all three start (branch openai, 2026-11-28). A contract
    error, not a finding, whose line says the remedy."""
    try:
        agents.RunContextWrapper(context=None)
    except Exception as error:
        why = f"its Runner cannot start beside openai {requires('openai', EXTRA).__version__}, newer than the release's own day"
        raise CannotDrive(target, "openai-agents", f"{why} (sweep with --companions release, or pin openai): {str(error).splitlines()[0]}") from error


def _retained_on_tripwire(step: list[Any]) -> bool:
    """Whether a run whose output guardrail trips after ``step`` stores all of it: the SDK documents that a
    tripwire persists "already-completed tool call and tool output items, together with any reasoning
    context required to replay those calls, while excluding the rejected candidate final output"
    (docs/guardrails.md, 0.24.0), so a step of calls, each reasoning item before a call, and no message
    (the model's message beside or instead of calls is not stored: not a history that run produces)."""
    kinds = [item_kind(i) for i in step]
    return bool(kinds) and set(kinds) <= {"reasoning", "function_call"} and kinds[-1] == "function_call"


GUARDRAIL_FAULT = "500"
"""What the API answers the failing output guardrail's check (`_FailingGuardrail`): HTTP 500, which OpenAI's
error codes guide lists ("500 - The server had an error while processing your request"; `summarizer_apis.SENT`)."""
GUARDRAIL_CHECK = "Say whether this answer is safe to deliver to the user."
"""The instructions of the failing output guardrail's check agent."""


class _FailingGuardrail:
    """An output guardrail as the SDK's guardrail docs build one, a check agent run by ``Runner.run`` on
    the guardrail's input, its model the SDK's ``OpenAIResponsesModel`` on its own double, which answers
    every request with `GUARDRAIL_FAULT` (`ModelDouble`): the client sends once (``max_retries=0``, as
    `runner`'s own client), so the check's run raises the client's error and the guardrail with it.
    ``raised`` keeps each error it raised, so the caller tells that error from any other (`raised_in`)."""

    def __init__(self, agents: Any, openai: Any, settings: Any) -> None:
        from compaction_suite.conformance.summarizer_apis import sends

        from ._model_double import ModelDouble

        if not sends("responses", GUARDRAIL_FAULT):
            raise AssertionError(f"the Responses API is not known to send {GUARDRAIL_FAULT}")
        models = requires("agents.models.openai_responses", EXTRA)
        self.double = ModelDouble(None, fault=GUARDRAIL_FAULT)
        self.raised: list[BaseException] = []
        raised = self.raised
        double = self.double

        @agents.output_guardrail
        async def checked(_context: Any, _agent: Any, output: Any) -> Any:
            client = openai.AsyncOpenAI(base_url=double.server().base_url, api_key=settings.api_key, timeout=settings.summarizer_timeout, max_retries=0)
            check = agents.Agent(name="output check", instructions=GUARDRAIL_CHECK, model=models.OpenAIResponsesModel(model=COMPACT_MODEL, openai_client=client))
            try:
                verdict = await agents.Runner.run(check, str(output), run_config=agents.RunConfig(tracing_disabled=True))
            except Exception as error:
                raised.append(error)
                raise
            finally:
                await client.close()
            return agents.GuardrailFunctionOutput(output_info=verdict.final_output, tripwire_triggered=False)

        self.guardrail = checked

    def raised_in(self, error: BaseException) -> bool:
        """Whether ``error``, or an error it was raised from, is one this guardrail raised."""
        seen: set[int] = set()
        found: BaseException | None = error
        while found is not None and id(found) not in seen:
            if any(found is r for r in self.raised):
                return True
            seen.add(id(found))
            found = found.__cause__ or found.__context__
        return False


def handled_step(items: list[dict[str, Any]]) -> tuple[list[Any], list[Any], list[Any], dict[str, Any], str] | None:
    """`runner`'s ``max_turns_handler`` plan: for a history whose last turn ends in a model step of calls,
    their outputs and one assistant message holding one text part, `last_step` of the history before that
    message and the message's text (what the handler answers); None for any other history (a closing
    message with reasoning before it, refusals or several parts: no handler's answer is stored so)."""
    if not items:
        return None
    closing = items[-1]
    if item_kind(closing) != "message" or closing.get("role") != "assistant" or len(items) < 2 or item_kind(items[-2]) != "function_call_output":
        return None
    content = closing.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict) and content[0].get("type") == "output_text":
        text = str(content[0].get("text", ""))
    else:
        return None
    plan = last_step(items[:-1])
    if plan is None or not any(item_kind(i) == "function_call" for i in plan[2]):
        return None
    return (*plan, text)


def _answering(agents: Any, text: str) -> Any:
    """A ``max_turns`` error handler answering with ``text`` as the run's final output, kept in history
    (``RunErrorHandlerResult``'s default ``include_in_history=True``)."""

    def handler(_data: Any) -> Any:
        return agents.RunErrorHandlerResult(final_output=text)

    return handler


class _Shape:
    """How the replaying agent is built beyond its scripted model and tools (`runner`'s options): its
    ``tool_use_behavior`` (``stop``: ``stop_on_first_tool``), an output guardrail that trips on every final
    output (``trips``) or whose check fails (``failing``, `_FailingGuardrail`), and tools declared
    ``needs_approval=True`` (``gated``); ``server_compaction``: its model settings turn on the Responses API's
    server-side compaction at that ``compact_threshold`` (``ModelSettings.context_management``)."""

    def __init__(
        self, agents: Any, *, stop: bool = False, trips: bool = False, gated: bool = False, failing: _FailingGuardrail | None = None, server_compaction: int | None = None,
    ) -> None:
        self.gated = gated
        self.model: dict[str, Any] = {"context_management": [{"type": "compaction", "compact_threshold": server_compaction}]} if server_compaction is not None else {}
        self.agent: dict[str, Any] = {"tool_use_behavior": "stop_on_first_tool"} if stop else {}
        if trips:

            @agents.output_guardrail
            async def withheld(_context: Any, _agent: Any, _output: Any) -> Any:
                return agents.GuardrailFunctionOutput(output_info="withheld", tripwire_triggered=True)

            self.agent["output_guardrails"] = [withheld]
        if failing is not None:
            self.agent["output_guardrails"] = [failing.guardrail]


def _replaying(agents: Any, models: Any, client: Any, step: list[Any], outputs: dict[str, Any], *, store: bool, shape: _Shape | None = None) -> Any:
    """The agent whose model answers with ``step`` and whose tools answer its calls with ``outputs``,
    built as ``shape`` says (`_Shape`), its ``ModelSettings`` with ``store`` and the shape's model settings."""
    shape = shape or _Shape(agents)
    model = scripted_model(models, lambda _given: step)(model=COMPACT_MODEL, openai_client=client)
    tools = _tools(agents, step, outputs, gated=shape.gated)
    return agents.Agent(name="compaction-suite", model=model, tools=tools, model_settings=agents.ModelSettings(store=store, **shape.model), **shape.agent)


TOOL_PARTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "input_text": ("ToolOutputText", ("text",)),
    "input_image": ("ToolOutputImage", ("image_url", "file_id", "detail")),
    "input_file": ("ToolOutputFileContent", ("file_data", "file_url", "file_id", "filename")),
}
"""A ``function_call_output``'s content part -> the SDK's tool return type that stores it, and the fields the
SDK copies from it (``ItemHelpers._convert_single_tool_output_pydantic_model``, 0.6.6-0.24.0)."""


def tool_return(agents: Any, output: Any) -> Any:
    """What a tool returns for the SDK to store ``output`` (a ``function_call_output``'s output) as it is:
    the text itself, or for a list of content parts the SDK's documented structured returns
    (``ToolOutputText``, ``ToolOutputImage``, ``ToolOutputFileContent``: docs/tools.md "Returning images or
    files from function tools"), which the SDK writes back as ``input_text``/``input_image``/``input_file``
    parts. None where no return stores it: a part of another type, or with a field the SDK does not copy.
    The wire parts themselves are no return value: the SDK stores ``str()`` of such a list, one text (the
    sweep of 2026-11-28 found ``runner`` with ``streamed`` failing CORE-14 on that, an artefact of this
    adapter returning the history's parts as they were)."""
    if isinstance(output, str):
        return output
    if not isinstance(output, list) or not output:
        return None
    returned = []
    for part in output:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in TOOL_PARTS:
            return None
        name, fields = TOOL_PARTS[kind]
        given = {k: v for k, v in part.items() if k != "type"}
        if set(given) - set(fields) or not hasattr(agents, name):
            return None
        try:
            returned.append(getattr(agents, name)(**given))
        except ValueError:  # pydantic's ValidationError: an image without a url or file id, say
            return None
    return returned


def returnable(agents: Any, outputs: dict[str, Any]) -> bool:
    """Whether tools can return every output of ``outputs`` as the history holds it (`tool_return`)."""
    return all(tool_return(agents, output) is not None for output in outputs.values())


def _tools(agents: Any, step: list[Any], outputs: dict[str, Any], *, gated: bool = False) -> list[Any]:
    """One ``FunctionTool`` per name the step calls, answering each call with the history's output for it
    (`tool_return`: what the tool returns for the SDK to store that output; ``gated``: each declared
    ``needs_approval=True``)."""

    async def answer(context: Any, _arguments: str) -> Any:
        return tool_return(agents, outputs[context.tool_call_id])

    names = dict.fromkeys(str(i.get("name")) for i in step if item_kind(i) == "function_call")
    schema = {"type": "object", "properties": {}, "additionalProperties": True}
    approval = {"needs_approval": True} if gated else {}
    return [agents.FunctionTool(name=name, description=f"{name} (replayed)", params_json_schema=schema, on_invoke_tool=answer, strict_json_schema=False, **approval) for name in names]


async def _run_turn(
    agents: Any, agent: Any, turn: list[Any], session: Any, *, streamed: bool, hooks: Any = None, gated: bool = False,
    failing: _FailingGuardrail | None = None, ending: dict[str, Any] | None = None, **read: Any,
) -> None:
    """One run of the turn, ended after the scripted step (``max_turns=1``: a step of calls ends in
    ``MaxTurnsExceeded`` once the Runner has written its outputs, as the history ends there). Without
    ``read`` the merge is given as ``session_input_callback`` (history, then the turn), which 0.6.x
    requires for a list input; with ``read`` (the run's ``session_settings``, 0.8.0 on) the Runner's
    default merge, the same order, as users of a read limit run it. ``gated``: the run parks on the
    step's calls and is approved and resumed (`_approved_turn`). ``failing``: the agent's failing output
    guardrail, whose error ends the run; ``ending``: further arguments of the run (its ``error_handlers``)."""
    merge = {} if "session_settings" in read else {"session_input_callback": lambda history, new: history + new}
    config = agents.RunConfig(tracing_disabled=True, **merge, **read)
    result = await _run_ended(agents, agent, turn, session, config, streamed=streamed, hooks=hooks, failing=failing, ending=ending)
    if gated and result is not None:
        await _approved_turn(agents, agent, result, session, config, streamed=streamed, hooks=hooks, failing=failing, ending=ending)


async def _run_ended(
    agents: Any, agent: Any, given: Any, session: Any, config: Any, *, streamed: bool, hooks: Any,
    failing: _FailingGuardrail | None = None, ending: dict[str, Any] | None = None,
) -> Any:
    """``Runner.run`` (``streamed``: ``run_streamed``, its events consumed) of ``given`` (a turn, or a
    ``RunState`` to resume), with ``ending``'s further arguments: its result, or None where the run ended in
    the SDK's documented exceptions for how `runner` ends it (``MaxTurnsExceeded`` after a step of calls,
    ``OutputGuardrailTripwireTriggered`` where a guardrail trips) or in the error the ``failing`` guardrail
    raised, which the user's code catches as the run's end: SPEC CORE-14 judges what the session kept either way."""
    more = dict(ending or {})
    try:
        if streamed:
            result = agents.Runner.run_streamed(agent, given, session=session, run_config=config, max_turns=1, hooks=hooks, **more)
            async for _ in result.stream_events():
                pass
            return result
        return await agents.Runner.run(agent, given, session=session, run_config=config, max_turns=1, hooks=hooks, **more)
    except (agents.MaxTurnsExceeded, agents.OutputGuardrailTripwireTriggered):
        return None
    except Exception as error:
        if failing is not None and failing.raised_in(error):
            return None
        raise


async def _approved_turn(
    agents: Any, agent: Any, parked: Any, session: Any, config: Any, *, streamed: bool, hooks: Any,
    failing: _FailingGuardrail | None = None, ending: dict[str, Any] | None = None,
) -> None:
    """The documented resume of a run parked on approvals (docs/human_in_the_loop.md: "approve or reject
    each interruption, then resume by passing the state back to ``Runner.run``"): ``parked.to_state()``,
    ``RunState.approve`` for each interruption, the run resumed on the state the way it ran (``streamed``:
    ``run_streamed``). A run that did not park (a step without calls) needs no approval."""
    if not parked.interruptions:
        return
    state = parked.to_state()
    for interruption in parked.interruptions:
        state.approve(interruption)
    await _run_ended(agents, agent, state, session, config, streamed=streamed, hooks=hooks, failing=failing, ending=ending)


# --- the stored session as the Runner writes it (SPEC STORE-13..15, STORE-18, STORE-19)


class _RunnerSession(_Session):
    """`_Session` written by the SDK's ``Runner``: ``append`` stores what precedes the items' last user
    message and runs that turn through ``Runner.run`` (the agent's model scripted through the suite's
    double, which stores the response chain as the API does), so the session keeps the response id the
    ``Runner`` gave it and compacts after the turn when ``threshold`` candidate items are stored; items
    the SDK's loop cannot have produced are added as they are. ``compact`` is the documented manual
    ``run_compaction({"force": True})``: no response id given, the session compacts by the one it kept
    (``previous_response_id`` where that response was stored, else its items)."""

    def __init__(self, modules: tuple[Any, Any, Any, Any], settings: Any, path: str, o: dict[str, Any]) -> None:
        self._agents, memory, self._models, openai = modules
        self._client = openai.AsyncOpenAI(base_url=settings.base_url, api_key=settings.api_key, timeout=settings.summarizer_timeout, max_retries=0)
        self._store = memory.SQLiteSession("compaction-suite", path)
        mode = {"compaction_mode": o["compaction_mode"]} if o["compaction_mode"] is not None else {}
        threshold = int(o["threshold"])
        self._session = memory.OpenAIResponsesCompactionSession(
            "compaction-suite", self._store, client=self._client, model=COMPACT_MODEL,
            should_trigger_compaction=lambda context: len(context["compaction_candidate_items"]) >= threshold, **mode,
        )  # fmt: skip
        self._stored = bool(o["store"])
        self._closed = False

    async def append(self, items: list[dict[str, Any]]) -> None:
        plan = last_step(items)
        if plan is None or not returnable(self._agents, plan[3]):
            await self._session.add_items(items)
            return
        stored, turn, step, outputs = plan
        if stored:
            await self._session.add_items(stored)
        agent = _replaying(self._agents, self._models, self._client, step, outputs, store=self._stored)
        await _run_turn(self._agents, agent, turn, self._session, streamed=False)

    async def compact(self) -> None:
        await self._session.run_compaction({"force": True})


@factory
def runner_session(settings: Any, **given: Any) -> Any:
    """The SDK's stored session as the ``Runner`` writes it (`_RunnerSession`): ``session(path)`` for
    profile ``session``, declaring its removals (``pop_item``, ``clear_session``); ``compact`` is
    `responses_compaction`'s (the profile's tests do not call it)."""
    o = options(DEFAULTS["runner_session"], given)
    modules = (requires("agents", EXTRA), requires("agents.memory", EXTRA), requires("agents.models.openai_responses", EXTRA), requires("openai", EXTRA))
    if o["compaction_mode"] is not None and not accepts(modules[1].OpenAIResponsesCompactionSession.__init__, "compaction_mode"):
        raise CannotDrive("openai_agents:runner_session", "openai-agents", "OpenAIResponsesCompactionSession has no compaction_mode before 0.6.9")
    compactor = runner(settings, threshold=int(o["threshold"]), store=bool(o["store"]))  # starts the Runner once: a contract error where it cannot
    compactor.profiles = frozenset({"session"})
    compactor.capabilities = {**compactor.capabilities, "session_removes": list(REMOVES)}
    compactor.session = lambda path: _RunnerSession(modules, settings, path, o)
    return compactor


# --- the sandbox agents' Compaction capability (agents.sandbox, 0.14.0 on)


@factory
def sandbox_compaction(settings: Any, **given: Any) -> Any:
    """A ``SandboxAgent`` run by the SDK's own ``Runner`` on the SDK's local sandbox client
    (``RunConfig(sandbox=SandboxRunConfig(client=UnixLocalSandboxClient()))``: a temporary workspace on this
    machine, no network, no docker), its capabilities the SDK's defaults (``Filesystem()``, ``Shell()``,
    ``Compaction()``) with the ``Compaction`` capability's documented static policy at ``threshold``
    (``StaticCompactionPolicy(threshold=N)``): the capability adds ``context_management=[{"type": "compaction",
    "compact_threshold": N}]`` to every request (the model's ``extra_args``) and, before each turn, cuts the
    model's input at its newest compaction item (``process_context``). ``compact(items)`` stores the items before
    the history's last user message in an in-memory ``SQLiteSession``, runs the last turn as `runner` runs it (the
    model answering the history's last step, the tools its calls, ``max_turns=1``), the double compacting
    server-side where the request reaches ``threshold`` (the compaction item before the step), then the user's
    next turn (`_server_compaction.PROBE`) through the same ``Runner``: the output is what the model is sent on
    that turn, the probe taken off (the SDK's instructions apart, in ``instructions``)."""
    o = options(DEFAULTS["sandbox_compaction"], given)
    agents = requires("agents", EXTRA)
    memory = requires("agents.memory", EXTRA)
    models = requires("agents.models.openai_responses", EXTRA)
    openai = requires("openai", EXTRA)
    capabilities = _sandbox_modules()
    if capabilities is None:
        raise CannotDrive("openai_agents:sandbox_compaction", "openai-agents", "no agents.sandbox Compaction capability (SandboxAgent) before 0.14.0")
    sandbox, caps, unix_local, run_config = capabilities
    threshold = int(o["threshold"])
    os.makedirs(SANDBOX_ROOT, exist_ok=True)
    _loop_starts(agents, "openai_agents:sandbox_compaction")

    async def run(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        from ._server_compaction import AGENT_TIMEOUT, PROBE

        plan = last_step(items)
        if plan is None:
            return list(items)  # no run of the SDK's loop ends in this history
        stored, turn, step, outputs = plan
        if not returnable(agents, outputs):
            return list(items)  # a tool result no tool of the SDK returns as the history holds it
        n = next(_ids)
        sent: list[list[dict[str, Any]]] = []
        answer = _next_turn_answer(step, sent, f"msg_sandbox_next_{n}")

        client = openai.AsyncOpenAI(base_url=settings.base_url, api_key=settings.api_key, timeout=AGENT_TIMEOUT, max_retries=0)
        store = memory.SQLiteSession(f"compaction-suite-sandbox-{n}")
        try:
            await store.add_items(stored)
            model = scripted_model(models, answer)(model=COMPACT_MODEL, openai_client=client)
            agent = sandbox.SandboxAgent(
                name="compaction-suite", model=model, tools=_tools(agents, step, outputs), model_settings=agents.ModelSettings(store=bool(o["store"])),
                default_manifest=sandbox.Manifest(root=SANDBOX_ROOT), capabilities=[caps.Filesystem(), caps.Shell(), caps.Compaction(policy=caps.StaticCompactionPolicy(threshold=threshold))],
            )  # fmt: skip
            local = run_config.SandboxRunConfig(client=unix_local.UnixLocalSandboxClient())
            await _run_turn(agents, agent, turn, store, streamed=bool(o["streamed"]), sandbox=local)
            await _run_ended(agents, agent, [{"type": "message", "role": "user", "content": PROBE}], store, agents.RunConfig(tracing_disabled=True, session_input_callback=lambda history, new: history + new, sandbox=local), streamed=bool(o["streamed"]), hooks=None)
        finally:
            store.close()
            await client.close()
        return _next_turn_input(sent)

    declared_ = {**declared("responses", system_prompt="outside"), **programs_held(agents)}
    return make("openai_agents.SandboxAgent(Compaction)", {"core"}, run, declared=declared_, is_async=True)


def _next_turn_answer(step: list[dict[str, Any]], sent: list[list[dict[str, Any]]], closing_id: str) -> Any:
    """The scripted model of a run that ends on the user's next turn (`_server_compaction.PROBE`): it answers
    the history's last ``step`` until that turn comes, then keeps the input it was sent there in ``sent`` and
    closes the run with a short assistant message (id ``closing_id``)."""
    from ._server_compaction import PROBE

    closing = {"type": "message", "role": "assistant", "id": closing_id, "status": "completed", "content": [{"type": "output_text", "text": "Noted.", "annotations": []}]}

    def answer(given: list[dict[str, Any]]) -> list[dict[str, Any]]:
        last = given[-1] if given else {}
        if item_kind(last) == "message" and last.get("role") == "user" and last.get("content") in (PROBE, [{"type": "input_text", "text": PROBE}]):
            sent.append(given)
            return [closing]
        return step

    return answer


def _next_turn_input(sent: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """What the model was last sent on the user's next turn (`_next_turn_answer` kept it), the probe taken off."""
    if not sent:
        raise AssertionError("the SDK's Runner sent the model no next turn")
    return list(sent[-1][:-1])


SANDBOX_ROOT = os.path.join(tempfile.gettempdir(), "compaction-suite-sandbox-workspace")
"""The sandbox workspace's root on this machine, one fixed path (``Manifest(root=...)``, the SDK's documented way to
choose it; the local client then neither creates nor deletes it). The SDK writes the root into the agent's
instructions, which the API reads and compacts: the fresh temporary root the client makes by default would make the
compaction item differ run to run for the same history (SPEC CORE-8 found it), a difference of the machine, not of the
history. The agent's tools never write there (only the history's own tools answer)."""


def _sandbox_modules() -> tuple[Any, Any, Any, Any] | None:
    """(``agents.sandbox``, its ``capabilities``, ``sandboxes.unix_local``, ``agents.run_config``) where the release
    has the sandbox agents' ``Compaction`` capability and ``RunConfig(sandbox=...)`` (0.14.0 on), else None."""
    import importlib

    try:
        found = tuple(importlib.import_module(name) for name in ("agents.sandbox", "agents.sandbox.capabilities", "agents.sandbox.sandboxes.unix_local", "agents.run_config"))
    except ImportError:
        return None
    sandbox, caps, unix_local, run_config = found
    if not all(hasattr(caps, name) for name in ("Compaction", "StaticCompactionPolicy", "Filesystem", "Shell")) or not hasattr(run_config, "SandboxRunConfig"):
        return None
    return sandbox, caps, unix_local, run_config


# --- EncryptedSession's TTL (agents.extensions.memory.EncryptedSession)


class _FernetClock:
    """A TEST DOUBLE of the wall clock ``cryptography.fernet`` reads (``time.time()``: the timestamp a token is
    written with, and the present a ``ttl`` is checked against), set by the test and put in place of the module's
    ``time`` only inside ``with`` (the SDK's ``EncryptedSession`` encrypts each item as its own Fernet token and
    drops each one whose token is older than ``ttl`` on read)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def time(self) -> float:
        return self.now

    def __enter__(self) -> _FernetClock:
        import types

        import cryptography.fernet

        self._module = cryptography.fernet
        self._kept = cryptography.fernet.time
        cryptography.fernet.time = types.SimpleNamespace(time=self.time)  # type: ignore[assignment]
        return self

    def __exit__(self, *_exc: object) -> None:
        self._module.time = self._kept


@factory
def encrypted_session(settings: Any, **given: Any) -> Any:
    """``EncryptedSession(ttl=...)`` over an in-memory ``SQLiteSession``, written and read by the SDK's own ``Runner``
    under a clock the adapter sets (`_FernetClock`): ``compact(items)`` stores the items before the history's last
    user message and runs the last turn, the step's tools declared ``needs_approval=True`` so the run parks on the
    step's calls (the SDK stores the turn and the calls); the user approves ``approval_wait`` seconds later and
    resumes the run (``RunState.approve``, the documented human-in-the-loop flow), the tools answering (the SDK stores
    the outputs then); the user's next turn (`_server_compaction.PROBE`) comes when the calls are ``ttl + 1`` seconds
    old. The output is what the model is sent on that turn (the probe taken off): the items the session still reads.
    A history whose last step makes no call is returned unchanged (nothing parks: every item is written at once)."""
    o = options(DEFAULTS["encrypted_session"], given)
    agents = requires("agents", EXTRA)
    memory = requires("agents.memory", EXTRA)
    models = requires("agents.models.openai_responses", EXTRA)
    openai = requires("openai", EXTRA)
    encrypted = requires("agents.extensions.memory", EXTRA)
    if not hasattr(encrypted, "EncryptedSession"):
        raise CannotDrive("openai_agents:encrypted_session", "openai-agents", "agents.extensions.memory has no EncryptedSession")
    if not (hasattr(agents, "RunState") and "needs_approval" in inspect.signature(agents.FunctionTool).parameters):
        raise CannotDrive("openai_agents:encrypted_session", "openai-agents", "no RunState or FunctionTool.needs_approval (the approval the TTL outlasts) before 0.8.0")
    ttl, wait = int(o["ttl"]), int(o["approval_wait"])
    if not 1 <= wait <= ttl:
        raise ValueError(f"approval_wait must be from 1 to ttl ({ttl}) seconds, not {wait}")
    _loop_starts(agents, "openai_agents:encrypted_session")

    async def run(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        from ._server_compaction import PROBE

        plan = last_step(items)
        if plan is None or not any(item_kind(i) == "function_call" for i in plan[2]):
            return list(items)  # no run parks on a call in this history
        stored, turn, step, outputs = plan
        if not returnable(agents, outputs):
            return list(items)
        n = next(_ids)
        sent: list[list[dict[str, Any]]] = []
        answer = _next_turn_answer(step, sent, f"msg_encrypted_next_{n}")

        client = openai.AsyncOpenAI(base_url=settings.base_url, api_key=settings.api_key, timeout=settings.summarizer_timeout, max_retries=0)
        store = memory.SQLiteSession(f"compaction-suite-encrypted-{n}")
        session = encrypted.EncryptedSession(f"compaction-suite-encrypted-{n}", store, encryption_key=ENCRYPTION_KEY, ttl=ttl)
        config = agents.RunConfig(tracing_disabled=True, session_input_callback=lambda history, new: history + new)
        try:
            with _FernetClock(CLOCK_START) as clock:
                await session.add_items(stored)
                agent = agents.Agent(name="compaction-suite", model=scripted_model(models, answer)(model=COMPACT_MODEL, openai_client=client), tools=_tools(agents, step, outputs, gated=True))
                parked = await _run_ended(agents, agent, turn, session, config, streamed=bool(o["streamed"]), hooks=None)
                clock.now += wait
                if parked is not None:
                    await _approved_turn(agents, agent, parked, session, config, streamed=bool(o["streamed"]), hooks=None)
                clock.now = CLOCK_START + ttl + 1
                try:
                    await _run_ended(agents, agent, [{"type": "message", "role": "user", "content": PROBE}], session, config, streamed=bool(o["streamed"]), hooks=None)
                except openai.BadRequestError:
                    pass  # the API refused what the session read: the output is that request, judged as the API judges it
        finally:
            store.close()
            await client.close()
        return _next_turn_input(sent)

    declared_ = {**declared("responses", system_prompt="outside"), **programs_held(agents)}
    return make("openai_agents.Runner+EncryptedSession(ttl)", {"core"}, run, declared=declared_, is_async=True)


ENCRYPTION_KEY = "compaction-suite-encrypted-session-key-0123456789"
"""The key ``EncryptedSession`` derives its per-session Fernet key from (a fixed test key)."""
CLOCK_START = 1_800_000_000.0
"""Where `_FernetClock` starts for each ``compact`` call (seconds since the epoch, 2027-01-15)."""


# --- the handoff's nested history (RunConfig(nest_handoff_history=True))

NEXT_AGENT = "compaction_suite_next"
"""The agent the history's agent hands off to; its model's input is the compacted history."""


@factory
def handoff_history(settings: Any, **given: Any) -> Any:
    """``Runner.run`` on the history with ``RunConfig(nest_handoff_history=True)``: the agent's model
    (scripted through the suite's double) answers the history with a handoff to a second agent, as a
    model that reasons answers (its reasoning item first where the history holds reasoning items), and
    the SDK's handoff rewrites the transcript for the second agent (the earlier items summarized into
    one ``<CONVERSATION HISTORY>`` message, the rest forwarded). ``compact(items)`` returns the input
    the second agent's model receives (``returned="next_turn"``: the run's history for the user's next
    turn, `next_turn_input`, once the second agent answered); a request the double refuses as the API
    does ends the run as it ends the user's."""
    o = options(DEFAULTS["handoff_history"], given)
    if o["returned"] not in ("next_agent", "next_turn"):
        raise ValueError(f"returned must be 'next_agent' or 'next_turn', not {o['returned']!r}")
    agents = requires("agents", EXTRA)
    models = requires("agents.models.openai_responses", EXTRA)
    openai = requires("openai", EXTRA)
    if not accepts(agents.RunConfig, "nest_handoff_history"):
        raise CannotDrive("openai_agents:handoff_history", "openai-agents", "RunConfig has no nest_handoff_history")
    _loop_starts(agents, "openai_agents:handoff_history")
    chained = bool(o["chained"])
    conversation = bool(o["conversation"])
    if chained and conversation:
        raise ValueError("chained and conversation are two server-managed states: give one")
    if chained and not accepts(agents.Runner.run, "auto_previous_response_id"):
        raise CannotDrive("openai_agents:handoff_history", "openai-agents", "Runner.run has no auto_previous_response_id (chained)")
    if conversation and not (accepts(agents.Runner.run, "conversation_id") and hasattr(openai.AsyncOpenAI, "conversations")):
        raise CannotDrive("openai_agents:handoff_history", "openai-agents", "Runner.run has no conversation_id or the openai client no conversations (conversation)")
    if (chained or conversation) and not o["store"]:
        raise ValueError("chained and conversation need store: the server keeps only stored responses to chain on")
    filters = {"remove_all_tools"}
    if o["input_filter"] is not None and o["input_filter"] not in filters:
        raise ValueError(f"input_filter must be one of {sorted(filters)} or None, not {o['input_filter']!r}")
    input_filter = getattr(requires("agents.extensions.handoff_filters", EXTRA), o["input_filter"]) if o["input_filter"] else None

    hops = int(o["hops"])
    if hops not in (1, 2):
        raise ValueError(f"hops must be 1 or 2, not {hops!r}")

    async def run(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if not items:
            return list(items)
        n = _digest(items)
        client = openai.AsyncOpenAI(base_url=settings.base_url, api_key=settings.api_key, timeout=settings.summarizer_timeout, max_retries=0)
        received: list[list[dict[str, Any]]] = []
        chains: dict[str, list[dict[str, Any]]] | None = {} if chained or conversation else None

        def answer(given: list[dict[str, Any]]) -> list[dict[str, Any]]:
            received.append(given)
            return [{"type": "message", "role": "assistant", "id": f"msg_handoff_{n}", "status": "completed", "content": [{"type": "output_text", "text": "Taking over.", "annotations": []}]}]

        settings_ = agents.ModelSettings(store=bool(o["store"]))
        following = agents.Agent(name=NEXT_AGENT, model=scripted_model(models, answer, chains)(model=COMPACT_MODEL, openai_client=client), model_settings=settings_)
        reasons = any(item_kind(i) == "reasoning" for i in items)
        for hop in range(hops, 0, -1):
            handoff = agents.handoff(following, input_filter=input_filter)
            step = handoff_step(n, hop, handoff, reasons=reasons, hosted=bool(o["hosted_tools"]) and hop == 1, said=bool(o["said"]))
            name = "compaction-suite" if hop == 1 else f"compaction_suite_hop_{hop}"
            following = agents.Agent(name=name, model=scripted_model(models, lambda _given, step=step: step, chains)(model=COMPACT_MODEL, openai_client=client), handoffs=[handoff], model_settings=settings_)
        try:
            server: dict[str, Any] = {"auto_previous_response_id": True} if chained else {}
            if conversation:
                server = {"conversation_id": (await client.conversations.create()).id}
            result = await agents.Runner.run(following, items, run_config=agents.RunConfig(tracing_disabled=True, nest_handoff_history=True), max_turns=2 + hops, **server)
        finally:
            await client.close()
        if o["returned"] == "next_turn":
            return next_turn_input(result)
        return received[-1] if received else list(items)

    capabilities: dict[str, Any] = {**declared("responses", system_prompt="outside"), **programs_held(agents)}
    return make("openai_agents.Runner(nest_handoff_history)", {"core"}, run, declared=capabilities, is_async=True)


def programs_held(agents: Any) -> dict[str, str]:
    """``{"programs": "held"}`` where the release records a hosted program's transcript in its history
    (``ProgrammaticToolCallingTool``, 0.19.0 on: openai/openai-agents-python#3833; SPEC Part A, Declarations:
    ``programs``), else nothing."""
    return {"programs": "held"} if hasattr(agents, "ProgrammaticToolCallingTool") else {}


def next_turn_input(result: Any) -> list[dict[str, Any]]:
    """The history a run hands back for the user's next turn, as the SDK documents continuing a conversation
    by hand ("new_input = result.to_input_list() + [...]", docs/running_agents.md): ``to_input_list()``, or from
    0.12.2 ``to_input_list(mode="normalized")``, "the canonical local input for the next Runner.run(...,
    input=...) call after handoff filtering or nested handoff history rewrites" (docs/results.md; PR #2667,
    openai/openai-agents-python#2258). Items as plain dicts."""
    normalized = "mode" in inspect.signature(result.to_input_list).parameters
    made = result.to_input_list(mode="normalized") if normalized else result.to_input_list()
    return [i if isinstance(i, dict) else i.model_dump(exclude_unset=True) for i in made]


HOSTED_STEP_KINDS = ("mcp_call", "code_interpreter_call", "image_generation_call")
"""The hosted tool calls a handoff step holds with ``hosted_tools``: those the API runs and the SDK records
as they come (``ToolCallItem``, no user code, no output item of the client's); a shell call is the
client's to answer, so not here."""


def hosted_step(n: str) -> list[dict[str, Any]]:
    """The calls an agent's server-run tools made in the response that hands off, one of each
    `HOSTED_STEP_KINDS`, as the API emits them (`conformance.responses_histories.hosted_call`: each with
    the item ``id`` the API gives it), named from the history's digest ``n`` (SPEC CORE-8)."""
    from compaction_suite.conformance.responses_histories import hosted_call

    call = {"type": "function_call", "call_id": f"call_hosted_{n}", "name": "lookup", "arguments": '{"q": "status"}'}
    answer = {"type": "function_call_output", "call_id": call["call_id"], "output": "all green"}
    return [item for hosted_kind in HOSTED_STEP_KINDS for item in hosted_call(call, answer, hosted_kind)]


SAID = "I am handing this conversation over to {agent}, who will take it from here."
"""What an agent that says it transfers writes beside its handoff call (``said``): a triage agent's "let me
transfer you", naming the agent it hands to (so each hop says its own), one sentence long enough that no
transcript carries it by chance (SPEC CORE-50)."""


def handoff_step(n: str, hop: int, handoff: Any, *, reasons: bool, hosted: bool, said: bool) -> list[dict[str, Any]]:
    """The response with which the ``hop``-th agent hands off, named from the history's digest ``n`` (SPEC
    CORE-8): its reasoning item first where the history reasons, the calls its server-run tools made
    (``hosted``, `hosted_step`), the message it says (``said``, `SAID`), then the handoff call, as a model
    answers that says what it does before doing it."""
    tag = n if hop == 1 else f"{n}_{hop}"
    step: list[dict[str, Any]] = [{"type": "reasoning", "id": f"rs_handoff_{tag}", "summary": [], "encrypted_content": f"gAAAAAhandoff{tag}"}] if reasons else []
    step += hosted_step(n) if hosted else []
    if said:
        step.append({"type": "message", "role": "assistant", "id": f"msg_said_{tag}", "status": "completed", "content": [{"type": "output_text", "text": SAID.format(agent=handoff.agent_name), "annotations": []}]})
    step.append({"type": "function_call", "id": f"fc_handoff_{tag}", "call_id": f"call_handoff_{tag}", "name": handoff.tool_name, "arguments": "{}", "status": "completed"})
    return step


def _digest(items: list[dict[str, Any]]) -> str:
    """A name for the handoff step drawn from the history itself, so the same history gives the same
    step (and the same output) in every process (SPEC CORE-8)."""
    import hashlib
    import json

    return hashlib.sha256(json.dumps(items, sort_keys=True, default=str).encode()).hexdigest()[:16]


@factory
def tool_output_trimmer(settings: Any, **given: Any) -> Any:
    """``ToolOutputTrimmer(recent_turns, max_output_chars, preview_chars)`` called as the ``Runner`` calls a
    ``RunConfig(call_model_input_filter=...)``: with ``CallModelData`` holding the model's input items
    (the agent's instructions apart, in ``ModelInputData.instructions``); the items it returns are what
    the model receives. ``tests/test_openai_agents_trimmer.py`` shows the ``Runner`` sends them so."""
    o = options(DEFAULTS["tool_output_trimmer"], given)
    agents = requires("agents", EXTRA)
    run_config = requires("agents.run_config", EXTRA)
    extensions = requires("agents.extensions", EXTRA)
    trimmer = extensions.ToolOutputTrimmer(recent_turns=int(o["recent_turns"]), max_output_chars=int(o["max_output_chars"]), preview_chars=int(o["preview_chars"]))
    agent = agents.Agent(name="compaction-suite")

    def run(items: list[dict[str, Any]]) -> list[Any]:
        data = run_config.CallModelData(model_data=run_config.ModelInputData(input=items, instructions=None), agent=agent, context=None)
        return list(trimmer(data).input)

    capabilities: dict[str, Any] = {**declared("responses", system_prompt="outside"), "trimmed_result_chars": int(o["max_output_chars"]), **programs_held(agents)}
    return make("openai_agents.ToolOutputTrimmer", {"core"}, run, declared=capabilities)

