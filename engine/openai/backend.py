"""The `openai` engine: any OpenAI-compatible server (vLLM, SGLang, TensorRT-LLM, the built-in server).

Streamed requests go through the official `openai` client, and non-streamed ones through a lean aiohttp
post on the aiohttp transport (engine/openai/raw.py), both with no retries of their own, so the policy here
is the only one: exponential backoff with full jitter on 429, 5xx, 408/409, timeouts, connection errors and
malformed replies; failover to another base URL on connection errors. A request that still fails
comes back as Completion(finish_reason="error", error=...), never as response text.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from typing import Any, AsyncIterator

from openai import AsyncStream

from engine.base import ChatRequest, Completion, Engine, EngineError, EngineOptions, OPENAI_TUNING_FIELDS, StreamDelta
from engine.openai.clients import ClientFactory, resolve_transport
from engine.openai.endpoints import Endpoint, EndpointPool, normalise_base_url, scrub, split_base_url
from engine.openai.faults import Fault, backoff_delay, classify, httpx_lib
from engine.openai.params import RequestParams, rejection_hint
from engine.openai.raw import FaultError
from engine.openai.replies import StreamState, parse_completion

log = logging.getLogger(__name__)

PLACEHOLDER_KEY = "EMPTY"  # what vLLM/SGLang users pass when the server has no key


class _Retry:
    """The retry budget and failover state of one request."""

    def __init__(self, engine: "OpenAIEngine"):
        self.engine = engine
        self.started = time.perf_counter()
        self.attempts = 0
        self.retries = 0
        self.adjustments = 0  # request parameters changed after a 400 that named one
        self.dead: set[str] = set()  # endpoints whose connection failed during this request

    async def again(self, fault: Fault, endpoint: Endpoint) -> bool:
        """Decide whether to try again; sleeps the backoff when it does."""
        pool = self.engine.pool
        if fault.kind == "connection":
            if fault.unreachable:  # refused or unroutable; a reset on a reused socket is not a dead server
                pool.mark_down(endpoint)
            self.dead.add(endpoint.url)
            if pool.others_up(self.dead):
                log.debug("failing over from %s: %s", endpoint.name, self.engine.redact(fault.message))
                return True  # another server is up: switching is free and immediate
        if not fault.retryable or self.retries >= self.engine.max_retries:
            return False
        self.retries += 1
        delay = backoff_delay(self.retries, self.engine.retry_base_delay_s, self.engine.max_retry_delay_s,
                              fault.retry_after_s)
        log.debug("retry %d in %.3fs after %s", self.retries, delay, self.engine.redact(fault.describe()))
        await asyncio.sleep(delay)
        return True

    def next_endpoint(self) -> tuple[Endpoint, Any]:
        """Count an attempt and take the least-busy endpoint (and client shard) not dead for this request."""
        self.attempts += 1
        return self.engine.pool.acquire(self.dead)

    def succeeded(self, completion: Completion, endpoint: Endpoint) -> Completion:
        """A reply came: its endpoint is up; the completion gets the request's latency and attempt count."""
        self.engine.pool.mark_up(endpoint)
        completion.latency_s = time.perf_counter() - self.started
        completion.attempts = self.attempts
        return completion


