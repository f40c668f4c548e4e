"""Reported bugs as data, each run at the release it was reported in and at the release that fixed it.

``compaction-suite matrix --bugs adapters/reported_bugs.json --out DIR`` reads a list of publicly
reported compaction bugs whose entries carry a ``run``::

    "run": {"target": "compaction_suite.adapters.langchain:summarization_middleware",
            "options": {"trigger_tokens": 500, "keep_messages": 6},
            "reported": ["langchain==1.3.14"], "fixed": ["langchain==1.3.15"],
            "expect": {"clause": "CORE-11", "reason": "although the summarizer failed"}}

builds one environment per release with the version sweep's machinery (`environments.Builder`,
`sweep.requirements`: the adapter's install list, the first pin's distribution and those released
with it pinned, every other pin as given), runs the configuration there (`jobs.run_job`, only the
expected clause), and writes:

* ``DIR/bugs.json`` and ``DIR/bugs.md``: per bug, *caught* (the expected clause fails with a reason
  naming the bug: ``reason_id`` among the failure's stable reasons, or the ``reason`` regular
  expression found in its reason text) or *missed* at the reported release, *lost* or *kept* at the
  fixing release; and the recall figure, overall and per framework (``n/a`` where nothing ran);
* ``DIR/releases/<pins>/matrix.{json,md}``: each environment's matrix, as the sweep writes it.

A release that cannot be installed or that the adapter refuses (a contract error) is said so; it
is not caught, and it is counted in the recall's denominator (the bug was reported there). An entry
without ``run`` is listed with its ``why`` and not counted. SPEC Part A, "The framework matrix and
releases", reported bugs.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import verdicts
from .document import build
from .environments import Builder, InstallFailed, versions
from .findings import every_reason, keys
from .jobs import CONTRACT_ERROR, Job, run_job, slug
from .render import write
from .sweep import requirements as sweep_requirements

FORMAT = "compaction-suite-bugs"
FORMAT_VERSION = 3
"""2: a verdict that found the bug says which reasons named it (``named``), matched among every reason
the clause failed with, not only the first. 3: ``complete``, false in the documents written while the
run goes on (after each entry's run), true once it is done."""
PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*(?:\[[A-Za-z0-9_,-]+\])?)\s*==\s*([A-Za-z0-9][A-Za-z0-9.+!-]*)\s*$")


class BugsError(ValueError):
    """A bug list that cannot be read or whose ``run`` entries are malformed (a usage error)."""


@dataclass(frozen=True)
class Bug:
    """One runnable entry of the list."""

    id: str
    framework: str
    target: str
    options: dict[str, Any]
    reported: tuple[str, ...]
    fixed: tuple[str, ...]
    clause: str
    reason_id: str | None
    reason: str | None

    def job(self) -> Job:
        module, _, factory = self.target.partition(":")
        adapter = module if module.startswith("compaction_suite.adapters.") else None
        return Job(self.framework, {}, factory or module, self.target, dict(self.options), f"reported bug {self.id}", True, adapter)

    def names(self, finding: dict[str, Any]) -> bool:
        """Whether a failure of the report (as `document.build` keeps it) is this bug's finding."""
        return bool(self.naming(finding))

    def naming(self, finding: dict[str, Any]) -> list[dict[str, str]]:
        """The reasons of a failure that name this bug: its expected clause failing with a reason that
        has the expected ``reason_id`` and a text the expected ``reason`` is found in (each where the
        entry gives it), among *every* reason the clause failed with (``every_reason``), so a clause
        failing first for another defect does not hide the bug's, and at the fixing release another
        defect failing the clause with the same generic id does not keep it (SPEC Part A, "The
        framework matrix and releases", reported bugs). A document of format 2 holds the shown reason
        and the reason ids apart: there the id is looked for among the ids and the text in the shown
        reason."""
        if finding["clause"] != self.clause or finding["status"] not in verdicts.FAILING:
            return []
        if "every_reason" in finding:
            return [r for r in finding["every_reason"] if self._names(r)]
        shown = {"reason_id": self.reason_id or "", "reason": str(finding.get("reason", ""))}
        has_id = self.reason_id is None or self.reason_id in finding.get("reasons", ())
        return [shown] if has_id and self._names(shown) else []

    def _names(self, reason: dict[str, str]) -> bool:
        if self.reason_id and self.reason_id != reason.get("reason_id"):
            return False
        return not self.reason or bool(re.search(self.reason, str(reason.get("reason", "")), re.IGNORECASE))


@dataclass
class Listed:
    """The list as read: the runnable bugs and the others with why they do not run."""

    bugs: list[Bug] = field(default_factory=list)
    not_runnable: list[dict[str, str]] = field(default_factory=list)


