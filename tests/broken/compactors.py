"""The reference compactor with one defect each (the suite is worth what it catches).

Every factory builds the correct reference (`compaction_suite.reference.conformance_factory`) and changes
one behaviour; its docstring names the defect. `CONTROLS` maps each factory to the clause
expected to reject it, the profiles worth running for it and what the clause's reason must
say (tests/test_negative_controls.py); `SHOULD_CONTROLS` the same for SHOULD clauses.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
from dataclasses import dataclass
from typing import Any, ClassVar

import openai

from compaction_suite.reference import (
    Compactor,
    Summarize,
    Summarizer,
    SummarizerError,
    call_in_flight,
    split_rounds,
)
from compaction_suite.reference.conformance_factory import seed_000, seed_001
from compaction_suite.reference.rounds import flatten
from compaction_suite.reference.strategies import Outcome, StructuredSummarize, split_system
from compaction_suite.reference.summarizer import Summary
from compaction_suite.reference.summary import entities, is_summary, latest_tasks, structured_body, summary_message, text_of, transcript
from compaction_suite.reference.triggers import Observation


@dataclass(frozen=True)
class Control:
    expected: str
    """The clause that must reject the defect."""
    profiles: tuple[str, ...]
    reason: str = ""
    """A regular expression the clause's failure reason must match: it names what is wrong."""
    run: tuple[str, ...] = ()
    """The clauses whose tests to run, when the defect shows in another clause's test than its
    own (default: ``expected`` alone)."""
    reason_id: str = ""
    """The reason id the clause's failures must carry (SPEC Part A, "Reason ids"); "" when the
    same defect shows under several ids."""

    @property
    def clauses(self) -> tuple[str, ...]:
        return self.run or (self.expected,)


class Wrapper:
    """Delegates to a correct compactor; subclasses change one thing in ``fix``."""

    capabilities: dict[str, Any]
    """Set by the controls that declare something (SPEC Part A, "Declarations")."""

    def __init__(self, inner: Compactor) -> None:
        self.inner = inner
        self.profiles = inner.profiles

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        return self.fix(messages, self.inner.compact(messages, iteration=iteration))

    def fix(self, messages: list[dict], out: list[dict]) -> list[dict]:
        return out

    def estimate_tokens(self, messages: list[dict]) -> int:
        return self.inner.estimate_tokens(messages)

    @property
    def last_event(self) -> Any:
        return self.inner.last_event


def summarizing(compactor: Compactor) -> Summarize:
    """The compactor's strategy, which the seed factories make a summarizing one."""
    strategy = compactor.strategy
    assert isinstance(strategy, Summarize), f"not a summarizing strategy: {strategy!r}"
    return strategy


def _compacted(messages: list[dict], out: list[dict]) -> bool:
    return out != messages


# --- core


def cut_through_round(settings: Any) -> Wrapper:
    """Keeps the last 3 messages by count, whatever round they belong to (orphans tool results)."""

    class Cut(Wrapper):
        def fix(self, messages, out):
            system = [m for m in messages if m["role"] == "system"]
            rest = [m for m in messages if m["role"] != "system"]
            return system + rest[-3:] if _compacted(messages, out) else out

    return Cut(seed_000(settings))


def drop_parallel_result(settings: Any) -> Wrapper:
    """Loses the last result of a round with parallel tool calls."""

    class Drop(Wrapper):
        def fix(self, messages, out):
            for i, m in enumerate(out):
                if len(m.get("tool_calls") or []) > 1:
                    last = i + len(m["tool_calls"])
                    return out[:last] + out[last + 1 :]
            return out

    return Drop(seed_000(settings))


def strip_system(settings: Any) -> Wrapper:
    """Drops the system prompt from a compacted history."""

    class Strip(Wrapper):
        def fix(self, messages, out):
            return [m for m in out if m["role"] != "system"] if _compacted(messages, out) else out

    return Strip(seed_000(settings))


def reorder_rounds(settings: Any) -> Wrapper:
    """Puts the last kept round before the one it followed."""

    class Reorder(Wrapper):
        def fix(self, messages, out):
            if not _compacted(messages, out):
                return out
            rounds = split_rounds(out)
            if len(rounds) < 3 or rounds[-2].kind == "system" or is_summary(rounds[-2].messages[0]):
                return out
            head = [m for r in rounds[:-2] for m in r.messages]
            return head + list(rounds[-1].messages) + list(rounds[-2].messages)

    return Reorder(seed_000(settings))


def mutate_input(settings: Any) -> Wrapper:
    """Marks the caller's messages in place as it reads them."""

    class Mutate(Wrapper):
        def compact(self, messages, *, iteration):
            for message in messages:
                message["seen_by_compactor"] = True
            return super().compact(messages, iteration=iteration)

    return Mutate(seed_000(settings))


def invalid_role(settings: Any) -> Wrapper:
    """Gives its summary the role 'summary', which the API does not know."""

    class Role(Wrapper):
        def fix(self, messages, out):
            return [dict(m, role="summary") if is_summary(m) else m for m in out]

    return Role(seed_000(settings))


_counter = itertools.count()


def nondeterministic(settings: Any) -> Wrapper:
    """Numbers its summaries with a process-wide counter."""

    class Numbered(Wrapper):
        def fix(self, messages, out):
            return [dict(m, content=f"{m['content']} (#{next(_counter)})") if is_summary(m) else m for m in out]

    return Numbered(seed_000(settings))


def compacts_in_flight(settings: Any) -> Wrapper:
    """Compacts what precedes an unanswered tool call and puts the open round back."""

    class InFlight(Wrapper):
        def compact(self, messages, *, iteration):
            rounds = split_rounds(messages)
            if not call_in_flight(rounds):
                return self.inner.compact(messages, iteration=iteration)
            done = messages[: rounds[-1].start]
            head = self.inner.compact(done, iteration=iteration) if done else done
            kept = head if head != done else [m for m in done if m["role"] == "system"]
            return kept + list(rounds[-1].messages)

    return InFlight(seed_000(settings))


# --- trigger


class _Trigger:
    def __init__(self, settings: Any, rule: str) -> None:
        self.t, self.m, self.rule = settings.threshold_iterations, settings.max_context_tokens, rule

    def check(self, seen: Observation) -> str | None:
        i, tokens = seen.iterations, seen.estimated_tokens
        fires = {
            "and": i >= self.t and tokens >= self.m,
            "strict": i > self.t or tokens > self.m,
            "always": True,
            "iterations": i >= self.t,
        }[self.rule]
        return self.rule if fires else None


def _with_trigger(settings: Any, rule: str) -> Compactor:
    compactor = seed_000(settings)
    compactor.trigger = _Trigger(settings, rule)
    return compactor


def and_not_or(settings: Any) -> Compactor:
    """Fires only when iterations AND tokens cross their thresholds."""
    return _with_trigger(settings, "and")


def strict_boundaries(settings: Any) -> Compactor:
    """Uses > where seed 000 says >=."""
    return _with_trigger(settings, "strict")


def always_fires(settings: Any) -> Compactor:
    """Compacts on every call, below both thresholds too."""
    return _with_trigger(settings, "always")


def ignores_tokens(settings: Any) -> Compactor:
    """Counts iterations only: a history over the token threshold is not compacted before iteration T."""
    return _with_trigger(settings, "iterations")


def summarizes_nothing(settings: Any) -> Wrapper:
    """Has no check for an empty prefix: triggered with nothing older than the kept tail, it still
    asks for a summary (of nothing) and puts it before the tail."""

    class Empty(Wrapper):
        def fix(self, messages, out):
            event = self.inner.last_event
            if event is None or not (event.skipped_reason or "").startswith("nothing older"):
                return out
            system, rounds = split_system(list(out))
            try:
                summary = self.inner.strategy.summarizer.summarize(transcript([]))
            except SummarizerError:
                return out
            return system + [summary_message(summary.text)] + flatten(rounds)

    return Empty(seed_000(settings))


# --- summary


def summary_as_system(settings: Any) -> Wrapper:
    """Sends its summary as a system message."""

    class AsSystem(Wrapper):
        def fix(self, messages, out):
            return [dict(m, role="system") if is_summary(m) else m for m in out]

    return AsSystem(seed_000(settings))


def stacked_summaries(settings: Any) -> Wrapper:
    """Keeps an earlier summary next to the new one."""

    class Stacked(Wrapper):
        def fix(self, messages, out):
            earlier = [m for m in messages if is_summary(m)]
            if not earlier or not _compacted(messages, out):
                return out
            at = next(i for i, m in enumerate(out) if is_summary(m))
            return out[:at] + earlier + out[at:]

    return Stacked(seed_000(settings))


def one_round_short(settings: Any) -> Compactor:
    """Keeps K - 1 recent rounds."""
    return seed_000(settings.with_(keep_recent_rounds=settings.keep_recent_rounds - 1))


