"""The summarizer: one chat-completions call through the official ``openai`` client.

SPEC SUMZ-1 (the request), SUMZ-2 (failures become `SummarizerError`, which the
compactor turns into a non-fatal failure event) and SUMZ-4 (the prompt hash).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import openai

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
    ) -> None:
        self.model = model
        self.client = client
        self.async_client = async_client
        self.prompt = prompt
        self.max_tokens = max_tokens

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

    def summarize(self, transcript: str) -> Summary:
        with self._failures():
            if self.client is None:
                raise SummarizerError("ConfigurationError", "no openai.OpenAI client was given")
            return _parse(self.client.chat.completions.create(**self.request(transcript)))

    async def asummarize(self, transcript: str) -> Summary:
        with self._failures():
            if self.async_client is None:
                raise SummarizerError("ConfigurationError", "no openai.AsyncOpenAI client was given")
            return _parse(await self.async_client.chat.completions.create(**self.request(transcript)))

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
