"""Readiness checks, several base URLs, failover, API keys and concurrency of the openai engine."""
from __future__ import annotations

import asyncio

import pytest

from engine import ChatRequest, EngineError, SamplingParams
from engine.openai.clients import aiohttp_available, resolve_transport
from tests.engine.helpers import chat_all, chat_once, make_engine, request
from tests.support import Reply, ScriptedServer, echo, fail_then, unused_url

pytestmark = pytest.mark.usefixtures("http_transport")


def test_check_ready_passes_when_the_model_is_served(scripted_server: ScriptedServer):
    engine = make_engine(scripted_server.base_url)
    asyncio.run(engine.check_ready())
    assert [r.path for r in scripted_server.log] == ["/v1/models"]


def test_server_down_at_start_is_a_clear_error_naming_the_url():
    url = unused_url()
    engine = make_engine(url)
    with pytest.raises(EngineError, match=f"cannot reach the OpenAI-compatible server at {url}"):
        asyncio.run(engine.check_ready())
    # a request against it does not raise either: it comes back as an error completion
    completion = chat_once(make_engine(url, max_retries=1))
    assert completion.finish_reason == "error" and completion.error.startswith("connection")
    assert url in completion.error


def test_unknown_model_lists_the_served_ones():
    with ScriptedServer(model=["llama-3-8b", "qwen-7b"]) as server:
        engine = make_engine(server.base_url, model="gpt-oss-120b")
        with pytest.raises(EngineError, match=r"model 'gpt-oss-120b' is not served at .*llama-3-8b, qwen-7b"):
            asyncio.run(engine.check_ready())
        completion = chat_once(make_engine(server.base_url, model="gpt-oss-120b"))
    assert completion.finish_reason == "error" and "HTTP 404" in completion.error
    assert "gpt-oss-120b" in completion.error and completion.attempts == 1


def test_two_base_urls_share_the_load():
    with ScriptedServer(Reply(text="a")) as a, ScriptedServer(Reply(text="b")) as b:
        engine = make_engine(a.base_url, b.base_url)

        async def run() -> list[str]:
            try:
                sequential = [(await engine.chat(request(f"s{i}"))).text for i in range(10)]
                a.set_handler(Reply(text="a", delay_s=0.05))
                b.set_handler(Reply(text="b", delay_s=0.05))
                burst = await asyncio.gather(*(engine.chat(request(f"c{i}")) for i in range(40)))
                return sequential + [c.text for c in burst]
            finally:
                await engine.aclose()
        texts = asyncio.run(run())
    assert texts[:10].count("a") == 5 and texts[:10].count("b") == 5  # equal load alternates
    assert texts[10:].count("a") == 20 and texts[10:].count("b") == 20  # least-in-flight splits a burst
    assert len(a.requests) == len(b.requests) == 25


def test_a_dead_base_url_fails_over_to_the_live_one():
    dead = unused_url()
    with ScriptedServer(echo) as live:
        engine = make_engine(dead, live.base_url, max_retries=0)

        async def run():
            try:
                await engine.check_ready()  # one live server is enough; the dead one is set aside
                return await asyncio.gather(*(engine.chat(request(f"q{i}")) for i in range(30)))
            finally:
                await engine.aclose()
        completions = asyncio.run(run())
    assert [c.text for c in completions] == [f"q{i}" for i in range(30)]
    assert all(c.finish_reason == "stop" for c in completions)
    assert len(live.requests) == 30


def test_failover_mid_run_when_a_server_dies():
    with ScriptedServer(Reply(text="first")) as first, ScriptedServer(Reply(text="second")) as second:
        engine = make_engine(first.base_url, second.base_url, max_retries=0)

        async def run():
            try:
                before = await asyncio.gather(*(engine.chat(request(f"a{i}")) for i in range(6)))
                first.stop()
                after = await asyncio.gather(*(engine.chat(request(f"b{i}")) for i in range(6)))
                return before, after
            finally:
                await engine.aclose()
        before, after = asyncio.run(run())
    assert {c.text for c in before} == {"first", "second"}
    assert [c.text for c in after] == ["second"] * 6


def test_api_key_comes_from_the_named_environment_variable(monkeypatch: pytest.MonkeyPatch):
    secret = "sk-test-4b1d9c0e7f"
    monkeypatch.setenv("MY_SERVER_KEY", secret)
    with ScriptedServer(api_key=secret) as server:
        engine = make_engine(server.base_url, api_key_env="MY_SERVER_KEY")
        assert secret not in repr(engine.describe()) and set(engine.describe()) == {"name", "model", "base_urls", "request_params"}
        asyncio.run(engine.check_ready())
        assert chat_once(engine).text == "ok"
        assert server.log[-1].headers["authorization"] == f"Bearer {secret}"
        # a wrong key is a clear startup error that names the variable, never the key
        monkeypatch.setenv("MY_SERVER_KEY", "sk-wrong-key-0000")
        wrong = make_engine(server.base_url, api_key_env="MY_SERVER_KEY")
        with pytest.raises(EngineError, match="MY_SERVER_KEY") as info:
            asyncio.run(wrong.check_ready())
        assert "sk-wrong-key-0000" not in str(info.value)
        completion = chat_once(make_engine(server.base_url, api_key_env="MY_SERVER_KEY"))
        assert "HTTP 401" in completion.error and "sk-wrong-key-0000" not in completion.error


