"""The official openai-python SDK through Tether to a real upstream engine: llmsim (crates.io,
installed by `cargo xtask setup`), started as `tether-server --engine URL`'s upstream. A tool
loop runs over HTTP (strictly validated, JSON and SSE) and over WebSocket mode; llmsim, which
knows nothing of WebSocket mode, answers Chat Completions requests that Tether builds from its
connection cache.

Skipped, saying so, when llmsim is not installed (setup has not run) or when the suite runs
against a deployment (TETHER_BASE_URL), whose replicas serve the simulator.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any, Iterator

import pytest
from openai import AsyncOpenAI, OpenAI

from conftest import LLMSIM_BIN, TIMEOUT, Metrics, running_llmsim, running_server
from test_python_sdk import assert_lookup, completed, function_calls, run_turn

ANSWER = "Done: the command printed hi."
EXEC_TOOL: dict[str, Any] = {
    "type": "function",
    "name": "exec_command",
    "description": "Runs a shell command.",
    "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
}
SCRIPT = {
    "turns": [
        {"type": "tool_calls", "calls": [{"name": "exec_command", "arguments": {"cmd": "echo hi"}}]},
        {"type": "assistant", "text": ANSWER},
    ],
    "on_exhausted": "loop",
}


@pytest.fixture
def engine_url(tmp_path: Any) -> Iterator[str]:
    """Tether in front of a fresh llmsim (its script starts over for each test)."""
    if os.environ.get("TETHER_BASE_URL"):
        pytest.skip("against a deployment: its replicas serve the simulator, not an engine")
    if not os.access(LLMSIM_BIN, os.X_OK):
        pytest.skip(f"llmsim is not installed at {LLMSIM_BIN}: run `cargo xtask setup`")
    with running_llmsim(SCRIPT, str(tmp_path)) as upstream:
        with running_server(["--data-dir", str(tmp_path / "data"), "--engine", upstream]) as url:
            yield url


def clients(url: str) -> tuple[OpenAI, AsyncOpenAI]:
    options = dict(base_url=f"{url}/v1", api_key="test", timeout=TIMEOUT, max_retries=0)
    return (
        OpenAI(_strict_response_validation=True, **options),
        AsyncOpenAI(_strict_response_validation=True, **options),
    )


def test_engine_tool_loop_over_http(engine_url: str) -> None:
    client, _ = clients(engine_url)
    first = client.responses.create(model="gpt-5", input="Run `echo hi`.", tools=[EXEC_TOOL])
    assert first.status == "completed", first
    call = first.output[0]
    assert call.type == "function_call" and call.name == "exec_command", first.output
    assert json.loads(call.arguments) == {"cmd": "echo hi"}
    # The continuation streams (SSE), each event validated by the SDK.
    events = list(
        client.responses.create(
            model="gpt-5",
            previous_response_id=first.id,
            input=[{"type": "function_call_output", "call_id": call.call_id, "output": "hi\n"}],
            tools=[EXEC_TOOL],
            stream=True,
        )
    )
    final = events[-1]
    assert final.type == "response.completed", [event.type for event in events]
    assert final.response.output_text == ANSWER
    assert final.response.usage.output_tokens == 7, "llmsim's own count of the answer"


def test_engine_tool_loop_over_websocket(engine_url: str) -> None:
    _, async_client = clients(engine_url)
    metrics = Metrics([engine_url])

    async def loop() -> None:
        async with async_client.responses.connect() as connection:
            events = await run_turn(connection, input="Run `echo hi`.", tools=[EXEC_TOOL], store=False)
            first = completed(events)
            calls = function_calls(events)
            assert len(calls) == 1 and calls[0].name == "exec_command", first.output
            before = metrics.cache_lookups()
            events = await run_turn(
                connection,
                previous_response_id=first.id,
                input=[{"type": "function_call_output", "call_id": calls[0].call_id, "output": "hi\n"}],
                tools=[EXEC_TOOL],
                store=False,
            )
            second = completed(events)
            assert_lookup(metrics, before, "hit")
            assert second.output_text == ANSWER, second.output

    asyncio.run(loop())
