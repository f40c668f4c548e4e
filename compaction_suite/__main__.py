"""``python -m compaction_suite`` is ``compaction-suite``."""

from compaction_suite.cli import main

main()
