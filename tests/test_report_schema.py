"""The JSON report's schema (``conformance/schema/report.schema.json``, issue 24 point 5) is valid,
agrees with the code that writes the report, and refuses a report that breaks it.

Every report the project's own ``check`` runs write is validated against it in `checking`; these
tests are the sanity checks of the schema itself (cases as data, as JSON-Schema-Test-Suite has them).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from compaction_suite.conformance import formats, providers, report
from compaction_suite.conformance.capabilities import CHOICES, Capabilities
from compaction_suite.conformance.clauses import HARMS, PROFILES
from compaction_suite.conformance.settings import Settings

from checking import REPORT_SCHEMA, REPORTS, valid_report

SCHEMA: dict[str, Any] = json.loads(REPORT_SCHEMA.read_text(encoding="utf-8"))
DEFS = SCHEMA["$defs"]
TOP = SCHEMA["properties"]


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_the_schema_names_the_values_the_code_writes() -> None:
    """One source for each fact: the schema's enums and fixed keys are those of the code."""
    assert TOP["version"]["const"] == report.FORMAT_VERSION
    assert DEFS["status"]["enum"] == list(report.STATUSES) == TOP["status_counts"]["required"]
    assert DEFS["clause"]["properties"]["harm"]["enum"] == list(HARMS) == TOP["harm_counts"]["required"]
    assert DEFS["profile"]["enum"] == list(PROFILES)
    assert DEFS["wire_format"]["enum"] == list(formats.NAMES)
    assert TOP["verdict"]["enum"] == list(report.VERDICTS)
    capabilities = TOP["capabilities"]["properties"]
    assert capabilities["providers"]["items"]["enum"] == list(providers.NAMES)
    assert {k: tuple(capabilities[k]["enum"]) for k in CHOICES if k != formats.KEY} == {k: v for k, v in CHOICES.items() if k != formats.KEY}
    assert set(TOP["capabilities"]["required"]) == set(Capabilities().as_dict())
    assert set(TOP["settings"]["required"]) == set(Settings().as_json())


def test_every_documented_reason_id_fits_the_schema() -> None:
    """The ids report.md lists (a family's member filled in) all match the schema's pattern, so the
    pattern refuses prose, not a real id."""
    table = REPORT_SCHEMA.with_name("report.md").read_text(encoding="utf-8").split("<!-- reason-ids", 1)[1]
    quoted = [i for i in re.findall(r"`([^`]+)`", table) if not re.fullmatch(r"[A-Z]\w*Error", i)]  # an exception named in prose
    ids = {re.sub(r"<[^>]+>", "member", i) for i in quoted}
    pattern = re.compile(DEFS["reason_id"]["pattern"])
    assert len(ids) > 50 and not [i for i in ids if not pattern.search(i)]


def _report() -> dict[str, Any]:
    """A report of the shape `report.build` writes: one clause passing, one failing with its
    evidence, one skipped (the capabilities and settings from the code's own objects)."""
    history = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    case = {"messages": history, "iteration": 8, "settings": {}, "summarizer": {"fault": None, "params": {}, "times": None, "reply": None}}
    title = {"status": "pass", "level": "MUST", "profile": "core", "harm": "loss", "title": "system messages kept", "exercised": 3}
    failing = dict(title, status="fail", wire_format="chat-completions", reason="input message 0 (system) is missing", reason_id="system-message-dropped")
    failing |= {"test": "conformance/tests/test_core.py::test_x", "failures": [{"test": "conformance/tests/test_core.py::test_x", "reason": "r", "reason_id": "system-message-dropped"}]}
    failing |= {"history": history, "output": history[1:], "case": case, "replay": report.REPLAY.format(report="{report}", clause="CORE-3")}
    skipped = dict(title, profile="storage", status="skip", reason="profile 'storage' is not claimed")
    return {
        "format": "compaction-suite-report",
        "version": report.FORMAT_VERSION,
        "compactor": "broken.compactors:strip_system",
        "origin": "broken.compactors:strip_system",
        "compactor_version": None,
        "profiles_claimed": ["core"],
        "profiles_run": ["core"],
        "clauses_run": ["CORE-1", "CORE-3"],
        "capabilities": Capabilities().as_dict(),
        "settings": Settings().as_json() | {"base_url": "(suite's summarizer test double)"},
        "compact_calls": 12,
        "compacted_calls": 4,
        "calls_summarizer": None,
        "verdict": "does-not-conform",
        "passed": False,
        "harm_counts": {h: int(h == "loss") for h in HARMS},
        "status_counts": {s: int(s in ("pass", "fail", "skip")) for s in report.STATUSES},
        "skips": [{"reason": "profile 'storage' is not claimed", "clauses": ["STORE-1"]}],
        "clauses": {"CORE-1": dict(title, wire_format="chat-completions"), "CORE-3": failing, "STORE-1": skipped},
    }


