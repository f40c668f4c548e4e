"""Wire formats (issue 13; SPEC Part A, "Wire formats"): each format's strategies draw histories
its own rules accept, each clause check catches the violation SPEC's worked example shows, the
correct example compactors conform, every negative control fails with its clause, and an
unknown ``wire_format`` is a contract error."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings

from compaction_suite.conformance import formats
from compaction_suite.conformance.capabilities import CapabilityError, declared
from compaction_suite.conformance.formats import anthropic, responses
from compaction_suite.conformance.reproduce import case_of, replay

from broken.formats import CONTROLS
from checking import assert_caught, check, in_process, valid_report

ROOT = Path(__file__).resolve().parent.parent
QUICK = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


# --- the strategies draw what the format's own rules accept


@pytest.mark.parametrize("name", [formats.RESPONSES, formats.ANTHROPIC])
@pytest.mark.parametrize("in_flight", [False, True])
def test_drawn_histories_are_valid_in_their_format(name: str, in_flight: bool) -> None:
    fmt = formats.get(name)
    options = {"min_rounds": 2, "in_flight": True} if in_flight else {}

    @QUICK
    @given(history=fmt.histories(max_rounds=12, **options))
    def holds(history):
        assert fmt.invalid(history) is None
        assert fmt.in_flight(history) is in_flight
        assert {k: v for k, v in fmt.structural(history, copy.deepcopy(history)).items() if v} == {}

    holds()


@QUICK
@given(history=responses.histories(max_rounds=10, reasoning=True, compaction=True))
def test_drawn_responses_carry_reasoning_and_compaction_items(history) -> None:
    kinds = [responses.kind(item) for item in history]
    assert "compaction" in kinds
    if "function_call" in kinds or ("message" in kinds and any(i.get("role") == "assistant" for i in history)):
        assert "reasoning" in kinds


@pytest.mark.parametrize(
    "shape",
    [
        pytest.param(lambda h: "custom_tool_call" in map(responses.kind, h) and "custom_tool_call_output" in map(responses.kind, h), id="custom-tool-call"),
        pytest.param(lambda h: any("type" not in i for i in h), id="easy-input-message"),
        pytest.param(lambda h: any(isinstance(i.get("output"), list) for i in h), id="output-parts"),
        pytest.param(lambda h: any(responses.kind(i) == "function_call" and "status" in i for i in h), id="call-status"),
    ],
)
def test_drawn_responses_carry_the_shapes_real_traffic_does(shape) -> None:
    """SPEC RESP-2 Decision: the histories draw what agents send, not only the canonical shapes."""
    found = find(responses.histories(min_rounds=3), shape, settings=settings(max_examples=2000, database=None, phases=[Phase.generate]))
    assert shape(found) and responses.invalid(found) is None


@pytest.mark.parametrize(
    "shape",
    [
        pytest.param(lambda r: any(isinstance(b.get("content"), list) for m in r["messages"] for b in anthropic.blocks(m)), id="result-blocks"),
        pytest.param(lambda r: any(b.get("is_error") for m in r["messages"] for b in anthropic.blocks(m)), id="is-error"),
        pytest.param(lambda r: any(anthropic.tool_results(m) and anthropic.blocks(m)[-1].get("type") == "text" for m in r["messages"]), id="text-after-results"),
        pytest.param(lambda r: any("cache_control" in b for m in r["messages"] for b in anthropic.blocks(m)), id="cache-control"),
        pytest.param(lambda r: any(m["role"] == "assistant" and isinstance(m["content"], str) for m in r["messages"]), id="assistant-string"),
    ],
)
def test_drawn_anthropic_requests_carry_the_shapes_real_traffic_does(shape) -> None:
    """SPEC ANTH-5: the histories draw what agents send, not only the canonical shapes."""
    found = find(anthropic.histories(min_rounds=3), shape, settings=settings(max_examples=2000, database=None, phases=[Phase.generate]))
    assert shape(found) and anthropic.invalid(found) is None


# --- the worked examples of SPEC Part A, "Wire formats"

RESPONSES_HISTORY: list[dict[str, Any]] = [
    {"type": "message", "role": "developer", "content": "You are a coding agent."},
    {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAAold"},
    {"type": "message", "role": "user", "content": "Fix the build."},
    {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAArs1"},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "runCommand", "arguments": '{"command": "make"}'},
    {"type": "function_call_output", "call_id": "call_1", "output": "make: *** error 2"},
    {"type": "message", "role": "user", "content": "Now run the tests."},
    {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "gAAAArs2"},
    {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "runCommand", "arguments": '{"command": "pytest"}'},
    {"type": "function_call_output", "call_id": "call_2", "output": "3 passed"},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Tests pass."}]},
]
RESPONSES_CORRECT = [RESPONSES_HISTORY[0], RESPONSES_HISTORY[1], *RESPONSES_HISTORY[6:]]


@pytest.mark.parametrize(
    ("clause", "out"),
    [
        ("RESP-1", [RESPONSES_HISTORY[0], *RESPONSES_HISTORY[9:]]),
        ("RESP-2", [*RESPONSES_CORRECT[:5], *RESPONSES_CORRECT[6:]]),
        ("RESP-3", [RESPONSES_HISTORY[0], RESPONSES_HISTORY[6], *RESPONSES_HISTORY[8:]]),
        ("RESP-4", [RESPONSES_HISTORY[0], {**RESPONSES_HISTORY[1], "encrypted_content": "gAAAAnew"}, *RESPONSES_HISTORY[6:]]),
        ("RESP-5", [RESPONSES_HISTORY[0], RESPONSES_HISTORY[1], RESPONSES_HISTORY[1], *RESPONSES_HISTORY[6:]]),
        ("RESP-6", [RESPONSES_HISTORY[0], {"role": "tool", "content": "x"}, *RESPONSES_HISTORY[6:]]),
        ("RESP-7", RESPONSES_HISTORY[1:2] + RESPONSES_HISTORY[6:]),
    ],
)
def test_each_responses_clause_catches_its_worked_violation(clause: str, out: list) -> None:
    found = responses.structural(RESPONSES_HISTORY, out)
    assert found[clause] is not None
    assert {k: v for k, v in responses.structural(RESPONSES_HISTORY, RESPONSES_CORRECT).items() if v} == {}


RS = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAArs1"}
SAID = {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed", "content": [{"type": "output_text", "text": "It builds."}]}
ASKED = {"type": "message", "role": "user", "content": "Fix the build."}
LATER = {"type": "message", "role": "user", "content": "Now run the tests."}
COMPACTED = {"type": "compaction", "id": "cmp_2", "encrypted_content": "gAAAAnew"}
UNNAMED = {k: v for k, v in SAID.items() if k != "id"}
REASONING_PAIRS = [  # (input, output, RESP-3's reason id or None: the Responses API's pairing of a reasoning item and the item after it)
    pytest.param([ASKED, RS, SAID, LATER], [ASKED, SAID, LATER, COMPACTED], "item-without-its-reasoning", id="gpt-5.4-compact-output"),
    pytest.param([ASKED, RS, SAID, LATER], [ASKED, UNNAMED, LATER, COMPACTED], None, id="assistant-id-stripped"),
    pytest.param([ASKED, RS, UNNAMED, LATER], [ASKED, UNNAMED, LATER], None, id="item-sent-without-id"),
    pytest.param([ASKED, RS, SAID, LATER], [ASKED, RS, LATER], "reasoning-without-its-item", id="reasoning-without-its-item"),
    pytest.param([ASKED, RS, SAID, LATER], [ASKED, RS, LATER, SAID], "reasoning-separated", id="moved-apart"),
    pytest.param([ASKED, RS, SAID, LATER], [LATER], None, id="both-dropped"),
]


@pytest.mark.parametrize(("history", "out", "reason_id"), REASONING_PAIRS)
def test_reasoning_pairs_as_the_api_pairs_them(history: list, out: list, reason_id: str | None) -> None:
    """SPEC RESP-3: both directions of the API's 400s ("Item 'rs_…' of type 'reasoning' was provided
    without its required following item"; "Item 'msg_…' of type 'message' was provided without its
    required 'reasoning' item: 'rs_…'", continuedev/continue#9359), by the id the API gave the item;
    the compact endpoint's output as gpt-5.4 returns it is openai/openai-agents-python#2727's."""
    found = responses.check_reasoning_precedes(history, out)
    assert (found.reason_id if found is not None else None) == reason_id, found


THINK: dict[str, Any] = {"type": "thinking", "thinking": "Run make first.", "signature": "EuYBsig"}
ANTHROPIC_HISTORY: dict[str, Any] = {
    "system": "You are a coding agent.",
    "messages": [
        {"role": "user", "content": "Fix the build."},
        {"role": "assistant", "content": [THINK, {"type": "tool_use", "id": "toolu_1", "name": "runCommand", "input": {"command": "make"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "make: *** error 2"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "The build fails in step 2."}]},
        {"role": "user", "content": "Now run the tests."},
        {"role": "assistant", "content": [{"type": "text", "text": "3 passed."}]},
    ],
}
M: list[dict[str, Any]] = ANTHROPIC_HISTORY["messages"]
ANTHROPIC_CORRECT = {"system": ANTHROPIC_HISTORY["system"], "messages": M[4:]}


USE_1 = {"type": "tool_use", "id": "toolu_1", "name": "runCommand", "input": {"command": "make"}}
USE_2 = {"type": "tool_use", "id": "toolu_2", "name": "runCommand", "input": {"command": "pytest"}}
LOOP = [  # a turn in a tool loop: it opened with thinking, its second call came without (non-interleaved thinking)
    {"role": "user", "content": "Fix the build."},
    {"role": "assistant", "content": [THINK, USE_1]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "make: ok"}]},
    {"role": "assistant", "content": [USE_2]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "3 passed"}]},
]
SUMMARY = {"role": "user", "content": "Here is a summary of the conversation to date: the build was fixed."}
OPEN_TURNS = [  # (input messages, output messages, ANTH-3's reason id or None)
    pytest.param(LOOP, [SUMMARY, *LOOP[3:]], "final-turn-without-thinking", id="summary-cuts-into-the-turn"),
    pytest.param(LOOP, LOOP[1:], None, id="turn-kept-whole"),
    pytest.param(LOOP, [SUMMARY, {"role": "assistant", "content": [{**THINK, "thinking": "Run the tests."}, USE_2]}, LOOP[4]], None, id="interleaved-thinking-opens-it"),
    pytest.param([*LOOP, {"role": "assistant", "content": "3 passed."}, {"role": "user", "content": "Thanks."}], [SUMMARY, {"role": "user", "content": "Thanks."}], None, id="no-tool-loop-open"),
    pytest.param([LOOP[0], {"role": "assistant", "content": [USE_1]}, *LOOP[2:]], [SUMMARY, *LOOP[3:]], None, id="thinking-off"),
]


@pytest.mark.parametrize(("before", "after", "reason_id"), OPEN_TURNS)
def test_a_final_turn_in_a_tool_loop_opens_with_thinking(before: list, after: list, reason_id: str | None) -> None:
    """SPEC ANTH-3: "When `thinking` is enabled, a final `assistant` message must start with a thinking
    block" (microsoft/vscode-copilot-chat#2367); a summary cutting into the open turn is
    langchain-ai/langchain#34794's. Judged where the input's open turn opened with thinking."""
    found = anthropic.check_thinking_kept({"messages": before}, after)
    assert (found.reason_id if found is not None else None) == reason_id, found


