"""A fake that refuses every history: answer ``rejected``, as a compactor raises ValueError."""

from _fake import serve

serve("rejecter", lambda request: {"seq": request["seq"], "rejected": {"message": "HIST-3 at message 1: orphan tool result"}})
