"""compaction-suite: a conformance and benchmark suite for LLM-agent context compaction.

Everything installs under this one package (the repository keeps its folders; the build
maps them here): ``compaction_suite.reference`` (the reference compactor),
``compaction_suite.conformance`` (the verifier and its pytest plugin),
``compaction_suite.benchmarks``, ``compaction_suite.adapters`` (framework adapters) and
``compaction_suite.cli`` (the ``compaction-suite`` command). `Compactor` and `Capabilities` are the
plug-in contract as types (`compaction_suite.compactor`), for a compactor's author to check against.

PYTEST_DONT_REWRITE: ``compaction-suite check`` has imported this package before it starts
pytest, which then marks it for assertion rewriting through the plugin's entry point and warns
that it is already imported (in a wheel install). This module asserts nothing; the modules
pytest imports later are rewritten as usual.
"""

from compaction_suite.compactor import Capabilities, Compactor

__version__ = "0.2.0"
__all__ = ["Capabilities", "Compactor"]
