"""An independent compactor written from SPEC Part A alone, with the defect of
langchain-ai/langchain#39261: it summarizes only the latest messages of the part it removes (a
trim window of 6 messages), and when that window holds no user message it writes a fixed
placeholder summary instead of asking the summarizer at all.

Chat-completions; seed 000's trigger; keeps the system messages and the last K rounds. The
placeholder stands for nothing a summarizer wrote (SPEC CORE-12), and even a real summary stands
for messages its request never held. A fixture of tests/test_independent.py: a defective
compactor the suite must reject, with CORE-12.
"""

from __future__ import annotations

from typing import Any

SYSTEM = ("system", "developer")
WINDOW = 6
PLACEHOLDER = "[Context Summary]\nPrevious conversation was too long to summarize."


def _rounds(messages: list[dict]) -> list[list[dict]]:
    grouped: list[list[dict]] = []
    for message in messages:
        if message["role"] == "tool" and grouped:
            grouped[-1].append(message)
        else:
            grouped.append([message])
    return grouped


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


class TrimmedWindowSummary:
    profiles = frozenset({"core"})

    def __init__(self, settings: Any) -> None:
        self.settings = settings

    def estimate_tokens(self, messages: list[dict]) -> int:
        return sum(len(_text(m)) for m in messages) // 4

    def compact(self, messages: list[dict], *, iteration: int) -> list[dict]:
        s = self.settings
        rounds = _rounds(messages)
        last = rounds[-1] if rounds else []
        if last and {c["id"] for c in last[0].get("tool_calls") or []} - {m.get("tool_call_id") for m in last[1:]}:
            return messages
        if iteration < s.threshold_iterations and self.estimate_tokens(messages) < s.max_context_tokens:
            return messages
        system = [m for m in messages if m["role"] in SYSTEM]
        others = [r for r in rounds if r[0]["role"] not in SYSTEM]
        if len(others) <= s.keep_recent_rounds:
            return messages
        older = [m for r in others[: -s.keep_recent_rounds] for m in r]
        tail = [m for r in others[-s.keep_recent_rounds :] for m in r]
        window = older[-WINDOW:]
        if not any(m["role"] == "user" for m in window):
            return [*system, {"role": "user", "content": PLACEHOLDER}, *tail]
        try:
            answer = s.client.chat.completions.create(
                model=s.model, messages=[{"role": "user", "content": "Summarize:\n" + "\n".join(f"{m['role']}: {_text(m)}" for m in window)}]
            )
            text = (answer.choices[0].message.content or "").strip()
        except Exception:  # noqa: BLE001 - any summarizer failure: keep the history
            return messages
        return [*system, {"role": "user", "content": f"[Context Summary]\n{text}"}, *tail] if text else messages


def factory(settings: Any) -> TrimmedWindowSummary:
    return TrimmedWindowSummary(settings)
