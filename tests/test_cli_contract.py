"""Contract errors are verdicts (issue 14, point 7): a target that breaks the plug-in contract
before any clause runs makes ``compaction-suite check`` exit 2 with one line saying what is
wrong, never an INTERNALERROR; the options are defined once for the plugin and the CLI; and
the plugin leaves other people's test runs alone (issue 15)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from compaction_suite.cli import check_args, main
from compaction_suite.cli.store import compact_store
from compaction_suite.conformance.options import OPTIONS
from compaction_suite.reference import SQLiteStore

BROKEN_CONTRACTS = textwrap.dedent(
    """
    class NoCompact:
        pass

    class PositionalOnly:
        def compact(self, messages):
            return messages

    def raises(settings):
        raise RuntimeError("no API key configured")

    def returns_none(settings):
        return None

    def no_compact(settings):
        return NoCompact()

    def wrong_signature(settings):
        return PositionalOnly()

    not_callable = 42
    """
)


def _check(target: str, cwd: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "compaction_suite", "check", target, "--path", str(cwd), "--fast", *extra]
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("contracts:raises", "the factory failed: RuntimeError: no API key configured"),
        ("contracts:returns_none", "the factory returned None"),
        ("contracts:no_compact", "NoCompact, which has no compact(messages, *, iteration) method"),
        ("contracts:wrong_signature", "cannot be called as compact(messages, *, iteration)"),
        ("contracts:not_callable", "is not callable"),
        ("contracts:missing", "has no attribute 'missing'"),
        ("no_such_module:factory", "cannot import 'no_such_module'"),
        ("cmd:/nonexistent/compactor", "the program did not start"),
        (f"cmd:{sys.executable} -c 'raise SystemExit(3)'", "exited with status 3 before answering start"),
    ],
)
def test_contract_error_exits_2_with_one_line(target: str, says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process, through the command (tests/test_cli_bad_input.py has the import errors);
    `test_a_user_process_sees_one_line` keeps one in a fresh interpreter."""
    (tmp_path / "contracts.py").write_text(BROKEN_CONTRACTS)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.delitem(sys.modules, "contracts", raising=False)
    result = CliRunner().invoke(main, ["check", target, "--path", str(tmp_path), "--fast"])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("ERROR:") and says in lines[0], result.output
    sys.modules.pop("contracts", None)


def test_a_user_process_sees_one_line_and_no_traceback(tmp_path: Path) -> None:
    (tmp_path / "syntax_error.py").write_text("def factory(settings:\n")
    done = _check("syntax_error:factory", tmp_path)
    output = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert done.returncode == 2 and len(output) == 1, done.stdout + done.stderr
    assert "syntax_error.py:1: SyntaxError" in output[0] and "INTERNALERROR" not in output[0]


def test_unknown_clause_is_a_usage_error(tmp_path: Path) -> None:
    done = _check("reference", tmp_path, "--clause", "CORE-99")
    output = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert done.returncode == 2 and len(output) == 1 and "unknown clause(s) CORE-99" in output[0], done.stdout + done.stderr


def test_clause_selection_and_pytest_arguments_pass_through(tmp_path: Path) -> None:
    junit = tmp_path / "results.xml"
    done = _check("reference", tmp_path, "--clause", "CORE-5", "--", f"--junitxml={junit}")
    assert done.returncode == 0, done.stdout[-2000:]
    assert "deselected" in done.stdout and 'name="test_' in junit.read_text()
    assert not (tmp_path / ".hypothesis").exists(), "check leaves no files in the working directory"