def paraphrased_tail(settings: Any) -> Wrapper:
    """Tidies the whitespace of the last message it keeps."""

    class Tidy(Wrapper):
        def fix(self, messages, out):
            if not _compacted(messages, out) or not isinstance(out[-1].get("content"), str):
                return out
            return out[:-1] + [dict(out[-1], content=out[-1]["content"] + " ")]

    return Tidy(seed_000(settings))


def wrong_model(settings: Any) -> Compactor:
    """Sends the summary request to the agent's model instead of settings.model."""
    return seed_000(settings.with_(model="gpt-4.1"))


# --- failure


def propagates_errors(settings: Any) -> Compactor:
    """Lets the summarizer's exception escape (a 429 crashes the run)."""

    class Raising(Compactor):
        def _failed(self, messages, error):
            raise error

    inner = seed_000(settings)
    return Raising(inner.strategy, inner.trigger, profiles=inner.profiles)


class _Lenient(Summarizer):
    def __init__(self, inner: Summarizer, swallow: str) -> None:
        super().__init__(inner.model, client=inner.client, prompt=inner.prompt)
        self.swallow = swallow

    def summarize(self, transcript: str) -> Summary:
        try:
            return super().summarize(transcript)
        except SummarizerError as error:
            if self.swallow == "empty" and error.error_type == "EmptySummary":
                return Summary("(no summary)", None, None)
            if self.swallow == "timeout" and error.error_type in ("APITimeoutError", "APIConnectionError"):
                raise TimeoutError(error.reason) from error
            if self.swallow == "server_error" and error.error_type == "InternalServerError":
                cause = error.__cause__
                assert cause is not None, "the summarizer wraps the client's exception"
                raise cause from None  # the client's own exception, uncaught
            raise


def _lenient(settings: Any, swallow: str) -> Compactor:
    compactor = seed_000(settings)
    strategy = summarizing(compactor)
    strategy.summarizer = _Lenient(strategy.summarizer, swallow)
    return compactor


def accepts_empty_answer(settings: Any) -> Compactor:
    """Takes an empty answer for a summary."""
    return _lenient(settings, "empty")


def hang_escapes(settings: Any) -> Compactor:
    """Turns a timed-out or dropped summarizer call into an exception the agent sees."""
    return _lenient(settings, "timeout")


def server_error_escapes(settings: Any) -> Compactor:
    """Catches rate limits and unusable answers but not a 5xx: openai.InternalServerError escapes."""
    return _lenient(settings, "server_error")


def logs_failure_at_info(settings: Any) -> Compactor:
    """Logs a summarizer failure at INFO, below an operator's WARNING filter (FAIL-5 is a SHOULD clause)."""

    class Quiet(Compactor):
        def _failed(self, messages, error):
            self.last_event.failure_reason = str(error)
            self.last_event.prompt_hash = error.prompt_hash
            logging.getLogger(__name__).info("compaction failed: %s: %s", error.error_type, error.reason)
            return list(messages)

    inner = seed_000(settings)
    return Quiet(inner.strategy, inner.trigger, profiles=inner.profiles)


# --- events


def bare_event(settings: Any) -> Wrapper:
    """Reports only the message counts in its event."""

    class Bare(Wrapper):
        @property
        def last_event(self):
            event = self.inner.last_event
            return None if event is None else {"messages_before": event.messages_before, "messages_after": event.messages_after}

    return Bare(seed_000(settings))


def hash_of_transcript(settings: Any) -> Wrapper:
    """Hashes the history instead of the summarization prompt."""

    class Hashed(Wrapper):
        def compact(self, messages, *, iteration):
            self.digest = hashlib.sha256(repr(messages).encode()).hexdigest()[:8]
            return super().compact(messages, iteration=iteration)

        @property
        def last_event(self):
            event = self.inner.last_event
            return None if event is None else event.as_dict() | {"prompt_hash": self.digest}

    return Hashed(seed_000(settings))


def failure_without_reason(settings: Any) -> Wrapper:
    """Records a failure event with no reason."""

    class Silent(Wrapper):
        @property
        def last_event(self):
            event = self.inner.last_event
            return None if event is None else event.as_dict() | {"failure_reason": None}

    return Silent(seed_000(settings))


# --- structured (seed 001)


class _Structured(StructuredSummarize):
    def __init__(self, inner: StructuredSummarize, defect: str) -> None:
        super().__init__(inner.summarizer, keep_messages=5 if defect == "keeps_five" else inner.keep_messages or 10)
        self.defect = defect

    def body(self, prefix, model_text):
        if self.defect == "ids_from_model":
            return structured_body([], latest_tasks(prefix), model_text)
        if self.defect == "top_level_ids_only":
            return structured_body(_top_level_ids(prefix), latest_tasks(prefix), model_text)
        if self.defect == "tasks_from_model":
            return structured_body(entities(prefix), None, model_text)
        if self.defect == "missing_section":
            return super().body(prefix, model_text).replace("### Key Decisions", "### Notes")
        return super().body(prefix, model_text)


def _structured(settings: Any, defect: str) -> Compactor:
    compactor = seed_001(settings)
    strategy = summarizing(compactor)
    assert isinstance(strategy, StructuredSummarize)
    compactor.strategy = _Structured(strategy, defect)
    return compactor


def _top_level_ids(prefix):
    """The entity rule STRUCT-2 had before issue 12: the top-level string ``id`` of a JSON object."""
    found = {}
    for message in prefix:
        if message.get("role") == "tool":
            try:
                data = json.loads(text_of(message))
            except ValueError:
                continue
            if isinstance(data, dict) and isinstance(data.get("id"), str):
                found[data["id"]] = data
    return list(found.values())


def top_level_ids_only(settings: Any) -> Compactor:
    """Keeps only top-level string ``id``s, missing ids nested in records (``owner_id``, ``linkedIds``)."""
    return _structured(settings, "top_level_ids_only")


def ids_from_model(settings: Any) -> Compactor:
    """Trusts the model to list entity ids."""
    return _structured(settings, "ids_from_model")


def tasks_from_model(settings: Any) -> Compactor:
    """Trusts the model to carry the task list."""
    return _structured(settings, "tasks_from_model")


def keeps_five(settings: Any) -> Compactor:
    """Keeps only the last 5 messages verbatim."""
    return _structured(settings, "keeps_five")


def missing_section(settings: Any) -> Compactor:
    """Calls seed 001's Key Decisions section 'Notes'."""
    return _structured(settings, "missing_section")


# --- new in issue 14: harm observed whatever is claimed, declarations, doing nothing


def _core_and_summary(compactor: Compactor) -> Compactor:
    """Claims core and summary only (no failure profile), as most framework compactors would."""
    compactor.profiles = frozenset({"core", "summary"})
    return compactor


def crashes_without_claiming_failure(settings: Any) -> Compactor:
    """Claims no failure profile and lets the summarizer's exception escape (CORE-10 still applies)."""
    compactor = propagates_errors(settings)
    return _core_and_summary(compactor)


def empty_summary_on_failure(settings: Any) -> Compactor:
    """Claims no failure profile and, when the summarizer fails, replaces the history with an
    empty summary (the Semantic Kernel / LangChain behaviour of issue 14)."""

    class Empty(Summarizer):
        def __init__(self, inner: Summarizer) -> None:
            super().__init__(inner.model, client=inner.client, prompt=inner.prompt)

        def summarize(self, transcript: str) -> Summary:
            try:
                return super().summarize(transcript)
            except SummarizerError:
                return Summary("", None, None)

    compactor = seed_000(settings)
    strategy = summarizing(compactor)
    strategy.summarizer = Empty(strategy.summarizer)
    return _core_and_summary(compactor)


def declared_between_rounds(settings: Any) -> Wrapper:
    """Compacts in flight (a CORE-9 defect) but declares it is only called between rounds: CORE-9
    is then not applicable, never failing (the declaration is the framework's promise)."""
    wrapper = compacts_in_flight(settings)
    wrapper.capabilities = {"called": "between_rounds"}
    return wrapper


def declared_system_outside(settings: Any) -> Wrapper:
    """Drops system messages (a CORE-3 defect) but declares the system prompt lives outside the list."""
    wrapper = strip_system(settings)
    wrapper.capabilities = {"system_prompt": "outside"}
    return wrapper


def drops_later_system(settings: Any) -> Wrapper:
    """Keeps the leading system messages but drops one that came after the first other message
    (a CORE-3 defect, reached only by the shape variant ``system-in-the-middle``)."""

    class DropLater(Wrapper):
        def fix(self, messages, out):
            leading = []
            for m in messages:
                if m["role"] not in ("system", "developer"):
                    break
                leading.append(m)
            return [m for m in out if m["role"] not in ("system", "developer") or m in leading]

    return DropLater(seed_000(settings))


def declared_system_leading(settings: Any) -> Wrapper:
    """`drops_later_system`, declaring its framework stores system messages only before the first
    other message: the middle variant is ruled out, CORE-3 is still checked on the leading ones."""
    wrapper = drops_later_system(settings)
    wrapper.capabilities = {"system_prompt": "leading"}
    return wrapper


class _Idle:
    profiles = frozenset({"core"})

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        return messages


