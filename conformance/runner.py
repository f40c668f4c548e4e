"""``compaction-suite check`` in a fresh interpreter, as a user runs it, and its JSON report read back.

One helper for everything that checks a compactor from outside: the framework matrix
(``compaction-suite matrix``), the battery benchmark and the tests of the controls.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class CheckRun:
    """What one ``check`` run left: its exit status, its report, its output."""

    exit_code: int | None
    """None when it was stopped at the timeout."""
    report: dict[str, Any] | None
    """The JSON report (``--report``), None when none was written."""
    output: str
    """Standard output then standard error."""
    seconds: float

    def tail(self, lines: int = 15) -> str:
        """The last lines of the output, for a failure message."""
        return "\n".join(self.output.strip().splitlines()[-lines:])


def run_check(
    target: str,
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    timeout: float = 600.0,
    python: str | Path | None = None,
) -> CheckRun:
    """``python -m compaction_suite check TARGET --report R.json ARGS`` in a subprocess.

    ``env`` replaces the environment when given (pass ``os.environ`` plus changes); ``python`` is
    the interpreter (default: this one; the matrix's version sweep gives each release's own).
    """
    with tempfile.TemporaryDirectory(prefix="compaction-check-") as folder:
        report_path = Path(folder) / "report.json"
        command = [str(python or sys.executable), "-m", "compaction_suite", "check", target, "--report", str(report_path), *args]
        started = time.monotonic()
        try:
            done = subprocess.run(command, cwd=cwd, env=None if env is None else dict(env), capture_output=True, text=True, timeout=timeout, check=False)
            exit_code, output = done.returncode, done.stdout + done.stderr
        except subprocess.TimeoutExpired as expired:
            exit_code, output = None, f"{_text(expired.stdout)}{_text(expired.stderr)}\ntimed out after {timeout:.0f}s"
        seconds = time.monotonic() - started
        report = json.loads(report_path.read_text(encoding="utf-8")) if report_path.is_file() else None
    return CheckRun(exit_code, report, output, seconds)


def _text(data: str | bytes | None) -> str:
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else data or ""
