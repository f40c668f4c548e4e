"""Recorded provider runs: a compactor's real summarizer calls on vcrpy cassettes, replayed offline.

One module per job:

* ``scrub.py``: secrets scrubbed from every recorded exchange, and the vcrpy configurations
  that record (`recorder`) and replay (`player`);
* ``offline.py``: replaying a cassette with outgoing connections blocked (`replaying`,
  `no_network`), a compactor's settings pointed nowhere (`offline_settings`);
* ``endpoint.py``: where a recording is made (`Endpoint`) and the forwarding proxy for
  ``cmd:`` compactors (`ForwardingProxy`);
* ``meta.py``: the one record type written beside every cassette (`Meta`);
* ``record.py``: recording a target against an endpoint (``compaction-suite record``);
* ``errors.py``: re-recording the test double's failure exchanges (``compaction-suite record-errors``).

Compactors are resolved, called and read through the plug-in contract
(``compaction_suite.conformance.target``). See ``cassettes/README.md``.
"""

from __future__ import annotations

from .endpoint import Endpoint, ForwardingProxy, RecordingError
from .meta import Meta, load_meta, meta_path
from .offline import NetworkBlocked, no_network, offline_endpoint, offline_settings, replaying
from .record import CANONICAL_HISTORIES, Recording, default_histories, record
from .scrub import REDACTED, scrub_request, scrub_response, scrub_text

__all__ = [
    "CANONICAL_HISTORIES",
    "REDACTED",
    "Endpoint",
    "ForwardingProxy",
    "Meta",
    "NetworkBlocked",
    "Recording",
    "RecordingError",
    "default_histories",
    "load_meta",
    "meta_path",
    "no_network",
    "offline_endpoint",
    "offline_settings",
    "record",
    "replaying",
    "scrub_request",
    "scrub_response",
    "scrub_text",
]
