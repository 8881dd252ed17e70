"""The openai engine against a real local server: replies, sampling fields, retries and faults."""
from __future__ import annotations

import time

import pytest

from engine import EngineError, EngineOptions, create_engine
from tests.engine.helpers import chat_once, make_engine, request
from tests.support import Reply, ScriptedServer, fail_then, per_request

pytestmark = pytest.mark.usefixtures("http_transport")


def test_plain_success_maps_text_usage_and_latency(scripted_server: ScriptedServer):
    scripted_server.set_handler(Reply(text="The answer is \\boxed{42}."))
    completion = chat_once(make_engine(scripted_server.base_url), request("What is six times seven?"))
    assert completion.text == "The answer is \\boxed{42}."
    assert completion.finish_reason == "stop" and completion.error is None
    # the server counts word-ish tokens: 5 in the prompt, 4 in the answer
    assert (completion.prompt_tokens, completion.completion_tokens) == (5, 4)
    assert completion.attempts == 1 and completion.latency_s > 0


def test_sampling_params_reach_the_server(scripted_server: ScriptedServer):
    chat_once(make_engine(scripted_server.base_url),
              request(max_tokens=77, temperature=0.6, top_p=0.95, seed=7, stop=("</answer>",)))
    body = scripted_server.requests[-1]
    assert body["model"] == "test-model" and body["messages"] == [{"role": "user", "content": "What is 6 x 7?"}]
    assert (body["max_tokens"], body["temperature"], body["top_p"], body["seed"]) == (77, 0.6, 0.95, 7)
    assert body["stop"] == ["</answer>"]
    assert "top_k" not in body and "logprobs" not in body  # OpenAI itself rejects fields it does not know


def test_top_k_and_logprobs_only_when_asked(scripted_server: ScriptedServer):
    scripted_server.set_handler(Reply(text="a b c", logprobs=[-0.1, -0.2, -0.3]))
    completion = chat_once(make_engine(scripted_server.base_url), request(top_k=20, logprobs=True))
    body = scripted_server.requests[-1]
    assert body["top_k"] == 20 and body["logprobs"] is True
    assert completion.logprobs == [-0.1, -0.2, -0.3]


def test_length_finish_and_reported_usage(scripted_server: ScriptedServer):
    scripted_server.set_handler(Reply(text="partial", finish_reason="length", prompt_tokens=11,
                                      completion_tokens=7))
    completion = chat_once(make_engine(scripted_server.base_url))
    assert completion.finish_reason == "length" and completion.text == "partial"
    assert (completion.prompt_tokens, completion.completion_tokens) == (11, 7)


def test_vendor_finish_reason_is_normalised_and_kept(scripted_server: ScriptedServer):
    scripted_server.set_handler(Reply(text="x", finish_reason="max_tokens"))
    assert chat_once(make_engine(scripted_server.base_url)).finish_reason == "length"
    scripted_server.set_handler(Reply(text="x", finish_reason="eos"))
    completion = chat_once(make_engine(scripted_server.base_url))
    assert completion.finish_reason == "stop" and completion.extra["finish_reason_raw"] == "eos"


def test_reasoning_content_is_kept_apart_from_the_answer(scripted_server: ScriptedServer):
    scripted_server.set_handler(Reply(text="42", reasoning="six sevens are forty-two"))
    completion = chat_once(make_engine(scripted_server.base_url))
    assert completion.text == "42" and completion.extra["reasoning"] == "six sevens are forty-two"


def test_429_twice_then_success(scripted_server: ScriptedServer):
    scripted_server.set_handler(fail_then(2, 429, then=Reply(text="finally")))
    completion = chat_once(make_engine(scripted_server.base_url, max_retries=5))
    assert completion.text == "finally" and completion.finish_reason == "stop"
    assert completion.attempts == 3 and len(scripted_server.requests) == 3


def test_retry_after_is_honoured_and_capped(scripted_server: ScriptedServer):
    scripted_server.set_handler(fail_then(1, 429, retry_after=0.4))
    completion = chat_once(make_engine(scripted_server.base_url))
    assert completion.text == "ok" and completion.latency_s >= 0.4
    # a server asking for 30 s does not stall a run beyond the configured cap
    scripted_server.set_handler(fail_then(1, 503, retry_after=30))
    started = time.perf_counter()
    completion = chat_once(make_engine(scripted_server.base_url, max_retry_delay_s=0.05), request("other"))
    assert completion.text == "ok" and completion.attempts == 2 and time.perf_counter() - started < 5


def test_persistent_500_becomes_an_error_completion(scripted_server: ScriptedServer):
    scripted_server.set_handler(Reply(status=500, error_message="CUDA out of memory"))
    completion = chat_once(make_engine(scripted_server.base_url, max_retries=2))
    assert completion.finish_reason == "error" and completion.text == ""
    assert completion.attempts == 3 and len(scripted_server.requests) == 3
    assert "server_error" in completion.error and "HTTP 500" in completion.error
    assert "CUDA out of memory" in completion.error and "3 attempt" in completion.error


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_client_errors_are_not_retried(scripted_server: ScriptedServer, status: int):
    scripted_server.set_handler(Reply(status=status, error_message="max_tokens is too large"))
    completion = chat_once(make_engine(scripted_server.base_url, max_retries=3))
    assert completion.finish_reason == "error" and completion.attempts == 1
    assert f"HTTP {status}" in completion.error and "not retried" in completion.error
    assert len(scripted_server.requests) == 1


