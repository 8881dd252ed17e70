"""Streaming through the openai engine: text, token counts, TTFT, and faults before and after the first token."""
from __future__ import annotations

import asyncio

import pytest

from tests.engine.helpers import make_engine, request, stream_once
from tests.support import Reply, ScriptedServer, fail_then, per_request

pytestmark = pytest.mark.usefixtures("http_transport")


def test_stream_concatenates_to_the_text_and_counts_tokens(scripted_server: ScriptedServer):
    text = "Let me think. Six sevens are forty-two, so \\boxed{42}."
    scripted_server.set_handler(Reply(text=text))
    deltas = stream_once(make_engine(scripted_server.base_url), request("What is 6 x 7?"))
    final = deltas[-1].final
    assert final is not None and all(d.final is None for d in deltas[:-1])
    assert "".join(d.text for d in deltas) == text == final.text
    assert final.finish_reason == "stop" and final.completion_tokens == 9 == sum(d.token_count for d in deltas)
    assert final.prompt_tokens == 5
    body = scripted_server.requests[-1]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_ttft_and_latency_follow_the_server_pacing(scripted_server: ScriptedServer):
    scripted_server.set_handler(Reply(text="one two three four five", delay_s=0.2, token_delay_s=0.05))
    final = stream_once(make_engine(scripted_server.base_url))[-1].final
    assert final is not None and final.ttft_s is not None
    assert 0.2 <= final.ttft_s < 1.2  # generous upper bound: the machine may be busy
    assert final.latency_s >= 0.2 + 4 * 0.05  # the last of five chunks comes four gaps after the first


def test_usage_decides_the_token_count_when_chunks_carry_several(scripted_server: ScriptedServer):
    # e.g. speculative decoding: each chunk carries 1-3 tokens, reported by per-chunk usage
    scripted_server.set_handler(Reply(chunks=["The ans", "wer is ", "42."], chunk_tokens=[3, 2, 1]))
    deltas = stream_once(make_engine(scripted_server.base_url, continuous_usage_stats=True))
    assert [d.token_count for d in deltas if d.text] == [3, 2, 1]
    assert deltas[-1].final.completion_tokens == 6 and deltas[-1].final.text == "The answer is 42."
    assert scripted_server.requests[-1]["stream_options"]["continuous_usage_stats"] is True
    # without per-chunk usage, the final usage still gives the true total
    deltas = stream_once(make_engine(scripted_server.base_url))
    assert deltas[-1].final.completion_tokens == 6


def test_length_finish_in_a_stream(scripted_server: ScriptedServer):
    scripted_server.set_handler(Reply(text="cut off here", finish_reason="length"))
    assert stream_once(make_engine(scripted_server.base_url))[-1].final.finish_reason == "length"


def test_faults_before_the_first_token_are_retried(scripted_server: ScriptedServer):
    scripted_server.set_handler(fail_then(2, 429, then=Reply(text="streamed fine")))
    deltas = stream_once(make_engine(scripted_server.base_url))
    assert "".join(d.text for d in deltas) == "streamed fine" and deltas[-1].final.attempts == 3
    scripted_server.set_handler(per_request(Reply(drop_connection=True), Reply(raw_body="data: {oops\n\n"),
                                            Reply(text="third time")))
    deltas = stream_once(make_engine(scripted_server.base_url), request("other"))
    assert deltas[-1].final.text == "third time" and deltas[-1].final.attempts == 3


def test_persistent_stream_fault_ends_with_an_error_completion(scripted_server: ScriptedServer):
    scripted_server.set_handler(Reply(status=503))
    deltas = stream_once(make_engine(scripted_server.base_url, max_retries=1))
    assert len(deltas) == 1 and deltas[0].text == ""
    final = deltas[0].final
    assert final.finish_reason == "error" and "HTTP 503" in final.error and final.attempts == 2


def test_a_stream_cut_after_tokens_is_an_error_not_a_retry(scripted_server: ScriptedServer):
    scripted_server.set_handler(Reply(text="a b c d e f", drop_after=3))
    deltas = stream_once(make_engine(scripted_server.base_url))
    final = deltas[-1].final
    assert "".join(d.text for d in deltas) == "a b c "  # what the caller already saw
    assert final.finish_reason == "error" and final.text == "" and final.attempts == 1
    assert final.error.startswith("connection") and final.extra["partial_text"] == "a b c "
    assert len(scripted_server.requests) == 1


def test_a_stream_without_finish_reason_is_malformed(scripted_server: ScriptedServer):
    chunk = '{"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": null}]}'
    scripted_server.set_handler(Reply(raw_body=f"data: {chunk}\n\ndata: [DONE]\n\n"))
    final = stream_once(make_engine(scripted_server.base_url))[-1].final
    assert final.finish_reason == "error" and "without a finish_reason" in final.error


def test_reasoning_tokens_count_for_ttft_but_not_for_text(scripted_server: ScriptedServer):
    scripted_server.set_handler(Reply(text="42", reasoning="six times seven"))
    deltas = stream_once(make_engine(scripted_server.base_url))
    final = deltas[-1].final
    assert final.text == "42" and final.extra["reasoning"] == "six times seven"
    assert final.completion_tokens == 4 and sum(d.token_count for d in deltas) == 4


def test_abandoning_a_stream_releases_its_connection(scripted_server: ScriptedServer):
    scripted_server.set_handler(Reply(text="one two three four", token_delay_s=0.05))
    engine = make_engine(scripted_server.base_url)

    async def run() -> tuple[str, int]:
        try:
            stream = engine.stream(request())
            first = await stream.__anext__()
            await stream.aclose()  # the caller stops reading after the first token
            return first.text, engine.pool.endpoints[0].in_flight
        finally:
            await engine.aclose()
    first, in_flight = asyncio.run(run())
    assert first == "one " and in_flight == 0


def test_a_stalled_stream_times_out_after_its_first_tokens(scripted_server: ScriptedServer):
    scripted_server.set_handler(Reply(text="a b c", token_delay_s=2.0))
    deltas = stream_once(make_engine(scripted_server.base_url, timeout_s=0.3))
    final = deltas[-1].final
    assert [d.text for d in deltas[:-1]] == ["a "]
    assert final.finish_reason == "error" and final.error.startswith("timeout") and final.attempts == 1
