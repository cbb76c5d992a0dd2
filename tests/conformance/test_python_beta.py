"""openai-python's beta WebSocket client (`client.beta.responses.connect()`), unmodified, against
a real tether-server: the multi-agent beta's `response.inject` and `response.steer`.

Every event is parsed by the SDK and validated strictly against the beta model class the SDK
picked for it (the SDK itself parses WebSocket events without validation).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from openai import AsyncOpenAI

from conftest import MODEL, TIMEOUT

TERMINAL = {"response.completed", "response.failed", "response.incomplete"}
MULTI_AGENT = {"OpenAI-Beta": "responses_multi_agent=v1"}
#: A simulated model slow enough to steer while it streams (65 tokens/s, 0.4 s to first token).
SLOW_MODEL = "flagship"

LOOKUP_TOOL: dict[str, Any] = {
    "type": "function",
    "name": "lookup",
    "description": "Looks a word up.",
    "parameters": {
        "type": "object",
        "properties": {"word": {"type": "string"}},
        "required": ["word"],
        "additionalProperties": False,
    },
    "strict": True,
}


async def recv(connection: Any) -> Any:
    """One server event, parsed by the SDK, then validated strictly against its model class."""
    try:
        data = await asyncio.wait_for(connection.recv_bytes(), TIMEOUT)
    except asyncio.TimeoutError:
        raise AssertionError(f"no WebSocket event within {TIMEOUT} s") from None
    event = connection.parse_event(data)
    type(event).model_validate(json.loads(data))  # raises pydantic.ValidationError naming the field
    return event


async def until(connection: Any, accept: Any) -> list[Any]:
    """Events up to and including the first for which `accept(event)` holds."""
    events: list[Any] = []
    while True:
        event = await recv(connection)
        events.append(event)
        assert event.type != "error", f"unexpected error frame: {event}"
        if accept(event):
            return events


def terminal(event: Any) -> bool:
    return event.type in TERMINAL


def output_text(response: Any) -> str:
    return "".join(
        part.text
        for item in response.output
        if item.type == "message"
        for part in item.content
        if part.type == "output_text"
    )


def test_inject_resumes_the_waiting_response(async_client: AsyncOpenAI) -> None:
    async def scenario() -> None:
        async with async_client.beta.responses.connect(extra_headers=MULTI_AGENT) as connection:
            await connection.send(
                {
                    "type": "response.create",
                    "model": MODEL,
                    "input": "define tether",
                    "tools": [LOOKUP_TOOL],
                    "store": False,
                    "multi_agent": {"enabled": True},
                }
            )
            waiting = await until(
                connection,
                lambda e: e.type == "response.output_item.done" and e.item.type == "function_call",
            )
            response_id = waiting[0].response.id
            call = waiting[-1].item
            await connection.send(
                {
                    "type": "response.inject",
                    "response_id": response_id,
                    "input": [{"type": "function_call_output", "call_id": call.call_id, "output": "a rope"}],
                }
            )
            resumed = await until(connection, terminal)
            assert resumed[0].type == "response.inject.created", [e.type for e in resumed]
            assert resumed[0].response_id == response_id
            completed = resumed[-1]
            assert completed.type == "response.completed", completed
            assert completed.response.id == response_id
            assert "a rope" in output_text(completed.response)
            numbers = [e.sequence_number for e in waiting + resumed]
            assert numbers == list(range(len(numbers))), numbers

            # Too late: handed back, to resend with response.create + previous_response_id.
            late = [{"type": "function_call_output", "call_id": call.call_id, "output": "again"}]
            await connection.send({"type": "response.inject", "response_id": response_id, "input": late})
            failed = await recv(connection)
            assert failed.type == "response.inject.failed", failed
            assert failed.error.code == "response_already_completed"
            assert failed.response_id == response_id
            assert [item.call_id for item in failed.input] == [call.call_id]

            await connection.send({"type": "response.inject", "response_id": "resp_unknown", "input": late})
            failed = await recv(connection)
            assert failed.error.code == "response_not_found"

    asyncio.run(scenario())


def test_steer_ends_the_response_and_a_successor_takes_the_input(async_client: AsyncOpenAI) -> None:
    async def scenario() -> None:
        async with async_client.beta.responses.connect() as connection:
            await connection.send(
                {"type": "response.create", "model": SLOW_MODEL, "input": "write about dogs", "store": False}
            )
            started = await until(connection, lambda e: e.type == "response.output_text.delta")
            response_id = started[0].response.id
            await connection.send(
                {"type": "response.steer", "previous_response_id": response_id, "input": "make it about a cat"}
            )
            rest = await until(connection, terminal)
            accepted = [e for e in rest if e.type == "response.steer.accepted"]
            assert len(accepted) == 1, [e.type for e in rest]
            assert accepted[0].steer.previous_response_id == response_id
            ended = rest[-1]
            assert ended.type == "response.incomplete", ended.type
            assert ended.response.incomplete_details.reason == "steered"

            successor = await until(connection, terminal)
            created = successor[0]
            assert created.type == "response.created"
            assert created.response.previous_response_id == response_id
            assert created.response.model == SLOW_MODEL
            assert successor[-1].type == "response.completed"
            assert '"make it about a cat"' in output_text(successor[-1].response)

    asyncio.run(scenario())


def test_a_steer_waits_for_the_tool_outputs(async_client: AsyncOpenAI) -> None:
    async def scenario() -> None:
        async with async_client.beta.responses.connect() as connection:
            create = {
                "type": "response.create",
                "model": SLOW_MODEL,
                "input": "define tether",
                "tools": [LOOKUP_TOOL],
                "store": False,
            }
            await connection.send(create)
            started = await until(
                connection,
                lambda e: e.type == "response.output_item.added" and e.item.type == "function_call",
            )
            response_id = started[0].response.id
            await connection.send(
                {"type": "response.steer", "previous_response_id": response_id, "input": "about a cat please"}
            )
            rest = await until(connection, terminal)
            assert "response.steer.accepted" in [e.type for e in rest]
            assert rest[-1].type == "response.completed"
            pending = await recv(connection)
            assert pending.type == "response.steer.pending", pending
            assert pending.reason == "waiting_for_required_input"
            [stub] = pending.required_input
            assert stub.type == "function_call_output" and stub.name == "lookup"

            # Fill the stub; the queued steer is prepended to this request's input.
            await connection.send(
                {
                    **create,
                    "previous_response_id": response_id,
                    "input": [{"type": "function_call_output", "call_id": stub.call_id, "output": "found"}],
                }
            )
            answer = await until(connection, terminal)
            text = output_text(answer[-1].response)
            assert '"about a cat please"' in text and '"found"' in text, text

            # Steering a completed response: handed back.
            await connection.send(
                {"type": "response.steer", "previous_response_id": response_id, "input": "too late"}
            )
            failed = await recv(connection)
            assert failed.type == "response.steer.failed"
            assert failed.error.code == "response_already_completed"
            assert failed.steer.input == "too late"

    asyncio.run(scenario())
