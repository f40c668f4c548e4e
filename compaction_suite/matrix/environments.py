"""One isolated Python environment per framework release, for the matrix's version sweep.

Each environment is a virtual environment built by an existing tool, ``uv`` where it is on PATH, else
``python -m venv`` and pip, holding compaction-suite (a wheel of the current checkout, or the
installed release from the index) and the pinned framework release with its own dependencies.
Environments live in a cache directory outside any source tree, by default
``$XDG_CACHE_HOME/compaction-suite/envs`` (``~/.cache/compaction-suite/envs``), named by the
requirements they hold, and are reused: a later sweep only reinstalls compaction-suite into them
when it changed. Nothing is written to the checkout. Runs sharing the cache may run at once: each
builds its wheel in a folder of its own, and holds an environment (a lock file beside it) from
installing into it until its checks there are done, so a run from another checkout waits instead
of replacing the suite under it (`Builder.using`; POSIX ``flock``, where the platform has it).

``share_suite=True`` (the matrix's ``--share-suite``) installs only the framework release and lets
the environment import compaction-suite and its dependencies from this interpreter, after its own
packages (a ``.pth`` line): for a machine without the package index, where the release itself comes
from ``--find-links``.

``dated=True`` (a sweep's default, ``--companions release``) resolves what is installed beside a release
as of that release: from the index's files uploaded up to a day after the release (`released_at`,
`GRACE`), by uv's ``--exclude-newer`` or pip's ``--uploaded-prior-to`` (pip 26.0 and newer; an older pip
first installs one into the environment; pip reads no configuration file there, since a local index or
folder one names, a machine's mirror, holds files pip cannot date). A release whose requirements do not
cap a companion breaks beside today's (openai-agents 0.6.6 beside openai 2.54.0); its users ran it with
the companions of its day. compaction-suite is installed after them, unbounded, keeping what is there
where its own requirements allow.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

SUITE = "compaction-suite"
INDEX = "https://pypi.org/simple"
"""The index whose simple API gives a release's upload time (`released_at`)."""
GRACE = timedelta(days=1)
"""How long after a release its companions may have been uploaded (those released with it the same day)."""
DATED_PIP = "pip>=26.0"
"""The first pip with ``--uploaded-prior-to``."""
MARKER = "compaction-suite-env.json"
"""The file in an environment saying what it holds, written once it is built."""


class InstallFailed(Exception):
    """An environment could not be built (the installer's last lines say why)."""


def cache_dir(given: str | Path | None = None) -> Path:
    """Where environments are kept: ``given``, else ``$XDG_CACHE_HOME/compaction-suite/envs``."""
    if given:
        return Path(given)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "compaction-suite" / "envs"


def installer() -> str:
    """``"uv"`` when uv is on PATH, else ``"pip"``."""
    return "uv" if shutil.which("uv") else "pip"


def checkout() -> Path | None:
    """The source checkout this compaction-suite runs from (a folder with its pyproject), or None."""
    root = Path(__file__).resolve().parents[2]
    pyproject = root / "pyproject.toml"
    if pyproject.is_file() and f'name = "{SUITE}"' in pyproject.read_text(encoding="utf-8"):
        return root
    return None


