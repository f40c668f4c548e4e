"""Microsoft Agent Framework's in-loop compaction, shown in its own agent loop (SPEC CORE-18).

``Agent(compaction_strategy=SummarizationStrategy(...))`` runs its strategy before every model call
of its function-invocation loop. Here the loop runs offline: the agent's model is a TEST DOUBLE
(a chat client built from AF's own ``FunctionInvocationLayer`` and ``ChatMiddlewareLayer``, answering
with tool calls, then text), its tools are plain functions, and the summarizer is the suite's
summarizer double behind AF's own ``OpenAIChatCompletionClient``. Each test records what the model
receives at each call and shows, at the installed release:

* across tool-loop iterations the summary the first call obtained is still sent at the next
  (lost before 1.8.0, microsoft/agent-framework#4991: the summary went into a per-iteration copy
  while the exclusions it marked on the shared messages persisted);
* the same with a ``ChatMiddleware`` attached (lost before 1.17.0, #7744);
* ``CompactionProvider(before_strategy=SummarizationStrategy(...))`` in the agent's context
  providers sends the summary it obtained (dropped at 1.10..1.13, #7943; sent at 1.23.0);

and that the adapter's paths (``agent_loop``, ``compaction_provider``) return exactly what the loop
sent, so the suite's CORE-18 verdict on them is a verdict on the loop. Which releases lose the
summary is asserted where the report and the fix are established; the matrix's ``--bugs`` runs put
each at its reported and fixing release (``adapters/reported_bugs.json``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from compaction_suite.adapters._common import release
from compaction_suite.adapters.agent_framework import agent_loop, compaction_provider, from_agent_framework
from compaction_suite.conformance import judges
from compaction_suite.conformance.settings import Settings, connected
from compaction_suite.conformance.summarizer_server import SummarizerServer

pytest.importorskip("agent_framework", reason="Agent Framework is not installed (pip install -e '.[agent-framework]')")

ROUNDS = 6
"""Tool rounds before the loop starts: past SummarizationStrategy(target_count=4, threshold=2)'s trigger."""
LOOP_ROUNDS = 2
"""Tool rounds the loop itself runs before its text answer."""
CLOSING_ANSWER = "The build is fixed."
LONG_LOOP = 6
"""Tool rounds of a first turn long enough that the strategy summarizes the run's own rounds."""
AF = release("agent-framework-core")


def read_file(path: str) -> str:
    """Read a file (the loop's tool)."""
    return f"contents of {path}"


def history_before_the_loop() -> list[dict]:
    """A user turn and ``ROUNDS`` answered rounds, in chat-completions form."""
    messages: list[dict] = [{"role": "user", "content": "Read the six configuration files and fix the build of the payments service."}]
    for n in range(ROUNDS):
        call = {"id": f"call_h{n}", "type": "function", "function": {"name": "read_file", "arguments": json.dumps({"path": f"conf{n}.yaml"})}}
        messages += [{"role": "assistant", "content": None, "tool_calls": [call]}, {"role": "tool", "tool_call_id": call["id"], "content": read_file(f"conf{n}.yaml")}]
    return messages


def loop_calls(rounds: int = LOOP_ROUNDS) -> list[dict]:
    """The calls the scripted model makes inside the loop, one round each."""
    return [{"id": f"call_l{n}", "type": "function", "function": {"name": "read_file", "arguments": json.dumps({"path": f"src{n}.py"})}} for n in range(rounds)]


def scripted_model(af: Any, sent: list[list[dict]], rounds: int = LOOP_ROUNDS) -> Any:
    """The agent's model (a test double on AF's own client layers): ``rounds`` tool calls, then text."""
    from compaction_suite.adapters.agent_framework import to_agent_framework

    replies = [to_agent_framework([{"role": "assistant", "content": None, "tool_calls": [call]}])[0][0] for call in loop_calls(rounds)]
    for n, reply in enumerate(replies):
        reply.message_id = f"scripted-reply-{n}"  # each model response has its own id, as a provider's do

    class ScriptedAgentModel(af.FunctionInvocationLayer, af.ChatMiddlewareLayer, af.BaseChatClient):
        def _inner_get_response(self, *, messages, stream, options, **kwargs):
            sent.append(from_agent_framework(list(messages)))
            reply = replies.pop(0) if replies else af.Message(role="assistant", contents=[af.Content.from_text(CLOSING_ANSWER)], message_id="scripted-answer")

            async def answer():
                return af.ChatResponse(messages=[reply])

            return answer()

    return ScriptedAgentModel()


