"""compaction-suite: a conformance and benchmark suite for LLM-agent context compaction.

Everything installs under this one package (the repository keeps its folders; the build
maps them here): ``compaction_suite.reference`` (the reference compactor),
``compaction_suite.conformance`` (the verifier and its pytest plugin),
``compaction_suite.benchmarks``, ``compaction_suite.adapters`` (framework adapters) and
``compaction_suite.cli`` (the ``compaction-suite`` command).

PYTEST_DONT_REWRITE: ``compaction-suite check`` has imported this package before it starts
pytest, which then marks it for assertion rewriting through the plugin's entry point and warns
that it is already imported (in a wheel install). This module asserts nothing; the modules
pytest imports later are rewritten as usual.
"""

__version__ = "0.2.0"
