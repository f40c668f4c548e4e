"""A version sweep resolves what each release is installed with as of that release (SPEC Part A, "The
framework matrix and releases": every adapter runs at each release it declares, or says in one line
that it cannot). A release whose own requirements do not cap its companions (openai-agents 0.6.6 and
openai, langchain 1.1.1 and langgraph-prebuilt) breaks beside today's; a sweep installs it with the
files the index held a day after the release: uv's ``--exclude-newer``, pip's ``--uploaded-prior-to``
(pip 26.0 and newer; an older pip first installs one into the environment), and compaction-suite
after them, unbounded. The installers are TEST DOUBLES here (`_run` records the commands); the index
is a local HTTP server on 127.0.0.1 answering the simple API's JSON shape (PEP 691, with PEP 700's
``upload-time``) for one project."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from compaction_suite.matrix import environments, sweep
from compaction_suite.matrix.environments import GRACE, Builder

RELEASED = datetime(2025, 12, 4, 17, 30, 5, tzinfo=UTC)


@pytest.fixture
def commands(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The installer commands a builder runs (a TEST DOUBLE of `_run`: nothing is installed)."""
    ran: list[list[str]] = []
    monkeypatch.setattr(environments, "_run", lambda command, log, name=None, env=None: ran.append([*command, *(["PIP_CONFIG_FILE=" + env["PIP_CONFIG_FILE"]] if env else [])]))
    monkeypatch.setattr(Builder, "_create", lambda self, home, log: home.mkdir(parents=True))
    monkeypatch.setattr(Builder, "suite_requirement", lambda self: ("suite.whl", "digest"))
    return ran


@pytest.mark.parametrize("pip_has_dates", [True, False])
def test_pip_installs_the_release_with_its_companions_as_of_its_date_then_the_suite(
    tmp_path: Path, commands: list[list[str]], monkeypatch: pytest.MonkeyPatch, pip_has_dates: bool
) -> None:
    monkeypatch.setattr(environments, "_pip_dates", lambda python: pip_has_dates)
    builder = Builder(tmp_path, tool="pip", dated=True)
    builder.environment(["openai-agents==0.6.6"], tmp_path / "log", RELEASED + GRACE)
    installs = [c for c in commands if "install" in c]
    if not pip_has_dates:  # an older pip first brings one that can, into the environment, and it installs
        assert installs[0][-1] == environments.DATED_PIP and "--uploaded-prior-to" not in " ".join(installs[0])
        assert installs[1][1:3] == ["-m", "pip"] and installs[1][0].endswith("bin/python")
        installs = installs[1:]
    dated, suite = installs
    # a machine's configured local index (a mirror of files with no upload time) would slip past the bound
    assert "--uploaded-prior-to=2025-12-05T17:30:05Z" in dated and dated[-2:] == ["openai-agents==0.6.6", f"PIP_CONFIG_FILE={os.devnull}"]
    assert suite[-1] == "suite.whl" and not any("uploaded-prior-to" in part for part in suite)


def test_uv_excludes_what_was_uploaded_after_the_release(tmp_path: Path, commands: list[list[str]]) -> None:
    Builder(tmp_path, tool="uv", dated=True).environment(["langchain==1.1.1"], tmp_path / "log", RELEASED)
    dated, suite = (c for c in commands if "install" in c)
    assert dated[dated.index("--exclude-newer") + 1] == "2025-12-04T17:30:05Z" and dated[-1] == "langchain==1.1.1"
    assert "--exclude-newer" not in suite