def summaries(messages: list[dict], answers: list[str]) -> list[str]:
    """The summarizer answers ``messages`` carry (by CORE-18's mark)."""
    text = judges.alnum(json.dumps(messages))
    return [a for a in answers if judges.alnum(a)[: judges.ANSWER_MARK] in text]


def run_loop(middleware: bool) -> tuple[list[list[dict]], list[str]]:
    """Run ``Agent(compaction_strategy=SummarizationStrategy(4, 2))`` on the history: what the model
    received at each call, and the summarizer's answers."""
    import agent_framework as af
    from agent_framework_openai import OpenAIChatCompletionClient

    from compaction_suite.adapters.agent_framework import to_agent_framework

    sent: list[list[dict]] = []
    with SummarizerServer() as server:
        settings = connected(Settings(), server.base_url)
        summarizer = OpenAIChatCompletionClient(model=settings.model, async_client=settings.async_client)
        strategy = af.SummarizationStrategy(client=summarizer, target_count=4, threshold=2)

        class PassThrough(af.ChatMiddleware):
            async def process(self, context, call_next):
                await call_next()

        extra: dict[str, Any] = {"middleware": [PassThrough()]} if middleware else {}
        agent = af.Agent(scripted_model(af, sent), tools=[read_file], compaction_strategy=strategy, **extra)
        asyncio.run(agent.run(to_agent_framework(history_before_the_loop())[0]))  # type: ignore[arg-type]  # AF types run() as an Awaitable; it is a coroutine
        answers = [e.answer for e in server.exchanges if e.answer]
    return sent, answers


def full_history(rounds: int = LOOP_ROUNDS) -> list[dict]:
    """The history as the model's last call holds it: before the loop, then the loop's rounds."""
    messages = history_before_the_loop()
    for call in loop_calls(rounds):
        messages += [{"role": "assistant", "content": None, "tool_calls": [call]}, {"role": "tool", "tool_call_id": call["id"], "content": read_file(json.loads(call["function"]["arguments"])["path"])}]
    return messages


@pytest.mark.parametrize(("middleware", "fixed_in"), [(False, (1, 8, 0)), (True, (1, 17, 0))], ids=["plain", "chat-middleware"])
def test_the_summary_of_the_first_call_reaches_the_next_in_the_tool_loop(middleware, fixed_in):
    """The first call summarizes (the history is past the trigger); the next call, one tool round
    later, must still send that summary, since the rounds it replaced stay excluded."""
    sent, answers = run_loop(middleware)
    assert len(sent) == LOOP_ROUNDS + 1 and answers
    first, second = sent[0], sent[1]
    assert summaries(first, answers), first  # the first call sent a summary in place of the older rounds
    older = history_before_the_loop()[0]
    assert older not in first and older not in second  # the user turn it summarized stays out of both
    lost = not summaries(second, answers)
    if fixed_in > AF:
        assert lost, f"AF {AF}: the summary reached the second call; the report says it is lost before {fixed_in}"
    else:
        assert not lost, f"AF {AF}: the second call lost the summary (microsoft/agent-framework#{7744 if middleware else 4991}): {second}"


@pytest.mark.parametrize("middleware", [False, True], ids=["plain", "chat-middleware"])
def test_agent_loop_returns_what_the_loop_sends_at_its_last_call(middleware):
    """``agent_loop``'s output on the full history is what the model received at the loop's last call
    (the summarizer's answers aside, which name the digest of their own request)."""
    sent, _ = run_loop(middleware)
    with SummarizerServer() as server:
        adapter = agent_loop(connected(Settings(), server.base_url), strategy="summarization", middleware=middleware, rounds=LOOP_ROUNDS)
        out = asyncio.run(adapter.compact(full_history(), iteration=1))
        found = judges.summary_kept(_chat(), full_history(), out, server.exchanges)
    assert [m.get("role") for m in out] == [m.get("role") for m in sent[-1]]
    assert [m for m in out if m.get("role") == "tool"] == [m for m in sent[-1] if m.get("role") == "tool"]
    assert (found is not None) == (((1, 17, 0) if middleware else (1, 8, 0)) > AF), found


