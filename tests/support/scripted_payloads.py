"""OpenAI-shaped bodies for the scripted server: whole completions and the SSE events of a stream."""
from __future__ import annotations

import itertools
import json
import time
from typing import Any

from tests.support.scripted_replies import Reply, wordish_tokens

_ids = itertools.count(1)
DEFAULT_LOGPROB = -0.5


def prompt_tokens(body: dict) -> int:
    """Word-ish tokens of the prompt text (chat messages or a completions prompt)."""
    if "messages" in body:
        n = 0
        for m in body.get("messages") or []:
            content = m.get("content") if isinstance(m, dict) else None
            if isinstance(content, str):
                n += len(wordish_tokens(content))
            elif isinstance(content, list):
                n += sum(len(wordish_tokens(p.get("text", ""))) for p in content if isinstance(p, dict))
        return n
    prompt = body.get("prompt", "")
    return sum(len(wordish_tokens(p)) for p in ([prompt] if isinstance(prompt, str) else prompt) if isinstance(p, str))


def usage(body: dict, reply: Reply, completion: int | None = None) -> dict[str, int]:
    prompt = reply.prompt_tokens if reply.prompt_tokens is not None else prompt_tokens(body)
    done = reply.usage_completion() if completion is None else completion
    return {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done}


def _token_logprobs(tokens: list[str], values: list[float]) -> dict:
    return {"content": [{"token": t, "logprob": v, "bytes": None, "top_logprobs": []} for t, v in zip(tokens, values)]}


def full_body(route: str, body: dict, reply: Reply) -> bytes:
    """A non-streamed chat.completion or text_completion; `n` choices all carry the reply."""
    n = int(body.get("n") or 1)
    if route == "/completions":
        choices = [{"index": i, "text": reply.text, "logprobs": None, "finish_reason": reply.finish_reason}
                   for i in range(n)]
        obj, prefix = "text_completion", "cmpl"
    else:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.reasoning is not None:
            message["reasoning_content"] = reply.reasoning
        logprobs = None
        if body.get("logprobs"):
            tokens = wordish_tokens(reply.text)
            logprobs = _token_logprobs(tokens, reply.logprobs or [DEFAULT_LOGPROB] * len(tokens))
        choices = [{"index": i, "message": message, "finish_reason": reply.finish_reason, "logprobs": logprobs}
                   for i in range(n)]
        obj, prefix = "chat.completion", "chatcmpl"
    return json.dumps({"id": f"{prefix}-{next(_ids)}", "object": obj, "created": int(time.time()),
                       "model": body.get("model"), "choices": choices, "usage": usage(body, reply)}).encode()


def stream_events(route: str, body: dict, reply: Reply) -> list[tuple[bytes, bool]]:
    """The SSE events of a streamed answer, each paired with whether it carries output (for pacing).

    Order as vLLM sends them: a role chunk, reasoning then content chunks, a finish chunk, the usage
    chunk when stream_options.include_usage is set, then [DONE]. With continuous_usage_stats every
    output chunk also carries the usage so far.
    """
    chat = route == "/chat/completions"
    cid, created, model = f"{'chatcmpl' if chat else 'cmpl'}-{next(_ids)}", int(time.time()), body.get("model")
    options = body.get("stream_options") or {}
    continuous = bool(options.get("continuous_usage_stats"))
    want_logprobs = bool(body.get("logprobs"))
    contents = reply.pieces()
    values = reply.logprobs or [DEFAULT_LOGPROB] * len(contents)
    pieces = [("reasoning_content", p, 1, None) for p in wordish_tokens(reply.reasoning or "")]
    pieces += [("content", p, t, values[i] if i < len(values) else DEFAULT_LOGPROB)
               for i, (p, t) in enumerate(zip(contents, reply.piece_tokens()))]

    def event(choice: dict | None, usage_now: dict | None = None) -> bytes:
        data: dict[str, Any] = {"id": cid, "object": "chat.completion.chunk" if chat else "text_completion",
                                "created": created, "model": model, "choices": [choice] if choice else []}
        if usage_now is not None:
            data["usage"] = usage_now
        return b"data: " + json.dumps(data).encode() + b"\n\n"

    def choice(field: str, text: str, finish: str | None, logprob: float | None = None) -> dict:
        if not chat:
            return {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
        lp = _token_logprobs([text], [logprob]) if want_logprobs and logprob is not None else None
        return {"index": 0, "delta": {field: text} if field else {}, "logprobs": lp, "finish_reason": finish}

    out: list[tuple[bytes, bool]] = []
    if chat:
        out.append((event({"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None,
                           "finish_reason": None}), False))
    sent = 0
    for field, piece, tokens, logprob in pieces:
        sent += tokens
        out.append((event(choice(field, piece, None, logprob), usage(body, reply, sent) if continuous else None), True))
    out.append((event(choice("", "", reply.finish_reason)), False))
    if options.get("include_usage"):
        out.append((event(None, usage(body, reply)), False))
    out.append((b"data: [DONE]\n\n", False))
    return out