def test_every_option_reaches_the_plugin_spelled_its_way() -> None:
    given = {"profile": ("core",), "clause": ("CORE-1",), "fast": True, "max-examples": 7, "random": True,
             "xfails": "x.txt", "report": ("r.json", "r.md"), "path": ("src",)}  # fmt: skip
    assert set(given) == {o.name for o in OPTIONS}, "a new option needs a line here"
    args = check_args("reference", given)
    assert args[args.index("--compactor") + 1] == "reference"
    for expected in ["--compaction-profile=core", "--compaction-clause=CORE-1", "--compaction-fast", "--compaction-max-examples=7",
                     "--compaction-random", "--compaction-xfails=x.txt", "--compaction-report=r.json", "--compaction-report=r.md",
                     "--compaction-path=src"]:  # fmt: skip
        assert expected in args


def test_plugin_leaves_a_projects_own_conformance_package_alone(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(**{"conformance/__init__.py": "X = 1", "benchmarks/__init__.py": ""})
    pytester.makepyfile(**{"conformance/test_mine.py": "from conformance import X\n\ndef test_x():\n    assert X == 1\n"})
    result = pytester.runpytest_subprocess("conformance", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "compaction-suite: compactor" not in result.stdout.str(), "the conformance session did not start"


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    path = tmp_path / "agent.db"
    store = SQLiteStore(str(path))
    store.append("s1", [{"role": "user", "content": "hello"}])
    store.close()
    return path


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--session", "nope", "--keep-messages", "2"], "no branch 'main' of session 'nope'"),
        (["--session", "s1", "--branch", "side", "--keep-messages", "2"], "session 's1' has branches main"),
    ],
)
def test_compact_store_names_what_does_not_exist(store_path: Path, args: list[str], says: str) -> None:
    result = CliRunner().invoke(compact_store, [str(store_path), *args])
    assert result.exit_code == 2 and says in result.output, result.output


def test_compact_store_summarize_without_credentials(store_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_ADMIN_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    result = CliRunner().invoke(compact_store, [str(store_path), "--session", "s1", "--summarize", "gpt-4o-mini"])
    assert result.exit_code == 2 and "--summarize needs the OpenAI client's credentials" in result.output, result.output


def test_a_target_not_installed_is_told_how_to_find_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's command run in a project whose package is not installed: the error says to
    install it or pass --path, naming ``.`` when the package is in the working directory; a
    module the target itself imports that is missing gets no such hint (installing the target's
    package is not the fix)."""
    from compaction_suite.conformance.target import TargetError, resolve

    monkeypatch.chdir(tmp_path)
    with pytest.raises(TargetError, match=r"pass --path DIR \(the folder that holds notinstalledpkg/\)"):
        resolve("notinstalledpkg.compaction_check:factory")
    (tmp_path / "notinstalledpkg").mkdir()
    with pytest.raises(TargetError, match=r"install its package in this environment, or pass --path \."):
        resolve("notinstalledpkg.compaction_check:factory")
    (tmp_path / "needs_missing.py").write_text("import missing_dependency_of_the_target\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TargetError) as raised:
        resolve("needs_missing:factory")
    assert "missing_dependency_of_the_target" in str(raised.value) and "--path" not in str(raised.value)


def test_the_command_imports_no_heavy_part_at_start() -> None:
    """``compaction-suite`` imports a command's heavy parts only when that command runs: what
    ``check`` imports before it starts pytest cannot be rewritten for assertions (pytest warns,
    PytestAssertRewriteWarning), and every command would pay for the others' imports."""
    heavy = ("hypothesis", "openai", "anyio", "httpx", "matplotlib", "numpy", "pytest_benchmark", "compaction_suite.reference", "compaction_suite.benchmarks", "compaction_suite.conformance.formats")
    code = f"import sys, compaction_suite.cli; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"


def test_the_package_itself_is_not_marked_for_rewriting() -> None:
    """In a wheel install pytest marks ``compaction_suite`` for assertion rewriting through the
    plugin's entry point after ``check`` has imported it; its docstring opts it out, so no
    PytestAssertRewriteWarning reaches the user (the package's ``__init__`` asserts nothing)."""
    from _pytest.assertion.rewrite import AssertionRewriter

    import compaction_suite

    assert AssertionRewriter.is_rewrite_disabled(compaction_suite.__doc__ or "")
