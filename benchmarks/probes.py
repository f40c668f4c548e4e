"""What an agent still knows after a compaction: probes taken from the trace itself (issue 23; SPEC PROBE-1..3).

Users choose a strategy for what their agent still knows after compacting. A probe is something a
trace introduces that the agent may need later, with the exact strings (*keys*) a context must
contain to still hold it. Each is learned when the round that introduces it arrives:

* **entity id**: an id a JSON tool result carries (SPEC ENT-1); key: the id, as a whole word;
* **file path**: a path the agent named in a tool call or its text (``dir/name.ext`` or an
  absolute path); key: the path;
* **last error**: the exception the latest failing tool result reports, at the start of a line as a
  traceback ends (``ValueError: ...``, ``ModuleNotFoundError: ...``), replacing the one before;
  key: its name;
* **task status**: each item of the latest task list (SPEC ENT-2) with its status, replacing the
  list before; keys: the title and the status;
* **constraint**: a sentence of a user message that restricts the agent (``must``, ``never``,
  ``don't``, ``only``, ``instead of``, ``out of scope``...); keys: its identifier-like words
  (paths, codes, quoted names), or its three longest words when it has none.

A probe is kept in a context whose text (what the model reads: messages and tool-call
arguments) contains every key, case-insensitively. Between compactions the context only grows,
so probes are checked in every compacted context and carried over in the others (a new probe
arrives in the round appended). The keys are exact strings: a summary that paraphrases a path
or an error name away has lost it, which is how an agent that must act on it would fare.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from compaction_suite.conformance import oracle
from compaction_suite.conformance.entities import CODING_AGENT_TASK_LISTS, IdRule, TaskListTools, entity_ids

KINDS = ("entity id", "file path", "last error", "task status", "constraint")
REPLACED = frozenset({"last error", "task status"})
"""Kinds of which only the latest counts."""
PATH = re.compile(r"(?<![\w./-])/[\w.-]+(?:/[\w.-]+)+|(?<![\w./-])[\w.-]+(?:/[\w.-]+)+\.\w+")
ERROR = re.compile(r"^(?:[\w.]+\.)?([A-Z]\w*(?:Error|Exception))(?::|$)", re.M)
"""A traceback's last line (``ValueError: ...``, ``json.decoder.JSONDecodeError: ...``): not a name quoted in code."""
CONSTRAINT = re.compile(
    r"\b(must|never|don't|do not|only|always|instead of|out of scope|make sure|avoid|without|no more than|at most|at least)\b", re.I
)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
QUOTED = re.compile(r"^(['\"`]).+\1$|^\[.+\]$")
STOP = frozenset(["this", "that", "with", "from", "have", "will", "your", "they", "them", "then", "than", "there", "their", "would", "could", "should", "about", "which"])


@dataclass(frozen=True)
class Probe:
    """Something the trace introduced, and the strings a context must hold to still know it."""

    kind: str
    keys: tuple[str, ...]

    def kept(self, text: str, lowered: str) -> bool:
        if self.kind == "entity id":
            return oracle.mentions(text, self.keys[0])
        return all(key.lower() in lowered for key in self.keys)


