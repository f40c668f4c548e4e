"""The issue-20 clauses as checks, on fixed histories (SPEC CORE-12..CORE-18, RESP-5, RESP-9), the
provider rule sets, the summarizer double's provider rules and faults, and reason ids: each check
catches the defect its clause names, with the reason id that names it, and passes a correct output.
"""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any, ClassVar

import anthropic
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compaction_suite.conformance import formats, judges, placeholders, providers
from compaction_suite.conformance.capabilities import CapabilityError, declared
from compaction_suite.conformance.formats import responses
from compaction_suite.conformance.summarizer_apis import SENT, compaction_item, folded, sends
from compaction_suite.conformance.summarizer_server import SummarizerServer
from compaction_suite.conformance.violation import Violation

from message_builders import sent

CHAT = formats.get(formats.CHAT)
RESP = formats.get(formats.RESPONSES)
ANTH = formats.get(formats.ANTHROPIC)

SYSTEM: dict[str, Any] = {"role": "system", "content": "You are a coding agent."}
CALL: dict[str, Any] = {"id": "call_1", "type": "function", "function": {"name": "runCommand", "arguments": '{"command": "make"}'}}
HISTORY: list[dict[str, Any]] = [
    SYSTEM,
    {"role": "user", "content": "Fix the build of the payments service, it fails since this morning."},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call_1", "content": "make: *** [payments] error 2: undefined symbol ledger_flush"},
    {"role": "assistant", "content": "The build fails linking ledger_flush; the ledger library moved."},
    {"role": "user", "content": "Now run the tests of the ledger package."},
]


@pytest.fixture(scope="module")
def server():
    with SummarizerServer() as found:
        yield found


def reason(found: str | None) -> str | None:
    """The reason id of a check's finding, None when it found nothing."""
    return found.reason_id if isinstance(found, Violation) else found


def summarize(server: SummarizerServer, messages: list[dict]) -> tuple[str, list[Any]]:
    """Ask the double for a summary of ``messages``: (the answer, the exchanges of the call)."""
    server.reset()
    client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "Summarize:\n" + "\n".join(str(m.get("content")) for m in messages)}])
    return answer.choices[0].message.content or "", server.exchanges


# --- CORE-12


def test_a_placeholder_no_summarizer_wrote_fails_core12() -> None:
    out = [SYSTEM, {"role": "user", "content": "[Context Summary]\nPrevious conversation was too long to summarize."}, HISTORY[-1]]
    found = judges.summary_stands_for_answer(CHAT, HISTORY, out, [])
    assert found is not None and found.reason_id == "summary-without-summarizer-answer" and "never asked" in found


def test_a_summary_of_what_the_request_held_passes_and_one_of_less_fails(server: SummarizerServer) -> None:
    answer, exchanges = summarize(server, HISTORY[1:5])
    out = [SYSTEM, {"role": "user", "content": f"[Context Summary]\n{answer}"}, HISTORY[-1]]
    assert judges.summary_stands_for_answer(CHAT, HISTORY, out, exchanges) is None
    answer, exchanges = summarize(server, HISTORY[4:5])  # a trim window: the older messages never sent
    out = [SYSTEM, {"role": "user", "content": f"[Context Summary]\n{answer}"}, HISTORY[-1]]
    found = judges.summary_stands_for_answer(CHAT, HISTORY, out, exchanges)
    assert found is not None and found.reason_id == "summary-of-unsent-messages" and "input item 1 (user)" in found


def test_a_summary_of_an_earlier_summary_of_the_same_call_stands_for_what_that_one_held(server: SummarizerServer) -> None:
    """Strands' reactive path: each overflow summarizes the oldest messages again, the previous
    summary among them; the last answer stands, through the first, for what the first request held.
    (The request ends in a fixed instruction, as Strands' does, so no answer repeats its words.)"""

    def ask(*texts: str) -> str:
        messages = [{"role": "user", "content": t} for t in texts] + [{"role": "user", "content": "Please summarize this conversation."}]
        return client.chat.completions.create(model="m", messages=sent(messages)).choices[0].message.content or ""

    client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    said = [str(m.get("content")) for m in HISTORY[1:5]]
    server.reset()
    first = ask(*said[:2])
    second = ask(first, *said[2:], "and the rest")  # one message more: the answers differ in their first words
    out = [SYSTEM, {"role": "user", "content": second}, HISTORY[-1]]
    assert judges.summary_stands_for_answer(CHAT, HISTORY, out, server.exchanges) is None
    server.reset()
    ask(*said[:2])
    alone = ask(*said[2:], "and the rest", "left out: the first summary")
    found = judges.summary_stands_for_answer(CHAT, HISTORY, [SYSTEM, {"role": "user", "content": alone}, HISTORY[-1]], server.exchanges)
    assert found is not None and found.reason_id == "summary-of-unsent-messages" and "input item 1 (user)" in found