def never_compacts(settings: Any) -> _Idle:
    """Returns every history unchanged: breaks no rule, shows nothing (flagged, not conforming)."""
    return _Idle()


# --- SHOULD: reported, never failing


def pads_summary(settings: Any) -> Wrapper:
    """Writes summaries far longer than what they replace (CORE-7 is a SHOULD clause)."""

    class Pad(Wrapper):
        def fix(self, messages, out):
            if not _compacted(messages, out):
                return out
            return [dict(m, content=m["content"] + " padding" * 5000) if is_summary(m) else m for m in out]

    return Pad(seed_000(settings))


# --- issue 20: summaries standing for nothing, invalid summarizer requests, what is kept


class _Fires:
    def __init__(self, settings: Any) -> None:
        self.settings = settings
        self.inner = seed_000(settings)
        self.profiles = {"core"}

    def fires(self, messages: list[dict], iteration: int) -> bool:
        s = self.settings
        return iteration >= s.threshold_iterations or self.inner.estimate_tokens(messages) >= s.max_context_tokens

    def estimate_tokens(self, messages: list[dict]) -> int:
        return self.inner.estimate_tokens(messages)

    def split(self, messages: list[dict], iteration: int) -> tuple[list[dict], list[dict]] | None:
        """(the older messages, the kept tail of the last K rounds), system messages aside, when it
        fires with no call in flight; else None."""
        rounds = split_rounds(messages)
        if call_in_flight(rounds) or not self.fires(messages, iteration):
            return None
        k = self.settings.keep_recent_rounds
        others = [r for r in rounds if r.kind != "system"]
        return flatten(others[:-k]), flatten(others[-k:])


PLACEHOLDER = "Previous conversation was too long to summarize."


def placeholder_without_summarizer(settings: Any) -> Wrapper:
    """When the last 6 messages of the part it would summarize hold no user message, replaces that
    part with a fixed placeholder summary without asking the summarizer (LangChain's
    SummarizationMiddleware, langchain-ai/langchain#39261); otherwise summarizes as seed 000."""

    class Placeholder(Wrapper):
        def compact(self, messages, *, iteration):
            system = [m for m in messages if m["role"] in ("system", "developer")]
            rounds = [r for r in split_rounds(messages) if r.kind != "system"]
            older = flatten(rounds[: -settings.keep_recent_rounds])
            fires = iteration >= settings.threshold_iterations or self.estimate_tokens(messages) >= settings.max_context_tokens
            if fires and older and not call_in_flight(split_rounds(messages)) and all(m["role"] != "user" for m in older[-6:]):
                return system + [summary_message(PLACEHOLDER)] + flatten(rounds[-settings.keep_recent_rounds :])
            return super().compact(messages, iteration=iteration)

    return Placeholder(seed_000(settings))


def drops_its_summary(settings: Any) -> Wrapper:
    """Summarizes as seed 000, then leaves the new summary out of its output while the messages it
    replaced stay removed (Microsoft Agent Framework's tool loop losing a per-iteration copy's
    summary, microsoft/agent-framework#4991)."""

    class Drops(Wrapper):
        def fix(self, messages, out):
            return [m for m in out if not is_summary(m) or m in messages]

    return Drops(seed_000(settings))


class _WindowRequest:
    """Summarizes the older part by sending the summarizer a window of its messages themselves, cut
    where a count cut lands on a tool result (from the last tool result whose call precedes it; the
    last 8 messages where the older part holds none), so the request holds a result without its
    call; then keeps the last K rounds after the summary; on any summarizer error the history comes
    back unchanged."""

    profiles = frozenset({"core"})

    def __init__(self, settings: Any) -> None:
        self.settings = settings
        self.inner = seed_000(settings)

    def estimate_tokens(self, messages: list[dict]) -> int:
        return self.inner.estimate_tokens(messages)

    def parts(self, messages: list[dict], iteration: int) -> tuple[list[dict], list[dict], list[dict]] | None:
        """(system messages, the older part, the kept tail) when it fires with something older to
        summarize, else None."""
        s = self.settings
        rounds = split_rounds(messages)
        if call_in_flight(rounds) or not (iteration >= s.threshold_iterations or self.estimate_tokens(messages) >= s.max_context_tokens):
            return None
        others = [r for r in rounds if r.kind != "system"]
        older = flatten(others[: -s.keep_recent_rounds])
        if not older:
            return None
        return [m for m in messages if m["role"] in ("system", "developer")], older, flatten(others[-s.keep_recent_rounds :])

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        found = self.parts(messages, iteration)
        text = self.summary(found[1]) if found is not None else None
        if found is None or text is None:
            return messages
        system, _, tail = found
        return system + [summary_message(text)] + tail

    def summary(self, older: list[dict]) -> str | None:
        """The summary of ``older``, or None when there is none to keep."""
        sent = [m for m in older if m["role"] not in ("system", "developer")]
        cuts = [i for i, m in enumerate(sent) if m["role"] == "tool" and i > 0]
        return self.ask(sent[cuts[-1] :] if cuts else sent[-8:])  # where a count cut lands on a tool result: every history with one shows it

    def ask(self, sent: list[dict]) -> str | None:
        """The summarizer's answer to ``sent`` under a one-line instruction, or None on an error or an empty answer."""
        s = self.settings
        try:
            answer = s.client.chat.completions.create(model=s.model, messages=[{"role": "system", "content": "Summarize this conversation."}, *sent])
            text = answer.choices[0].message.content or ""
        except (openai.OpenAIError, IndexError):
            return None
        return text if text.strip() else None


def window_request(settings: Any) -> _WindowRequest:
    """Sends the summarizer a window of the older messages cut by count, so its request can hold a
    tool result without its call (letta-ai/letta#935): the provider answers HTTP 400."""
    return _WindowRequest(settings)


class _LastRoundRequest(_WindowRequest):
    """Sends the summarizer the last round of the older part only (whole rounds, so the request is
    one the provider accepts) and lets the summary replace the whole older part."""

    def summary(self, older: list[dict]) -> str | None:
        rounds = [r for r in split_rounds([m for m in older if m["role"] not in ("system", "developer")]) if r.kind != "system"]
        return self.ask(flatten(rounds[-1:]))


def summarizes_last_round_only(settings: Any) -> _LastRoundRequest:
    """Its summary replaces older messages its summarizer request never held: the request holds the
    last older round only (microsoft/agent-framework#8086: tool results written as
    ``[tool] function_result``, fixed in 1.18.0)."""
    return _LastRoundRequest(settings)


class _HistoryRequest(_WindowRequest):
    """Declares that its summarizer is Bedrock Converse, reached as it sends (``summarizer_providers``),
    and sends it the older rounds themselves (whole, every call with its results) and no tools."""

    capabilities: ClassVar[dict[str, Any]] = {"providers": ["openai", "bedrock-converse"], "summarizer_providers": ["bedrock-converse"]}

    def summary(self, older: list[dict]) -> str | None:
        return self.ask([m for m in older if m["role"] not in ("system", "developer")])


def history_request_without_tools(settings: Any) -> _HistoryRequest:
    """Declares Bedrock Converse and sends the summarizer the older rounds with their tool calls and
    results but no tools (langchain-ai/langchain-aws#591, strands-agents/harness-sdk#998): Bedrock
    answers "The toolConfig field must be defined when using toolUse and toolResult content blocks"."""
    return _HistoryRequest(settings)


def sends_whole_history(settings: Any) -> Any:
    """Declares its summary model's window but sends the whole older part however large
    (deepagents#5913: trim_tokens_to_summarize=None): over the window the provider answers HTTP 400."""
    compactor = seed_000(settings)
    strategy = compactor.strategy
    assert isinstance(strategy, Summarize)
    strategy.summarizer.window = None
    return compactor


class ReactiveLoop:
    """An agent's reactive loop as a framework runs it (Strands' ``Agent``): the agent's model, a TEST
    DOUBLE with a context window of `WINDOW` tokens (the suite's ``SummarizerServer``, answering a larger
    request with OpenAI's real overflow answer), is called with the history; on an error its model layer
    reads as an overflow (`recognises`: the error code it maps) the oldest round is dropped and the call
    made again; with one round left, the tool results of that round are cut to a notice, as Strands'
    sliding window truncates them (`truncates_newest`), and the call made once more; still over, the loop
    ends with its own error. Any other error ends the loop. Declares ``reactive_window`` (SPEC FIRE-5)."""

    WINDOW: ClassVar[int] = 1000
    capabilities: ClassVar[dict[str, Any]] = {"reactive_window": WINDOW}
    profiles = frozenset({"core"})
    recognises: ClassVar[str | None] = "context_length_exceeded"
    truncates_newest: ClassVar[bool] = True
    CUT: ClassVar[str] = "The tool result was too large for the context window and was cut."

    def __init__(self, settings: Any) -> None:
        from compaction_suite.conformance.summarizer_server import SummarizerServer

        self.settings = settings
        self.model = SummarizerServer().start()
        self.model.window(self.WINDOW)
        self.client = openai.OpenAI(base_url=self.model.base_url, api_key=settings.api_key, max_retries=0)

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        current = list(messages)
        while True:
            try:
                self.client.chat.completions.create(model=self.settings.model, messages=current)  # type: ignore[arg-type]
                return current
            except openai.BadRequestError as error:
                rounds = split_rounds(current)
                others = [r for r in rounds if r.kind != "system"]
                if error.code != self.recognises:
                    raise
                if len(others) >= 2:
                    current = flatten([r for r in rounds if r.kind == "system"] + others[1:])
                    continue
                cut = [{**m, "content": self.CUT} if m.get("role") == "tool" else m for m in current]
                if not self.truncates_newest:
                    raise
                if cut == current:
                    raise RuntimeError("the request cannot be reduced to fit the model's context window") from error
                current = cut


