"""Recorded provider runs, replayed offline (cassettes/README.md).

``cassettes/provider/<target>/<history>.yaml`` hold a real model's answers (see each
``.meta.json``); ``cassettes/errors/`` hold the failure answers of the suite's summarizer test
double, as real HTTP bytes. Every replay runs in vcrpy record mode ``none`` with outgoing
connections refused and the client pointed at a port where nothing listens: only the cassette
can answer. Nothing here compiles, downloads or runs a model.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import re
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai
import pytest
from click.testing import CliRunner
from vcr.errors import CannotOverwriteExistingCassetteException
from vcr.request import Request as VcrRequest

from compaction_suite.cli import main
from compaction_suite.conformance import oracle
from compaction_suite.conformance.assertions import require
from compaction_suite.conformance.entities import entity_ids, latest_task_list
from compaction_suite.conformance.settings import Settings
from compaction_suite.conformance.target import call_compact, last_event_json, resolve
from compaction_suite.recording import (
    REDACTED,
    ForwardingProxy,
    NetworkBlocked,
    load_meta,
    no_network,
    offline_endpoint,
    offline_settings,
    replaying,
    scrub_request,
    scrub_response,
    scrub_text,
)
from compaction_suite.recording.errors import ERROR_CASES

ROOT = Path(__file__).resolve().parents[1]
CASSETTES = ROOT / "cassettes"
HISTORIES = CASSETTES / "histories"
PROVIDER = sorted((CASSETTES / "provider").glob("*/*.yaml"))
ERRORS = sorted((CASSETTES / "errors").glob("*.yaml"))
STRUCT_KEEP = 10
SECTIONS = ("Conversation Summary (auto-compacted)", "Entities Created/Modified", "Current Task List", "Key Decisions", "Context")


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def _load_history(meta: dict[str, Any]) -> list[dict[str, Any]]:
    path = ROOT / meta["history"]["path"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == meta["history"]["sha256"], f"{path} changed since the recording"
    return json.loads(path.read_text(encoding="utf-8"))


def _body(request: VcrRequest) -> dict[str, Any]:
    body = request.body
    return json.loads(body.decode("utf-8") if isinstance(body, bytes) else body)


def _response_json(response: dict[str, Any]) -> dict[str, Any]:
    body = response["body"]["string"]
    return json.loads(body.decode("utf-8") if isinstance(body, bytes) else body)


def _refused(base_url: str) -> bool:
    """Whether a TCP connection to ``base_url``'s port is refused (nothing listens there)."""
    port = int(base_url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


# --- the provider cassettes: a real model ------------------------------------------------------


@dataclass
class Replay:
    meta: dict[str, Any]
    history: list[dict[str, Any]]
    untouched: list[dict[str, Any]]
    """A copy of the history taken before the compactor saw it (CORE-5)."""
    compactor: Any
    out: Any
    event: dict[str, Any]
    """``last_event`` after ``observe_usage``."""
    sent: list[VcrRequest]
    """The requests the replay made, in order, as vcrpy saw them."""
    recorded: list[tuple[VcrRequest, dict[str, Any]]]
    next_usage: dict[str, Any]
    played: int
    all_played: bool
    port_refused: bool


@functools.cache
def replay(path: Path) -> Replay:
    """Replay a provider cassette: the compaction, then the next agent call, as recorded."""
    meta = load_meta(path)
    history = _load_history(meta)
    untouched = copy.deepcopy(history)
    settings = offline_settings(meta)
    assert settings.base_url is not None and settings.client is not None, "offline settings carry the recorded endpoint"
    refused = _refused(settings.base_url)
    sent: list[VcrRequest] = []

    def seen(request: VcrRequest) -> VcrRequest:
        sent.append(request)
        return request

    compactor = resolve(meta["target"]["spec"]).factory(settings)
    with replaying(path, before_record_request=seen) as cassette:
        out = call_compact(compactor, history, meta["iteration"])
        calls = len(sent)
        reply = settings.client.chat.completions.create(model=settings.model, messages=out, max_tokens=1, temperature=0)
        usage = reply.usage
        assert usage is not None, "the recorded answer reports its usage"
        compactor.observe_usage(usage.prompt_tokens)
        recorded = list(cassette.data)
        played, all_played = cassette.play_count, cassette.all_played
    # vcrpy calls the hook once per lookup; keep one request per interaction played
    sent = sent[:1] + sent[calls : calls + 1] if calls else sent
    return Replay(meta, history, untouched, compactor, out, last_event_json(compactor) or {}, sent, recorded, usage.model_dump(), played, all_played, refused)


def test_provider_cassettes_exist():
    assert len(PROVIDER) >= 6, f"expected the 6 provider cassettes under {CASSETTES / 'provider'}, found {len(PROVIDER)}"
    for path in PROVIDER:
        meta = load_meta(path)
        assert meta["problem"] is None, f"{path}: {meta['problem']}"
        assert meta["model_file"] and re.fullmatch(r"[0-9a-f]{64}", meta["model_file"]["sha256"]), path


@pytest.mark.parametrize("path", PROVIDER, ids=_id)
def test_replay_needs_only_the_cassette(path):
    r = replay(path)
    assert r.port_refused, "the replay's base_url should point at a port where nothing listens"
    assert r.all_played and r.played == len(r.recorded) == len(r.meta["interactions"]), "every recorded exchange, no other, was replayed"
    for sent, (recorded, _) in zip(r.sent, r.recorded, strict=True):
        assert (sent.method, sent.path, _body(sent)) == (recorded.method, recorded.path, _body(recorded))


@pytest.mark.parametrize("path", PROVIDER, ids=_id)
def test_replay_reproduces_the_recorded_output_and_event(path):
    r = replay(path)
    assert r.out == r.meta["output"]
    recorded_event = dict(r.meta["event"])
    assert r.event == recorded_event


@pytest.mark.parametrize("path", PROVIDER, ids=_id)
def test_summary_is_the_models_answer(path):
    r = replay(path)
    request, response = r.recorded[0]
    answer = _response_json(response)["choices"][0]["message"]["content"].strip()
    strategy = r.compactor.strategy
    _, prefix, _ = strategy.plan(r.untouched)
    assert _body(request)["model"] == r.meta["model"] == r.compactor.strategy.summarizer.model  # SUM-5
    summaries = [m for m in r.out if oracle.is_summary(m)]
    assert summaries == [{"role": "user", "content": f"[Context Summary]\n{strategy.body(prefix, answer).strip()}"}]


@pytest.mark.parametrize("path", PROVIDER, ids=_id)
def test_event_matches_the_recorded_exchanges(path):
    r = replay(path)
    request, response = r.recorded[0]
    usage = _response_json(response)["usage"]
    prompt = _body(request)["messages"][0]["content"]
    assert (r.event["summarizer_prompt_tokens"], r.event["summarizer_completion_tokens"]) == (usage["prompt_tokens"], usage["completion_tokens"])
    assert r.event["prompt_hash"] == hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:8]
    assert r.event["compacted"] and r.event["failure_reason"] is None
    next_usage = _response_json(r.recorded[-1][1])["usage"]
    assert r.event["verified_prompt_tokens"] == next_usage["prompt_tokens"] == r.next_usage["prompt_tokens"] == r.meta["verified_prompt_tokens"]
    assert _body(r.recorded[-1][0])["messages"] == r.out  # the verified figure is the compacted history's


