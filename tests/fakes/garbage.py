"""A fake that answers ``compact`` with a line that is not JSON, or with ``--invalid``
a JSON line that is no valid answer; it says so on standard error first."""

import sys

from _fake import say, send, serve


def compact(request):
    say("garbage.py: about to misbehave")
    if "--invalid" in sys.argv:
        send({"seq": request["seq"], "messages": "not a list"})
    else:
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
    return


serve("garbage", compact)