def test_compaction_provider_before_run_sends_the_summary_it_obtained():
    """``CompactionProvider(before_strategy=SummarizationStrategy(...))`` beside an in-memory history
    provider, in the agent's own run: the first model request holds the summary in place of the
    older rounds (dropped at 1.10..1.13, microsoft/agent-framework#7943; the first fixing release is
    not established, 1.23.0 holds the fix)."""
    import agent_framework as af
    from agent_framework._sessions import InMemoryHistoryProvider
    from agent_framework_openai import OpenAIChatCompletionClient

    from compaction_suite.adapters.agent_framework import to_agent_framework

    provider_class = getattr(af, "CompactionProvider", None)
    if provider_class is None:
        pytest.skip(f"agent-framework-core {AF} has no CompactionProvider")
    sent: list[list[dict]] = []
    with SummarizerServer() as server:
        settings = connected(Settings(), server.base_url)
        summarizer = OpenAIChatCompletionClient(model=settings.model, async_client=settings.async_client)
        history = InMemoryHistoryProvider()
        provider = provider_class(before_strategy=af.SummarizationStrategy(client=summarizer, target_count=4, threshold=2), history_source_id=history.source_id)
        agent = af.Agent(scripted_model(af, sent), tools=[read_file], context_providers=[history, provider])
        session = agent.create_session()
        session.state.setdefault(history.source_id, {})["messages"] = to_agent_framework(history_before_the_loop())[0]
        asyncio.run(agent.run("Go on.", session=session))
        answers = [e.answer for e in server.exchanges if e.answer]
    assert answers, "the provider never asked the summarizer"
    assert history_before_the_loop()[0] not in sent[0]  # the summarized user turn is not sent
    lost = not summaries(sent[0], answers)
    if AF <= (1, 13, 0):
        assert lost, f"AF {AF}: the summary reached the model; #7943 reports it dropped"
    elif AF >= (1, 23, 0):
        assert not lost, f"AF {AF}: before_run dropped the summary it obtained (microsoft/agent-framework#7943): {sent[0]}"
    with SummarizerServer() as server:
        adapter = compaction_provider(connected(Settings(), server.base_url), phase="before", strategy="summarization")
        out = asyncio.run(adapter.compact(history_before_the_loop(), iteration=1))
        found = judges.summary_kept(_chat(), history_before_the_loop(), out, server.exchanges)
    assert (found is not None) == lost, found  # the adapter's path agrees with the agent's run