class _Unrecognised(ReactiveLoop):
    recognises = None


class _KeepsNewestWhole(ReactiveLoop):
    truncates_newest = False


def keeps_newest_batch_whole(settings: Any) -> ReactiveLoop:
    """A reactive loop that reduces only by dropping older rounds, so a newest round of parallel results
    larger than the window is sent whole again after its reduction and the provider's overflow answer
    ends the run (langchain-ai/deepagents#3405, deepagents 0.6.1)."""
    return _KeepsNewestWhole(settings)


def overflow_unrecognised(settings: Any) -> ReactiveLoop:
    """A reactive loop whose model layer maps no error to an overflow, so the provider's overflow answer
    ends the agent's run (strands-agents/harness-sdk#1528, #1712, #3718, #3969: a model class missing its
    provider's words)."""
    return _Unrecognised(settings)


class MessagesOnlyLoop:
    """An agent's loop replaying a history turn by turn (SPEC FIRE-7): before each of the model's answers
    it sends the agent's model, a TEST DOUBLE with a context window of `WINDOW` tokens, a system prompt and
    tool definitions of `PREFIX_SHARE` of the window beside the messages it holds, and drops its oldest
    rounds once the messages alone reach `FRACTION` of the window (chars/4): the prefix is never counted,
    so a request passes the window before the trigger fires (langchain-ai/langchain#34664). Declares
    ``request_window``."""

    WINDOW: ClassVar[int] = 2000
    FRACTION: ClassVar[float] = 0.8
    PREFIX_SHARE: ClassVar[float] = 0.45
    capabilities: ClassVar[dict[str, Any]] = {"request_window": WINDOW, "system_prompt": "outside"}
    profiles = frozenset({"core"})

    def __init__(self, settings: Any) -> None:
        from compaction_suite.conformance.summarizer_server import SummarizerServer

        self.settings = settings
        self.model = SummarizerServer().start()
        self.model.window(self.WINDOW)
        self.client = openai.OpenAI(base_url=self.model.base_url, api_key=settings.api_key, max_retries=0)
        words = int(self.WINDOW * self.PREFIX_SHARE * 0.6)
        self.system = " ".join(itertools.islice(itertools.cycle(("Read", "files", "before", "changing", "them", "and", "run", "the", "tests.")), words))

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        held: list[dict] = []
        tools = [{"type": "function", "function": {"name": "readBuildLog", "description": "Read a part of the build log.", "parameters": {"type": "object", "properties": {}}}}]
        for message in messages:
            if message.get("role") == "assistant":
                if sum(len(text_of(m)) for m in held) // 4 >= self.FRACTION * self.WINDOW:
                    rounds = split_rounds(held)
                    while len(rounds) > 2 and sum(len(text_of(m)) for r in rounds for m in r.messages) // 4 >= self.FRACTION * self.WINDOW / 2:
                        rounds = rounds[1:]
                    held = flatten(rounds)
                request = [{"role": "system", "content": self.system}, *held]
                self.client.chat.completions.create(model=self.settings.model, messages=request, tools=tools)  # type: ignore[arg-type]
            held.append(message)
        return held


def counts_messages_only(settings: Any) -> MessagesOnlyLoop:
    """An agent loop whose trigger counts its messages only, beside a system prompt and tools of 45% of
    the model's window: its requests pass the window before it compacts (langchain-ai/langchain#34664)."""
    return MessagesOnlyLoop(settings)


class FlatImageLoop(MessagesOnlyLoop):
    """`MessagesOnlyLoop` with a small prefix it counts, and every image part counted as `IMAGE_TOKENS`
    whatever its size (LangChain's ``count_tokens_approximately``: 85): text rounds fire its trigger in
    time, a turn pasting large screenshots does not (langchain-ai/langchain#39857)."""

    PREFIX_SHARE: ClassVar[float] = 0.02
    IMAGE_TOKENS: ClassVar[int] = 85

    def _counted(self, held: list[dict]) -> int:
        from compaction_suite.text import message_text

        images = sum(1 for m in held if isinstance(m.get("content"), list) for p in m["content"] if isinstance(p, dict) and p.get("type") == "image_url")
        return (len(self.system) + sum(len(t) for m in held for t in message_text(m))) // 4 + self.IMAGE_TOKENS * images

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        held: list[dict] = []
        for message in messages:
            if message.get("role") == "assistant":
                rounds = split_rounds(held)
                while len(rounds) > 2 and self._counted(flatten(rounds)) >= self.FRACTION * self.WINDOW / 2 and self._counted(held) >= self.FRACTION * self.WINDOW:
                    rounds = rounds[1:]
                held = flatten(rounds)
                request = [{"role": "system", "content": self.system}, *held]
                self.client.chat.completions.create(model=self.settings.model, messages=request)  # type: ignore[arg-type]
            held.append(message)
        return held


def counts_images_flat(settings: Any) -> FlatImageLoop:
    """An agent loop whose trigger counts its whole request but every image as 85 tokens: a turn pasting
    large screenshots sends a request over the window (langchain-ai/langchain#39857)."""
    return FlatImageLoop(settings)


class EmptyTrimLoop(MessagesOnlyLoop):
    """`MessagesOnlyLoop` with a small prefix, whose view before each answer is the newest rounds, starting
    on a user message, that fit `BUDGET` of the window (chars/4); when not even the newest turn fits, the
    view is empty and the loop sends its whole history instead (langgraph's ``create_react_agent`` reading
    a ``pre_model_hook``'s ``llm_input_messages`` with ``or``, langchain-ai/langgraph#8925)."""

    PREFIX_SHARE: ClassVar[float] = 0.02
    BUDGET: ClassVar[float] = 0.3

    def _view(self, held: list[dict]) -> list[dict]:
        rounds = split_rounds(held)
        kept: list[dict] = []
        for r in reversed(rounds):
            if sum(len(text_of(m)) for m in [*r.messages, *kept]) // 4 > self.BUDGET * self.WINDOW:
                break
            kept = [*r.messages, *kept]
        return kept or held

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        held: list[dict] = []
        for message in messages:
            if message.get("role") == "assistant":
                request = [{"role": "system", "content": self.system}, *self._view(held)]
                self.client.chat.completions.create(model=self.settings.model, messages=request)  # type: ignore[arg-type]
            held.append(message)
        return held


def sends_all_when_trim_empty(settings: Any) -> EmptyTrimLoop:
    """An agent loop that trims each request to the newest rounds fitting 30% of the window, and sends the
    whole history when not even the newest turn fits: a pasted log larger than that budget sends a request
    over the window (langchain-ai/langgraph#8925)."""
    return EmptyTrimLoop(settings)


class UsageReportingSummarizer:
    """Summarizes everything before the last user message into one ``[Context Summary]`` message by one
    request to the suite's summarizer and reports that request's usage (``usage: reported``, SPEC COST-1,
    COST-2) times `FACTOR`: 1 is right, 0 leaves it out, 2 counts it twice."""

    FACTOR: ClassVar[int] = 1
    capabilities: ClassVar[dict[str, Any]] = {"usage": "reported"}
    profiles = frozenset({"core"})

    def __init__(self, settings: Any) -> None:
        self.settings = settings
        self.client = openai.OpenAI(base_url=settings.base_url, api_key=settings.api_key, max_retries=0, timeout=settings.summarizer_timeout)
        self.counted: dict[str, int] | None = None

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        self.counted = None
        system = [m for m in messages if m.get("role") == "system"]
        rest = [m for m in messages if m.get("role") != "system"]
        last_user = max((i for i, m in enumerate(rest) if m.get("role") == "user"), default=0)
        if last_user == 0:
            return messages
        answer = self.client.chat.completions.create(model=self.settings.model, messages=[{"role": "user", "content": transcript(rest[:last_user])}])
        used = answer.usage
        self.counted = {"input_tokens": self.FACTOR * (used.prompt_tokens if used else 0), "output_tokens": self.FACTOR * (used.completion_tokens if used else 0)}
        return [*system, summary_message(answer.choices[0].message.content or ""), *rest[last_user:]]

    def reported_usage(self) -> dict[str, int] | None:
        return self.counted


class _LeavesOut(UsageReportingSummarizer):
    FACTOR = 0


class _CountsTwice(UsageReportingSummarizer):
    FACTOR = 2


