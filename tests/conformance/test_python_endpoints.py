"""openai-python, unmodified, on the HTTP endpoints beside `responses.create`: counting input
tokens, compacting a conversation and continuing from the compaction, cancelling.

`compact` is called on a non-strict client: its `output` holds the conversation's user messages,
which openai-python's output-item models (assistant messages only) reject in strict mode — as
they would the reference service's own answer.
"""

from __future__ import annotations

import openai
import pytest
from openai import OpenAI

from conftest import MODEL, TIMEOUT

TOOL = {
    "type": "function",
    "name": "shell",
    "description": "Runs a command.",
    "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
}


@pytest.fixture
def lenient(server_url: str) -> OpenAI:
    return OpenAI(base_url=f"{server_url}/v1", api_key="test", timeout=TIMEOUT, max_retries=0)


def test_input_tokens_count_matches_usage(client: OpenAI) -> None:
    params = {"model": MODEL, "input": "count these tokens", "instructions": "Be brief."}
    counted = client.responses.input_tokens.count(**params)
    assert counted.object == "response.input_tokens"
    created = client.responses.create(**params)
    assert created.usage is not None
    assert counted.input_tokens == created.usage.input_tokens


def test_compact_then_continue_from_the_compaction(client: OpenAI, lenient: OpenAI) -> None:
    first = client.responses.create(model=MODEL, input="why does the build fail?", tools=[TOOL])
    call = next(item for item in first.output if item.type == "function_call")
    log = "error[E0308]: mismatched types\n" * 200
    second = client.responses.create(
        model=MODEL,
        previous_response_id=first.id,
        tools=[TOOL],
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": log}],
    )
    assert second.usage is not None
    compacted = lenient.responses.compact(model=MODEL, previous_response_id=second.id)
    assert compacted.object == "response.compaction"
    kinds = [item.type for item in compacted.output]
    assert kinds == ["message", "compaction"], kinds
    assert compacted.output[-1].encrypted_content

    # The output goes back as input: a new chain, far smaller than the one it replaces.
    items = [item.model_dump(exclude_none=True) for item in compacted.output]
    continued = client.responses.create(
        model=MODEL, input=[*items, {"role": "user", "content": "so?"}], tools=[TOOL], tool_choice="none"
    )
    assert continued.status == "completed"
    assert continued.usage is not None
    assert continued.usage.input_tokens * 3 < second.usage.input_tokens


def test_cancel_is_refused_for_a_response_that_was_not_in_the_background(client: OpenAI) -> None:
    response = client.responses.create(model=MODEL, input="hi")
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.cancel(response.id)
    assert "background" in str(refused.value)
    with pytest.raises(openai.NotFoundError):
        client.responses.cancel("resp_does_not_exist")
