"""OpenAI response bodies and SSE chunks for chat and text completions."""
from __future__ import annotations

import time
from typing import Any, AsyncIterator

from engine.base import Completion
from engine.reasoning import StreamingReasoningSplitter, prompt_opens_thinking, split_reasoning
from engine.server.errors import error_body
from engine.server.admission import Ticket
from engine.server.generation import Runtime, plan_events
from engine.server.planning import Plan
from engine.server.streaming import SSE_DONE, sse_event


def usage(plan: Plan, completions: list[Completion]) -> dict[str, int]:
    prompt = plan.prompt_tokens
    if prompt is None:  # the engine's own count; chat choices share one prompt
        prompt = max((c.prompt_tokens for c in completions), default=0)
    out = sum(c.completion_tokens for c in completions)
    return {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out}


def _token_logprobs(rt: Runtime, done: Completion) -> list[tuple[str, float]]:
    lps = done.logprobs or []
    ids = done.extra.get("token_ids") or []
    return [(rt.adapter.token_text(ids[i]) if i < len(ids) else "", lp) for i, lp in enumerate(lps)]


def chat_logprobs(rt: Runtime, done: Completion) -> dict[str, Any]:
    return {"content": [{"token": t, "logprob": lp, "bytes": list(t.encode()), "top_logprobs": []}
                        for t, lp in _token_logprobs(rt, done)]}


def text_logprobs(rt: Runtime, done: Completion) -> dict[str, Any]:
    pairs = _token_logprobs(rt, done)
    offsets, pos = [], 0
    for t, _ in pairs:
        offsets.append(pos)
        pos += len(t)
    return {"tokens": [t for t, _ in pairs], "token_logprobs": [lp for _, lp in pairs],
            "top_logprobs": [{t: lp} for t, lp in pairs], "text_offset": offsets}


def engine_failure(completions: list[Completion]) -> str | None:
    """When every choice failed, the request failed: the message of the first failure."""
    if completions and all(c.finish_reason == "error" for c in completions):
        return completions[0].error or "the engine failed to generate"
    return None


def _opens_thinking(rt: Runtime, plan: Plan) -> bool:
    """Whether the chat prompt ends inside an open <think> block (the auto reasoning parser needs it)."""
    tokenizer = rt.adapter.tokenizer
    choice = plan.choices[0] if plan.choices else None
    if tokenizer is None or choice is None:
        return False
    try:
        if choice.prompt_ids:
            return prompt_opens_thinking(tokenizer.decode(choice.prompt_ids[-8:], skip_special_tokens=False))
        return prompt_opens_thinking(tokenizer.render_chat(choice.messages or []))
    except Exception:  # an engine whose tokenizer cannot say: no reasoning split
        return False


def _splitters(rt: Runtime, plan: Plan) -> dict[int, StreamingReasoningSplitter]:
    if plan.kind != "chat" or rt.reasoning_parser == "none":
        return {}
    opens = _opens_thinking(rt, plan)
    return {c.index: StreamingReasoningSplitter(rt.reasoning_parser, opens) for c in plan.choices}


def chat_message(rt: Runtime, plan: Plan, done: Completion, opens: bool) -> dict[str, Any]:
    """The assistant message; with a reasoning parser, the thinking goes to reasoning_content as in vLLM."""
    if rt.reasoning_parser == "none":
        return {"role": "assistant", "content": done.text}
    split = split_reasoning(done.text, rt.reasoning_parser, opens)
    return {"role": "assistant", "content": split.response, "reasoning_content": split.reasoning}


def full_response(rt: Runtime, plan: Plan, completions: list[Completion]) -> dict[str, Any]:
    created = int(time.time())
    choices = []
    opens = plan.kind == "chat" and rt.reasoning_parser != "none" and _opens_thinking(rt, plan)
    for c, done in zip(plan.choices, completions):
        lp = None
        if plan.kind == "chat":
            if plan.logprobs:
                lp = chat_logprobs(rt, done)
            choices.append({"index": c.index, "message": chat_message(rt, plan, done, opens),
                            "logprobs": lp, "finish_reason": done.finish_reason})
        else:
            if plan.logprobs:
                lp = text_logprobs(rt, done)
            choices.append({"index": c.index, "text": done.text, "logprobs": lp, "finish_reason": done.finish_reason})
        if done.finish_reason == "error":
            choices[-1]["error"] = done.error
    obj = "chat.completion" if plan.kind == "chat" else "text_completion"
    return {"id": plan.id, "object": obj, "created": created, "model": plan.model, "choices": choices,
            "usage": usage(plan, completions)}


async def sse_stream(rt: Runtime, plan: Plan, ticket: Ticket) -> AsyncIterator[bytes]:
    """chat.completion.chunk / text_completion chunks, then usage (when asked) and [DONE]."""
    created = int(time.time())
    chat = plan.kind == "chat"
    obj = "chat.completion.chunk" if chat else "text_completion"
    usage_field = {"usage": None} if plan.include_usage else {}
    head = {"id": plan.id, "object": obj, "created": created, "model": plan.model}

    emitted: dict[int, int] = {c.index: 0 for c in plan.choices}
    running_usage = plan.include_usage and plan.continuous_usage and plan.prompt_tokens is not None

    splitters = _splitters(rt, plan)

    def chunk(index: int, text: str | None, finish: str | None = None, logprobs: Any = None,
              role: bool = False, reasoning: str | None = None) -> bytes:
        if chat:
            delta: dict[str, Any] = {}
            if role:
                delta["role"] = "assistant"
            if reasoning:
                delta["reasoning_content"] = reasoning
            if text is not None:
                delta["content"] = text
            choice = {"index": index, "delta": delta, "logprobs": logprobs, "finish_reason": finish}
        else:
            choice = {"index": index, "text": text or "", "logprobs": logprobs, "finish_reason": finish}
        if running_usage:
            out, prompt = emitted[index], plan.prompt_tokens or 0
            return sse_event({**head, "choices": [choice], "usage": {
                "prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out}})
        return sse_event({**head, "choices": [choice], **usage_field})

    finals: dict[int, Completion] = {}
    try:
        if chat:
            for c in plan.choices:
                yield chunk(c.index, "", role=True)
        async for ev in plan_events(rt, plan, ticket):
            emitted[ev.index] += ev.token_count
            splitter = splitters.get(ev.index)
            if splitter is not None:
                reasoning, answer = splitter.feed(ev.text, final=ev.final is not None)
                if reasoning or answer:
                    yield chunk(ev.index, answer if answer else None, reasoning=reasoning)
            elif ev.text:
                yield chunk(ev.index, ev.text)
            if ev.final is not None:
                done = ev.final
                finals[ev.index] = done
                if done.finish_reason == "error":
                    yield sse_event(error_body(500, done.error or "the engine failed to generate"))
                lp = None
                if plan.logprobs:
                    lp = chat_logprobs(rt, done) if chat else text_logprobs(rt, done)
                yield chunk(ev.index, None if chat else "", finish=done.finish_reason, logprobs=lp)
    except Exception as exc:  # noqa: BLE001 - a stream already started can only report in-band
        status = getattr(exc, "status", 500)
        yield sse_event(error_body(status, getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"))
        yield SSE_DONE
        return
    if plan.include_usage:
        ordered = [finals[c.index] for c in plan.choices if c.index in finals]
        yield sse_event({**head, "choices": [], "usage": usage(plan, ordered)})
    yield SSE_DONE
