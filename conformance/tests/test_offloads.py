"""What a compaction offloads to its framework's store, read back (SPEC STORE-30, STORE-31).

Applicable to a target declaring ``capabilities["offloads"]`` (the path prefixes its framework writes
under; its ``read_offload(path)``, `conformance.offloads`) and ``capabilities["offload_result_tokens"]``
(the size past which it states it offloads a tool result). A part taken out of the context is not
lost when the agent can read it back at the path the message left in its place names (seed 004:
soft compaction "changes what the model sees but durable branch history remains intact"; seed 001:
the entity ids a compaction keeps are what "prevents re-creation"); one the store no longer holds,
or holds another part in place of, is.

The tool-call ids are drawn as providers send them through a chat-completions endpoint (`ID_STYLES`),
since an offload names its file after the call it answers; one call a round, so that ids a provider
left empty still tell each round's call and result apart for the structural clauses.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import uuid
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings

from compaction_suite.conformance import offloads
from compaction_suite.conformance.assertions import require
from compaction_suite.conformance.histories import histories as drawn
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.suite import probe_history

from .common import as_declared, changed, clause, run, summarizing
from .test_core import INLINE_MEDIA, _held, _with_early_media

T = Settings().threshold_iterations
FEW = hypothesis_settings(max_examples=min(10, hypothesis_settings().max_examples), deadline=None)

SIGNATURE_BYTES = 1_100
"""The thought signature LiteLLM carries in a Gemini tool call's id, in bytes before base64 (about
1,500 characters: deepagents#5559, "the base64 payload is ~1-1.5KB")."""


