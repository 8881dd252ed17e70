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


async def _until_first_token(stream) -> None:
    """Read a stream until it has produced a token: the request is then running and holds KV blocks."""
    async for d in stream:
        assert d.final is None, d.final
        if d.token_count:
            return


async def _wait_idle(engine, timeout_s: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while engine.has_unfinished():
        assert asyncio.get_running_loop().time() < deadline, "the engine never went idle"
        await asyncio.sleep(0.05)


def test_cancelled_request_frees_its_blocks(native):
    async def go():
        stream = native.stream(_req(3, "Write a long story about a dragon.", max_tokens=400))
        await _until_first_token(stream)
        used_while_running = native.engine.stats()["blocks_used"]
        await stream.aclose()  # the caller goes away mid-generation
        await _wait_idle(native.engine)
        return used_while_running
    used_while_running = asyncio.run(go())
    assert used_while_running > 0
    stats = native.engine.stats()
    assert stats["blocks_used"] == 0 and stats["requests_running"] == stats["requests_waiting"] == 0


def test_failing_logits_processor_or_row_fails_only_its_request(native, llm32):
    """A processor that raises, and one that leaves a NaN row to sample, fail their own requests only."""
    tk = native.engine.tokenizer
    ids = tk.encode(tk.render_chat([{"role": "user", "content": QUESTIONS[0]}]))

    def boom(output_ids, row):
        if len(output_ids) == 2:
            raise RuntimeError("grammar exploded")

    def nan_row(output_ids, row):
        row[5] = float("nan")

    async def final(stream):
        last = None
        async for d in stream:
            last = d.final or last
        return last

    async def go():
        sp = SamplingParams(max_tokens=12)
        return await asyncio.gather(
            final(native.stream_prompt("bad", ids, sp, logits_processor=boom)),
            final(native.stream_prompt("nan", ids, SamplingParams(max_tokens=12, temperature=0.8), logits_processor=nan_row)),
            final(native.stream_prompt("ok", ids, sp)))
    bad, nan, ok = asyncio.run(go())
    assert bad.finish_reason == "error" and "logits processor failed: RuntimeError: grammar exploded" in bad.error
    assert bad.completion_tokens == 2  # the tokens before the failure were delivered
    assert nan.finish_reason == "error" and "sampling failed" in nan.error and nan.completion_tokens == 0
    want = llm32.generate([ids], SamplingParams(max_tokens=12))[0]
    assert ok.error is None and ok.extra["token_ids"] == want.token_ids


def test_aclose_ends_streams_in_flight_with_an_error(llm32):
    from engine.native.backend import NativeEngine
    native = NativeEngine(llm32.engine)  # its own loop thread over the session's engine

    async def go():
        stream = native.stream(_req(4, "Write a long story about a dragon.", max_tokens=400))
        await _until_first_token(stream)
        closing = asyncio.create_task(native.aclose())
        last = None
        async for d in stream:
            last = d.final or last
        await closing
        return last
    last = asyncio.run(asyncio.wait_for(go(), 60))
    assert last.finish_reason == "error" and "shut down (aclose)" in last.error and last.completion_tokens == 0
    st = llm32.engine.stats()  # aborted: its blocks are free for the next user of the engine
    assert st["blocks_used"] == 0 and st["requests_running"] == st["requests_waiting"] == 0


def test_describe_names_model_device_and_budget(native):
    d = native.describe()
    assert d["name"] == "native" and d["model"] == "smollm2-135m" and d["device"] == "cpu"
    assert d["dtype"] == "fp32" and d["threads"] == 1 and d["kv_cache_bytes"] <= 0.25 * (1 << 30)
    assert len(d["model_sha256"]) == 64


def test_lean_hand_off_wakes_the_loop_once_per_step_and_changes_no_output():
    from engine.native.backend import NativeEngine
    from engine.native.llm_engine import LLMEngine
    eng = LLMEngine("smollm2-135m", device="cpu", dtype="fp32", threads=1, kv_cache_gib=0.05, max_model_len=512)

    async def run(lean: bool):
        native = NativeEngine(eng, lean_delivery=lean)
        loop = asyncio.get_running_loop()
        wakeups = 0
        plain = loop.call_soon_threadsafe

        def counting(*args, **kw):
            nonlocal wakeups
            wakeups += 1
            return plain(*args, **kw)
        loop.call_soon_threadsafe = counting
        try:
            got = await asyncio.gather(*[native.chat(_req(i, q, max_tokens=16)) for i, q in enumerate(QUESTIONS)])
        finally:
            loop.call_soon_threadsafe = plain
            await native.aclose()
        return got, wakeups

    lean, lean_wakeups = asyncio.run(run(True))
    before, before_wakeups = asyncio.run(run(False))
    assert [(c.text, c.completion_tokens, c.finish_reason) for c in lean] == \
           [(c.text, c.completion_tokens, c.finish_reason) for c in before]
    assert all(c.error is None and 0 < c.ttft_s <= c.latency_s for c in lean)
    # chat() reads only the final output: one wake-up per step that finishes a request, not one per token
    assert before_wakeups >= sum(c.completion_tokens for c in before)
    assert lean_wakeups <= len(QUESTIONS), lean_wakeups
