"""The scripted test server itself, driven by the official openai client and by plain HTTP."""
from __future__ import annotations

import asyncio
import json
import socket
import threading
import time

import httpx
import openai
import pytest
from openai import OpenAI

from tests.support import InOrder, Reply, ScriptedServer, echo, fail_then, per_request, unused_url

MSG = [{"role": "user", "content": "hello there"}]


def client(server: ScriptedServer, key: str = "k", **kw) -> OpenAI:
    return OpenAI(base_url=server.base_url, api_key=key, max_retries=0, **kw)


def test_chat_completion_through_the_official_client(scripted_server: ScriptedServer):
    scripted_server.set_handler(Reply(text="Hi! How can I help?", finish_reason="length"))
    reply = client(scripted_server).chat.completions.create(model="test-model", messages=MSG, max_tokens=5)
    assert reply.choices[0].message.content == "Hi! How can I help?"
    assert reply.choices[0].finish_reason == "length" and reply.model == "test-model"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.total_tokens) == (2, 5, 7)
    assert scripted_server.requests == [{"model": "test-model", "messages": MSG, "max_tokens": 5}]


def test_streaming_chunks_usage_and_done(scripted_server: ScriptedServer):
    scripted_server.set_handler(Reply(chunks=["Hel", "lo ", "world"], chunk_tokens=[1, 1, 2]))
    chunks = list(client(scripted_server).chat.completions.create(
        model="test-model", messages=MSG, stream=True, stream_options={"include_usage": True}))
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hello world"
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 4
    # without include_usage there is no usage chunk, as with OpenAI
    plain = list(client(scripted_server).chat.completions.create(model="test-model", messages=MSG, stream=True))
    assert all(c.usage is None for c in plain)


def test_raw_sse_framing_ends_with_done(scripted_server: ScriptedServer):
    scripted_server.set_handler(Reply(text="a b"))
    with httpx.stream("POST", scripted_server.base_url + "/chat/completions",
                      json={"model": "test-model", "messages": MSG, "stream": True}) as r:
        assert r.headers["content-type"] == "text/event-stream"
        events = [line for line in r.iter_lines() if line]
    assert events[-1] == "data: [DONE]" and all(e.startswith("data: ") for e in events)
    assert len(events) == 5  # role, "a ", "b", finish, [DONE]


def test_legacy_completions_and_model_list(scripted_server: ScriptedServer):
    scripted_server.set_handler(echo)
    c = client(scripted_server)
    assert c.completions.create(model="test-model", prompt="2 + 2 =").choices[0].text == "2 + 2 ="
    streamed = c.completions.create(model="test-model", prompt="one two three", stream=True)
    assert "".join(ch.choices[0].text for ch in streamed if ch.choices) == "one two three"
    assert [m.id for m in c.models.list()] == ["test-model"]


def test_logprobs_when_asked(scripted_server: ScriptedServer):
    scripted_server.set_handler(Reply(text="x y", logprobs=[-0.1, -2.0]))
    reply = client(scripted_server).chat.completions.create(model="test-model", messages=MSG, logprobs=True)
    assert [t.logprob for t in reply.choices[0].logprobs.content] == [-0.1, -2.0]


def test_error_statuses_use_the_openai_error_shape(scripted_server: ScriptedServer):
    scripted_server.set_handler(Reply(status=429, retry_after=1.5, error_message="slow down"))
    with pytest.raises(openai.RateLimitError) as info:
        client(scripted_server).chat.completions.create(model="test-model", messages=MSG)
    assert info.value.body["message"] == "slow down" and info.value.body["type"] == "rate_limit_error"
    assert info.value.response.headers["retry-after"] == "1.5"
    with pytest.raises(openai.NotFoundError, match="does not exist"):
        client(scripted_server).chat.completions.create(model="other-model", messages=MSG)


def test_api_key_is_required_when_set():
    with ScriptedServer(api_key="secret") as server:
        with pytest.raises(openai.AuthenticationError):
            client(server, key="wrong").models.list()
        assert [m.id for m in client(server, key="secret").models.list()] == ["test-model"]
        assert httpx.get(server.url + "/health").status_code == 200  # health needs no key, as in vLLM


def test_record_false_keeps_no_log():
    with ScriptedServer(record=False) as server:
        assert client(server).chat.completions.create(model="test-model", messages=MSG).choices
        assert server.requests == [] and server.log == []


def test_in_order_replies_then_the_last_forever(scripted_server: ScriptedServer):
    scripted_server.set_handler([Reply(text="one"), "two"])
    c = client(scripted_server)
    texts = [c.chat.completions.create(model="test-model", messages=MSG).choices[0].message.content for _ in range(4)]
    assert texts == ["one", "two", "two", "two"]
    assert isinstance(InOrder([Reply()]), InOrder)


def test_fail_then_is_per_distinct_request_under_concurrency(scripted_server: ScriptedServer):
    script = fail_then(2, 503, then=echo)
    scripted_server.set_handler(script)

    async def run() -> list[str]:
        c = openai.AsyncOpenAI(base_url=scripted_server.base_url, api_key="k", max_retries=0)

        async def until_ok(i: int) -> str:
            for _ in range(5):
                try:
                    r = await c.chat.completions.create(model="test-model",
                                                        messages=[{"role": "user", "content": f"q{i}"}])
                    return r.choices[0].message.content
                except openai.InternalServerError:
                    await asyncio.sleep(0)
            return "never"
        try:
            return await asyncio.gather(*(until_ok(i) for i in range(50)))
        finally:
            await c.close()
    assert asyncio.run(run()) == [f"q{i}" for i in range(50)]
    assert len(scripted_server.requests) == 150 and set(script.arrivals.values()) == {3}