class StaleIndexRun:
    """Replays the history's last user turn as a run given everything before it, keeping the last
    `KEEP` messages before each model step (a sliding window inside the run) and reporting the run's
    new messages as the framework's history after the run sliced at the index where the run started,
    shifted by what the window removed (``run_messages: reported``, SPEC STORE-22): once the window
    removes messages of the run itself the index goes negative and the slice keeps only the last few
    (pydantic/pydantic-ai#3983)."""

    KEEP: ClassVar[int] = 3
    capabilities: ClassVar[dict[str, Any]] = {"run_messages": "reported"}
    profiles = frozenset({"core"})

    def __init__(self, settings: Any) -> None:
        self.report: dict[str, list[dict]] | None = None

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        self.report = None
        users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
        if not users or users[-1] == 0:
            return messages
        given, turn = messages[: users[-1]], messages[users[-1] :]
        held, index = list(given), len(given)
        for m in turn:
            held.append(m)
            if m.get("role") == "assistant" or len(held) <= self.KEEP:
                continue
            index -= len(held) - self.KEEP
            held = held[-self.KEEP :]
        self.report = {"given": given, "after": held, "new": held[index:]}
        return held

    def reported_run(self) -> dict[str, list[dict]] | None:
        return self.report


class UnmovedIndexRun(StaleIndexRun):
    """`StaleIndexRun` whose index is never moved for what the window removed: the run's new messages are
    its history after the run past as many messages as it was given (pydantic/pydantic-ai#2914)."""

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        held = super().compact(messages, iteration=iteration)
        if self.report is not None:
            self.report["new"] = held[len(self.report["given"]) :]
        return held


def new_messages_at_an_unmoved_index(settings: Any) -> UnmovedIndexRun:
    """Reports a run's new messages from the index where the run started, never moved for what the in-run
    window removed."""
    return UnmovedIndexRun(settings)


def new_messages_at_a_stale_index(settings: Any) -> StaleIndexRun:
    """Reports a run's new messages from an index the in-run window shifted past the run's start."""
    return StaleIndexRun(settings)


def usage_leaves_out_summary(settings: Any) -> UsageReportingSummarizer:
    """Reports no usage for its summarizer request, as the OpenAI Agents SDK's compaction session left
    its ``responses.compact`` call out of the run's usage (openai-agents-python#4434)."""
    return _LeavesOut(settings)


def usage_counts_summary_twice(settings: Any) -> UsageReportingSummarizer:
    """Reports its summarizer request's usage twice over."""
    return _CountsTwice(settings)


class _TextOnlySummarizer(Summarizer):
    """Writes each tool result into the transcript by its kind alone, as Agent Framework's
    SummarizationStrategy did before 1.18.0 ('[tool] function_result'), and the rest whole."""

    def pieces(self, transcript: str) -> list[str]:
        blocks = [block.split("\n", 1)[0] if block.startswith("tool result (") else block for block in transcript.split("\n\n")]
        return ["\n\n".join(blocks)]


def sends_text_whole(settings: Any) -> Any:
    """Declares its summary model's window, leaves the tool results' text out of what it sends and
    sends the messages' own text whole however large (agent-framework#7214, at releases whose
    transcript held no tool result text): the text users pasted is over the window."""
    compactor = seed_000(settings)
    strategy = compactor.strategy
    assert isinstance(strategy, Summarize)
    old = strategy.summarizer
    strategy.summarizer = _TextOnlySummarizer(old.model, client=old.client, async_client=old.async_client, prompt=old.prompt, max_tokens=old.max_tokens)
    return compactor


class _TextOnly(Summarizer):
    """Sends the summarizer the transcript without its ``[image: URL]`` lines."""

    def __init__(self, inner: Summarizer) -> None:
        super().__init__(inner.model, client=inner.client, prompt=inner.prompt)

    def request(self, transcript: str) -> dict[str, Any]:
        return super().request("\n".join(line for line in transcript.splitlines() if not line.startswith("[image: ")))


def summarizes_text_only(settings: Any) -> Compactor:
    """Summarizes as seed 000, but sends the summarizer only the text of the messages it replaces,
    not the images they refer to by URL (LangChain's SummarizationMiddleware rendering them with
    get_buffer_string before langchain 1.3.10, langchain-ai/deepagents#2873)."""
    compactor = seed_000(settings)
    strategy = summarizing(compactor)
    strategy.summarizer = _TextOnly(strategy.summarizer)
    return compactor


class _MiscountsSkipped(_Fires):
    """Keeps the first round and the last K whole, and writes "Skipped N messages." in place of the
    rounds between, N counting the calls it removed but not their results."""

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        rounds = split_rounds(messages)
        others = [r for r in rounds if r.kind != "system"]
        k = self.settings.keep_recent_rounds
        if call_in_flight(rounds) or not self.fires(messages, iteration) or len(others) <= k + 1:
            return messages
        middle = flatten(others[1:-k])
        counted = sum(m["role"] != "tool" for m in middle)
        system = [m for m in messages if m["role"] in ("system", "developer")]
        return system + flatten(others[:1]) + [{"role": "user", "content": f"Skipped {counted} messages."}] + flatten(others[-k:])


def miscounts_skipped(settings: Any) -> _MiscountsSkipped:
    """Replaces the middle rounds with a "Skipped N messages." placeholder whose N leaves out the
    tool results it removed (AutoGen's head-and-tail context not counting the call messages its
    guards drop, microsoft/autogen#8070)."""
    return _MiscountsSkipped(settings)


def restates_kept_calls(settings: Any) -> Wrapper:
    """Summarizes as seed 000, then writes a message before the kept rounds listing each tool call
    they hold as JSON, call id included, while sending those calls as they are (the OpenAI Agents
    SDK's nested handoff history up to 0.6.6, openai/openai-agents-python#2171)."""

    class Restate(Wrapper):
        def fix(self, messages, out):
            if not _compacted(messages, out):
                return out
            kept = [c for m in out if m in messages for c in m.get("tool_calls") or []]
            if not kept:
                return out
            at = next((i for i, m in enumerate(out) if m in messages and m.get("role") not in ("system", "developer")), len(out))
            note = {"role": "user", "content": "The conversation continues with these actions: " + json.dumps(kept)}
            return [*out[:at], note, *out[at:]]

    return Restate(seed_000(settings))


def restates_kept_messages(settings: Any) -> Wrapper:
    """Summarizes as seed 000, then writes a message before the kept rounds quoting each kept message
    with text of a sentence or more, while sending those messages as they are (the OpenAI Agents SDK's
    nested handoff history up to 0.18.x, forwarding the handing agent's own message beside the transcript
    that holds it, openai/openai-agents-python#3791)."""

    class Restate(Wrapper):
        def fix(self, messages, out):
            if not _compacted(messages, out):
                return out
            kept = [m["content"] for m in out if m in messages and m.get("role") in ("user", "assistant") and not m.get("tool_calls") and isinstance(m.get("content"), str) and len(m["content"]) >= 60]
            if not kept:
                return out
            at = next((i for i, m in enumerate(out) if m in messages and m.get("role") not in ("system", "developer")), len(out))
            note = {"role": "user", "content": "The conversation continues with these messages:\n" + "\n".join(f"- {k}" for k in kept)}
            return [*out[:at], note, *out[at:]]

    return Restate(seed_000(settings))


def transcript_first_lines(settings: Any) -> Wrapper:
    """Replaces the older messages with a transcript it renders itself (no summarizer), one record a
    line, each message's text cut to its first ten words (the OpenAI Agents SDK's nested handoff
    history re-read at the next handoff up to 0.17.0, keeping a message's first line,
    openai/openai-agents-python#3319)."""

    class Transcribe(Wrapper):
        def compact(self, messages, *, iteration):
            rounds = [r for r in split_rounds(messages) if r.kind != "system"]
            if len(rounds) < 2:
                return list(messages)
            older = [m for r in rounds[:-1] for m in r.messages]
            lines = [f"{n}. {m['role']}: {' '.join(str(m.get('content') or '').split()[:10])}" for n, m in enumerate(older, 1) if isinstance(m.get("content"), str)]
            note = {"role": "assistant", "content": "For context, the conversation so far:\n" + "\n".join(lines)}
            system = [m for m in messages if m.get("role") in ("system", "developer")]
            return [*system, note, *rounds[-1].messages]

    return Transcribe(seed_000(settings))


def transcript_records_reread_by_line(settings: Any) -> Wrapper:
    """Replaces the older messages with a transcript of JSON records it renders itself (no summarizer),
    then reads each record back as a ``role: text`` line (its role the text before the first colon) and
    renders what it read: the OpenAI Agents SDK's nested handoff history re-reading, at the next handoff,
    a JSON record split at a Unicode line boundary (openai/openai-agents-python#4787): every role comes
    back as '{"role"'."""

    class Reread(Wrapper):
        def compact(self, messages, *, iteration):
            rounds = [r for r in split_rounds(messages) if r.kind != "system"]
            if len(rounds) < 2:
                return list(messages)
            older = [m for r in rounds[:-1] for m in r.messages if isinstance(m.get("content"), str)]
            read = [json.dumps({"role": m["role"], "content": m["content"]}, ensure_ascii=False).partition(":") for m in older]
            lines = [f"{n}. " + json.dumps({"role": role.strip(), "content": text.strip()}, ensure_ascii=False) for n, (role, _, text) in enumerate(read, 1)]
            note = {"role": "assistant", "content": "For context, the conversation so far:\n" + "\n".join(lines)}
            system = [m for m in messages if m.get("role") in ("system", "developer")]
            return [*system, note, *rounds[-1].messages]

    return Reread(seed_000(settings))


