"""Request parameters that follow the model: OpenAI's reasoning models (o1, o3, o4, gpt-5 families)
answer HTTP 400 to `max_tokens` (they take `max_completion_tokens`) and to any `temperature` or `top_p`
but their default. Used by the openai engine and by the LLM judge.

A 400 that names an unsupported parameter is read by `RequestParams.adjust`: the parameter is renamed
(`Use 'X' instead`) or dropped once, and the change is kept for every later request.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

TOKEN_PARAMS = ("max_tokens", "max_completion_tokens")
TOKEN_PARAM_CHOICES = ("auto", *TOKEN_PARAMS)
SEND_TEMPERATURE_CHOICES = ("auto", "yes", "no")
SAMPLING_KNOBS = ("temperature", "top_p")  # what a reasoning model fixes at its default
# Optional knobs a request may lose without changing what is asked; anything else rejected is reported.
DROPPABLE = frozenset({*SAMPLING_KNOBS, "seed", "presence_penalty", "frequency_penalty", "logprobs", "top_k"})
# Parameters whose rejection is ours to handle; any other (e.g. response_format) is left to the caller.
MANAGED = frozenset({*TOKEN_PARAMS, *DROPPABLE, "reasoning_effort"})

# Model names as OpenAI spells them (o1, o1-mini, o3-2025-04-16, o4-mini, gpt-5, gpt-5-mini, gpt-5.1),
# optionally behind a provider prefix such as "openai/".
_REASONING_MODEL = re.compile(r"(?:^|/)(?:o1|o3|o4|gpt-5)(?:$|[-.:_])", re.IGNORECASE)
# OpenAI's wording: "Unsupported parameter: 'max_tokens' is not supported with this model. Use
# 'max_completion_tokens' instead." and "Unsupported value: 'temperature' does not support 0 with this model."
_UNSUPPORTED = re.compile(r"Unsupported (?:parameter|value)s?:?\s*'([\w.]+)'", re.IGNORECASE)
_USE_INSTEAD = re.compile(r"Use '([\w.]+)' instead", re.IGNORECASE)


def is_reasoning_model(model: str) -> bool:
    return bool(_REASONING_MODEL.search(model or ""))


def resolve_token_param(model: str, choice: str = "auto") -> str:
    if choice not in TOKEN_PARAM_CHOICES:
        raise ValueError(f"token parameter must be one of {', '.join(TOKEN_PARAM_CHOICES)}, got {choice!r}")
    if choice != "auto":
        return choice
    return "max_completion_tokens" if is_reasoning_model(model) else "max_tokens"


def resolve_send_temperature(model: str, choice: str | bool = "auto") -> bool:
    if isinstance(choice, bool):
        return choice
    if choice not in SEND_TEMPERATURE_CHOICES:
        raise ValueError(f"send-temperature must be one of {', '.join(SEND_TEMPERATURE_CHOICES)}, got {choice!r}")
    return choice == "yes" or (choice == "auto" and not is_reasoning_model(model))


@dataclass
class Rejection:
    """A parameter that a server's 400 names as unsupported, and what to send instead (None: nothing)."""

    param: str
    replacement: str | None
    message: str


def rejected_parameter(message: str, sent: dict[str, Any]) -> Rejection | None:
    """The parameter of `sent` that a 400 message rejects; None when the message names none of them."""
    match = _UNSUPPORTED.search(message or "")
    if not match or match.group(1) not in sent:
        return None
    param = match.group(1)
    instead = _USE_INSTEAD.search(message)
    replacement = instead.group(1) if instead else None
    if replacement is None and param in TOKEN_PARAMS:
        replacement = TOKEN_PARAMS[1 - TOKEN_PARAMS.index(param)]
    return Rejection(param, replacement, message)


@dataclass
class RequestParams:
    """How one client spells its token limit and which sampling knobs it sends; learns from 400s."""

    model: str
    token_param: str = "max_tokens"
    send_temperature: bool = True
    dropped: set[str] = field(default_factory=set)
    introduced: set[str] = field(default_factory=set)  # names we switched to after a 400
    changes: list[str] = field(default_factory=list)  # what was adjusted, for logs and summaries

    @classmethod
    def for_model(cls, model: str, token_param: str = "auto", send_temperature: str | bool = "auto") -> "RequestParams":
        return cls(model, resolve_token_param(model, token_param), resolve_send_temperature(model, send_temperature))

    def apply(self, body: dict[str, Any], max_tokens: int, sampling: dict[str, Any]) -> dict[str, Any]:
        """Add the token limit and the sampling knobs to `body` as this model takes them."""
        body[self.token_param] = max_tokens
        for name, value in sampling.items():
            if value is None or name in self.dropped or (name in SAMPLING_KNOBS and not self.send_temperature):
                continue
            body[name] = value
        return body

    def adjust(self, message: str, sent: dict[str, Any]) -> str:
        """Learn from a 400 on request `sent`: 'retry' (a parameter renamed or dropped, or the request was
        built before an earlier change), 'reported' (rejected again or not ours to drop) or 'other'."""
        rejection = rejected_parameter(message, sent)
        if rejection is None or rejection.param not in MANAGED:
            return "other"
        param = rejection.param
        if param in TOKEN_PARAMS:
            if param != self.token_param:
                return "retry"  # sent before another request switched the name
            if param in self.introduced or rejection.replacement not in TOKEN_PARAMS:
                return "reported"
            self.token_param = rejection.replacement
            self.introduced.add(rejection.replacement)
            self.changes.append(f"{param} -> {rejection.replacement}")
            return "retry"
        if (param in SAMPLING_KNOBS and not self.send_temperature) or param in self.dropped:
            return "retry"
        if param not in DROPPABLE:
            return "reported"
        if param in SAMPLING_KNOBS:
            self.send_temperature = False  # a model that fixes one of them fixes both
        else:
            self.dropped.add(param)
        self.changes.append(f"{param} dropped")
        return "retry"

    def describe(self) -> dict[str, Any]:
        return {"token_param": self.token_param, "send_temperature": self.send_temperature,
                "dropped": sorted(self.dropped), "adjusted_after_400": list(self.changes)}


def rejection_hint(message: str, model: str, token_flag: str, temperature_flag: str) -> str:
    """A clear report for a parameter the server still rejects, naming the flag that controls it."""
    return (f"the server rejects a request parameter for model {model!r}: {message} "
            f"(choose the token limit's name with {token_flag} max_tokens|max_completion_tokens; "
            f"leave out temperature and top_p with {temperature_flag} no)")
