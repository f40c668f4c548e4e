"""``python -m conformance`` is ``compaction-suite``."""

from .cli import main

main()
