"""Scrubbing secrets from recorded exchanges, and the vcrpy configurations that record and replay.

The credential headers in `SECRET_HEADERS` are dropped from requests and responses, and
key-like strings (and the literal key in use) are replaced by ``REDACTED`` in URLs, headers
and bodies (`scrub_text`). Replay matches on method, path and body (`MATCH_ON`; vcrpy
compares JSON bodies parsed).
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import vcr
from vcr.request import Request as VcrRequest

MATCH_ON = ("method", "path", "body")
"""How a replayed request finds its recording (vcrpy's ``body`` matcher parses JSON bodies)."""
SECRET_HEADERS = (
    "authorization",
    "proxy-authorization",
    "api-key",
    "x-api-key",
    "openai-organization",
    "openai-project",
    "cookie",
    "set-cookie",
)
"""Headers dropped from every recorded request and response."""
SECRET_QUERY = ("api-key", "api_key", "key", "access_token", "token")
"""Query parameters replaced in recorded URLs."""
REDACTED = "REDACTED"

_KEY_PATTERNS = (
    re.compile(r"\bsk-[A-Za-z0-9][A-Za-z0-9_-]{15,}"),  # OpenAI-style (sk-..., sk-proj-...)
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key ids
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),  # JWTs
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
)
_PREFIXED_PATTERNS = (
    re.compile(r"(?i)(\bbearer\s+)(?!REDACTED)([A-Za-z0-9._~+/-]{12,}=*)"),
    re.compile(
        r"""(?i)((?:api[-_]?key|secret[-_]?key|access[-_]?token|client[-_]?secret|password)["']?\s*[:=]\s*["']?)"""
        r"""(?!REDACTED)([^\s"',;]{8,})"""
    ),
)


def scrub_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with the literal ``secrets`` and anything that looks like a credential replaced."""
    for secret in secrets:
        if secret and len(secret) >= 8:
            text = text.replace(secret, REDACTED)
    for pattern in _KEY_PATTERNS:
        text = pattern.sub(REDACTED, text)
    for pattern in _PREFIXED_PATTERNS:
        text = pattern.sub(lambda match: match.group(1) + REDACTED, text)
    return text


def _scrub_body(body: Any, secrets: Sequence[str]) -> Any:
    if isinstance(body, bytes):
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return body
        scrubbed = scrub_text(text, secrets)
        return body if scrubbed == text else scrubbed.encode("utf-8")
    if isinstance(body, str):
        return scrub_text(body, secrets)
    return body


def _scrub_url(url: str, secrets: Sequence[str]) -> str:
    parts = urlsplit(url)
    if not parts.query:
        return scrub_text(url, secrets)
    query = [(k, REDACTED if k.lower() in SECRET_QUERY else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    return scrub_text(urlunsplit(parts._replace(query=urlencode(query))), secrets)


def scrub_request(request: VcrRequest, secrets: Sequence[str] = ()) -> VcrRequest:
    """vcrpy ``before_record_request``: credential headers dropped, keys redacted in URL and body."""
    request = copy.copy(request)
    request.headers = {k: scrub_text(str(v), secrets) for k, v in request.headers.items() if k.lower() not in SECRET_HEADERS}
    request.uri = _scrub_url(request.uri, secrets)
    request.body = _scrub_body(request.body, secrets)
    return request


def scrub_response(response: dict[str, Any], secrets: Sequence[str] = ()) -> dict[str, Any]:
    """vcrpy ``before_record_response``: credential headers dropped, keys redacted in the body."""
    headers = {
        name: [scrub_text(str(v), secrets) for v in (values if isinstance(values, list) else [values])]
        for name, values in (response.get("headers") or {}).items()
        if name.lower() not in SECRET_HEADERS
    }
    body = response.get("body") or {}
    before = body.get("string")
    after = _scrub_body(before, secrets)
    if after != before:
        length = len(after.encode("utf-8") if isinstance(after, str) else after)
        headers = {n: ([str(length)] if n.lower() == "content-length" else v) for n, v in headers.items()}
    return {**response, "headers": headers, "body": {**body, "string": after}}


def recorder(secrets: Iterable[str] = ()) -> vcr.VCR:
    """A VCR that records every request (mode ``all``), scrubbed as the module docstring says."""
    secrets = tuple(s for s in secrets if s and len(s) >= 8)
    return vcr.VCR(
        record_mode="all",
        match_on=MATCH_ON,
        filter_headers=SECRET_HEADERS,
        filter_query_parameters=SECRET_QUERY,
        before_record_request=functools.partial(scrub_request, secrets=secrets),
        before_record_response=functools.partial(scrub_response, secrets=secrets),
        decode_compressed_response=True,
    )


def player(**options: Any) -> vcr.VCR:
    """A VCR that only replays (mode ``none``): an unrecorded request raises."""
    return vcr.VCR(record_mode="none", match_on=MATCH_ON, decode_compressed_response=True, **options)
