"""A model as judge through any Engine (an OpenAI-compatible server or the built-in engine): structured
verdicts, a verdict cache; retries and fault handling are the engine's."""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Callable

from engine.base import Engine, EngineError, EngineOptions
from engine.openai.endpoints import split_base_url
from engine.openai.params import RequestParams
from judges.base import Judge, JudgeError, Verdict
from judges.llm.asking import PARAMETER_FLAGS, AskFailed, VerdictAsker
from judges.llm.cache import VerdictCache, cache_key, default_cache_root
from judges.llm.prompt import IMAGE_NOTE, PROMPT_VERSION, build_messages, prompt_sha256, question_of
from records import GenerationRecord

_THINK_END = "</think>"
OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"


def sanitise_model(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-.") or "model"


def _same_text(a: str, b: str) -> bool:
    return a.strip().strip("*`\"' .").casefold() == b.strip().strip("*`\"' .").casefold()


def _sendable(text: str) -> str:
    """Text that encodes as UTF-8: a lone surrogate (possible in a saved response) becomes '?'."""
    return text.encode("utf-8", "replace").decode("utf-8")


def openai_judge_engine(model: str, base_urls: list[str], api_key_env: str, timeout_s: float, max_retries: int,
                        retry_base_delay_s: float, token_param: str, send_temperature: str | bool,
                        reasoning_effort: str | None) -> Engine:
    """The OpenAI backend as a judge's engine; with no URL, OPENAI_BASE_URL or OpenAI's own API."""
    from engine.openai.backend import PLACEHOLDER_KEY, OpenAIEngine

    urls = base_urls or [os.environ.get("OPENAI_BASE_URL") or OPENAI_DEFAULT_BASE_URL]
    engine = OpenAIEngine(model, urls, api_key=os.environ.get(api_key_env) or PLACEHOLDER_KEY,
                          api_key_env=api_key_env, request_timeout_s=timeout_s, max_retries=max_retries,
                          retry_base_delay_s=retry_base_delay_s, token_param=token_param,
                          send_temperature=send_temperature,
                          extra_body={"reasoning_effort": reasoning_effort} if reasoning_effort else None)
    engine.parameter_flags = PARAMETER_FLAGS
    return engine


def native_judge_engine(model: str, base_urls: list[str], options: dict[str, Any] | None = None) -> Engine:
    """The built-in engine, in-process, for `--judge-engine native`; options: EngineOptions fields (device, ...)."""
    from judges.llm.native_engine import NativeJudgeEngine

    if base_urls:
        raise JudgeError("--judge-engine native runs the judge in-process; drop --judge-base-url")
    return NativeJudgeEngine.from_options(EngineOptions(model=model, **(options or {})))


class LLMJudge(Judge):
    """Asks a judge model whether a response's final answer matches the reference answer."""

    is_async = True

    def __init__(self, model: str, base_urls: list[str] | None = None, api_key_env: str = "OPENAI_API_KEY",
                 concurrency: int = 16, max_tokens: int = 2048, temperature: float = 0.0,
                 cache_dir: str | Path | None = None, use_cache: bool = True, max_retries: int = 5,
                 retry_base_delay_s: float = 1.0, timeout_s: float = 120.0, structured_output: bool = True,
                 pass_images: bool = False, make_nonce: Callable[[], str] | None = None,
                 token_param: str = "auto", send_temperature: str | bool = "auto",
                 reasoning_effort: str | None = None, engine: Engine | None = None) -> None:
        """engine: what answers the judge prompts; None builds the OpenAI backend over base_urls."""
        if not model:
            raise JudgeError("the llm judge needs a model: pass --judge-model NAME")
        if concurrency < 1 or max_retries < 0 or max_tokens < 1:
            raise JudgeError("judge concurrency and max tokens must be >= 1, max retries >= 0")
        self.model = model
        self.base_urls = list(base_urls or [])
        self.reasoning_effort = reasoning_effort or None
        try:
            self.params = RequestParams.for_model(model, token_param, send_temperature)
            if engine is None:
                engine = openai_judge_engine(model, self.base_urls, api_key_env, timeout_s, max_retries,
                                             retry_base_delay_s, token_param, send_temperature, self.reasoning_effort)
        except (ValueError, EngineError) as exc:
            raise JudgeError(f"judge: {exc}") from None
        if isinstance(getattr(engine, "params", None), RequestParams):
            self.params = engine.params  # what the engine learns from a 400 is what the judge reports
        self.engine = engine
        self.api_key_env = api_key_env
        self.concurrency = concurrency
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.pass_images = pass_images
        self._make_nonce = make_nonce
        self.asker = VerdictAsker(engine, max_tokens, temperature, structured_output, max_retries,
                                  retry_base_delay_s, timeout_s)
        self.prompt_hash = prompt_sha256(pass_images)
        self.settings = self._verdict_settings()
        self.settings_hash = hashlib.sha256(json.dumps(self.settings, sort_keys=True).encode()).hexdigest()
        # everything that can change a verdict is in the id, so two settings never share a folder or a verdict
        self.judge_id = f"llm-{sanitise_model(model)}-{self.settings_hash[:8]}"
        root = Path(cache_dir) if cache_dir else default_cache_root()
        self.cache = VerdictCache(root / self.judge_id / "cache.jsonl") if use_cache else None
        self._semaphore: asyncio.Semaphore | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def structured_output(self) -> bool:
        return self.asker.structured_output

    @property
    def requests_sent(self) -> int:
        return self.asker.requests_sent

    @classmethod
    def from_options(cls, judge_model: str | None = None, judge_base_url: str | list[str] | None = None,
                     judge_api_key_env: str = "OPENAI_API_KEY", judge_concurrency: int = 16,
                     judge_max_tokens: int = 2048, judge_temperature: float = 0.0,
                     cache_dir: str | Path | None = None, judge_no_cache: bool = False,
                     judge_max_retries: int = 5, judge_retry_base_delay_s: float = 1.0,
                     judge_timeout_s: float = 120.0, judge_structured_output: bool = True,
                     judge_pass_images: bool = False, judge_token_param: str = "auto",
                     judge_send_temperature: str = "auto", judge_reasoning_effort: str | None = None,
                     judge_engine: str = "openai", judge_native_options: dict[str, Any] | None = None,
                     **ignored: Any) -> "LLMJudge":
        """judge_engine: 'openai' (a server at judge_base_url) or 'native' (the built-in engine, in-process, built
        with judge_native_options: EngineOptions fields such as device, dtype, threads)."""
        urls = [judge_base_url] if isinstance(judge_base_url, str) else list(judge_base_url or [])
        engine = None
        if judge_engine == "native":
            from engine.native.model_registry import DEFAULT_MODEL

            judge_model = judge_model or DEFAULT_MODEL
            engine = native_judge_engine(judge_model, urls, judge_native_options)
        elif judge_engine != "openai":
            raise JudgeError(f"--judge-engine must be openai or native, got {judge_engine!r}")
        return cls(model=judge_model or "", base_urls=urls, api_key_env=judge_api_key_env or "OPENAI_API_KEY",
                   concurrency=judge_concurrency or 16, max_tokens=judge_max_tokens or 2048,
                   temperature=judge_temperature if judge_temperature is not None else 0.0,
                   cache_dir=cache_dir, use_cache=not judge_no_cache,
                   max_retries=5 if judge_max_retries is None else judge_max_retries,
                   retry_base_delay_s=1.0 if judge_retry_base_delay_s is None else judge_retry_base_delay_s,
                   timeout_s=judge_timeout_s or 120.0, structured_output=judge_structured_output,
                   pass_images=judge_pass_images, token_param=judge_token_param or "auto",
                   send_temperature=judge_send_temperature or "auto", reasoning_effort=judge_reasoning_effort,
                   engine=engine)

    def _verdict_settings(self) -> dict[str, Any]:
        """What the judge model is asked and how it samples: the settings a verdict depends on."""
        return {"model": self.model, "prompt_sha256": self.prompt_hash,
                "temperature": self.temperature if self.params.send_temperature else None,
                "max_tokens": self.max_tokens, "structured_output": self.structured_output,
                "reasoning_effort": self.reasoning_effort}

    def _cache_scope(self) -> str:
        """The judge id, plus the settings in force when a 400 made the judge drop one (e.g. temperature)."""
        now = {**self.settings, "temperature": self.temperature if self.params.send_temperature else None,
               "dropped": sorted(self.params.dropped)}
        asked = {**self.settings, "dropped": []}
        return self.judge_id if now == asked else f"{self.judge_id}|{json.dumps(now, sort_keys=True)}"

    def config(self) -> dict[str, Any]:
        return {
            "name": "llm", "judge_id": self.judge_id, "model": self.model, "engine": self.engine.name,
            "base_urls": [split_base_url(u).public for u in self.base_urls],  # no query or user:password
            "api_key_env": self.api_key_env, "prompt_version": PROMPT_VERSION, "prompt_sha256": self.prompt_hash,
            "settings_sha256": self.settings_hash, "temperature": self.settings["temperature"],
            "max_tokens": self.max_tokens, "reasoning_effort": self.reasoning_effort,
            "concurrency": self.concurrency, "structured_output": self.structured_output,
            "max_retries": self.max_retries, "pass_images": self.pass_images,
            "request_params": self.params.describe(),
            "cache": str(self.cache.path) if self.cache is not None else None,
        }

    def bind_grades_dir(self, grades_dir: str | Path) -> None:
        """Keep this judge's cache beside its grades (the folder rundir gives the judge): <grades_dir>/cache.jsonl."""
        if self.cache is not None:
            self.cache = VerdictCache(Path(grades_dir) / "cache.jsonl")

    async def aclose(self) -> None:
        await self.engine.aclose()

    # -- grading -----------------------------------------------------------------------------------

    async def agrade(self, record: GenerationRecord) -> Verdict:
        base = {"judge_model": self.model, "cached": False}
        if record.finish_reason == "error":
            return Verdict(False, None, "no_answer", {**base, "reasoning": "generation failed; nothing to judge"})
        question, images = question_of(record.messages)
        response = record.response.rsplit(_THINK_END, 1)[-1].strip()  # grade the answer, not the thinking
        if not response:
            return Verdict(False, None, "no_answer", {**base, "confidence": 100, "reasoning": "empty response"})
        key = cache_key(self._cache_scope(), record.task, record.item_id, record.sample, question, record.target,
                        record.response)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            return Verdict(hit["correct"], hit["extracted"], hit["status"], {**hit["detail"], "cached": True})

        if images and not self.pass_images:
            question, images = f"{question}\n{IMAGE_NOTE}", []
        messages = build_messages(_sendable(question), _sendable(record.target), _sendable(response), images,
                                  **({"make_nonce": self._make_nonce} if self._make_nonce else {}))
        async with self._bound():
            try:
                parsed, mode, attempts = await self.asker.ask(messages)
            except AskFailed as exc:  # the engine already removed keys and URL secrets from its errors
                return Verdict(None, None, "judge_error", {**base, "error": str(exc), "attempts": exc.attempts})
        detail = {**base, "confidence": parsed.confidence, "reasoning": parsed.reasoning, "attempts": attempts,
                  "output_mode": mode}
        extracted = parsed.extracted
        if extracted is None and parsed.stated and _same_text(parsed.stated, record.target):
            extracted = parsed.stated  # the reference itself is "None" or "N/A": an answer, not a missing one
        if extracted is None:
            verdict = Verdict(False, None, "no_answer", detail)
        else:
            verdict = Verdict(parsed.correct, extracted, "graded", detail)
        if self.cache is not None:
            stored = {"correct": verdict.correct, "extracted": verdict.extracted, "status": verdict.status,
                      "detail": {k: v for k, v in detail.items() if k != "cached"}}
            self.cache.put(key, stored, record.item_id, record.sample)
        return verdict

    def _bound(self) -> asyncio.Semaphore:
        """The limit on requests in flight, made in the running loop (a judge may outlive one loop)."""
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._loop is not loop:
            self._semaphore, self._loop = asyncio.Semaphore(self.concurrency), loop
        return self._semaphore
