"""NativeEngine as the harness drives it: concurrent async chats, streaming, per-request faults."""
from __future__ import annotations

import asyncio

import pytest

from engine import EngineOptions, create_engine
from engine.base import ChatRequest, SamplingParams

QUESTIONS = ["What is the capital of France?", "Who wrote Hamlet?", "What is 12 times 7?", "Why is the sky blue?",
             "Name a famous painting.", "What is gravity?"]


@pytest.fixture(scope="module")
def native():
    eng = create_engine("native", EngineOptions(model="smollm2-135m", device="cpu", dtype="fp32", threads=1,
                                                kv_cache_gib=0.25, max_model_len=512))
    yield eng
    asyncio.run(eng.aclose())


def _req(i: int, text: str, **kw) -> ChatRequest:
    return ChatRequest(f"q{i}", [{"role": "user", "content": text}], SamplingParams(**{"max_tokens": 24, **kw}))


def test_concurrent_chats_match_offline_generation(native, llm32):
    async def go():
        return await asyncio.gather(*[native.chat(_req(i, q)) for i, q in enumerate(QUESTIONS)])
    got = asyncio.run(go())
    want = llm32.chat([[{"role": "user", "content": q}] for q in QUESTIONS], SamplingParams(max_tokens=24))
    for c, w in zip(got, want):
        assert c.error is None and c.text == w.text and c.finish_reason == w.finish_reason
        assert c.completion_tokens == len(w.token_ids) and c.prompt_tokens == len(w.prompt_token_ids)
        assert c.latency_s > 0 and 0 < c.ttft_s <= c.latency_s


def test_stream_pieces_add_up_to_the_final_text(native):
    async def go():
        pieces, final = [], None
        async for d in native.stream(_req(0, "Tell me a fun fact about octopuses.", max_tokens=32)):
            pieces.append(d.text)
            final = d.final or final
        return pieces, final
    pieces, final = asyncio.run(go())
    assert len(pieces) > 5 and "".join(pieces) == final.text and final.completion_tokens == 32


def test_faults_stay_with_their_request(native):
    image = ChatRequest("img", [{"role": "user", "content": [
        {"type": "text", "text": "what is this?"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,"}}]}],
        SamplingParams(max_tokens=8))
    long = _req(1, "word " * 600)

    async def go():
        return await asyncio.gather(native.chat(image), native.chat(long), native.chat(_req(2, QUESTIONS[0])))
    img, too_long, ok = asyncio.run(go())
    assert img.finish_reason == "error" and "takes no images" in img.error
    assert too_long.finish_reason == "error" and "context length is 512" in too_long.error
    assert ok.error is None and "Paris" in ok.text


def test_cancelled_request_frees_its_blocks(native):
    async def go():
        task = asyncio.create_task(native.chat(_req(3, "Write a long story about a dragon.", max_tokens=400)))
        await asyncio.sleep(1.5)
        task.cancel()
        await asyncio.sleep(0.5)
    asyncio.run(go())
    stats = native.engine.stats()
    assert stats["blocks_used"] == 0 and not native.engine.has_unfinished()


def test_describe_names_model_device_and_budget(native):
    d = native.describe()
    assert d["name"] == "native" and d["model"] == "smollm2-135m" and d["device"] == "cpu"
    assert d["dtype"] == "fp32" and d["threads"] == 1 and d["kv_cache_bytes"] <= 0.25 * (1 << 30)
    assert len(d["model_sha256"]) == 64