@pytest.mark.parametrize(
    ("clause", "out"),
    [
        ("ANTH-1", {"system": ANTHROPIC_HISTORY["system"], "messages": [M[0], *M[2:]]}),
        ("ANTH-1", {"system": ANTHROPIC_HISTORY["system"], "messages": [M[0], M[1], {"role": "user", "content": [{"type": "text", "text": "Here:"}, *M[2]["content"]]}, *M[3:]]}),
        ("ANTH-2", {"system": ANTHROPIC_HISTORY["system"], "messages": [M[0], M[1], *M[3:]]}),
        ("ANTH-3", {"system": ANTHROPIC_HISTORY["system"], "messages": [M[0], {"role": "assistant", "content": M[1]["content"][1:]}, *M[2:]]}),
        ("ANTH-3", {"system": ANTHROPIC_HISTORY["system"], "messages": [M[0], {"role": "assistant", "content": [{**THINK, "thinking": "Run make."}, M[1]["content"][1]]}, *M[2:]]}),
        ("ANTH-4", {"messages": M[4:]}),
        ("ANTH-4", {"system": "You are a helpful agent.", "messages": M[4:]}),
        ("ANTH-5", {"system": ANTHROPIC_HISTORY["system"], "messages": [{"role": "system", "content": "Earlier turns were dropped."}, *M[4:]]}),
        ("ANTH-5", M[4:]),
    ],
)
def test_each_anthropic_clause_catches_its_worked_violation(clause: str, out: object) -> None:
    assert anthropic.structural(ANTHROPIC_HISTORY, out)[clause] is not None
    assert {k: v for k, v in anthropic.structural(ANTHROPIC_HISTORY, ANTHROPIC_CORRECT).items() if v} == {}


