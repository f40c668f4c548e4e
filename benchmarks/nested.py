"""Running a benchmark file with pytest inside this process, where pytest-benchmark times it."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager


@contextmanager
def environment(**changes: str | None) -> Iterator[None]:
    """Set (or, for None, remove) environment variables for a nested run, then restore them."""
    before = {name: os.environ.get(name) for name in changes}
    try:
        for name, value in changes.items():
            _set(name, value)
        yield
    finally:
        for name, value in before.items():
            _set(name, value)


def _set(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def run_pytest(args: Sequence[str], **env: str | None) -> int:
    """``pytest.main(args)`` serially, with ``env`` set. pytest-benchmark disables itself in an
    xdist worker (it reads ``PYTEST_XDIST_WORKER``), as when the project's tests run on both cores."""
    import pytest

    with environment(PYTEST_XDIST_WORKER=None, **env):
        return int(pytest.main([*args, "-p", "no:xdist"]))