def load(path: Path, only: tuple[str, ...] = ()) -> Listed:
    """The bugs of ``path`` (``--only``: those whose id, framework or target hold every word of one text)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        entries = data["bugs"] if isinstance(data, dict) else data
        if not isinstance(entries, list):
            raise TypeError("'bugs' is not a list")
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise BugsError(f"--bugs {path}: not a bug list ({error})") from None
    listed = Listed()
    for number, entry in enumerate(entries):
        if not isinstance(entry, dict) or not entry.get("id"):
            raise BugsError(f"--bugs {path}: entry {number} has no id")
        described = f"{entry['id']} {entry.get('framework', '')} {json.dumps(entry.get('run', {}))}".lower()
        if only and not any(all(word in described for word in o.lower().split()) for o in only):
            continue
        if entry.get("run") is None:
            after = entry.get("after") or {}
            listed.not_runnable.append(
                {
                    "id": entry["id"],
                    "framework": str(entry.get("framework", "")),
                    "why": str(after.get("why") or entry.get("why") or "no run given"),
                }
            )
            continue
        listed.bugs.append(_bug(path, entry))
    return listed


def _bug(path: Path, entry: dict[str, Any]) -> Bug:
    run, where = entry["run"], f"--bugs {path}: {entry['id']}"
    if not isinstance(run, dict) or not isinstance(run.get("target"), str) or ":" not in run["target"]:
        raise BugsError(f"{where}: run.target must be MODULE:FACTORY")
    for key in ("reported", "fixed"):
        pins = run.get(key) or []
        if key == "reported" and not pins:
            raise BugsError(f"{where}: run.reported needs at least one DIST==VERSION")
        if not isinstance(pins, list) or not all(isinstance(p, str) and PIN.match(p) for p in pins):
            raise BugsError(f"{where}: run.{key} must be a list of DIST==VERSION, got {pins!r}")
    expect = run.get("expect")
    if not isinstance(expect, dict) or not expect.get("clause") or not (expect.get("reason_id") or expect.get("reason")):
        raise BugsError(f"{where}: run.expect needs a clause and a reason_id or reason")
    if expect.get("reason"):
        try:
            re.compile(expect["reason"])
        except re.error as error:
            raise BugsError(f"{where}: run.expect.reason is not a regular expression ({error})") from None
    options = run.get("options") or {}
    if not isinstance(options, dict):
        raise BugsError(f"{where}: run.options must be an object")
    return Bug(
        entry["id"], str(entry.get("framework") or run["target"]), run["target"], options, tuple(run["reported"]), tuple(run.get("fixed") or ()),
        expect["clause"], expect.get("reason_id"), expect.get("reason"),
    )  # fmt: skip


def environment_requirements(job: Job, pins: tuple[str, ...]) -> list[str]:
    """What one release's environment holds: the sweep's requirements for the first pin, every other
    pin replacing (or adding) its distribution."""
    first = PIN.match(pins[0])
    assert first is not None  # checked by `load`
    wanted = {_name(r): r for r in sweep_requirements([job], _name(first.group(1)), first.group(2))}
    for pin in pins[1:]:
        wanted[_name(pin)] = pin.replace(" ", "")
    return [wanted[name] for name in sorted(wanted)]


def _name(requirement: str) -> str:
    return re.split(r"[\[=<>!~ ]", requirement.strip(), maxsplit=1)[0].lower()


def run(
    listed: Listed, builder: Builder, out: Path, *, fast: bool, max_examples: int | None, timeout: float, echo: Callable[[str], None] = print,
) -> dict[str, Any]:  # fmt: skip
    """Every bug at its reported and fixing releases; ``out/bugs.{json,md}`` and each release's matrix.
    Every reported release runs before any fixing one, so the line printed after each run is the
    entry's verdict there (`progress`). The documents are written again after every run, marked
    ``"complete": false`` until the last: a run stopped after hours keeps what it found."""
    todo: dict[tuple[str, ...], list[tuple[Bug, str]]] = {}
    for bug in listed.bugs:
        todo.setdefault(bug.reported, []).append((bug, "reported"))
        if bug.fixed:
            todo.setdefault(bug.fixed, []).append((bug, "fixed"))
    written = Written(listed, out, fast, max_examples)
    said: dict[str, str] = {}
    for phase in ("reported", "fixed"):
        for pins, group in todo.items():
            folder = written.folder(pins)
            for bug in (bug for bug, when in group if when == phase):
                job = bug.job()
                with contextlib.ExitStack() as held:
                    try:
                        python = held.enter_context(builder.using(environment_requirements(job, pins), folder / "install.log"))
                    except InstallFailed as error:
                        echo(f"{bug.id} at {', '.join(pins)}: not installed: {error}")
                        written.not_installed(bug, phase, pins, str(error))
                        said[bug.id] = "not-installed"
                        continue
                    installed = versions(python, sorted({_name(p) for p in pins} | {_name(r) for r in environment_requirements(job, pins)}))
                    echo(f"{bug.id}: {bug.target} at {', '.join(pins)} ...")
                    r = run_job(job, fast, max_examples, timeout, python=python, versions=installed, clauses=(bug.clause,))
                said[bug.id] = progress(bug, r, phase, said.get(bug.id))
                echo(f"  {said[bug.id]} in {r['seconds']:.0f}s")
                written.ran(bug, phase, pins, r)
    return written.write(complete=True)


@dataclass
class Written:
    """What a bugs run has done so far, and its documents written from it (`run`)."""

    listed: Listed
    out: Path
    fast: bool
    max_examples: int | None
    results: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    runs: dict[tuple[str, ...], list[dict[str, Any]]] = field(default_factory=dict)
    documents: dict[tuple[str, ...], dict[str, Any]] = field(default_factory=dict)

    def folder(self, pins: tuple[str, ...]) -> Path:
        """Where one release's environment log and matrix go."""
        return self.out / "releases" / slug("-".join(pins).replace("==", "-"))

    def not_installed(self, bug: Bug, phase: str, pins: tuple[str, ...], error: str) -> None:
        self.results[(bug.id, phase)] = {"pins": list(pins), "status": "not-installed", "error": error}
        self.write(complete=False)

    def ran(self, bug: Bug, phase: str, pins: tuple[str, ...], r: dict[str, Any]) -> None:
        """Keep one run (`jobs.run_job`'s result), rewrite its release's matrix and the bugs documents."""
        self.runs.setdefault(pins, []).append(r)
        self.results[(bug.id, phase)] = {"pins": list(pins), "run": len(self.runs[pins]) - 1}
        folder = self.folder(pins)
        document = self.documents[pins] = build(self.runs[pins], [], self.fast, self.max_examples, folder, 0.0)
        write(folder, document)
        self.write(complete=False)

    def write(self, complete: bool) -> dict[str, Any]:
        """``out/bugs.{json,md}`` from the runs so far; ``complete`` once every run is done."""
        shown = {key: self._shown(entry) for key, entry in self.results.items()}
        data = {**report(self.listed, shown, self.out), "complete": complete}
        write(self.out, data, "bugs", report_markdown)
        return data

    def _shown(self, entry: dict[str, Any]) -> dict[str, Any]:
        if "run" not in entry:  # not installed: said as it is
            return entry
        return {"pins": entry["pins"], "document": self.documents[tuple(entry["pins"])]["runs"][entry["run"]]}


