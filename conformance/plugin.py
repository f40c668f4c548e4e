"""The pytest plugin (entry point ``pytest11: compaction_suite``).

Inert unless a compactor is named (``--compactor`` or ``$COMPACTION_COMPACTOR``)
or conformance tests are collected. Options are grouped under
"compaction-suite" and prefixed ``--compaction-`` (``--compactor`` aside).
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, Phase
from hypothesis import settings as hypothesis_settings
from hypothesis.configuration import set_hypothesis_home_dir

from compaction_suite.inputs import InputError, output_file

from . import report
from .assertions import CURRENT, RAISED, ClauseViolation
from .clauses import clauses, unknown_ids
from .options import DEFAULT_EXAMPLES, FAST_EXAMPLES, OPTIONS, Option
from .target import ENV, StartupFailed, TargetError
from .violation import Reasons, message

if TYPE_CHECKING:  # the suite imports openai; keep plugin loading light for every pytest run
    from .suite import Suite

SUITE = pytest.StashKey["Suite"]()
RESULTS = pytest.StashKey[dict[str, list[dict[str, Any]]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("compaction-suite", "context-compaction conformance (compaction-suite)")
    group.addoption("--compactor", metavar="TARGET", help=f"compactor under test: module:attr, a registered name, or cmd:<command> (default: ${ENV})")
    for option in OPTIONS:
        group.addoption(option.pytest_flag, dest=option.dest, help=option.help, **_argparse(option))


def _argparse(option: Option) -> dict[str, Any]:
    """argparse's keywords for one option of `options.OPTIONS`."""
    if option.kind == "flag":
        return {"action": "store_true"}
    found: dict[str, Any] = {"metavar": option.metavar, "action": "append" if option.multiple else "store"}
    if option.kind == "int":
        found["type"] = int
    if option.choices:
        found["choices"] = option.choices
    return found


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "clause(id): the SPEC clause this conformance test checks")
    config.addinivalue_line("markers", "judges(*ids): clauses this test's outputs also judge (kept by --compaction-clause for any of them)")
    config.addinivalue_line("markers", "shape(name): the test draws a labelled shape variant a declaration may rule out (capabilities.RULES_OUT)")
    config.addinivalue_line("markers", "wire_format(name): the format of the histories the test draws (default chat-completions; 'target': the target's own)")
    config.stash[RESULTS] = {}
    if _heard not in RAISED:
        RAISED.append(_heard)
    spec = config.getoption("--compactor") or None
    if spec is None and not _collecting_conformance(config):
        return
    sys.path[:0] = [str(Path(p).resolve()) for p in config.getoption("--compaction-path") or []]
    from .suite import start

    _check_clause_ids(config)  # a bad --clause is said before the session starts (SPEC Part C)
    try:
        for path in config.getoption("--compaction-report") or []:
            output_file(path)  # checked before the run, never after it (SPEC Part C)
        config.stash[SUITE] = start(spec, config.getoption("--compaction-profile"))
    except (InputError, TargetError, StartupFailed) as error:
        raise pytest.UsageError(str(error)) from error
    _load_hypothesis_profile(config)


def _collecting_conformance(config: pytest.Config) -> bool:
    """Whether the run names this package's conformance tests (``--pyargs compaction_suite.conformance``
    or their path): a project's own ``conformance/`` folder is never taken over."""
    tests = Path(__file__).resolve().parent / "tests"
    for arg in config.args:
        name = str(arg).split("::")[0]
        if name.startswith("compaction_suite.conformance"):
            return True
        path = Path(name).resolve()
        if path == tests.parent or path.is_relative_to(tests):
            return True
    return False


def examples(config: pytest.Config) -> int:
    """Hypothesis examples per test, from the options (one profile built from the CLI)."""
    if config.getoption("--compaction-fast"):
        return FAST_EXAMPLES
    return config.getoption("--compaction-max-examples") or DEFAULT_EXAMPLES


def _load_hypothesis_profile(config: pytest.Config) -> None:
    _keep_hypothesis_files_out_of_cwd()
    hypothesis_settings.register_profile(
        "compaction-suite",
        max_examples=examples(config),
        derandomize=not config.getoption("--compaction-random"),
        deadline=None,
        database=None,
        # filter_too_much: a target that compacts only some histories (the OpenAI Agents SDK's Runner, after
        # a final answer) has the rest rejected by `summarizing`'s assume, by design (SPEC CORE-11 Decision).
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
        # No explain phase: it re-runs failing examples under a line tracer to list *suite*
        # lines, which tells a compactor's author nothing and triples the time of a failure.
        phases=[p for p in Phase if p is not Phase.explain],
    )
    hypothesis_settings.load_profile("compaction-suite")