@pytest.mark.parametrize(
    ("content", "final", "reason_id"),
    [
        pytest.param("", False, "invalid-message:empty-content", id="empty-string"),
        pytest.param("", True, None, id="empty-final-assistant"),
        pytest.param([{"type": "text", "text": ""}], True, "invalid-message:empty-text-block", id="empty-block-anywhere"),
        pytest.param([{"type": "text", "text": "Done."}, {"type": "text", "text": ""}], False, "invalid-message:empty-text-block", id="empty-block-beside-text"),
        pytest.param([{"type": "text", "text": " \n"}], False, "invalid-message:whitespace-text", id="whitespace-only-block"),
        pytest.param([{"type": "text", "text": " "}, {"type": "text", "text": "Done."}], False, None, id="whitespace-beside-text"),
        pytest.param("Done.", False, None, id="text"),
    ],
)
def test_anth5_refuses_the_empty_text_the_messages_api_refuses(content: object, final: bool, reason_id: str | None) -> None:
    """SPEC ANTH-5: the Messages API's answers to empty text, each shape as LibreChat-AI/agents#124 probed
    it; an assistant turn ending the request may be empty (a prefill)."""
    turn = {"role": "assistant", "content": content}
    messages = [M[0], turn] if final else [M[0], turn, {"role": "user", "content": "Go on."}]
    found = anthropic.invalid({"messages": messages})
    assert (found.reason_id if found is not None else None) == reason_id, found
    assert anthropic.invalid({"messages": messages}, {"messages": messages}) is None  # the caller's own


