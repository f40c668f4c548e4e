"""A corpus for judging token estimators, built from material already on this machine.

Every content class is read from files the machine ships; nothing is fetched and
nothing is invented. ``benchmarks/CORPUS.md`` says the same at more length.

======================  ==================================================================
class                   where its text comes from
======================  ==================================================================
``prose``               English paragraphs of the Python documentation as shipped in
                        ``pydoc_data.topics`` (column-0 paragraphs only: indented code,
                        grammar and note blocks and ``****`` underlines are dropped), plus
                        the stdlib's ``LICENSE.txt``. Technical English, not fiction.
``code``                The standard library's own ``.py`` files (``test``/``tests``/
                        ``idle_test`` folders and ``site-packages`` left out).
``json-pretty``         ``json.dumps(value, indent=2)`` of real data: the interpreter's
``json-minified``       ``_sysconfigdata`` build variables; a file listing (path, size, mode,
                        mtime) of each stdlib package folder; the ``RECORD`` and ``METADATA``
                        of the pip and setuptools wheels bundled in ``ensurepip``; the
                        stdlib tables ``locale.locale_alias``, ``encodings.aliases`` and
                        ``mimetypes``' default maps; ``dis`` listings of stdlib functions;
                        the JSON-Schema metaschemas shipped by ``jsonschema_specifications``
                        (a dependency of this project). Minified is the same values with
                        ``separators=(",", ":")``.
``logs``                Real logs of this machine's image: ``/var/log/dpkg.log``,
                        ``/var/log/apt/term.log``, ``/var/log/apt/history.log``,
                        ``/var/log/alternatives.log``; only their first 256 KiB, so appends
                        made by later package installs do not change the corpus.
``japanese`` ...        Translated messages (``msgstr``) of the gettext catalogs under
``hindi``               ``/usr/share/locale/<lang>/LC_MESSAGES/*.mo`` (coreutils, apt, glib,
                        gtk, postgres, ...; the ``iso_*`` catalogs of country and language
                        names are left out), keeping messages with at least one character
                        of the language's script; for Japanese, Chinese and Korean also the
                        stdlib's ``test/cjkencodings/*-utf8.txt`` samples. Catalog messages
                        carry their ``%s`` placeholders and option names, as localized
                        program output does.
``base64``, ``hex``     ``base64.b64encode`` (one line, no wrapping) and ``bytes.hex()`` of
                        the first 256 KiB of real binaries: the stdlib's ``lib-dynload``
                        shared libraries and the ``.pyc`` files of its top-level
                        ``__pycache__``.
``messages``            Whole chat messages from the shipped traces
                        ``cassettes/traces/*.jsonl`` (read with
                        ``compaction_suite.benchmarks.traces.format.read_trace``); compared as one-message
                        histories, so the chat overhead (SPEC TOK-2) counts.
======================  ==================================================================

**Units and splits.** Each class is a list of *units* (a file, a catalog, a JSON value, a
message); units longer than 8 KiB are cut into 8 KiB blocks at line ends. A unit goes to
the ``train`` or the ``test`` split by a hash of its class and name, so the two splits
share no text: an estimator with fitted weights is calibrated on ``train`` and judged on ``test``.

**Documents.** ``documents(cls, n, split=..., seed=...)`` draws ``n`` documents with a
``random.Random`` seeded by the seed, class and split: a length uniform in 200..4000
characters, a unit long enough (uniformly), a start in it (moved back to a line start when
one is near). So the corpus is the same for a given machine; `fingerprint` hashes the
material of a class so a report can say which material it was measured on.
"""

from __future__ import annotations

import base64
import bisect
import dis
import encodings.aliases
import functools
import hashlib
import json
import locale
import mimetypes
import os
import random
import re
import struct
import sysconfig
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "cassettes" / "traces"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
LOCALE_DIR = Path("/usr/share/locale")
LOG_FILES = ("/var/log/dpkg.log", "/var/log/apt/term.log", "/var/log/apt/history.log", "/var/log/alternatives.log")

MIN_CHARS = 200
MAX_CHARS = 4000
BLOCK = 8 * 1024
"""Units longer than this are cut into blocks, so long files feed both splits."""
HEAD_BYTES = 256 * 1024
"""How much of a log or a binary is read: logs only grow at the end."""

LANGUAGES: dict[str, tuple[tuple[str, ...], str, tuple[str, ...]]] = {
    # class: (locale folders, a character of the script must match, cjkencodings samples)
    "japanese": (("ja",), "[\u3040-\u30ff]", ("euc_jp", "euc_jisx0213", "iso2022_jp", "shift_jis", "shift_jisx0213")),
    "chinese": (("zh_CN", "zh_TW"), "[\u4e00-\u9fff]", ("gb2312", "gbk", "gb18030", "hz", "big5", "big5hkscs")),
    "korean": (("ko",), "[\uac00-\ud7af]", ("euc_kr", "cp949", "johab", "iso2022_kr")),
    "russian": (("ru",), "[\u0400-\u04ff]", ()),
    "arabic": (("ar",), "[\u0600-\u06ff]", ()),
    "hindi": (("hi",), "[\u0900-\u097f]", ()),
}