@pytest.mark.parametrize("path", PROVIDER, ids=_id)
def test_core_clauses_hold_on_the_real_output(path):
    r = replay(path)
    history, out = r.untouched, r.out
    require(oracle.check_tool_results_have_calls(out), history, out, clause="CORE-1")
    require(oracle.check_calls_have_one_result(out), history, out, clause="CORE-2")
    require(oracle.check_system_kept(history, out, True), history, out, clause="CORE-3")
    require(oracle.check_rounds_whole(history, out), history, out, clause="CORE-4")
    require(None if oracle.same(r.history, history) else "the input was mutated", history, r.history, clause="CORE-5")
    require(oracle.check_valid_messages(out), history, out, clause="CORE-6")


@pytest.mark.parametrize("path", [p for p in PROVIDER if "summary" in resolve(load_meta(p)["target"]["spec"]).factory(Settings()).profiles], ids=_id)
def test_summary_clauses_hold_on_the_real_output(path):
    r = replay(path)
    history, out, k = r.untouched, r.out, r.meta["settings"]["keep_recent_rounds"]
    system, tail = oracle.expected_summary_shape(history, k)
    require(oracle.check_summary_shape(history, out, k), history, out, clause="SUM-1")
    require(None if oracle.is_summary(out[len(system)]) else "no [Context Summary] user message after the system messages", history, out, clause="SUM-2")
    require(None if oracle.same(out[len(out) - len(tail) :], tail) else f"the last {k} rounds differ", history, out, clause="SUM-3")
    require(None if sum(map(oracle.is_summary, out)) == 1 else "more than one summary", history, out, clause="SUM-4")


