"""The engine interface the harness stages use: chat requests in, completions out."""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Any, AsyncIterator


class EngineError(Exception):
    """An engine that cannot start or cannot be used at all (not a per-request fault)."""


@dataclass(frozen=True)
class SamplingParams:
    """Sampling settings for one request; validated so bad values fail before any work."""

    max_tokens: int = 1024
    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int = 0  # 0 disables top-k
    seed: int | None = None
    stop: tuple[str, ...] = ()
    stop_token_ids: tuple[int, ...] = ()
    logprobs: bool = False

    def __post_init__(self) -> None:
        problems = []
        if not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            problems.append(f"max_tokens must be an integer >= 1, got {self.max_tokens!r}")
        if not (isinstance(self.temperature, (int, float)) and math.isfinite(self.temperature) and self.temperature >= 0):
            problems.append(f"temperature must be a finite number >= 0, got {self.temperature!r}")
        if not (isinstance(self.top_p, (int, float)) and 0 < self.top_p <= 1):
            problems.append(f"top_p must be in (0, 1], got {self.top_p!r}")
        if not isinstance(self.top_k, int) or self.top_k < 0:
            problems.append(f"top_k must be an integer >= 0 (0 = off), got {self.top_k!r}")
        if self.seed is not None and not isinstance(self.seed, int):
            problems.append(f"seed must be an integer, got {self.seed!r}")
        if problems:
            raise ValueError("; ".join(problems))
        object.__setattr__(self, "stop", tuple(self.stop))
        object.__setattr__(self, "stop_token_ids", tuple(self.stop_token_ids))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["stop"] = list(self.stop)
        d["stop_token_ids"] = list(self.stop_token_ids)
        return d


@dataclass
class ChatRequest:
    """One chat request: OpenAI-format messages (content may be a list of text/image_url parts)."""

    request_id: str
    messages: list[dict[str, Any]]
    params: SamplingParams
    # OpenAI's response_format (json_object / json_schema); None asks for free text
    response_format: dict[str, Any] | None = None

    @property
    def has_images(self) -> bool:
        for m in self.messages:
            content = m.get("content")
            if isinstance(content, list) and any(p.get("type") == "image_url" for p in content):
                return True
        return False


@dataclass
class Completion:
    """The outcome of one request. Faults are reported here (finish_reason 'error'), never raised."""

    text: str
    finish_reason: str  # "stop" | "length" | "error"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    ttft_s: float | None = None
    error: str | None = None
    attempts: int = 1
    logprobs: list[float] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def failed(cls, error: str, latency_s: float = 0.0, attempts: int = 1) -> "Completion":
        return cls(text="", finish_reason="error", error=error, latency_s=latency_s, attempts=attempts)


@dataclass
class StreamDelta:
    """A streamed piece of a completion; the last one carries the finished Completion."""

    text: str
    token_count: int = 0
    final: Completion | None = None


# EngineOptions fields the OpenAI backend takes as constructor tuning when set (None: its own default).
OPENAI_TUNING_FIELDS = ("max_retry_delay_s", "down_cooldown_s", "http_transport", "max_connections", "pool_shards",
                        "continuous_usage_stats", "extra_body", "token_param", "send_temperature")


@dataclass
class EngineOptions:
    """Everything the CLI can say about an engine, each option a typed field; each backend reads the fields it
    needs. None means "the backend's default"."""

    model: str | None = None
    # OpenAI-compatible servers (engine/openai/backend.py)
    base_urls: list[str] = field(default_factory=list)
    api_key_env: str = "OPENAI_API_KEY"
    request_timeout_s: float = 600.0
    max_retries: int = 5
    retry_base_delay_s: float = 1.0
    max_retry_delay_s: float | None = None
    down_cooldown_s: float | None = None
    http_transport: str | None = None  # auto | aiohttp | httpx
    max_connections: int | None = None
    pool_shards: int | None = None
    continuous_usage_stats: bool | None = None
    extra_body: dict[str, Any] | None = None  # merged into every request body
    token_param: str | None = None  # auto | max_tokens | max_completion_tokens
    send_temperature: str | None = None  # auto | yes | no
    # the built-in engine (engine/native/backend.py); the flags are declared in harness/commands/native_flags.py
    device: str | None = None
    dtype: str | None = None
    threads: int | None = None
    kv_cache_gib: float | None = None
    max_model_len: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    block_size: int | None = None
    enable_prefix_caching: bool | None = None
    max_prefill_chunk: int | None = None
    int4: bool | None = None  # None: use the 4-bit codes whenever possible
    kv_cache_dtype: str | None = None  # None/"auto": the model's dtype; "int8": 8-bit K/V rows (engine/native/kv_quant.py)
    nextn: int = 0  # MTP draft tokens per step; 0 = no speculative decoding
    tp: int = 1
    ep: int = 1
    dp_attention: bool = False
    dist_timeout_s: float = 300.0
    chat_template_kwargs: dict[str, Any] | None = None



class Engine(ABC):
    """A text generator the stages drive with bounded concurrency."""

    name: str = "engine"
    supports_images: bool = False

    @abstractmethod
    async def chat(self, request: ChatRequest) -> Completion:
        """Run one request; request-level faults come back as a Completion with finish_reason 'error'."""

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamDelta]:
        """Stream one request; the default yields the whole completion at once."""
        completion = await self.chat(request)
        yield StreamDelta(text=completion.text, token_count=completion.completion_tokens, final=completion)

    async def check_ready(self) -> None:
        """Raise EngineError when the engine cannot serve at all (server down, model missing)."""

    def describe(self) -> dict[str, Any]:
        """Engine identity and settings for run.json; never includes secrets."""
        return {"name": self.name}

    async def aclose(self) -> None:
        """Release sockets, threads and memory."""
