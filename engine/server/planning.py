"""Turn a validated request body into engine requests (one per choice), with the checks pydantic cannot do."""
from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Union

from engine.base import SamplingParams
from engine.server.adapter import ServingAdapter
from engine.server.errors import APIError
from engine.server.schemas import ChatCompletionRequest, CompletionRequest, ResponseFormat

_FIELD = re.compile(r"^(max_tokens|temperature|top_p|top_k|seed)\b")


@dataclass
class Choice:
    """One engine request: a prompt (chat messages or token ids) and its own sampling params."""

    index: int
    request_id: str
    params: SamplingParams
    prompt_index: int = 0
    prompt_ids: list[int] | None = None
    messages: list[dict[str, Any]] | None = None


@dataclass
class Plan:
    kind: str  # "chat" | "completion"
    id: str
    model: str
    choices: list[Choice]
    prompt_tokens: int | None  # None when the engine does not expose its tokenizer (engine counts win)
    stream: bool
    include_usage: bool
    logprobs: bool
    constraint_factory: Callable[[], Any] | None = None
    continuous_usage: bool = False


def _messages(body: ChatCompletionRequest, adapter: ServingAdapter) -> list[dict[str, Any]]:
    out = []
    for i, m in enumerate(body.messages):
        content: Any = m.content if m.content is not None else ""
        if isinstance(content, list):
            if any(p.type == "image_url" for p in content):
                if not adapter.supports_images:
                    raise APIError(400, "this model takes text only; remove the image_url parts",
                                   param=f"messages[{i}].content")
                content = [p.model_dump() for p in content]
            else:
                content = "".join(p.text for p in content)  # text parts join as one string, as OpenAI reads them
        msg: dict[str, Any] = {"role": "system" if m.role == "developer" else m.role, "content": content}
        if m.name:
            msg["name"] = m.name
        out.append(msg)
    return out


def _sampling(body: Union[ChatCompletionRequest, CompletionRequest], max_tokens: int, seed: int | None,
              logprobs: bool) -> SamplingParams:
    try:
        return SamplingParams(
            max_tokens=max_tokens,
            temperature=1.0 if body.temperature is None else float(body.temperature),  # OpenAI's default
            top_p=1.0 if body.top_p is None else float(body.top_p),
            top_k=max(0, body.top_k or 0),
            seed=seed, stop=body.stop_list, logprobs=logprobs)
    except ValueError as exc:
        m = _FIELD.match(str(exc))
        raise APIError(400, str(exc), param=m.group(1) if m else None) from exc


def _max_tokens(requested: int | None, prompt_len: int | None, limit: int | None, param_prompt: str) -> int:
    """Check the context: the prompt must leave room, and prompt + max_tokens must fit (vLLM's rule)."""
    if limit is None or prompt_len is None:
        return requested or 1024
    if prompt_len >= limit:
        raise APIError(400, f"this model's maximum context length is {limit} tokens, but the prompt has "
                            f"{prompt_len} tokens; shorten it", param=param_prompt, code="context_length_exceeded")
    if requested is None:
        return limit - prompt_len
    if prompt_len + requested > limit:
        raise APIError(400, f"this model's maximum context length is {limit} tokens; you asked for "
                            f"{prompt_len + requested} ({prompt_len} in the prompt, {requested} to generate)",
                       param="max_tokens", code="context_length_exceeded")
    return requested


def _seed(base: int | None, i: int) -> int | None:
    # Choice i of a seeded request uses seed + i, so n > 1 gives distinct but reproducible samples.
    return None if base is None else (base + i) % (2 ** 63)


def _constraint(fmt: ResponseFormat | None, adapter: ServingAdapter, ignore_eos: bool = False,
                compiled: Callable[[], Any] | None = None) -> Callable[[], Any] | None:
    if fmt is None or fmt.type == "text":
        if not ignore_eos:
            return None
        # vLLM's ignore_eos (benchmarks ask for exactly max_tokens) is a mask on the end-of-sequence tokens.
        if not adapter.supports_ignore_eos:
            raise APIError(400, "this engine does not support ignore_eos", param="ignore_eos")
        return adapter.ignore_eos_constraint()
    if not adapter.supports_constraints:
        raise APIError(400, "this engine does not support constrained decoding (response_format "
                            f"{fmt.type!r})", param="response_format")
    if compiled is not None:  # compiled by the server's grammar queue (engine.server.grammars)
        return compiled
    try:
        return adapter.compile_response_format(fmt.type, fmt.json_schema.schema_ if fmt.json_schema else None)
    except ValueError as exc:
        raise APIError(400, f"invalid response_format: {exc}", param="response_format.json_schema.schema") from exc
    except RuntimeError as exc:  # the grammar library is not installed
        raise APIError(400, f"response_format is unavailable on this server: {exc}", param="response_format") from exc