def test_a_summary_whose_request_held_an_input_compaction_item_stands_for_what_that_item_stands_for() -> None:
    """SPEC CORE-12 Decision (summaries of summaries): a compaction item of the input stands for the items before it
    (the API reads them through it), so a request that held it held them: a framework that cuts the model's input at
    the newest compaction item before the API compacts again (the OpenAI Agents SDK's sandbox ``Compaction``
    capability) replaces nothing unread. A request without that item did not hold them."""
    from compaction_suite.conformance.summarizer_server import Exchange, RecordedRequest

    def message(role: str, text: str) -> dict[str, Any]:
        return {"type": "message", "role": role, "content": [{"type": "input_text" if role == "user" else "output_text", "text": text}]}

    earlier = compaction_item("the build fails linking ledger_flush", [])
    history = [message("user", "Fix the build of the payments service, it fails since this morning."), message("assistant", "The ledger library moved."), earlier,
               message("user", "Now run the tests of the ledger package."), message("assistant", "All ledger tests pass now.")]  # fmt: skip
    newer = compaction_item("the ledger tests pass", [earlier])

    def answered(held: list[dict[str, Any]]) -> Exchange:
        exchange = Exchange(RecordedRequest("POST", "/v1/responses", {}, {"model": "m", "input": held}), "responses")
        exchange.answer, exchange.output = "the ledger tests pass", (newer,)
        return exchange

    out = [newer, history[-1]]
    assert judges.summary_stands_for_answer(RESP, history, out, [answered(history[2:4])]) is None
    found = judges.summary_stands_for_answer(RESP, history, out, [answered(history[3:4])])
    assert found is not None and found.reason_id == "summary-of-unsent-messages" and "input item 0 (user)" in found


IMAGE = "https://images.example.com/08-0badc0de.png"
SEEN: dict[str, Any] = {"role": "user", "content": [{"type": "text", "text": "What does the failing dashboard in this screenshot show?"}, {"type": "image_url", "image_url": {"url": IMAGE}}]}