@pytest.mark.parametrize("path", [p for p in PROVIDER if "structured" in resolve(load_meta(p)["target"]["spec"]).factory(Settings()).profiles], ids=_id)
def test_structured_clauses_hold_on_the_real_output(path):
    """STRUCT-2 and STRUCT-3 hold whatever the small model wrote: the compactor extracts ids and tasks."""
    r = replay(path)
    history, out = r.untouched, r.out
    summary = "\n".join(oracle.text(m) for m in out if oracle.is_summary(m))
    missing = [s for s in SECTIONS if s not in summary]
    require(f"the summary lacks {missing}" if missing else None, history, out, clause="STRUCT-1")
    matched, _ = oracle.kept_indices(history, out)
    compacted_part = [m for i, m in enumerate(history) if i not in set(matched.values())]
    lost = [i for i in entity_ids(compacted_part) if i not in summary]
    lost += [i for i in entity_ids(history) if i not in oracle.readable_text(out)]
    require(f"entity ids lost: {lost}" if lost else None, history, out, clause="STRUCT-2")
    tasks = [t["title"] for t in latest_task_list(compacted_part) or []]
    lost = [t for t in tasks if t not in summary]
    lost += [t["title"] for t in latest_task_list(history) or [] if t["title"] not in oracle.readable_text(out)]
    require(f"task titles lost: {lost}" if lost else None, history, out, clause="STRUCT-3")
    kept = oracle.same(out[-STRUCT_KEEP:], history[-STRUCT_KEEP:])
    require(None if kept else f"the last {STRUCT_KEEP} messages were not kept", history, out, clause="STRUCT-4")


@pytest.mark.parametrize("path", PROVIDER, ids=_id)
def test_real_summary_snapshot(path, snapshot):
    r = replay(path)
    assert [oracle.text(m) for m in r.out if oracle.is_summary(m)] == snapshot


def test_an_unrecorded_request_fails_offline():
    path = PROVIDER[0]
    client = offline_settings(load_meta(path)).client
    with replaying(path), pytest.raises(CannotOverwriteExistingCassetteException):
        client.chat.completions.create(model="not-recorded", messages=[{"role": "user", "content": "hello"}])


def test_no_network_refuses_connections():
    with no_network(), socket.socket() as sock, pytest.raises(NetworkBlocked):
        sock.connect(("127.0.0.1", 9))


# --- the error cassettes: the suite's test double ---------------------------------------------------

REPLAYED_FAILURE = {
    "rate-limit-429": "RateLimitError: HTTP 429",
    "server-error-500": "InternalServerError: HTTP 500",
    "service-unavailable-503": "InternalServerError: HTTP 503",
    "malformed-body": "JSONDecodeError",
    "no-choices": "MalformedResponse",
    "empty-content": "EmptySummary",
    "truncated-body": "JSONDecodeError",  # live it was a cut connection; the cassette holds the bytes before the cut
}
"""What the reference compactor's ``failure_reason`` starts with when the cassette is replayed."""