def test_what_the_profile_tests_ask_of_each_format() -> None:
    """The operations the format-independent tests use (SPEC Part A, "Wire formats"), on the worked examples."""
    fmt = formats.get(formats.RESPONSES)
    assert [len(r) for r in fmt.rounds(RESPONSES_HISTORY)] == [1, 1, 3, 1, 3, 1]  # compaction; user; reasoning, call, output; user; reasoning, call, output; assistant
    assert fmt.is_summary(RESPONSES_HISTORY[1]) and not fmt.is_summary(RESPONSES_HISTORY[2])
    assert fmt.is_summary({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "[Context Summary] earlier"}]})
    assert fmt.well_formed(RESPONSES_CORRECT) and not fmt.well_formed({"messages": []})
    assert fmt.without_system(RESPONSES_HISTORY) == RESPONSES_HISTORY[1:]
    assert fmt.removed(RESPONSES_HISTORY, RESPONSES_CORRECT) == RESPONSES_HISTORY[2:6]
    assert fmt.tokens(RESPONSES_CORRECT) < fmt.tokens(RESPONSES_HISTORY), "opaque items count nothing, read ones count"
    fmt = formats.get(formats.ANTHROPIC)
    assert [len(r) for r in fmt.rounds(ANTHROPIC_HISTORY)] == [1, 2, 1, 1, 1]  # the tool_result message joins its tool_use turn
    assert fmt.is_summary({"role": "user", "content": "[Context Summary] earlier"}) and not fmt.is_summary(M[0])
    assert fmt.well_formed(ANTHROPIC_CORRECT) and not fmt.well_formed(M)
    assert fmt.without_system(ANTHROPIC_HISTORY) == {"messages": M}
    assert fmt.removed(ANTHROPIC_HISTORY, ANTHROPIC_CORRECT) == {"messages": M[:4]}
    assert fmt.tokens(ANTHROPIC_CORRECT) < fmt.tokens(ANTHROPIC_HISTORY) and fmt.tokens({"system": "x"}) == 0


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "Fix the build."}]}),
        ("/v1/responses", {"model": "m", "input": RESPONSES_HISTORY}),
        ("/v1/responses/compact", {"model": "m", "input": RESPONSES_HISTORY}),
        ("/v1/messages", {"model": "m", "max_tokens": 100, **ANTHROPIC_HISTORY}),
    ],
)
def test_event_usage_is_read_from_the_request_in_its_api(path: str, body: dict) -> None:
    """EVT-1 in every format compares the event with the usage the test double answered, whichever API was asked."""
    import openai

    from compaction_suite.conformance.summarizer_server import (
        RecordedRequest,
        SummarizerServer,
        deterministic_summary,
        request_messages,
        usage,
    )

    with SummarizerServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        answer = client.post(path.removeprefix("/v1"), body=body, cast_to=object)
        asked = request_messages(server.requests[-1])
    assert asked and "Fix the build." in json.dumps(asked)
    expected = usage(asked, deterministic_summary(asked))
    assert isinstance(answer, dict)
    found = answer.get("usage", {})
    assert expected["prompt_tokens"] in (found.get("prompt_tokens"), found.get("input_tokens")), (expected, found)
    assert request_messages(RecordedRequest("POST", path, {}, {"not": "a request"})) is None