def drops_newest_round(settings: Any) -> Wrapper:
    """Summarizes the newest round away with the older ones: the compacted output ends at the
    summary and the round before the newest (the current task is gone)."""

    class Drop(Wrapper):
        def fix(self, messages, out):
            if not _compacted(messages, out):
                return out
            newest = [r for r in split_rounds(messages) if r.kind != "system"][-1]
            return [m for m in out if not any(m is n or m == n for n in newest.messages)]

    return Drop(seed_000(settings))


def masks_newest_result(settings: Any) -> Wrapper:
    """When the reference would compact, keeps every message and masks the newest round's tool
    results in place instead ('The tool result was too large!', status error), as Strands 1.5.0's
    routine window management did (strands-agents/harness-sdk#702): older results stay whole."""

    class Mask(Wrapper):
        def fix(self, messages, out):
            if not _compacted(messages, out):
                return out
            newest = [r for r in split_rounds(messages) if r.kind != "system"][-1]
            masked = [{**m, "content": "The tool result was too large!"} if m.get("role") == "tool" else m for m in newest.messages]
            return messages[: len(messages) - len(masked)] + masked

    return Mask(seed_000(settings))


def strips_images(settings: Any) -> Wrapper:
    """Compacts as the reference does, then takes the image and file parts out of every user turn it
    kept, keeping their text and saying nothing of them (the images a compaction drops from the turns
    it keeps; langchain-ai/deepagents#4954 drops a ``read_file`` image so)."""

    class Strip(Wrapper):
        def fix(self, messages, out):
            if not _compacted(messages, out):
                return out
            return [_without_media(m) if m.get("role") == "user" and isinstance(m.get("content"), list) else m for m in out]

    return Strip(seed_000(settings))


def _without_media(message: dict) -> dict:
    text = [p for p in message["content"] if isinstance(p, dict) and p.get("type") == "text"]
    return {**message, "content": text or ""}


class _DumpsMessages(Summarize):
    """Summarizes as seed 000, but writes each message to summarize into the transcript as its JSON,
    content parts whole: an inline image's or file's base64 data goes to the summarizer as text."""

    def apply(self, messages: list[dict], rounds: Any = None) -> Outcome:
        plan = self.plan(messages, rounds)
        if plan is None:
            return Outcome(list(messages))
        try:
            summary = self.summarizer.summarize("\n".join(json.dumps(m, ensure_ascii=False) for m in plan[1]))
        except SummarizerError as error:
            return self._fallback(plan, error)
        return self._assemble(plan, summary)


def dumps_media_as_text(settings: Any) -> Compactor:
    """Sends the summarizer the messages it replaces as JSON text, an inline image's base64 data
    with them (a transcript of each message's content as a string)."""
    compactor = seed_000(settings)
    old = summarizing(compactor)
    compactor.strategy = _DumpsMessages(old.summarizer, keep_rounds=old.keep_rounds, keep_messages=old.keep_messages, fallback_truncation=old.fallback_truncation)
    return compactor


class _Reinserts(_Fires):
    """Clears the older tool results in place and appends their full text in a user message."""

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        found = self.split(messages, iteration)
        if found is None:
            return messages
        older, tail = found
        cleared = [m["content"] for m in older if m["role"] == "tool" and isinstance(m.get("content"), str) and m["content"]]
        if not cleared:
            return messages
        head = [dict(m, content="") if m["role"] == "tool" and isinstance(m.get("content"), str) else m for m in older]
        system = [m for m in messages if m["role"] in ("system", "developer")]
        return system + head + [{"role": "user", "content": "".join(cleared)}] + tail


class _TrimsPastItsCap(_Fires):
    """Shortens each older tool result over its declared cap in place to a header and a preview, as a
    trimming filter does, keeping the replacement whenever it is shorter than the result even if it is
    over the cap (openai/openai-agents-python#4622: ``ToolOutputTrimmer``'s string outputs)."""

    CAP = 40
    PREVIEW = 60

    capabilities: ClassVar[dict[str, Any]] = {"called": "between_rounds", "trimmed_result_chars": CAP}

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        found = self.split(messages, iteration)
        if found is None:
            return messages
        older = {id(m) for m in found[0]}
        return [self._trimmed(m) if id(m) in older and m["role"] == "tool" else m for m in messages]

    def _trimmed(self, message: dict) -> dict:
        text = message.get("content")
        if not isinstance(text, str) or len(text) <= self.CAP:
            return message
        summary = f"[Trimmed: {len(text)} chars]\n{text[: self.PREVIEW]}..."
        return dict(message, content=summary) if len(summary) < len(text) else message


class _MasksInsteadOfSliding:
    """Declares a window of ``WINDOW`` items and, over it, masks the newest tool result it has not masked yet
    instead of dropping the oldest items, as Strands' routine sliding window did before 1.40.0 (its
    ``reduce_context`` truncated a tool result first and returned): the history changes and stays over the
    window (strands-agents/harness-sdk#578, #702)."""

    WINDOW = 6
    MASK = "The tool result was too large!"

    capabilities: ClassVar[dict[str, Any]] = {"called": "between_rounds", "kept_items": WINDOW}

    def __init__(self, settings: Any) -> None:
        self.settings = settings

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        held = [m for m in messages if m["role"] not in ("system", "developer")]
        masked = [i for i, m in enumerate(messages) if m["role"] == "tool" and m.get("content") != self.MASK]
        if len(held) <= self.WINDOW or not masked:
            return messages
        return [dict(m, content=self.MASK) if i == masked[-1] else m for i, m in enumerate(messages)]


def masks_instead_of_sliding(settings: Any) -> _MasksInsteadOfSliding:
    """Declares a 6-item window and masks a tool result instead of sliding it (CORE-71)."""
    return _MasksInsteadOfSliding(settings)


MEDIA_PART_TYPES = frozenset({"image_url", "file", "input_audio"})
"""The chat-completions content parts that carry media."""


def _holds_media(message: dict) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(p, dict) and p.get("type") in MEDIA_PART_TYPES for p in content)


class _StringifiesMedia(_Fires):
    """Shortens each older message holding media to a header and a preview of ``str()`` of its content
    list, base64 data and all (openai/openai-agents-python#4173: ``ToolOutputTrimmer`` before 0.20.0
    sliced ``str()`` of a tool output's content parts)."""

    PREVIEW = 400

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        found = self.split(messages, iteration)
        if found is None:
            return messages
        older = {id(m) for m in found[0]}
        return [self._trimmed(m) if id(m) in older and _holds_media(m) else m for m in messages]

    def _trimmed(self, message: dict) -> dict:
        text = str(message["content"])
        return dict(message, content=f"[Trimmed: {len(text)} chars]\n{text[: self.PREVIEW]}...")


def stringifies_media(settings: Any) -> _StringifiesMedia:
    """Writes an older message's media, base64 data and all, into a text preview (CORE-43)."""
    return _StringifiesMedia(settings)


class _DropsMiddleToolRound(_Fires):
    """Drops the oldest rounds but the first tool round, which it keeps, as a window whose groups
    merged does (microsoft/agent-framework#5237): a newer tool round goes while an older one stays."""

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        rounds = split_rounds(messages)
        others = [r for r in rounds if r.kind != "system"]
        k = self.settings.keep_recent_rounds
        tool = [n for n, r in enumerate(others[:-k]) if any(m.get("tool_calls") for m in r.messages)]
        if call_in_flight(rounds) or not self.fires(messages, iteration) or len(tool) < 2:
            return messages
        system = [m for m in messages if m["role"] in ("system", "developer")]
        return system + flatten([others[tool[0]]]) + flatten(others[-k:])


def trims_past_its_cap(settings: Any) -> _TrimsPastItsCap:
    """Declares a 40-character cap on the tool results it trims and leaves a header and a 60-character
    preview in their place (CORE-40): shorter than each result, longer than its cap."""
    return _TrimsPastItsCap(settings)


def offloads_to_one_file(settings: Any) -> Any:
    """Offloads every large tool result to one file, each overwriting the one before (STORE-30; deepagents#6302)."""
    from broken.offloading import OffloadsToOneFile

    return OffloadsToOneFile(settings)


def keeps_results_it_cannot_offload(settings: Any) -> Any:
    """Keeps a large tool result whole when its call id makes a file name over 255 bytes (STORE-31; deepagents#5560)."""
    from broken.offloading import KeepsResultsItCannotOffload

    return KeepsResultsItCannotOffload(settings)


