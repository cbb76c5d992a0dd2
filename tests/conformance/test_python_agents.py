"""The OpenAI Agents SDK for Python (`openai-agents`, pinned in requirements.txt) against Tether
over WebSocket mode, set up as its documentation shows a new user: `responses_websocket_session()`
pointed at the server's `/v1`, an agent with a function tool, streamed runs chained with
`previous_response_id` (the SDK's own example of the session), a handoff, an agent used as
another's tool, and a request the server refuses.

The model is the simulator's `echo-tools` generator: while the conversation does not end with a
tool output it calls the first tool it is offered, with arguments made from the tool's schema
(`{"city": "example"}` here), and then answers quoting what the tool returned. Every model call of
a session goes over its one WebSocket connection, which /metrics shows: WebSocket responses and
connections counted, nothing over HTTP, and the chained calls found in the connection's cache.

The SDK sends traces to OpenAI's own API unless told not to; a user of another server turns
tracing off, and so do these tests (no request may leave the machine).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agents import (
    Agent,
    ModelSettings,
    function_tool,
    responses_websocket_session,
    set_tracing_disabled,
)
from agents.models.openai_responses import ResponsesWebSocketError

from conftest import MODEL, TIMEOUT, Metrics

set_tracing_disabled(True)

#: What the simulator passes for a required string property.
CITY = "example"


def weather_agent(calls: list[str]) -> Agent[Any]:
    """An agent with one function tool, which records the cities it is asked about."""

    @function_tool
    def get_weather(city: str) -> str:
        """The current weather in a city.

        Args:
            city: The city's name.
        """
        calls.append(city)
        return f"sunny, 21 C in {city}"

    return Agent(
        name="Weather",
        instructions="Answer questions about the weather; look it up with get_weather.",
        model=MODEL,
        tools=[get_weather],
    )


class Counts:
    """The server's counters that say which transport carried what, read before and after."""

    SERIES = {
        "ws": 'tether_responses_total{transport="ws"}',
        "http": 'tether_responses_total{transport="http"}',
        "sse": 'tether_responses_total{transport="sse"}',
        "connections": "tether_ws_connections_total",
        "hit": 'tether_cache_lookups_total{result="hit"}',
        "store": 'tether_cache_lookups_total{result="store"}',
        "miss": 'tether_cache_lookups_total{result="miss"}',
    }

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self.before = self.read()

    def read(self) -> dict[str, float]:
        return {name: self.metrics.value(series) for name, series in self.SERIES.items()}

    def assert_moved(self, **expected: int) -> None:
        """That the counters named moved by as much, and the others not at all."""
        after = self.read()
        moved = {name: after[name] - self.before[name] for name in self.SERIES}
        assert moved == {name: expected.get(name, 0) for name in self.SERIES}, moved


def run(scenario: Any) -> Any:
    """Runs a scenario, bounded as a whole."""
    return asyncio.run(asyncio.wait_for(scenario, 3 * TIMEOUT))


def session(server_url: str) -> Any:
    return responses_websocket_session(api_key="test", base_url=f"{server_url}/v1")


def test_a_tool_calling_agent_runs_over_one_websocket(server_url: str, metrics: Metrics) -> None:
    calls: list[str] = []
    agent = weather_agent(calls)
    counts = Counts(metrics)

    async def scenario() -> Any:
        async with session(server_url) as ws:
            return await ws.run(agent, "What is the weather in Paris?")

    result = run(scenario())
    assert calls == [CITY], "the tool ran once, with the arguments the model gave"
    assert f"sunny, 21 C in {CITY}" in result.final_output, result.final_output
    assert len(result.raw_responses) == 2, "a tool call, then the answer"
    assert result.last_response_id == result.raw_responses[-1].response_id
    # The second call resends the conversation (no previous_response_id): no cache lookup.
    counts.assert_moved(ws=2, connections=1)


