"""The audit trail: one event per compactor call (SPEC EVENT-1, EVENT-2, EVT-1..3)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class CompactionEvent:
    """What happened at one compaction point, and why (seed 000 "Audit trail")."""

    iteration: int
    messages_before: int
    estimated_tokens_before: int
    compacted: bool = False
    trigger: str | None = None
    messages_after: int | None = None
    estimated_tokens_after: int | None = None
    summarizer_prompt_tokens: int | None = None
    summarizer_completion_tokens: int | None = None
    prompt_hash: str | None = None
    failure_reason: str | None = None
    skipped_reason: str | None = None
    still_too_large: bool | None = None
    """The trigger still fires on the compacted history (seed 003: compaction could not free enough)."""
    verified_prompt_tokens: int | None = None
    """The next response's ``usage.prompt_tokens``, once the caller reports it (EVENT-2)."""

    @property
    def estimated_tokens_saved(self) -> int | None:
        if self.estimated_tokens_after is None:
            return None
        return self.estimated_tokens_before - self.estimated_tokens_after

    @property
    def summarizer_tokens(self) -> int:
        return (self.summarizer_prompt_tokens or 0) + (self.summarizer_completion_tokens or 0)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"estimated_tokens_saved": self.estimated_tokens_saved}

    def log_line(self) -> str:
        """Seed 000's line for a successful compaction."""
        verified = "?" if self.verified_prompt_tokens is None else self.verified_prompt_tokens
        return (
            f"Compacted {self.messages_before}\u2192{self.messages_after} messages; "
            f"verified {verified} input tokens (saved est. {self.estimated_tokens_saved}; "
            f"summarizer cost {self.summarizer_tokens} tokens; prompt {self.prompt_hash})"
        )
