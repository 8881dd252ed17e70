"""64 concurrent streaming clients against the server over the built-in engine; no KV blocks left in use."""
from __future__ import annotations

import asyncio

import openai
import pytest

from engine.base import EngineOptions
from engine.server.local import local_openai_server
from tests.server.test_native_server import MODEL, metrics


class _Endpoint:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.root_url = base_url.removesuffix("/v1")


@pytest.fixture(scope="module")
def native():
    # Through the helper the LLM judge uses: the built-in engine on an ephemeral 127.0.0.1 port.
    options = EngineOptions(model=MODEL, threads=2, kv_cache_gib=0.25, max_model_len=1024, max_num_seqs=64)
    with local_openai_server(MODEL, options) as base_url:
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        yield _Endpoint(base_url)


def _concurrent_streams(srv, clients: int, rounds: int, max_tokens: int) -> list[int]:
    async def main() -> list[int]:
        ac = openai.AsyncOpenAI(base_url=srv.base_url, api_key="unused", max_retries=0, timeout=300)

        async def one(i: int) -> int:
            tokens = 0
            for k in range(rounds):
                text, usage = "", None
                stream = await ac.chat.completions.create(
                    model=MODEL, messages=[{"role": "user", "content": f"Say one thing about the number {i * 7 + k}."}],
                    temperature=0, max_tokens=max_tokens, stream=True, stream_options={"include_usage": True})
                async for ch in stream:
                    if ch.choices:
                        assert ch.choices[0].finish_reason in (None, "stop", "length")
                        text += ch.choices[0].delta.content or ""
                    if ch.usage:
                        usage = ch.usage
                assert usage is not None and text
                tokens += usage.completion_tokens
            return tokens
        try:
            return await asyncio.gather(*[one(i) for i in range(clients)])
        finally:
            await ac.close()
    return asyncio.run(main())


def test_64_concurrent_streaming_clients_finish_and_leave_no_blocks_in_use(native):
    tokens = _concurrent_streams(native, clients=64, rounds=3, max_tokens=4)
    assert len(tokens) == 64 and all(0 < t <= 12 for t in tokens)
    m = metrics(native)
    assert m["harness_kv_blocks_used"] == 0 and m["harness_requests_running"] == 0
    assert m["harness_engine_requests_running"] == 0 and m["harness_engine_requests_waiting"] == 0
    assert m['harness_requests_finished_total{finished_reason="error"}'] == 0


@pytest.mark.slow
def test_64_concurrent_streaming_clients_times_four_requests(native):
    tokens = _concurrent_streams(native, clients=64, rounds=4, max_tokens=16)
    assert len(tokens) == 64 and all(t > 0 for t in tokens)
    assert metrics(native)["harness_kv_blocks_used"] == 0
