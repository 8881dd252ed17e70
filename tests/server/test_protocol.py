"""The OpenAI protocol over a scripted engine, through a real server and the official client."""
from __future__ import annotations

import json

import httpx
import openai
import pytest

from tests.server.conftest import fake_server
from tests.server.fake_engine import FakeEngine

MSG = [{"role": "user", "content": "name three greek letters"}]


def client(srv) -> openai.OpenAI:
    return openai.OpenAI(base_url=srv.base_url, api_key="unused", max_retries=0)


def test_chat_non_streaming_has_text_finish_reason_and_usage(server):
    r = client(server).chat.completions.create(model="fake", messages=MSG, temperature=0, max_tokens=5)
    assert r.object == "chat.completion" and r.model == "fake"
    choice = r.choices[0]
    assert choice.message.role == "assistant" and len(choice.message.content.split()) == 5
    assert choice.finish_reason == "length"
    prompt_ids = server.fake.tokenizer.encode(server.fake.tokenizer.render_chat(MSG))
    assert r.usage.prompt_tokens == len(prompt_ids)
    assert r.usage.completion_tokens == 5 and r.usage.total_tokens == len(prompt_ids) + 5


def test_stream_chunks_concatenate_to_the_non_streamed_text_and_usage_matches(server):
    c = client(server)
    full = c.chat.completions.create(model="fake", messages=MSG, temperature=0, max_tokens=20)
    chunks = list(c.chat.completions.create(model="fake", messages=MSG, temperature=0, max_tokens=20, stream=True,
                                            stream_options={"include_usage": True}))
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    assert text == full.choices[0].message.content
    finishes = [ch.choices[0].finish_reason for ch in chunks if ch.choices and ch.choices[0].finish_reason]
    assert finishes == [full.choices[0].finish_reason] == ["stop"]
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-1].usage.model_dump() == full.usage.model_dump()
    assert all(ch.usage is None for ch in chunks[:-1])


def test_stream_without_include_usage_sends_no_usage(server):
    chunks = list(client(server).chat.completions.create(model="fake", messages=MSG, max_tokens=3, stream=True))
    assert all(getattr(ch, "usage", None) is None for ch in chunks) and all(ch.choices for ch in chunks)


def test_n_choices_with_seed_are_reproducible_and_distinct(server):
    c = client(server)
    a = c.chat.completions.create(model="fake", messages=MSG, temperature=1.0, seed=7, n=3, max_tokens=6)
    b = c.chat.completions.create(model="fake", messages=MSG, temperature=1.0, seed=7, n=3, max_tokens=6)
    texts = [ch.message.content for ch in a.choices]
    assert [ch.index for ch in a.choices] == [0, 1, 2]
    assert texts == [ch.message.content for ch in b.choices]
    assert len(set(texts)) > 1
    assert a.usage.completion_tokens == 18


def test_streamed_n_choices_each_reassemble(server):
    c = client(server)
    full = c.chat.completions.create(model="fake", messages=MSG, temperature=1.0, seed=3, n=2, max_tokens=6)
    parts = {0: "", 1: ""}
    for ch in c.chat.completions.create(model="fake", messages=MSG, temperature=1.0, seed=3, n=2, max_tokens=6,
                                        stream=True):
        for choice in ch.choices:
            parts[choice.index] += choice.delta.content or ""
    assert [parts[0], parts[1]] == [ch.message.content for ch in full.choices]


def test_stop_string_cuts_the_text(server):
    c = client(server)
    full = c.chat.completions.create(model="fake", messages=MSG, temperature=0, max_tokens=8).choices[0].message.content
    word = full.split()[2]
    r = c.chat.completions.create(model="fake", messages=MSG, temperature=0, max_tokens=8, stop=[word])
    assert r.choices[0].message.content == full[:full.index(word)] and r.choices[0].finish_reason == "stop"


def test_logprobs_name_each_token(server):
    r = client(server).chat.completions.create(model="fake", messages=MSG, temperature=0, max_tokens=4, logprobs=True)
    content = r.choices[0].logprobs.content
    assert "".join(t.token for t in content) == r.choices[0].message.content
    assert all(t.logprob == -0.5 for t in content)


