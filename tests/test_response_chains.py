"""The summarizer test double keeps response chains as the Responses API does (SPEC Part A, "Wire
formats", Decision: response chains; `conformance.response_chains`), read with the official client."""

from __future__ import annotations

import openai
import pytest

from compaction_suite.conformance import judges
from compaction_suite.conformance.response_chains import DUPLICATE, NO_CONVERSATION, NOT_FOUND, UNANSWERED, ResponseStore
from compaction_suite.conformance.summarizer_apis import SCRIPTED
from compaction_suite.conformance.summarizer_server import SummarizerServer

USER = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Read the two files and tell me what differs."}]}
CALLS = [{"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": "read_file", "arguments": f'{{"path": "f{n}.py"}}', "status": "completed"} for n in (1, 2)]
OUTPUTS = [{"type": "function_call_output", "call_id": f"call_{n}", "output": f"contents of f{n}.py"} for n in (1, 2)]


@pytest.fixture
def server():
    with SummarizerServer() as running:
        yield running


def client(server: SummarizerServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="test-double", max_retries=0)


def scripted(server: SummarizerServer, output: list, **body) -> str:
    """A response the agent's model gave (scripted), stored unless ``store`` is false: its id."""
    return client(server).responses.create(model="gpt-4.1", input=body.pop("input", [USER]), extra_body={SCRIPTED: output}, **body).id


def test_a_chained_request_stands_for_the_stored_chain(server):
    first = client(server).responses.create(model="gpt-4.1", input=[USER])
    second = client(server).responses.create(model="gpt-4.1", previous_response_id=first.id, input="And now summarize.")
    sent = server.exchanges[-1].body["input"]
    assert "previous_response_id" not in server.exchanges[-1].body and second.status == "completed"
    assert [i.get("role") for i in sent] == ["user", "assistant", "user"] and sent[1]["id"] == first.output[0].id
    assert server.exchanges[-1].request.body["previous_response_id"] == first.id  # what was received stays as received


def test_compacting_a_response_whose_calls_have_no_output_is_refused(server):
    """openai/openai-agents-python#2317: ``responses.compact(previous_response_id=...)`` of a response
    holding calls whose outputs were never sent: HTTP 400 "No tool output found for function call ..."."""
    response_id = scripted(server, CALLS)
    with pytest.raises(openai.BadRequestError) as refused:
        client(server).responses.compact(model="gpt-4.1", previous_response_id=response_id)
    assert "No tool output found for function call call_1." in refused.value.message
    assert server.exchanges[-1].rejected.reason_id == UNANSWERED
    assert judges.requests_accepted(server.exchanges).reason_id == UNANSWERED  # CORE-13 names it


def test_the_outputs_given_with_the_chain_answer_its_calls(server):
    response_id = scripted(server, CALLS)
    compacted = client(server).responses.compact(model="gpt-4.1", previous_response_id=response_id, input=OUTPUTS)
    assert [o.type for o in compacted.output] == ["message", "compaction"]  # the chain's user message, then the item
    assert server.exchanges[-1].body["input"] == [USER, *CALLS, *OUTPUTS]
    assert judges.requests_accepted(server.exchanges) is None


@pytest.mark.parametrize("store", [False, None])
def test_an_unstored_or_unknown_response_is_not_found(server, store):
    """openai/openai-agents-python#2333: a response answered with ``store=false`` cannot be chained:
    HTTP 400 "Previous response with id '...' not found.", code ``previous_response_not_found``."""
    response_id = scripted(server, [{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "text": "Done.", "annotations": []}]}], store=False) if store is False else "resp_never_answered"
    with pytest.raises(openai.BadRequestError) as refused:
        client(server).responses.compact(model="gpt-4.1", previous_response_id=response_id)
    assert refused.value.code == "previous_response_not_found" and refused.value.param == "previous_response_id"
    assert f"Previous response with id '{response_id}' not found." in refused.value.message
    assert server.exchanges[-1].rejected.reason_id == NOT_FOUND and not server.stored(response_id)


def test_the_compact_endpoint_keeps_nothing(server):
    compacted = client(server).responses.compact(model="gpt-4.1", input=[USER])
    assert not server.stored(compacted.id)


