"""CORE-14's Decision on a tool result of the newest round masked in place (SPEC CORE-14): in every
wire format, each tool result as (its call id, its text), and the finding where a compaction masked
a newest-round result while it kept an older result at least as large verbatim.

Masking frees what the masked result held; a compactor that frees the newest round's result (the
one the model has not read yet) while an older one as large stays whole has put older work before
the current task's (strands-agents/harness-sdk#702: routine window management answering every
call over the window with 'The tool result was too large!' on the newest result). Where the
newest result is the largest (a round over the budget, deepagentsjs#228), masking it first is no
finding. No Hypothesis here: judging imports none.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .violation import Violation

if TYPE_CHECKING:
    from .formats import WireFormat

Result = tuple[Any, str]
"""A tool result: (the call id it answers, the text it holds)."""


def text(content: Any) -> str:
    """The text a tool result holds: a string, or the ``text`` of its parts or blocks in order."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))


def results(fmt: WireFormat, items: Sequence[Any]) -> list[Result]:
    """Each tool result among ``items`` (the format's items: chat messages, Anthropic messages,
    Responses items) as (call id, text): a chat ``tool`` message, an Anthropic ``tool_result`` block,
    a Responses call output item."""
    from .formats import ANTHROPIC, RESPONSES, anthropic, responses

    found: list[Result] = []
    for item in items:
        if fmt.name == ANTHROPIC:
            found += [(b.get("tool_use_id"), text(b.get("content"))) for b in anthropic.blocks(item) if b.get("type") == "tool_result"]
        elif fmt.name == RESPONSES:
            if responses.kind(item) in responses.ANSWERS:
                found.append((item.get("call_id"), text(item.get("output"))))
        elif isinstance(item, dict) and item.get("role") == "tool":
            found.append((item.get("tool_call_id"), text(item.get("content"))))
    return found


def _once(found: Sequence[Result]) -> dict[Any, str]:
    """The results whose call id occurs once (a reused id cannot tell which result is which)."""
    count = Counter(call for call, _ in found)
    return {call: said for call, said in found if count[call] == 1}


def masked_newest(fmt: WireFormat, history: Any, out: Any, newest: Sequence[Any]) -> Violation | None:
    """CORE-14 Decision: a tool result of the newest round (``newest``, its items) whose text the output
    replaced under the same call id, while the output keeps an older result verbatim whose text is at
    least as long (chars/4). Results holding no text (media alone) are CORE-31's."""
    mine = {id(item) for item in newest}
    before = _once(results(fmt, fmt.items(history)))
    after = _once(results(fmt, fmt.items(out)))
    current = dict(results(fmt, [item for item in fmt.items(history) if id(item) in mine]))
    kept = [(call, len(said) // 4) for call, said in before.items() if call not in current and after.get(call) == said]
    for call, said in current.items():
        if not said or call not in before or call not in after or after[call] == said:
            continue
        size = len(said) // 4
        larger = next(((older, n) for older, n in kept if n >= size), None)
        if larger is not None:
            now = " ".join(after[call].split())[:60]
            return Violation(
                "newest-result-masked",
                f"the newest round's tool result for call {call} ({size} tokens) is masked in place (now {now!r}) while the older result for call {larger[0]} ({larger[1]} tokens) is kept verbatim",
            )
    return None
