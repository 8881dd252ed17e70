"""A scripted server handler that answers like OpenAI does for its reasoning models (o1/o3/o4/gpt-5)."""
from __future__ import annotations

from typing import Callable

from tests.support.scripted_replies import Reply

MAX_TOKENS_REJECTED = ("Unsupported parameter: 'max_tokens' is not supported with this model. "
                       "Use 'max_completion_tokens' instead.")
TEMPERATURE_REJECTED = ("Unsupported value: 'temperature' does not support 0 with this model. "
                        "Only the default (1) value is supported.")
TOP_P_REJECTED = "Unsupported parameter: 'top_p' is not supported with this model."


def reasoning_model(answer: Callable[[dict], Reply | str]) -> Callable[[dict], Reply]:
    """400 to max_tokens, to any temperature but 1 and to top_p, as OpenAI's API does; else answer(body)."""
    def handler(body: dict) -> Reply:
        if "max_tokens" in body:
            return Reply(status=400, error_message=MAX_TOKENS_REJECTED)
        if "temperature" in body and body["temperature"] != 1:
            return Reply(status=400, error_message=TEMPERATURE_REJECTED.replace(" 0 ", f" {body['temperature']:g} "))
        if "top_p" in body:
            return Reply(status=400, error_message=TOP_P_REJECTED)
        reply = answer(body)
        return Reply(text=reply) if isinstance(reply, str) else reply
    return handler
