"""What a summary looks like (SPEC STRAT-1, STRAT-2, STRUCT-*): reference/summary.py.

The two snapshots in ``__snapshots__/test_summary_format.ambr`` show a seed-000
summary message and a seed-001 structured summary built through the presets from
one hand-written admin-chat history, with the summarizer test double answering a
fixed text.
"""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from compaction_suite.conformance.summarizer_server import SummarizerServer
from compaction_suite.reference import presets
from compaction_suite.reference.summary import (
    SUMMARY_PREFIX,
    entities,
    is_summary,
    latest_tasks,
    structured_body,
    summary_message,
    text_of,
    transcript,
    truncated,
)

from message_builders import call, reply, result, user

HEADINGS = [
    "## Conversation Summary (auto-compacted)",
    "### Entities Created/Modified",
    "### Current Task List",
    "### Key Decisions",
    "### Context",
]


def calls(*tool_calls: dict[str, Any], content: str | None = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(tool_calls)}


def progress(call_id: str, *tasks: tuple[str, str]) -> dict[str, Any]:
    return call(call_id, "reportProgress", {"tasks": [{"title": t, "status": s} for t, s in tasks]})


def section(text: str, heading: str) -> list[str]:
    """The lines under ``### heading`` up to the next heading."""
    lines = text.splitlines()
    start = lines.index(f"### {heading}") + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("### ")), len(lines))
    return lines[start:end]


# --- entities (STRUCT-2) ---------------------------------------------------------------------


def ids(found: list[dict[str, Any]]) -> list[str]:
    return [e["id"] for e in found]


def test_entity_ids_are_identifier_like_keys_at_any_depth_of_a_json_tool_result() -> None:
    ticket = {"id": "ent-1", "type": "ticket", "title": "Login fails", "status": "open"}
    booking = {"reservation": {"reservation_id": "ZFA04Y", "user_id": "mia_li_3668", "flights": [{"flightId": 1042}]}}
    messages = [
        calls(call("c1", "createEntity", {}), call("c2", "readFile", {}), call("c3", "search", {})),
        result("c1", ticket),
        result("c2", "plain text, not JSON"),
        result("c3", [{"id": "in-an-array"}]),
        calls(call("c4", "createEntity", {}), call("c5", "get_reservation", {}), call("c6", "createEntity", {})),
        result("c4", {"id": 7, "type": "number-id", "valid": True, "paid": "no"}),
        result("c5", booking),
        result("c6", json.dumps({"payment_ids": ["pay_1", "pay_2"], "orderIDs": [3], "id": "ent-2"}, indent=2)),
        user(json.dumps({"id": "said-by-the-user"})),
        reply(json.dumps({"id": "said-by-the-assistant"})),
    ]
    assert ids(entities(messages)) == [
        "ent-1", "in-an-array", "7", "ZFA04Y", "mia_li_3668", "1042", "pay_1", "pay_2", "3", "ent-2",
    ]


@pytest.mark.parametrize(
    "value",
    [True, None, "", "  ", "two\nlines", 1.5, {"nested": "object"}],
    ids=["bool", "null", "empty", "blank", "multi-line", "float", "object"],
)
def test_values_that_cannot_be_ids_are_skipped(value: Any) -> None:
    assert entities([result("c1", {"user_id": value})]) == []


def test_a_user_rule_adds_key_patterns_or_a_callable() -> None:
    from compaction_suite.reference.extraction import EntityRule

    flight = result("c1", {"flight_number": "HAT001", "sku": "A-7", "seat": "12C"})
    assert entities([flight]) == []
    assert ids(entities([flight], EntityRule(keys=("*_number", "sku")))) == ["HAT001", "A-7"]
    assert ids(entities([flight], EntityRule(match=lambda key, value: key == "seat"))) == ["12C"]
    assert entities([result("c2", {"id": "x"})], EntityRule(default=False)) == []


