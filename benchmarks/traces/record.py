"""Record an agent episode whose tools really run, with a scripted, seeded planner.

No model is involved: `Planner` (driven by ``random.Random(seed)``) chooses the
user turns and the tool calls, and writes the assistant's short texts from the
real tool output. The tools (`compaction_suite.benchmarks.traces.tools`) really read, search and
run commands on this machine's Python standard library; ``createEntity`` and
``reportProgress`` are bookkeeping tools whose ids and task lists the planner
tracks. The same seed on the same machine (same Python build) gives the same
trace, apart from the ``created`` date, which ``--created`` pins.

CLI: ``compaction-suite traces record --seed N --rounds R --out PATH``.
"""

from __future__ import annotations

import json
import platform
import random
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import script
from .format import Header, Message, make_header, write_trace
from .script import Event, Topic
from .tools import Stdlib

PLANNER = "stdlib-explorer/1"
WRAP_UP_ROUNDS = 4
"""Rounds the closing exchange takes: user, progress call, summary, slack for events."""

NAME_PATTERN = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)", re.MULTILINE)


class Episode:
    """The growing history, its round count and the real tools it calls."""

    def __init__(self, rng: random.Random, stdlib: Stdlib) -> None:
        self.rng, self.stdlib = rng, stdlib
        self.messages: list[Message] = []
        self.rounds = 0
        self.entity_ids: list[str] = []

    def say(self, role: str, content: str) -> None:
        """Append a system, user or bare assistant message (one round)."""
        self.messages.append({"role": role, "content": content})
        self.rounds += 1

    def call(self, text: str, calls: Sequence[tuple[str, dict[str, Any]]]) -> list[str]:
        """One assistant message with ``calls``; run them; append results in shuffled order."""
        tool_calls = [self._tool_call(name, args) for name, args in calls]
        self.messages.append({"role": "assistant", "content": text, "tool_calls": tool_calls})
        self.rounds += 1
        results = [self.run(name, args) for name, args in calls]
        answers = [{"role": "tool", "tool_call_id": c["id"], "content": r} for c, r in zip(tool_calls, results)]
        if len(answers) > 1:
            self.rng.shuffle(answers)
        self.messages.extend(answers)
        return results

    def _tool_call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        call_id = f"call_{self.rng.getrandbits(96):024x}"
        return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}

    def run(self, name: str, args: dict[str, Any]) -> str:
        """Really run one tool call and return its text result."""
        if name == "readFile":
            return self.stdlib.read_file(args["path"], args["start"], args["end"])
        if name == "searchCode":
            return self.stdlib.search_code(args["pattern"], args.get("path", ""))
        if name == "runCommand":
            return self.stdlib.run_command(args["cmd"])
        if name == "createEntity":
            return self._create_entity(args["type"], args["title"])
        if name == "reportProgress":
            return _progress_summary(args["tasks"])
        raise ValueError(f"unknown tool {name}")

    def _create_entity(self, kind: str, title: str) -> str:
        entity_id = f"ent-{self.rng.getrandbits(40):010x}"
        while entity_id in self.entity_ids:
            entity_id = f"ent-{self.rng.getrandbits(40):010x}"
        self.entity_ids.append(entity_id)
        return json.dumps({"id": entity_id, "type": kind, "title": title, "status": "created"})


def _progress_summary(tasks: list[dict[str, str]]) -> str:
    counts = {status: sum(t["status"] == status for t in tasks) for status in ("completed", "in_progress", "pending")}
    return json.dumps({"ok": True, "tasks": len(tasks), **counts})


