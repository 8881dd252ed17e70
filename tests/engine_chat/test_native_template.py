"""The built-in engine on an HF folder: its own template (with --chat-template-kwargs), the built-in one only
when it has none (said, and recorded), and end-of-sequence ids from generation_config.json."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from engine import ChatRequest, EngineOptions, SamplingParams, create_engine
from engine.native.llm_engine import LLMEngine
from engine.reasoning import split_completion
from tests.sweep.tiny_llama import write_tiny_llama

TEMPLATES = Path(__file__).parent / "templates"
QUESTION = [{"role": "user", "content": "the quick brown fox"}]


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    return write_tiny_llama(tmp_path / "tiny")


def _with_template(folder: Path, name: str) -> Path:
    config = {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
              "chat_template": (TEMPLATES / f"{name}.jinja").read_text(encoding="utf-8")}
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    return folder


def test_builtin_template_only_when_the_folder_has_none(folder, capfd):
    engine = LLMEngine(model=str(folder), dtype="fp32", threads=1, kv_cache_gib=0.01)
    err = capfd.readouterr().err
    assert f"{folder} has no chat template; using the built-in ChatML template" in err
    assert "bytes per token" in err
    assert engine.describe()["chat_template"] == "built-in ChatML"
    assert engine.tokenizer.render_chat(QUESTION) == "<|im_start|>user\nthe quick brown fox<|im_end|>\n<|im_start|>assistant\n"


def test_model_template_with_kwargs_is_used_and_recorded(folder, capfd):
    engine = LLMEngine(model=str(_with_template(folder, "qwen3")), dtype="fp32", threads=1, kv_cache_gib=0.01,
                       chat_template_kwargs={"enable_thinking": False})
    assert "no chat template" not in capfd.readouterr().err
    described = engine.describe()
    assert described["chat_template"] == "model" and described["chat_template_kwargs"] == {"enable_thinking": False}
    assert engine.tokenizer.render_chat(QUESTION).endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert engine.tokenizer.render_chat(QUESTION, enable_thinking=True).endswith("<|im_start|>assistant\n")


def test_named_templates_use_the_default_one(folder):
    qwen3 = (TEMPLATES / "qwen3.jinja").read_text(encoding="utf-8")
    named = [{"name": "tool_use", "template": "{{ raise_exception('not this one') }}"}, {"name": "default", "template": qwen3}]
    (folder / "tokenizer_config.json").write_text(json.dumps({"eos_token": "<|im_end|>", "chat_template": named}))
    engine = LLMEngine(model=str(folder), dtype="fp32", threads=1, kv_cache_gib=0.01)
    assert engine.tokenizer.render_chat(QUESTION, enable_thinking=False).endswith("<think>\n\n</think>\n\n")


def test_generation_config_eos_ids_stop_generation(folder):
    (folder / "generation_config.json").write_text(json.dumps({"eos_token_id": [2, 7]}))
    engine = LLMEngine(model=str(folder), dtype="fp32", threads=1, kv_cache_gib=0.01)
    assert engine.eos_ids == {2, 7}  # config.json alone says 2

    def force_seven(output_ids, logits):
        logits.fill_(-1e9)
        logits[7 if len(output_ids) == 3 else 11] = 0.0
    engine.add_request([5, 6, 8], SamplingParams(max_tokens=20, temperature=0.0), "r", logits_processor=force_seven)
    done = None
    while engine.has_unfinished():
        done = next((o for o in engine.step().outputs if o.finished), done)
    assert done.finish_reason == "stop" and done.token_ids == [11, 11, 11, 7]


def test_generation_config_with_a_bad_eos_is_a_clear_error(folder):
    (folder / "generation_config.json").write_text(json.dumps({"eos_token_id": "two"}))
    with pytest.raises(Exception, match=r"generation_config.json: field 'eos_token_id' must be an integer"):
        LLMEngine(model=str(folder), dtype="fp32", threads=1, kv_cache_gib=0.01)


def test_native_engine_marks_prompts_that_open_a_thinking_block(folder):
    engine = create_engine("native", EngineOptions(model=str(_with_template(folder, "qwq")), dtype="fp32", threads=1,
                                                   kv_cache_gib=0.01))

    async def run():
        try:
            return await engine.chat(ChatRequest("r", QUESTION, SamplingParams(max_tokens=6, temperature=0.0)))
        finally:
            await engine.aclose()
    completion = asyncio.run(run())
    assert completion.finish_reason == "length" and completion.extra["prompt_opens_thinking"] is True
    split = split_completion(completion, "auto")  # cut off inside the block the prompt opened: no answer
    assert split.unterminated and split.response == "" and split.reasoning == completion.text.strip()