def test_drop_connection_and_raw_body(scripted_server: ScriptedServer):
    scripted_server.set_handler(Reply(drop_connection=True))
    with pytest.raises(openai.APIConnectionError):
        client(scripted_server).chat.completions.create(model="test-model", messages=MSG)
    scripted_server.set_handler(Reply(raw_body="{not json", status=200))
    r = httpx.post(scripted_server.base_url + "/chat/completions", json={"model": "test-model", "messages": MSG})
    assert r.status_code == 200 and r.text == "{not json"


def test_delay_and_token_pacing(scripted_server: ScriptedServer):
    scripted_server.set_handler(Reply(text="a b c d", delay_s=0.2, token_delay_s=0.05))
    started = time.perf_counter()
    stamps = []
    for chunk in client(scripted_server).chat.completions.create(model="test-model", messages=MSG, stream=True):
        if chunk.choices and chunk.choices[0].delta.content:
            stamps.append(time.perf_counter() - started)
    assert len(stamps) == 4 and stamps[0] >= 0.2
    assert stamps[-1] - stamps[0] >= 2 * 0.05  # three gaps of 50 ms; a loaded client may read two chunks at once


def test_a_handler_bug_is_a_500_and_is_recorded(scripted_server: ScriptedServer):
    scripted_server.set_handler(lambda body: body["no such field"])
    with pytest.raises(openai.InternalServerError, match="handler failed"):
        client(scripted_server).chat.completions.create(model="test-model", messages=MSG)
    assert scripted_server.errors == ["KeyError: 'no such field'"]


def test_response_format_can_be_refused(scripted_server: ScriptedServer):
    scripted_server.set_handler(Reply(text="{}", json_schema_ok=False))
    with pytest.raises(openai.BadRequestError, match="response_format"):
        client(scripted_server).chat.completions.create(
            model="test-model", messages=MSG, response_format={"type": "json_object"})
    assert client(scripted_server).chat.completions.create(model="test-model", messages=MSG).choices


def test_keep_alive_reuses_one_connection(scripted_server: ScriptedServer):
    with httpx.Client() as c:
        for _ in range(20):
            c.post(scripted_server.base_url + "/chat/completions", json={"model": "test-model", "messages": MSG})
        assert len(scripted_server._conns) == 1


def test_pipelined_requests_are_answered_in_order(scripted_server: ScriptedServer):
    scripted_server.set_handler(lambda body: Reply(text=body["messages"][0]["content"], delay_s=0.01))
    raw = b""
    for word in ("first", "second"):
        body = json.dumps({"model": "test-model", "messages": [{"role": "user", "content": word}]}).encode()
        raw += (b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                b"content-length: %d\r\n\r\n%s" % (len(body), body))
    with socket.create_connection(("127.0.0.1", scripted_server.port)) as s:
        s.sendall(raw)
        s.settimeout(5)
        data = b""
        while data.count(b"chat.completion") < 2:
            data += s.recv(65536)
    assert data.index(b'"first"') < data.index(b'"second"')


def test_stop_is_clean_and_the_port_can_be_reused():
    server = ScriptedServer(Reply(delay_s=30)).start()
    port = server.port

    def hang() -> None:
        try:
            httpx.post(server.base_url + "/chat/completions", json={"model": "test-model", "messages": MSG},
                       timeout=10)
        except httpx.HTTPError:
            pass
    t = threading.Thread(target=hang)
    t.start()
    time.sleep(0.2)
    started = time.perf_counter()
    server.stop()
    t.join(5)
    assert time.perf_counter() - started < 2 and not t.is_alive()
    with ScriptedServer(port=port) as again:
        assert httpx.get(again.base_url + "/models").json()["data"][0]["id"] == "test-model"


def test_unused_url_refuses_connections():
    with pytest.raises(httpx.ConnectError):
        httpx.get(unused_url() + "/models")


def test_per_request_script(scripted_server: ScriptedServer):
    scripted_server.set_handler(per_request(Reply(status=500), Reply(text="fixed")))
    c = client(scripted_server)
    with pytest.raises(openai.InternalServerError):
        c.chat.completions.create(model="test-model", messages=MSG)
    assert c.chat.completions.create(model="test-model", messages=MSG).choices[0].message.content == "fixed"


def _raw_request(body: dict, close: bool = False) -> bytes:
    data = json.dumps(body).encode()
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
            f"content-length: {len(data)}\r\n" + ("connection: close\r\n" if close else "") + "\r\n")
    return head.encode() + data


def _read_all(s: socket.socket) -> bytes:
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    return data


def test_a_request_trickled_in_small_pieces(scripted_server: ScriptedServer):
    scripted_server.set_handler(echo)
    raw = _raw_request({"model": "test-model", "messages": [{"role": "user", "content": "slowly"}]}, close=True)
    with socket.create_connection(("127.0.0.1", scripted_server.port)) as s:
        s.settimeout(5)
        for i in range(0, len(raw), 7):
            s.sendall(raw[i:i + 7])
            time.sleep(0.002)
        data = _read_all(s)  # connection: close -> the server closes after answering
    assert data.startswith(b"HTTP/1.1 200") and b'"content": "slowly"' in data


@pytest.mark.parametrize("token_delay_s", [0.0, 0.01])
def test_connection_close_stream_is_sent_whole(scripted_server: ScriptedServer, token_delay_s: float):
    scripted_server.set_handler(Reply(text="a b c", token_delay_s=token_delay_s))
    raw = _raw_request({"model": "test-model", "messages": MSG, "stream": True}, close=True)
    with socket.create_connection(("127.0.0.1", scripted_server.port)) as s:
        s.settimeout(5)
        s.sendall(raw)
        data = _read_all(s)
    assert data.count(b"data: ") == 6 and data.endswith(b"data: [DONE]\n\n\r\n0\r\n\r\n")