def test_an_undated_environment_is_built_and_named_as_before(tmp_path: Path, commands: list[list[str]]) -> None:
    """Without a bound, one install of the release and the suite together, under the name it always had
    (a shared cache keeps its environments); with one, another environment."""
    builder = Builder(tmp_path, tool="pip")
    builder.environment(["semantic-kernel==1.45.0"], tmp_path / "log")
    (install,) = (c for c in commands if "install" in c)
    assert install[-2:] == ["semantic-kernel==1.45.0", "suite.whl"] and not any("uploaded" in p for p in install)
    assert builder._home(["semantic-kernel==1.45.0"]) == builder._home(["semantic-kernel==1.45.0"], None)
    assert builder._home(["semantic-kernel==1.45.0"], RELEASED) != builder._home(["semantic-kernel==1.45.0"])


@pytest.mark.parametrize("left", ["", "{\"requirements\": [", "[]"])
def test_an_environment_with_an_unreadable_marker_is_rebuilt_not_crashed_on(tmp_path: Path, commands: list[list[str]], left: str) -> None:
    """A marker left empty or half-written (a run stopped while writing it) marks no environment: the
    folder is rebuilt from scratch and the new marker written whole."""
    builder = Builder(tmp_path, tool="pip")
    home = builder._home(["openai-agents==0.6.6"])
    home.mkdir(parents=True)
    (home / "stale").write_text("from the stopped run", encoding="utf-8")
    (home / "compaction-suite-env.json").write_text(left, encoding="utf-8")
    builder.environment(["openai-agents==0.6.6"], tmp_path / "log")
    (install,) = (c for c in commands if "install" in c)
    assert install[-2:] == ["openai-agents==0.6.6", "suite.whl"] and "--force-reinstall" not in install
    assert not (home / "stale").exists()
    assert json.loads((home / "compaction-suite-env.json").read_text(encoding="utf-8"))["suite"] == "digest"
    assert [p.name for p in home.iterdir()] == ["compaction-suite-env.json"]


@pytest.fixture
def index() -> Iterator[str]:
    """A local stand-in for the index's simple API: release 0.6.6 with two files, the earlier uploaded
    at `RELEASED`, and a later release's file."""

    class Answer(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != "/openai-agents/" or "pypi.simple.v1+json" not in self.headers.get("Accept", ""):
                self.send_error(404)
                return
            files = [
                {"filename": "openai_agents-0.6.6-py3-none-any.whl", "upload-time": "2025-12-04T18:02:11.000000Z"},
                {"filename": "openai_agents-0.6.6.tar.gz", "upload-time": "2025-12-04T17:30:05.123456Z"},
                {"filename": "openai_agents-0.6.7-py3-none-any.whl", "upload-time": "2025-11-01T00:00:00Z"},
            ]
            body = json.dumps({"meta": {"api-version": "1.1"}, "name": "openai-agents", "files": files}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


def test_a_release_is_dated_by_its_first_upload_and_an_unknown_one_is_not(index: str) -> None:
    assert environments.released_at("openai_agents", "0.6.6", index) == RELEASED.replace(microsecond=123456)
    assert environments.released_at("openai-agents", "9.9.9", index) is None
    assert environments.released_at("strands-agents", "1.0.0", index) is None


def test_a_sweep_dates_only_when_asked_and_the_index_is_used(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(environments, "released_at", lambda distribution, version: RELEASED)
    assert Builder(tmp_path, dated=True).as_of("openai-agents", "0.6.6") == RELEASED + GRACE
    assert Builder(tmp_path).as_of("openai-agents", "0.6.6") is None
    assert Builder(tmp_path, ["--find-links", "x", "--no-index"], dated=True).as_of("openai-agents", "0.6.6") is None


def test_the_version_table_says_as_of_when_each_release_was_installed() -> None:
    done = sweep.Sweep("openai-agents", ["0.6.6", "0.24.0"], as_of={"0.6.6": "2025-12-05 17:30 UTC"})
    data = sweep.table(done)
    assert [r.get("companions_as_of") for r in data["releases"]] == ["2025-12-05 17:30 UTC", None]
    text = sweep.table_markdown(data)
    assert "| 0.6.6 |  | 2025-12-05 17:30 UTC |" in text and "| 0.24.0 |  | today |" in text
