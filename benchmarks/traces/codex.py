"""OpenAI Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) as Responses items.

The mapping (this docstring is its documentation) follows the format's public descriptions (the
Codex CLI's open-source rollout recorder, described in community format notes): every line is
an envelope ``{"timestamp", "type", "payload"}``; ``response_item`` payloads are the Responses
API items the model was sent or produced (``message``, ``reasoning``, ``function_call``,
``function_call_output``, ``custom_tool_call``, ``local_shell_call``, ...). Older rollouts are
flat: a first line with the session's metadata, then the items themselves.

* The history is the ``response_item`` payloads in file order, as recorded (ids, encrypted
  reasoning, Codex's own ``developer``/``user`` context messages): already the Responses
  API's ``input`` items (wire format ``responses``), so nothing is converted.
* A ``compacted`` line is Codex's own compaction: when it carries ``replacement_history`` the
  history continues from that list (what Codex sent from then on); without it the history is
  left as recorded, and ``notes`` says so.
* ``session_meta``, ``turn_context`` and ``event_msg`` lines (metadata, per-turn settings, the
  UI's echo of the same conversation) are dropped with their counts. Codex sends its base
  instructions as the request's ``instructions``, not as items: the history holds none.
* Only what the Responses API rejects is changed, and ``notes`` says so: a ``function_call``
  left without its output before a later model turn (an interrupted call) gets a
  ``function_call_output`` ``[no result recorded]``; an output answering no earlier call is
  dropped. A call unanswered at the very end stays in flight.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from .format import Header, make_header
from .jsonlines import json_objects

NO_RESULT = "[no result recorded]"
ENVELOPES = ("session_meta", "turn_context", "response_item", "event_msg", "compacted")
CALLS = {"function_call": "function_call_output", "custom_tool_call": "custom_tool_call_output", "local_shell_call": "function_call_output"}
OUTPUTS = ("function_call_output", "custom_tool_call_output")
Item = dict[str, Any]


class CodexImportError(ValueError):
    """A rollout the importer cannot read; the text names the file and the line."""


def read_rollout(path: str | Path) -> list[tuple[int, str, dict[str, Any]]]:
    """Every line of a rollout as ``(line number, envelope type, payload)``; a flat (older)
    rollout's first line is ``session_meta`` and its items ``response_item``."""
    lines: list[tuple[int, str, dict[str, Any]]] = []
    for number, line in json_objects(Path(path), CodexImportError):
        if line.get("type") in ENVELOPES and isinstance(line.get("payload"), dict):
            lines.append((number, line["type"], line["payload"]))
        elif not lines and "type" not in line:
            lines.append((number, "session_meta", line))  # flat rollout: the metadata line
        else:
            lines.append((number, "response_item", line))
    return lines


def import_codex(path: str | Path, *, created: str | None = None) -> tuple[Header, list[Item]]:
    """One Codex rollout as ``(header, items)``: the Responses items of the session (module docstring)."""
    path = Path(path)
    lines = read_rollout(path)
    history = _History()
    for number, kind, payload in lines:
        if kind == "response_item":
            history.item(payload, number)
        elif kind == "compacted":
            history.compacted(payload)
    items = history.finish()
    skipped = Counter(kind for _, kind, _ in lines if kind not in ("response_item", "compacted"))
    notes = [f"Codex rollout {path.stem}: {len(items)} items from {len(lines)} lines."]
    if skipped:
        notes.append("Dropped rollout lines: " + ", ".join(f"{k} ({v})" for k, v in sorted(skipped.items())) + ".")
    notes += history.notes()
    meta = next((payload for _, kind, payload in lines if kind == "session_meta"), {})
    session = str(meta.get("id") or path.stem)
    header = make_header(f"codex:{session}", f"imported from Codex CLI rollout {path.name} by benchmarks.traces.codex", created=created, notes=" ".join(notes), wire_format="responses")
    return header, items


class _History:
    """The items line by line; counts what it dropped, added or replaced."""

    def __init__(self) -> None:
        self.items: list[Item] = []
        self.pending: dict[str, str] = {}
        """call_id -> the output type that answers it, for calls not yet answered."""
        self.counts: Counter[str] = Counter()

    def item(self, item: dict[str, Any], number: int) -> None:
        kind = item.get("type", "message" if "role" in item else None)
        if kind is None:
            raise CodexImportError(f"line {number}: a response_item without a type")
        if kind in OUTPUTS:
            call_id = item.get("call_id")
            if call_id not in self.pending:
                self.counts["dropped: output answering no earlier call"] += 1
                return
            del self.pending[call_id]
        elif kind in CALLS:
            if item.get("call_id") is not None:
                self.pending[str(item["call_id"])] = CALLS[kind]
        elif kind in ("message", "reasoning"):  # a later turn: earlier calls must be answered by now
            self._answer_pending()
        self.items.append(item)

    def compacted(self, payload: dict[str, Any]) -> None:
        replacement = payload.get("replacement_history")
        if isinstance(replacement, list):
            self.counts["replaced: history by a compacted line's replacement_history"] += 1
            self.items, self.pending = [], {}
            for item in replacement:
                if isinstance(item, dict):
                    self.item(item, 0)
        else:
            self.counts["kept: history at a compacted line without replacement_history"] += 1

    def _answer_pending(self) -> None:
        """Calls left unanswered before the next turn: the API rejects that, so say so."""
        for call_id, output in self.pending.items():
            self.items.append({"type": output, "call_id": call_id, "output": NO_RESULT})
            self.counts["added: output for an unanswered call"] += 1
        self.pending = {}

    def finish(self) -> list[Item]:
        """The items; a call unanswered at the very end stays in flight."""
        return self.items

    def notes(self) -> list[str]:
        return [f"{what[0].upper()}{what[1:]} ({n})." for what, n in sorted(self.counts.items())]