def archives_without_media(settings: Any) -> Any:
    """Archives the history it replaces without its images (STORE-30; deepagents#6503)."""
    from broken.offloading import ArchivesWithoutMedia

    return ArchivesWithoutMedia(settings)


def appends_by_exact_read_back(settings: Any) -> Any:
    """Appends to its archive by an edit that a CRLF in it fails; the summary then names no archive (STORE-32; deepagents#2247, #2861)."""
    from broken.offloading import AppendsByExactReadBack

    return AppendsByExactReadBack(settings)


def archives_both_agents_in_one_file(settings: Any) -> Any:
    """Archives an agent's and its sub-agent's replaced histories in one file of the run (STORE-33; deepagents PR #5470)."""
    from broken.offloading import ArchivesBothAgentsInOneFile

    return ArchivesBothAgentsInOneFile(settings)


def keeps_fewer_than_declared(settings: Any) -> Any:
    """Declares a retention of 8 messages and keeps 3 after its summary (CORE-65; deepagents#1485)."""
    from broken.offloading import KeepsFewerThanDeclared

    return KeepsFewerThanDeclared(settings)


def drops_middle_tool_round(settings: Any) -> _DropsMiddleToolRound:
    """Keeps the oldest tool round and the last K, dropping the tool rounds between (CORE-30)."""
    return _DropsMiddleToolRound(settings)


def reinserts_excluded(settings: Any) -> _Reinserts:
    """Clears older tool results in place, then re-inserts their full text in a new message:
    nothing is reclaimed, yet the context does not grow (CORE-7 holds, CORE-15 is a SHOULD clause)."""
    return _Reinserts(settings)


def resends_compacted_items(settings: Any) -> Any:
    """Compacts Responses items through the compact endpoint, then keeps the older calls, outputs and reasoning
    items it sent there before the compaction item standing for them (RESP-20; pydantic/pydantic-ai#7224)."""
    from broken.formats import CompactedItemsResent

    return CompactedItemsResent(settings)


NOOP_TOOL = {"type": "function", "function": {"name": "noop", "description": "Does nothing.", "parameters": {"type": "object", "properties": {}}}}


class _ToolCallAsSummary(_WindowRequest):
    """Summarizes the older part in a request offering a no-op tool, and keeps whatever text the
    answer holds, none when the model called the tool instead (strands-agents/harness-sdk#1947)."""

    def summary(self, older: list[dict]) -> str | None:
        s = self.settings
        request = [{"role": "system", "content": "Summarize this conversation."}, {"role": "user", "content": transcript(older)}]
        try:
            message = s.client.chat.completions.create(model=s.model, messages=request, tools=[NOOP_TOOL]).choices[0].message
        except (openai.OpenAIError, ValueError, IndexError):
            return None
        if not (message.content or "").strip() and not message.tool_calls:
            return None  # an empty answer is no summary; the defect: a tool call is taken for one
        return message.content or ""


def tool_call_as_summary(settings: Any) -> _ToolCallAsSummary:
    """Keeps an empty summary when the summarizer answers its request (which offers a no-op tool)
    with a call of that tool: the history is replaced by nothing (strands-agents/harness-sdk#1947)."""
    return _ToolCallAsSummary(settings)


# --- a declared trigger (SPEC FIRE-1, FIRE-2)


class _DeclaresTrigger(_Fires):
    """Seed 000 declaring its token trigger (``{"tokens": max_context_tokens}``, chars/4)."""

    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self.capabilities = {"trigger": {"tokens": settings.max_context_tokens}}


class _IgnoresTrigger(_DeclaresTrigger):
    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        if iteration < self.settings.threshold_iterations:
            return messages
        return self.inner.compact(messages, iteration=iteration)


def ignores_declared_trigger(settings: Any) -> _IgnoresTrigger:
    """Declares its token trigger but compacts only once its iteration count is reached: a history
    far past the declared size passes through whole at iteration 1 (the reduction wired to a path
    the agent never takes, microsoft/semantic-kernel#12303)."""
    return _IgnoresTrigger(settings)


class _EscapedCount(_DeclaresTrigger):
    def estimate_tokens(self, messages: list[dict]) -> int:
        return len(json.dumps(messages, ensure_ascii=True)) // 4

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        if self.estimate_tokens(messages) < self.settings.max_context_tokens:
            return messages
        return self.inner.compact(messages, iteration=self.settings.threshold_iterations)


def counts_escaped_json(settings: Any) -> _EscapedCount:
    """Declares a chars/4 token trigger but counts a quarter of the messages' JSON with
    ``ensure_ascii=True``: a CJK character counts as a 6-character escape, so it compacts non-ASCII
    histories far below the trigger (microsoft/agent-framework#7124)."""
    return _EscapedCount(settings)


class _CompactsWhenDisabled(_Fires):
    """Seed 000 declaring that it never compacts (``{"trigger": "never"}``) while it still fires on its budget."""

    def __init__(self, settings: Any) -> None:
        super().__init__(settings)
        self.capabilities = {"trigger": "never"}

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        return self.inner.compact(messages, iteration=iteration)


def compacts_when_disabled(settings: Any) -> _CompactsWhenDisabled:
    """Declares its configuration never compacts, as its framework documents it, yet compacts past
    its budget: the disabled trigger falls back to another threshold (LangChain 1.0's
    ``max_tokens_before_summary=None`` summarizing past ``messages_to_keep``, langchain-ai/langchain#33701)."""
    return _CompactsWhenDisabled(settings)


