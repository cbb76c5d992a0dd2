"""The official openai-python SDK, unmodified, against a real tether-server.

HTTP tests use the sync `OpenAI` client with `_strict_response_validation=True`, so every field
the server returns must validate against the SDK's pydantic models. WebSocket-mode tests use
`AsyncOpenAI(...).responses.connect()` so that every receive can be bounded with a timeout (the
sync connection's `recv()` takes none); the SDK parses WebSocket events without validation, so
each frame is additionally validated strictly against the model class the SDK picked for it.
"""

from __future__ import annotations

import json
import asyncio
from typing import Any

import openai
import pytest
from openai import AsyncOpenAI, OpenAI
from openai.types.responses import Response

from conftest import MODEL, TIMEOUT, Metrics

TERMINAL = {"response.completed", "response.failed", "response.incomplete"}

TEXT_SEQUENCE_HEAD = [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
]
TEXT_SEQUENCE_TAIL = [
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
]

WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "name": "get_weather",
    "description": "Current weather for a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
        "required": ["city", "unit"],
        "additionalProperties": False,
    },
    "strict": True,
}


def assert_text_sequence(types: list[str]) -> None:
    """The full event sequence of a one-message text answer (docs/protocol.md §3)."""
    head, tail = TEXT_SEQUENCE_HEAD, TEXT_SEQUENCE_TAIL
    middle = types[len(head) : len(types) - len(tail)]
    ok = (
        types[: len(head)] == head
        and types[len(types) - len(tail) :] == tail
        and len(middle) >= 1
        and all(t == "response.output_text.delta" for t in middle)
    )
    assert ok, f"unexpected event sequence for a text answer: {types}"


def assert_sequence_numbers(numbers: list[int]) -> None:
    assert numbers and numbers[0] == 0, f"sequence_number must start at 0: {numbers}"
    assert all(b > a for a, b in zip(numbers, numbers[1:])), f"sequence_number must increase: {numbers}"


# --- HTTP -----------------------------------------------------------------------------------------


def test_http_create_non_streaming(client: OpenAI) -> None:
    response = client.responses.create(model=MODEL, input="hi")
    assert response.status == "completed", response
    assert response.object == "response"
    assert response.id.startswith("resp_"), response.id
    assert "hi" in response.output_text, f"output_text does not quote the input: {response.output_text!r}"
    assert response.usage is not None and response.usage.output_tokens > 0, response.usage


def test_http_sse_stream_events(client: OpenAI) -> None:
    stream = client.responses.create(model=MODEL, input="hello over SSE", stream=True)
    events = list(stream)
    types = [event.type for event in events]
    assert_text_sequence(types)
    assert_sequence_numbers([event.sequence_number for event in events])
    created, completed = events[0], events[-1]
    assert created.response.status == "in_progress" and created.response.output == []
    assert created.response.id == completed.response.id
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert "hello over SSE" in text, text
    assert completed.response.output_text == text


def test_http_stream_helper_final_response(client: OpenAI) -> None:
    with client.responses.stream(model=MODEL, input="streamed via helper") as stream:
        deltas = [event.delta for event in stream if event.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert final.status == "completed"
    assert "streamed via helper" in final.output_text, final.output_text
    assert "".join(deltas) == final.output_text


def test_http_retrieve_input_items_delete(client: OpenAI) -> None:
    created = client.responses.create(model=MODEL, input="keep this one", store=True)
    fetched = client.responses.retrieve(created.id)
    assert fetched.id == created.id
    assert fetched.status == "completed"
    assert fetched.output_text == created.output_text

    items = client.responses.input_items.list(created.id)
    texts = [
        part.text
        for item in items.data
        if item.type == "message"
        for part in item.content
        if part.type == "input_text"
    ]
    assert texts == ["keep this one"], f"input_items: {items.data}"

    assert client.responses.delete(created.id) is None
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(created.id)


def test_http_retrieve_unknown_is_404(client: OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as raised:
        client.responses.retrieve("resp_doesnotexist")
    assert raised.value.status_code == 404


def test_http_models_list(client: OpenAI) -> None:
    models = list(client.models.list())
    assert models, "GET /v1/models returned no models"
    assert all(model.object == "model" for model in models)


def test_http_tool_call_then_continuation(client: OpenAI) -> None:
    first = client.responses.create(model=MODEL, input="weather in Paris?", tools=[WEATHER_TOOL], store=True)
    calls = [item for item in first.output if item.type == "function_call"]
    assert len(calls) == 1, f"expected one function_call, got output {first.output}"
    call = calls[0]
    assert call.name == "get_weather"
    assert isinstance(json.loads(call.arguments), dict), call.arguments
    second = client.responses.create(
        model=MODEL,
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "sunny, 21 C"}],
        tools=[WEATHER_TOOL],
        store=True,
    )
    assert second.previous_response_id == first.id
    assert second.output_text, f"expected a text answer after the tool output, got {second.output}"


