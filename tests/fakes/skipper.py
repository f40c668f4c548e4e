"""A fake that supports no case: answer ``skipped``."""

from _fake import serve

serve("skipper", lambda request: {"seq": request["seq"], "skipped": {"message": "multimodal histories are not supported"}})
