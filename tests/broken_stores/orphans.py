"""Delete retention also drops the assistant message opening the first tool round it kept,
orphaning that round's tool results; it loads without checking, as a naive store would."""

from __future__ import annotations

from compaction_suite.reference.points import DurableHistory

from ._base import target

EXPECTED = "STORE-6"
REASON = r"tool result '\w+' has no matching call"


class OrphaningHistory(DurableHistory):
    def load(self, session, branch="main"):
        return self.store._read(session, branch)

    def compact(self, session, branch="main", *, retention=None, **run):
        events = len(self.store.events(session, branch))
        view = super().compact(session, branch, retention=retention, **run)
        if retention == "delete" and len(self.store.events(session, branch)) > events:
            opener = next((r for r in self.store.load(session, branch) if r.message.get("tool_calls")), None)
            if opener is not None:
                self.store._db.execute("DELETE FROM messages WHERE session=? AND branch=? AND id=?", (session, branch, opener.id))
        return view


def factory(settings):
    return target(settings, history=OrphaningHistory)