def test_a_report_of_the_written_shape_validates(tmp_path: Path) -> None:
    """As built and as `report.write` puts it on disk (the replay command filled in)."""
    valid_report(_report())
    report.write(_report(), tmp_path / "r.json")
    written = valid_report(json.loads((tmp_path / "r.json").read_text(encoding="utf-8")))
    assert written["clauses"]["CORE-3"]["replay"] == f"compaction-suite reproduce {tmp_path / 'r.json'} CORE-3"


def _without(key: str) -> Any:
    return lambda r: r.pop(key)


BROKEN = {
    "a required top-level key missing": _without("verdict"),
    "an unknown top-level key": lambda r: r.update(extra=1),
    "the wrong format version": lambda r: r.update(version=1),
    "an unknown status": lambda r: r["clauses"]["CORE-1"].update(status="flaky"),
    "an unknown verdict": lambda r: r.update(verdict="maybe"),
    "passed disagreeing with the verdict": lambda r: r.update(passed=True),
    "a status count missing": lambda r: r["status_counts"].pop("xfail"),
    "an unknown harm count": lambda r: r["harm_counts"].update(annoying=0),
    "a clause without its level": lambda r: r["clauses"]["CORE-1"].pop("level"),
    "a clause with an unknown key": lambda r: r["clauses"]["CORE-1"].update(note="x"),
    "a malformed clause id": lambda r: r["clauses"].update({"core-9": r["clauses"]["CORE-1"]}),
    "a failure without its reason id": lambda r: r["clauses"]["CORE-3"].pop("reason_id"),
    "a listed failure without its reason id": lambda r: r["clauses"]["CORE-3"]["failures"][0].pop("reason_id"),
    "a reason id that is a sentence": lambda r: r["clauses"]["CORE-3"].update(reason_id="System message dropped"),
    "a skip without its reason": lambda r: r["clauses"]["STORE-1"].pop("reason"),
    "a clause that ran without its wire format": lambda r: r["clauses"]["CORE-1"].pop("wire_format"),
    "a skipped clause naming a wire format": lambda r: r["clauses"]["STORE-1"].update(wire_format="chat-completions"),
    "evidence without its case": lambda r: r["clauses"]["CORE-3"].pop("case"),
    "evidence on a passing clause": lambda r: r["clauses"]["CORE-1"].update({k: r["clauses"]["CORE-3"][k] for k in ("history", "output", "case", "replay")}),
    "a case without its summarizer mode": lambda r: r["clauses"]["CORE-3"]["case"].pop("summarizer"),
    "an unknown provider": lambda r: r["capabilities"].update(providers=["mistral"]),
    "a setting the code does not write": lambda r: r["settings"].update(temperature=0.0),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_the_schema_refuses_a_broken_report(name: str) -> None:
    broken = copy.deepcopy(_report())
    BROKEN[name](broken)
    assert not REPORTS.is_valid(broken), f"{name}: the schema accepted it"
    with pytest.raises(AssertionError, match="the report breaks its schema"):
        valid_report(broken)