def test_an_entity_in_text_parts_counts() -> None:
    message = {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": '{"id": "ent-9"}'}]}
    assert ids(entities([message])) == ["ent-9"]


def test_an_entity_modified_later_keeps_its_place_with_its_latest_fields() -> None:
    messages = [
        result("c1", {"id": "ent-1", "title": "draft"}),
        result("c2", {"id": "ent-2", "title": "other"}),
        result("c3", {"id": "ent-1", "title": "final"}),
    ]
    assert [e["line"] for e in entities(messages)] == ['- [Entity] "final" (id: ent-1)', '- [Entity] "other" (id: ent-2)']


def test_entities_of_an_earlier_structured_summary_are_carried_forward_verbatim() -> None:
    earlier = summary_message(
        structured_body([{"id": "ent-1", "type": "ticket", "title": "Login fails", "status": "open"}], None, "x")
    )
    later = result("c9", {"id": "ent-2", "type": "note", "title": "Call back", "owner_id": "u-5"})
    found = entities([earlier, later])
    body = structured_body(found, None, "")
    assert section(body, "Entities Created/Modified") == [
        '- [ticket] "Login fails" (id: ent-1) — open',
        '- [note] "Call back" (id: ent-2)',
        "- [owner_id] (id: u-5)",
    ]
    assert ids(entities([summary_message(body)])) == ["ent-1", "ent-2", "u-5"]


def test_an_earlier_summary_with_no_entities_contributes_none() -> None:
    assert entities([summary_message(structured_body([], None, "x"))]) == []


def test_an_unstructured_earlier_summary_contributes_no_entities() -> None:
    assert entities([user(f"{SUMMARY_PREFIX}\n- made ticket (id: ent-5)")]) == []


@pytest.mark.parametrize(
    ("entity", "line"),
    [
        ({"id": "e1", "type": "task", "title": "Fix it", "status": "done"}, '- [task] "Fix it" (id: e1) — done'),
        ({"id": "e2", "name": "Acme"}, '- [Entity] "Acme" (id: e2)'),
        ({"id": "e3"}, "- [Entity] (id: e3)"),
    ],
    ids=["full", "name-no-type", "id-only"],
)
def test_entity_lines_render_type_title_id_and_status(entity: dict[str, Any], line: str) -> None:
    assert section(structured_body([entity], None, ""), "Entities Created/Modified") == [line]


# --- latest_tasks (STRUCT-3) ------------------------------------------------------------------


def test_no_report_progress_call_means_no_task_list() -> None:
    assert latest_tasks([user("hi"), calls(call("c1", "readFile", {})), result("c1", "x")]) is None


def test_the_latest_report_progress_call_wins() -> None:
    messages = [
        calls(progress("c1", ("Old task", "pending"))),
        result("c1", "OK"),
        calls(progress("c2", ("Fix login", "completed"), ("Write docs", "in_progress"), ("Ship", "pending"))),
        result("c2", "OK"),
        calls(call("c3", "readFile", {})),
        result("c3", "x"),
    ]
    assert latest_tasks(messages) == ["- [x] Fix login (completed)", "- [ ] Write docs (in progress)", "- [ ] Ship (pending)"]


def test_among_parallel_calls_the_last_report_progress_wins() -> None:
    message = calls(progress("c1", ("First", "pending")), progress("c2", ("Second", "pending")))
    assert latest_tasks([message]) == ["- [ ] Second (pending)"]


def test_an_unreadable_later_call_is_passed_over() -> None:
    messages = [calls(progress("c1", ("Kept", "completed"))), calls(call("c2", "reportProgress", "{not json"))]
    assert latest_tasks(messages) == ["- [x] Kept (completed)"]


def test_a_task_without_status_is_pending() -> None:
    assert latest_tasks([calls(call("c1", "reportProgress", {"tasks": [{"title": "T"}]}))]) == ["- [ ] T (pending)"]


def test_an_earlier_summarys_task_list_is_carried_when_no_newer_call_follows() -> None:
    earlier = summary_message(structured_body([], ["- [ ] Carried task (pending)"], "x"))
    older_call = calls(progress("c0", ("Superseded", "pending")))
    assert latest_tasks([older_call, earlier, user("go on")]) == ["- [ ] Carried task (pending)"]


def test_a_call_after_the_earlier_summary_replaces_its_task_list() -> None:
    earlier = summary_message(structured_body([], ["- [ ] Carried task (pending)"], "x"))
    assert latest_tasks([earlier, calls(progress("c1", ("New task", "completed")))]) == ["- [x] New task (completed)"]


def test_an_unstructured_earlier_summary_does_not_hide_an_older_call() -> None:
    messages = [calls(progress("c1", ("Older", "pending"))), user(f"{SUMMARY_PREFIX}\n- bullets only")]
    assert latest_tasks(messages) == ["- [ ] Older (pending)"]


def test_task_lists_of_coding_agents_plan_tools_are_read_through_their_presets() -> None:
    from compaction_suite.reference.extraction import CODING_AGENT_TASK_LISTS, TaskListTool

    todo = call("c1", "TodoWrite", {"todos": [{"content": "Run tests", "status": "in_progress", "activeForm": "Running"}]})
    plan = call("c2", "update_plan", {"explanation": "x", "plan": [{"step": "Read code", "status": "completed"}]})
    assert latest_tasks([calls(todo)]) is None, "seed 001's default reads reportProgress only"
    assert latest_tasks([calls(todo)], CODING_AGENT_TASK_LISTS) == ["- [ ] Run tests (in progress)"]
    assert latest_tasks([calls(todo), calls(plan)], CODING_AGENT_TASK_LISTS) == ["- [x] Read code (completed)"]
    own = TaskListTool("set_checklist", "items", "label", status="state")
    checklist = call("c3", "set_checklist", {"items": [{"label": "Deploy", "state": "pending"}]})
    assert latest_tasks([calls(checklist)], (own,)) == ["- [ ] Deploy (pending)"]


# --- structured_body and the model's text -----------------------------------------------------


def test_structured_body_has_the_four_sections_in_order() -> None:
    body = structured_body([{"id": "e1", "type": "ticket", "title": "T"}], ["- [ ] Task (pending)"], "Some context.")
    lines = body.splitlines()
    assert [line for line in lines if line.startswith("#")] == HEADINGS
    assert lines[0] == HEADINGS[0]
    assert section(body, "Current Task List") == ["- [ ] Task (pending)"]
    assert section(body, "Key Decisions") == ["- (none reported)"]
    assert section(body, "Context") == ["Some context."]


def test_structured_body_says_so_when_a_section_is_empty() -> None:
    body = structured_body([], None, "")
    assert section(body, "Entities Created/Modified") == ["- (none)"]
    assert section(body, "Current Task List") == ["- (no task list yet)"]
    assert section(body, "Key Decisions") == ["- (none reported)"]


@pytest.mark.parametrize(
    "model_text",
    [
        "### Key Decisions\n- Use PostgreSQL.\n- No emails.\n### Context\nThe user set up the database.",
        "Key Decisions:\n- Use PostgreSQL.\n- No emails.\n\nContext:\nThe user set up the database.\n",
        "## key decisions\n\n- Use PostgreSQL.\n- No emails.\n\n## CONTEXT\n\nThe user set up the database.",
    ],
    ids=["markdown-headings", "plain-headings-with-colons", "any-case-and-level"],
)
def test_the_models_headings_split_its_text_into_decisions_and_context(model_text: str) -> None:
    body = structured_body([], None, model_text)
    assert section(body, "Key Decisions") == ["- Use PostgreSQL.", "- No emails."]
    assert section(body, "Context") == ["The user set up the database."]
    assert body.count("Key Decisions") == 1


def test_text_without_headings_all_goes_to_context() -> None:
    body = structured_body([], None, "  The user wants a report.\nIt is due Friday.  ")
    assert section(body, "Key Decisions") == ["- (none reported)"]
    assert section(body, "Context") == ["The user wants a report.", "It is due Friday."]


# --- transcript, truncation and the summary message ---------------------------------------------


def test_transcript_renders_one_block_per_message() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        user("Open a ticket."),
        calls(call("c1", "createEntity", {"title": "T"}), content="On it."),
        result("c1", {"id": "ent-1"}),
        calls(call("c2", "readFile", {"path": "a.py"})),
        result("c2", "print(1)"),
        {"role": "user", "content": [{"type": "text", "text": "See this:"}, {"type": "image_url", "image_url": {"url": "data:,"}}]},
        reply("Done."),
    ]
    assert transcript(messages) == "\n\n".join(
        [
            "system:\nBe brief.",
            "user:\nOpen a ticket.",
            'assistant:\nOn it.\ncalled createEntity({"title": "T"}) [c1]',
            'tool result (c1):\n{"id": "ent-1"}',
            'assistant:\ncalled readFile({"path": "a.py"}) [c2]',
            "tool result (c2):\nprint(1)",
            "user:\nSee this:",
            "assistant:\nDone.",
        ]
    )


