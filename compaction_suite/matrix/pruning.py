"""Removing the sweep's environments that have not been used for a while (SPEC Part C, "Version
sweeps", Decision on pruning the environment cache).

A sweep keeps one environment per release and set of companions, and reuses it, so the cache only
grows: a few hundred MB per release, tens of GB after a season of sweeps. `prune` removes the
environments of a cache folder that no run has used for a given time. A run marks an environment as
used each time it holds it (`environments.Builder.using` touches its lock file), so "unused" is
the newest of the lock's, the marker's and the environment's own ``pyvenv.cfg`` times.

It removes only what a sweep made: a folder holding a ``pyvenv.cfg`` (a virtual environment), and
the wheel folders left behind by a run that was killed before it could remove its own. An
environment another run holds (its lock taken) is kept and counted as in use, whatever its age:
the prune takes each lock without waiting, and removes the environment while holding it. The lock
files themselves stay (empty files): removing one while another run is opening it would let two
runs hold the same environment under two different locks.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from .environments import MARKER, held, lock_of

WHEELS = "wheels"
"""The folder of a cache where each run builds its wheel of the checkout (`Builder._wheel`)."""


@dataclass
class Pruned:
    """What a prune removed (or, in a dry run, would remove) and what it kept."""

    removed: list[Path] = field(default_factory=list)
    freed: int = 0
    """Bytes on disk of what was removed (each file counted once)."""
    kept: int = 0
    in_use: list[Path] = field(default_factory=list)
    """Environments old enough to remove that another run held."""


def prune(root: Path, unused_for: float, dry_run: bool = False, now: float | None = None) -> Pruned:
    """Remove the environments in ``root`` no run has used for ``unused_for`` seconds, and the wheel
    folders left that long; with ``dry_run``, remove nothing and say what would go."""
    cutoff = (time.time() if now is None else now) - unused_for
    done = Pruned()
    for home in sorted(p for p in root.iterdir() if (p / "pyvenv.cfg").is_file()):
        if last_used(home) > cutoff:
            done.kept += 1
            continue
        was_held = lock_of(home).exists()
        with held(lock_of(home), wait=False, create=not dry_run) as taken:
            if not taken:
                done.in_use.append(home)
            elif was_held and last_used(home) > cutoff:  # a run held it between the look and the lock
                done.kept += 1
            else:
                _remove(home, done, dry_run)
    wheels = root / WHEELS
    for built in sorted(wheels.glob("build-*")) if wheels.is_dir() else []:
        if built.is_dir() and built.stat().st_mtime <= cutoff:
            _remove(built, done, dry_run)
    return done


def last_used(home: Path) -> float:
    """When a run last held the environment ``home``, built it or updated its compaction-suite."""
    times = [p.stat().st_mtime for p in (lock_of(home), home / MARKER, home / "pyvenv.cfg") if p.exists()]
    return max(times)


def _remove(path: Path, done: Pruned, dry_run: bool) -> None:
    done.freed += disk_usage(path)
    done.removed.append(path)
    if not dry_run:
        shutil.rmtree(path)


def disk_usage(path: Path) -> int:
    """Bytes ``path`` takes on disk (allocated blocks; a file linked twice inside it counted once;
    links to elsewhere not followed)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            info = os.lstat(os.path.join(folder, name))
            if (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += getattr(info, "st_blocks", 0) * 512 or info.st_size
    return total