@pytest.mark.parametrize("per_call_persistence", [False, True], ids=["after-run", "per-service-call"])
def test_what_the_next_turn_loads_holds_the_summary_of_what_the_turn_excluded(per_call_persistence):
    """A turn of ``LONG_LOOP`` tool rounds with ``compaction_strategy=SummarizationStrategy(4, 2)`` beside
    ``InMemoryHistoryProvider(skip_excluded=True)`` (compaction with a history, as AF documents it):
    what the next turn loads (the provider's own ``get_messages``) holds, for what the turn's
    compaction excluded, the summary it obtained (CORE-18's judge). After the run, the call-level
    summary was reported missing from the stored response while the exclusion flags persist
    (microsoft/agent-framework#8099, after 1.17.0; shown here at 1.0.0..1.17.0, kept at 1.23.0); with
    per-service-call persistence the provider stores the excluded messages without it (#8546, open
    at 1.23.0)."""
    import agent_framework as af
    from agent_framework._sessions import InMemoryHistoryProvider
    from agent_framework_openai import OpenAIChatCompletionClient

    from compaction_suite.adapters.agent_framework import to_agent_framework

    if per_call_persistence and not _takes(af.Agent, "require_per_service_call_history_persistence"):
        pytest.skip(f"agent-framework-core {AF} has no per-service-call history persistence")
    persistence = {"require_per_service_call_history_persistence": True} if per_call_persistence else {}
    sent: list[list[dict]] = []
    with SummarizerServer() as server:
        settings = connected(Settings(), server.base_url)
        summarizer = OpenAIChatCompletionClient(model=settings.model, async_client=settings.async_client)
        strategy = af.SummarizationStrategy(client=summarizer, target_count=4, threshold=2)
        history = InMemoryHistoryProvider(skip_excluded=True)
        agent = af.Agent(scripted_model(af, sent, LONG_LOOP), tools=[read_file], compaction_strategy=strategy, context_providers=[history], **persistence)
        session = agent.create_session()
        asyncio.run(agent.run(to_agent_framework(history_before_the_loop())[0], session=session))
        loaded = from_agent_framework(asyncio.run(history.get_messages(None, state=session.state.get(history.source_id, {}))))
        exchanges = server.exchanges
    loaded = [m for m in loaded if m.get("content") != CLOSING_ANSWER]  # the turn's answer (the agent stamps its name on it)
    turn = full_history(LONG_LOOP)
    assert [e for e in exchanges if e.answer], "the turn never summarized"
    found = judges.summary_kept(_chat(), turn, loaded, exchanges)
    if (per_call_persistence and AF <= (1, 23, 0)) or (not per_call_persistence and AF <= (1, 17, 0)):
        assert found is not None and found.reason_id == "summary-lost", f"AF {AF}: the next turn loads the summary; the reports say it is lost"
    elif not per_call_persistence:
        assert found is None, f"AF {AF}: {found} (microsoft/agent-framework#8099)"


def _takes(callable_: Any, keyword: str) -> bool:
    from compaction_suite.adapters._common import accepts

    return accepts(callable_, keyword)


def _chat() -> Any:
    from compaction_suite.conformance import formats

    return formats.get(formats.CHAT)


HARNESS_WINDOW = {"max_context_window_tokens": 2000, "max_output_tokens": 500}
"""The harness's token parameters: its default ContextWindowCompactionStrategy evicts tool results past
half the input budget (750 tokens)."""


def test_the_harness_agent_compacts_the_loaded_history_before_its_model_call():
    """A turn of ``create_harness_agent(max_context_window_tokens=2000, max_output_tokens=500)`` whose
    session holds a history of about 3,000 chars/4 tokens (four times the declared trigger): the
    model must be sent it compacted. Before 1.12.0 the harness's ``CompactionProvider.before_run``
    was handed a context without the loaded history (the harness's per-service-call persistence
    skips the history provider's ``before_run``), so it never compacted (microsoft/agent-framework#7011,
    fixed by PR #7055 in 1.12.0: the before-strategy runs as the agent's ``compaction_strategy``)."""
    import agent_framework as af

    from compaction_suite.adapters.agent_framework import harness_agent

    if getattr(af, "create_harness_agent", None) is None:
        pytest.skip(f"agent-framework-core {AF} has no create_harness_agent")
    history = full_history(LONG_LOOP)
    for message in history:
        if message["role"] == "tool":
            message["content"] = f"{message['content']}\n" + "line of the file\n" * 100  # ~400 chars/4 tokens a result
    with SummarizerServer() as server:
        adapter = harness_agent(connected(Settings(), server.base_url), **HARNESS_WINDOW)
        out = asyncio.run(adapter.compact(history, iteration=1))
    assert adapter.capabilities["trigger"] == {"tokens": 750}
    if AF < (1, 12, 0):
        assert out == history, f"AF {AF}: the harness compacted; #7011 reports its before-run compaction never fires"
    else:
        assert out != history and len(json.dumps(out)) < len(json.dumps(history)) / 2, f"AF {AF}: the model got the loaded history uncompacted (#7011)"