def test_text_completions_with_prompt_list_token_ids_and_n(server):
    c = client(server)
    r = c.completions.create(model="fake", prompt=["alpha beta", "gamma"], n=2, max_tokens=3, temperature=0)
    assert r.object == "text_completion"
    assert [ch.index for ch in r.choices] == [0, 1, 2, 3]
    assert r.choices[0].text == r.choices[1].text != r.choices[2].text
    assert r.usage.prompt_tokens == 3 and r.usage.completion_tokens == 12
    ids = server.fake.tokenizer.encode("alpha beta")
    by_ids = c.completions.create(model="fake", prompt=ids, max_tokens=3, temperature=0)
    assert by_ids.choices[0].text == r.choices[0].text
    streamed = "".join(ch.choices[0].text for ch in c.completions.create(
        model="fake", prompt="alpha beta", max_tokens=3, temperature=0, stream=True) if ch.choices)
    assert streamed == r.choices[0].text


def test_default_completion_max_tokens_is_16(server):
    with fake_server(FakeEngine(reply_words=40)) as srv:
        r = client(srv).completions.create(model="fake", prompt="alpha", temperature=0)
        assert r.usage.completion_tokens == 16 and r.choices[0].finish_reason == "length"


def test_models_health_and_metrics(server):
    c = client(server)
    assert [m.id for m in c.models.list().data] == ["fake"]
    assert httpx.get(server.root_url + "/health").json()["status"] == "ok"
    c.chat.completions.create(model="fake", messages=MSG, max_tokens=3)
    text = httpx.get(server.root_url + "/metrics").text
    from engine.server.metrics import parse_metrics
    m = parse_metrics(text)
    assert m["harness_generation_tokens_total"] == 3
    assert m["harness_time_to_first_token_seconds_count"] == 1
    assert m["harness_kv_blocks_used"] == 0 and m["harness_prefix_cache_hit_rate"] == pytest.approx(0.4)
    assert m["harness_spec_decode_drafted_tokens_total"] == 12 and m["harness_spec_decode_accepted_tokens_total"] == 9
    assert "# TYPE harness_time_per_output_token_seconds histogram" in text


def test_engine_failure_is_a_500_with_an_error_body_and_the_server_keeps_serving():
    with fake_server(FakeEngine(fail_on="explode")) as srv:
        r = httpx.post(srv.base_url + "/chat/completions",
                       json={"model": "fake", "messages": [{"role": "user", "content": "explode"}]})
        assert r.status_code == 500 and r.json()["error"]["message"] == "scripted failure"
        ok = client(srv).chat.completions.create(model="fake", messages=MSG, max_tokens=2)
        assert ok.choices[0].finish_reason == "length"


def test_response_format_reaches_the_engine_as_a_constraint():
    with fake_server() as srv:
        srv.fake.compile_response_format = lambda kind, schema: (lambda: ("constraint", kind, schema))
        schema = {"type": "object", "properties": {"a": {"type": "string"}}}
        client(srv).chat.completions.create(model="fake", messages=MSG, max_tokens=2, response_format={
            "type": "json_schema", "json_schema": {"name": "x", "schema": schema}})
        assert list(srv.fake.constraints.values()) == [("constraint", "json_schema", schema)]


def test_continuous_usage_stats_count_up_in_every_chunk(server):
    body = {"model": "fake", "messages": MSG, "max_tokens": 5, "temperature": 0, "stream": True,
            "stream_options": {"include_usage": True, "continuous_usage_stats": True}}
    with httpx.stream("POST", server.base_url + "/chat/completions", json=body) as r:
        events = [json.loads(line[6:]) for line in r.iter_lines()
                  if line.startswith("data: {")]
    counts = [e["usage"]["completion_tokens"] for e in events if e["choices"]]
    assert counts == sorted(counts) and counts[-1] == 5
    assert events[-1]["choices"] == [] and events[-1]["usage"]["completion_tokens"] == 5


def test_an_engine_failure_inside_a_stream_is_an_error_event_then_done():
    with fake_server(FakeEngine(fail_on="explode")) as srv:
        body = {"model": "fake", "messages": [{"role": "user", "content": "explode"}], "stream": True}
        with httpx.stream("POST", srv.base_url + "/chat/completions", json=body) as r:
            data = [line[6:] for line in r.iter_lines() if line.startswith("data: ")]
        assert data[-1] == "[DONE]"
        errors = [json.loads(d)["error"] for d in data[:-1] if "error" in json.loads(d)]
        assert errors and errors[0]["message"] == "scripted failure"
        finals = [json.loads(d)["choices"][0]["finish_reason"] for d in data[:-1]
                  if json.loads(d).get("choices") and json.loads(d)["choices"][0]["finish_reason"]]
        assert finals == ["error"]
