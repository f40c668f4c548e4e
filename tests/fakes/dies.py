"""A fake that exits with status 3 in the middle of the session, when asked to ``compact``."""

import sys

from _fake import say, serve


def compact(request):
    say("dies.py: fatal: out of cheese")
    sys.exit(3)


serve("dies", compact)
