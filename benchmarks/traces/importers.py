"""Importers: published agent trajectories converted to compaction-suite traces.

* `import_tau_bench`: tau-bench historical trajectories, a JSON list of records
  each with a ``traj`` list of OpenAI chat messages; one trace per record.
* `import_swe_agent`: a SWE-agent ``.traj`` file, a JSON object whose
  ``history`` list holds chat messages with SWE-agent keys; one trace per file.

Both keep real traffic as it was recorded and change only what the
chat-completions API would reject: they keep only the OpenAI message keys and
give every tool result its own ``tool_call_id``. Tool-call ids stay as recorded,
also when a later round reuses one (the API pairs calls and results within a
round, SPEC HIST-6). They validate the result with
`compaction_suite.reference.rounds.split_rounds` and say in the header's ``notes`` what they
changed. FORMAT.md ("Importers") gives the rules; malformed input
raises `TraceImportError` naming the file and the record / message index.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from compaction_suite.inputs import InputError, read_json
from compaction_suite.reference.errors import HistoryError
from compaction_suite.reference.rounds import split_rounds

from .format import Header, Message, make_header

Trace = tuple[Header, list[Message]]

KEPT_KEYS = {
    "system": ("role", "content", "name"),
    "developer": ("role", "content", "name"),
    "user": ("role", "content", "name"),
    "assistant": ("role", "content", "name", "tool_calls"),
    "tool": ("role", "content", "tool_call_id"),
}
"""The OpenAI chat-completions keys kept per role; every other key is dropped."""


class TraceImportError(ValueError):
    """Input an importer cannot convert; the text names the file and where in it."""

    def __init__(self, path: str | Path, where: str, detail: str) -> None:
        self.path = str(path)
        self.where = where
        self.detail = detail
        super().__init__(f"{self.path}: {where}: {detail}" if where else f"{self.path}: {detail}")


class _Converter:
    """Converts one trajectory's raw messages; remembers what it changed, for the notes."""

    def __init__(self, path: Path, label: str) -> None:
        self.path, self.label = path, label
        self.dropped: Counter[str] = Counter()
        self.reused: list[str] = []
        self.expanded = 0
        self.seen_ids: set[str] = set()
        self.origin: list[int] = []

    def fail(self, index: int | None, detail: str) -> TraceImportError:
        where = self.label if index is None else f"{self.label}, message {index}"
        return TraceImportError(self.path, where, detail)

    def convert(self, raw_messages: Any) -> list[Message]:
        """Convert a list of raw messages, then validate the result as a history."""
        if not isinstance(raw_messages, list):
            raise self.fail(None, f"expected a list of messages, got {type(raw_messages).__name__}")
        messages: list[Message] = []
        for index, raw in enumerate(raw_messages):
            converted = self._message(raw, index)
            messages.extend(converted)
            self.origin.extend([index] * len(converted))
        self._validate(messages)
        return messages

    def _message(self, raw: Any, index: int) -> list[Message]:
        if not isinstance(raw, dict):
            raise self.fail(index, f"expected a message object, got {type(raw).__name__}")
        role = raw.get("role")
        if role not in KEPT_KEYS:
            raise self.fail(index, f"unknown role {role!r}")
        self._check_content(raw, role, index)
        kept = {key: raw[key] for key in KEPT_KEYS[role] if key in raw and raw[key] is not None}
        kept.setdefault("content", raw.get("content"))
        self.dropped.update(key for key, value in raw.items()
                            if key not in kept and key != "tool_call_ids" and value is not None)
        if role == "assistant":
            return [self._assistant(kept, index)]
        if role == "tool":
            return self._tool_results(raw, kept, index)
        return [kept]

    def _check_content(self, raw: dict[str, Any], role: str, index: int) -> None:
        content = raw.get("content")
        if isinstance(content, (str, list)) or (content is None and role == "assistant"):
            return
        raise self.fail(index, f"{role} message content must be a string or a list of parts")

    def _assistant(self, message: Message, index: int) -> Message:
        """Normalise ``tool_calls``; note (never change) an id an earlier round used."""
        calls = message.pop("tool_calls", None)
        if calls in (None, []):
            return message
        if not isinstance(calls, list):
            raise self.fail(index, "'tool_calls' is not a list")
        message["tool_calls"] = [self._call(call, index) for call in calls]
        return message

    def _call(self, call: Any, index: int) -> dict[str, Any]:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(call.get("id"), str) or not call["id"]:
            raise self.fail(index, "a tool call needs a string 'id' and a 'function' object")
        if not isinstance(function.get("name"), str):
            raise self.fail(index, f"tool call {call['id']!r} has no function name")
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        if call["id"] in self.seen_ids:
            self.reused.append(call["id"])
        self.seen_ids.add(call["id"])
        return {"id": call["id"], "type": "function", "function": {"name": function["name"], "arguments": arguments}}

    def _tool_results(self, raw: dict[str, Any], kept: Message, index: int) -> list[Message]:
        """One tool message per answered id (SWE-agent lists them in ``tool_call_ids``)."""
        ids = raw.get("tool_call_ids", [raw.get("tool_call_id")] if "tool_call_id" in raw else None)
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
            raise self.fail(index, "tool message needs a string 'tool_call_id' or a non-empty 'tool_call_ids' list")
        self.expanded += len(ids) - 1
        base = {key: value for key, value in kept.items() if key != "tool_call_id"}
        return [{**base, "tool_call_id": i} for i in ids]

    def _validate(self, messages: list[Message]) -> None:
        try:
            split_rounds(messages)
        except HistoryError as error:
            index = None if error.index is None else self.origin[error.index]
            raise self.fail(index, str(error)) from error

    def notes(self) -> list[str]:
        """What the conversion changed, one sentence each."""
        notes = []
        if self.dropped:
            keys = ", ".join(f"{key} ({count})" for key, count in sorted(self.dropped.items()))
            notes.append(f"Dropped non-OpenAI message keys: {keys}.")
        if self.expanded:
            notes.append(f"Split tool_call_ids lists into {self.expanded} extra tool message(s), content repeated.")
        if self.reused:
            ids = ", ".join(dict.fromkeys(self.reused))
            notes.append(f"Kept as recorded: {len(self.reused)} tool call(s) reuse an id of an earlier round ({ids}).")
        return notes


