"""Negative controls of SPEC STORE-30 to STORE-32: compactors that offload what they take out of the
context to a store of their own (a dict of paths), each wrong in one way a framework was."""

from __future__ import annotations

from typing import Any, ClassVar

from compaction_suite.reference.summary import summary_message, transcript


class _Offloads:
    """Offloads each tool result over `LIMIT` tokens (chars/4) to ``PREFIX`` + a name, leaving a notice
    naming the path in its place; ``read_offload`` reads the store."""

    PREFIX = "/offloaded/"
    LIMIT = 200
    capabilities: ClassVar[dict[str, Any]] = {"called": "between_rounds", "offloads": [PREFIX], "offload_result_tokens": LIMIT}

    def __init__(self, settings: Any) -> None:
        self.settings = settings
        self.profiles = {"core"}
        self.store: dict[str, bytes] = {}

    def read_offload(self, path: str) -> bytes | None:
        return self.store.get(path)

    def name(self, message: dict) -> str | None:
        """The file a result goes to, or None when it cannot be written."""
        return message.get("tool_call_id") or "unknown"

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        return [self._offloaded(m) if m.get("role") == "tool" else m for m in messages]

    def _offloaded(self, message: dict) -> dict:
        text = message.get("content")
        if not isinstance(text, str) or len(text) <= 4 * self.LIMIT:
            return message
        name = self.name(message)
        if name is None:
            return message
        path = self.PREFIX + name
        self.store[path] = text.encode()
        return dict(message, content=f"Result too large, saved to {path}\n{text[:80]}")


class OffloadsToOneFile(_Offloads):
    """Writes every large result to one file, each overwriting the one before, as deepagents did for
    results answering calls without an id (deepagents#6302: ``/large_tool_results/unknown``)."""

    def name(self, message: dict) -> str | None:
        return "result"


class KeepsResultsItCannotOffload(_Offloads):
    """Names each file after the call id and keeps a result whole when the name is over 255 bytes, the
    usual file-name limit (deepagents#5560: LiteLLM's Gemini ids)."""

    def name(self, message: dict) -> str | None:
        name = super().name(message)
        return name if name is not None and len(name.encode()) <= 255 else None


class ArchivesWithoutMedia(_Offloads):
    """Replaces all but the last ``keep_recent_rounds`` messages' worth of history by a message naming an
    archive that holds their text only, the images left out (deepagents#6503: the compact_conversation
    tool's archive)."""

    capabilities: ClassVar[dict[str, Any]] = {"called": "between_rounds", "offloads": [_Offloads.PREFIX]}
    KEEP = 4

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        system, rest, cut = self.split(messages)
        if cut <= 0:
            return messages
        older = [_text_only(m) for m in rest[:cut]]
        path = self.PREFIX + "history.md"
        self.store[path] = transcript(older).encode()
        return [*system, summary_message(f"The conversation so far is archived at {path}."), *rest[cut:]]

    def split(self, messages: list[dict]) -> tuple[list[dict], list[dict], int]:
        """The system messages, the rest, and where the rest is cut: before the last `KEEP`, moved back
        off a tool result (0 or less: nothing to replace)."""
        system = [m for m in messages if m.get("role") in ("system", "developer")]
        rest = [m for m in messages if m.get("role") not in ("system", "developer")]
        cut = len(rest) - self.KEEP
        while 0 < cut < len(rest) and rest[cut].get("role") == "tool":
            cut -= 1
        return system, rest, cut


class AppendsByExactReadBack(ArchivesWithoutMedia):
    """Archives what each compaction replaces in one file, appending as deepagents did before 0.5.0: an
    edit whose old text is the file's bytes, matched against the file read with universal newlines, so a
    CRLF the first archive holds fails every later append, and the summary then names no archive
    (deepagents#2247, #2861)."""

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        system, rest, cut = self.split(messages)
        if cut <= 0:
            return messages
        path = self.PREFIX + "history.md"
        section = transcript(rest[:cut])
        if self._appended(path, section):
            return [*system, summary_message(f"The conversation so far is archived at {path}."), *rest[cut:]]
        return [*system, summary_message("The conversation so far was summarized."), *rest[cut:]]

    def _appended(self, path: str, section: str) -> bool:
        """Whether the append succeeded: a new file is written; an existing one is edited only when its
        bytes are found in it as read with universal newlines."""
        held = self.store.get(path)
        if held is None:
            self.store[path] = section.encode()
            return True
        raw = held.decode()
        as_read = raw.replace("\r\n", "\n").replace("\r", "\n")
        if raw not in as_read:
            return False
        self.store[path] = (raw + section).encode()
        return True


def _text_only(message: dict) -> dict:
    content = message.get("content")
    if isinstance(content, list):
        return dict(message, content=" ".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"))
    return message


class KeepsFewerThanDeclared:
    """Declares a retention of 8 messages and summarizes all but the newest 3, as deepagents' own
    middleware did ahead of a user's (deepagents#1485: its share, not the user's ``keep``)."""

    DECLARED, KEPT = 8, 3
    capabilities: ClassVar[dict[str, Any]] = {"called": "between_rounds", "keeps": {"messages": DECLARED}}

    def __init__(self, settings: Any) -> None:
        from compaction_suite.reference.conformance_factory import seed_000

        self.inner = seed_000(settings)
        self.profiles = {"core"}

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        """Seed 000's compaction, its kept tail cut to the newest `KEPT` messages (a round's start)."""
        out = self.inner.compact(messages, iteration=iteration)
        if out == messages:
            return out
        written = [m for m in out if m not in messages]
        rest = [m for m in messages if m.get("role") not in ("system", "developer")]
        cut = len(rest) - self.KEPT
        while 0 < cut < len(rest) and rest[cut].get("role") == "tool":
            cut -= 1
        system = [m for m in messages if m.get("role") in ("system", "developer")]
        return [*system, *written, *rest[max(cut, 0) :]]


class ArchivesBothAgentsInOneFile(ArchivesWithoutMedia):
    """Delegates to a sub-agent in the same run and archives what either agent's compaction replaces in
    one file named after the run, so each summary names an archive holding the other agent's history
    (STORE-33; deepagents PR #5470: the offload file named after the thread_id a sub-agent inherits)."""

    capabilities: ClassVar[dict[str, Any]] = {"called": "between_rounds", "offloads": [_Offloads.PREFIX], "subagents": "delegates"}

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        system, rest, cut = self.split(messages)
        if cut <= 0:
            return messages
        path = self.PREFIX + "thread.md"
        self.store[path] = self.store.get(path, b"") + transcript(rest[:cut]).encode()
        return [*system, summary_message(f"The conversation so far is archived at {path}."), *rest[cut:]]

    def delegated(self, history: list[dict], subagent_history: list[dict]) -> dict[str, list[dict]]:
        agent = self.compact(history, iteration=1)
        return {"agent": agent, "subagent": self.compact(subagent_history, iteration=1)}
