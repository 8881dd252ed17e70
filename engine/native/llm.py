"""Offline API for scripts: LLM(model=...).generate(prompts, SamplingParams) and LLM.chat(messages)."""
from __future__ import annotations

from typing import Any, Sequence as Seq

from engine.base import SamplingParams
from engine.native.llm_engine import LLMEngine, RequestOutput
from engine.native.model_registry import DEFAULT_MODEL


class LLM:
    """Runs requests to completion with continuous batching; outputs come back in input order."""

    def __init__(self, model: str | None = DEFAULT_MODEL, device: str | None = None, dtype: str | None = None,
                 threads: int | None = None, **engine_kwargs: Any):
        self.engine = LLMEngine(model=model, device=device, dtype=dtype, threads=threads, **engine_kwargs)
        self.tokenizer = self.engine.tokenizer

    def _prompt_ids(self, prompt: Any) -> list[int]:
        if isinstance(prompt, str):
            return self.tokenizer.encode(prompt)
        if isinstance(prompt, dict) and "prompt_token_ids" in prompt:
            return list(prompt["prompt_token_ids"])
        if isinstance(prompt, list) and (not prompt or isinstance(prompt[0], int)):
            return list(prompt)
        if isinstance(prompt, list) and isinstance(prompt[0], dict):  # a chat message list
            return self.tokenizer.encode(self.tokenizer.render_chat(prompt))
        raise TypeError(f"a prompt is a string, a list of token ids or a list of chat messages, got {type(prompt)}")

    def generate(self, prompts: Any, params: SamplingParams | Seq[SamplingParams] | None = None,
                 use_tqdm: bool = False) -> list[RequestOutput]:
        """Each output has token_ids, text, finish_reason, error and logprobs (when asked)."""
        single = isinstance(prompts, str) or (isinstance(prompts, list) and prompts and isinstance(prompts[0], int))
        if single or (isinstance(prompts, list) and prompts and isinstance(prompts[0], dict) and "role" in prompts[0]):
            prompts = [prompts]
        prompts = list(prompts)
        if params is None or isinstance(params, SamplingParams):
            params = [params or SamplingParams()] * len(prompts)
        if len(params) != len(prompts):
            raise ValueError(f"{len(prompts)} prompts but {len(params)} sampling params")
        ids = [self.engine.add_request(self._prompt_ids(p), sp) for p, sp in zip(prompts, params)]
        done: dict[str, RequestOutput] = {}
        bar = None
        if use_tqdm:
            from tqdm import tqdm
            bar = tqdm(total=len(ids), desc="generate")
        wanted = set(ids)
        while len(done) < len(ids):
            for o in self.engine.step().outputs:
                if o.finished and o.request_id in wanted:  # not another caller's leftover (e.g. an abort)
                    done[o.request_id] = o
                    if bar:
                        bar.update(1)
        if bar:
            bar.close()
        return [done[i] for i in ids]

    def chat(self, messages: Any, params: SamplingParams | Seq[SamplingParams] | None = None) -> list[RequestOutput]:
        """One conversation (list of messages) or several (list of lists), rendered with the model's template."""
        convs = [messages] if messages and isinstance(messages[0], dict) else list(messages)
        return self.generate([self.tokenizer.encode(self.tokenizer.render_chat(c)) for c in convs], params)