def _keep_hypothesis_files_out_of_cwd() -> None:
    """Hypothesis keeps caches in ``./.hypothesis``; a check run leaves nothing in the caller's
    working directory, so they go to the user's cache folder unless the caller chose a place."""
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    set_hypothesis_home_dir(str(cache / "compaction-suite" / "hypothesis"))


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    suite = config.stash.get(SUITE, None)
    if suite is None:
        return None
    s = suite.settings
    target = suite.target
    return [
        f"compaction-suite: compactor {target.spec} ({target.origin}{', ' + target.version if target.version else ''})",
        f"compaction-suite: profiles claimed {sorted(suite.claimed)}"
        + (f", requested {sorted(suite.requested)}" if suite.requested else ""),
        f"compaction-suite: settings threshold_iterations={s.threshold_iterations} max_context_tokens={s.max_context_tokens} "
        f"keep_recent_rounds={s.keep_recent_rounds} model={s.model} summarizer_timeout={s.summarizer_timeout}s",
        f"compaction-suite: summarizer test double at {s.base_url}; hypothesis max_examples={examples(config)} "
        f"derandomize={not config.getoption('--compaction-random')}",
    ]


@pytest.fixture(scope="session")
def suite(request: pytest.FixtureRequest) -> Suite:
    """The conformance session: ``suite.new()`` builds a fresh compactor."""
    found = request.config.stash.get(SUITE, None)
    if found is None:
        raise pytest.UsageError(f"conformance tests need a compactor: pass --compactor TARGET or set {ENV}")
    return found


COLLECTED = pytest.StashKey[set[str]]()


@pytest.fixture(scope="session")
def other_process(suite: Suite) -> Any:
    """A second process running the same target (SPEC CORE-8 and EVT-2 decisions: across processes)."""
    from .crossprocess import Worker

    worker = Worker(suite.target.spec)
    yield worker
    worker.close()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _select_clauses(config, items)
    _mark_xfails(config, items)
    config.stash[COLLECTED] = {clause_id for item in items for clause_id in _clauses_of(item)}