def test_core12_media_a_summary_of_a_message_whose_image_the_request_never_held_fails(server: SummarizerServer) -> None:
    """SPEC CORE-12 Decision (media): the request held the message's text but not the image it
    refers to by URL (a transcript keeping only text); one naming the URL, as an XML or
    ``[image: URL]`` transcript does, held it; an inline image asks for nothing."""
    history = [SYSTEM, SEEN, *HISTORY[2:]]
    summary = lambda answer: [SYSTEM, {"role": "user", "content": f"[Context Summary]\n{answer}"}, HISTORY[-1]]  # noqa: E731
    answer, exchanges = summarize(server, [{"role": "user", "content": SEEN["content"][0]["text"]}, *HISTORY[2:5]])
    found = judges.summary_stands_for_answer(CHAT, history, summary(answer), exchanges)
    assert found is not None and found.reason_id == "summary-of-unsent-media" and IMAGE in found
    answer, exchanges = summarize(server, [{"role": "user", "content": f'{SEEN["content"][0]["text"]} <image url="{IMAGE}" />'}, *HISTORY[2:5]])
    assert judges.summary_stands_for_answer(CHAT, history, summary(answer), exchanges) is None
    inline = [SYSTEM, {**SEEN, "content": [SEEN["content"][0], {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}, *HISTORY[2:]]
    answer, exchanges = summarize(server, [{"role": "user", "content": SEEN["content"][0]["text"]}, *HISTORY[2:5]])
    assert judges.summary_stands_for_answer(CHAT, inline, summary(answer), exchanges) is None
    assert judges.media_urls(ANTH.from_chat(history)) == [IMAGE] == judges.media_urls(RESP.from_chat(history))


# --- CORE-21


def _skipped(n: int) -> dict[str, Any]:
    return {"role": "user", "content": f"Skipped {n} messages."}


def test_core21_a_placeholder_understating_what_it_removed_fails_and_the_true_count_passes() -> None:
    """autogen#8070: head 2 (the user turn, its call dropped by the head guard), tail 1; the call,
    its result and the reply were removed. A framework holding a round's results in one message
    may count them as one (SPEC CORE-21 Decision: the unit)."""
    calls = [CALL, {**CALL, "id": "call_2"}]
    history = [HISTORY[1], {"role": "assistant", "content": None, "tool_calls": calls}, *({"role": "tool", "tool_call_id": c["id"], "content": f"ok {c['id']}"} for c in calls), HISTORY[4], HISTORY[5]]
    found = judges.count_stated(CHAT, history, [history[0], _skipped(1), history[-1]])
    assert found is not None and found.reason_id == "placeholder-count-wrong" and "'Skipped 1 messages'" in found and "removed 3 to 4 message(s)" in found
    assert judges.count_stated(CHAT, history, [history[0], _skipped(3), history[-1]]) is None
    assert judges.count_stated(CHAT, history, [history[0], _skipped(4), history[-1]]) is None
    assert judges.count_stated(CHAT, history, [history[0], _skipped(5), history[-1]]) is not None
    assert judges.count_stated(CHAT, history, [history[0], {"role": "user", "content": "Earlier messages were removed."}, history[-1]]) is None
    earlier = [{"role": "user", "content": "[Context Summary]\nThe payments build was fixed."}, *history]  # a count may be of all removed so far
    assert judges.count_stated(CHAT, earlier, [_skipped(40), earlier[-1]]) is None
    assert judges.count_stated(CHAT, earlier, [_skipped(2), earlier[-1]]) is not None
    assert placeholders.stated_counts("[12 older messages removed] and 3 messages were omitted") == [("12 older messages removed", 12), ("3 messages were omitted", 3)]


def test_core21_counts_turns_the_provider_joined_as_kept() -> None:
    """Strands' emergency truncation (1.55+) removes two turns, writes "[... 2 messages elided ...]"
    into the next assistant turn and sends the user turns it joined as one message: the joined
    turns are kept (CORE-11 Decision: turns the provider joins), so 2 is the true count."""
    said = [{"role": "user", "content": "[Context Summary]\n- the build"}, {"role": "user", "content": "Fix it."}]
    rounds = [{"role": "assistant", "content": [{"type": "text", "text": f"step {i}"}]} if i % 2 else {"role": "user", "content": f"go {i}"} for i in range(1, 7)]
    request = {"messages": [*said, *rounds]}
    joined = {"role": "user", "content": [{"type": "text", "text": m["content"]} for m in said]}
    marked = {**rounds[2], "content": [*rounds[2]["content"], {"type": "text", "text": "[... 2 messages elided ...]"}]}
    out = {"messages": [joined, marked, *rounds[3:]]}
    assert judges.count_stated(ANTH, request, out) is None
    assert judges.removed(ANTH, request, out) == rounds[:2]
    assert judges.count_stated(ANTH, request, {"messages": [joined, {**marked, "content": [*rounds[2]["content"], {"type": "text", "text": "[... 4 messages elided ...]"}]}, *rounds[3:]]}) is not None


def test_core12_reads_a_truncation_marker_as_no_summary() -> None:
    """CORE-11 Decision (placeholders), as CORE-12 reads it: a marker standing alone or added to a
    kept message stands for nothing the summarizer should have answered; other new words do."""
    history = [{"role": "user", "content": "Fix the build"}, {"role": "assistant", "content": "On it."}, {"role": "user", "content": "Thanks"}, {"role": "assistant", "content": "Done."}]
    marked = {"role": "assistant", "content": "Done.\n[... 2 messages elided ...]"}
    assert judges.summary_stands_for_answer(CHAT, history, [history[0], _skipped(2), history[-1]], []) is None
    use = {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}
    request = {"messages": [*history[:3], use]}
    tagged = {**use, "content": [*use["content"], {"type": "text", "text": "[... 2 messages elided ...]"}]}
    assert judges.summary_stands_for_answer(ANTH, request, {"messages": [request["messages"][0], tagged]}, []) is None
    found = judges.summary_stands_for_answer(CHAT, history, [history[0], {"role": "user", "content": "The user fixed the build."}, history[-1]], [])
    assert found is not None and found.reason_id == "summary-without-summarizer-answer"
    # a marker written into a message's own text changes that message: it is judged as new
    assert judges.summary_stands_for_answer(CHAT, history, [history[0], marked], []) is not None


def test_a_placeholder_is_a_truncation_marker_not_a_failed_summary() -> None:
    """CORE-11 Decision (placeholders): after a summarizer fault, a message made only of a statement of
    how many messages were removed, standing alone or added as its own block to a kept message (Strands'
    context manager writes "[... 3 messages elided ...]" into the next kept assistant message), is a
    truncation's marker; a marker with any other words is still a summary nobody wrote."""
    assert placeholders.only_placeholder("[... 3 messages elided ...]") and placeholders.only_placeholder("Skipped 4 messages.")
    assert not placeholders.only_placeholder("[3 messages elided] The user asked to fix the build.")
    assert not placeholders.only_placeholder("Here is a summary of the conversation to date:")
    use = {"role": "assistant", "content": [{"type": "thinking", "thinking": "Run make.", "signature": "c2ln"}, {"type": "tool_use", "id": "t1", "name": "run", "input": {}}]}
    request = {"messages": [{"role": "user", "content": "Fix the build"}, {"role": "user", "content": "and the tests"}, use, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}]}
    marked = {**use, "content": [*use["content"], {"type": "text", "text": "[... 2 messages elided ...]"}]}
    said = {**use, "content": [*use["content"], {"type": "text", "text": "[2 messages elided: the user asked to fix the build]"}]}
    assert ANTH.no_failed_summary(request, {"messages": [marked, request["messages"][-1]]}) is None
    assert ANTH.no_failed_summary(request, {"messages": [said, request["messages"][-1]]}) is not None
    history = [{"role": "user", "content": "Fix the build"}, {"role": "assistant", "content": "On it."}, {"role": "user", "content": "Thanks"}]
    assert CHAT.no_failed_summary(history, [{"role": "user", "content": "Skipped 2 messages."}, history[-1]]) is None
    assert CHAT.no_failed_summary(history, [{"role": "user", "content": "Here is a summary of the conversation to date:"}, history[-1]]) is not None



@pytest.mark.parametrize("name", formats.NAMES)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_every_format_finds_an_item_kept_verbatim_corresponding(name: str, data: st.DataObject) -> None:
    """`judges` finds an item kept verbatim by its `oracle.canonical` form, without comparing it to
    each item in turn: that relies on every format's `corresponds` holding for the `same` item."""
    fmt = formats.get(name)
    for item in fmt.items(data.draw(fmt.histories())):
        assert fmt.corresponds(item, copy.deepcopy(item)) and fmt.corresponds(copy.deepcopy(item), item)


def test_truncation_and_masking_stand_for_nothing_new() -> None:
    masked = [*HISTORY[:3], {**HISTORY[3], "content": "[cleared]"}, *HISTORY[4:]]
    assert judges.summary_stands_for_answer(CHAT, HISTORY, [SYSTEM, HISTORY[-1]], []) is None
    assert judges.summary_stands_for_answer(CHAT, HISTORY, masked, []) is None


def test_a_compaction_item_stands_only_for_the_endpoints_answer(server: SummarizerServer) -> None:
    items = RESP.from_chat(HISTORY)
    server.reset()
    client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    compacted = client.responses.compact(model="m", input=items[1:5])
    given = [i.model_dump(exclude_none=True, warnings=False) for i in compacted.output]
    out = [items[0], *given, items[-1]]
    assert judges.summary_stands_for_answer(RESP, items, out, server.exchanges) is None
    forged = [items[0], compaction_item("my own summary"), items[-1]]
    found = judges.summary_stands_for_answer(RESP, items, forged, server.exchanges)
    assert found is not None and found.reason_id == "summary-without-summarizer-answer"


# --- CORE-18


def test_a_summary_obtained_then_dropped_fails_core18(server) -> None:
    """The summarizer read the older messages and answered; the output removed them and holds no answer."""
    answer, exchanges = summarize(server, HISTORY[1:5])
    assert answer
    out = [SYSTEM, HISTORY[-1]]
    found = judges.summary_kept(CHAT, HISTORY, out, exchanges)
    assert found is not None and found.reason_id == "summary-lost" and "input item 1 (user)" in found
    assert judges.summary_kept(CHAT, HISTORY, [SYSTEM, {"role": "user", "content": "[Context Summary]\n" + answer}, HISTORY[-1]], exchanges) is None


def test_a_summary_folded_into_a_later_summary_holds_core18(server) -> None:
    """Chunked summaries merged: the first answer is in the second request, the second in the output."""
    first, exchanges = summarize(server, HISTORY[1:3])
    second, more = summarize(server, [{"content": first}, *HISTORY[3:5]])
    both = [*exchanges, *more]
    out = [SYSTEM, {"role": "user", "content": "[Context Summary]\n" + second}, HISTORY[-1]]
    assert judges.summary_kept(CHAT, HISTORY, out, both) is None
    found = judges.summary_kept(CHAT, HISTORY, [SYSTEM, HISTORY[-1]], both)
    assert found is not None and found.reason_id == "summary-lost"


def test_truncation_without_a_summarizer_or_a_failed_one_holds_core18(server) -> None:
    """What no answered request held may go (plain truncation; a summarizer fault is CORE-11's)."""
    out = [SYSTEM, HISTORY[-1]]
    assert judges.summary_kept(CHAT, HISTORY, out, []) is None
    server.reset()
    server.fault("500")
    client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "Summarize:\n" + str(HISTORY[1]["content"])}])
    assert judges.summary_kept(CHAT, HISTORY, out, server.exchanges) is None
    server.reset()