def test_in_flight_in_each_format() -> None:
    assert responses.in_flight(RESPONSES_HISTORY[:9]) and not responses.in_flight(RESPONSES_HISTORY)
    assert anthropic.in_flight({"messages": M[:2]}) and not anthropic.in_flight(ANTHROPIC_HISTORY)


# --- declarations


def test_wire_format_is_a_declaration() -> None:
    class Items:
        capabilities: ClassVar[dict[str, str]] = {"wire_format": "responses", "called": "between_rounds"}

    found = declared(Items())
    assert found.wire_format == "responses" and formats.declared(Items()) == "responses"
    waived = found.waived()
    assert {"CORE-1", "ANTH-3", "SUM-1", "RESP-8"} <= set(waived) and "RESP-1" not in waived and "CORE-10" not in waived
    assert not {"TRIG-1", "FAIL-1", "EVT-1", "SUM-5", "CORE-7"} & set(waived), "format-independent clauses run in every format"
    assert "RESP-1" in declared(object()).waived() and "CORE-1" not in declared(object()).waived()


def test_an_unknown_wire_format_is_a_contract_error(tmp_path: Path) -> None:
    class Unknown:
        capabilities: ClassVar[dict[str, str]] = {"wire_format": "gemini"}

    with pytest.raises(CapabilityError, match="wire_format"):
        declared(Unknown())
    (tmp_path / "unknown_format.py").write_text(
        "class C:\n    capabilities = {'wire_format': 'gemini'}\n    def compact(self, messages, *, iteration):\n        return messages\n\ndef factory(settings):\n    return C()\n"
    )
    args = [sys.executable, "-m", "compaction_suite", "check", "unknown_format:factory", "--path", str(tmp_path), "--fast"]
    done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and "wire_format" in done.stdout + done.stderr, done.stdout[-1500:] + done.stderr[-1500:]