def progress(bug: Bug, r: dict[str, Any], when: str, reported: str | None = None) -> str:
    """The entry's verdict at one release, from its run as `jobs.run_job` returns it (before the
    matrix document is built): ``caught``/``missed`` at the reported release, ``lost``/``kept`` at the
    fixing one (``not found``/``found`` when the reported release, ``reported``, did not catch it, as
    `report` says), else the run's status (``contract-error``, ``error``, ``timeout``). Not the check's
    own exit status: a bug lost at its fix is a check that fails (another finding) or conforms."""
    if r["status"] in (CONTRACT_ERROR, "error", "timeout"):
        return str(r["status"])
    failures = [
        {"clause": cid, "status": c["status"], "reason": c.get("reason", ""), "reasons": sorted(reason for _, reason in keys(cid, c)), "every_reason": every_reason(c)}
        for cid, c in r["clauses"].items()
    ]  # fmt: skip
    named = any(bug.names(f) for f in failures)
    if when == "reported":
        return "caught" if named else "missed"
    if reported is not None and reported != "caught":
        return "found" if named else "not found"
    return "kept" if named else "lost"


def verdict(bug: Bug, said: dict[str, Any] | None, when: str) -> dict[str, Any]:
    """One bug at one release: ``caught``/``missed`` (reported) or ``lost``/``kept`` (fixed), else why it did not run."""
    if said is None:
        return {"status": "none"}
    out: dict[str, Any] = {"pins": said["pins"]}
    r = said.get("document")
    if r is None:
        return {**out, "status": said["status"], "error": said.get("error", "")}
    out["command"] = r["command"]
    out["installed"] = r["versions"]
    if r["status"] in (CONTRACT_ERROR, "error", "timeout"):
        return {**out, "status": r["status"], "error": r.get("error", "")}
    named = [reason for f in r["failures"] for reason in bug.naming(f)]
    found = [
        {"clause": f["clause"], "reason": f["reason"], "harm": f["harm"], **({"documented": True} if f.get("documented") else {})}
        for f in r["failures"]
    ]
    hit = ("caught", "missed") if when == "reported" else ("kept", "lost")
    said = {"status": hit[0] if named else hit[1], "clause": r["clauses"].get(bug.clause, "not run"), "findings": found}
    return {**out, **said, **({"named": named} if named else {})}


