"""A fake that speaks only protocol version 2, so it refuses ``start`` for version 1."""

from _fake import serve


def start(request):
    return {"ok": False, "error": f"only protocol version 2 is spoken here, not {request['version']}"}


serve("old_version", lambda request: None, on_start=start)
