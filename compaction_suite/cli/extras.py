"""`require`: a command's optional extra present, or a contract error with the command that installs it."""

from __future__ import annotations

import importlib.util

from ..extras import install_hint
from .contract import BadInput


def require(extra: str, *modules: str) -> None:
    """`BadInput` naming the extra and how to install it unless every module in ``modules`` is importable."""
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        raise BadInput(f"this command needs the {extra} extra (missing: {', '.join(missing)}): {install_hint(extra)}")