# --- CORE-14, CORE-16 and how they rank against an empty compaction item


def test_the_newest_round_is_kept_masked_or_folded() -> None:
    assert judges.newest_round_kept(CHAT, HISTORY, [SYSTEM, HISTORY[-1]]) is None
    dropped = judges.newest_round_kept(CHAT, HISTORY, HISTORY[:-1])
    assert dropped is not None and dropped.reason_id == "newest-round-dropped"
    tool_last = HISTORY[:4]
    assert judges.newest_round_kept(CHAT, tool_last, [SYSTEM, HISTORY[2], {**HISTORY[3], "content": "[cleared]"}]) is None, "masked in place"


def _two_tool_rounds(older: str, newest: str) -> list[dict[str, Any]]:
    """HISTORY's first tool round with ``older`` as its result, then a newest tool round answered ``newest``."""
    again = {**CALL, "id": "call_2"}
    return [*HISTORY[:3], {**HISTORY[3], "content": older}, HISTORY[4], {"role": "assistant", "content": None, "tool_calls": [again]}, {"role": "tool", "tool_call_id": "call_2", "content": newest}]


@pytest.mark.parametrize("fmt", [CHAT, RESP, ANTH], ids=lambda f: f.name)
def test_a_newest_result_masked_while_an_older_one_as_large_stays_is_not_kept(fmt: formats.WireFormat) -> None:
    """SPEC CORE-14 Decision (a newest result masked in place), in every format: masking the newest
    round's result while an older one at least as large stays verbatim fails (Strands 1.5.0,
    strands#702); masking it when it is the largest, or after the older one, is no finding."""
    too_large = "The tool result was too large!"

    def judged(older: str, newest: str, *, older_masked: bool = False) -> Violation | None:
        history = _two_tool_rounds(older, newest)
        out = _two_tool_rounds(too_large if older_masked else older, too_large)
        return judges.newest_round_kept(fmt, fmt.from_chat(history), fmt.from_chat(out))

    masked = judged("line of the build log\n" * 40, "ledger_flush moved to libledger 2.1\n" * 3)
    assert masked is not None and masked.reason_id == "newest-result-masked" and "call_2" in masked and "call_1" in masked
    assert judged("short", "line of the build log\n" * 40) is None, "the newest result is the largest"
    assert judged("line of the build log\n" * 40, "short result", older_masked=True) is None, "masked after the older one"


def test_everything_dropped_is_judged_harsher_than_an_empty_compaction_item() -> None:
    """SPEC CORE-16 Decision: the emptied history fails more MUST clauses than the empty item."""
    items = RESP.from_chat(HISTORY)
    emptied = items[:1]
    empty_item = [items[0], {"type": "message", "role": "user", "content": [{"type": "input_text", "text": HISTORY[1]["content"]}]}, {"type": "compaction", "id": "cmp_0", "encrypted_content": ""}, items[-1]]

    def failing(out: list) -> set[str]:
        found = {cid for cid, why in judges.every_output(RESP, items, out, [], ("openai",)).items() if why}
        return found | ({"CORE-11"} if RESP.no_failed_summary(items, out) else set())

    assert failing(emptied) == {"CORE-14", "CORE-16"}
    assert failing(empty_item) == {"CORE-11"}
    nothing = judges.something_left(RESP, items, emptied)
    assert nothing is not None and nothing.reason_id == "history-emptied"
    assert reason(RESP.no_failed_summary(items, empty_item)) == "empty-summary"


# --- CORE-17 and the provider rule sets


def test_bedrock_and_gemini_reject_a_first_assistant_turn_the_input_did_not_have() -> None:
    request = ANTH.from_chat(HISTORY)
    window = {**request, "messages": request["messages"][3:]}  # starts at the assistant's text turn
    for provider in ("bedrock-converse", "gemini"):
        found = providers.broken([provider], ANTH, request, window)
        assert found is not None and found.reason_id == f"{provider}:first-turn-not-user"
    assert providers.broken(["anthropic"], ANTH, request, window) is None, "the published Messages API rules do not require it (SPEC ANTH-5)"
    assert providers.broken(["bedrock-converse"], ANTH, window, window) is None, "the input broke it first: the caller's"