CONTROLS: dict[str, Control] = {
    "cut_through_round": Control("CORE-1", ("core",), r"tool result '\w+' has no matching call"),
    "drop_parallel_result": Control("CORE-2", ("core",), r"tool call '\w+' has 0 results"),
    "strip_system": Control("CORE-3", ("core",), r"system messages changed: \d+ in, \d+ out"),
    "reorder_rounds": Control("CORE-4", ("core",), r"moved out of order"),
    "mutate_input": Control("CORE-5", ("core",), r"the input list or one of its messages was changed"),
    "invalid_role": Control("CORE-6", ("core",), r"unknown role 'summary'"),
    "nondeterministic": Control("CORE-8", ("core",), r"two fresh compactors gave different outputs"),
    "compacts_in_flight": Control("CORE-9", ("core",), r"unanswered tool call was changed"),
    "and_not_or": Control("TRIG-2", ("trigger",), r"iteration \d+ >= 8, yet the history was not compacted"),
    "strict_boundaries": Control("TRIG-4", ("trigger",), r"equals .*, yet the history was not compacted"),
    "always_fires": Control("TRIG-1", ("trigger",), r"iteration \d+ < 8 and tokens < \d+, yet the output differs"),
    "ignores_tokens": Control(
        "TRIG-3", ("trigger",), r"estimated tokens >= max_context_tokens=\d+ at iteration [1-7], yet the history was not compacted"
    ),
    "summarizes_nothing": Control("TRIG-5", ("trigger",), r"only \d rounds \(K=2\) exist, yet the output differs"),
    "summary_as_system": Control("SUM-2", ("summary",), r"is 'system', not a user message starting with \[Context Summary\]"),
    "stacked_summaries": Control("SUM-4", ("summary",), r"\b[23] summaries"),
    "one_round_short": Control("SUM-1", ("summary",), r"tail messages, got \d+ messages"),
    "paraphrased_tail": Control("SUM-3", ("summary",), r"differs? from the input's"),
    "wrong_model": Control("SUM-5", ("summary",), r"requests named \['gpt-4.1'\], settings.model is"),
    "propagates_errors": Control("FAIL-1", ("failure",), r"the 429 fault escaped as \w+: RateLimitError"),
    "server_error_escapes": Control("FAIL-2", ("failure",), r"the 50[03] fault escaped as InternalServerError"),
    "accepts_empty_answer": Control("FAIL-3", ("failure",), r"after a (empty|null)_content fault the output differs"),
    "hang_escapes": Control("FAIL-4", ("failure",), r"the (hang|drop) fault escaped as"),
    "bare_event": Control("EVT-1", ("events",), r"estimated_tokens_saved=None is not an integer"),
    "hash_of_transcript": Control("EVT-2", ("events",), r"same prompt, different hashes"),
    "failure_without_reason": Control("EVT-3", ("events",), r"failure_reason=None"),
    "ids_from_model": Control("STRUCT-2", ("structured",), r"entity ids lost: \['"),
    "top_level_ids_only": Control("STRUCT-2", ("structured",), r"entity ids lost: \['"),
    "tasks_from_model": Control("STRUCT-3", ("structured",), r"task titles lost: \['"),
    "keeps_five": Control("STRUCT-4", ("structured",), r"the last 10 messages of the input are not the output's last 10"),
    "missing_section": Control("STRUCT-1", ("structured",), r"lacks \['Key Decisions'\]"),
    # a crash under a summarizer fault shows in CORE-11's fault sweep and is reported as CORE-10
    "crashes_without_claiming_failure": Control("CORE-10", ("core",), r"raised \w+", run=("CORE-10", "CORE-11")),
    "empty_summary_on_failure": Control("CORE-11", ("core",), r"is new although the summarizer failed", reason_id="empty-summary"),
    "placeholder_without_summarizer": Control("CORE-12", ("core",), r"stands for removed items, but the summarizer was never asked", reason_id="summary-without-summarizer-answer"),
    "tool_call_as_summary": Control("CORE-12", ("core",), r"no answer of it is in the output", run=("CORE-11", "CORE-12")),
    "summarizes_last_round_only": Control("CORE-12", ("core",), r"the summary replaces input item \d+ \(\w+\), which the summarizer request it answers did not hold", reason_id="summary-of-unsent-messages"),
    "window_request": Control("CORE-13", ("core",), r"the provider answers HTTP 400 .*messages with role 'tool' must be a response", reason_id="summarizer-request-orphan-tool-result"),
    "history_request_without_tools": Control("CORE-13", ("core",), r"HTTP 400 .The toolConfig field must be defined when using toolUse and toolResult content blocks. \(bedrock-converse: ", reason_id="bedrock-converse:tool-blocks-without-tool-config"),
    "drops_its_summary": Control("CORE-18", ("core",), r"was sent to the summarizer and removed, but no answer standing for it is in the output", reason_id="summary-lost"),
    "summarizes_text_only": Control("CORE-12", ("core",), r"whose image 'https://images\.example\.com/\d+-[0-9a-f]{8}\.png' the summarizer request it answers did not hold", reason_id="summary-of-unsent-media"),
    "dumps_media_as_text": Control("SUM-6", ("core",), r"holds the base64 data of an? (image|file) of the history as text", reason_id="media-payload-as-text"),
    "strips_images": Control("CORE-31", ("core",), r"keeps input item \d+ \(user\) without its (image|file) .* names none of it", reason_id="media-dropped-silently"),
    "drops_newest_round": Control("CORE-14", ("core",), r"of the newest round is missing from the compacted output", reason_id="newest-round-dropped"),
    "masks_newest_result": Control("CORE-14", ("core",), r"the newest round's tool result for call \w+ \(\d+ tokens\) is masked in place .* while the older result for call \w+ \(\d+ tokens\) is kept verbatim", reason_id="newest-result-masked"),
    "sends_whole_history": Control("WIN-1", ("core",), r"exceeds the summarizer's context window: the provider answers HTTP 400 .*Input tokens exceed the configured limit of 8000 tokens", reason_id="summarizer-request-over-window"),
    "sends_text_whole": Control("WIN-1", ("core",), r"exceeds the summarizer's context window: the provider answers HTTP 400 .*Input tokens exceed the configured limit of 8000 tokens", reason_id="summarizer-request-over-window"),
    "ignores_declared_trigger": Control("FIRE-1", ("core",), r"the declared trigger of \d+ tokens \(chars/4\)\), yet it was not compacted", reason_id="never-compacts"),
    "compacts_when_disabled": Control("FIRE-6", ("core",), r"declared never to compact .*yet a history of \d+ items and \d+ tokens \(chars/4\) was compacted", reason_id="compacts-when-disabled"),
    "counts_messages_only": Control("FIRE-7", ("core",), r"exceeded its declared window of 2000 tokens .*ended in BadRequestError: .*Input tokens exceed the configured limit of 2000 tokens", reason_id="request-over-window"),
    "counts_images_flat": Control("FIRE-7", ("core",), r"after a user turn pasting \d+ screenshot\(s\) of 1280x800 pixels, 1,105 tokens each .*exceeded its declared window of 2000 tokens .*Input tokens exceed the configured limit of 2000 tokens", reason_id="request-over-window-after-images"),
    "sends_all_when_trim_empty": Control("FIRE-7", ("core",), r"after a user turn pasting a build log of [\d,]+ tokens \(the window holds it alone\), .*exceeded its declared window of 2000 tokens .*Input tokens exceed the configured limit of 2000 tokens", reason_id="request-over-window-after-pasted-log"),
    "new_messages_at_an_unmoved_index": Control("STORE-22", ("core",), r"past its first \d+ message\(s\), as many as the run was given .*the run's start was not moved for what compaction removed", reason_id="new-messages-start-unmoved"),
    "new_messages_at_a_stale_index": Control("STORE-22", ("core",), r"message\(s\) the run added, still in the framework's \d+-message history after the run, are not among the \d+ it reports", reason_id="new-messages-lost"),
    "usage_leaves_out_summary": Control("COST-1", ("core",), r"reported 0 input and 0 output tokens for the run, but the provider billed \d+ input and \d+ output tokens .*left out: exactly the usage of the chat request\(s\) POST /v1/chat/completions", reason_id="usage-left-out"),
    "usage_counts_summary_twice": Control("COST-2", ("core",), r"counted twice or never billed: exactly the usage of the chat request\(s\) POST /v1/chat/completions", reason_id="usage-counted-twice"),
    "overflow_unrecognised": Control("FIRE-5", ("core",), r"ended in BadRequestError: .*Input tokens exceed the configured limit of 1000 tokens", reason_id="overflow-answer-not-recovered"),
    "keeps_newest_batch_whole": Control("FIRE-5", ("core",), r"the newest round's 3 parallel results together hold more than the agent model's window \(1000 tokens\); after the target's reduction its call overflowed again .*BadRequestError: .*Input tokens exceed the configured limit of 1000 tokens", reason_id="overflow-after-reduction"),
    "stringifies_media": Control("CORE-43", ("core",), r"holds [\d,]+ characters of the base64 data of an? (image|file) of the history as text", reason_id="media-data-as-text"),
    "trims_past_its_cap": Control("CORE-40", ("core",), r"a tool result shortened from \d+ to \d+ characters, over the 40 the framework states", reason_id="trimmed-result-over-cap"),
    "masks_instead_of_sliding": Control("CORE-71", ("core",), r"a history of \d+ items compacted to \d+, over the 6 the framework states it keeps", reason_id="kept-items-over-window"),
    "offloads_to_one_file": Control("STORE-30", ("core",), r"replaces the tool result for call .* and names '/offloaded/result', which hold another text", reason_id="offload-not-the-result"),
    "archives_without_media": Control("STORE-30", ("core",), r"names '/offloaded/history.md', which hold nothing of its (image|file) part", reason_id="offload-archive-incomplete"),
    "appends_by_exact_read_back": Control("STORE-32", ("core",), r"the session's first compaction archived what it replaced; this one removed \d+ more message\(s\) and names no path under '/offloaded/'", reason_id="archive-not-continued"),
    "keeps_fewer_than_declared": Control("CORE-65", ("core",), r"the output ends with \d+ of the input's newest messages as they were, fewer than the \d+ its declared retention of 8 messages keeps", reason_id="kept-fewer-than-declared"),
    "archives_both_agents_in_one_file": Control("STORE-33", ("core",), r"the agent's summary names '/offloaded/thread.md', which holds the text of the other agent's message \d+", reason_id="archive-holds-another-agent"),
    "keeps_results_it_cannot_offload": Control("STORE-31", ("core",), r"a result of about \d+ tokens is kept whole in the output, over the 200 tokens", reason_id="large-result-not-offloaded"),
}
SHOULD_CONTROLS: dict[str, Control] = {
    "restates_kept_calls": Control("CORE-50", ("core",), r"written by the compaction, restates call 'call_\w+', which output item \d+ \(assistant\) also sends as it is", reason_id="call-restated-and-sent"),
    "restates_kept_messages": Control("CORE-50", ("core",), r"written by the compaction, restates the whole text of output item \d+ \((user|assistant)\)", reason_id="message-restated-and-sent"),
    "transcript_records_reread_by_line": Control("CORE-61", ("core",), r"holds a message record of role '\{\"role\"', a role no message has", reason_id="transcript-record-role-made-up"),
    "transcript_first_lines": Control("CORE-60", ("core",), r"written by the compaction with no summarizer call, carries the start of input item \d+", reason_id="transcript-cuts-message"),
    "pads_summary": Control("CORE-7", ("core",), r"the estimate grew from \d+ to \d+ tokens"),
    "reinserts_excluded": Control("CORE-15", ("core",), r"removed \d+ tokens \(earlier summaries aside\) but reclaimed -?\d+", reason_id="little-reclaimed"),
    "drops_middle_tool_round": Control("CORE-30", ("core",), r"the tool round at input item \d+ .* was removed while the older one at input item \d+ .* was kept", reason_id="newer-tool-round-removed"),
    "counts_escaped_json": Control("FIRE-2", ("core",), r"of the declared trigger of \d+ tokens \(chars/4\); text: [a-z-]+\), yet it was compacted", reason_id="compacts-below-trigger"),
    "logs_failure_at_info": Control("FAIL-5", ("failure",), r"no WARNING naming the error type; warnings seen: \[\]"),
    "resends_compacted_items": Control("RESP-20", ("core",), r"is sent before item \d+ \(compaction [^)]*\), the compaction item added", reason_id="compacted-items-resent"),
    "miscounts_skipped": Control("CORE-21", ("core",), r"says 'Skipped \d+ messages', but the compaction removed (at least )?\d+", reason_id="placeholder-count-wrong"),
}
