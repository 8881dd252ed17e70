"""Reasoning parsers: each parser's output shapes, unterminated blocks, a </think> inside the answer, streaming."""
from __future__ import annotations

import pytest

from engine.base import Completion
from engine.reasoning import (PARSERS, StreamingReasoningSplitter, prompt_opens_thinking, split_completion,
                              split_reasoning)

# (parser, output text, whether the prompt opened a <think> block) -> (reasoning, response, unterminated)
CASES = [
    # Qwen3 writes its own <think>; the answer follows the first </think>.
    ("qwen3", "<think>\nLet me add.\n2+2=4\n</think>\n\nThe answer is 4.", False,
     ("Let me add.\n2+2=4", "The answer is 4.", False)),
    # Qwen3 with enable_thinking=false: the template filled the empty block, so the output is all answer.
    ("qwen3", "The answer is 4.", False, (None, "The answer is 4.", False)),
    # Qwen3 cut off by the token limit inside its thinking: no answer at all.
    ("qwen3", "<think>\nFirst, consider the cases", False, ("First, consider the cases", "", True)),
    # qwen3 does not take a bare </think> (no opening tag) as the end of a block.
    ("qwen3", "Use the </think> tag to close a block.", False, (None, "Use the </think> tag to close a block.", False)),
    # A Qwen3 template that opens the block itself (thinking-only variants): the output starts inside it.
    ("qwen3", "still thinking\n</think>\n\n7", True, ("still thinking", "7", False)),
    # DeepSeek-R1 distills: the template opened the block, the output starts inside it.
    ("deepseek-r1", "Okay, 91 = 7*13.\n</think>\n\n**No**", True, ("Okay, 91 = 7*13.", "**No**", False)),
    ("deepseek-r1", "<think>\nOkay.\n</think>\nNo.", True, ("Okay.", "No.", False)),
    ("deepseek-r1", "Okay, so I need to check every divisor up to", True,
     ("Okay, so I need to check every divisor up to", "", True)),
    # A </think> inside the answer text: only the first one ends the reasoning.
    ("deepseek-r1", "hmm\n</think>\n\nWrite </think> to end a block. Answer: B", True,
     ("hmm", "Write </think> to end a block. Answer: B", False)),
    ("qwen3", "<think>a</think>Close with </think>; answer 12", False, ("a", "Close with </think>; answer 12", False)),
    # auto picks from the prompt and the output's start.
    ("auto", "Thinking...\n</think>\n\n42", True, ("Thinking...", "42", False)),
    ("auto", "Thinking without end", True, ("Thinking without end", "", True)),
    ("auto", "<think>\nx\n</think>\n\n42", False, ("x", "42", False)),
    ("auto", "  <think>unfinished", False, ("unfinished", "", True)),
    ("auto", "r1 via a server that rendered the open tag\n</think>\n\n42", False,
     ("r1 via a server that rendered the open tag", "42", False)),
    ("auto", "Plain answer: 42", False, (None, "Plain answer: 42", False)),
    # none keeps everything as the answer (the behaviour before parsers existed).
    ("none", "<think>\nx\n</think>\n\n42", True, (None, "<think>\nx\n</think>\n\n42", False)),
]


@pytest.mark.parametrize("parser, text, opened, expected", CASES)
def test_split_shapes(parser, text, opened, expected):
    split = split_reasoning(text, parser, opened)
    assert (split.reasoning, split.response, split.unterminated) == expected


@pytest.mark.parametrize("parser, text, opened, expected", CASES)
@pytest.mark.parametrize("piece", [1, 3, 1000], ids=["char-by-char", "3-char-pieces", "one-piece"])
def test_streamed_split_concatenates_to_the_whole_split(parser, text, opened, expected, piece):
    splitter = StreamingReasoningSplitter(parser, opened)
    reasoning, answer = "", ""
    pieces = [text[i:i + piece] for i in range(0, len(text), piece)]
    for k, chunk in enumerate(pieces):
        r, a = splitter.feed(chunk, final=k == len(pieces) - 1)
        reasoning, answer = reasoning + r, answer + a
    whole = split_reasoning(text, parser, opened)
    if parser == "auto" and not opened and "<think>" not in text and "</think>" in text:
        # A stream cannot take back answer text it already sent: auto decides from the output's start.
        assert (reasoning, answer) == ("", text)
        return
    assert answer == whole.response
    assert reasoning.rstrip() == (whole.reasoning or "")


def test_partial_closing_tag_is_held_back_until_it_completes():
    splitter = StreamingReasoningSplitter("deepseek-r1", prompt_opens_thinking=True)
    assert splitter.feed("step one </th") == ("step one ", "")
    assert splitter.feed("ink>\n\nDone") == ("", "Done")
    assert splitter.feed(" </", final=False) == ("", " ")
    assert splitter.feed("", final=True) == ("", "</")


def test_server_reasoning_content_wins_over_parsing_the_text():
    sent = Completion(text="Final: 7", finish_reason="stop", extra={"reasoning": "thought it through"})
    assert split_completion(sent, "auto").reasoning == "thought it through"
    assert split_completion(sent, "auto").response == "Final: 7"
    native = Completion(text="thinking, cut off", finish_reason="length", extra={"prompt_opens_thinking": True})
    split = split_completion(native, "auto")
    assert (split.reasoning, split.response, split.unterminated) == ("thinking, cut off", "", True)


def test_prompt_opens_thinking_reads_the_rendered_prompt():
    assert prompt_opens_thinking("<｜User｜>hi<｜Assistant｜><think>\n")
    assert prompt_opens_thinking("<|im_start|>assistant\n<think>\n")
    assert not prompt_opens_thinking("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert not prompt_opens_thinking("<|im_start|>assistant\n")


def test_unknown_parser_is_a_clear_error():
    with pytest.raises(ValueError, match="--reasoning-parser: unknown parser 'r1'; choose one of auto, deepseek-r1"):
        split_reasoning("x", "r1")
    assert PARSERS == ("auto", "deepseek-r1", "qwen3", "none")