def test_http_continuation_of_unstored_response_fails(client: OpenAI) -> None:
    first = client.responses.create(model=MODEL, input="forget me", store=False)
    with pytest.raises(openai.BadRequestError) as raised:
        client.responses.create(model=MODEL, input="again", previous_response_id=first.id)
    assert raised.value.code == "previous_response_not_found", raised.value.body


# Every field Open Responses' ResponseResource requires (tests/conformance/open_responses/).
OPEN_RESPONSES_FIELDS = {
    "id", "object", "created_at", "completed_at", "status", "incomplete_details", "model",
    "previous_response_id", "instructions", "output", "error", "tools", "tool_choice", "truncation",
    "parallel_tool_calls", "text", "top_p", "presence_penalty", "frequency_penalty", "top_logprobs",
    "temperature", "reasoning", "usage", "max_output_tokens", "max_tool_calls", "store", "background",
    "service_tier", "metadata", "safety_identifier", "prompt_cache_key",
}


def test_http_response_carries_the_open_responses_fields(client: OpenAI) -> None:
    """The Open Responses shapes are what the strict SDK validates too."""
    bare_tool = {"type": "function", "name": "lookup", "parameters": {"type": "object"}}
    raw = client.responses.with_raw_response.create(
        model=MODEL,
        input="hi",
        tools=[WEATHER_TOOL, bare_tool],
        tool_choice="none",
        reasoning={"effort": "low"},
        text={"format": {"type": "json_schema", "name": "answer", "schema": {"type": "object"}}},
        store=False,
    )
    body = raw.http_response.json()
    missing = OPEN_RESPONSES_FIELDS - body.keys()
    assert not missing, f"missing {sorted(missing)}: {body}"
    assert body["tools"][1] == {**bare_tool, "description": None, "strict": None}, body["tools"]
    assert body["reasoning"] == {"effort": "low", "summary": None}, body["reasoning"]
    assert body["text"]["format"]["description"] is None and body["text"]["format"]["strict"] is False
    response = raw.parse()  # strict validation of the same body
    assert response.status == "completed"
    assert response.text is not None and response.text.format.type == "json_schema"


def test_http_sse_failure_raises_api_error_after_valid_events(client: OpenAI) -> None:
    """An `error` event nests the error (Open Responses, as OpenAI's API does) and keeps the flat
    fields; the SDK raises APIError on it, having validated every event before."""
    stream = client.responses.create(
        model=MODEL, input="fail mid-stream", stream=True, metadata={"sim_fail": "server_error"}
    )
    types: list[str] = []
    with pytest.raises(openai.APIError) as raised:
        for event in stream:
            types.append(event.type)
    assert "response.output_text.delta" in types, types
    assert raised.value.code == "server_error", raised.value.body
    assert "simulated" in raised.value.message, raised.value.message