def test_truncated_keeps_the_first_200_characters_of_each_rendered_message() -> None:
    messages = [user("a" * 500), reply("short")]
    assert truncated(messages) == ("user:\n" + "a" * 194) + "\nassistant:\nshort"


def test_summary_message_is_a_user_message_with_the_prefix() -> None:
    message = summary_message("\n  - point one\n")
    assert message == {"role": "user", "content": f"{SUMMARY_PREFIX}\n- point one"}
    assert is_summary(message)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ({"role": "user", "content": f"{SUMMARY_PREFIX} x"}, True),
        ({"role": "user", "content": [{"type": "text", "text": f"{SUMMARY_PREFIX}\nx"}]}, True),
        ({"role": "assistant", "content": f"{SUMMARY_PREFIX} x"}, False),
        ({"role": "user", "content": f"Note: {SUMMARY_PREFIX}"}, False),
        ({"role": "user", "content": None}, False),
    ],
    ids=["string", "text-part", "assistant", "not-at-start", "null-content"],
)
def test_a_summary_is_a_user_message_starting_with_the_prefix(message: dict[str, Any], expected: bool) -> None:
    assert is_summary(message) is expected


def test_text_of_joins_text_parts_and_skips_images() -> None:
    content = [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "data:,"}}, {"type": "text", "text": "b"}]
    assert text_of({"role": "user", "content": content}) == "a\nb"
    assert text_of({"role": "assistant", "content": None}) == ""


