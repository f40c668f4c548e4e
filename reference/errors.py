"""The one exception the reference raises for a history it will not touch (SPEC HIST-*)."""

from __future__ import annotations


class HistoryError(ValueError):
    """A history breaks a rule of SPEC HIST-*; nothing was changed or repaired.

    ``rule`` is the SPEC clause id (for example ``"HIST-3"``) and ``index`` the
    position of the offending message in the input list (``None`` when the
    input as a whole is wrong, as for non-list input).
    """

    def __init__(self, rule: str, index: int | None, detail: str) -> None:
        self.rule = rule
        self.index = index
        self.detail = detail
        where = "history" if index is None else f"message {index}"
        super().__init__(f"{rule}: {where}: {detail}")
