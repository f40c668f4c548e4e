"""A fake that crashes on every compaction and says so: answer ``errored`` with a traceback."""

from _fake import serve

TRACEBACK = 'Traceback (most recent call last):\n  File "crash.py", line 1, in compact\nKeyError: \'content\''

serve("crash", lambda request: {"seq": request["seq"], "errored": {"message": "KeyError: 'content'", "context": TRACEBACK}})
