"""The files a command reads and the places it writes, checked before any long work starts
(SPEC Part C, "The command contract").

Every problem is an `InputError`: one line naming the path and what is wrong with it ("no such
file", "is a directory", "is empty", "is an SQLite database, not JSON", "JSON cut short at line 3",
"the folder ... does not exist"). Nothing here writes a byte or creates a folder: a command checks
first, then does its work, then writes. Standard library only, so every command (and the pytest
plugin) can use it without importing anything heavy.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

SQLITE_MAGIC = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file (sqlite.org/fileformat.html, "The Database Header")."""


class InputError(ValueError):
    """A path a command was given cannot be used; the text is one line naming it (a usage error, exit 2)."""


def input_file(path: str | os.PathLike[str]) -> Path:
    """``path`` as an existing, readable regular file."""
    found = Path(path)
    if not found.exists():
        raise InputError(f"{found}: no such file")
    if found.is_dir():
        raise InputError(f"{found}: is a directory, not a file")
    if not os.access(found, os.R_OK):
        raise InputError(f"{found}: cannot be read (permission denied)")
    return found


def text_file(path: str | os.PathLike[str]) -> Path:
    """``path`` as an existing file of UTF-8 text (an empty one is text too)."""
    found = input_file(path)
    data = found.read_bytes()
    if data.startswith(SQLITE_MAGIC):
        raise InputError(f"{found}: is an SQLite database, not text")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{found}: is not UTF-8 text (a binary file?)") from None
    return found


def read_json(path: str | os.PathLike[str]) -> Any:
    """The JSON value in the file ``path``; `InputError` names what the file holds instead."""
    found = input_file(path)
    data = found.read_bytes()
    if not data.strip():
        raise InputError(f"{found}: is empty, not JSON")
    if data.startswith(SQLITE_MAGIC):
        raise InputError(f"{found}: is an SQLite database, not JSON")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{found}: is not UTF-8 text (a binary file?), not JSON") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        if error.pos >= len(text.rstrip()) or error.msg.startswith("Unterminated string"):  # the text ends mid-value
            raise InputError(f"{found}: JSON cut short at line {error.lineno} (a truncated file?)") from None
        raise InputError(f"{found}: not JSON ({error.msg} at line {error.lineno}, column {error.colno})") from None


def output_file(path: str | os.PathLike[str]) -> Path:
    """``path`` as a file the command may write when it is done: not a directory, in an existing
    folder it can write to. No folder is created for it."""
    found = Path(path)
    if found.is_dir():
        raise InputError(f"{found}: is a directory; name a file to write")
    folder = found.parent
    if not folder.is_dir():
        raise InputError(f"{found}: the folder {folder} does not exist" if not folder.exists() else f"{found}: {folder} is not a folder")
    if not os.access(folder, os.W_OK) or (found.exists() and not os.access(found, os.W_OK)):
        raise InputError(f"{found}: cannot be written (permission denied)")
    return found


def output_dir(path: str | os.PathLike[str]) -> Path:
    """``path`` as a folder the command may create (with its parents) and write into when it is
    done: not a file, and its nearest existing ancestor a folder it can write to."""
    found = Path(path)
    if found.exists() and not found.is_dir():
        raise InputError(f"{found}: is a file, not a folder")
    existing = found
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise InputError(f"{found}: {existing} is a file, so this folder cannot be created")
    if not os.access(existing, os.W_OK):
        raise InputError(f"{found}: cannot be written (permission denied on {existing})")
    return found