# --- end to end: `compaction-suite check` as a user runs it (one subprocess each)


@pytest.mark.parametrize(
    ("target", "family", "profiles"),
    [
        ("responses_truncating:factory", "RESP", ("TRIG",)),
        ("responses_compacting:factory", "RESP", ("FAIL", "SUM-5")),
        ("anthropic_truncating:factory", "ANTH", ("TRIG",)),
    ],
)
def test_correct_format_compactors_conform(target: str, family: str, profiles: tuple[str, ...], tmp_path: Path) -> None:
    """Each passes its format's clauses and the profile clauses it claims, run in its own format."""
    report = _check_example(target, tmp_path)
    assert report["verdict"] == "conforms"
    own = {cid: c for cid, c in report["clauses"].items() if cid.startswith((family, *profiles))}
    assert own and all(c["status"] == "pass" and c["exercised"] > 0 for c in own.values()), own
    fmt = report["capabilities"]["wire_format"]
    assert all(report["clauses"][cid].get("wire_format") == fmt for cid in own), "the report says in which format each clause ran"
    assert report["clauses"]["CORE-1"]["status"] == "not-applicable"
    assert report["capabilities"]["wire_format"] in ("responses", "anthropic-messages")


def _check_example(target: str, tmp_path: Path) -> dict:
    """``compaction-suite check TARGET --path examples/python`` as the examples' docstrings show it."""
    out = tmp_path / "r.json"
    args = [sys.executable, "-m", "compaction_suite", "check", target, "--path", str(ROOT / "examples/python"), "--fast", "--report", str(out)]
    done = subprocess.run(args, cwd=ROOT, env=dict(os.environ), capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return valid_report(json.loads(out.read_text()))


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_format_negative_control_fails_with_its_clause(name: str, tmp_path: Path) -> None:
    """In this interpreter, narrowed to the control's clause (`checking.in_process`)."""
    control = CONTROLS[name]
    checked = in_process(tmp_path, f"broken.formats:{name}", profiles=control.profiles, clauses=control.clauses)
    assert checked.exit_code == 1, checked.output[-3000:]
    assert assert_caught(checked, control)["harm"] in ("rejected", "loss", "crash", "policy")
    if control.expected in (*responses.FORMAT.judged, *anthropic.FORMAT.judged, responses.FORMAT.in_flight_clause, anthropic.FORMAT.in_flight_clause) and control.expected != "CORE-12":  # the replay judges it too (CORE-12 needs the run's summarizer)
        assert control.expected in replay(case_of(checked.report, control.expected), f"broken.formats:{name}").problems


# --- a shape returned verbatim is the caller's (SPEC CORE-6, RESP-6, ANTH-5 Decision)

NEWER_ITEM = {"type": "shell_call_from_a_later_api", "id": "sc_1", "call_id": "call_9", "action": {"commands": ["ls"]}}
NEWER_BLOCK: dict[str, Any] = {"type": "block_from_a_later_api", "id": "b_1", "payload": {"x": 1}}
NEWER_MESSAGE = {"role": "function", "name": "lookup", "content": "42"}  # accepted by the API, not by this suite's rules


@pytest.mark.parametrize(
    ("fmt", "history", "kept", "made", "clause"),
    [
        (formats.RESPONSES, [*RESPONSES_HISTORY[:2], NEWER_ITEM, *RESPONSES_HISTORY[2:]], lambda h: [*h[:3], *h[7:]], lambda h: [*h[:2], {**NEWER_ITEM, "action": {}}, *h[7:]], "RESP-6"),
        (
            formats.ANTHROPIC,
            {**ANTHROPIC_HISTORY, "messages": [*M[:3], {"role": "assistant", "content": [NEWER_BLOCK, *M[3]["content"]]}, *M[4:]]},
            lambda h: {**h, "messages": h["messages"][3:]},
            lambda h: {**h, "messages": [{"role": "user", "content": [{**NEWER_BLOCK, "payload": None}]}, *h["messages"][4:]]},
            "ANTH-5",
        ),
        (
            formats.CHAT,
            [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}, NEWER_MESSAGE, {"role": "user", "content": "q2"}],
            lambda h: [h[0], *h[2:]],
            lambda h: [h[0], {**NEWER_MESSAGE, "content": "43"}, h[3]],
            "CORE-6",
        ),
    ],
)
def test_a_shape_the_suite_does_not_know_is_judged_only_where_the_compactor_made_it(fmt, history, kept, made, clause) -> None:
    """The provider accepts types and roles this version of the suite has not seen: returned
    verbatim they are the caller's; made (or changed) by the compactor, the clause judges them."""
    structural = formats.get(fmt).structural
    assert structural(history, kept(history)).get(clause) is None
    assert structural(history, made(history)).get(clause) is not None


