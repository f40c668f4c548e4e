"""A fake that never answers ``compact`` (the runner must time out), but still obeys ``stop``;
with ``--ignore-stop`` it hangs on ``stop`` too (the runner must kill it)."""

import sys
import time

from _fake import say, serve


def compact(request):
    say("silent.py: thinking forever")
    return


def on_line(line):
    if "--ignore-stop" in sys.argv and '"stop"' in line:
        say("silent.py: ignoring stop")
        time.sleep(3600)


serve("silent", compact, on_line=on_line)