@pytest.mark.parametrize("status", [408, 409, 502, 503, 504])
def test_transient_statuses_are_retried(scripted_server: ScriptedServer, status: int):
    scripted_server.set_handler(fail_then(1, status))
    completion = chat_once(make_engine(scripted_server.base_url))
    assert completion.text == "ok" and completion.attempts == 2


def test_timeout_is_retried_then_reported(scripted_server: ScriptedServer):
    scripted_server.set_handler(per_request(Reply(delay_s=3.0), Reply(text="second try")))
    completion = chat_once(make_engine(scripted_server.base_url, timeout_s=0.3))
    assert completion.text == "second try" and completion.attempts == 2
    scripted_server.set_handler(Reply(delay_s=3.0))
    completion = chat_once(make_engine(scripted_server.base_url, timeout_s=0.3, max_retries=1))
    assert completion.finish_reason == "error" and completion.text == ""
    assert completion.error.startswith("timeout") and completion.attempts == 2
    assert 0.6 <= completion.latency_s < 2.5  # two 0.3 s timeouts, well before the 3 s reply


@pytest.mark.parametrize("raw_body, why", [
    ("{not json", "not JSON"),
    ('{"id": "x", "object": "chat.completion"}', "no choices"),
    ('{"choices": []}', "no choices"),
    ('{"choices": [{"index": 0, "finish_reason": "stop"}]}', "no message"),
    ('[1, 2, 3]', "not a JSON object"),
])
def test_malformed_replies_are_retried_then_reported(scripted_server: ScriptedServer, raw_body: str, why: str):
    scripted_server.set_handler(Reply(raw_body=raw_body))
    completion = chat_once(make_engine(scripted_server.base_url, max_retries=1))
    assert completion.finish_reason == "error" and completion.text == "" and completion.attempts == 2
    assert completion.error.startswith("malformed") and why in completion.error


def test_malformed_reply_then_good_one(scripted_server: ScriptedServer):
    scripted_server.set_handler(per_request(Reply(raw_body="<html>502 Bad Gateway</html>"), Reply(text="good")))
    completion = chat_once(make_engine(scripted_server.base_url))
    assert completion.text == "good" and completion.attempts == 2


def test_error_object_with_status_200_is_a_server_error(scripted_server: ScriptedServer):
    scripted_server.set_handler(per_request(Reply(raw_body='{"error": {"message": "engine dead"}}'), Reply("ok")))
    assert chat_once(make_engine(scripted_server.base_url)).attempts == 2
    scripted_server.set_handler(Reply(raw_body='{"error": {"message": "engine dead"}}'))
    completion = chat_once(make_engine(scripted_server.base_url, max_retries=0), request("again"))
    assert completion.error.startswith("server_error") and "engine dead" in completion.error


def test_aborted_generation_is_retried(scripted_server: ScriptedServer):
    scripted_server.set_handler(per_request(Reply(text="half", finish_reason="abort"), Reply(text="whole")))
    completion = chat_once(make_engine(scripted_server.base_url))
    assert completion.text == "whole" and completion.attempts == 2


def test_dropped_connection_is_retried_then_reported(scripted_server: ScriptedServer):
    scripted_server.set_handler(per_request(Reply(drop_connection=True), Reply(text="reconnected")))
    completion = chat_once(make_engine(scripted_server.base_url))
    assert completion.text == "reconnected" and completion.attempts == 2
    scripted_server.set_handler(Reply(drop_connection=True))
    completion = chat_once(make_engine(scripted_server.base_url, max_retries=2), request("x"))
    assert completion.finish_reason == "error" and completion.error.startswith("connection")
    assert completion.attempts == 3


def test_options_without_model_or_url_are_refused():
    with pytest.raises(EngineError, match="--model"):
        create_engine("openai", EngineOptions(base_urls=["http://127.0.0.1:1/v1"]))
    with pytest.raises(EngineError, match="--base-url"):
        create_engine("openai", EngineOptions(model="m"))
    with pytest.raises(EngineError, match="not an http"):
        create_engine("openai", EngineOptions(model="m", base_urls=["127.0.0.1:8000"]))
    with pytest.raises(EngineError, match="max_retries"):
        create_engine("openai", EngineOptions(model="m", base_urls=["http://h/v1"], max_retries=-1))


def test_bare_host_url_gets_v1(scripted_server: ScriptedServer):
    engine = make_engine(scripted_server.url + "/")
    assert engine.describe()["base_urls"] == [scripted_server.base_url]
    assert chat_once(engine).text == "ok"
