"""openai-python, unmodified and strict, on the parts of the API a real application uses beyond
one response: `client.conversations` (and responses bound to one), background responses (polled,
streamed and resumed, cancelled), `context_management` compaction, and a parameter Tether does
not know, refused by name (docs/protocol.md §2, §10–12).
"""

from __future__ import annotations

import time

import openai
import pytest
from openai import OpenAI

from conftest import MODEL

TOOL = {
    "type": "function",
    "name": "shell",
    "description": "Runs a command.",
    "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
}


def user(text: str) -> dict:
    return {"type": "message", "role": "user", "content": text}


def test_conversations_are_created_read_updated_listed_and_deleted(client: OpenAI) -> None:
    conversation = client.conversations.create(metadata={"topic": "cats"}, items=[user("hello")])
    assert conversation.object == "conversation"
    assert conversation.id.startswith("conv_")
    assert client.conversations.retrieve(conversation.id).metadata == {"topic": "cats"}
    updated = client.conversations.update(conversation.id, metadata={"topic": "dogs"})
    assert updated.metadata == {"topic": "dogs"}

    added = client.conversations.items.create(
        conversation.id, items=[user(f"m{n}") for n in range(4)], include=["message.output_text.logprobs"]
    )
    assert added.object == "list"
    assert [item.content[0].text for item in added.data] == ["m0", "m1", "m2", "m3"]
    # Paged two at a time, oldest first: the SDK follows `last_id` and `has_more`.
    listed = client.conversations.items.list(conversation.id, order="asc", limit=2)
    texts = [item.content[0].text for item in listed]
    assert texts == ["hello", "m0", "m1", "m2", "m3"]
    newest = client.conversations.items.list(conversation.id, limit=1)
    assert newest.data[0].content[0].text == "m3"
    assert newest.has_more

    item = client.conversations.items.retrieve(added.data[1].id, conversation_id=conversation.id)
    assert item.id == added.data[1].id
    after = client.conversations.items.delete(added.data[1].id, conversation_id=conversation.id)
    assert after.id == conversation.id
    with pytest.raises(openai.NotFoundError):
        client.conversations.items.retrieve(added.data[1].id, conversation_id=conversation.id)

    deleted = client.conversations.delete(conversation.id)
    assert deleted.deleted and deleted.object == "conversation.deleted"
    with pytest.raises(openai.NotFoundError):
        client.conversations.retrieve(conversation.id)


def test_a_response_bound_to_a_conversation_reads_it_and_appends_to_it(client: OpenAI) -> None:
    conversation = client.conversations.create(items=[user("my name is Ada")])
    first = client.responses.create(model=MODEL, input="hi", conversation=conversation.id)
    assert first.conversation is not None and first.conversation.id == conversation.id
    second = client.responses.create(model=MODEL, input="and now?", conversation={"id": conversation.id})
    assert second.status == "completed"
    items = list(client.conversations.items.list(conversation.id, order="asc"))
    assert [item.type for item in items] == ["message"] * 5
    assert items[2].id == first.output[0].id
    with pytest.raises(openai.BadRequestError) as both:
        client.responses.create(
            model=MODEL, input="x", conversation=conversation.id, previous_response_id=first.id
        )
    assert both.value.param == "conversation"


def wait_for(client: OpenAI, response_id: str, states: tuple[str, ...]) -> openai.types.responses.Response:
    deadline = time.monotonic() + 20
    while True:
        response = client.responses.retrieve(response_id)
        if response.status in states:
            return response
        assert time.monotonic() < deadline, response.status
        time.sleep(0.02)


def test_a_background_response_is_polled_to_its_end(client: OpenAI) -> None:
    queued = client.responses.create(model=MODEL, input="hi", background=True)
    assert queued.status == "queued" and queued.background
    done = wait_for(client, queued.id, ("completed", "failed", "incomplete", "cancelled"))
    assert done.status == "completed"
    assert done.output_text


def test_a_background_stream_resumes_after_a_sequence_number(client: OpenAI) -> None:
    stream = client.responses.create(model=MODEL, input="stream it", background=True, stream=True)
    first = list(stream)
    assert first[0].type == "response.created" and first[0].response.status == "queued"
    assert first[-1].type == "response.completed"
    resumed = list(client.responses.retrieve(first[0].response.id, stream=True, starting_after=2))
    assert [event.sequence_number for event in resumed] == [e.sequence_number for e in first[3:]]
    assert resumed[-1].type == "response.completed"


def test_a_running_background_response_is_cancelled(client: OpenAI) -> None:
    # On `flagship` (65 tokens/s) 3,000 tokens take ~46 s: the cancel always lands while it
    # runs, however loaded the machine (at the default model's speed it raced the response).
    queued = client.responses.create(
        model="flagship", input="a long story", background=True, metadata={"sim_output_tokens": "3000"}
    )
    cancelled = client.responses.cancel(queued.id)
    assert cancelled.status == "cancelled"
    assert client.responses.retrieve(queued.id).status == "cancelled"
    assert client.responses.cancel(queued.id).status == "cancelled"


def test_context_management_compacts_past_its_threshold(client: OpenAI) -> None:
    first = client.responses.create(model=MODEL, input="why does the build fail?", tools=[TOOL])
    call = next(item for item in first.output if item.type == "function_call")
    compacted = client.responses.create(
        model=MODEL,
        previous_response_id=first.id,
        tools=[TOOL],
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "error\n" * 3000}],
        context_management=[{"type": "compaction", "compact_threshold": 1000}],
    )
    assert compacted.output[0].type == "compaction"
    assert compacted.output[0].encrypted_content
    assert compacted.usage is not None and compacted.usage.input_tokens < 1000


def test_an_unknown_parameter_is_refused_by_name(client: OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model=MODEL, input="hi", extra_body={"previous_responce_id": "resp_x"})
    assert refused.value.code == "unknown_parameter"
    assert refused.value.param == "previous_responce_id"