def _load_json(path: Path) -> Any:
    """The file's JSON, or `TraceImportError` saying what it holds instead (`compaction_suite.inputs.read_json`)."""
    try:
        return read_json(path)
    except InputError as error:
        raise TraceImportError(path, "", str(error).removeprefix(f"{path}: ")) from None


def import_tau_bench(path: str | Path, *, created: str | None = None) -> list[Trace]:
    """Convert a tau-bench results file (a list of records with ``traj``) to traces.

    One trace per record; records whose ``traj`` is empty (tau-bench writes
    those for runs that crashed) are skipped.
    """
    path = Path(path)
    records = _load_json(path)
    if not isinstance(records, list):
        raise TraceImportError(path, "", f"expected a JSON list of records, got {type(records).__name__}")
    traces = []
    for number, record in enumerate(records):
        if not isinstance(record, dict) or "traj" not in record:
            raise TraceImportError(path, f"record {number}", "expected an object with a 'traj' list")
        if record["traj"] == []:
            continue
        converter = _Converter(path, f"record {number}")
        messages = converter.convert(record["traj"])
        traces.append((_tau_header(path, number, record, converter, created), messages))
    return traces


def _tau_header(path: Path, number: int, record: dict[str, Any], converter: _Converter, created: str | None) -> Header:
    facts = {key: record[key] for key in ("task_id", "trial", "reward") if key in record}
    described = ", ".join(f"{key}={value}" for key, value in facts.items())
    notes = [f"tau-bench record {number}" + (f" ({described})." if described else "."), *converter.notes()]
    return make_header(
        f"tau-bench:{path.stem}:record-{number}",
        f"imported from tau-bench trajectory file {path.name} (record {number}) by compaction_suite.benchmarks.traces.importers",
        created=created,
        notes=" ".join(notes),
    )


def import_swe_agent(path: str | Path, *, created: str | None = None) -> Trace:
    """Convert a SWE-agent ``.traj`` file (its ``history``) to one trace.

    ``thought``, ``action``, ``agent``, ``message_type`` and the like are
    dropped (``thought`` and ``action`` repeat the content or the tool call);
    a ``tool_call_ids`` list becomes one tool message per id.
    """
    path = Path(path)
    data = _load_json(path)
    if not isinstance(data, dict) or "history" not in data:
        raise TraceImportError(path, "", "expected a JSON object with a 'history' list")
    converter = _Converter(path, "history")
    messages = converter.convert(data["history"])
    info = data.get("info")
    if not isinstance(info, dict):
        info = {}
    style = "function-calling" if any("tool_calls" in m for m in messages) else "text actions"
    notes = [f"SWE-agent history of {len(data['history'])} messages ({style})."]
    if "exit_status" in info:
        notes.append(f"exit_status={info['exit_status']}.")
    header = make_header(
        f"swe-agent:{path.stem}",
        f"imported from SWE-agent trajectory {path.name} by compaction_suite.benchmarks.traces.importers",
        created=created,
        notes=" ".join(notes + converter.notes()),
    )
    return header, messages


IMPORTERS = ("tau-bench", "swe-agent", "claude-code")
"""The formats `import_file` reads."""


def import_file(kind: str, file: Path) -> list[Trace]:
    """The traces in ``file``, read by the importer ``kind`` (one of `IMPORTERS`)."""
    if kind == "tau-bench":
        return import_tau_bench(file)
    if kind == "swe-agent":
        return [import_swe_agent(file)]
    from .claude_code import import_claude_code

    return [import_claude_code(file)]
