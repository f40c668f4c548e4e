"""The AWS event-stream binary framing, encoding side: what Bedrock's ``ConverseStream`` answers with
(``application/vnd.amazon.eventstream``), for the summarizer TEST DOUBLE (`conformance.converse`).

botocore decodes these messages (``botocore.eventstream``) but has no encoder, so this one is kept
minimal and checked against botocore's decoder (``tests/test_converse_api.py``). A message is a
prelude (total length, headers length, both 4-byte big-endian, and the CRC32 of those 8 bytes), the
headers, the payload and the CRC32 of everything before it. A header is its name's length (1 byte),
the name, a type byte (7: string) and the value's length (2 bytes) and bytes. Standard library only.
"""

from __future__ import annotations

import binascii
import json
import struct
from collections.abc import Mapping
from typing import Any

STRING = 7
"""The header value type of a UTF-8 string."""
MIMETYPE = "application/vnd.amazon.eventstream"


def _header(name: str, value: str) -> bytes:
    key, data = name.encode("utf-8"), value.encode("utf-8")
    return struct.pack(">B", len(key)) + key + struct.pack(">BH", STRING, len(data)) + data


def message(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One event-stream message with string ``headers`` and ``payload``."""
    encoded = b"".join(_header(name, value) for name, value in headers.items())
    prelude = struct.pack(">II", 12 + len(encoded) + len(payload) + 4, len(encoded))
    head = prelude + struct.pack(">I", binascii.crc32(prelude))
    body = head + encoded + payload
    return body + struct.pack(">I", binascii.crc32(body))


def event(event_type: str, data: Any) -> bytes:
    """An ``event`` message of ``event_type`` whose payload is ``data`` as JSON (how Bedrock sends
    ``messageStart``, ``contentBlockDelta``, ``metadata`` and the rest)."""
    headers = {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"}
    return message(headers, json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def exception(exception_type: str, data: Any) -> bytes:
    """An ``exception`` message of ``exception_type`` (``validationException``, ...) whose payload is
    ``data`` as JSON: how ``ConverseStream`` reports an error after its HTTP 200 (botocore raises it
    as ``EventStreamError`` while the stream is read)."""
    headers = {":exception-type": exception_type, ":content-type": "application/json", ":message-type": "exception"}
    return message(headers, json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
