"""Per-request `chat_template_kwargs` (vLLM's extension) over a real server on the built-in engine: merged over
the server's --chat-template-kwargs, with Qwen3's real template on a tiny random model."""
from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from engine.base import EngineOptions
from engine.server import ServerSettings, serve_in_background
from tests.sweep.tiny_llama import write_tiny_llama

TEMPLATES = Path(__file__).parents[1] / "engine_chat" / "templates"
THINKING_OFF = "<|im_start|>assistant\n<think>\n\n</think>\n\n"  # what Qwen3's template adds for enable_thinking=false
THINKING_ON = "<|im_start|>assistant\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The server's own default: thinking off (as `harness serve --chat-template-kwargs` would set it)."""
    from engine.server.native import ServingNativeEngine
    root = tmp_path_factory.mktemp("kwargs")
    folder = write_tiny_llama(root / "tiny")
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"eos_token": "<|im_end|>", "chat_template": (TEMPLATES / "qwen3.jinja").read_text(encoding="utf-8")}))
    mp = pytest.MonkeyPatch()
    mp.setenv("HARNESS_CACHE_DIR", str(root / "cache"))
    engine = ServingNativeEngine.from_options(EngineOptions(
        model=str(folder), dtype="fp32", threads=1, kv_cache_gib=0.01, max_model_len=512,
        chat_template_kwargs={"enable_thinking": False}))  # as `serve --chat-template-kwargs` passes it
    prompts: list[str] = []  # the prompt text each request reached the engine with
    inner = engine.stream_prompt

    def recording(request_id, prompt_token_ids, params, logits_constraint=None):
        prompts.append(engine.tokenizer.decode(prompt_token_ids, skip_special_tokens=False))
        return inner(request_id, prompt_token_ids, params, logits_constraint=logits_constraint)
    engine.stream_prompt = recording
    with serve_in_background(engine, ServerSettings(served_model_name="tiny")) as srv:
        srv.prompts = prompts
        yield srv
    mp.undo()


def _chat(srv, stream: bool = False, **extra) -> httpx.Response:
    body = {"model": "tiny", "messages": [{"role": "user", "content": "the quick brown fox"}], "max_tokens": 4,
            "temperature": 0, "stream": stream, **extra}
    return httpx.post(srv.base_url + "/chat/completions", json=body, timeout=60)


def _prompt_tokens(response: httpx.Response) -> int:
    return response.json()["usage"]["prompt_tokens"]


def test_request_kwargs_override_the_server_default(served):
    default = _chat(served)
    assert default.status_code == 200
    on = _chat(served, chat_template_kwargs={"enable_thinking": True})
    assert on.status_code == 200, on.text
    assert served.prompts[-1].endswith(THINKING_ON) and not served.prompts[-1].endswith(THINKING_OFF)
    # usage counts the prompt as rendered for this request: the empty thinking block is gone
    assert _prompt_tokens(on) < _prompt_tokens(default)
    off = _chat(served, chat_template_kwargs={"enable_thinking": False})
    assert served.prompts[-1].endswith(THINKING_OFF)
    assert _prompt_tokens(off) == _prompt_tokens(default)


def test_kwargs_apply_to_streamed_chats(served):
    response = _chat(served, stream=True, chat_template_kwargs={"enable_thinking": True},
                     stream_options={"include_usage": True})
    assert response.status_code == 200 and "data: [DONE]" in response.text
    assert served.prompts[-1].endswith(THINKING_ON)


def test_unrelated_kwargs_keep_the_server_default(served):
    assert _chat(served, chat_template_kwargs={"some_other_switch": 1}).status_code == 200
    assert served.prompts[-1].endswith(THINKING_OFF)


@pytest.mark.parametrize("kwargs, needle", [({"messages": []}, "messages"), ([1, 2], "chat_template_kwargs")])
def test_bad_kwargs_are_a_400(served, kwargs, needle):
    response = _chat(served, chat_template_kwargs=kwargs)
    assert response.status_code == 400 and needle in response.text