@dataclass
class Builder:
    """Builds and reuses environments in ``root``; ``pip_args`` go to every install (``--find-links
    DIR``, ``--no-index``)."""

    root: Path
    pip_args: Sequence[str] = ()
    share_suite: bool = False
    tool: str = field(default_factory=installer)
    dated: bool = False
    """Resolve what a release is installed with as of that release (`as_of`)."""
    _suite: tuple[str, str] | None = None

    @contextlib.contextmanager
    def using(self, requirements: Sequence[str], log: Path, as_of: datetime | None = None) -> Iterator[Path]:
        """The interpreter of an environment holding ``requirements`` and this compaction-suite, built
        on first use and held by this run until the block ends (`held`): `InstallFailed` when the
        installer fails. With ``as_of``, ``requirements`` resolve from files uploaded by then."""
        home = self._home(requirements, as_of)
        with held(lock_of(home)):
            os.utime(lock_of(home))  # when it was last used: what `pruning.prune` reads
            yield self.environment(requirements, log, as_of)

    def as_of(self, distribution: str, version: str) -> datetime | None:
        """Up to when a sweep of ``distribution`` at ``version`` resolves its companions: a day after the
        release's upload (`released_at`, `GRACE`), or None (today) when the builder is not ``dated``, the
        index is not used (``--no-index``) or the upload time cannot be read."""
        if not self.dated or "--no-index" in self.pip_args:
            return None
        uploaded = released_at(distribution, version)
        return uploaded + GRACE if uploaded else None

    def _home(self, requirements: Sequence[str], as_of: datetime | None = None) -> Path:
        keyed: list[object] = [sys.version.split()[0], self.share_suite, sorted(requirements)]
        if as_of is not None:  # an undated environment keeps the key it had
            keyed.append(f"dated, no pip configuration files, {_stamp(as_of)}")
        key = hashlib.sha256(json.dumps(keyed).encode()).hexdigest()[:12]
        name = "-".join(r.replace("==", "-").replace("[", "").replace("]", "") for r in requirements)[:80]
        return self.root / f"{name}-{key}"

    def environment(self, requirements: Sequence[str], log: Path, as_of: datetime | None = None) -> Path:
        """The interpreter of an environment holding ``requirements`` and compaction-suite, built on
        first use; `InstallFailed` when the installer fails. Unheld: a run that checks there takes
        it through `using`."""
        home = self._home(requirements, as_of)
        python = home / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
        marker = home / MARKER
        suite, digest = self.suite_requirement()
        built = _marker(marker)
        if built is not None and built.get("suite") == digest:
            return python
        if built is None:  # never built, or left half-written by a run that was stopped: built afresh
            if home.exists():
                shutil.rmtree(home)
            self._create(home, log)
            if as_of is None:
                self._install(python, [*requirements, *([] if self.share_suite else [suite])], log)
            else:  # the release and its companions as of its date, then the suite beside them
                self._install(python, requirements, log, as_of)
                if not self.share_suite:
                    self._install(python, [suite], log)
        elif not self.share_suite:
            self._install(python, ["--no-deps", "--force-reinstall", suite], log)
        if self.share_suite:
            self._share(python)
        _write_marker(marker, {"requirements": sorted(requirements), "suite": digest})
        return python

    def suite_requirement(self) -> tuple[str, str]:
        """What installs compaction-suite, and what identifies it (an environment holding another is
        updated): a wheel of the checkout (built once per builder; its sha256), the shared
        interpreter's (``share_suite``), or the installed release from the index."""
        if self._suite is None:
            if self.share_suite:
                self._suite = ("", f"shared:{sys.prefix}")
            elif (root := checkout()) is not None:
                wheel = self._wheel(root)
                self._suite = (str(wheel), hashlib.sha256(wheel.read_bytes()).hexdigest())
            else:
                from importlib import metadata

                release = f"{SUITE}=={metadata.version(SUITE)}"
                self._suite = (release, release)
        return self._suite

    def _wheel(self, root: Path) -> Path:
        """A wheel of the checkout, in a folder of this builder's own (removed when the process ends):
        a run from another checkout sharing the cache builds its own beside it."""
        (self.root / "wheels").mkdir(parents=True, exist_ok=True)
        wheels = Path(tempfile.mkdtemp(prefix="build-", dir=self.root / "wheels"))
        atexit.register(shutil.rmtree, wheels, True)
        _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(root)], wheels / "build.log")
        built = sorted(wheels.glob("compaction_suite-*.whl"))
        if not built:
            raise InstallFailed(f"no wheel of {root} was built (see {wheels / 'build.log'})")
        return built[0]

    def _create(self, home: Path, log: Path) -> None:
        home.parent.mkdir(parents=True, exist_ok=True)
        if self.tool == "uv":
            _run(["uv", "venv", "-q", "--python", sys.executable, str(home)], log)
        else:  # no pip inside: this interpreter's pip installs into it (pip --python)
            _run([sys.executable, "-m", "venv", "--without-pip", str(home)], log)

    def _install(self, python: Path, requirements: Sequence[str], log: Path, as_of: datetime | None = None) -> None:
        if self.tool == "uv":
            dated = ["--exclude-newer", _stamp(as_of)] if as_of else []
            command = ["uv", "pip", "install", "-q", "--python", str(python), *self.pip_args, *dated, *requirements]
        else:
            pip = [sys.executable, "-m", "pip", "--python", str(python)]
            if as_of and not _pip_dates(sys.executable):
                _run([*pip, "install", "-q", "--disable-pip-version-check", *self.pip_args, DATED_PIP], log, "pip")
                pip = [str(python), "-m", "pip"]
            dated = [f"--uploaded-prior-to={_stamp(as_of)}"] if as_of else []
            command = [*pip, "install", "-q", "--disable-pip-version-check", *self.pip_args, *dated, *requirements]
            if as_of:  # pip dates no file of a local index or folder: a machine's configured ones are left out
                _run(command, log, self.tool, {**os.environ, "PIP_CONFIG_FILE": os.devnull})
                return
        _run(command, log, self.tool)

    def _share(self, python: Path) -> None:
        """Let the environment import what this interpreter has, after its own packages."""
        purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], capture_output=True, text=True, check=True).stdout.strip()
        paths = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
        # An "import" line runs at start-up: addsitedir appends each folder and reads its own .pth
        # files (an editable install's finder among them), after the environment's packages.
        line = "import site; " + "; ".join(f"site.addsitedir({p!r})" for p in paths)
        Path(purelib, "zz-compaction-suite-shared.pth").write_text(line + "\n", encoding="utf-8")


