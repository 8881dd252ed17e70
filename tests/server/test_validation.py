"""Every bad request gets a 400 with an OpenAI-style body naming the field; the server keeps serving."""
from __future__ import annotations

import socket

import httpx
import pytest

from tests.server.conftest import fake_server
from tests.server.fake_engine import FakeEngine

OK_MSG = [{"role": "user", "content": "hello"}]
LONG = " ".join(["word"] * 80)  # the fake engine's context is 64 tokens


@pytest.fixture(scope="module")
def srv():
    with fake_server(FakeEngine(), max_body_bytes=64 * 1024) as s:
        yield s


def chat(**overrides):
    body = {"model": "fake", "messages": OK_MSG, "max_tokens": 4}
    body.update(overrides)
    return body


CASES = [
    ("unknown model", "/chat/completions", chat(model="gpt-9"), "model"),
    ("messages missing", "/chat/completions", {"model": "fake"}, "messages"),
    ("messages empty", "/chat/completions", chat(messages=[]), "messages"),
    ("messages not a list", "/chat/completions", chat(messages="hello"), "messages"),
    ("message not an object", "/chat/completions", chat(messages=["hello"]), "messages[0]"),
    ("bad role", "/chat/completions", chat(messages=[{"role": "wizard", "content": "x"}]), "messages[0].role"),
    ("content missing", "/chat/completions", chat(messages=[{"role": "user"}]), "messages[0]"),
    ("content wrong type", "/chat/completions", chat(messages=[{"role": "user", "content": 5}]), "messages[0].content"),
    ("image to a text model", "/chat/completions",
     chat(messages=[{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]}]),
     "messages[0].content"),
    ("prompt longer than the context", "/chat/completions", chat(messages=[{"role": "user", "content": LONG}]), "messages"),
    ("prompt + max_tokens over the context", "/chat/completions", chat(max_tokens=62), "max_tokens"),
    ("temperature too high", "/chat/completions", chat(temperature=2.5), "temperature"),
    ("temperature negative", "/chat/completions", chat(temperature=-0.1), "temperature"),
    ("temperature not a number", "/chat/completions", chat(temperature="hot"), "temperature"),
    ("top_p zero", "/chat/completions", chat(top_p=0), "top_p"),
    ("top_p above one", "/chat/completions", chat(top_p=1.5), "top_p"),
    ("top_k below -1", "/chat/completions", chat(top_k=-5), "top_k"),
    ("max_tokens zero", "/chat/completions", chat(max_tokens=0), "max_tokens"),
    ("n zero", "/chat/completions", chat(n=0), "n"),
    ("n too large", "/chat/completions", chat(n=1000), "n"),
    ("seed not an integer", "/chat/completions", chat(seed="x"), "seed"),
    ("too many stops", "/chat/completions", chat(stop=[str(i) for i in range(40)]), "stop"),
    ("top_logprobs unsupported", "/chat/completions", chat(logprobs=True, top_logprobs=5), "top_logprobs"),
    ("penalty unsupported", "/chat/completions", chat(presence_penalty=1.0), "presence_penalty"),
    ("unknown response_format", "/chat/completions", chat(response_format={"type": "yaml"}), "response_format.type"),
    ("json_schema without schema", "/chat/completions", chat(response_format={"type": "json_schema"}), "response_format"),
    ("completion prompt missing", "/completions", {"model": "fake"}, "prompt"),
    ("completion prompt empty list", "/completions", {"model": "fake", "prompt": []}, "prompt"),
    ("completion prompt too long", "/completions", {"model": "fake", "prompt": LONG}, "prompt"),
    ("completion token ids out of vocabulary", "/completions", {"model": "fake", "prompt": [1, -3]}, "prompt"),
    ("completion logprobs > 1", "/completions", {"model": "fake", "prompt": "a", "logprobs": 5}, "logprobs"),
    ("completion echo", "/completions", {"model": "fake", "prompt": "a", "echo": True}, "echo"),
    ("completion unknown model", "/completions", {"model": "nope", "prompt": "a"}, "model"),
]


@pytest.mark.parametrize("name,path,body,param", CASES, ids=[c[0] for c in CASES])
def test_bad_request_is_a_400_naming_the_field(srv, name, path, body, param):
    r = httpx.post(srv.base_url + path, json=body)
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["type"] == "invalid_request_error"
    assert err["param"] == param
    assert err["message"]


def test_invalid_json_and_non_object_bodies_are_400(srv):
    r = httpx.post(srv.base_url + "/chat/completions", content=b'{"model": "fake", "messages": [',
                   headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["param"] == "body"
    r = httpx.post(srv.base_url + "/chat/completions", json=[1, 2, 3])
    assert r.status_code == 400 and r.json()["error"]["type"] == "invalid_request_error"


def test_oversized_body_is_400_with_and_without_content_length(srv):
    big = chat(messages=[{"role": "user", "content": "x" * 100_000}])
    r = httpx.post(srv.base_url + "/chat/completions", json=big)
    assert r.status_code == 400 and r.json()["error"]["param"] == "body"

    def chunks():
        yield b'{"model": "fake", "messages": [{"role": "user", "content": "'
        for _ in range(20):
            yield b"y" * 8192
        yield b'"}]}'
    r = httpx.post(srv.base_url + "/chat/completions", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["param"] == "body"


def test_unknown_route_and_wrong_method_get_error_bodies(srv):
    r = httpx.get(srv.base_url + "/nowhere")
    assert r.status_code == 404 and "error" in r.json()
    r = httpx.get(srv.base_url + "/chat/completions")
    assert r.status_code == 405 and "error" in r.json()


def test_garbage_on_the_socket_does_not_stop_the_server(srv):
    with socket.create_connection((srv.host, srv.port)) as s:
        s.sendall(b"\x00\xffNOT HTTP AT ALL\r\n\r\n")
        s.recv(1024)
    r = httpx.post(srv.base_url + "/chat/completions", json=chat())
    assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"]


def test_unknown_fields_are_ignored(srv):
    r = httpx.post(srv.base_url + "/chat/completions", json=chat(some_new_option={"x": 1}, user="u1"))
    assert r.status_code == 200


def test_ignore_eos_on_an_engine_without_the_hook_is_a_400(srv):
    r = httpx.post(srv.base_url + "/chat/completions", json=chat(ignore_eos=True))
    assert r.status_code == 400 and r.json()["error"]["param"] == "ignore_eos"


def test_structured_output_without_a_grammar_library_is_a_400_not_a_crash():
    with fake_server() as srv:
        def unavailable(kind, schema):
            raise RuntimeError("constrained decoding needs the `xgrammar` package (pip install xgrammar)")
        srv.fake.compile_response_format = unavailable
        r = httpx.post(srv.base_url + "/chat/completions", json=chat(response_format={"type": "json_object"}))
        assert r.status_code == 400 and r.json()["error"]["param"] == "response_format"
        assert "xgrammar" in r.json()["error"]["message"]