def test_the_summarizer_request_holds_the_tool_results_it_summarizes():
    """``SummarizationStrategy``'s request to its summarizer, in the agent's own tool loop, holds the
    text of the tool results it summarizes. Before 1.18.0 its transcript wrote a tool message as
    ``[tool] function_result`` and a call as ``[assistant] function_call`` (``Message.text`` only), so
    the summary stands for results its summarizer never read (microsoft/agent-framework#8086, fixed
    by PR #8087 in 1.18.0): the suite's CORE-12 (summary-of-unsent-messages) on ``summarization``."""
    import agent_framework as af
    from agent_framework_openai import OpenAIChatCompletionClient

    from compaction_suite.adapters.agent_framework import to_agent_framework

    with SummarizerServer() as server:
        settings = connected(Settings(), server.base_url)
        strategy = af.SummarizationStrategy(client=OpenAIChatCompletionClient(model=settings.model, async_client=settings.async_client), target_count=4, threshold=2)
        agent = af.Agent(scripted_model(af, []), tools=[read_file], compaction_strategy=strategy)
        asyncio.run(agent.run(to_agent_framework(history_before_the_loop())[0]))
        requests = [json.dumps(e.request.body) for e in server.exchanges]
    assert requests, "the strategy never asked its summarizer"
    held = any(read_file("conf0.yaml") in r for r in requests)
    assert held == (AF >= (1, 18, 0)), f"AF {AF}: the summarizer {'read' if held else 'never read'} the first tool result ({requests[0][:400]})"


def _approval_turn(per_call: bool) -> tuple[list[list[dict]], list[Any]]:
    """A turn whose tool needs approval, each request approved as it comes (the agent's own loop
    and session): what the model received at each call, and the session's stored AF messages."""
    import agent_framework as af
    from agent_framework._sessions import InMemoryHistoryProvider

    sent: list[list[dict]] = []

    @af.tool(approval_mode="always_require")
    def read_file(path: str) -> str:  # the loop's tool, approval required
        """Read a file."""
        return f"contents of {path}"

    history = InMemoryHistoryProvider()
    persistence: dict[str, Any] = {"require_per_service_call_history_persistence": True} if per_call else {}
    agent = af.Agent(scripted_model(af, sent), tools=[read_file], context_providers=[history], **persistence)
    session = agent.create_session()
    response: Any = asyncio.run(agent.run("Read the two sources.", session=session))  # type: ignore[arg-type]  # AF types run() as an Awaitable; it is a coroutine
    for _ in range(LOOP_ROUNDS + 1):
        requests = [c for m in response.messages for c in m.contents if c.type == "function_approval_request"]
        if not requests:
            break
        answer = af.Message(role="user", contents=[r.to_function_approval_response(approved=True) for r in requests])
        response = asyncio.run(agent.run([answer], session=session))  # type: ignore[arg-type]
    return sent, list(session.state[history.source_id]["messages"])


def _split_pairs(messages: list[Any]) -> list[str]:
    """The call ids whose result is not in the message right after the call's (AF messages)."""
    split = []
    for n, message in enumerate(messages):
        for call in (c for c in message.contents if c.type == "function_call"):
            after = messages[n + 1].contents if n + 1 < len(messages) else []
            if not any(c.type == "function_result" and c.call_id == call.call_id for c in after):
                split.append(call.call_id)
    return split


@pytest.mark.parametrize("per_call", [False, True], ids=["after-run", "per-service-call"])
def test_an_approved_call_reaches_the_model_beside_its_result(per_call):
    """How Agent Framework's own loop sends a call that needed approval (microsoft/agent-framework#7212,
    "compaction orphans function_call/result pairs when declaration and result are non-adjacent"):
    every model request holds each call right before its result, the approval messages left out,
    so the chat-completions history the suite draws is what the provider receives (asserted at the
    releases that have the bug; 1.17.0's own approval replay sends the first approved call without its
    result at the third call, an approval defect apart from compaction). Non-adjacent
    pairs live only in the session's stored history: 1.13.0 and 1.23.0 store the approval response (a
    user message) between a call and its result, or two approved calls before both results (1.17.0
    stores them adjacent); at 1.11.0 and 1.12.0, releases that have the bug (fixed in 1.13.0), the
    same flow stores every pair adjacent, so the shape the report names is not shown here at a
    release that has the bug."""
    import agent_framework as af

    from compaction_suite.adapters._common import accepts

    if per_call and not accepts(af.Agent, "require_per_service_call_history_persistence"):
        pytest.skip(f"agent-framework-core {AF} has no per-service-call history persistence")
    sent, stored = _approval_turn(per_call)
    assert len(sent) == LOOP_ROUNDS + 1, sent
    if AF >= (1, 13, 0):
        return  # the fixed releases: 1.17.0's last request even holds the first approved call without its result
    for messages in sent[1:]:  # the first request holds the user turn alone
        calls = [i for i, m in enumerate(messages) if m.get("tool_calls")]
        assert calls and all(messages[i + 1].get("role") == "tool" for i in calls), messages
    assert not _split_pairs(stored), f"AF {AF}: the stored history holds a call apart from its result (#7212's shape)"