def test_a_scripted_model_request_is_no_summarizer_exchange(server):
    """The agent's model, scripted: answered with its items, stored, chained, never judged as a summarizer request."""
    server.fault("500")
    response_id = scripted(server, CALLS)
    assert server.exchanges == [] and len(server.model_requests) == 1 and server.stored(response_id)
    assert server.counts == {}  # no fault was sent to it


def test_a_streamed_response_ends_with_the_whole_response(server):
    with client(server).responses.stream(model="gpt-4.1", input=[USER]) as stream:
        final = stream.get_final_response()
    assert final.output_text.startswith("Deterministic test-double summary") and server.stored(final.id)


def test_the_store_resolves_and_refuses_without_a_server():
    store = ResponseStore()
    store.keep({"input": [USER]}, {"id": "resp_a", "output": CALLS})
    store.keep({"input": [USER], "store": False}, {"id": "resp_b", "output": []})
    assert store.resolve({"previous_response_id": "resp_a", "input": OUTPUTS})[0]["input"] == [USER, *CALLS, *OUTPUTS]
    assert store.resolve({"previous_response_id": "resp_a", "input": OUTPUTS[:1]})[1].reason_id == UNANSWERED
    assert store.resolve({"previous_response_id": "resp_b"})[1].reason_id == NOT_FOUND
    assert store.resolve({"input": "hi"}) == ({"input": "hi"}, None)


def test_only_an_id_the_named_chain_holds_is_a_duplicate():
    """The duplicate rule's precision: an id is refused only where the chain the request names (or its
    conversation) holds it. An id another response's chain holds, an item without an id, and a request
    naming no chain (the API reads no server state then) are no duplicates of a chain (an id named twice
    within one input is the request rules' refusal, below); an ``item_reference`` to an item the chain
    holds is one (vercel/ai#15492)."""
    store = ResponseStore()
    store.keep({"input": [USER]}, {"id": "resp_a", "output": CALLS[:1]})
    store.keep({"input": [USER]}, {"id": "resp_b", "output": CALLS[1:]})
    assert store.resolve({"previous_response_id": "resp_b", "input": [CALLS[0], *OUTPUTS]})[1] is None
    assert store.resolve({"input": [*CALLS, *OUTPUTS]})[1] is None
    unnamed = {k: v for k, v in CALLS[1].items() if k != "id"}
    assert store.resolve({"previous_response_id": "resp_b", "input": [unnamed, OUTPUTS[1]]})[1] is None
    reference = {"type": "item_reference", "id": "fc_2"}
    assert store.resolve({"previous_response_id": "resp_b", "input": [reference, OUTPUTS[1]]})[1].reason_id == DUPLICATE


def test_a_conversation_stands_for_its_items_then_the_input(server):
    """The Conversations API: a conversation opened with items (``POST /v1/conversations``) and a response
    naming it reads its items before the input; the conversation then holds that input and the output."""
    conversation = client(server).conversations.create(items=[USER]).id
    scripted(server, CALLS, input=[], conversation=conversation)
    scripted(server, [], input=OUTPUTS, conversation={"id": conversation})
    assert len(server.model_requests) == 2 and server.exchanges == []
    client(server).responses.create(model="gpt-4.1", input="And now summarize.", conversation=conversation)
    assert server.exchanges[-1].body["input"][: 1 + len(CALLS) + len(OUTPUTS)] == [USER, *CALLS, *OUTPUTS]


def test_a_conversation_whose_calls_the_input_leaves_unanswered_is_refused(server):
    """As for a stored chain: the conversation holds a function call whose output no one sent."""
    conversation = client(server).conversations.create().id
    scripted(server, CALLS, conversation=conversation)
    with pytest.raises(openai.BadRequestError) as refused:
        client(server).responses.create(model="gpt-4.1", input=OUTPUTS[:1], conversation=conversation)
    assert "No tool output found for function call call_2." in refused.value.message
    assert server.exchanges[-1].rejected.reason_id == UNANSWERED


