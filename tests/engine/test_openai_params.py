"""Request parameters that follow the model: reasoning models get max_completion_tokens and no temperature."""
from __future__ import annotations

import pytest

from engine import EngineError
from engine.openai.params import RequestParams, is_reasoning_model, rejected_parameter
from tests.engine.helpers import chat_once, make_engine, request, stream_once
from tests.support import Reply, ScriptedServer
from tests.support.reasoning_model import MAX_TOKENS_REJECTED, TEMPERATURE_REJECTED, reasoning_model


@pytest.mark.parametrize("model, reasoning", [
    ("o1", True), ("o1-mini", True), ("o3-2025-04-16", True), ("o4-mini", True), ("gpt-5", True),
    ("gpt-5-mini", True), ("gpt-5.1", True), ("openai/o3", True), ("gpt-4o-2024-08-06", False),
    ("gpt-4.1", False), ("Qwen/Qwen3-8B", False), ("foo3", False), ("smollm2-135m", False), ("o10", False),
])
def test_reasoning_model_names(model, reasoning):
    assert is_reasoning_model(model) is reasoning


def test_openai_messages_are_read_as_rename_or_drop():
    sent = {"max_tokens": 5, "temperature": 0}
    r = rejected_parameter(MAX_TOKENS_REJECTED, sent)
    assert (r.param, r.replacement) == ("max_tokens", "max_completion_tokens")
    r = rejected_parameter(TEMPERATURE_REJECTED, sent)
    assert (r.param, r.replacement) == ("temperature", None)
    assert rejected_parameter("maximum context length exceeded", sent) is None
    assert rejected_parameter("Unsupported parameter: 'n' is not supported", sent) is None  # not sent by us


def test_a_reasoning_model_gets_its_parameters_up_front():
    with ScriptedServer(reasoning_model(lambda body: "42"), model="o3-mini") as server:
        completion = chat_once(make_engine(server.base_url, model="o3-mini"), request(max_tokens=50, temperature=0.6))
        assert completion.text == "42" and len(server.requests) == 1
        body = server.requests[0]
    assert body["max_completion_tokens"] == 50
    assert not {"max_tokens", "temperature", "top_p"} & body.keys()


def test_a_400_naming_a_parameter_is_retried_once_renamed_then_remembered():
    # a model whose name gives no hint: the first request learns from OpenAI's 400s, later ones do not repeat it
    with ScriptedServer(reasoning_model(lambda body: "42"), model="house-reasoner") as server:
        engine = make_engine(server.base_url, model="house-reasoner", max_retries=0)
        assert chat_once(engine, request(max_tokens=50, temperature=0.0)).text == "42"
        first = len(server.requests)
        assert chat_once(engine, request(max_tokens=50, temperature=0.0)).text == "42"
        bodies = server.requests
    assert first == 3  # max_tokens rejected, then temperature rejected, then answered
    assert len(bodies) == 4 and bodies[-1]["max_completion_tokens"] == 50 and "temperature" not in bodies[-1]
    assert engine.describe()["request_params"]["adjusted_after_400"] == ["max_tokens -> max_completion_tokens",
                                                                         "temperature dropped"]


def test_streaming_learns_the_same_way():
    with ScriptedServer(reasoning_model(lambda body: "four two"), model="house-reasoner") as server:
        deltas = stream_once(make_engine(server.base_url, model="house-reasoner"), request(max_tokens=9))
    assert deltas[-1].final.text == "four two" and deltas[-1].final.error is None


def test_a_parameter_rejected_again_is_reported_with_the_flag():
    def rejects_both(body):  # a confused server: whichever name is sent, it asks for the other
        sent, other = ("max_tokens", "max_completion_tokens") if "max_tokens" in body else \
            ("max_completion_tokens", "max_tokens")
        return Reply(status=400, error_message=f"Unsupported parameter: '{sent}' is not supported with this model. "
                                               f"Use '{other}' instead.")

    with ScriptedServer(rejects_both, model="o3") as server:
        completion = chat_once(make_engine(server.base_url, model="o3", token_param="max_completion_tokens"))
        assert len(server.requests) == 2  # the named replacement is tried once
    assert completion.finish_reason == "error" and "--token-param" in completion.error
    assert "'max_tokens' is not supported" in completion.error and completion.error.count("Unsupported") == 1


def test_flags_override_the_model_rule(scripted_server: ScriptedServer):
    chat_once(make_engine(scripted_server.base_url, token_param="max_completion_tokens", send_temperature="no"),
              request(max_tokens=12, temperature=0.6, seed=3))
    body = scripted_server.requests[-1]
    assert body["max_completion_tokens"] == 12 and body["seed"] == 3
    assert not {"max_tokens", "temperature", "top_p"} & body.keys()
    with pytest.raises(EngineError, match="max_tokens, max_completion_tokens"):
        make_engine(scripted_server.base_url, token_param="max_output_tokens")


def test_only_parameters_it_manages_are_renamed_dropped_or_reported():
    params = RequestParams.for_model("gpt-4o")
    sent = {"max_tokens": 5, "temperature": 0, "response_format": {}, "reasoning_effort": "high"}
    assert params.adjust("Unsupported parameter: 'response_format' is not supported.", sent) == "other"
    assert params.adjust("Unsupported parameter: 'reasoning_effort' is not supported.", sent) == "reported"
    assert params.adjust("Unsupported parameter: 'seed'.", {**sent, "seed": 1}) == "retry" and "seed" in params.dropped
    assert params.changes == ["seed dropped"]


def test_request_params_apply_is_deterministic():
    params = RequestParams.for_model("gpt-4o")
    body = params.apply({}, 10, {"temperature": 0.0, "top_p": 1.0, "seed": None})
    assert body == {"max_tokens": 10, "temperature": 0.0, "top_p": 1.0}
