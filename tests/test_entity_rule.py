"""SPEC ENT-1 and ENT-2: the reference (reference/extraction.py) and the verifier
(conformance/entities.py) implement the entity-id rule and the task-list presets apart,
and agree on generated tool results and calls (SPEC ENT-3)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from compaction_suite.conformance import entities as verifier
from compaction_suite.reference import extraction
from compaction_suite.reference.summary import entities

PROPERTY = settings(max_examples=300)

KEYS = st.sampled_from(
    [
        "id", "ID", "Id", "ids", "uuid", "GUID", "_id", "user_id", "USER_ID", "order-ids", "item.uuid", "userId",
        "orderIDs", "tagIds", "itemUuid", "x9ID", "XID", "userid", "paid", "valid", "grid", "video", "identity",
        "id_", "idx", "Ids", "kid", "title", "name", "status", "type", "data", "flight_number", "items",
    ]
) | st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-.0123456789", max_size=8)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["", "  ", "two\nlines", "ZFA04Y", "ent-1", "mia_li_3668"])
    | st.text(max_size=12)
)
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=5), max_leaves=25)


def tool_result(value: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": "c1", "content": json.dumps(value)}


@PROPERTY
@given(KEYS)
def test_both_sides_call_the_same_keys_identifier_like(key: str) -> None:
    assert bool(extraction.ID_KEY.search(key)) == verifier.is_id_key(key)


@PROPERTY
@given(JSON)
def test_both_sides_find_the_same_entity_ids_in_a_tool_result(value: Any) -> None:
    found = [e["id"] for e in entities([tool_result(value)])]
    assert found == verifier.entity_ids([tool_result(value)])


@PROPERTY
@given(JSON, st.lists(KEYS, max_size=2))
def test_both_sides_agree_with_a_callers_key_patterns(value: Any, patterns: list[str]) -> None:
    rule = extraction.EntityRule(keys=tuple(patterns), default=False)
    found = [e["id"] for e in entities([tool_result(value)], rule)]
    assert found == verifier.entity_ids([tool_result(value)], verifier.id_rule(keys=patterns, default=False))


def test_a_caller_callable_sees_key_and_value_on_both_sides() -> None:
    value = {"flight": {"number": "HAT001", "seats": 3}}

    def flight_numbers(key: str, item: Any) -> bool:
        return key == "number" and isinstance(item, str)

    message = tool_result(value)
    assert [e["id"] for e in entities([message], extraction.EntityRule(match=flight_numbers))] == ["HAT001"]
    assert verifier.entity_ids([message], verifier.id_rule(match=flight_numbers)) == ["HAT001"]


TASK_TOOLS = st.sampled_from([tool.name for tool in extraction.CODING_AGENT_TASK_LISTS] + ["readFile"])


@st.composite
def task_calls(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(TASK_TOOLS)
    keys = st.sampled_from(["tasks", "todos", "plan", "title", "content", "step", "status"])
    item = st.dictionaries(keys, st.text(max_size=6) | st.integers(0, 3), max_size=3)
    arguments = draw(st.dictionaries(keys, st.lists(item, max_size=3) | st.text(max_size=4), max_size=3))
    text = json.dumps(arguments) if draw(st.booleans()) or not arguments else "{not json"
    return {"id": "c", "type": "function", "function": {"name": name, "arguments": text}}


@PROPERTY
@given(st.lists(st.lists(task_calls(), min_size=1, max_size=3), max_size=4))
def test_both_sides_read_the_same_latest_task_list(call_groups: list[list[dict[str, Any]]]) -> None:
    history = [{"role": "assistant", "content": None, "tool_calls": group} for group in call_groups]
    tasks = extraction.latest_task_list(history, extraction.CODING_AGENT_TASK_LISTS)
    titles = verifier.latest_task_titles(history, verifier.CODING_AGENT_TASK_LISTS)
    assert (None if tasks is None else [t.title for t in tasks]) == titles


def test_the_presets_name_the_same_tools_and_keys_on_both_sides() -> None:
    reference_side = {t.name: (t.items, t.title) for t in extraction.CODING_AGENT_TASK_LISTS}
    assert reference_side == verifier.CODING_AGENT_TASK_LISTS
