"""The recorder's script: topics, the user's scheduled turns, facts, patterns, prompts, tool schemas.

Everything random here draws from the planner's ``random.Random(seed)``, so a
seed fixes the whole episode.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from .tools import IMPORTABLE, Stdlib

TOPIC_FOLDERS = (
    "asyncio", "collections", "concurrent", "email", "http", "importlib", "json", "logging",
    "multiprocessing", "re", "tomllib", "unittest", "urllib", "wsgiref", "xml", "zoneinfo",
)
TOP_LEVEL_MODULES = (
    "argparse.py", "dataclasses.py", "functools.py", "inspect.py", "pathlib.py", "shutil.py",
    "subprocess.py", "textwrap.py", "typing.py", "zipfile.py",
)
ENTITY_TYPES = ("note", "issue", "finding", "todo")
TITLE_PREFIXES = ("[audit]", "[stdlib]", "[review]", "[AUD]")
VERSION_COMMAND = 'python -c "import sys; print(sys.version)"'

SEARCH_PATTERNS = (
    (r"raise \w+Error\(", "raised errors"),
    (r"except \w+( as \w+)?:", "except clauses"),
    (r"except:", "bare excepts"),
    (r"^class \w+", "class definitions"),
    (r"^def _\w+", "private module functions"),
    (r"\b(TODO|XXX|FIXME)\b", "TODO/XXX/FIXME markers"),
    (r"warnings\.warn\(", "warnings"),
    (r"DeprecationWarning", "deprecations"),
    (r"@(functools\.)?(lru_)?cache", "caches"),
    (r"isinstance\(\w+, str\)", "string type checks"),
    (r"os\.environ", "environment lookups"),
    (r"NotImplementedError", "NotImplementedError uses"),
    (r"sys\.platform", "platform checks"),
    (r"^__all__", "__all__ declarations"),
    (r"async def \w+", "coroutines"),
    (r"threading\.(Lock|RLock)\(", "locks"),
    (r"global \w+", "global statements"),
    (r"\.encode\(", "encode calls"),
)
"""``(regex, what it finds)``; all valid as Python ``re`` and as GNU ``grep -E``."""


@dataclass(frozen=True)
class Topic:
    """A part of the library the agent audits: a package folder or a group of modules."""

    name: str
    label: str
    folder: str
    files: list[str]
    module: str | None


@dataclass(frozen=True)
class Event:
    """A scheduled user turn: ``kind`` is fact, correction, topic or question."""

    at: int
    kind: str


def topics(stdlib: Stdlib, rng: random.Random) -> list[Topic]:
    """Every topic present on this machine, in a seeded order."""
    found = []
    for folder in TOPIC_FOLDERS:
        files = [f for f in stdlib.files if f.startswith(folder + "/")]
        if files:
            module = folder if folder in IMPORTABLE else None
            found.append(Topic(folder, f"the {folder} package", folder, files, module))
    modules = [f for f in TOP_LEVEL_MODULES if f in stdlib.file_set]
    if modules:
        label = "the top-level modules " + ", ".join(modules)
        found.append(Topic("top-level-modules", label, "", modules, None))
    rng.shuffle(found)
    return found


def topic_tasks(topic: Topic) -> list[str]:
    """The four task titles each topic adds to the progress list."""
    name = topic.name
    return [f"List {name}", f"Read the core modules of {name}",
            f"Search {name} for error-handling patterns", f"File findings for {name}"]


def schedule(rng: random.Random, rounds: int) -> list[Event]:
    """The user's turns for an episode of ``rounds`` rounds, sorted by round."""
    events = [Event(int(rng.uniform(0.03, 0.85) * rounds), "fact") for _ in range(rng.randint(3, 6))]
    events += [Event(int(rng.uniform(0.08, 0.9) * rounds), "correction") for _ in range(rng.randint(3, 5))]
    events += [Event(int(rng.uniform(0.1, 0.95) * rounds), "question") for _ in range(rng.randint(2, 4))]
    at = rng.randint(40, 80)
    while at < rounds - 20:
        events.append(Event(at, "topic"))
        at += rng.randint(40, 80)
    return sorted(events, key=lambda event: event.at)


