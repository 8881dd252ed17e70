"""MTP speculative decoding through the harness's engine options (generate --nextn, serve --nextn)."""
from __future__ import annotations

import asyncio

import httpx
import pytest

from engine import EngineOptions, create_engine
from engine.base import ChatRequest, SamplingParams
from tests.engine_deepseek.conftest import write_tokenizer


@pytest.fixture()
def folder(predictable_ckpt, engine_cache_dir):
    write_tokenizer(predictable_ckpt, 97)
    return predictable_ckpt


def _options(folder, nextn: int) -> EngineOptions:
    return EngineOptions(model=str(folder), device="cpu", dtype="fp32", threads=1, kv_cache_gib=0.005,
                         nextn=nextn, block_size=4)


def _chats(engine, prompts: list[str]):
    async def go():
        try:
            return await asyncio.gather(*[engine.chat(ChatRequest(f"r{i}", [{"role": "user", "content": p}],
                                                                  SamplingParams(max_tokens=12)))
                                          for i, p in enumerate(prompts)])
        finally:
            await engine.aclose()
    return asyncio.run(go())


def test_generate_with_nextn_gives_the_plain_greedy_text(folder):
    prompts = ["t5 t9 t13 t40", "t7 t7 t30", "t50 t51 t52 t53 t54"]
    plain = _chats(create_engine("native", _options(folder, 0)), prompts)
    spec_engine = create_engine("native", _options(folder, 2))
    assert spec_engine.describe()["nextn"] == 2
    spec = _chats(spec_engine, prompts)
    for p, s in zip(plain, spec):
        assert p.error is None and s.error is None
        assert s.text == p.text and s.completion_tokens == p.completion_tokens == 12
    assert spec_engine.engine.spec_stats.num_drafts > 0


def test_server_with_nextn_refuses_constraints_with_a_400(folder):
    from engine.server import ServerSettings, serve_in_background
    from engine.server.native import ServingNativeEngine
    engine = ServingNativeEngine.from_options(_options(folder, 2))
    with serve_in_background(engine, ServerSettings(served_model_name="m")) as srv:
        body = {"model": "m", "messages": [{"role": "user", "content": "t5 t9"}], "max_tokens": 4}
        ok = httpx.post(srv.base_url + "/chat/completions", json=body, timeout=60)
        assert ok.status_code == 200, ok.text
        bad = httpx.post(srv.base_url + "/chat/completions", json={**body, "ignore_eos": True}, timeout=60)
        assert bad.status_code == 400 and bad.json()["error"]["param"] == "ignore_eos"
