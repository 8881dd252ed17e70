"""Each family through `harness serve`'s server (real uvicorn on 127.0.0.1, the openai client): 64 greedy tokens
equal HF's on the same weights."""
from __future__ import annotations

import openai

from engine.base import EngineOptions
from engine.server import ServerSettings, serve_in_background
from tests.engine_models.conftest import hf_greedy, load_hf

PROMPT = [5, 17, 3, 99, 42, 7, 7, 21, 30, 2, 11]


def test_completions_through_the_server_equal_hf(family_ckpt):
    from engine.server.native import ServingNativeEngine
    family, folder = family_ckpt
    want = hf_greedy(load_hf(folder), PROMPT, 64)[0]
    engine = ServingNativeEngine.from_options(EngineOptions(model=str(folder), dtype="float32", threads=1,
                                                            kv_cache_gib=0.01))
    with serve_in_background(engine, ServerSettings(served_model_name=family)) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="unused", max_retries=0, timeout=120)
        text = " ".join(f"t{i}" for i in PROMPT)  # the word-level test tokenizer: one word per id
        got = client.completions.create(model=family, prompt=text, max_tokens=64, temperature=0)
    assert got.usage.prompt_tokens == len(PROMPT) and got.usage.completion_tokens == 64
    assert got.choices[0].text.split() == [f"t{i}" for i in want]