@pytest.mark.parametrize("server_state", ["conversation", "previous_response_id"])
def test_an_item_the_server_already_holds_is_a_duplicate(server, server_state):
    """openai/openai-agents-python#1789 (``conversation_id``) and vercel/ai#15492 (``previous_response_id``): an
    input item whose id the conversation or chain already holds is refused, HTTP 400 "Duplicate item found with
    id …. Remove duplicate items from your input and try again.", param ``input``; the input without it is
    accepted."""
    named: dict = {"conversation": client(server).conversations.create().id} if server_state == "conversation" else {}
    response_id = scripted(server, CALLS, **named)
    named = named or {"previous_response_id": response_id}
    with pytest.raises(openai.BadRequestError) as refused:
        client(server).responses.create(model="gpt-4.1", input=[CALLS[0], *OUTPUTS], **named)
    assert "Duplicate item found with id fc_1. Remove duplicate items from your input and try again." in refused.value.message
    assert refused.value.param == "input" and server.exchanges[-1].rejected.reason_id == DUPLICATE
    client(server).responses.create(model="gpt-4.1", input=OUTPUTS, **named)
    assert server.exchanges[-1].rejected is None


def test_an_id_named_twice_in_one_input_is_a_duplicate(server):
    """SPEC Decision (an id repeated within one input): a stateless request naming one item id twice, by
    the item or by an ``item_reference``, is refused in the API's words (microsoft/vscode#321977,
    earendil-works/pi#5165); the same items without the repeat, or with the repeated copy unnamed, are
    accepted."""
    reference = {"type": "item_reference", "id": "fc_1"}
    unnamed = {k: v for k, v in CALLS[0].items() if k != "id"}
    for repeated in (CALLS[0], reference):
        with pytest.raises(openai.BadRequestError) as refused:
            client(server).responses.create(model="gpt-4.1", input=[USER, *CALLS, repeated, *OUTPUTS])
        assert "Duplicate item found with id fc_1. Remove duplicate items from your input and try again." in refused.value.message
        assert refused.value.param == "input" and refused.value.code is None  # the API's body for a duplicate item (response_chains)
        assert server.exchanges[-1].rejected.reason_id == DUPLICATE
    client(server).responses.create(model="gpt-4.1", input=[USER, *CALLS, *OUTPUTS, {**USER, "id": "msg_a"}, {**USER, "id": "msg_b"}])
    assert server.exchanges[-1].rejected is None
    with pytest.raises(openai.BadRequestError):
        client(server).responses.create(model="gpt-4.1", input=[USER, *CALLS[1:], unnamed, unnamed, *OUTPUTS])
    assert server.exchanges[-1].rejected.reason_id != DUPLICATE  # refused for the call_id named twice, not the id


def test_resp6_an_output_naming_an_id_twice_is_invalid_unless_its_input_did():
    """RESP-6: the output may not name an item id twice (the request the API would refuse), except an id the
    input itself already names twice: that repeat is the caller's."""
    from compaction_suite.conformance.formats import responses

    history = [USER, CALLS[0], OUTPUTS[0]]
    problem = responses.invalid([*history, CALLS[0]], history)
    assert problem is not None and problem.reason_id == "invalid-item:duplicate-id" and "'fc_1'" in str(problem)
    assert responses.invalid(history, history) is None
    twice = [USER, {**USER, "id": "msg_1"}, {**USER, "id": "msg_1"}]
    assert responses.invalid(twice, twice) is None
    assert responses.invalid(twice, [USER, {**USER, "id": "msg_1"}]).reason_id == "invalid-item:duplicate-id"
    both = [*twice, CALLS[0], OUTPUTS[0], CALLS[0]]
    assert responses.invalid(both, [*twice, CALLS[0], OUTPUTS[0]]).reason_id == "invalid-item:duplicate-id"  # past the caller's own repeat


def test_the_store_opens_conversations_and_refuses_an_unknown_one():
    store = ResponseStore()
    name = store.open_conversation([USER])
    resolved, refusal = store.resolve({"conversation": name, "input": []})
    assert refusal is None and resolved["input"] == [USER]
    store.keep(resolved, {"id": "resp_c", "output": CALLS})
    assert store.resolve({"conversation": {"id": name}, "input": OUTPUTS})[0]["input"] == [USER, *CALLS, *OUTPUTS]
    assert store.resolve({"conversation": "conv_never_opened", "input": []})[1].reason_id == NO_CONVERSATION
    store.clear()
    assert store.resolve({"conversation": name, "input": []})[1].reason_id == NO_CONVERSATION
