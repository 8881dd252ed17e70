"""A model as judge over any OpenAI-compatible server: structured verdicts, retries, a verdict cache."""
from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import random
import re
from pathlib import Path
from typing import Any, Callable

import openai

from engine.base import EngineError
from engine.openai_endpoints import scrub, split_base_url
from engine.openai_params import RequestParams, rejection_hint
from judges.base import Judge, JudgeConfigError, JudgeError, Verdict
from judges.llm.cache import VerdictCache, cache_key, default_cache_root
from judges.llm.parsing import ParseError, ParsedVerdict, parse_reply
from judges.llm.prompt import IMAGE_NOTE, PROMPT_VERSION, RESPONSE_FORMAT, build_messages, prompt_sha256, question_of
from records import GenerationRecord

log = logging.getLogger(__name__)
_THINK_END = "</think>"


class _Failed(Exception):
    """The judge could not produce a verdict after its retries."""

    def __init__(self, message: str, attempts: int) -> None:
        super().__init__(message)
        self.attempts = attempts


def sanitise_model(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-.") or "model"


def _same_text(a: str, b: str) -> bool:
    return a.strip().strip("*`\"' .").casefold() == b.strip().strip("*`\"' .").casefold()


def _sendable(text: str) -> str:
    """Text that encodes as UTF-8: a lone surrogate (possible in a saved response) becomes '?'."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _error_message(exc: openai.APIStatusError) -> str:
    """The server's own message from an OpenAI-style error body (what names a rejected parameter)."""
    body = exc.body
    inner = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(inner, dict) and inner.get("message"):
        return str(inner["message"])
    return str(inner) if isinstance(inner, str) else str(exc)


class LLMJudge(Judge):
    """Asks a judge model whether a response's final answer matches the reference answer."""

    is_async = True

    def __init__(self, model: str, base_urls: list[str] | None = None, api_key_env: str = "OPENAI_API_KEY",
                 concurrency: int = 16, max_tokens: int = 2048, temperature: float = 0.0,
                 cache_dir: str | Path | None = None, use_cache: bool = True, max_retries: int = 5,
                 retry_base_delay_s: float = 1.0, timeout_s: float = 120.0, structured_output: bool = True,
                 pass_images: bool = False, make_nonce: Callable[[], str] | None = None,
                 token_param: str = "auto", send_temperature: str | bool = "auto",
                 reasoning_effort: str | None = None) -> None:
        if not model:
            raise JudgeError("the llm judge needs a model: pass --judge-model NAME")
        if concurrency < 1 or max_retries < 0 or max_tokens < 1:
            raise JudgeError("judge concurrency and max tokens must be >= 1, max retries >= 0")
        try:
            self.params = RequestParams.for_model(model, token_param, send_temperature)
        except ValueError as exc:
            raise JudgeError(f"judge: {exc}") from None
        self.model = model
        self.base_urls = list(base_urls or [])
        try:
            self._url_secrets = [x for url in self.base_urls for x in split_base_url(url).secrets()]
        except EngineError as exc:
            raise JudgeError(str(exc)) from None
        self.api_key_env = api_key_env
        self.concurrency = concurrency
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.max_retries = max_retries
        self.retry_base_delay_s = retry_base_delay_s
        self.timeout_s = timeout_s
        self.structured_output = structured_output
        self.pass_images = pass_images
        self.reasoning_effort = reasoning_effort or None
        self._make_nonce = make_nonce
        self.prompt_hash = prompt_sha256(pass_images)
        self.settings = self._verdict_settings()
        self.settings_hash = hashlib.sha256(json.dumps(self.settings, sort_keys=True).encode()).hexdigest()
        # everything that can change a verdict is in the id, so two settings never share a folder or a verdict
        self.judge_id = f"llm-{sanitise_model(model)}-{self.settings_hash[:8]}"
        root = Path(cache_dir) if cache_dir else default_cache_root()
        self.cache = VerdictCache(root / self.judge_id / "cache.jsonl") if use_cache else None
        self.requests_sent = 0
        self._clients: list[openai.AsyncOpenAI] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._next_client = 0

    @classmethod
    def from_options(cls, judge_model: str | None = None, judge_base_url: str | list[str] | None = None,
                     judge_api_key_env: str = "OPENAI_API_KEY", judge_concurrency: int = 16,
                     judge_max_tokens: int = 2048, judge_temperature: float = 0.0,
                     cache_dir: str | Path | None = None, judge_no_cache: bool = False,
                     judge_max_retries: int = 5, judge_retry_base_delay_s: float = 1.0,
                     judge_timeout_s: float = 120.0, judge_structured_output: bool = True,
                     judge_pass_images: bool = False, judge_token_param: str = "auto",
                     judge_send_temperature: str = "auto", judge_reasoning_effort: str | None = None,
                     **ignored: Any) -> "LLMJudge":
        urls = [judge_base_url] if isinstance(judge_base_url, str) else list(judge_base_url or [])
        return cls(model=judge_model or "", base_urls=urls, api_key_env=judge_api_key_env or "OPENAI_API_KEY",
                   concurrency=judge_concurrency or 16, max_tokens=judge_max_tokens or 2048,
                   temperature=judge_temperature if judge_temperature is not None else 0.0,
                   cache_dir=cache_dir, use_cache=not judge_no_cache,
                   max_retries=5 if judge_max_retries is None else judge_max_retries,
                   retry_base_delay_s=1.0 if judge_retry_base_delay_s is None else judge_retry_base_delay_s,
                   timeout_s=judge_timeout_s or 120.0, structured_output=judge_structured_output,
                   pass_images=judge_pass_images, token_param=judge_token_param or "auto",
                   send_temperature=judge_send_temperature or "auto", reasoning_effort=judge_reasoning_effort)

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
            "name": "llm", "judge_id": self.judge_id, "model": self.model,
            "base_urls": [split_base_url(u).public for u in self.base_urls],  # no query or user:password
            "api_key_env": self.api_key_env, "prompt_version": PROMPT_VERSION, "prompt_sha256": self.prompt_hash,
            "settings_sha256": self.settings_hash, "temperature": self.settings["temperature"],
            "max_tokens": self.max_tokens, "reasoning_effort": self.reasoning_effort,
            "concurrency": self.concurrency, "structured_output": self.structured_output,
            "max_retries": self.max_retries, "pass_images": self.pass_images,
            "request_params": self.params.describe(),
            "cache": str(self.cache.path) if self.cache is not None else None,
        }

    def bind_run_dir(self, run_dir: str | Path, folder: str | None = None) -> None:
        """Keep this judge's cache beside its grades: runs/NAME/grades/<folder or judge_id>/cache.jsonl."""
        if self.cache is not None:
            self.cache = VerdictCache(Path(run_dir) / "grades" / (folder or self.judge_id) / "cache.jsonl")

    # -- clients -----------------------------------------------------------------------------------

    def _ensure_clients(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is loop and self._clients:
            return
        key = os.environ.get(self.api_key_env) or "EMPTY"  # local servers accept any key
        urls = self.base_urls or [None]  # None: the client's default (OPENAI_BASE_URL or api.openai.com)
        self._clients = [openai.AsyncOpenAI(api_key=key, max_retries=0, timeout=self.timeout_s,
                                            **(split_base_url(u).client_kwargs() if u else {"base_url": None}))
                         for u in urls]
        self._semaphore = asyncio.Semaphore(self.concurrency)
        self._loop = loop

    def _client(self) -> openai.AsyncOpenAI:
        client = self._clients[self._next_client % len(self._clients)]
        self._next_client += 1
        return client

    async def aclose(self) -> None:
        for client in self._clients:
            try:
                await client.close()
            except RuntimeError:
                pass  # its event loop is already gone
        self._clients = []

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
        self._ensure_clients()
        assert self._semaphore is not None
        async with self._semaphore:
            try:
                parsed, mode, attempts = await self._ask(messages)
            except _Failed as exc:
                error = scrub(str(exc), self._url_secrets)  # a server may echo its URL's query or password
                return Verdict(None, None, "judge_error", {**base, "error": error, "attempts": exc.attempts})
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

    def _backoff(self, attempt: int, retry_after: float | None = None) -> float:
        delay = self.retry_base_delay_s * (2**attempt) * random.uniform(0.5, 1.5)
        if retry_after is not None:
            delay = max(delay, retry_after)
        return min(delay, 60.0)

    async def _ask(self, messages: list[dict[str, Any]]) -> tuple[ParsedVerdict, str, int]:
        """One verdict with retries on 429/5xx/timeouts/unreadable replies; _Failed when they run out."""
        last_error = "no attempt made"
        attempt = adjustments = 0
        structured = self.structured_output
        while attempt <= self.max_retries:
            kwargs: dict[str, Any] = self.params.apply({"model": self.model, "messages": messages}, self.max_tokens,
                                                       {"temperature": self.temperature})
            if self.reasoning_effort:
                kwargs["reasoning_effort"] = self.reasoning_effort
            if structured:
                kwargs["response_format"] = RESPONSE_FORMAT
            retry_after = None
            try:
                self.requests_sent += 1
                reply = await self._client().chat.completions.create(**kwargs)
                choice = reply.choices[0] if reply.choices else None
                text = choice.message.content if choice is not None else None
                try:
                    parsed = parse_reply(text)
                except ParseError as exc:
                    if choice is not None and choice.finish_reason == "length":
                        # the same request would be cut the same way again: no retry
                        raise _Failed(f"judge reply cut at max_tokens={self.max_tokens} (raise "
                                      f"--judge-max-tokens): {exc}", attempt + 1) from None
                    raise
                if not structured and self.structured_output:
                    # a 400 with response_format, then success without it: the server lacks json_schema
                    log.warning("judge server rejected structured output; using plain-text replies from now on")
                    self.structured_output = False
                return parsed, "json_schema" if structured else "text", attempt + 1
            except openai.BadRequestError as exc:
                known = len(self.params.changes)
                outcome = self.params.adjust(_error_message(exc), kwargs) if adjustments < 4 else "other"
                if outcome == "retry":  # a parameter renamed or dropped for this model: ask again at no retry cost
                    adjustments += 1
                    if len(self.params.changes) > known:  # once per change, not per request in flight
                        log.warning("judge model %s: %s; request parameters now %s", self.model,
                                    _error_message(exc), self.params.describe())
                    continue
                if outcome == "reported":  # every request would fail the same way: stop the stage, say why
                    raise JudgeConfigError(rejection_hint(_error_message(exc), self.model, "--judge-token-param",
                                                          "--judge-send-temperature")) from None
                if structured:
                    structured = False  # ask again in plain text, at no retry cost
                    continue
                raise _Failed(f"judge request rejected: HTTP 400: {_short(exc)}", attempt + 1) from None
            except ParseError as exc:
                last_error = f"unreadable judge reply: {exc}"
            except (openai.RateLimitError, openai.InternalServerError) as exc:
                last_error = f"HTTP {exc.status_code}: {_short(exc)}"
                retry_after = _retry_after(exc)
            except openai.APIStatusError as exc:
                if exc.status_code < 500 and exc.status_code not in (408, 409):
                    raise _Failed(f"judge request failed: HTTP {exc.status_code}: {_short(exc)}", attempt + 1) from None
                last_error = f"HTTP {exc.status_code}: {_short(exc)}"
            except openai.APITimeoutError:
                last_error = f"judge request timed out after {self.timeout_s:g} s"
            except openai.APIConnectionError as exc:
                last_error = f"cannot reach judge server: {_short(exc)}"
            except (AttributeError, TypeError, ValueError) as exc:  # a body the client could not map
                last_error = f"malformed judge response: {exc}"
            attempt += 1
            if attempt <= self.max_retries:
                await asyncio.sleep(self._backoff(attempt - 1, retry_after))
        raise _Failed(f"{last_error} (after {attempt} attempts)", attempt)


def _short(exc: Exception) -> str:
    return str(exc).replace("\n", " ")[:200]


def _retry_after(exc: openai.APIStatusError) -> float | None:
    try:
        value = exc.response.headers.get("retry-after")
        return float(value) if value else None
    except (AttributeError, ValueError):
        return None