def _select_clauses(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--compaction-clause``: keep only the conformance tests of the named clauses."""
    wanted = _wanted_clauses(config)
    if not wanted:
        return
    keep = [item for item in items if wanted & _clauses_of(item)]
    config.hook.pytest_deselected(items=[item for item in items if item not in keep])
    items[:] = keep


def _wanted_clauses(config: pytest.Config) -> set[str]:
    """The clause ids ``--compaction-clause`` names, upper-cased."""
    return {c.upper() for c in config.getoption("--compaction-clause") or []}


def _check_clause_ids(config: pytest.Config) -> None:
    """``--compaction-clause`` names only clauses of the registry: a usage error otherwise."""
    if error := unknown_ids(_wanted_clauses(config)):
        raise pytest.UsageError(error)


def _mark_xfails(config: pytest.Config, items: list[pytest.Item]) -> None:
    path = config.getoption("--compaction-xfails")
    if not path:
        return
    wanted = [line.strip() for line in Path(path).read_text().splitlines() if line.strip() and not line.startswith("#")]
    for test_id in wanted:
        hits = [item for item in items if item.nodeid == test_id or item.nodeid.endswith("::" + test_id) or item.name == test_id]
        for item in hits:
            item.add_marker(pytest.mark.xfail(reason=f"listed in {path}", strict=False))
        if not hits:
            warnings.warn(pytest.PytestWarning(f"{path}: {test_id!r} matches no test"), stacklevel=1)


def pytest_runtest_setup(item: pytest.Item) -> None:
    clause_id = _clause_of(item)
    suite = item.config.stash.get(SUITE, None)
    if clause_id is None or suite is None:
        return
    reason = suite.active(clauses()[clause_id].profile) or suite.capabilities.waived().get(clause_id) or _ruled_out(item, suite) or _other_format(item, suite.format.name)
    if reason:
        pytest.skip(reason)
    suite.current, suite.current_test, suite.last_case = clause_id, item.nodeid, None
    CURRENT[:] = [clause_id]
    HEARD[:] = [(clause_id, Reasons())]


HEARD: list[tuple[str, Reasons]] = []
"""The running conformance test's clause and every distinct reason it was violated with so far."""


def _heard(violation: ClauseViolation) -> None:
    """Keep a violation of the running test's clause, whichever example raised it (`assertions.RAISED`)."""
    if HEARD and HEARD[0][0] == violation.clause_id:
        HEARD[0][1].add(violation.reason_id, violation.reason)


def _ruled_out(item: pytest.Item, suite: Any) -> str | None:
    """Why a test drawing a shape variant the target's declarations rule out does not run."""
    marker = item.get_closest_marker("shape")
    return suite.capabilities.ruled_out(marker.args[0]) if marker else None


def _other_format(item: pytest.Item, target_format: str) -> str | None:
    """Why a test that draws histories of another wire format than the target's does not run
    (the clause itself may still apply, checked by a test in the target's format)."""
    marker = item.get_closest_marker("wire_format")
    drawn = marker.args[0] if marker else "chat-completions"
    if drawn in ("target", target_format):
        return None
    return f"this test draws {drawn} histories; the target compacts {target_format} (wire_format)"


def pytest_runtest_teardown(item: pytest.Item) -> None:
    suite = item.config.stash.get(SUITE, None)
    if suite is not None:
        suite.current = suite.current_test = None
    CURRENT[:] = []
    HEARD[:] = []


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    rep = yield
    clause_id = _clause_of(item)
    if clause_id is None:
        return rep
    error = call.excinfo.value if call.excinfo is not None else None
    violation = _violation(error) if error is not None else None
    if rep.failed and not clauses()[clause_id].must:
        rep.outcome = "skipped"
        rep.wasxfail = f"{clause_id} is a SHOULD clause: reported, never failing"
    if rep.when == "call" or rep.outcome != "passed":
        _record(item, rep, clause_id, violation, _every_reason(clause_id, error))
    return rep


def _violation(error: BaseException) -> BaseException:
    """The error, or the first `ClauseViolation` among several Hypothesis found at once."""
    if isinstance(error, BaseExceptionGroup):
        found = [e for e in error.exceptions if isinstance(e, ClauseViolation)]
        return found[0] if found else error
    return error


def _every_reason(clause_id: str, error: BaseException | None) -> Reasons:
    """Every distinct reason the running test failed ``clause_id`` with: those of the error it ended
    with (each of the failures Hypothesis reports at once, ``report_multiple_bugs``), then those of
    every other failing example it met (Hypothesis reports one failure per place an error is raised,
    and every clause check raises from the same place, `assertions.require`)."""
    reasons = Reasons()
    errors = list(error.exceptions) if isinstance(error, BaseExceptionGroup) else [error] if error is not None else []
    for e in errors:
        if isinstance(e, ClauseViolation):
            reasons.add(e.reason_id, e.reason)
        else:
            reasons.add(f"error:{type(e).__name__}", f"{type(e).__name__}: {message(e)}")
    if HEARD and HEARD[0][0] == clause_id:
        for seen in HEARD[0][1].items():
            reasons.add(seen["reason_id"], seen["reason"])
    return reasons


def _record(item: pytest.Item, rep: pytest.TestReport, clause_id: str, violation: Any, reasons: Reasons | None = None) -> None:
    if rep.when != "call" and rep.outcome == "passed":
        return
    entry: dict[str, Any] = {"test": item.nodeid, "outcome": report.outcome_of(rep)}
    if entry["outcome"] in ("fail", "error") and reasons:
        entry["reasons"] = reasons.items()
    if isinstance(violation, ClauseViolation):
        entry["reason"] = violation.reason
        entry["reason_id"] = violation.reason_id
        entry["history"] = violation.history
        entry["output"] = violation.output
        suite = item.config.stash.get(SUITE, None)
        entry["case"] = suite.last_case if suite is not None else None
    elif rep.skipped and not hasattr(rep, "wasxfail") and isinstance(rep.longrepr, tuple):
        entry["reason"] = str(rep.longrepr[2]).removeprefix("Skipped: ")
    elif violation is not None:
        entry["reason"] = f"{type(violation).__name__}: {str(violation).splitlines()[0] if str(violation) else ''}"
        entry["reason_id"] = f"error:{type(violation).__name__}"
    item.config.stash[RESULTS].setdefault(clause_id, []).append(entry)


def _clauses_of(item: pytest.Item) -> set[str]:
    """The clause a test checks and those its outputs also judge (``judges`` marker): a test
    ``--compaction-clause`` keeps for any of them."""
    found = {clause_id} if (clause_id := _clause_of(item)) else set()
    for marker in item.iter_markers("judges"):
        found.update(marker.args)
    return found


def _clause_of(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("clause")
    return marker.args[0] if marker else None


REPORT = pytest.StashKey[dict[str, Any]]()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Build the clause report; a run whose verdict is not "conforms" exits 1 even when every
    test passed (a violation seen in another clause's test, nothing compacted, a clause not exercised)."""
    config = session.config
    suite = config.stash.get(SUITE, None)
    if suite is None or not config.stash[RESULTS]:
        return
    data = report.build(suite, config.stash[RESULTS], config.stash.get(COLLECTED, None))
    config.stash[REPORT] = data
    if exitstatus == pytest.ExitCode.OK and not data["passed"]:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    data = config.stash.get(REPORT, None)
    if data is None:
        return
    paths = config.getoption("--compaction-report") or []
    json_path = next((str(Path(p).with_suffix(".json")) for p in paths if not p.endswith(".md")), "REPORT.json")
    terminalreporter.section("compaction-suite clauses")
    for line in report.summary_lines(data):
        terminalreporter.write_line(line.replace("{report}", json_path))
    for path in paths:
        report.write(data, Path(path))
        terminalreporter.write_line(f"report written to {path}")


def pytest_unconfigure(config: pytest.Config) -> None:
    suite = config.stash.get(SUITE, None)
    if suite is not None:
        suite.close()