def test_chained_streamed_runs_continue_from_the_connection_cache(
    server_url: str, metrics: Metrics
) -> None:
    calls: list[str] = []
    agent = weather_agent(calls)
    counts = Counts(metrics)

    async def scenario() -> tuple[Any, list[Any], Any, list[Any]]:
        async with session(server_url) as ws:
            first = ws.run_streamed(agent, "What is the weather in Paris?")
            first_events = [event async for event in first.stream_events()]
            second = ws.run_streamed(
                agent,
                "And in Rome?",
                previous_response_id=first.last_response_id,
            )
            second_events = [event async for event in second.stream_events()]
            return first, first_events, second, second_events

    first, first_events, second, second_events = run(scenario())
    for result, events in ((first, first_events), (second, second_events)):
        deltas = [
            event.data.delta
            for event in events
            if event.type == "raw_response_event" and event.data.type == "response.output_text.delta"
        ]
        assert deltas, "the answer streamed as text deltas"
        assert "".join(deltas) == result.final_output
        items = [event.name for event in events if event.type == "run_item_stream_event"]
        assert items[:2] == ["tool_called", "tool_output"], items
        assert items[-1] == "message_output_created", items
    assert "Rome" in second.final_output, second.final_output
    assert calls == [CITY, CITY]
    # The second run sends only its new input, chained to the first run's last response, and
    # its tool output chained to its own first response: both found in the connection's cache.
    counts.assert_moved(ws=4, connections=1, hit=2)


def test_a_handoff_passes_the_conversation_to_another_agent(
    server_url: str, metrics: Metrics
) -> None:
    calls: list[str] = []
    weather = weather_agent(calls)
    triage = Agent(
        name="Triage",
        instructions="Hand weather questions to the weather agent.",
        model=MODEL,
        handoffs=[weather],
    )
    counts = Counts(metrics)

    async def scenario() -> Any:
        async with session(server_url) as ws:
            return await ws.run(triage, "What is the weather in Paris?")

    result = run(scenario())
    assert [item.type for item in result.new_items] == [
        "handoff_call_item",
        "handoff_output_item",
        "message_output_item",
    ]
    assert result.last_agent is weather
    # The conversation now ends with the handoff's output, so the simulator answers it rather
    # than calling the weather agent's tool.
    assert calls == []
    assert 'The tool returned "{"assistant": "Weather"}"' in result.final_output, result.final_output
    counts.assert_moved(ws=2, connections=1)


def test_an_agent_used_as_a_tool_runs_on_the_same_connection(
    server_url: str, metrics: Metrics
) -> None:
    calls: list[str] = []
    weather = weather_agent(calls)
    lead = Agent(
        name="Lead",
        instructions="Ask the weather agent about the weather.",
        model=MODEL,
        tools=[weather.as_tool(tool_name="ask_weather", tool_description="Ask the weather agent.")],
    )
    counts = Counts(metrics)

    async def scenario() -> Any:
        async with session(server_url) as ws:
            return await ws.run(lead, "What is the weather in Paris?", auto_previous_response_id=True)

    result = run(scenario())
    # The lead calls ask_weather with its schema's string ("example"); the weather agent, run
    # for it, calls get_weather; the lead answers with what it returned.
    assert calls == [CITY]
    assert f"sunny, 21 C in {CITY}" in result.final_output, result.final_output
    # Two calls of the lead (the second chained to the first: a cache hit) and two of the
    # weather agent, on the session's one connection.
    counts.assert_moved(ws=4, connections=1, hit=1)


def test_a_refused_request_raises_the_servers_error_and_the_session_goes_on(
    server_url: str, metrics: Metrics
) -> None:
    too_hot = Agent(
        name="Hot",
        instructions="Answer.",
        model=MODEL,
        model_settings=ModelSettings(temperature=9.0),
    )
    calm = Agent(name="Calm", instructions="Answer.", model=MODEL)

    async def scenario() -> tuple[ResponsesWebSocketError, Any]:
        async with session(server_url) as ws:
            with pytest.raises(ResponsesWebSocketError) as refused:
                await ws.run(too_hot, "hello")
            return refused.value, await ws.run(calm, "hello again")

    counts = Counts(metrics)
    refused, after = run(scenario())
    assert refused.code == "decimal_above_max_value", refused.payload
    assert refused.payload["status"] == 400
    assert refused.payload["error"]["param"] == "temperature"
    assert 'You said: "hello again"' in after.final_output
    # Both requests count as WebSocket responses, the refused one too. The SDK gives up the
    # connection a refusal arrived on; the next run opens another.
    counts.assert_moved(ws=2, connections=2)