def _marker(marker: Path) -> dict[str, object] | None:
    """What an environment's marker says it holds, or None when there is no readable marker: an
    environment with an empty or unparsable one (a run stopped while writing it, before markers were
    written whole) is rebuilt rather than trusted or crashed on."""
    try:
        held = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return held if isinstance(held, dict) else None


def _write_marker(marker: Path, held: dict[str, object]) -> None:
    """Write the marker whole or not at all (a temporary file beside it, then renamed over it)."""
    partial = marker.with_name(marker.name + ".partial")
    partial.write_text(json.dumps(held), encoding="utf-8")
    partial.replace(marker)


def lock_of(home: Path) -> Path:
    """The lock file beside the environment ``home`` that a run holds while it checks there."""
    return home.with_name(home.name + ".lock")


@contextlib.contextmanager
def held(lock: Path, *, wait: bool = True, create: bool = True) -> Iterator[bool]:
    """An exclusive lock on ``lock`` for the block (POSIX ``flock``), and whether it is held: with
    ``wait`` the block waits for another run to let go; without, it gets False at once when another
    run holds the lock. A missing lock file is made, unless not ``create``: then the block gets True
    holding nothing, since no run holds a lock that is not there (a dry run writes nothing). Where the
    platform has no ``fcntl`` nothing is held (True) and concurrent runs must not share a cache."""
    try:
        import fcntl
    except ImportError:  # Windows
        yield True
        return
    if not create and not lock.exists():
        yield True
        return
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def released_at(distribution: str, version: str, index: str = INDEX) -> datetime | None:
    """When ``distribution`` ``version`` was uploaded to the index (its first file, UTC), from the index's
    simple API in JSON (PEP 691, with PEP 700's ``upload-time``: what the installers read), or None when
    the index cannot be read or holds no file of it with a time."""
    from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, canonicalize_name, parse_sdist_filename, parse_wheel_filename
    from packaging.version import Version

    name = canonicalize_name(distribution)
    request = urllib.request.Request(f"{index.rstrip('/')}/{name}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            files = json.load(answer).get("files") or []
    except (OSError, ValueError):
        return None
    times = []
    for f in files:
        filename = f.get("filename", "")
        try:
            parsed = parse_wheel_filename(filename)[:2] if filename.endswith(".whl") else parse_sdist_filename(filename)
        except (InvalidWheelFilename, InvalidSdistFilename):
            continue
        if parsed == (name, Version(version)) and f.get("upload-time"):
            times.append(datetime.fromisoformat(f["upload-time"].replace("Z", "+00:00")))
    return min(times) if times else None


def _stamp(moment: datetime) -> str:
    """``moment`` as the installers take it (RFC 3339, UTC)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pip_dates(python: str) -> bool:
    """Whether the pip of ``python`` has ``--uploaded-prior-to`` (26.0 and newer)."""
    from packaging.version import InvalidVersion, Version

    done = subprocess.run([python, "-m", "pip", "--version"], capture_output=True, text=True, check=False)
    try:
        return done.returncode == 0 and Version(done.stdout.split()[1]) >= Version("26.0")
    except (IndexError, InvalidVersion):
        return False


def versions(python: Path, distributions: Sequence[str]) -> dict[str, str]:
    """The installed versions of ``distributions`` in the environment of ``python``."""
    code = (
        "import json, sys\nfrom importlib import metadata\nfound = {}\n"
        "for d in sys.argv[1:]:\n    try: found[d] = metadata.version(d)\n    except metadata.PackageNotFoundError: pass\n"
        "print(json.dumps(found))"
    )
    done = subprocess.run([str(python), "-c", code, *distributions], capture_output=True, text=True, check=False)
    return json.loads(done.stdout) if done.returncode == 0 and done.stdout.strip() else {}


def _run(command: Sequence[str], log: Path, name: str | None = None, env: dict[str, str] | None = None) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(list(command), capture_output=True, text=True, check=False, env=env)
    with log.open("a", encoding="utf-8") as out:
        out.write(f"$ {' '.join(command)}\n{done.stdout}{done.stderr}\n")
    if done.returncode != 0:
        tail = [line for line in (done.stdout + done.stderr).strip().splitlines() if line.strip()][-3:]
        raise InstallFailed(f"{name or Path(command[0]).name} exited {done.returncode}: {' / '.join(tail)} (log: {log})")
