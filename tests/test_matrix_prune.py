"""Pruning the version sweep's environment cache (SPEC Part C, "Version sweeps", Decision on
pruning; `compaction_suite.matrix.pruning`, ``compaction-suite prune-envs``).

The environments here are stand-ins: folders with a ``pyvenv.cfg`` and a marker, their times set
by hand, so no installer runs. The locks are real ``flock`` locks taken by this test.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from compaction_suite.cli import main
from compaction_suite.matrix.environments import MARKER, Builder, lock_of
from compaction_suite.matrix.pruning import last_used, prune

DAY = 86400
NOW = time.time()


def environment(root: Path, name: str, days_ago: float, locked_days_ago: float | None = None) -> Path:
    """A stand-in environment built ``days_ago`` and last held ``locked_days_ago`` (None: never held)."""
    home = root / name
    (home / "lib").mkdir(parents=True)
    (home / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (home / "lib" / "big.bin").write_bytes(b"x" * 50_000)
    (home / MARKER).write_text(json.dumps({"requirements": [name], "suite": "s"}))
    for f in (home / "pyvenv.cfg", home / MARKER):
        os.utime(f, (NOW - days_ago * DAY, NOW - days_ago * DAY))
    if locked_days_ago is not None:
        lock_of(home).touch()
        os.utime(lock_of(home), (NOW - locked_days_ago * DAY, NOW - locked_days_ago * DAY))
    return home


def test_removes_what_no_run_used_for_the_time_and_keeps_the_rest(tmp_path: Path) -> None:
    old = environment(tmp_path, "old-1", days_ago=40, locked_days_ago=35)
    young = environment(tmp_path, "young-1", days_ago=3)
    old_but_used = environment(tmp_path, "used-1", days_ago=90, locked_days_ago=1)
    stranger = tmp_path / "notes"
    stranger.mkdir()
    os.utime(stranger, (NOW - 99 * DAY, NOW - 99 * DAY))
    done = prune(tmp_path, 30 * DAY, now=NOW)
    assert done.removed == [old] and not old.exists()
    assert young.exists() and old_but_used.exists() and stranger.exists()
    assert done.kept == 2 and not done.in_use
    assert done.freed >= 50_000
    assert lock_of(old).exists(), "the lock file stays: removing it could let two runs hold one environment"


def test_an_environment_another_run_holds_is_kept_whatever_its_age(tmp_path: Path) -> None:
    held = environment(tmp_path, "held-1", days_ago=60, locked_days_ago=60)
    with lock_of(held).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # another open file description: as another run's
        done = prune(tmp_path, 30 * DAY, now=NOW)
    assert held.exists() and done.in_use == [held] and not done.removed


def test_a_dry_run_removes_and_writes_nothing(tmp_path: Path) -> None:
    old = environment(tmp_path, "old-1", days_ago=40)
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    done = prune(tmp_path, 30 * DAY, dry_run=True, now=NOW)
    assert done.removed == [old] and done.freed >= 50_000
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before, "no lock file is created either"


def test_wheel_folders_left_by_a_stopped_run_go_when_old(tmp_path: Path) -> None:
    left = tmp_path / "wheels" / "build-abc"
    fresh = tmp_path / "wheels" / "build-def"
    for folder, days in ((left, 10), (fresh, 0)):
        folder.mkdir(parents=True)
        (folder / "compaction_suite-0.1-py3-none-any.whl").write_bytes(b"w" * 1000)
        os.utime(folder, (NOW - days * DAY, NOW - days * DAY))
    done = prune(tmp_path, 1 * DAY, now=NOW)
    assert done.removed == [left] and fresh.exists()


def test_holding_an_environment_marks_it_used(tmp_path: Path) -> None:
    """`Builder.using` touches the lock, so an environment a sweep keeps using is never pruned."""
    builder = Builder(tmp_path, share_suite=True)
    requirements = ["framework==1.0"]
    home = builder._home(requirements)
    environment(tmp_path, home.name, days_ago=50, locked_days_ago=50)
    (home / MARKER).write_text(json.dumps({"requirements": requirements, "suite": builder.suite_requirement()[1]}))
    os.utime(home / MARKER, (NOW - 50 * DAY, NOW - 50 * DAY))
    with builder.using(requirements, tmp_path / "log.txt") as python:
        assert python == home / "bin" / "python"
    assert last_used(home) > NOW - DAY
    assert not prune(tmp_path, 30 * DAY).removed


def test_the_command_says_what_it_removed_in_one_line(tmp_path: Path) -> None:
    environment(tmp_path, "old-1", days_ago=40)
    environment(tmp_path, "young-1", days_ago=1)
    dry = CliRunner().invoke(main, ["prune-envs", "--unused-for", "30", "--cache-dir", str(tmp_path), "--dry-run"])
    assert dry.exit_code == 0 and (tmp_path / "old-1").exists()
    assert dry.output.startswith("would remove 1 folders unused for 30 days (") and "kept 1;" in dry.output
    done = CliRunner().invoke(main, ["prune-envs", "--unused-for", "30", "--cache-dir", str(tmp_path)])
    assert done.exit_code == 0 and len(done.output.splitlines()) == 1
    assert done.output.startswith("removed 1 folders") and not (tmp_path / "old-1").exists()


def test_no_cache_yet_is_nothing_to_prune(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "nothing"))
    result = CliRunner().invoke(main, ["prune-envs", "--unused-for", "1"])
    assert result.exit_code == 0 and "does not exist" in result.output
    assert not (tmp_path / "nothing").exists()
