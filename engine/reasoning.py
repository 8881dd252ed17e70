"""Reasoning parsers: split a reasoning model's <think>...</think> block from the answer, as vLLM's do.

deepseek-r1: the chat template opens the block (DeepSeek-R1 distills, QwQ end their generation prompt with
  `<think>\\n`), so the output starts inside it, with or without its own `<think>`; everything before the first
  `</think>` is reasoning, and without one the whole output is reasoning (cut off by the token limit).
qwen3: the model writes `<think>` itself (Qwen3; with enable_thinking=false the template fills an empty block
  into the prompt): output that does not start with `<think>` is all answer, unless the prompt opened the block.
auto: deepseek-r1 when the prompt opened the block, qwen3 when the output starts with `<think>`, deepseek-r1
  when a bare `</think>` appears (a server that rendered such a template), else no reasoning.
none: the output is the answer, as before this option existed.
Only the first `</think>` ends the reasoning: a `</think>` later in the answer text stays in the answer.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.base import Completion

PARSERS = ("auto", "deepseek-r1", "qwen3", "none")
OPEN, CLOSE = "<think>", "</think>"


@dataclass(frozen=True)
class ReasoningSplit:
    """reasoning is None when the output had no thinking block; unterminated: cut off inside it (no answer)."""

    reasoning: str | None
    response: str
    unterminated: bool = False


def prompt_opens_thinking(prompt: str) -> bool:
    """True when a rendered prompt ends inside an open thinking block (R1 distills, QwQ, Qwen3 thinking)."""
    tail = prompt.rstrip()
    return tail.endswith(OPEN)


def check_parser(name: str) -> str:
    if name not in PARSERS:
        raise ValueError(f"--reasoning-parser: unknown parser {name!r}; choose one of {', '.join(PARSERS)}")
    return name


def resolve_parser(name: str, text: str, prompt_opens_thinking: bool = False, bare_close: bool = True) -> str | None:
    """The concrete parser `auto` stands for, given the output so far and whether the prompt opened a block;
    None while the output is too short to tell (blank, or a prefix of `<think>`)."""
    if name == "none" or name == "deepseek-r1":
        return name
    if prompt_opens_thinking:  # e.g. a Qwen3 thinking-only template: the output starts inside the block
        return "deepseek-r1"
    if name == "qwen3":
        return name
    stripped = text.lstrip()
    if stripped.startswith(OPEN):
        return "qwen3"
    if OPEN.startswith(stripped):
        return None
    return "deepseek-r1" if bare_close and CLOSE in text else "none"


def _split(text: str, parser: str) -> ReasoningSplit:
    """The split of a (possibly partial) output; its parts only grow as text grows, so streams can diff it."""
    if parser == "none":
        return ReasoningSplit(None, text)
    body = text.lstrip()
    if body.startswith(OPEN):
        body = body[len(OPEN):]
    elif parser == "qwen3":
        return ReasoningSplit(None, text)
    end = body.find(CLOSE)
    if end < 0:
        return ReasoningSplit(body.lstrip(), "", unterminated=True)
    return ReasoningSplit(body[:end].lstrip(), body[end + len(CLOSE):].lstrip())


def split_reasoning(text: str, parser: str = "auto", prompt_opens_thinking: bool = False) -> ReasoningSplit:
    """Split a finished output into reasoning and the answer that judges read."""
    split = _split(text, resolve_parser(check_parser(parser), text, prompt_opens_thinking) or "none")
    if split.reasoning is None:
        return split
    return ReasoningSplit(split.reasoning.rstrip(), split.response, split.unterminated)


def split_completion(completion: "Completion", parser: str = "auto") -> ReasoningSplit:
    """A completion's reasoning and answer: the server's own reasoning_content when it sent one (its text is
    then the answer alone), else the parser's split of the text. The native engine says whether its prompt
    opened a thinking block (extra["prompt_opens_thinking"])."""
    sent = completion.extra.get("reasoning")
    if isinstance(sent, str) and sent:
        return ReasoningSplit(sent, completion.text)
    return split_reasoning(completion.text, parser, bool(completion.extra.get("prompt_opens_thinking")))


class StreamingReasoningSplitter:
    """Feeds output text piece by piece and returns (reasoning delta, answer delta) for each piece, holding
    back a possible partial tag. `auto` decides once, from the prompt or the output's first characters (a bare
    `</think>` later cannot turn streamed answer text into reasoning)."""

    def __init__(self, parser: str = "auto", prompt_opens_thinking: bool = False):
        self.parser = check_parser(parser)
        self.prompt_opens_thinking = prompt_opens_thinking
        self.text = ""
        self._resolved: str | None = None
        self._sent_reasoning = 0
        self._sent_response = 0

    def feed(self, piece: str, final: bool = False) -> tuple[str, str]:
        self.text += piece
        visible = self.text if final else _without_partial_tag(self.text)
        if self._resolved is None:
            self._resolved = resolve_parser(self.parser, visible, self.prompt_opens_thinking, bare_close=False)
            if self._resolved is None:
                if not final:
                    return "", ""
                self._resolved = "none"
        split = self.split(visible)
        reasoning = (split.reasoning or "")[self._sent_reasoning:]
        response = split.response[self._sent_response:]
        self._sent_reasoning += len(reasoning)
        self._sent_response += len(response)
        return reasoning, response

    def split(self, text: str | None = None) -> ReasoningSplit:
        """The split of the text so far (or of `text`) under the parser this stream settled on."""
        return _split(self.text if text is None else text, self._resolved or "none")


def _without_partial_tag(text: str) -> str:
    """Text minus a trailing prefix of `<think>` or `</think>`, which the next piece may complete."""
    for tag in (CLOSE, OPEN):
        for n in range(min(len(tag) - 1, len(text)), 0, -1):
            if text.endswith(tag[:n]):
                return text[:-n]
    return text
