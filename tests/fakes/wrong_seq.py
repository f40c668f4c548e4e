"""A fake that answers ``compact`` with the wrong ``seq``."""

from _fake import serve

serve("wrong_seq", lambda request: {"seq": request["seq"] + 41, "messages": request["messages"]})
