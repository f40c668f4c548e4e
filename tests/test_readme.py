"""The README's runnable examples run as shown (issue 15: a snippet a user copies must work)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from checking import valid_report

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _python_block_after(heading: str) -> str:
    section = README[README.index(heading) :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, f"no python block after {heading!r}"
    return match.group(1)


def test_durable_history_snippet_runs_twice_and_prints_what_its_comment_says(tmp_path: Path) -> None:
    """A snippet a user copies runs again as it ran the first time, and leaves nothing behind
    in the folder it ran in (issue 22: the store used to stay as agent.db, and a second run raised)."""
    code = _python_block_after("## Durable history")
    promised = re.search(r"print\(.*\)\s+# (.+)", code)
    assert promised
    for _ in range(2):
        printed = io.StringIO()
        with contextlib.chdir(tmp_path), contextlib.redirect_stdout(printed):
            exec(compile(code, "README.md", "exec"), {})
        assert printed.getvalue().strip() == promised.group(1).strip()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [line for line in README.splitlines() if line.startswith("compaction-suite check --path examples/")])
def test_example_compactor_conforms_as_the_readme_runs_it(command: str, tmp_path: Path) -> None:
    args = [sys.executable, "-m", "compaction_suite", *command.split()[1:], "--fast", "--report", str(tmp_path / "r.json")]
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "conforms" in done.stdout
    valid_report(json.loads((tmp_path / "r.json").read_text(encoding="utf-8")))


def test_ci_runs_the_readme_test_command_exactly() -> None:
    """`.ci/run` is the README's test command (ruff, mypy, the tests), not a copy that drifts."""
    command = next(line for line in README.splitlines() if line.startswith("python3 -m venv") and "pytest" in line)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert ci[-1] == command
    assert ".venv/bin/ruff check ." in command and ".ci/typecheck" in command


def _table_after(heading: str) -> list[list[str]]:
    section = README[README.index(heading) :]
    rows = re.findall(r"^\|(.+)\|$", section, re.M)
    table: list[list[str]] = []
    for row in rows:
        cells = [cell.strip().strip("*") for cell in row.split("|")]
        if set(cells[0]) <= {"-"}:
            continue
        table.append(cells)
        if cells[0] == "all":
            break
    return table[1:]


def test_the_readme_counts_the_reported_bugs_as_the_list_does() -> None:
    """The README's recall table is the list's own count (one source for each fact): per framework,
    entries caught at their reported release over entries listed, and the total."""
    bugs = json.loads((ROOT / "adapters" / "reported_bugs.json").read_text(encoding="utf-8"))["bugs"]
    listed: dict[str, list[int]] = {}
    for bug in bugs:
        counts = listed.setdefault(bug["framework"], [0, 0])
        counts[0] += bug["after"]["caught"] is True
        counts[1] += 1
    caught, total = sum(c for c, _ in listed.values()), len(bugs)
    expected = {name: f"{c} / {n}" for name, (c, n) in listed.items()}
    expected["all"] = f"{caught} / {total} ({100 * caught / total:.0f}%)"
    shown = {cells[0]: cells[1] for cells in _table_after("**The reported bugs, now**")}
    assert shown == expected


def test_the_readme_headline_is_the_committed_matrix() -> None:
    """The README's matrix headline repeats `matrix/matrix.md`'s "What users hit" figures: the
    configurations with a reachable MUST finding, the documented findings counted apart, and each
    harm class's configurations and findings."""
    matrix = (ROOT / "matrix" / "matrix.md").read_text(encoding="utf-8")
    found = re.search(r"^(\d+) of (\d+) configurations have a MUST violation", matrix, re.M)
    documented = re.search(r"^(\d+) findings the framework documents", matrix, re.M)
    harms = re.findall(r"^- \*\*(\w+) \(.*\)\*\*: (\d+) configurations \((\d+) findings\)", matrix, re.M)
    assert found and documented and len(harms) == 4
    readme = " ".join(README.split())
    assert f"**{found[1]} of {found[2]} counted configurations have a MUST violation" in readme
    assert f"{documented[1]} findings a framework documents as its contract counted apart" in readme
    first, *rest = harms
    shown = f"By harm: {first[0]} {first[1]} configurations ({first[2]} findings), "
    shown += ", ".join(f"{name} {configs} ({findings})" for name, configs, findings in rest)
    assert shown + "." in readme