def test_error_cassettes_exist():
    assert {p.stem for p in ERRORS} == {case.name for case in ERROR_CASES}
    for path in ERRORS:
        meta = load_meta(path)
        assert "TEST DOUBLE" in meta["produced_by"] and meta["problem"] is None
        text = path.read_text(encoding="utf-8")  # the test double's header says where the bytes came from
        assert "x-test-double:" in text and "compaction-suite summarizer" in text


@pytest.mark.parametrize("path", [p for p in ERRORS if p.stem in REPLAYED_FAILURE], ids=lambda p: p.stem)
def test_reference_compactor_survives_the_recorded_failure(path, caplog):
    """FAIL-1..FAIL-3 over real HTTP bytes: the input comes back unchanged, the event names the error."""
    meta = load_meta(path)
    history = _load_history(meta)
    settings = offline_settings(meta)
    compactor = resolve("reference").factory(settings)
    with replaying(path) as cassette, caplog.at_level("WARNING"):
        out = call_compact(compactor, copy.deepcopy(history), meta["iteration"])
        assert cassette.all_played and cassette.play_count == 1
    clause = meta["clause"] if path.stem != "truncated-body" else "FAIL-3"
    require(None if oracle.same(out, history) else "the output differs from the input", history, out, clause=clause)
    event = last_event_json(compactor)
    assert event["failure_reason"].startswith(REPLAYED_FAILURE[path.stem]), event["failure_reason"]
    assert not event["compacted"] and re.fullmatch(r"[0-9a-f]{8}", event["prompt_hash"])
    assert any("compaction failed: " + REPLAYED_FAILURE[path.stem].split(":")[0] in r.getMessage() for r in caplog.records)  # FAIL-5


def _official_client_replay(path: Path, **extra: Any) -> Any:
    """Send the recorded request itself through a fresh official client; returns its result."""
    meta = load_meta(path)
    client = offline_settings(meta).client
    assert client is not None, "offline settings carry the recorded endpoint"
    with replaying(path) as cassette:
        request = _body(cassette.requests[0])
        result = client.chat.completions.create(**request, **extra)
        if request.get("stream"):
            result = list(result)
        assert cassette.all_played
    return result


def test_429_replay_exposes_retry_after():
    with pytest.raises(openai.RateLimitError) as caught:
        _official_client_replay(CASSETTES / "errors" / "rate-limit-429.yaml")
    assert caught.value.status_code == 429
    assert caught.value.response.headers["retry-after"] == "7"
    assert caught.value.body["code"] == "rate_limit_exceeded"


@pytest.mark.parametrize("name, status", [("server-error-500", 500), ("service-unavailable-503", 503)])
def test_5xx_replays_through_the_official_client(name, status):
    with pytest.raises(openai.InternalServerError) as caught:
        _official_client_replay(CASSETTES / "errors" / f"{name}.yaml")
    assert caught.value.status_code == status


def test_malformed_and_empty_answers_through_the_official_client():
    with pytest.raises(ValueError):  # json.JSONDecodeError: the body is not JSON
        _official_client_replay(CASSETTES / "errors" / "malformed-body.yaml")
    assert _official_client_replay(CASSETTES / "errors" / "no-choices.yaml").choices == []
    assert _official_client_replay(CASSETTES / "errors" / "empty-content.yaml").choices[0].message.content == ""


def test_truncated_stream_ends_without_finish_reason():
    """The stream the server cut: the events received before the cut, no finish_reason, no [DONE]."""
    path = CASSETTES / "errors" / "truncated-stream.yaml"
    meta = load_meta(path)
    assert "cannot record a connection cut" in meta["capture_note"]
    chunks = _official_client_replay(path)
    assert len(chunks) == meta["fault"]["chunks"] == 2
    assert all(c.choices[0].finish_reason is None for c in chunks)
    assert "[DONE]" not in path.read_text(encoding="utf-8")


# --- secrets ----------------------------------------------------------------------------------

CREDENTIALS = (
    re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"),
    re.compile(r"(?i)\bbearer\s+(?!REDACTED)[A-Za-z0-9._~+/-]{12,}"),
    re.compile(
        r"""(?im)^\s*-?\s*["']?(authorization|proxy-authorization|api-key|x-api-key|openai-organization|openai-project|cookie|set-cookie)["']?\s*:"""
    ),
    re.compile(r"""(?i)["']?api[-_]?key["']?\s*[:=]\s*["']?(?!REDACTED)[A-Za-z0-9._~+/-]{8,}"""),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"(?i)aws_secret_access_key\s*[:=]"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
)
"""What a leaked credential looks like (written apart from the scrubber's own patterns)."""