# --- the cmd: protocol carries the format (protocol 1.2)


def test_protocol_schema_takes_each_format() -> None:
    from compaction_suite.conformance.protocol import validator

    request, answer = validator("request"), validator("response#/$defs/compact_answer_in_format")
    chat = [{"role": "user", "content": "hi"}]
    for fmt, history in (("responses", RESPONSES_HISTORY), ("anthropic-messages", ANTHROPIC_HISTORY)):
        assert request.is_valid({"cmd": "compact", "seq": 1, "messages": history, "format": fmt, "iteration": 3})
        assert answer.is_valid({"seq": 1, "messages": history})
    assert request.is_valid({"cmd": "compact", "seq": 1, "messages": chat, "iteration": 3}), "a 1.0 request is unchanged"
    assert not request.is_valid({"cmd": "compact", "seq": 1, "messages": chat, "format": "gemini", "iteration": 3})
    assert not answer.is_valid({"seq": 1, "messages": {"system": "no messages key"}})
    assert not validator("response#/$defs/compact_answer").is_valid({"seq": 1, "messages": RESPONSES_HISTORY}), "1.0 answers stay chat-completions"


@pytest.mark.parametrize("wire_format", ["responses", "anthropic-messages"])
def test_a_cmd_compactor_of_each_format_conforms(wire_format: str, tmp_path: Path) -> None:
    record = tmp_path / "requests.jsonl"
    target = f"cmd:{sys.executable} {ROOT / 'tests/fakes/format_compactor.py'} {wire_format} --record {record}"
    report = check(target, (), tmp_path, exit_code=0)
    assert report["verdict"] == "conforms" and report["capabilities"]["wire_format"] == wire_format
    compacts = [json.loads(line) for line in record.read_text().splitlines() if '"cmd":"compact"' in line.replace(" ", "")]
    assert compacts and all(r["format"] == wire_format for r in compacts)


# --- CORE-11 in every format (SPEC Part A, "Wire formats": which clauses run where)


def test_core11_in_each_format_allows_truncation_and_masking_not_a_new_summary() -> None:
    truncated = RESPONSES_HISTORY[:1] + RESPONSES_HISTORY[6:]
    masked = [{**i, "output": "[masked]"} if responses.kind(i) == "function_call_output" else i for i in RESPONSES_HISTORY]
    invented = [*RESPONSES_HISTORY[:1], {"type": "compaction", "id": "cmp_new", "encrypted_content": "gAAAAnew"}, *RESPONSES_HISTORY[6:]]
    assert responses.check_no_failed_summary(RESPONSES_HISTORY, truncated) is None
    assert responses.check_no_failed_summary(RESPONSES_HISTORY, masked) is None
    assert "is new although the summarizer failed" in (responses.check_no_failed_summary(RESPONSES_HISTORY, invented) or "")
    results = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "[masked]"}]}
    summary = {"role": "user", "content": "[Context Summary]\n(summary unavailable)"}
    assert anthropic.check_no_failed_summary(ANTHROPIC_HISTORY, ANTHROPIC_CORRECT) is None
    assert anthropic.check_no_failed_summary(ANTHROPIC_HISTORY, {**ANTHROPIC_HISTORY, "messages": [*M[:2], results, *M[3:]]}) is None
    assert "messages.0 (user) is new" in (anthropic.check_no_failed_summary(ANTHROPIC_HISTORY, {**ANTHROPIC_HISTORY, "messages": [summary, *M[4:]]}) or "")