class OpenAIEngine(Engine):
    """Chat completions against one or more OpenAI-compatible base URLs."""

    name = "openai"
    supports_images = True  # messages pass through unchanged, image_url parts included
    parameter_flags = ("--token-param", "--send-temperature")  # named when a parameter is rejected again

    def __init__(self, model: str, base_urls: list[str], api_key: str = PLACEHOLDER_KEY,
                 api_key_env: str = "OPENAI_API_KEY", request_timeout_s: float = 600.0, max_retries: int = 5,
                 retry_base_delay_s: float = 1.0, max_retry_delay_s: float = 60.0, down_cooldown_s: float = 5.0,
                 http_transport: str = "auto", max_connections: int = 4096, pool_shards: int = 64,
                 continuous_usage_stats: bool = False, extra_body: dict[str, Any] | None = None,
                 token_param: str = "auto", send_temperature: str | bool = "auto"):
        if not model:
            raise EngineError("the openai engine needs --model: the model name the server lists at GET /v1/models")
        problems = []
        if not request_timeout_s > 0:
            problems.append(f"request timeout must be > 0 s, got {request_timeout_s!r}")
        if not isinstance(max_retries, int) or max_retries < 0:
            problems.append(f"max_retries must be an integer >= 0, got {max_retries!r}")
        if not retry_base_delay_s >= 0 or not max_retry_delay_s >= 0:
            problems.append("retry delays must be >= 0 s")
        if problems:
            raise EngineError("; ".join(problems))
        self.model = model
        self.base_urls = [normalise_base_url(u) for u in base_urls]
        self._api_key = api_key or PLACEHOLDER_KEY
        self.api_key_env = api_key_env
        self.request_timeout_s = float(request_timeout_s)
        self.max_retries = max_retries
        self.retry_base_delay_s = float(retry_base_delay_s)
        self.max_retry_delay_s = float(max_retry_delay_s)
        self.continuous_usage_stats = continuous_usage_stats
        self.extra_body = dict(extra_body or {})
        try:
            self.params = RequestParams.for_model(model, token_param, send_temperature)
        except ValueError as exc:
            raise EngineError(str(exc)) from None
        self.http_transport = resolve_transport(http_transport)
        # aiohttp picks a pooled connection in O(1); httpx scans its whole pool per request, so it gets
        # many small pools instead (see engine/openai/endpoints.py).
        shards = 1 if self.http_transport == "aiohttp" else max(1, pool_shards)
        self._factory = ClientFactory(self._api_key, self.request_timeout_s, self.http_transport,
                                      max(1, -(-max_connections // shards)))
        self.pool = EndpointPool(self.base_urls, self._factory, shards, down_cooldown_s)
        key = [self._api_key] if self._api_key != PLACEHOLDER_KEY and len(self._api_key) >= 4 else []
        self._secrets = key + [x for u in self.base_urls for x in split_base_url(u).secrets()]

    @classmethod
    def from_options(cls, options: EngineOptions) -> "OpenAIEngine":
        if not options.model:
            raise EngineError("the openai engine needs --model: the model name the server lists at GET /v1/models")
        if not options.base_urls:
            raise EngineError("the openai engine needs --base-url, e.g. http://127.0.0.1:8000/v1 "
                              "(repeat it to spread requests over several servers)")
        env = options.api_key_env
        tuning = {k: getattr(options, k) for k in OPENAI_TUNING_FIELDS if getattr(options, k) is not None}
        return cls(model=options.model, base_urls=list(options.base_urls),
                   api_key=(os.environ.get(env) if env else None) or PLACEHOLDER_KEY, api_key_env=env,
                   request_timeout_s=options.request_timeout_s, max_retries=options.max_retries,
                   retry_base_delay_s=options.retry_base_delay_s, **tuning)

    def redact(self, text: str) -> str:
        """Remove the API key and base-URL secrets from text bound for errors and logs (servers may echo them)."""
        return scrub(text, self._secrets)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.model, "base_urls": [e.name for e in self.pool.endpoints],
                "request_params": self.params.describe()}

    def _body(self, request: ChatRequest, stream: bool) -> dict[str, Any]:
        p = request.params
        body: dict[str, Any] = {"model": self.model, "messages": request.messages}
        # top_k, stop_token_ids and logprobs are not in OpenAI's own API (which rejects unknown fields), so
        # they are sent only when asked for; vLLM and SGLang read them as top-level fields.
        self.params.apply(body, p.max_tokens, {
            "temperature": p.temperature, "top_p": p.top_p, "seed": p.seed,
            "top_k": p.top_k if p.top_k > 0 else None, "logprobs": True if p.logprobs else None,
        })
        if p.stop:
            body["stop"] = list(p.stop)
        if p.stop_token_ids:
            body["stop_token_ids"] = list(p.stop_token_ids)
        if request.response_format is not None:
            body["response_format"] = request.response_format
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
            if self.continuous_usage_stats:  # vLLM/SGLang: usage in every chunk, exact tokens per chunk
                body["stream_options"]["continuous_usage_stats"] = True
        body.update(self.extra_body)
        return body

    def _learned_from(self, fault: Fault, body: dict[str, Any], retry: _Retry) -> bool:
        """A 400 naming an unsupported parameter: rename or drop it (kept for later requests), retry at once.
        A parameter that is rejected again gets a message naming the flag that controls it."""
        if fault.status != 400 or retry.adjustments >= 4:
            return False
        known = len(self.params.changes)
        outcome = self.params.adjust(fault.message, body)
        if outcome == "retry":
            retry.adjustments += 1
            retry.attempts -= 1  # asking again with a renamed or dropped parameter is no retry
            if len(self.params.changes) > known:  # once per change, not once per request in flight
                log.warning("model %s: %s; request parameters now %s", self.model, fault.message,
                            self.params.describe())
            return True
        if outcome == "reported":
            fault.message = rejection_hint(fault.message, self.model, *self.parameter_flags)
        return False

    def _failed(self, retry: _Retry, fault: Fault, endpoint: Endpoint, partial: str | None = None) -> Completion:
        outcome = "not retried" if not fault.retryable else f"gave up after {retry.attempts} attempt(s)"
        error = self.redact(f"{fault.describe()} (from {endpoint.name}; {outcome})")
        completion = Completion.failed(error, latency_s=time.perf_counter() - retry.started, attempts=retry.attempts)
        completion.extra.update(error_kind=fault.kind, status=fault.status)
        if partial:
            completion.extra["partial_text"] = partial
        return completion

    async def chat(self, request: ChatRequest) -> Completion:
        retry = _Retry(self)
        body = self._body(request, stream=False)
        while True:
            endpoint, shard = retry.next_endpoint()
            try:
                completion = parse_completion(await self._post_chat(shard, endpoint, body))
            except FaultError as exc:
                fault = exc.fault
            except Exception as exc:
                fault = classify(exc)
            else:
                return retry.succeeded(completion, endpoint)
            finally:
                self.pool.release(endpoint, shard)
            if self._learned_from(fault, body, retry):
                body = self._body(request, stream=False)
                continue
            if not await retry.again(fault, endpoint):
                return self._failed(retry, fault, endpoint)

    async def _post_chat(self, shard: Any, endpoint: Endpoint, body: dict[str, Any]) -> bytes:
        """The reply body of one non-streamed request. On the aiohttp transport a lean session skips the SDK's
        request machinery (most of the client's CPU per request, engine/openai/raw.py); else the SDK's raw post
        (no parameter transform or response models), so a reply that is no completion reads as malformed."""
        if shard.raw is None and self.http_transport == "aiohttp":
            shard.raw = self._factory.raw_session(endpoint.url)
        if shard.raw is not None:
            return await shard.raw.post("/chat/completions", body)
        response = await shard.client.post("/chat/completions", body=body, cast_to=httpx_lib.Response)
        return response.content

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        """SSE streaming; faults before the first token are retried, later ones end the stream with an error."""
        retry = _Retry(self)
        body = self._body(request, stream=True)
        while True:
            endpoint, shard = retry.next_endpoint()
            state = StreamState()
            sse: AsyncStream[dict] | None = None
            try:
                sse = await shard.client.post("/chat/completions", body=body, cast_to=dict, stream=True,
                                              stream_cls=AsyncStream[dict])
                async for chunk in sse:
                    delta = state.add(chunk, time.perf_counter() - retry.started)
                    if delta is not None:
                        yield delta
                completion = state.finish()
            except Exception as exc:
                fault = classify(exc)
            else:
                yield StreamDelta(text="", token_count=0, final=retry.succeeded(completion, endpoint))
                return
            finally:
                if sse is not None:
                    try:
                        await sse.close()
                    except Exception:  # the socket may already be gone; the fault is reported above
                        pass
                self.pool.release(endpoint, shard)
            if not state.emitted and self._learned_from(fault, body, retry):
                body = self._body(request, stream=True)
                continue
            if state.emitted or not await retry.again(fault, endpoint):
                # Text already reached the caller cannot be taken back, so no retry after the first token.
                yield StreamDelta(text="", token_count=0,
                                  final=self._failed(retry, fault, endpoint, "".join(state.text)))
                return

    async def _probe(self, endpoint: Endpoint) -> tuple[list[str] | None, str | None]:
        """GET /models on one endpoint: (served model ids or None when unlisted, error or None)."""
        # A client of its own, closed here: check_ready may run in another event loop than the requests.
        client = self._factory(endpoint.url)
        try:
            response = await client.get("/models", cast_to=httpx_lib.Response,
                                        options={"timeout": min(self.request_timeout_s, 10.0)})
        except Exception as exc:
            return self._probe_fault(endpoint, classify(exc))
        finally:
            await client.close()
        try:
            return [str(m["id"]) for m in json.loads(response.content)["data"]], None
        except (ValueError, KeyError, TypeError):
            return None, None

    def _probe_fault(self, endpoint: Endpoint, fault: Fault) -> tuple[None, str | None]:
        if fault.status in (401, 403):
            raise EngineError(self.redact(
                f"the server at {endpoint.name} refused the API key (HTTP {fault.status}: {fault.message}); "
                f"set the key in the environment variable {self.api_key_env}"))
        if fault.status == 404:  # reachable, but it does not list models: nothing to check against
            log.warning("GET %s/models answered 404; requests will go to %s/chat/completions "
                        "(OpenAI-compatible servers usually serve both under a base URL ending in /v1)",
                        endpoint.name, endpoint.name)
            return None, None
        return None, self.redact(fault.describe())

    async def check_ready(self) -> None:
        """Raise EngineError when no base URL answers or the model is not served."""
        results = await asyncio.gather(*(self._probe(e) for e in self.pool.endpoints))
        probes = list(zip(self.pool.endpoints, results))
        if all(err is not None for _, (_, err) in probes):
            raise EngineError("; ".join(f"cannot reach the OpenAI-compatible server at {e.name}: {err}"
                                        for e, (_, err) in probes))
        for endpoint, (models, err) in probes:
            if err is not None:
                log.warning("cannot reach %s (%s); sending requests to the other base URLs", endpoint.name, err)
                self.pool.mark_down(endpoint)
            elif models is not None and self.model not in models:
                raise EngineError(f"model {self.model!r} is not served at {endpoint.name}; "
                                  f"served models: {', '.join(models) or '(none)'}")

    async def aclose(self) -> None:
        await self.pool.aclose()