def check_model(name: str, served: set[str]) -> None:
    if name not in served:
        raise APIError(400, f"model {name!r} is not served here; available: {', '.join(sorted(served))}",
                       param="model", code="model_not_found")


def check_width(body: Union[ChatCompletionRequest, CompletionRequest], limit: int) -> None:
    """Bound the sequences one request asks for (prompts x n) before any prompt is tokenized."""
    prompts = len(body.prompts()) if isinstance(body, CompletionRequest) else 1
    width = prompts * body.n
    if width > limit:
        asked = f"{prompts} prompts x n={body.n}" if prompts > 1 else f"n={body.n}"
        raise APIError(400, f"this request asks for {width} sequences ({asked}); this server allows at most {limit} "
                            f"per request (--max-seqs-per-request)", param="prompt" if prompts > 1 else "n",
                       code="too_many_sequences")


def plan_chat(body: ChatCompletionRequest, adapter: ServingAdapter, served_name: str,
              compiled: Callable[[], Any] | None = None) -> Plan:
    messages = _messages(body, adapter)
    constraint = _constraint(body.response_format, adapter, body.ignore_eos, compiled)
    template_kwargs = body.chat_template_kwargs or None
    if template_kwargs and not adapter.supports_prompts:
        raise APIError(400, "this engine renders chats itself and cannot take chat_template_kwargs",
                       param="chat_template_kwargs")
    try:
        prompt_ids = adapter.chat_prompt_ids(messages, template_kwargs)
    except Exception as exc:  # a template that rejects the conversation (e.g. bad role order)
        raise APIError(400, f"messages cannot be rendered with this model's chat template: {exc}",
                       param="chat_template_kwargs" if template_kwargs else "messages") from exc
    n_prompt = len(prompt_ids) if prompt_ids is not None else None
    max_tokens = _max_tokens(body.max_new_tokens, n_prompt, adapter.max_model_len, "messages")
    pid = f"chatcmpl-{uuid.uuid4().hex}"
    # Through the engine's raw-prompt path when the engine must see the request token by token
    # (constraints), report token ids (logprobs) or see a prompt rendered with this request's template
    # variables; otherwise through Engine.stream, the common contract.
    use_ids = prompt_ids is not None and adapter.supports_prompts and (
        constraint is not None or body.logprobs or bool(template_kwargs))
    choices = [Choice(i, f"{pid}-{i}", _sampling(body, max_tokens, _seed(body.seed, i), body.logprobs),
                      prompt_ids=prompt_ids if use_ids else None, messages=None if use_ids else messages)
               for i in range(body.n)]
    return Plan("chat", pid, served_name, choices, n_prompt, body.stream, body.include_usage, body.logprobs,
                constraint, body.continuous_usage)


def plan_completion(body: CompletionRequest, adapter: ServingAdapter, served_name: str,
                    compiled: Callable[[], Any] | None = None) -> Plan:
    if body.echo:
        raise APIError(400, "echo is not supported", param="echo")
    if not adapter.supports_prompts:
        raise APIError(400, "this engine takes chat messages only; use /v1/chat/completions", param="prompt")
    constraint = _constraint(body.response_format, adapter, body.ignore_eos, compiled)
    prompts = body.prompts()
    pid = f"cmpl-{uuid.uuid4().hex}"
    choices, total = [], 0
    vocab = getattr(adapter.tokenizer, "vocab_size", None)
    for p_i, prompt in enumerate(prompts):
        param = "prompt" if len(prompts) == 1 else f"prompt[{p_i}]"
        if isinstance(prompt, str):
            ids = adapter.encode(prompt)
            if not ids:
                raise APIError(400, "prompt is empty", param=param)
        else:
            ids = list(prompt)
            if vocab is not None and any(not 0 <= t < vocab for t in ids):
                raise APIError(400, f"token ids must be in 0..{vocab - 1}", param=param)
        total += len(ids)
        max_tokens = _max_tokens(body.max_new_tokens, len(ids), adapter.max_model_len, param)
        for j in range(body.n):
            k = p_i * body.n + j
            choices.append(Choice(k, f"{pid}-{k}", _sampling(body, max_tokens, _seed(body.seed, j),
                                                            body.logprobs is not None),
                                  prompt_index=p_i, prompt_ids=ids))
    return Plan("completion", pid, served_name, choices, total, body.stream, body.include_usage,
                body.logprobs is not None, constraint, body.continuous_usage)