def test_providers_are_declared_and_an_unknown_one_is_a_contract_error() -> None:
    class Strands:
        capabilities: ClassVar[dict[str, Any]] = {"wire_format": "anthropic-messages", "providers": ["anthropic", "bedrock-converse"]}

    class Unknown:
        capabilities: ClassVar[dict[str, Any]] = {"providers": ["azure-foundry"]}

    assert declared(Strands()).providers == ("anthropic", "bedrock-converse")
    assert declared(object()).providers == ("openai",)
    with pytest.raises(CapabilityError, match="azure-foundry"):
        declared(Unknown())


def test_summarizer_providers_are_declared_apart() -> None:
    """SPEC CORE-13 Decision: a provider's request rules apply to the summarizer requests only where the
    target says they reach it as sent (``summarizer_providers``), never through ``providers``."""

    class Raw:
        capabilities: ClassVar[dict[str, Any]] = {"providers": ["openai", "bedrock-converse"], "summarizer_providers": ["bedrock-converse"]}

    class Unknown:
        capabilities: ClassVar[dict[str, Any]] = {"summarizer_providers": ["vertex"]}

    assert declared(Raw()).summarizer_providers == ("bedrock-converse",)
    assert declared(Raw()).as_dict()["summarizer_providers"] == ["bedrock-converse"]
    assert declared(object()).summarizer_providers == () and "summarizer_providers" not in declared(object()).as_dict()
    with pytest.raises(CapabilityError, match="summarizer_providers"):
        declared(Unknown())


def test_the_strands_adapter_declares_bedrock_and_the_suite_judges_its_rules() -> None:
    """Agreed interface 1: Strands' default provider is Bedrock; its adapter says so and CORE-17 is
    then judged (not waived, as it is for the default providers)."""
    pytest.importorskip("strands", reason="Strands Agents is not installed (pip install 'compaction-suite[strands]')")
    from compaction_suite.adapters.strands import sliding_window, summarizing
    from compaction_suite.conformance.clauses import waived_by
    from compaction_suite.conformance.settings import Settings

    rules = set(waived_by("providers", "openai")) & set(waived_by("providers", "anthropic"))
    for factory in (sliding_window, summarizing):
        said = declared(factory(Settings(base_url="http://127.0.0.1:9/v1")))
        assert said.providers == ("anthropic", "bedrock-converse") and rules and not rules & set(said.waived())
        assert said.summarizer_providers == (), "its summarizer requests go through AnthropicModel, not Strands' BedrockModel (SPEC CORE-13 Decision)"
    assert rules <= set(declared(object()).waived())


# --- RESP-5 kept and folded, RESP-9 opaque reasoning


def test_resp5_an_earlier_compaction_item_kept_beside_the_one_folding_it() -> None:
    earlier = {"type": "compaction", "id": "cmp_old", "encrypted_content": "gAAAAold"}
    history = [{"type": "message", "role": "user", "content": "first"}, earlier, {"type": "message", "role": "user", "content": "next"}]
    new = compaction_item("summary", [earlier])
    assert folded(new) and responses.check_compaction_not_duplicated(history, [new, history[2]]) is None
    found = responses.check_compaction_not_duplicated(history, [earlier, new, history[2]])
    assert found is not None and found.reason_id == "compaction-item-kept-and-folded"


def test_resp9_a_reasoning_item_kept_without_its_encrypted_content() -> None:
    reasoning: dict[str, Any] = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAArs1"}
    call: dict[str, Any] = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
    history: list[dict[str, Any]] = [reasoning, call, {"type": "function_call_output", "call_id": "c1", "output": "ok"}]
    assert responses.check_reasoning_opaque(history, history) is None
    stripped = [{**reasoning, "encrypted_content": None}, *history[1:]]
    assert reason(responses.check_reasoning_opaque(history, stripped)) == "reasoning-content-lost"
    edited = [{**reasoning, "summary": [{"type": "summary_text", "text": "x"}]}, *history[1:]]
    assert reason(responses.check_reasoning_opaque(history, edited)) == "reasoning-item-altered"


# --- the double: the provider's own rules, the faults each API sends


def test_the_double_answers_an_invalid_summarizer_request_as_the_provider_does(server: SummarizerServer) -> None:
    server.reset()
    client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    with pytest.raises(openai.BadRequestError, match="messages with role 'tool' must be a response to a preceeding message with 'tool_calls'"):
        client.chat.completions.create(model="m", messages=sent(HISTORY[3:]))
    found = judges.requests_accepted(server.exchanges)
    assert found is not None and found.reason_id == "summarizer-request-orphan-tool-result"
    with pytest.raises(openai.BadRequestError, match="did not have response messages: call_1"):
        client.chat.completions.create(model="m", messages=sent(HISTORY[:3]))
    with pytest.raises(openai.BadRequestError, match="No tool output found for function call call_1"):
        client.responses.compact(model="m", input=RESP.from_chat(HISTORY[:3]))
    messages = ANTH.from_chat(HISTORY)["messages"]
    messages_client = anthropic.Anthropic(base_url=server.base_url.removesuffix("/v1"), api_key="test", max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="unexpected `tool_use_id` found in `tool_result` blocks: call_1"):
        messages_client.messages.create(model="m", max_tokens=10, messages=messages[2:])
    server.reset()
    client.chat.completions.create(model="m", messages=sent(HISTORY))
    assert judges.requests_accepted(server.exchanges) is None and server.exchanges[0].answer