def test_http_parameters_out_of_range_are_refused(client: OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        client.responses.create(model=MODEL, input="hi", temperature=2.5)
    assert raised.value.code == "decimal_above_max_value", raised.value.body
    assert raised.value.param == "temperature", raised.value.body
    with pytest.raises(openai.BadRequestError) as raised:
        client.responses.create(model=MODEL, input=[{"type": "no_such_item", "id": "x"}])  # type: ignore[list-item]
    assert raised.value.param == "input[0].type", raised.value.body


# --- WebSocket mode ------------------------------------------------------------------------------


async def recv_event(connection: Any) -> Any:
    """One server event, parsed by the SDK, then validated strictly against its model class."""
    try:
        data = await asyncio.wait_for(connection.recv_bytes(), TIMEOUT)
    except asyncio.TimeoutError:
        raise AssertionError(f"no WebSocket event within {TIMEOUT} s") from None
    event = connection.parse_event(data)
    raw = json.loads(data)
    type(event).model_validate(raw)  # raises pydantic.ValidationError naming the bad field
    return event


async def run_turn(connection: Any, **params: Any) -> list[Any]:
    """Sends one `response.create` and reads events up to the terminal event or an error frame."""
    await connection.response.create(model=MODEL, **params)
    events: list[Any] = []
    while True:
        event = await recv_event(connection)
        events.append(event)
        if event.type in TERMINAL:
            return events
        if event.type == "error" and event.sequence_number is None:
            return events  # an error before the response started: nothing follows


def completed(events: list[Any]) -> Response:
    types = [event.type for event in events]
    errors = [event.error for event in events if event.type == "error"]
    assert types and types[-1] == "response.completed", f"turn did not complete: {types}; errors: {errors}"
    assert types[0] == "response.created", types
    assert_sequence_numbers([event.sequence_number for event in events])
    return events[-1].response


def function_calls(events: list[Any]) -> list[Any]:
    """Function calls as read from `response.output_item.done` (what Codex builds its next turn from)."""
    return [
        event.item
        for event in events
        if event.type == "response.output_item.done" and event.item.type == "function_call"
    ]


def error_of(events: list[Any]) -> Any:
    errors = [event for event in events if event.type == "error"]
    assert errors, f"expected an error frame, got {[event.type for event in events]}"
    return errors[0]


def assert_lookup(metrics: Metrics, before: dict[str, float], result: str) -> None:
    after = metrics.cache_lookups()
    assert after[result] > before[result], (
        f'tether_cache_lookups_total{{result="{result}"}} did not increase: before {before}, after {after}'
    )


def test_ws_text_answer(async_client: AsyncOpenAI) -> None:
    async def scenario() -> None:
        async with async_client.responses.connect() as connection:
            events = await run_turn(connection, input="hello over WebSocket", store=False)
            response = completed(events)
            assert_text_sequence([event.type for event in events])
            assert "hello over WebSocket" in response.output_text, response.output_text

    asyncio.run(scenario())


def test_ws_tool_loop_chained(async_client: AsyncOpenAI, metrics: Metrics) -> None:
    async def loop() -> None:
        async with async_client.responses.connect() as connection:
            events = await run_turn(connection, input="weather in Paris?", tools=[WEATHER_TOOL], store=False)
            first = completed(events)
            calls = function_calls(events)
            assert len(calls) == 1, f"turn 1: expected one function_call item, got {first.output}"
            assert calls[0].name == "get_weather"
            assert isinstance(json.loads(calls[0].arguments), dict), calls[0].arguments

            # Turn 2: only the tool output, chained from the connection cache.
            before = metrics.cache_lookups()
            events = await run_turn(
                connection,
                previous_response_id=first.id,
                input=[{"type": "function_call_output", "call_id": calls[0].call_id, "output": "sunny, 21 C"}],
                tools=[WEATHER_TOOL],
                store=False,
            )
            second = completed(events)
            assert_lookup(metrics, before, "hit")
            assert second.previous_response_id == first.id
            assert second.output_text, f"turn 2: expected a text answer, got {second.output}"
            assert not function_calls(events), "turn 2: the model called a tool after a function_call_output"

            # Turn 3: a new user message; the model calls the tool again.
            before = metrics.cache_lookups()
            events = await run_turn(
                connection,
                previous_response_id=second.id,
                input=[{"role": "user", "content": "and in Rome?"}],
                tools=[WEATHER_TOOL],
                store=False,
            )
            third = completed(events)
            assert_lookup(metrics, before, "hit")
            calls = function_calls(events)
            assert len(calls) == 1, f"turn 3: expected one function_call item, got {third.output}"

            # Turn 4: answer that call too; the loop ends with text.
            before = metrics.cache_lookups()
            events = await run_turn(
                connection,
                previous_response_id=third.id,
                input=[{"type": "function_call_output", "call_id": calls[0].call_id, "output": "rainy, 14 C"}],
                tools=[WEATHER_TOOL],
                store=False,
            )
            fourth = completed(events)
            assert_lookup(metrics, before, "hit")
            assert fourth.output_text, f"turn 4: expected a text answer, got {fourth.output}"

    asyncio.run(loop())


def test_ws_warmup_then_chained_turn(async_client: AsyncOpenAI, metrics: Metrics) -> None:
    async def scenario() -> None:
        async with async_client.responses.connect() as connection:
            events = await run_turn(
                connection, instructions="You are terse.", tools=[WEATHER_TOOL], store=False, generate=False
            )
            warm = completed(events)
            assert warm.output == [], f"warm-up must sample nothing, got {warm.output}"
            assert warm.usage is not None and warm.usage.output_tokens == 0, warm.usage
            assert warm.id.startswith("resp_"), warm.id

            before = metrics.cache_lookups()
            events = await run_turn(
                connection,
                previous_response_id=warm.id,
                input=[{"role": "user", "content": "weather in Oslo?"}],
                tools=[WEATHER_TOOL],
                store=False,
            )
            chained = completed(events)
            assert_lookup(metrics, before, "hit")
            assert chained.previous_response_id == warm.id
            assert len(function_calls(events)) == 1, f"expected a function_call, got {chained.output}"

    asyncio.run(scenario())


def test_ws_reconnect_unstored_is_not_found(async_client: AsyncOpenAI, metrics: Metrics) -> None:
    async def scenario() -> None:
        async with async_client.responses.connect() as connection:
            first = completed(await run_turn(connection, input="not stored", store=False))

        before = metrics.cache_lookups()
        async with async_client.responses.connect() as connection:
            events = await run_turn(connection, previous_response_id=first.id, input="continue", store=False)
            error = error_of(events)
            assert error.status == 400, error
            assert error.error.code == "previous_response_not_found", error.error
            assert error.error.param == "previous_response_id", error.error
            assert_lookup(metrics, before, "miss")

            # The connection stays usable after the error frame.
            response = completed(await run_turn(connection, input="still there?", store=False))
            assert "still there?" in response.output_text

    asyncio.run(scenario())


def test_ws_reconnect_stored_hydrates_from_store(async_client: AsyncOpenAI, metrics: Metrics) -> None:
    async def scenario() -> None:
        async with async_client.responses.connect() as connection:
            first = completed(await run_turn(connection, input="remember the word kiwi", store=True))

        before = metrics.cache_lookups()
        async with async_client.responses.connect() as connection:
            events = await run_turn(connection, previous_response_id=first.id, input="what word?", store=True)
            second = completed(events)
            assert_lookup(metrics, before, "store")
            assert second.previous_response_id == first.id
            assert "what word?" in second.output_text, second.output_text

    asyncio.run(scenario())


def test_ws_sync_client_iteration(client: OpenAI, metrics: Metrics) -> None:
    """The documented sync usage: `with client.responses.connect() as c`, `for event in c`."""
    import threading

    with client.responses.connect() as connection:
        # The sync recv() takes no timeout: a watchdog closes the socket, which ends the loop.
        watchdog = threading.Timer(3 * TIMEOUT, connection.close)
        watchdog.start()
        try:
            types: list[str] = []
            responses: list[Response] = []
            connection.response.create(model=MODEL, input="sync one", store=False)
            for event in connection:
                types.append(event.type)
                if event.type == "error":
                    raise AssertionError(f"error frame: {event.error}")
                if event.type in TERMINAL:
                    responses.append(event.response)
                    if len(responses) == 2:
                        break
                    before = metrics.cache_lookups()
                    connection.response.create(
                        model=MODEL, input="sync two", previous_response_id=event.response.id, store=False
                    )
            assert len(responses) == 2, f"the connection ended early (timeout?); events: {types}"
            assert [r.status for r in responses] == ["completed", "completed"], types
            assert responses[1].previous_response_id == responses[0].id
            assert_lookup(metrics, before, "hit")
        finally:
            watchdog.cancel()


def test_ws_failure_events_validate_strictly(async_client: AsyncOpenAI) -> None:
    """A failed response over WebSocket: `error` (status, sequence_number, string code), then
    `response.failed` whose `error.code` is one the SDK knows; every frame validated strictly."""

    async def scenario() -> None:
        async with async_client.responses.connect() as connection:
            events = await run_turn(connection, input="fail", store=False, metadata={"sim_fail": "rate_limit"})
            types = [event.type for event in events]
            assert types[0] == "response.created" and types[-2:] == ["error", "response.failed"], types
            error = error_of(events)
            assert error.status == 429 and error.sequence_number is not None, error
            assert error.error.code == "rate_limit_exceeded" and error.error.type == "rate_limit_error", error
            assert events[-1].response.error.code == "rate_limit_exceeded", events[-1].response.error

    asyncio.run(scenario())


def test_ws_refusal_names_the_parameter_with_a_code(async_client: AsyncOpenAI) -> None:
    async def scenario() -> None:
        async with async_client.responses.connect() as connection:
            events = await run_turn(connection, input="hi", store=False, top_p=1.5)
            error = error_of(events)
            assert error.status == 400 and error.sequence_number is None, error
            assert error.error.param == "top_p" and error.error.code == "decimal_above_max_value", error
            # A frame that does not decode has a string code too (Open Responses' WebSocketErrorEvent).
            events = await run_turn(connection, input=5, store=False)
            error = error_of(events)
            assert error.status == 400 and isinstance(error.error.code, str), error
            completed(await run_turn(connection, input="still usable", store=False))

    asyncio.run(scenario())