def credentials_in(text: str) -> list[str]:
    return [m.group(0)[:40] for pattern in CREDENTIALS for m in pattern.finditer(text)]


def test_no_credentials_under_cassettes():
    leaks = {}
    for path in sorted(CASSETTES.rglob("*")):
        if path.is_file():
            found = credentials_in(path.read_text(encoding="utf-8", errors="replace"))
            if found:
                leaks[str(path.relative_to(ROOT))] = found
    assert not leaks, f"credential-like strings under cassettes/: {leaks}"


FAKE_KEY = "sk-proj-" + "Fak3" * 10


def test_scrubber_redacts_a_fake_key():
    request = VcrRequest(
        "POST",
        "https://example.invalid/v1/chat/completions?api-version=2024-10-21&api-key=" + FAKE_KEY,
        json.dumps({"messages": [{"role": "user", "content": f"my key is {FAKE_KEY}, Bearer abcdefghijklmnopqrstuvwxyz0123"}]}).encode(),
        {"Authorization": f"Bearer {FAKE_KEY}", "api-key": FAKE_KEY, "OpenAI-Organization": "org-123", "Content-Type": "application/json"},
    )
    raw = f"{request.uri}\n{request.headers}\n{request.body.decode()}"
    assert credentials_in(raw)
    scrubbed = scrub_request(request)
    text = f"{scrubbed.uri}\n{scrubbed.headers}\n{scrubbed.body.decode()}"
    assert FAKE_KEY not in text and not credentials_in(text) and REDACTED in text
    assert {k.lower() for k in scrubbed.headers} == {"content-type"}
    assert request.headers["api-key"] == FAKE_KEY  # the request being sent is not touched

    response = {
        "status": {"code": 200, "message": "OK"},
        "headers": {"Set-Cookie": ["__cf_bm=abc"], "openai-project": ["proj_x"], "Content-Length": ["40"], "x-request-id": ["req_1"]},
        "body": {"string": json.dumps({"echo": FAKE_KEY}).encode()},
    }
    scrubbed = scrub_response(response)
    assert set(scrubbed["headers"]) == {"Content-Length", "x-request-id"}
    assert FAKE_KEY.encode() not in scrubbed["body"]["string"]
    assert scrubbed["headers"]["Content-Length"] == [str(len(scrubbed["body"]["string"]))]
    assert scrub_text("azure key 0123456789abcdef0123456789abcdef", ["0123456789abcdef0123456789abcdef"]) == "azure key REDACTED"


# --- the record command itself, offline against the test double ------------------------------------


def _record(server, target: str, out: Path, key: str) -> Any:
    args = ["record", target, "--base-url", server.base_url, "--model", "summary-deployment", "--out", str(out), "--timeout", "20"]
    args += ["--history", str(HISTORIES / "entities-and-progress.json")]
    return CliRunner().invoke(main, args, env={"OPENAI_API_KEY": key})


def test_record_then_replay(server, tmp_path):
    """What a third party does: record their target, then replay it offline (here the reference,
    recorded against the test double with a fake key that must not reach the files)."""
    result = _record(server, "reference-structured", tmp_path, FAKE_KEY)
    assert result.exit_code == 0, result.output
    cassette = tmp_path / "reference-structured" / "entities-and-progress.yaml"
    assert [r.headers.get("authorization") for r in server.requests] == [f"Bearer {FAKE_KEY}"] * 2
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert FAKE_KEY not in path.read_text(encoding="utf-8") and not credentials_in(path.read_text(encoding="utf-8"))
    meta = load_meta(cassette)
    assert meta["command"].startswith("compaction-suite record reference-structured")
    assert isinstance(meta["verified_prompt_tokens"], int)
    assert [i["purpose"] for i in meta["interactions"]] == ["summarizer call made by the compactor", "next agent call (verification)"]

    compactor = resolve("reference-structured").factory(offline_settings(meta))
    history = json.loads((HISTORIES / "entities-and-progress.json").read_text(encoding="utf-8"))
    with replaying(cassette) as played:
        out = call_compact(compactor, history, meta["iteration"])
        assert played.play_count == 1
    assert out == meta["output"]
    assert last_event_json(compactor)["summarizer_prompt_tokens"] == meta["event"]["summarizer_prompt_tokens"]
    assert meta["produced_by"].startswith("the compaction-suite summarizer TEST DOUBLE")