class Planner:
    """Scripted agent: picks each next step from its state and a seeded rng."""

    def __init__(self, seed: int, rounds: int, stdlib: Stdlib) -> None:
        self.seed, self.target = seed, rounds
        self.rng = random.Random(seed)
        self.stdlib = stdlib
        self.episode = Episode(self.rng, stdlib)
        self.topics = script.topics(stdlib, self.rng)
        self.topic: Topic = self.topics.pop(0)
        self.events: list[Event] = script.schedule(self.rng, rounds)
        self.tasks: list[dict[str, str]] = []
        self.cursor: dict[str, int] = {}
        self.avoid: set[str] = set()
        self.focus: str | None = None
        self.last_read: str | None = None
        self.names: list[tuple[str, str]] = []
        """(name, file) of definitions seen in files read."""
        self.hits: list[tuple[str, str]] = []
        """(line number, file) of search hits."""
        self.entity_type, self.title_prefix = "note", ""
        self.filed: set[str] = set()
        self.wide_search_ok = True
        self.done: dict[str, int] = {}
        self.planted: list[str] = []
        self.corrections: list[str] = []
        self.steps_since_progress = 0
        self.visited: list[str] = []

    # -- the episode -------------------------------------------------------

    def record(self) -> list[Message]:
        """Play the whole episode and return its messages."""
        self.episode.say("system", script.system_prompt(self.stdlib))
        self.episode.say("user", script.opening(self.topic))
        self._start_topic()
        while self.episode.rounds < self.target - WRAP_UP_ROUNDS:
            if self.events and self.events[0].at <= self.episode.rounds:
                self._event(self.events.pop(0))
            elif self.topics and not self._unread():
                self._event_topic()
            else:
                self._step()
        self._wrap_up()
        return self.episode.messages

    def _start_topic(self) -> None:
        for task in self.tasks:
            task["status"] = "completed"
        self.tasks += [{"title": title, "status": "pending"} for title in script.topic_tasks(self.topic)]
        self.done = {"list": 0, "read": 0, "search": 0, "entity": 0}
        self.focus = self.last_read = None
        self.visited.append(self.topic.name)
        self.episode.call(f"Listing {self.topic.label} first.", [("runCommand", {"cmd": self._ls()})])
        self.done["list"] += 1

    def _wrap_up(self) -> None:
        self.episode.say("user", "That's all for today. Please update the task list and wrap up.")
        for task in self.tasks:
            task["status"] = "completed"
        self.episode.call("Marking everything done.", [("reportProgress", {"tasks": self._tasks(refresh=False)})])
        filed = len(self.episode.entity_ids)
        self.episode.say("assistant", f"Done: {filed} entities filed; topics: {', '.join(self.visited)}.")

    # -- user events -------------------------------------------------------

    def _event(self, event: Event) -> None:
        handler = getattr(self, f"_event_{event.kind}")
        handler()

    def _event_fact(self) -> None:
        fact = script.new_fact(self.rng, self.planted)
        self.planted.append(fact)
        self.episode.say("user", f"Remember: {fact}.")
        self.episode.say("assistant", "Noted.")

    def _event_topic(self) -> None:
        if not self.topics:
            self._event_question()
            return
        self.topic = self.topics.pop(0)
        self.episode.say("user", f"Good. Next, move on to {self.topic.label}.")
        self._start_topic()

    def _event_question(self) -> None:
        if self.rng.random() < 0.3:
            self.episode.say("user", "Which Python version are we auditing, exactly?")
            out = self._run_one("Checking.", "runCommand", {"cmd": script.VERSION_COMMAND})
            self.episode.say("assistant", f"Python {out.splitlines()[1].split()[0]}.")
            return
        path = self.rng.choice(self.topic.files)
        self.episode.say("user", f"Quick check: how many lines is {path}?")
        out = self._run_one("Counting.", "runCommand", {"cmd": f"wc -l {path}"})
        self.episode.say("assistant", f"{path} has {out.splitlines()[1].split()[0]} lines.")

    def _event_correction(self) -> None:
        kinds = ["entity_type", "title_prefix"]
        if self.last_read and len(self._readable()) > 1:
            kinds.append("file")
        if self.wide_search_ok and self.topic.folder:
            kinds.append("search_scope")
        getattr(self, f"_correct_{self.rng.choice(kinds)}")()

    def _correct_file(self) -> None:
        """"No — use X instead of Y": the agent drops Y and reads X next."""
        wrong = self.last_read or ""
        others = [f for f in self._readable() if f != wrong]
        right = self.rng.choice([f for f in self._unread() if f != wrong] or others)
        self._correction(f"No — use {right} instead of {wrong}; {wrong} is out of scope for this audit.")
        self.avoid.add(wrong)
        if right not in self._unread():
            self.cursor[right] = 1
        self.focus = right
        self.episode.say("assistant", f"Understood — switching to {right}.")
        text, name, args = self._plan_read(set(), forced=right)
        self._run_one(text, name, args)

    def _correct_entity_type(self) -> None:
        new = self.rng.choice([t for t in script.ENTITY_TYPES if t != self.entity_type])
        self._correction(f"No — file findings as '{new}' entities, not '{self.entity_type}'.")
        self.entity_type = new
        self.episode.say("assistant", f"Understood — findings will be '{new}' entities from now on.")

    def _correct_title_prefix(self) -> None:
        new = self.rng.choice([p for p in script.TITLE_PREFIXES if p != self.title_prefix])
        self._correction(f"No — start every entity title with '{new}' from now on.")
        self.title_prefix = new
        self.episode.say("assistant", f"Understood — titles will start with '{new}'.")

    def _correct_search_scope(self) -> None:
        self._correction(f"No — don't search the whole library; keep searches inside {self.topic.folder}/.")
        self.wide_search_ok = False
        self.episode.say("assistant", "Understood — searches stay inside the current package.")

    def _correction(self, text: str) -> None:
        self.corrections.append(text)
        self.episode.say("user", text)

    # -- agent steps -------------------------------------------------------

    def _step(self) -> None:
        """One assistant tool round (1-4 calls), sometimes followed by a short remark."""
        if self.steps_since_progress >= self.rng.randint(7, 13):
            self.steps_since_progress = 0
            self._run_one("Updating the task list.", "reportProgress", {"tasks": self._tasks()})
            return
        self.steps_since_progress += 1
        count = 1 if self.rng.random() < 0.65 else self.rng.randint(2, 4)
        taken: set[str] = set()
        plans = [self._plan(taken) for _ in range(count)]
        text = plans[0][0] if count == 1 else f"Running {count} lookups in parallel."
        results = self.episode.call(text, [(name, args) for _, name, args in plans])
        for (_, name, args), result in zip(plans, results):
            self._learn(name, args, result)
        if self.rng.random() < 0.2:
            self.episode.say("assistant", self._remark(plans[-1][1], plans[-1][2], results[-1]))

    def _run_one(self, text: str, name: str, args: dict[str, Any]) -> str:
        result = self.episode.call(text, [(name, args)])[0]
        self._learn(name, args, result)
        return result

    def _plan(self, taken: set[str]) -> tuple[str, str, dict[str, Any]]:
        """Choose one call: ``(assistant text, tool name, arguments)``; ``taken``: files read in this message."""
        can_file = bool(self._local(self.names) or self._local(self.hits))
        weights = {"read": 50, "search": 22, "command": 12, "entity": 16 if can_file else 0}
        kind = self.rng.choices(list(weights), weights=list(weights.values()))[0]
        if kind == "read":
            return self._plan_read(taken)
        return getattr(self, f"_plan_{kind}")()

    def _plan_read(self, taken: set[str], forced: str | None = None) -> tuple[str, str, dict[str, Any]]:
        path = forced or self._next_file(taken)
        taken.add(path)
        total = max(self.stdlib.line_count(path), 1)
        start = self.cursor.get(path, 1)
        if start > total or self.rng.random() < 0.1:
            start = self.rng.randint(1, total)
        end = min(start + self.rng.randint(80, 260), total)
        self.cursor[path] = end + 1
        return f"Reading {path} lines {start}-{end}.", "readFile", {"path": path, "start": start, "end": end}

    def _next_file(self, taken: set[str]) -> str:
        """The focus file while it has unread lines (mostly), else another one, unread first."""
        unread = [f for f in self._unread() if f not in taken]
        if self.focus in unread and self.rng.random() < 0.8:
            return self.focus
        self.focus = self.rng.choice(unread or [f for f in self._readable() if f not in taken] or self._readable())
        return self.focus

    def _unread(self) -> list[str]:
        return [f for f in self._readable() if self.cursor.get(f, 1) <= self.stdlib.line_count(f)]

    def _readable(self) -> list[str]:
        return [f for f in self.topic.files if f not in self.avoid] or self.topic.files

    def _plan_search(self) -> tuple[str, str, dict[str, Any]]:
        names = self._local(self.names)
        if names and self.rng.random() < 0.35:
            name = self.rng.choice(names[-12:])[0]
            pattern, what = rf"\b{name}\(", f"callers of {name}"
        else:
            pattern, what = self.rng.choice(script.SEARCH_PATTERNS)
        scope = self.topic.folder or self.rng.choice(self.topic.files)
        if self.wide_search_ok and self.rng.random() < 0.12:
            scope = ""
        args = {"pattern": pattern, "path": scope} if scope else {"pattern": pattern}
        return f"Searching {scope or 'the whole library'} for {what}.", "searchCode", args

    def _plan_command(self) -> tuple[str, str, dict[str, Any]]:
        files = self._readable()
        options = [
            self._ls(),
            "wc -l " + " ".join(sorted(self.rng.sample(files, min(len(files), self.rng.randint(2, 5))))),
            f"head -n {self.rng.randint(15, 60)} {self.rng.choice(files)}",
            f"grep -cE '{self.rng.choice(script.SEARCH_PATTERNS)[0]}' {self.rng.choice(files)}",
        ]
        if self.topic.module:
            options.append(script.module_command(self.topic.module, self.rng))
        cmd = self.rng.choice(options)
        return f"Running `{cmd}`.", "runCommand", {"cmd": cmd}

    def _plan_entity(self) -> tuple[str, str, dict[str, Any]]:
        """File a finding about a definition read or a search hit, never the same one twice."""
        hits = [f"Check error handling at {path}:{line}" for line, path in self._local(self.hits)[-20:]]
        names = [f"Review {name} in {path}" for name, path in self._local(self.names)[-20:]]
        hits, names = [t for t in hits if t not in self.filed], [t for t in names if t not in self.filed]
        if not hits and not names:
            return self._plan_read(set())
        title = self.rng.choice(hits if hits and (not names or self.rng.random() < 0.4) else names)
        self.filed.add(title)
        title = f"{self.title_prefix} {title}".strip()
        args = {"type": self.entity_type, "title": title}
        return f"Filing a {self.entity_type}: {title}.", "createEntity", args

    def _local(self, pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """The ``(what, path)`` pairs whose path is in the current topic."""
        files = set(self.topic.files)
        return [pair for pair in pairs if pair[1] in files]

    def _ls(self) -> str:
        return f"ls -1 --ignore=__pycache__ {self.topic.folder or '.'}"

    # -- what the agent learns from results --------------------------------

    def _learn(self, name: str, args: dict[str, Any], result: str) -> None:
        if name == "readFile":
            self.last_read = args["path"]
            self.names += [(n, args["path"]) for n in NAME_PATTERN.findall(result) if not n.startswith("__")]
            self.done["read"] += 1
        elif name == "searchCode":
            pieces = [line.split(":", 2) for line in result.splitlines()[:-1] if line.count(":") >= 2]
            self.hits += [(number, path) for path, number, _ in pieces]
            self.done["search"] += 1
        elif name == "createEntity":
            self.done["entity"] += 1

    def _remark(self, name: str, args: dict[str, Any], result: str) -> str:
        if name == "readFile":
            names = NAME_PATTERN.findall(result)[:4]
            found = f"defines {', '.join(names)}" if names else "has no definitions in that range"
            return f"{args['path']} lines {args['start']}-{args['end']} {found}."
        if name == "searchCode":
            return f"Search result: {result.splitlines()[-1].strip('[]')}."
        if name == "createEntity":
            return f"Filed {json.loads(result)['id']}."
        if name == "runCommand":
            return f"`{args['cmd']}` finished: {result.splitlines()[-1].strip('[]')}."
        return "Task list updated."

    def _tasks(self, refresh: bool = True) -> list[dict[str, str]]:
        """A copy of the task list; ``refresh`` first re-derives the current topic's statuses."""
        if not refresh:
            return [dict(task) for task in self.tasks]
        current = script.topic_tasks(self.topic)
        thresholds = dict(zip(current, (("list", 1, 1), ("read", 1, 6), ("search", 1, 3), ("entity", 1, 99))))
        for task in self.tasks:
            if task["title"] in thresholds:
                key, started, finished = thresholds[task["title"]]
                count = self.done[key]
                task["status"] = "completed" if count >= finished else "in_progress" if count >= started else "pending"
        return [dict(task) for task in self.tasks]


def record(seed: int, rounds: int, *, stdlib: Stdlib | None = None) -> tuple[list[Message], dict[str, Any]]:
    """Record an episode; return its messages and what the header needs to know."""
    planner = Planner(seed, rounds, stdlib or Stdlib())
    messages = planner.record()
    facts = {"planted_facts": planner.planted, "entity_ids": planner.episode.entity_ids,
             "corrections": planner.corrections, "rounds": planner.episode.rounds}
    return messages, facts


def source_line(seed: int, root: Path) -> str:
    """The header's ``source``: what produced the trace, and where."""
    return (
        f"recorded by compaction_suite.benchmarks.traces.record seed={seed} planner={PLANNER} on "
        f"{platform.python_implementation()} {platform.python_version()} / {platform.platform()}; "
        f"scripted seeded planner, no model involved; tools really ran "
        f"against the standard library at {root}"
    )


def record_trace(path: str | Path, seed: int, rounds: int, *, created: str | None = None,
                 trace_id: str | None = None) -> Header:
    """Record an episode and write it as a trace file; return the header."""
    stdlib = Stdlib()
    messages, facts = record(seed, rounds, stdlib=stdlib)
    chars = sum(len(m.get("content") or "") for m in messages)
    notes = (f"{facts['rounds']} rounds, {len(messages)} messages, {chars} content characters "
             f"(~{chars // 4} tokens at 4 chars/token). Python {sys.version}.")
    header = make_header(
        trace_id or f"stdlib-explorer-seed{seed}", source_line(seed, stdlib.root), created=created, notes=notes,
        planted_facts=facts["planted_facts"], entity_ids=facts["entity_ids"],
        corrections=facts["corrections"], tools=script.TOOL_SCHEMAS,
    )
    write_trace(path, header, messages)
    return header
