"""A small scripted Engine for protocol tests: word tokens, per-token delays, fake KV blocks, abort records."""
from __future__ import annotations

import asyncio
import random
import time
from typing import Any, AsyncIterator

from engine.base import ChatRequest, Completion, Engine, SamplingParams, StreamDelta

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu"]
EOS = 0


class WordTokenizer:
    """Whitespace words; ids are assigned on first sight (0 is the end-of-sequence token)."""

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {"<eos>": EOS}
        self.words: list[str] = ["<eos>"]
        for w in WORDS:
            self._id(w)

    @property
    def vocab_size(self) -> int:
        return 100_000

    def _id(self, w: str) -> int:
        if w not in self.vocab:
            self.vocab[w] = len(self.words)
            self.words.append(w)
        return self.vocab[w]

    def encode(self, text: str) -> list[int]:
        return [self._id(w) for w in text.split()]

    def decode(self, ids: list[int]) -> str:
        return "".join(" " + self.words[i] if i < len(self.words) and i != EOS else "" for i in ids)

    def render_chat(self, messages: list[dict[str, Any]]) -> str:
        return " ".join(f"<{m['role']}> {m['content']}" for m in messages) + " <assistant>"


class FakeEngine(Engine):
    """Replies with words chosen from the prompt (greedy) or a seeded generator; `token_delay_s` per token."""

    name = "fake"

    def __init__(self, token_delay_s: float = 0.0, first_token_delay_s: float = 0.0, reply_words: int = 8,
                 max_model_len: int = 64, max_num_seqs: int = 8, block_size: int = 4, num_blocks: int = 4096,
                 fail_on: str | None = None) -> None:
        self.tokenizer = WordTokenizer()
        self.token_delay_s = token_delay_s
        self.first_token_delay_s = first_token_delay_s
        self.reply_words = reply_words
        self.max_model_len = max_model_len
        self.max_num_seqs = max_num_seqs
        self.block_size = block_size
        self.num_blocks = num_blocks
        self.fail_on = fail_on
        self.supports_logits_constraint = True
        self.blocks: dict[str, int] = {}  # request id -> blocks held
        self.started: list[str] = []
        self.aborted: list[str] = []
        self.finished: list[str] = []
        self.peak_running = 0
        self.constraints: dict[str, Any] = {}

    def _reply(self, prompt_ids: list[int], params: SamplingParams) -> list[int]:
        if params.temperature == 0:
            rng = random.Random(sum(prompt_ids) * 31 + len(prompt_ids))
        else:
            rng = random.Random(params.seed) if params.seed is not None else random.Random()
        return [self.tokenizer.vocab[rng.choice(WORDS)] for _ in range(self.reply_words)] + [EOS]

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        ids = self.tokenizer.encode(self.tokenizer.render_chat(request.messages))
        async for d in self.stream_prompt(request.request_id, ids, request.params):
            yield d

    async def stream_prompt(self, request_id: str, prompt_token_ids: list[int], params: SamplingParams,
                            logits_constraint: Any = None) -> AsyncIterator[StreamDelta]:
        t0 = time.perf_counter()
        if self.fail_on and self.fail_on in self.tokenizer.decode(prompt_token_ids):
            yield StreamDelta("", 0, Completion.failed("scripted failure"))
            return
        self.started.append(request_id)
        self.blocks[request_id] = -(-len(prompt_token_ids) // self.block_size)
        self.peak_running = max(self.peak_running, len(self.blocks))
        if logits_constraint is not None:
            self.constraints[request_id] = logits_constraint
        out: list[int] = []
        text, finish, ttft = "", "length", None
        try:
            await asyncio.sleep(self.first_token_delay_s)
            for tok in self._reply(prompt_token_ids, params):
                if out:
                    await asyncio.sleep(self.token_delay_s)
                if tok == EOS:
                    finish = "stop"
                    break
                out.append(tok)
                ttft = ttft or time.perf_counter() - t0
                self.blocks[request_id] = -(-(len(prompt_token_ids) + len(out)) // self.block_size)
                piece = self.tokenizer.decode([tok])
                hit = next((s for s in params.stop if s in text + piece), None)
                if hit:
                    cut = (text + piece).index(hit)
                    piece, finish = (text + piece)[len(text):cut], "stop"
                    text += piece
                    yield StreamDelta(piece, 1)
                    break
                text += piece
                if len(out) >= params.max_tokens:
                    yield StreamDelta(piece, 1)
                    break
                yield StreamDelta(piece, 1)
        except BaseException:
            self.aborted.append(request_id)
            raise
        finally:
            self.blocks.pop(request_id, None)
        self.finished.append(request_id)
        done = Completion(text=text, finish_reason=finish, prompt_tokens=len(prompt_token_ids),
                          completion_tokens=len(out), latency_s=time.perf_counter() - t0, ttft_s=ttft,
                          logprobs=[-0.5] * len(out) if params.logprobs else None, extra={"token_ids": out})
        yield StreamDelta("", 0, done)

    async def chat(self, request: ChatRequest) -> Completion:
        final = None
        async for d in self.stream(request):
            final = d.final or final
        assert final is not None
        return final

    def stats(self) -> dict[str, Any]:
        used = sum(self.blocks.values())
        return {"requests_running": len(self.blocks), "requests_waiting": 0, "kv_blocks_total": self.num_blocks,
                "kv_blocks_used": used, "kv_blocks_free": self.num_blocks - used, "kv_block_size": self.block_size,
                "prefix_cache_queries": 10, "prefix_cache_hits": 4, "spec_drafted_tokens": 12,
                "spec_accepted_tokens": 9}

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}