def _approval_history() -> list[dict]:
    """An earlier tool round, then a round of two parallel calls (``lookup``, ``delete``), then one
    ``search`` round: the tools of the second only it calls, so ``approval=True`` gates them."""

    def call(n: int, name: str, arguments: dict) -> dict:
        return {"id": f"call_a{n}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}

    return [
        {"role": "user", "content": "Look up the first order."},
        {"role": "assistant", "content": None, "tool_calls": [call(0, "read_file", {"path": "orders.csv"})]},
        {"role": "tool", "tool_call_id": "call_a0", "content": "order 1: 3 items " * 30},
        {"role": "assistant", "content": "Order 1 has three items."},
        {"role": "user", "content": "Delete it and find the next."},
        {"role": "assistant", "content": None, "tool_calls": [call(1, "lookup", {"q": "order 1"}), call(2, "delete", {"id": 1})]},
        {"role": "tool", "tool_call_id": "call_a1", "content": "order 1 found " * 30},
        {"role": "tool", "tool_call_id": "call_a2", "content": "deleted"},
        {"role": "assistant", "content": None, "tool_calls": [call(3, "search", {"q": "order 2"})]},
        {"role": "tool", "tool_call_id": "call_a3", "content": "order 2: 1 item " * 30},
    ]


def test_agent_loop_approval_spans_two_runs_of_the_session(monkeypatch):
    """``agent_loop(approval=True)``: the first run ends on AF's approval requests for the gated round,
    the second run's input is the user's approval answer, and AF's loop resumes the round; what the
    next turn loads then holds each call with its results from 1.13.0 (at 1.11.0 and 1.12.x,
    ``ToolResultCompactionStrategy`` leaves the approved round's call message stored without the
    exclusion its results keep, so the calls come back without them: CORE-2; without compaction the
    same flow stores them whole). Gating skips a round whose tools a later round calls again."""
    import agent_framework as af

    from compaction_suite.adapters.agent_framework import _first_round_tools, to_agent_framework
    from compaction_suite.conformance import oracle

    runs: list[Any] = []
    original = af.Agent.run

    def counted(self: Any, messages: Any = None, **kwargs: Any) -> Any:
        runs.append([c.type for m in messages for c in m.contents])  # as given: AF rewrites an approval answer in place
        return original(self, messages, **kwargs)

    monkeypatch.setattr(af.Agent, "run", counted)
    history = _approval_history()
    out = asyncio.run(agent_loop(None, strategy="tool_result", approval=True, view="persisted").compact(history, iteration=1))
    assert len(runs) == 2, runs
    assert runs[1] == ["function_approval_response"] * 2
    found = oracle.check_calls_have_one_result(out)
    if AF < (1, 13, 0):
        assert found is not None and found.reason_id == "unanswered-tool-call", out
    else:
        assert found is None and out == history, out
    converted, _ = to_agent_framework(history)
    assert _first_round_tools(converted[5:]) == frozenset({"lookup", "delete"})
    assert _first_round_tools(converted[5:6] + converted[6:7] + converted[5:6]) == frozenset()


def _approval_rounds(n: int) -> list[dict]:
    """A history of ``n`` tool rounds of two parallel calls, each result long and its own."""
    history: list[dict] = [{"role": "system", "content": "You are a coding agent."}, {"role": "user", "content": "Read every module."}]
    for r in range(n):
        calls = [{"id": f"call_{r}_{k}", "type": "function", "function": {"name": "read_file", "arguments": json.dumps({"path": f"m{r}_{k}.py"})}} for k in range(2)]
        history.append({"role": "assistant", "content": None, "tool_calls": calls})
        history += [{"role": "tool", "tool_call_id": f"call_{r}_{k}", "content": f"module {r}.{k}: " + " ".join(f"def f{i}_{r}_{k}()" for i in range(30))} for k in range(2)]
    return history


def test_the_after_run_digest_is_stored_once_beside_a_call_level_strategy_in_the_approval_flow():
    """``agent_loop(after_strategy="tool_result")``: ``CompactionProvider(after_strategy=ToolResultCompactionStrategy)``
    beside the call-level ``ToolResultCompactionStrategy`` and per-service-call persistence (the pairing
    ``create_harness_agent`` builds), the first replayed round answered through AF's approval flow (two
    runs, so ``after_run`` runs twice). What the next turn loads holds the after-run digests AF stored,
    and no tool result's text in two of them (microsoft/agent-framework#7387's growth needs an earlier
    digest kept beside a re-digest of what it replaced: not produced here, at 1.11.0 and 1.12.0 either)."""
    history = _approval_rounds(5)
    loop = agent_loop(None, strategy="tool_result", approval=True, view="persisted", per_call_persistence=True, after_strategy="tool_result")
    out = asyncio.run(loop.compact(history, iteration=1))
    digests = [m["content"] for m in out if m["role"] == "assistant" and isinstance(m.get("content"), str) and m["content"].startswith("[Tool results:")]
    assert digests, out  # the after-run digests are what the next turn loads
    restated = [f"module {r}.{k}:" for r in range(5) for k in range(2) if sum(f"module {r}.{k}:" in d for d in digests) > 1]
    assert not restated, digests


@pytest.mark.parametrize("per_call_persistence", [False, True], ids=["after-run", "per-call"])
def test_an_assistant_refusal_reaches_the_store_as_af_parses_one(per_call_persistence):
    """A history ending in an assistant refusal (``content: None`` beside ``refusal``) goes to AF as its
    chat clients parse one (a text content holding the refusal, marked as one where the release
    marks it), so what the next turn loads keeps it (CORE-14) with or without per-service-call
    persistence. Built as a message with no content, AF's function loop drops it from the list it
    carries, and per-service-call persistence stores that list: the adapter's shape, not AF's."""
    from compaction_suite.adapters.agent_framework import to_agent_framework

    refusal = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
    history = [*history_before_the_loop()[:3], {"role": "assistant", "content": "Read."}, {"role": "user", "content": "Now open the vault."}, refusal]
    converted, _ = to_agent_framework(history)
    assert [c.text for c in converted[-1].contents] == [refusal["refusal"]]
    loop = agent_loop(None, strategy="sliding_window", keep_last_groups=6, view="persisted", per_call_persistence=per_call_persistence)
    out = asyncio.run(loop.compact(history, iteration=1))
    assert out == history, out


def test_rc4_and_rc5_use_the_chat_completions_client_their_core_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    """agent-framework-core 1.0.0rc4 and rc5 shipped the compaction strategies but no agent-framework-openai
    (it starts beside rc6): their chat-completions client is ``agent_framework.openai.OpenAIChatClient(model_id=...)``,
    and a sweep does not ask for the companion there (``SWEEP_COMPANION_FROM``)."""
    import sys
    import types

    from compaction_suite.adapters import agent_framework
    from compaction_suite.matrix import sweep

    class OpenAIChatClient:
        def __init__(self, *, model_id: str | None = None, async_client: object = None) -> None:
            self.model_id, self.async_client = model_id, async_client

    legacy = types.ModuleType("agent_framework.openai")
    legacy.OpenAIChatClient = OpenAIChatClient  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "agent_framework_openai", None)  # not installed, as at rc4 and rc5
    monkeypatch.setitem(sys.modules, "agent_framework.openai", legacy)
    settings = types.SimpleNamespace(model="m", async_client=object())
    client = agent_framework._chat_completions_client(settings)
    assert isinstance(client, OpenAIChatClient) and client.model_id == "m" and client.async_client is settings.async_client
    assert agent_framework.SUPPORTED["agent-framework-core"] == ">=1.0.0rc4,<2"
    assert not sweep._older("1.0.0rc6", agent_framework.SWEEP_COMPANION_FROM["agent-framework-openai"])
