"""Agent traces: the JSONL trace format, a recorder, and importers (see FORMAT.md).

* `compaction_suite.benchmarks.traces.format`: `read_trace`, `write_trace`, `make_header`,
  `TraceFormatError` (re-exported here).
* `compaction_suite.benchmarks.traces.record`: the recorder (``compaction-suite traces record``).
* `compaction_suite.benchmarks.traces.importers`: `import_tau_bench`, `import_swe_agent`,
  `TraceImportError` (``compaction-suite traces import``). Not imported
  here, so that running those modules with ``-m`` stays warning-free.
"""

from .format import FORMAT_NAME, FORMAT_VERSION, TraceFormatError, make_header, read_trace, write_trace

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "TraceFormatError", "make_header", "read_trace", "write_trace"]