# --- snapshots: the two seed formats from one hand-written history --------------------------------

SEED_000_REPLY = """\
- The admin is triaging login bugs reported on 2024-06-11.
- Ticket ent-7f3a9c was created for the login failure; the user asked for priority high, not low.
- Next: notify the on-call engineer."""

SEED_001_REPLY = """\
### Key Decisions
- Priority is high for login bugs (the user corrected "low").
- Notify on-call by chat, not email.
### Context
The admin triaged two login bugs and created a ticket and a note for them."""


def admin_chat() -> list[dict[str, Any]]:
    """Twenty messages of a ticketing admin chat; the last ten are small talk and follow-ups."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are an admin assistant for a ticketing system."},
        user("Users report that login fails after the 2024-06-11 release. Open a ticket, priority low."),
        calls(call("call_1", "createEntity", {"type": "ticket", "title": "Login fails after release", "priority": "low"})),
        result("call_1", {"id": "ent-7f3a9c", "type": "ticket", "title": "Login fails after release", "status": "open"}),
        user("No, use priority high instead of low."),
        calls(
            call("call_2", "createEntity", {"type": "note", "title": "Priority raised to high"}),
            progress("call_3", ("Open login ticket", "completed"), ("Notify on-call", "in_progress"), ("Write postmortem", "pending")),
            content="Raising the priority and updating the plan.",
        ),
        result("call_3", "Progress updated."),
        result("call_2", {"id": "550e8400-e29b-41d4-a716-446655440000", "type": "note", "title": "Priority raised to high"}),
        reply("Done: the ticket is high priority and a note records the change."),
        user("Notify on-call by chat, not email."),
    ]
    for i in range(5):
        messages += [user(f"Any news on the login bug? ({i + 1})"), reply(f"Not yet; still waiting ({i + 1}).")]
    return messages


def test_seed_000_summary_message(server: SummarizerServer, client: openai.OpenAI, snapshot: Any) -> None:
    server.reply_with(SEED_000_REPLY)
    messages = admin_chat()
    out = presets.openai_azure("summary-model", client=client).compact(messages, iteration=8)
    assert out[0] == messages[0] and out[2:] == messages[-2:]
    assert out[1] == snapshot(name="summary-message")
    assert server.bodies[0]["messages"][1]["content"] == snapshot(name="transcript-sent")


def test_seed_001_structured_summary(server: SummarizerServer, client: openai.OpenAI, snapshot: Any) -> None:
    server.reply_with(SEED_001_REPLY)
    messages = admin_chat()
    out = presets.structured_admin_chat("summary-model", client=client).compact(messages, iteration=1, force=True)
    assert out[0] == messages[0] and out[2:] == messages[-10:]
    text = out[1]["content"]
    assert "ent-7f3a9c" in text and "550e8400-e29b-41d4-a716-446655440000" in text
    assert "- [ ] Notify on-call (in progress)" in text
    assert text == snapshot(name="structured-markdown")
