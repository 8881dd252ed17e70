"""Reading OpenAI chat-completion replies, whole or streamed, strictly enough to spot malformed ones."""
from __future__ import annotations

import json
from typing import Any

from engine.base import Completion, StreamDelta
from engine.openai.faults import MalformedReply, ServerReportedError, normalise_finish_reason


def _content_text(content: Any) -> str:
    if content is None:  # e.g. only reasoning, or a refusal: no answer text
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    raise MalformedReply(f"message content is neither text nor content parts: {type(content).__name__}")


def _tokens(usage: dict, name: str) -> int:
    value = usage.get(name)
    return int(value) if isinstance(value, (int, float)) else 0


def _logprobs(choice: dict) -> list[float] | None:
    lp = choice.get("logprobs")
    if not isinstance(lp, dict) or not isinstance(lp.get("content"), list):
        return None
    return [float(t["logprob"]) for t in lp["content"] if isinstance(t, dict) and "logprob" in t]


def _raise_if_error(data: dict) -> None:
    error = data.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        raise ServerReportedError(f"the server answered with an error: {message}")


def _keep_raw(completion: Completion, raw: Any) -> Completion:
    if raw not in ("stop", "length", None):
        completion.extra["finish_reason_raw"] = raw
    return completion


def parse_completion(content: bytes) -> Completion:
    """One non-streamed reply body -> Completion; raises MalformedReply when it is not a completion."""
    try:
        data = json.loads(content)
    except ValueError:
        raise MalformedReply(f"the reply is not JSON: {content[:100]!r}") from None
    if not isinstance(data, dict):
        raise MalformedReply(f"the reply is not a JSON object: {content[:100]!r}")
    _raise_if_error(data)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedReply(f"the reply has no choices: {content[:100]!r}")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise MalformedReply("the reply's first choice has no message")
    raw_finish = choice.get("finish_reason")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    completion = Completion(text=_content_text(message.get("content")),
                            finish_reason=normalise_finish_reason(raw_finish),
                            prompt_tokens=_tokens(usage, "prompt_tokens"),
                            completion_tokens=_tokens(usage, "completion_tokens"),
                            logprobs=_logprobs(choice))
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if reasoning:
        completion.extra["reasoning"] = reasoning
    return _keep_raw(completion, raw_finish)


class StreamState:
    """Accumulates SSE chunks of one attempt; counts tokens from usage when the server reports it."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.logprobs: list[float] = []
        self.tokens = 0  # output tokens seen so far (from usage when chunks carry it, else 1 per chunk)
        self.usage_tokens: int | None = None
        self.prompt_tokens = 0
        self.raw_finish: Any = None
        self.ttft_s: float | None = None
        self.emitted = False

    def add(self, chunk: Any, elapsed_s: float) -> StreamDelta | None:
        """Take one chunk; returns the delta for the caller when it carried output."""
        if not isinstance(chunk, dict):
            raise MalformedReply(f"a stream chunk is not a JSON object: {str(chunk)[:100]!r}")
        _raise_if_error(chunk)
        choices, usage = chunk.get("choices"), chunk.get("usage")
        if not isinstance(choices, list) and not isinstance(usage, dict):
            raise MalformedReply(f"a stream chunk has neither choices nor usage: {json.dumps(chunk)[:100]}")
        piece = reasoning = ""
        for choice in choices or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            piece = _content_text(delta.get("content"))
            reasoning = delta.get("reasoning_content") or delta.get("reasoning") or ""
            if choice.get("finish_reason") is not None:
                self.raw_finish = choice["finish_reason"]
            self.logprobs.extend(_logprobs(choice) or [])
        reported = None
        if isinstance(usage, dict):
            self.prompt_tokens = _tokens(usage, "prompt_tokens") or self.prompt_tokens
            if isinstance(usage.get("completion_tokens"), (int, float)):
                reported = int(usage["completion_tokens"])
        if reported is not None:
            self.usage_tokens = reported
        if not piece and not reasoning:
            return None
        # With per-chunk usage (continuous_usage_stats) a chunk may carry several tokens, e.g. under
        # speculative decoding; without it, each content chunk counts as one token.
        count = max(reported - self.tokens, 0) if reported is not None else 1
        self.tokens += count
        if self.ttft_s is None:
            self.ttft_s = elapsed_s
        self.text.append(piece)
        if reasoning:
            self.reasoning.append(reasoning)
        self.emitted = True
        return StreamDelta(text=piece, token_count=count)

    def finish(self) -> Completion:
        if self.raw_finish is None:
            raise MalformedReply("the stream ended without a finish_reason")
        completion = Completion(text="".join(self.text), finish_reason=normalise_finish_reason(self.raw_finish),
                                prompt_tokens=self.prompt_tokens,
                                completion_tokens=self.usage_tokens if self.usage_tokens is not None else self.tokens,
                                ttft_s=self.ttft_s, logprobs=self.logprobs or None)
        if self.reasoning:
            completion.extra["reasoning"] = "".join(self.reasoning)
        return _keep_raw(completion, self.raw_finish)