def crashing_factory(settings):
    """A compactor that raises instead of failing softly (for the recorder's sake)."""

    class Crashing:
        def compact(self, messages, *, iteration):
            settings.client.chat.completions.create(model=settings.model, messages=[{"role": "user", "content": "hi"}])
            raise RuntimeError("boom")

    return Crashing()


def test_record_reports_a_compactor_that_raises_and_goes_on(server, tmp_path):
    args = ["record", "test_cassettes:crashing_factory", "--base-url", server.base_url, "--model", "m", "--out", str(tmp_path)]
    args += ["--history", str(HISTORIES / "entities-and-progress.json"), "--history", str(HISTORIES / "earlier-summary.json")]
    result = CliRunner().invoke(main, args, env={"OPENAI_API_KEY": ""})
    assert result.exit_code == 1, result.output
    assert result.output.count("the compactor raised RuntimeError: boom") == 2
    for cassette in sorted((tmp_path / "test_cassettes-crashing_factory").glob("*.yaml")):
        meta = load_meta(cassette)  # every cassette has its meta file
        assert meta["problem"] == "the compactor raised RuntimeError: boom" and meta["output"] is None


def test_record_reports_a_compactor_that_did_not_compact(server, tmp_path):
    server.fault("500")
    result = _record(server, "reference", tmp_path, "")
    assert result.exit_code == 1
    assert "the compactor did not compact: InternalServerError" in result.output


NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="node is not on PATH")
def test_record_and_replay_a_cmd_target(server, tmp_path):
    """A cmd: compactor calls the endpoint from its own process: recorded through the forwarding
    proxy (which adds the key, so the process never sees it), replayed through it too."""
    target = f"cmd:{NODE} {ROOT / 'examples' / 'node' / 'compactor.mjs'}"
    result = _record(server, target, tmp_path, FAKE_KEY)
    assert result.exit_code == 0, result.output
    (folder,) = tmp_path.iterdir()
    cassette = folder / "entities-and-progress.yaml"
    meta = load_meta(cassette)
    assert server.requests[0].headers["authorization"] == f"Bearer {FAKE_KEY}"
    assert FAKE_KEY not in cassette.read_text(encoding="utf-8")

    from compaction_suite.conformance.protocol import CommandTarget

    history = json.loads((HISTORIES / "entities-and-progress.json").read_text(encoding="utf-8"))
    endpoint = offline_endpoint(meta)
    with replaying(cassette) as played, ForwardingProxy(endpoint) as proxy, CommandTarget(target[4:], timeout=20) as factory:
        out = factory(endpoint.settings(base_url=proxy.url)).compact(history, iteration=meta["iteration"])
        assert played.play_count == 1
    assert out == meta["output"]


def test_record_errors_command(tmp_path):
    """``compaction-suite record-errors`` re-records every failure exchange of the test double, with one meta record each."""
    result = CliRunner().invoke(main, ["record-errors", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert {p.stem for p in tmp_path.glob("*.yaml")} == {case.name for case in ERROR_CASES}
    for case in ERROR_CASES:
        meta = load_meta(tmp_path / f"{case.name}.yaml")
        assert meta["problem"] is None and meta["clause"] == case.clause and meta["fault"]["name"] == case.fault
        assert meta["command"] == f"compaction-suite record-errors --out {tmp_path}"
        assert len(meta["interactions"]) == 1 and "TEST DOUBLE" in meta["produced_by"]
        assert (meta["target"] is None) == case.stream