def test_each_api_sends_only_the_faults_its_provider_is_known_to_send(server: SummarizerServer) -> None:
    assert all(source.strip() for api in SENT.values() for source in api.values()), "every fault cites its source"
    assert not sends("compact", "empty_content") and not sends("compact", "no_choices"), "no report of an empty compaction item"
    server.reset()
    server.fault("empty_content")
    client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    compacted = client.responses.compact(model="m", input=RESP.from_chat(HISTORY))
    assert getattr(compacted.output[-1], "encrypted_content", None), "answered normally"
    assert server.counts.get("unsent:empty_content") == 1
    server.reset()
    server.fault("503", times=1)
    messages_client = anthropic.Anthropic(base_url=server.base_url.removesuffix("/v1"), api_key="test", max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as raised:
        messages_client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    assert raised.value.status_code == 529 and "overloaded_error" in str(raised.value.body)
    server.reset()
    server.fault("null_content", times=1)
    answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert answer.choices[0].message.content is None and answer.choices[0].finish_reason == "content_filter"
    server.reset()
    server.fault("no_choices", times=1)
    incomplete = client.responses.create(model="m", input="hi")
    assert incomplete.status == "incomplete" and incomplete.output_text == ""


def test_a_transient_fault_is_absorbed_by_the_clients_default_retries(server: SummarizerServer) -> None:
    server.reset()
    server.fault("429", times=1, retry_after="0")
    client = openai.OpenAI(base_url=server.base_url, api_key="test")  # default: two retries
    answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert answer.choices[0].message.content and [e.fault for e in server.exchanges] == ["429", None]


# --- reason ids


def test_a_violation_is_its_reason_and_carries_a_stable_id() -> None:
    found = Violation("orphan-tool-result", "message 3 (tool): no call")
    assert found == "message 3 (tool): no call" and found.reason_id == "orphan-tool-result"
    assert pickle.loads(pickle.dumps(found)).reason_id == "orphan-tool-result"
    assert copy.deepcopy(found).reason_id == "orphan-tool-result"
    assert Violation("crash:IndexError", "x").reason_id == "crash:IndexError"
    with pytest.raises(ValueError, match="slug"):
        Violation("Orphan Tool Result", "x")


def test_every_reason_id_a_check_gives_is_documented() -> None:
    """conformance/schema/report.md lists the reason ids (agreed interface 2): every id a check of
    the suite writes, literally or as a family (``crash:<type>``), is in it."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    doc = (root / "conformance" / "schema" / "report.md").read_text(encoding="utf-8")
    written: set[str] = set()
    for path in [*(root / "conformance").rglob("*.py")]:
        for line in path.read_text(encoding="utf-8").splitlines():
            if re.search(r"\b(Violation|V)\(|slug = |\bfailed_summary\(|reason_id\(|\"empty-summary\"", line):
                written |= set(re.findall(r'f?"([a-z]+(?:-[a-z0-9]+)*:?(?:[a-z0-9-]+|\{[^}"]+\})?)"', line))
    slugs = {w for w in written if "-" in w or ":" in w}
    undocumented = sorted(s for s in slugs if (f"`{s}`" not in doc if "{" not in s else f"`{s.split('{')[0]}<" not in doc) and not s.startswith("{"))
    assert len(slugs) > 60 and undocumented == []


def test_core14_decision_a_newest_turn_joined_with_its_neighbour_is_kept() -> None:
    """CORE-14 in an Anthropic request: a newest-round message joined into the previous message of
    its role (its blocks one run there, as the Messages API joins consecutive turns) is kept; the
    same message with one block changed is not."""
    from compaction_suite.conformance.formats import anthropic as anthropic_format

    history = {"messages": [
        {"role": "user", "content": "old question"}, {"role": "assistant", "content": "old answer"},
        {"role": "user", "content": "new question"},
        {"role": "assistant", "content": [{"type": "text", "text": "first part"}]},
        {"role": "assistant", "content": "second part"},
    ]}  # fmt: skip
    joined = {"messages": [
        {"role": "user", "content": "new question"},
        {"role": "assistant", "content": [{"type": "text", "text": "first part"}, {"type": "text", "text": "second part"}]},
    ]}  # fmt: skip
    assert judges.newest_round_kept(anthropic_format.FORMAT, history, joined) is None
    history["messages"][-1] = {"role": "assistant", "content": [{"type": "text", "text": "second part", "cache_control": {"type": "ephemeral"}}]}
    assert judges.newest_round_kept(anthropic_format.FORMAT, history, joined) is None  # a breakpoint is not what the model reads
    altered = {"messages": [joined["messages"][0], {"role": "assistant", "content": [{"type": "text", "text": "first part"}, {"type": "text", "text": "second"}]}]}
    assert judges.newest_round_kept(anthropic_format.FORMAT, history, altered) is not None


def test_anth3_a_turn_joined_whole_with_its_neighbour_keeps_its_thinking() -> None:
    """ANTH-3 under CORE-14's Decision: a tool_use turn joined whole into the previous assistant
    message keeps its thinking; the same join with the thinking block dropped does not."""
    from compaction_suite.conformance.formats import anthropic as anthropic_format

    thinking = {"type": "redacted_thinking", "data": "EgAAAAAAAAAAAAAAAAAAAAA="}
    use = {"type": "tool_use", "id": "call_1", "name": "read", "input": {}}
    history: dict[str, list[dict[str, Any]]] = {"messages": [
        {"role": "user", "content": "q"}, {"role": "assistant", "content": "earlier"},
        {"role": "assistant", "content": [thinking, use]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "r"}]},
    ]}  # fmt: skip
    joined: list[dict[str, Any]] = [{"role": "user", "content": "q"}, {"role": "assistant", "content": [{"type": "text", "text": "earlier"}, thinking, use]}, history["messages"][3]]
    assert anthropic_format.check_thinking_kept(history, joined) is None
    dropped: list[dict[str, Any]] = [joined[0], {"role": "assistant", "content": [{"type": "text", "text": "earlier"}, use]}, joined[2]]
    assert anthropic_format.check_thinking_kept(history, dropped) is not None


def test_core50_a_written_message_restating_a_call_the_output_sends_fails_and_one_naming_a_removed_call_passes() -> None:
    """CORE-50 on each wire format's call ids: a message the compaction wrote naming, by its id, a call the
    output still sends fails with ``call-restated-and-sent``; naming only calls it removed, or an id inside
    the summarizer's own answer, passes."""
    kept = HISTORY[2:]
    restating = [SYSTEM, {"role": "user", "content": "Earlier: the agent ran runCommand (call_1)."}, *kept]
    found = judges.restated_calls(CHAT, HISTORY, restating)
    assert found is not None and found.reason_id == "call-restated-and-sent" and "'call_1'" in found and "output item 2 (assistant)" in found
    removed = [SYSTEM, {"role": "user", "content": "Earlier: the agent ran runCommand (call_1)."}, HISTORY[4], HISTORY[5]]
    assert judges.restated_calls(CHAT, HISTORY, removed) is None
    answered = [SYSTEM, {"role": "user", "content": "Summary: ran call_1."}, *kept]

    class Answer:
        answer = "ran call_1."

    assert judges.restated_calls(CHAT, HISTORY, answered, [Answer()]) is None  # type: ignore[list-item]
    items = [
        {"type": "message", "role": "user", "content": "Read the config."},
        {"type": "function_call", "call_id": "call_cfg_1", "name": "readFile", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_cfg_1", "output": "debug = true"},
    ]
    nested = [{"role": "assistant", "content": '<CONVERSATION HISTORY>\n1. function_call: {"call_id": "call_cfg_1"}'}, *items[1:]]
    found = judges.restated_calls(RESP, items, nested)
    assert found is not None and "which output item 1 (function_call) also sends" in found
    assert judges.restated_calls(RESP, items, nested[:1]) is None


def test_core50_a_hosted_call_is_named_by_its_item_id() -> None:
    """CORE-50 on a hosted tool call (no ``call_id``; its item ``id`` names it): a written message restating
    an MCP call's id while the output sends the call fails; the message alone passes, and so does a
    message naming only a call the compaction removed (openai/openai-agents-python#3412)."""
    items = [
        {"type": "message", "role": "user", "content": "Check the build."},
        {"type": "mcp_call", "id": "mcp_build_1", "server_label": "ci", "name": "status", "arguments": "{}", "output": "green", "status": "completed"},
    ]
    written = {"role": "assistant", "content": '<CONVERSATION HISTORY>\n2. {"id": "mcp_build_1", "name": "status", "output": "green"}'}
    found = judges.restated_calls(RESP, items, [written, items[1]])
    assert found is not None and found.reason_id == "call-restated-and-sent" and "'mcp_build_1'" in found
    assert judges.restated_calls(RESP, items, [written]) is None
    assert judges.call_ids({**items[1], "call_id": "call_build_1"}) == ["call_build_1"]  # a call_id names it where it has one


def test_core50_a_written_message_restating_a_sent_message_fails_by_its_whole_text() -> None:
    """CORE-50 on messages: a message the compaction wrote holding the whole text of a message the output
    also sends (JSON-escaped, as a nested transcript renders it) fails with ``message-restated-and-sent``;
    the same text in the summarizer's own answer, a message the output no longer sends, or a sentence too
    short to tell from chance passes (openai/openai-agents-python#3791)."""
    said = "I am handing this conversation over to the specialist, who will take it from here."
    items = [{"type": "message", "role": "user", "content": "Fix the failing test in parser.py, then hand it over."}]
    message = {"type": "message", "role": "assistant", "id": "msg_said_1", "status": "completed", "content": [{"type": "output_text", "text": said, "annotations": []}]}
    written = {"role": "assistant", "content": "<CONVERSATION HISTORY>\n1. user: Fix the failing test\n2. " + json.dumps(message) + "\n</CONVERSATION HISTORY>"}
    found = judges.restated_calls(RESP, items, [written, message])
    assert found is not None and found.reason_id == "message-restated-and-sent" and "output item 1 (assistant)" in found
    assert judges.restated_calls(RESP, items, [written]) is None  # the message is no longer sent: a summary of it

    class Answer:
        answer = "The agent said: " + said

    summary = {"role": "assistant", "content": "[Context Summary] The agent said: " + said}
    assert judges.restated_calls(RESP, items, [summary, message], [Answer()]) is None  # type: ignore[list-item]
    short = {**message, "content": [{"type": "output_text", "text": "Handing over now.", "annotations": []}]}
    assert judges.restated_calls(RESP, items, [{"role": "assistant", "content": "2. assistant: Handing over now. Then more."}, short]) is None


def test_core60_a_transcript_keeping_a_messages_first_line_fails_and_one_keeping_it_whole_passes() -> None:
    """CORE-60: a transcript the compaction wrote without a summarizer holding the first line of a user
    message of several lines, and nothing of the rest, fails with ``transcript-cuts-message``
    (openai/openai-agents-python#3319); the message written whole as a JSON record (escapes read back) passes,
    as do the same transcript beside a summarizer's answer and a message the output still sends."""
    ask = "Please fix the failing parser test before the release goes out.\nThe stack trace points at tokenize() in lexer.py, line 88."
    items = [{"type": "message", "role": "user", "content": ask}, {"type": "message", "role": "user", "content": "Hand this to the specialist."}]
    cut = {"role": "assistant", "content": "<CONVERSATION HISTORY>\n1. user: Please fix the failing parser test before the release goes out.\n</CONVERSATION HISTORY>"}
    found = judges.transcript_whole(RESP, items, [cut, items[1]])
    assert found is not None and found.reason_id == "transcript-cuts-message" and "input item 0 (user)" in found
    whole = {"role": "assistant", "content": "<CONVERSATION HISTORY>\n1. " + json.dumps({"role": "user", "content": ask}) + "\n</CONVERSATION HISTORY>"}
    assert judges.transcript_whole(RESP, items, [whole, items[1]]) is None

    class Answer:
        answer = "The user asked for a parser fix."

    assert judges.transcript_whole(RESP, items, [cut, items[1]], [Answer()]) is None  # type: ignore[list-item]
    assert judges.transcript_whole(RESP, items, [cut, *items]) is None  # the message is still sent


def test_core61_a_record_reread_as_a_line_fails_and_records_of_real_roles_pass() -> None:
    """CORE-61: a transcript the compaction wrote without a summarizer holding a JSON record whose role is
    the start of another record (a record split at U+2028 and read back as a ``role: text`` line,
    openai/openai-agents-python#4787) fails with ``transcript-record-role-made-up``, though every letter of
    the message is there; records of real roles pass, as do a role the input's own records name and the
    same transcript beside a summarizer's answer."""
    ask = "I copied this from the design document:\n\nThe cache keeps entries\u2028for ten minutes."
    items = [{"type": "message", "role": "user", "content": ask}, {"type": "message", "role": "user", "content": "Hand this to the specialist."}]
    reread = {"role": '{"role"', "content": ask.replace("\u2028", "\n")}
    garbled = {"role": "assistant", "content": "<CONVERSATION HISTORY>\n1. " + json.dumps(reread, ensure_ascii=False) + "\n</CONVERSATION HISTORY>"}
    found = judges.transcript_roles(RESP, items, [garbled, items[1]])
    assert found is not None and found.reason_id == "transcript-record-role-made-up" and "role '{\"role\"'" in found
    assert judges.transcript_whole(RESP, items, [garbled, items[1]]) is None  # its letters all survive: CORE-60 passes
    whole = {"role": "assistant", "content": "<CONVERSATION HISTORY>\n1. " + json.dumps({"role": "user", "content": ask}, ensure_ascii=False) + "\n</CONVERSATION HISTORY>"}
    assert judges.transcript_roles(RESP, items, [whole, items[1]]) is None
    quoted = [{"type": "message", "role": "user", "content": 'My log holds {"role": "planner", "content": "step 1"}'}, items[1]]
    written = {"role": "assistant", "content": '1. {"role": "planner", "content": "step 1"}'}
    assert judges.transcript_roles(RESP, quoted, [written, items[1]]) is None  # a role the input's own record names

    class Answer:
        answer = "The user pasted a design note."

    assert judges.transcript_roles(RESP, items, [garbled, items[1]], [Answer()]) is None  # type: ignore[list-item]


def test_core43_a_preview_of_a_content_lists_repr_fails_and_the_image_kept_or_named_passes() -> None:
    """CORE-43: an older ``function_call_output`` whose content list (a caption and an inline image)
    a trimmer shortened to a header and a slice of ``str()`` of the list holds the image's base64 data
    as text and fails with ``media-data-as-text`` (openai/openai-agents-python#4173); the same output
    kept, or replaced by words naming the image, passes, as does data the input's own text held."""
    data = "iVBORw0KGgoAAAANSUhEUgAAAEAAAABACAIAAAAlC" + "".join(chr(65 + (i * 7) % 26) for i in range(600))
    image = {"type": "input_image", "image_url": f"data:image/png;base64,{data}", "detail": "auto"}
    output = [{"type": "input_text", "text": "Read assets/chart.png"}, image]
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": "Plot it."},
        {"type": "function_call", "call_id": "call_plot_1", "name": "plot", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_plot_1", "output": output},
        {"type": "message", "role": "user", "content": "Now the table."},
    ]
    preview = f"[Trimmed: plot output — {len(str(output))} chars → 200 char preview]\n{str(output)[:200]}..."
    trimmed = [*items[:2], {**items[2], "output": preview}, items[3]]
    found = judges.media_data_in_text(RESP, items, trimmed)
    assert found is not None and found.reason_id == "media-data-as-text" and "output item 2 (function_call_output)" in found
    named = [*items[:2], {**items[2], "output": "[Trimmed: plot output: text 'Read assets/chart.png', 1 image omitted]"}, items[3]]
    assert judges.media_data_in_text(RESP, items, named) is None
    assert judges.media_data_in_text(RESP, items, items[1:]) is None
    pasted = [{"type": "message", "role": "user", "content": f"Here is the data: {data}"}, *items]
    assert judges.media_data_in_text(RESP, pasted, [pasted[0], *trimmed]) is None


def test_media_as_text_reads_past_a_schema_whose_type_is_a_list():
    """A summarizer request carrying a structured-output tool spec (a JSON schema field typed
    ``["string", "null"]``) is judged, not crashed on (SPEC SUM-6; strands-agents 1.14.0's structured
    output on a summarization agent, the run of harness-sdk#1160, errored here with ``unhashable type``)."""
    schema = {"type": "object", "properties": {"note": {"type": ["string", "null"], "description": "a note"}}}
    body = {"messages": [{"role": "user", "content": [{"text": "Summarize."}]}], "toolConfig": {"tools": [{"toolSpec": {"name": "Summary", "inputSchema": {"json": schema}}}]}}
    assert list(judges._outside_media(body)) == ["user", "Summarize.", "Summary", "object", "string", "null", "a note"]
