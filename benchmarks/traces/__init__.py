"""Agent traces: the JSONL trace format, a recorder, and importers (see FORMAT.md).

* `benchmarks.traces.format`: `read_trace`, `write_trace`, `make_header`,
  `TraceFormatError` (re-exported here).
* `benchmarks.traces.record`: the recorder (``python -m benchmarks.traces.record``).
* `benchmarks.traces.importers`: `import_tau_bench`, `import_swe_agent`,
  `TraceImportError` (``python -m benchmarks.traces.importers``). Not imported
  here, so that running those modules with ``-m`` stays warning-free.
"""

from .format import FORMAT_NAME, FORMAT_VERSION, TraceFormatError, make_header, read_trace, write_trace

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "TraceFormatError", "make_header", "read_trace", "write_trace"]
