"""One verdict from a judge Engine: structured output first, plain text where it is rejected, unreadable
replies asked again. Transport faults (429, 5xx, timeouts, lost connections) are the engine's to retry."""
from __future__ import annotations

import asyncio
import logging
import re
import uuid
from typing import Any

from engine.base import ChatRequest, Completion, Engine, SamplingParams
from engine.openai.faults import backoff_delay
from judges.base import JudgeConfigError
from judges.llm.parsing import ParseError, ParsedVerdict, parse_reply
from judges.llm.prompt import RESPONSE_FORMAT

log = logging.getLogger(__name__)

# What an engine names when it reports a request parameter the server rejects even after adjusting it.
PARAMETER_FLAGS = ("--judge-token-param", "--judge-send-temperature")
MAX_RETRY_DELAY_S = 60.0  # the engine's own cap on one backoff
_FAULT_PREFIX = re.compile(r"^\w+: (HTTP \d+: )?")  # "client_error: HTTP 400: " before the server's words


class AskFailed(Exception):
    """No verdict after the retries: the sample becomes a judge_error."""

    def __init__(self, message: str, attempts: int) -> None:
        super().__init__(message)
        self.attempts = attempts


class VerdictAsker:
    """Sends judge prompts to an engine and reads its replies as verdicts."""

    def __init__(self, engine: Engine, max_tokens: int, temperature: float, structured_output: bool,
                 max_retries: int, retry_base_delay_s: float, timeout_s: float) -> None:
        self.engine = engine
        self.sampling = SamplingParams(max_tokens=max_tokens, temperature=temperature)
        self.structured_output = structured_output
        self.max_retries = max_retries
        self.retry_base_delay_s = retry_base_delay_s
        self.timeout_s = timeout_s
        self.requests_sent = 0  # engine.chat calls (each may be several HTTP attempts)

    async def ask(self, messages: list[dict[str, Any]]) -> tuple[ParsedVerdict, str, int]:
        """(verdict, output mode, attempts); AskFailed when the retries run out."""
        attempts = rereads = 0
        structured = self.structured_output
        while True:
            self.requests_sent += 1
            completion = await self.engine.chat(ChatRequest(f"judge-{uuid.uuid4().hex[:12]}", messages, self.sampling,
                                                            RESPONSE_FORMAT if structured else None))
            if completion.finish_reason == "error":
                if _reports_a_parameter(completion):  # every request would fail the same way: stop, say why
                    raise JudgeConfigError(_FAULT_PREFIX.sub("", completion.error or "", count=1))
                if structured and completion.extra.get("status") == 400:
                    structured = False  # perhaps response_format: ask again in plain text, at no retry cost
                    continue
                raise AskFailed(self._describe(completion), attempts + completion.attempts)
            attempts += completion.attempts
            try:
                parsed = parse_reply(completion.text)
            except ParseError as exc:
                if completion.finish_reason == "length":  # the same request would be cut the same way again
                    raise AskFailed(f"judge reply cut at max_tokens={self.sampling.max_tokens} (raise "
                                    f"--judge-max-tokens): {exc}", attempts) from None
                rereads += 1
                if rereads > self.max_retries:
                    raise AskFailed(f"unreadable judge reply: {exc} (after {attempts} attempts)", attempts) from None
                await asyncio.sleep(backoff_delay(rereads, self.retry_base_delay_s, MAX_RETRY_DELAY_S))
                continue
            if not structured and self.structured_output:
                # a 400 with response_format, then success without it: the server lacks json_schema
                log.warning("judge server rejected structured output; using plain-text replies from now on")
                self.structured_output = False
            return parsed, "json_schema" if structured else "text", attempts

    def _describe(self, completion: Completion) -> str:
        error = completion.error or "no reason given"
        kind = completion.extra.get("error_kind")
        if kind == "timeout":
            return f"judge request timed out after {self.timeout_s:g} s ({error})"
        if kind == "connection":
            return f"cannot reach judge server: {error}"
        return f"judge request failed: {error}"


def _reports_a_parameter(completion: Completion) -> bool:
    return completion.extra.get("status") == 400 and PARAMETER_FLAGS[0] in (completion.error or "")