def test_core11_in_anthropic_reads_a_turn_joined_with_its_neighbour_as_kept_and_a_joined_summary_as_new() -> None:
    """CORE-11 Decision (turns the provider joins): a tool_result turn and the next user turn sent
    as one user message (Strands' context manager does so after removing the turns between) are
    the input's; a summary joined to a kept turn is still new."""
    history = {**ANTHROPIC_HISTORY, "messages": [*M[:3], {"role": "user", "content": "Use tabs."}, *M[3:]]}
    result = {**M[2]["content"][0], "is_error": False}
    joined = {"role": "user", "content": [result, {"type": "text", "text": "Use tabs."}]}
    with_summary = {"role": "user", "content": [result, {"type": "text", "text": "[Context Summary] the build failed"}]}
    assert anthropic.check_no_failed_summary(history, {**history, "messages": [*M[:2], joined, *M[3:]]}) is None
    assert "messages.2 (user) is new" in (anthropic.check_no_failed_summary(history, {**history, "messages": [*M[:2], with_summary, *M[3:]]}) or "")


def test_core11_in_responses_reads_a_user_message_re_encoded_by_the_compact_endpoint_as_the_inputs() -> None:
    """The compact endpoint answers the input's user messages as ``input_text`` parts and one
    compaction item: the messages are the input's; an empty compaction item is not."""
    reencoded = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Now run the tests."}]}
    empty = {"type": "compaction", "id": "cmp_x", "encrypted_content": ""}
    assert responses.check_no_failed_summary(RESPONSES_HISTORY, [*RESPONSES_HISTORY[:1], reencoded, *RESPONSES_HISTORY[7:]]) is None
    assert "item 2 (compaction cmp_x) is new" in (responses.check_no_failed_summary(RESPONSES_HISTORY, [*RESPONSES_HISTORY[:1], reencoded, empty, *RESPONSES_HISTORY[7:]]) or "")


def test_a_tool_the_input_called_stays_findable_after_the_compaction() -> None:
    """RESP-32 on hand-made outputs: a client search the output adds for a tool the input called fails when its
    answer loads nothing and passes when it loads the tool; a search for a tool never called, one already in the
    input, and one unanswered pass."""
    from compaction_suite.conformance.responses_histories import AGAIN, reaching_again

    history = [
        {"type": "message", "role": "user", "content": "read it"},
        {"type": "function_call", "call_id": "call_1", "name": "readFile", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "text"},
        {"type": "message", "role": "assistant", "content": "done"},
    ]
    search = {"type": "tool_search_call", "call_id": "call_s", "execution": "client", "arguments": {"queries": ["readFile"]}}
    found = {"type": "tool_search_output", "call_id": "call_s", "execution": "client", "tools": [{"type": "function", "name": "readFile"}]}
    lost = {**found, "tools": []}
    violation = responses.check_called_tools_findable(history, [search, lost])
    assert violation is not None and violation.reason_id == "called-tool-unfindable"
    assert responses.check_called_tools_findable(history, [search, found]) is None
    assert responses.check_called_tools_findable(history, [{**search, "arguments": {"queries": ["runCommand"]}}, lost]) is None
    assert responses.check_called_tools_findable([*history, search, lost], [search, lost]) is None
    assert responses.check_called_tools_findable(history, [search]) is None
    again = reaching_again(history)
    assert again[:4] == history and again[4]["content"] == AGAIN
    assert (again[5]["name"], again[5]["arguments"], again[6]["output"]) == ("readFile", "{}", "text")
    assert reaching_again(history[:1]) == history[:1]