TEXT_CLASSES = ("prose", "code", "json-pretty", "json-minified", "logs", *LANGUAGES, "base64", "hex")
CLASSES = (*TEXT_CLASSES, "messages")
SPLITS = ("train", "test")


class CorpusError(RuntimeError):
    """A class has no source material on this machine."""


@dataclass(frozen=True)
class Unit:
    """A piece of source material: text, or one chat message (class ``messages``)."""

    cls: str
    source: str
    text: str = ""
    message: dict[str, Any] | None = field(default=None, compare=False)

    @property
    def split(self) -> str:
        return split_of(self.cls, self.source)


@dataclass(frozen=True)
class Document:
    """What an estimator is judged on: ``text``, or ``messages`` for class ``messages``."""

    cls: str
    split: str
    source: str
    text: str = ""
    messages: tuple[dict[str, Any], ...] = field(default=(), compare=False)


def split_of(cls: str, source: str) -> str:
    """``train`` or ``test``, by a hash of the unit's class and name (about half each)."""
    return "test" if hashlib.sha256(f"{cls}\0{source}".encode()).digest()[0] & 1 else "train"


# --- sources -----------------------------------------------------------------------------------


def _blocks(cls: str, source: str, text: str) -> Iterator[Unit]:
    """``text`` as one unit, or as 8 KiB blocks cut after a newline when there is one."""
    if len(text) <= BLOCK:
        if text:
            yield Unit(cls, source, text)
        return
    start, index = 0, 0
    while start < len(text):
        end = min(start + BLOCK, len(text))
        if end < len(text):
            newline = text.rfind("\n", start + BLOCK // 2, end)
            end = newline + 1 if newline >= 0 else end
        yield Unit(cls, f"{source}#{index}", text[start:end])
        start, index = end, index + 1


_UNDERLINE = re.compile(r"^([*=\-^~\"#+]{3,})\s*$", re.M)


def _prose_paragraphs(text: str) -> list[str]:
    """Column-0 paragraphs of rendered reST: drops indented code, grammar, notes and titles' lines."""
    kept = []
    for paragraph in re.split(r"\n\s*\n", text):
        lines = paragraph.split("\n")
        if not lines[0] or lines[0][0].isspace() or _UNDERLINE.search(paragraph):
            continue
        if sum(ch.isalpha() for ch in paragraph) < 0.6 * len(paragraph) or len(paragraph) < 60:
            continue
        kept.append(paragraph)
    return kept


def _prose() -> Iterator[Unit]:
    from pydoc_data.topics import topics

    for name in sorted(topics):
        yield from _blocks("prose", f"pydoc_data.topics[{name!r}]", "\n\n".join(_prose_paragraphs(topics[name])))
    license_file = STDLIB / "LICENSE.txt"
    if license_file.is_file():
        yield from _blocks("prose", str(license_file), license_file.read_text(encoding="utf-8", errors="replace"))


def _stdlib_files(suffix: str) -> Iterator[Path]:
    skip = {"test", "tests", "idle_test", "site-packages", "__pycache__"}
    for folder, dirs, files in os.walk(STDLIB):
        dirs[:] = sorted(d for d in dirs if d not in skip)
        for name in sorted(files):
            if name.endswith(suffix):
                yield Path(folder) / name


def _code() -> Iterator[Unit]:
    for path in _stdlib_files(".py"):
        yield from _blocks("code", str(path.relative_to(STDLIB)), path.read_text(encoding="utf-8", errors="replace"))


def _json_values() -> Iterator[tuple[str, Any]]:
    """Real data, as (name, value): see the module docstring."""
    name = sysconfig._get_sysconfigdata_name()  # type: ignore[attr-defined]  # the stdlib file, not the venv's paths
    data = __import__(name).build_time_vars
    keys = sorted(data)
    for at in range(0, len(keys), 60):
        yield f"{name}.build_time_vars[{at}:]", {key: data[key] for key in keys[at : at + 60]}
    for folder, dirs, files in os.walk(STDLIB):
        dirs[:] = sorted(d for d in dirs if d not in ("site-packages", "__pycache__"))
        listing = []
        for file in sorted(files):
            stat = (Path(folder) / file).stat()
            listing.append({"path": str(Path(folder, file).relative_to(STDLIB)), "size": stat.st_size,
                            "mode": oct(stat.st_mode), "mtime": int(stat.st_mtime)})
        if listing:
            yield f"listing:{Path(folder).relative_to(STDLIB)}", {"folder": folder, "files": listing}
    for wheel in sorted((STDLIB / "ensurepip" / "_bundled").glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            for member in sorted(archive.namelist()):
                if member.endswith(".dist-info/RECORD"):
                    rows = [line.split(",") for line in archive.read(member).decode().splitlines() if line]
                    yield f"{wheel.name}:RECORD", [{"path": r[0], "hash": r[1], "size": int(r[2]) if r[2] else None} for r in rows]
                elif member.endswith(".dist-info/METADATA"):
                    headers = HeaderParser().parsestr(archive.read(member).decode())
                    meta: dict[str, Any] = {}
                    for key, value in headers.items():
                        meta.setdefault(key.lower().replace("-", "_"), []).append(value)
                    meta["description"] = headers.get_payload()
                    yield f"{wheel.name}:METADATA", meta
    yield "locale.locale_alias", dict(sorted(locale.locale_alias.items()))
    yield "encodings.aliases", dict(sorted(encodings.aliases.aliases.items()))
    types = mimetypes.MimeTypes(filenames=())
    yield "mimetypes", {"types_map": dict(sorted(types.types_map[True].items())), "encodings_map": types.encodings_map}
    for module in ("json/decoder.py", "textwrap.py", "argparse.py", "shlex.py", "heapq.py", "bisect.py", "fnmatch.py", "base64.py"):
        code = compile((STDLIB / module).read_text(encoding="utf-8"), module, "exec")
        for const in code.co_consts:
            if hasattr(const, "co_code"):
                yield f"dis:{module}:{const.co_name}", {"function": const.co_qualname, "file": module, "instructions": [
                    {"offset": i.offset, "opname": i.opname, "arg": i.arg, "argrepr": i.argrepr, "line": i.positions.lineno if i.positions else None}
                    for i in dis.get_instructions(const)]}
    try:
        import importlib.resources

        schemas = importlib.resources.files("jsonschema_specifications") / "schemas"
        for draft in sorted(schemas.iterdir(), key=lambda p: p.name):
            for schema in sorted(draft.iterdir(), key=lambda p: p.name) if draft.is_dir() else []:
                if schema.name.endswith(".json"):
                    yield f"jsonschema_specifications/{draft.name}/{schema.name}", json.loads(schema.read_text(encoding="utf-8"))
    except ModuleNotFoundError:
        pass


def _json(cls: str) -> Iterator[Unit]:
    for name, value in _json_values():
        text = json.dumps(value, indent=2) if cls == "json-pretty" else json.dumps(value, separators=(",", ":"))
        yield from _blocks(cls, name, text)


def _logs() -> Iterator[Unit]:
    for name in LOG_FILES:
        try:
            with open(name, "rb") as file:
                head = file.read(HEAD_BYTES)
        except OSError:
            continue
        head = head[: head.rfind(b"\n") + 1] if len(head) == HEAD_BYTES else head
        yield from _blocks("logs", name, head.decode("utf-8", errors="replace"))


def read_mo(path: str | Path) -> list[tuple[str, str]]:
    """The (msgid, msgstr) pairs of a GNU gettext ``.mo`` catalog, in file order.

    Plural forms (NUL-separated) come back joined by newlines; the header entry is left out.
    """
    data = Path(path).read_bytes()
    magic = struct.unpack_from("<I", data)[0]
    order = "<" if magic == 0x950412DE else ">"
    _, count, originals, translations = struct.unpack_from(order + "4I", data, 4)
    raw = []
    for index in range(count):
        size, offset = struct.unpack_from(order + "2I", data, originals + 8 * index)
        tsize, toffset = struct.unpack_from(order + "2I", data, translations + 8 * index)
        raw.append((data[offset : offset + size], data[toffset : toffset + tsize]))
    charset = "utf-8"
    for msgid, msgstr in raw:
        if not msgid:
            found = re.search(rb"charset=([-\w]+)", msgstr)
            charset = found.group(1).decode() if found else charset
    pairs = []
    for msgid, msgstr in raw:
        if msgid:
            decode = functools.partial(bytes.decode, encoding=charset, errors="replace")
            pairs.append((decode(msgid).replace("\0", "\n"), decode(msgstr).replace("\0", "\n")))
    return pairs


def _language(cls: str) -> Iterator[Unit]:
    folders, script, samples = LANGUAGES[cls]
    pattern = re.compile(script)
    for folder in folders:
        for catalog in sorted((LOCALE_DIR / folder / "LC_MESSAGES").glob("*.mo")):
            if catalog.name.startswith("iso_"):
                continue
            try:
                messages = [text for _, text in read_mo(catalog) if pattern.search(text)]
            except (struct.error, LookupError):
                continue
            yield from _blocks(cls, str(catalog), "\n".join(messages))
    seen = set()
    for sample in samples:
        path = STDLIB / "test" / "cjkencodings" / f"{sample}-utf8.txt"
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            if text not in seen:
                seen.add(text)
                yield from _blocks(cls, str(path.relative_to(STDLIB)), text)


def _binaries() -> list[Path]:
    found = sorted((STDLIB / "lib-dynload").glob("*.so")) + sorted(p for p in (STDLIB / "__pycache__").glob("*.pyc") if ".opt-" not in p.name)
    return [path for path in found if path.is_file()]


def _encoded(cls: str) -> Iterator[Unit]:
    for path in _binaries():
        with open(path, "rb") as file:
            data = file.read(HEAD_BYTES)
        text = base64.b64encode(data).decode() if cls == "base64" else data.hex()
        yield from _blocks(cls, str(path.relative_to(STDLIB)), text)


def _messages() -> Iterator[Unit]:
    from compaction_suite.benchmarks.traces.format import read_trace

    for trace in sorted(TRACES.glob("*.jsonl")):
        _, messages = read_trace(trace)
        for index, message in enumerate(messages):
            yield Unit("messages", f"{trace.name}:{index + 2}", message=message)  # line number in the file


@functools.cache
def units(cls: str) -> tuple[Unit, ...]:
    """Every unit of class ``cls`` on this machine, both splits; `CorpusError` if none."""
    if cls == "prose":
        found = _prose()
    elif cls == "code":
        found = _code()
    elif cls in ("json-pretty", "json-minified"):
        found = _json(cls)
    elif cls == "logs":
        found = _logs()
    elif cls in LANGUAGES:
        found = _language(cls)
    elif cls in ("base64", "hex"):
        found = _encoded(cls)
    elif cls == "messages":
        found = _messages()
    else:
        raise KeyError(f"unknown class {cls!r}; known: {', '.join(CLASSES)}")
    result = tuple(found)
    if not result:
        raise CorpusError(f"class {cls!r}: no source material on this machine (see benchmarks/CORPUS.md)")
    return result


def fingerprint(cls: str) -> str:
    """sha256 (first 16 hex digits) of a class's material: equal fingerprints, equal corpus."""
    digest = hashlib.sha256()
    for unit in units(cls):
        digest.update(unit.source.encode() + b"\0")
        digest.update(unit.text.encode() if unit.message is None else json.dumps(unit.message, sort_keys=True).encode())
    return digest.hexdigest()[:16]


def describe(cls: str) -> dict[str, Any]:
    """Where a class comes from: unit count and size per split, sources, fingerprint."""
    found = units(cls)
    sizes = {split: sum(len(u.text) or len(json.dumps(u.message)) for u in found if u.split == split) for split in SPLITS}
    counts = {split: sum(1 for u in found if u.split == split) for split in SPLITS}
    origins = sorted({u.source.split("#")[0].rsplit(":", 1)[0] if cls == "messages" else u.source.split("#")[0] for u in found})
    return {"units": counts, "chars": sizes, "sources": len(origins), "examples": origins[:5], "fingerprint": fingerprint(cls)}


def documents(cls: str, n: int, *, split: str = "test", seed: int = 0) -> list[Document]:
    """``n`` documents of class ``cls`` drawn from ``split``, the same for the same seed.

    Text classes: windows of 200..4000 characters (see the module docstring). ``messages``:
    ``n`` distinct messages (fewer if the split has fewer), each as a one-message history.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, not {split!r}")
    pool = [unit for unit in units(cls) if unit.split == split]
    if not pool:
        raise CorpusError(f"class {cls!r}: no units in split {split!r}")
    rng = random.Random(f"compaction-suite corpus/{seed}/{cls}/{split}")
    if cls == "messages":
        chosen = rng.sample(pool, min(n, len(pool)))
        return [Document(cls, split, u.source, messages=(u.message,)) for u in chosen if u.message is not None]
    pool.sort(key=lambda unit: len(unit.text))
    lengths = [len(unit.text) for unit in pool]
    docs = []
    for _ in range(n):
        size = rng.randint(MIN_CHARS, MAX_CHARS)
        first = bisect.bisect_left(lengths, size)
        unit = pool[rng.randrange(first, len(pool))] if first < len(pool) else pool[-1]
        start = rng.randrange(0, max(1, len(unit.text) - size + 1))
        line_start = unit.text.rfind("\n", 0, start) + 1
        if line_start and start - line_start <= 200:  # start at a line start when one is near
            start = line_start
        docs.append(Document(cls, split, f"{unit.source}@{start}", unit.text[start : start + size]))
    return docs


def corpus(n: int, *, split: str = "test", seed: int = 0, classes: tuple[str, ...] = CLASSES) -> dict[str, list[Document]]:
    """``documents(cls, n, ...)`` for every class."""
    return {cls: documents(cls, n, split=split, seed=seed) for cls in classes}
