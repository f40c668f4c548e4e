"""The recorder's tools, which really run against this machine's Python standard library.

`Stdlib` indexes the ``.py`` files under ``sysconfig.get_paths()["stdlib"]``
(leaving out ``site-packages``, test folders and ``__pycache__``) and serves
three read-only tools: `Stdlib.read_file`, `Stdlib.search_code` and
`Stdlib.run_command`. Every result is real text from the files or real output
of a subprocess, capped in size with a marker saying what was left out.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import sysconfig
from functools import cached_property
from pathlib import Path

READ_CAP = 12_000
SEARCH_CAP = 8_000
SEARCH_MAX_HITS = 80
COMMAND_CAP = 6_000
COMMAND_TIMEOUT = 60
SKIPPED_DIRS = frozenset({"site-packages", "__pycache__", "test", "tests", "idle_test"})

IMPORTABLE = frozenset(
    ["argparse", "asyncio", "collections", "concurrent", "csv", "dataclasses", "email", "functools", "http", "importlib", "inspect", "json", "logging", "pathlib", "re", "shutil", "sqlite3", "string", "subprocess", "textwrap", "tomllib", "typing", "unittest", "urllib", "xml", "zipfile", "zoneinfo"]
)
"""Modules `run_command` may import in ``python -c`` (all side-effect free on import)."""

_PY_COMMANDS = (
    re.compile(r"import sys; print\(sys\.version\)"),
    re.compile(r"import (?P<m>[a-z][a-z0-9_]*); print\((?P=m)\.__file__\)"),
    re.compile(r"import (?P<m>[a-z][a-z0-9_]*); print\(sorted\(getattr\((?P=m), '__all__', \[\]\)\)\)"),
)


class ToolError(ValueError):
    """A tool call the tools refuse (bad path, command not on the whitelist)."""


def cap(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, with a marker when something was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... truncated: {len(text) - limit} more characters not shown]"


def slice_lines(text: str, start: int, end: int) -> str:
    """Lines ``start``..``end`` (1-based, inclusive) of ``text``, split on ``\\n`` only."""
    return "\n".join(text.split("\n")[start - 1 : end])


class Stdlib:
    """Read-only access to the standard library of the running interpreter."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root or sysconfig.get_paths()["stdlib"]).resolve()
        self._texts: dict[str, str] = {}

    @cached_property
    def files(self) -> list[str]:
        """Relative POSIX paths of the indexed ``.py`` files, sorted."""
        found = []
        for path in self.root.rglob("*.py"):
            relative = path.relative_to(self.root)
            if not SKIPPED_DIRS & set(relative.parts[:-1]):
                found.append(relative.as_posix())
        return sorted(found)

    @cached_property
    def file_set(self) -> frozenset[str]:
        """`files` as a set, for membership tests."""
        return frozenset(self.files)

    def text(self, relative: str) -> str:
        """The full text of an indexed file (cached)."""
        if relative not in self._texts:
            self._texts[relative] = (self.root / self._checked(relative)).read_text(encoding="utf-8")
        return self._texts[relative]

    def line_count(self, relative: str) -> int:
        """Number of lines of a file, as ``wc -l`` counts them."""
        return self.text(relative).count("\n")

    def _checked(self, relative: str) -> str:
        if relative not in self.file_set:
            raise ToolError(f"no such file in the standard library index: {relative}")
        return relative

    def read_file(self, path: str, start: int, end: int) -> str:
        """Tool ``readFile``: lines ``start``..``end`` of a stdlib file, capped at `READ_CAP`."""
        if start < 1 or end < start:
            raise ToolError(f"bad line range {start}-{end}")
        return cap(slice_lines(self.text(path), start, end), READ_CAP)

    def search_code(self, pattern: str, path: str = "") -> str:
        """Tool ``searchCode``: regex search, grep-style ``file:line:text`` output, capped."""
        regex = re.compile(pattern)
        hits: list[str] = []
        total = files_hit = 0
        for relative in self._scope(path):
            matched = [
                f"{relative}:{number}:{line}"
                for number, line in enumerate(self.text(relative).split("\n"), start=1)
                if regex.search(line)
            ]
            total += len(matched)
            files_hit += bool(matched)
            hits.extend(matched[: SEARCH_MAX_HITS - len(hits)])
        summary = f"[{total} matches in {files_hit} files; showing {len(hits)}]"
        return cap("\n".join(hits + [summary]), SEARCH_CAP)

    def _scope(self, path: str) -> list[str]:
        """Files under ``path`` (a folder or a file; empty means everything)."""
        path = path.strip("/")
        if not path:
            return self.files
        if path in self.file_set:
            return [path]
        scoped = [name for name in self.files if name.startswith(path + "/")]
        if not scoped:
            raise ToolError(f"no such folder or file in the standard library index: {path}")
        return scoped

    def run_command(self, cmd: str) -> str:
        """Tool ``runCommand``: run a whitelisted read-only command in the stdlib folder."""
        argv = self._allowed(shlex.split(cmd))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "PYTHONHASHSEED": "0",
               "PYTHONDONTWRITEBYTECODE": "1"}
        done = subprocess.run(argv, cwd=self.root, env=env, capture_output=True, text=True,
                              timeout=COMMAND_TIMEOUT, check=False)
        output = cap(done.stdout + done.stderr, COMMAND_CAP)
        return f"$ {cmd}\n{output}[exit code {done.returncode}]"

    def _allowed(self, argv: list[str]) -> list[str]:
        """The argv to run, or `ToolError` when the command is not on the whitelist."""
        if not argv:
            raise ToolError("empty command")
        name, args = argv[0], argv[1:]
        if name == "python" and len(args) == 2 and args[0] == "-c" and _python_ok(args[1]):
            return [sys.executable, *args]
        if name == "ls" and args[:2] == ["-1", "--ignore=__pycache__"] and len(args) == 3:
            return ["ls", *args[:2], self._folder(args[2])]
        if name == "wc" and args[:1] == ["-l"] and len(args) >= 2:
            return ["wc", "-l", *(self._checked(a) for a in args[1:])]
        if name == "head" and len(args) == 3 and args[0] == "-n" and args[1].isdigit():
            return ["head", "-n", args[1], self._checked(args[2])]
        if name == "grep" and len(args) == 3 and args[0] == "-cE" and not args[1].startswith("-"):
            return ["grep", "-cE", args[1], self._checked(args[2])]
        raise ToolError(f"command not allowed: {shlex.join(argv)}")

    def _folder(self, relative: str) -> str:
        if relative != "." and not any(name.startswith(relative.rstrip("/") + "/") for name in self.files):
            raise ToolError(f"no such folder in the standard library index: {relative}")
        return relative


def _python_ok(code: str) -> bool:
    """Is ``code`` one of the whitelisted ``python -c`` snippets on an importable module?"""
    for pattern in _PY_COMMANDS:
        match = pattern.fullmatch(code)
        if match:
            return "m" not in match.groupdict() or match["m"] in IMPORTABLE
    return False