def _litellm_gemini(call_id: str) -> str:
    """``call_<uuid>__thought__<base64 signature>``: how LiteLLM returns a Gemini tool call's id with its
    thought signature in it, so that chat-completions clients send it back (BerriAI/litellm#16895;
    deepagents#5559 and #5560 meet it in every tool call of an agent on Gemini through LiteLLM). The
    uuid and signature are derived from the drawn id, so a history keeps its calls apart."""
    seed = hashlib.sha256(call_id.encode()).digest()
    signature = base64.b64encode((seed * (SIGNATURE_BYTES // len(seed) + 1))[:SIGNATURE_BYTES]).decode()
    return f"call_{uuid.UUID(bytes=seed[:16])}__thought__{signature}"


ID_STYLES: dict[str, Any] = {
    "openai": lambda call_id: call_id,
    "litellm-gemini": _litellm_gemini,
    "gemini-openai-compatible": lambda call_id: "",
}
"""Tool-call ids as a provider sends them through a chat-completions endpoint: OpenAI's own (as drawn);
LiteLLM's for Gemini, the thought signature in the id; Gemini's OpenAI-compatible endpoint, which
returned tool calls with an empty id ("some other endpoints, such as Gemini's 'OpenAI compatible'
endpoint" give an empty ``ChatToolCall.Id``, openai/openai-dotnet#428; "Some providers can return
``id: ''`` for tool calls, as reported for Gemini 2.5 Pro", vercel/ai#7834 and #19091), which
LangChain passes on as a ``ToolMessage`` with an empty ``tool_call_id`` (langchain-ai/langchain#29921)."""


def with_ids(history: list[dict], style: str) -> list[dict]:
    """``history`` with every tool call's id, and the id each result answers, as `ID_STYLES` ``style`` sends it."""
    rename = ID_STYLES[style]
    out = copy.deepcopy(history)
    for message in out:
        for call in message.get("tool_calls") or []:
            call["id"] = rename(call["id"])
        if message.get("role") == "tool":
            message["tool_call_id"] = rename(message["tool_call_id"])
    return out


def over_the_limit(history: list[dict], tokens: int | None) -> list[dict]:
    """``history`` with every tool result's text repeated past twice the declared offload size, so that
    each is one the framework offloads, by its own words; as drawn when no size is declared (a summary's
    archive is judged on what it replaced, whatever the sizes)."""
    if not tokens:
        return history
    wanted = 2 * offloads.CHARS_PER_TOKEN * tokens + 400
    out = copy.deepcopy(history)
    for message in out:
        text = message.get("content") if message.get("role") == "tool" else None
        if isinstance(text, str) and text and len(text) < wanted:
            message["content"] = (text + "\n") * (wanted // (len(text) + 1) + 1)
    return out


def plain(**options: Any) -> Any:
    """`conformance.histories.histories` as the target declares it is called, without the huge call
    arguments of `agent_shaped` (their size is not the test's; one kept whole is past any window the
    target states, and a framework documents raising there: CORE-10)."""
    return drawn(**options).map(as_declared)


def read_back(suite, history):
    """STORE-30 on a forced compaction of ``history`` (iteration T, M=1), when it changed anything."""
    subject, out = run(suite, history, T, max_context_tokens=1)
    if changed(history, out):
        require(offloads.unreadable(history, out, subject.compactor.read_offload, suite.capabilities.offloads), history, out)


STYLES = pytest.mark.parametrize("style", sorted(ID_STYLES))


@clause("STORE-30")
@STYLES
@FEW
@given(history=plain(min_rounds=3, max_rounds=6, max_parallel_calls=1, multimodal=False, in_flight=False, long_outputs=False, shapes=()))
def test_offloaded_results_read_back(suite, style, history):
    """Each tool result replaced in place by a message naming a path under a declared prefix reads back
    whole at that path, whatever ids the provider gave the calls (deepagents#6302: results answering
    calls without an id all went to one file, each overwriting the one before)."""
    read_back(suite, over_the_limit(with_ids(history, style), suite.capabilities.offload_result_tokens))


@clause("STORE-30")
@FEW
@given(history=plain(min_rounds=8, max_rounds=12, multimodal=False, in_flight=False, long_outputs=False, shapes=()), parts=INLINE_MEDIA.map(lambda p: [p]))
def test_archive_holds_what_the_summary_replaced(suite, history, parts):
    """A message standing for removed ones that names a path under a declared prefix (an archive of the
    history it replaced) leads back to every part of every message it replaced: the text, a call's
    arguments, an image or file (its data, or a path holding it): the media round comes first, older
    than any tail a compactor keeps, in a history grown to where a summarizing target summarizes (deepagents#6503:
    the compact_conversation tool archives the history without the inline images its automatic path
    writes out first)."""
    subject_history = _with_early_media(history, _held(parts))
    read_back(suite, summarizing(suite, subject_history) if suite.calls_summarizer else subject_history)


@clause("STORE-31")
@STYLES
@FEW
@given(history=plain(min_rounds=3, max_rounds=6, max_parallel_calls=1, multimodal=False, in_flight=False, long_outputs=False, shapes=()))
def test_large_results_are_offloaded(suite, style, history):
    """No tool result over the declared offload size is left whole in the output, whatever ids the
    provider gave the calls (deepagents#5560: LiteLLM's Gemini ids made a file name over the OS limit,
    the write failed and the result stayed in the context uncut)."""
    tokens = suite.capabilities.offload_result_tokens
    history = over_the_limit(with_ids(history, style), tokens)
    _, out = run(suite, history, T, max_context_tokens=1)
    require(offloads.kept_over_limit(history, out, tokens), history, out)


LINE_ENDINGS = pytest.mark.parametrize("line_endings", ["lf", "crlf"])


def with_crlf(history: list[dict]) -> list[dict]:
    """``history`` with every line of every tool result's text ending in CRLF, as tools hand text over
    from an HTTP message ("each line ... ends with CRLF", RFC 9112 section 2.1), a CSV file (RFC 4180:
    "Each record is located on a separate line, delimited by a line break (CRLF)"), or a file or a
    command's output on Windows (deepagents#2247, #2861: every line there)."""
    out = copy.deepcopy(history)
    for message in out:
        text = message.get("content") if message.get("role") == "tool" else None
        if isinstance(text, str) and text:
            message["content"] = "".join(line + "\r\n" for line in text.splitlines())
    return out


def later_rounds(suite, rounds: int) -> list[dict]:
    """``rounds`` agent rounds after a compaction, ids of their own (``call_later_<n>``)."""
    return probe_history(suite.capabilities, rounds, prefix="later")[0 if suite.capabilities.system_outside else 1 :]


@clause("STORE-32")
@LINE_ENDINGS
@FEW
@given(history=plain(min_rounds=8, max_rounds=12, multimodal=False, in_flight=False, long_outputs=False, shapes=()))
def test_a_sessions_later_compaction_archives_too(suite, line_endings, history):
    """One compactor compacts a session twice: a history grown to where it summarizes, then its own
    output with as many rounds again after it. When the first summary named an archive of what it
    replaced, the second names one holding what it replaced, whatever the line endings of the tool
    results the first archive holds (deepagents#2247, #2861: the second append, an edit whose old text
    was the archive read back byte for byte, met the file read with its CRLFs turned into LFs, failed,
    and the summary named no archive)."""
    first = summarizing(suite, history) if suite.calls_summarizer else history
    first = with_crlf(first) if line_endings == "crlf" else first
    suite.reset_server()
    subject = suite.new(max_context_tokens=1)
    out = subject.compact(copy.deepcopy(first), T)
    if not offloads.archived(first, out, suite.capabilities.offloads):
        return  # the first compaction archived nothing: nothing to continue (STORE-30 judges what it wrote)
    later = later_rounds(suite, suite.trigger_rounds or 12)
    second = [*out, *later]
    again = subject.compact(copy.deepcopy(second), T)
    if changed(second, again):
        require(offloads.not_continued([*first, *later], second, again, subject.compactor.read_offload, suite.capabilities.offloads), second, again)
