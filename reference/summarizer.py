"""The summarizer: chat-completions calls through the official ``openai`` client.

SPEC SUMZ-1 (the request), SUMZ-2 (failures become `SummarizerError`, which the
compactor turns into a non-fatal failure event), SUMZ-4 (the prompt hash) and SUMZ-5 (a
transcript larger than the model's context window is summarized in pieces, then the pieces'
summaries are summarized).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import openai

from compaction_suite.text import count_tokens, prompt_tokens

DEFAULT_PROMPT = """\
You compact the history of a long-running tool-using agent so it can continue its task.
Summarize the conversation below for the agent itself. Keep: the user's goal and constraints,
decisions and corrections the user made, identifiers (ids, file paths, names) exactly as written,
results of tool calls that later steps depend on, and what remains to be done.
Drop raw tool output and pleasantries. Be concise: a short list of bullet points."""

STRUCTURED_PROMPT = """\
You compact the history of a long-running tool-using agent so it can continue its task.
Write exactly two sections in markdown and nothing else:
### Key Decisions
(bullets: what the user confirmed, corrected or constrained, and pivots taken)
### Context
(a brief narrative of what was discussed and concluded)
Entity ids and the task list are added by the system; you need not repeat them."""


class SummarizerError(Exception):
    """The summarizer failed; ``error_type`` names the underlying error (SUMZ-2)."""

    def __init__(self, error_type: str, reason: str, prompt_hash: str | None = None) -> None:
        self.error_type = error_type
        self.reason = reason
        self.prompt_hash = prompt_hash
        """The hash of the prompt that was sent, for the failure event (EVT-3)."""
        super().__init__(f"{error_type}: {reason}")


@dataclass(frozen=True)
class Summary:
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None


def prompt_hash(prompt: str) -> str:
    """First 8 hex characters of the SHA-256 of the resolved prompt (SUMZ-4, EVT-2)."""
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:8]


class Summarizer:
    """Calls ``model`` (an OpenAI model or an Azure deployment name) to summarize a transcript.

    ``client``/``async_client`` are ``openai.OpenAI``/``openai.AsyncOpenAI`` (or the
    Azure variants); give the one matching how the compactor is called.
    """

    def __init__(
        self,
        model: str,
        *,
        client: openai.OpenAI | None = None,
        async_client: openai.AsyncOpenAI | None = None,
        prompt: str = DEFAULT_PROMPT,
        max_tokens: int | None = None,
        window: int | None = None,
    ) -> None:
        self.model = model
        self.client = client
        self.async_client = async_client
        self.prompt = prompt
        self.max_tokens = max_tokens
        self.window = window
        """The model's context window in tokens (SUMZ-5); None: every transcript is sent whole."""

    @property
    def prompt_hash(self) -> str:
        return prompt_hash(self.prompt)

    def request(self, transcript: str) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` (SUMZ-1)."""
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": self.prompt},
                {"role": "user", "content": transcript},
            ],
            "temperature": 0,
        }
        if self.max_tokens is not None:
            request["max_tokens"] = self.max_tokens
        return request

    def pieces(self, transcript: str) -> list[str]:
        """``transcript`` cut at line ends into pieces whose request fits the window, room for the
        answer kept (SUMZ-5); the whole transcript when it fits or no window is set. A line too
        long for one piece is cut every ``room`` characters (a token holds at least one)."""
        if self.window is None or self._fits(transcript):
            return [transcript]
        room = self.window - (self.max_tokens or 0) - prompt_tokens(self.request("")["messages"])
        if room < MIN_PIECE_TOKENS:
            raise SummarizerError("WindowTooSmall", f"the window of {self.window} tokens leaves {room} for the transcript")
        pieces: list[str] = []
        lines: list[str] = []
        held = 0
        for line in (cut for whole in transcript.split("\n") for cut in _cuts(whole, room)):
            cost = count_tokens(line) + 1  # the line and its newline, counted apart
            if lines and held + cost > room:
                pieces.append("\n".join(lines))
                lines, held = [], 0
            lines.append(line)
            held += cost
        return [*pieces, "\n".join(lines)]

    def _fits(self, transcript: str) -> bool:
        assert self.window is not None
        return prompt_tokens(self.request(transcript)["messages"]) + (self.max_tokens or 0) <= self.window

    def summarize(self, transcript: str) -> Summary:
        """One answer for ``transcript``; in pieces when it is over the window, then the pieces'
        summaries summarized (SUMZ-5)."""
        with self._failures():
            if self.client is None:
                raise SummarizerError("ConfigurationError", "no openai.OpenAI client was given")
            answers = [_parse(self.client.chat.completions.create(**self.request(piece))) for piece in self.pieces(transcript)]
            return answers[0] if len(answers) == 1 else _total(answers, self.summarize(_folded(answers, transcript)))

    async def asummarize(self, transcript: str) -> Summary:
        with self._failures():
            if self.async_client is None:
                raise SummarizerError("ConfigurationError", "no openai.AsyncOpenAI client was given")
            answers = [_parse(await self.async_client.chat.completions.create(**self.request(piece))) for piece in self.pieces(transcript)]
            return answers[0] if len(answers) == 1 else _total(answers, await self.asummarize(_folded(answers, transcript)))

    @contextmanager
    def _failures(self) -> Iterator[None]:
        """Turn every way the call can fail into `SummarizerError` (SUMZ-2)."""
        try:
            yield
        except SummarizerError as error:
            error.prompt_hash = self.prompt_hash
            raise
        except (openai.OpenAIError, ValueError) as error:  # a body that is not JSON raises ValueError
            status = getattr(error, "status_code", None)
            reason = f"HTTP {status}: {error}" if status else str(error) or type(error).__name__
            raise SummarizerError(type(error).__name__, reason, self.prompt_hash) from error


MIN_PIECE_TOKENS = 200
"""The least room for the transcript a request may leave: a smaller window summarizes nothing."""


def _cuts(line: str, room: int) -> list[str]:
    return [line[at : at + room] for at in range(0, len(line), room)] or [""]


def _folded(answers: list[Summary], transcript: str) -> str:
    """The pieces' summaries, in order, as the transcript of the summary of summaries (SUMZ-5);
    a `SummarizerError` when they are no shorter than what they summarize (it would never end)."""
    folded = "\n\n".join(f"summary of part {n}:\n{answer.text}" for n, answer in enumerate(answers, 1))
    if len(folded) >= len(transcript):
        raise SummarizerError("WindowTooSmall", "the summaries of the transcript's pieces are no shorter than the transcript")
    return folded


def _total(answers: list[Summary], final: Summary) -> Summary:
    """``final``'s text with the usage of every call that led to it."""
    calls = [*answers, final]
    prompt = [a.prompt_tokens for a in calls]
    completion = [a.completion_tokens for a in calls]
    return Summary(
        final.text,
        None if None in prompt else sum(p for p in prompt if p is not None),
        None if None in completion else sum(c for c in completion if c is not None),
    )


def _parse(response: Any) -> Summary:
    """Read the summary and usage, rejecting what is not a usable answer (FAIL-3)."""
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list):
        raise SummarizerError("MalformedResponse", f"expected a chat completion, got {type(response).__name__}")
    if not choices:
        raise SummarizerError("MalformedResponse", "the response has no choices")
    text = getattr(choices[0].message, "content", None)
    if not isinstance(text, str) or not text.strip():
        raise SummarizerError("EmptySummary", "the response's content is empty")
    usage = getattr(response, "usage", None)
    return Summary(text.strip(), getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None))