def report(listed: Listed, results: dict[tuple[str, str], dict[str, Any]], out: Path) -> dict[str, Any]:
    """The bugs document: each bug's verdicts, and recall overall and per framework."""
    entries = []
    for bug in listed.bugs:
        reported = verdict(bug, results.get((bug.id, "reported")), "reported")
        fixed = verdict(bug, results.get((bug.id, "fixed")), "fixed") if bug.fixed else {"status": "no fix"}
        if reported["status"] != "caught" and fixed["status"] in ("lost", "kept"):  # lost/kept say what a fix did to a catch
            fixed["status"] = {"lost": "not found", "kept": "found"}[fixed["status"]]
        entries.append({
            "id": bug.id, "framework": bug.framework, "target": bug.target, "options": bug.options,
            "expect": {k: v for k, v in (("clause", bug.clause), ("reason_id", bug.reason_id), ("reason", bug.reason)) if v},
            "reported": reported, "fixed": fixed,
        })  # fmt: skip
    frameworks = sorted({str(e["framework"]) for e in entries})
    return {
        "format": FORMAT, "version": FORMAT_VERSION,
        "recall": recall(entries),
        "by_framework": {name: recall([e for e in entries if e["framework"] == name]) for name in frameworks},
        "bugs": entries,
        "not_runnable": listed.not_runnable,
    }  # fmt: skip


def recall(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Caught over every bug attempted at its reported release (a release not installed or refused
    counts as not caught); lost over every caught bug that ran at its fixing release. ``n/a`` when
    there is nothing to measure."""
    attempted = [e for e in entries if e["reported"]["status"] != "none"]
    caught = [e for e in attempted if e["reported"]["status"] == "caught"]
    judged = [e for e in caught if e["fixed"]["status"] in ("lost", "kept")]
    lost = [e for e in judged if e["fixed"]["status"] == "lost"]
    return {
        "caught": len(caught), "attempted": len(attempted),
        "ran": sum(e["reported"]["status"] in ("caught", "missed") for e in attempted),
        "recall": _share(len(caught), len(attempted)),
        "lost_at_fix": len(lost), "judged_at_fix": len(judged), "lost_share": _share(len(lost), len(judged)),
    }  # fmt: skip


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "n/a"


def problems(data: dict[str, Any]) -> int:
    """How many bugs the suite misses: not caught where reported, or still found where fixed."""
    return sum(e["reported"]["status"] != "caught" or e["fixed"]["status"] == "kept" for e in data["bugs"])


def report_markdown(data: dict[str, Any]) -> str:
    """The bugs document for a person."""
    r = data["recall"]
    lines = [
        "# Reported bugs at their releases",
        "",
        *([] if data.get("complete", True) else ["**Partial:** written after each run; the run is still going, or was stopped before its end. An entry not reached yet says `none`.", ""]),
        f"Caught at the reported release: **{r['caught']} of {r['attempted']}** ({r['recall']}; {r['ran']} ran, the rest not installed or refused). "
        f"Lost at the fixing release: **{r['lost_at_fix']} of {r['judged_at_fix']}** caught bugs with a fix that ran ({r['lost_share']}).",
        "",
        "| framework | caught | attempted | recall | lost at fix |",
        "|---|---|---|---|---|",
    ]
    for name, f in data["by_framework"].items():
        lines.append(f"| {name} | {f['caught']} | {f['attempted']} | {f['recall']} | {f['lost_at_fix']} of {f['judged_at_fix']} |")
    lines += ["", "| bug | expected | reported release | verdict | fixing release | verdict |", "|---|---|---|---|---|---|"]
    for e in data["bugs"]:
        expected = f"{e['expect']['clause']} {e['expect'].get('reason_id') or e['expect'].get('reason', '')}"
        rep, fix = e["reported"], e["fixed"]
        lines.append(
            f"| {e['id']} | {expected.replace('|', '/')} | {', '.join(rep.get('pins', []))} | {_said(rep)} | {', '.join(fix.get('pins', []))} | {_said(fix)} |"
        )
    if data["not_runnable"]:
        lines += ["", "Not runnable (no configuration reaches them):", ""]
        lines += [f"- {n['id']} ({n['framework']}): {n['why']}" for n in data["not_runnable"]]
    return "\n".join(lines) + "\n"


def _said(v: dict[str, Any]) -> str:
    if v["status"] in ("missed", "kept") and v.get("findings"):
        return f"{v['status']} (found: {'; '.join(sorted({f['clause'] for f in v['findings']}))})"
    if v.get("error"):
        return f"{v['status']}: {v['error'][:160].replace('|', '/')}"
    return str(v["status"])