def _word(rng: random.Random) -> str:
    return rng.choice(("amber", "basalt", "cedar", "delta", "ember", "fjord", "granite", "harbor", "indigo", "juniper"))


FACTS: tuple[tuple[str, Callable[[random.Random], str]], ...] = (
    ("the deploy code is", lambda r: f"{r.choice('ABCDEFGHJKMNPRSTWXYZ')}{r.randint(1, 9)}-{r.randint(1000, 9999)}"),
    ("the staging database listens on port", lambda r: str(r.randint(20000, 39999))),
    ("the release branch is", lambda r: f"release/{_word(r)}-{r.randint(2, 9)}"),
    ("the reviewer for this audit is", lambda r: r.choice(("Ines Okafor", "Tomas Lindqvist", "Priya Raman", "Wei Zhang", "Ana Sousa"))),
    ("the audit ticket is", lambda r: f"AUD-{r.randint(100, 999)}"),
    ("the feature flag to check is", lambda r: f"{_word(r)}_{_word(r)}_enabled"),
    ("the report is due on", lambda r: r.choice(("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"))),
    ("the shared folder for findings is", lambda r: f"/audits/{_word(r)}-{r.randint(10, 99)}"),
)


def new_fact(rng: random.Random, planted: list[str]) -> str:
    """A fact whose subject is not among ``planted`` yet (subjects may repeat once all are used)."""
    fresh = [(subject, value) for subject, value in FACTS if not any(p.startswith(subject) for p in planted)]
    subject, value = rng.choice(fresh or list(FACTS))
    return f"{subject} {value(rng)}"


def module_command(module: str, rng: random.Random) -> str:
    """A whitelisted ``python -c`` command about ``module``."""
    if rng.random() < 0.5:
        return f'python -c "import {module}; print({module}.__file__)"'
    return f"python -c \"import {module}; print(sorted(getattr({module}, '__all__', [])))\""


def system_prompt(stdlib: Stdlib) -> str:
    """The episode's system message."""
    return (
        "You are stdlib-explorer, a code-audit agent working read-only on the Python standard library "
        f"at {stdlib.root}. Paths are relative to that folder. Tools: readFile(path, start, end) returns "
        "lines start..end of a file; searchCode(pattern, path) greps a folder or file with a regex; "
        "runCommand(cmd) runs one whitelisted read-only command (ls, wc -l, head, grep -cE, python -c); "
        "createEntity(type, title) files a finding and returns its id; reportProgress(tasks) publishes "
        "the task list. Follow the user's corrections, remember what they ask you to remember, and keep "
        "your messages short."
    )


def opening(topic: Topic) -> str:
    """The first user message."""
    return (
        "We're auditing the Python standard library on this machine for an internal review. "
        f"Start with {topic.label}: list it, read its main modules, search for error-handling patterns, "
        "and file an entity with createEntity for each notable finding. Keep the task list current "
        "with reportProgress."
    )


def _tool(name: str, description: str, properties: dict[str, dict[str, object]], required: list[str]) -> dict[str, object]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": required}}}


_STR: dict[str, object] = {"type": "string"}
_INT: dict[str, object] = {"type": "integer", "minimum": 1}
TOOL_SCHEMAS = [
    _tool("readFile", "Lines start..end (1-based, inclusive) of a standard-library file.",
          {"path": _STR, "start": _INT, "end": _INT}, ["path", "start", "end"]),
    _tool("searchCode", "Regex search; grep-style file:line:text output, capped.",
          {"pattern": _STR, "path": _STR}, ["pattern"]),
    _tool("runCommand", "Run one whitelisted read-only command in the standard-library folder.",
          {"cmd": _STR}, ["cmd"]),
    _tool("createEntity", "File a finding; returns its id.", {"type": _STR, "title": _STR}, ["type", "title"]),
    _tool("reportProgress", "Publish the task list.", {"tasks": {"type": "array", "items": {
        "type": "object", "properties": {"title": _STR, "status": {
            "type": "string", "enum": ["completed", "in_progress", "pending"]}},
        "required": ["title", "status"]}}}, ["tasks"]),
]
"""OpenAI ``tools`` definitions of the five tools, stored in each recorded header."""