@dataclass
class Probes:
    """The probes a replay has met so far, and which of them the last context lost."""

    id_rule: IdRule | None = None
    task_lists: TaskListTools = field(default_factory=lambda: dict(CODING_AGENT_TASK_LISTS))
    live: dict[Probe, None] = field(default_factory=dict)
    missing: set[Probe] = field(default_factory=set)
    worst: dict[str, float] = field(default_factory=dict)
    """Per kind, the smallest share kept at any call (kinds the trace never introduced are absent)."""

    def learn(self, messages: Sequence[dict[str, Any]]) -> None:
        """Take the probes a round's messages (chat-completions forms) introduce; a new error or
        task list replaces the one before."""
        found = _probes(messages, self.id_rule, self.task_lists)
        for kind in REPLACED & {p.kind for p in found}:
            for probe in [p for p in self.live if p.kind == kind]:
                del self.live[probe]
        self.live.update(dict.fromkeys(found))

    def check(self, text: str, compacted: bool) -> float | None:
        """The share of live probes ``text`` (the call's context) holds; re-checked only when the
        context was compacted. None while the trace has introduced none."""
        if compacted:
            lowered = text.lower()
            self.missing = {p for p in self.live if not p.kept(text, lowered)}
        else:
            self.missing &= self.live.keys()
        for kind in KINDS:
            mine = [p for p in self.live if p.kind == kind]
            if mine:
                share = 1 - sum(p in self.missing for p in mine) / len(mine)
                self.worst[kind] = min(self.worst.get(kind, 1.0), share)
        return 1 - len(self.missing) / len(self.live) if self.live else None

    def kept_now(self) -> dict[str, float]:
        """Per kind, the share the last checked context held."""
        out = {}
        for kind in KINDS:
            mine = [p for p in self.live if p.kind == kind]
            if mine:
                out[kind] = 1 - sum(p in self.missing for p in mine) / len(mine)
        return out

    def counts(self) -> dict[str, int]:
        return {kind: n for kind in KINDS if (n := sum(p.kind == kind for p in self.live))}



def _probes(messages: Sequence[dict[str, Any]], id_rule: IdRule | None, task_lists: TaskListTools) -> list[Probe]:
    found = [Probe("entity id", (i,)) for i in entity_ids(messages, id_rule)]
    for m in messages:
        role = m.get("role")
        if role == "assistant":
            found += [Probe("file path", (p,)) for p in dict.fromkeys(PATH.findall(oracle.readable_text([m])))]
        elif role == "tool":
            errors = ERROR.findall(oracle.text(m) or "")
            if errors:
                found.append(Probe("last error", (errors[-1],)))
        elif role == "user":
            found += [_constraint(s) for s in SENTENCE_END.split(oracle.text(m) or "") if CONSTRAINT.search(s)]
    tasks = _latest_tasks(messages, task_lists)
    if tasks is not None:
        found += tasks
    return found


def _constraint(sentence: str) -> Probe:
    """A constraint's keys: its identifier-like words, else its three longest plain words."""
    words = [w for w in (t.strip(".,;:!?()") for t in sentence.split()) if _identifier(w)]
    if not words:
        plain = [w for w in re.findall(r"[A-Za-z]{4,}", sentence) if w.lower() not in STOP]
        words = sorted(plain, key=len, reverse=True)[:3]
    return Probe("constraint", tuple(dict.fromkeys(w.strip("'\"`") for w in words)))


def _identifier(word: str) -> bool:
    """A path, a code, a name with ``_``, digits or an inner dot, or a quoted name: not a plain word."""
    if QUOTED.match(word):
        return True
    return any(c.isdigit() or c in "/_" for c in word) or re.search(r"\w\.\w", word) is not None


def _latest_tasks(messages: Sequence[dict[str, Any]], task_lists: TaskListTools) -> list[Probe] | None:
    """The probes of the round's last task-list call (title and status of each item), or None."""
    latest = None
    for m in messages:
        for call in m.get("tool_calls") or () if m.get("role") == "assistant" else ():
            function = call.get("function") or {}
            if function.get("name") in task_lists:
                latest = (function, task_lists[function["name"]])
    if latest is None:
        return None
    function, (items_key, title_key) = latest
    try:
        arguments = json.loads(function.get("arguments") or "")
    except (TypeError, ValueError):
        return None
    items = arguments.get(items_key) if isinstance(arguments, dict) else None
    if not isinstance(items, list):
        return None
    probes = []
    for item in items:
        if isinstance(item, dict) and item.get(title_key):
            status = item.get("status")
            probes.append(Probe("task status", (str(item[title_key]),) + ((str(status),) if status else ())))
    return probes
