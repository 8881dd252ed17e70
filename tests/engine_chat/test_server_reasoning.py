"""`harness serve --reasoning-parser`: chat completions carry reasoning_content apart from content, streamed
too (as vLLM does), over a real server on 127.0.0.1; our openai engine reads it back."""
from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from engine import ChatRequest, EngineOptions, SamplingParams, create_engine
from engine.reasoning import split_reasoning
from tests.server.conftest import fake_server
from tests.server.fake_engine import EOS, FakeEngine

THINKING = "<think> seven times six is forty-two , check : yes </think> The answer is 42".split()


class ThinkingEngine(FakeEngine):
    """Replies with a thinking block then an answer, one word per token; `opened`: the chat prompt already
    opened the block (as DeepSeek-R1 distills' templates do), so the reply starts inside it."""

    def __init__(self, opened: bool = False, cut_after: int | None = None):
        super().__init__(token_delay_s=0.001)
        self.words = THINKING[1:] if opened else THINKING
        self.words = self.words[:cut_after] if cut_after else self.words
        if opened:
            render = self.tokenizer.render_chat
            self.tokenizer.render_chat = lambda messages: render(messages) + " <think>"

    def _reply(self, prompt_ids, params):
        return [self.tokenizer._id(w) for w in self.words] + [EOS]


def _post(srv, stream: bool) -> httpx.Response:
    body = {"model": "fake", "messages": [{"role": "user", "content": "What is 7 * 6?"}], "max_tokens": 32,
            "temperature": 0, "stream": stream}
    return httpx.post(srv.base_url + "/chat/completions", json=body, timeout=30)


def _streamed(srv) -> tuple[str, str, list[dict]]:
    reasoning, content, deltas = "", "", []
    for line in _post(srv, stream=True).text.splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:]).get("choices", []):
                delta = choice["delta"]
                deltas.append(delta)
                reasoning += delta.get("reasoning_content") or ""
                content += delta.get("content") or ""
    return reasoning, content, deltas


@pytest.mark.parametrize("parser, opened", [("auto", False), ("auto", True), ("qwen3", False), ("deepseek-r1", True)])
def test_reasoning_content_whole_and_streamed(parser, opened):
    engine = ThinkingEngine(opened=opened)
    text = " " + " ".join(engine.words)
    expected = split_reasoning(text, parser, opened)
    assert expected.reasoning == "seven times six is forty-two , check : yes" and "</think>" not in expected.response
    with fake_server(engine, reasoning_parser=parser) as srv:
        message = _post(srv, stream=False).json()["choices"][0]["message"]
        assert message["reasoning_content"].strip() == expected.reasoning
        assert message["content"].strip() == "The answer is 42"
        reasoning, content, deltas = _streamed(srv)
    assert reasoning.strip() == expected.reasoning and content.strip() == "The answer is 42"
    assert any("reasoning_content" in d and "content" not in d for d in deltas)  # reasoning came in its own chunks
    assert "<think>" not in reasoning + content


def test_cut_off_inside_thinking_streams_no_content():
    with fake_server(ThinkingEngine(opened=True, cut_after=4), reasoning_parser="auto") as srv:
        message = _post(srv, stream=False).json()["choices"][0]["message"]
        reasoning, content, _ = _streamed(srv)
    assert message["content"] == "" and message["reasoning_content"].strip() == "seven times six is"
    assert content == "" and reasoning.strip() == "seven times six is"


def test_without_a_parser_the_tags_stay_in_content():
    with fake_server(ThinkingEngine()) as srv:
        message = _post(srv, stream=False).json()["choices"][0]["message"]
        reasoning, content, _ = _streamed(srv)
    assert "reasoning_content" not in message and message["content"].strip().startswith("<think> seven")
    assert reasoning == "" and "</think> The answer is 42" in content


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_openai_engine_reads_reasoning_from_the_built_in_server(stream):
    with fake_server(ThinkingEngine(), reasoning_parser="qwen3") as srv:
        client = create_engine("openai", EngineOptions(model="fake", base_urls=[srv.base_url], max_retries=0))
        request = ChatRequest("r", [{"role": "user", "content": "7 * 6?"}], SamplingParams(max_tokens=32))

        async def run():
            try:
                if not stream:
                    return await client.chat(request)
                return [d async for d in client.stream(request)][-1].final
            finally:
                await client.aclose()
        completion = asyncio.run(run())
    assert completion.text.strip() == "The answer is 42"
    assert completion.extra["reasoning"].strip() == "seven times six is forty-two , check : yes"