def test_a_key_echoed_by_the_server_is_redacted(monkeypatch: pytest.MonkeyPatch):
    secret = "sk-echoed-31337"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    with ScriptedServer(Reply(status=500, error_message=f"bad key {secret}")) as server:
        completion = chat_once(make_engine(server.base_url, max_retries=0))
    assert "bad key ***" in completion.error and secret not in completion.error


def test_without_the_variable_a_placeholder_key_is_sent(monkeypatch: pytest.MonkeyPatch,
                                                      scripted_server: ScriptedServer):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert chat_once(make_engine(scripted_server.base_url)).text == "ok"
    assert scripted_server.log[-1].headers["authorization"] == "Bearer EMPTY"


def test_image_content_parts_reach_the_server_unchanged(scripted_server: ScriptedServer):
    engine = make_engine(scripted_server.base_url)
    assert engine.supports_images
    messages = [{"role": "system", "content": "Answer briefly."},
                {"role": "user", "content": [
                    {"type": "text", "text": "What is in the picture?"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg=="}}]}]
    req = ChatRequest("img", messages, SamplingParams())
    assert req.has_images and chat_once(engine, req).text == "ok"
    assert scripted_server.requests[-1]["messages"] == messages


def test_256_concurrent_requests_complete(scripted_server: ScriptedServer):
    scripted_server.set_handler(lambda body: Reply(text=body["messages"][-1]["content"], delay_s=0.05))
    completions = chat_all(make_engine(scripted_server.base_url), [f"question {i}" for i in range(256)])
    assert [c.text for c in completions] == [f"question {i}" for i in range(256)]
    assert scripted_server.max_in_flight > 64  # they really were in flight together


def test_check_ready_and_requests_in_separate_event_loops(scripted_server: ScriptedServer):
    engine = make_engine(scripted_server.base_url)
    asyncio.run(engine.check_ready())  # a CLI may check in one asyncio.run and generate in another
    assert chat_once(engine).text == "ok"
    assert chat_once(engine).text == "ok"


def test_a_dropped_reply_fails_over_but_keeps_the_server_in_rotation():
    with ScriptedServer([Reply(drop_connection=True), "a"]) as a, ScriptedServer("b") as b:
        engine = make_engine(a.base_url, b.base_url, max_retries=0)

        async def run() -> list[str]:
            try:
                return [(await engine.chat(request(f"q{i}"))).text for i in range(5)]
            finally:
                await engine.aclose()
        texts = asyncio.run(run())
    assert texts[0] == "b"  # the first try went to a, which dropped it; failing over cost no retry
    assert "a" in texts[1:]  # a dropped reply is not a dead server: a stays in rotation


def test_a_server_without_a_model_list_is_accepted_with_a_warning(caplog: pytest.LogCaptureFixture):
    with ScriptedServer() as server:
        engine = make_engine(server.url + "/api")  # not where this server serves: every path is a 404
        with caplog.at_level("WARNING", logger="engine.openai.backend"):
            asyncio.run(engine.check_ready())
        assert "answered 404" in caplog.text and "/v1" in caplog.text
        completion = chat_once(engine)
    assert completion.finish_reason == "error" and "HTTP 404" in completion.error


def test_the_requested_http_transport_is_used(http_transport: str, scripted_server: ScriptedServer):
    engine = make_engine(scripted_server.base_url)
    assert engine.http_transport == http_transport and chat_once(engine).text == "ok"
    with pytest.raises(EngineError, match="unknown http_transport 'curl'"):
        make_engine(scripted_server.base_url, http_transport="curl")


def test_auto_transport_keeps_httpx_when_a_proxy_is_configured(monkeypatch: pytest.MonkeyPatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert resolve_transport("auto") == ("aiohttp" if aiohttp_available() else "httpx")
    monkeypatch.setenv("https_proxy", "http://proxy.internal:3128")
    assert resolve_transport("auto") == "httpx"  # the aiohttp transport would ignore the proxy


def test_retries_under_concurrency_each_request_once_rate_limited(scripted_server: ScriptedServer):
    scripted_server.set_handler(fail_then(1, 429, then=echo))
    completions = chat_all(make_engine(scripted_server.base_url), [f"q{i}" for i in range(128)])
    assert [c.text for c in completions] == [f"q{i}" for i in range(128)]
    assert {c.attempts for c in completions} == {2} and len(scripted_server.requests) == 256
