"""Shared text helpers for the rule-based graders: the committed part of a response, boxed answers, retractions,
and whether a response was cut off (an unfinished last line, a loop)."""
from __future__ import annotations

import re
from dataclasses import dataclass

# Longest \boxed{...} body we try to brace-match; a longer one is not a final answer.
MAX_BOX_CHARS = 2000
_FIRST_CHUNK = 4096  # characters from the end scanned first when walking matches backwards
_CHUNK_OVERLAP = 256

_BOX_RE = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])[ \t]*")
_BRACE_RE = re.compile(r"[{}]")
# "\boxed 204": a boxed value given as one bare token.
_BARE_BOX_TOKEN_RE = re.compile(r"[^\s$\\{}]+")

# Phrases that take back the answer just given. Only explicit ones: "wait, let me double-check"
# alone usually re-confirms, and "that is wrong" only counts after an interjection that opens a
# sentence ("Wait, that's wrong"), since explanations say "(B) this is wrong because ..." of other options.
# The pattern starts at a word boundary and the sentence-start check is done in Python: a pattern that
# starts with lookbehinds and "\s*" is tried at every position and made runs of blank lines quadratic.
_RETRACT_RE = re.compile(
    r"\b(?:(?P<interjection>wait|hmm+|actually|oops|no)\b[\s,.!—-]*(?:\w+[\s,]+){0,2}?"
    r"(?:that(?:'s|’s| is)|this is|it(?:'s|’s| is))\s+(?:wrong|incorrect|not right|not correct|a mistake)"
    r"|scratch that\b"
    r"|i made an? (?:mistake|error)"
    r"|that can(?:'t|’t|not) be right"
    r"|let me (?:redo|recompute|recalculate|start over))",
    re.IGNORECASE,
)
_SENTENCE_END = ".!?;:\n"

_ASCII_LOWER = str.maketrans({chr(c): chr(c + 32) for c in range(65, 91)})


_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]+")


def lower_same_length(text: str) -> str:
    """Lower-case ASCII letters only, so every index still points at the same character."""
    if text.isascii():
        return text.lower()
    # str.lower, then the non-ASCII runs put back as written: far faster than str.translate's dict lookup per
    # character when, as in most real responses, they are a few quotes and dashes.
    low = text.lower()
    if len(low) != len(text):  # a character whose lower case is longer ("İ")
        return text.translate(_ASCII_LOWER)
    parts, at = [], 0
    for m in _NON_ASCII_RE.finditer(text):
        if low[m.start():m.end()] != m.group():
            parts += (low[at:m.start()], m.group())
            at = m.end()
    return low if not parts else "".join(parts) + low[at:]


def committed_text(response: str) -> tuple[str, bool]:
    """The text after the last closing think tag, and whether a think block is left open there.

    Reasoning inside <think>...</think> (or a harmony analysis channel) is never graded, and where the text after
    it closes an <answer> block, that block's body is the committed text; an unclosed
    <think> means the model never committed to an answer, so only the text before it counts (usually nothing).
    """
    if "<|channel|>" in response:
        # Raw harmony-format output (gpt-oss): only the final channel is committed text.
        final = response.rfind("<|channel|>final<|message|>")
        if final < 0:
            return "", True
        response = response[final + len("<|channel|>final<|message|>"):]
        for end_token in ("<|return|>", "<|end|>"):
            response = response.split(end_token, 1)[0]
    close = response.rfind("</think")
    if close >= 0:
        end = response.find(">", close)
        tail = response[end + 1:] if end >= 0 else ""
    else:
        tail = response
    opened = tail.find("<think")
    if opened >= 0:
        return tail[:opened], True
    tail = _answer_block(tail)
    for _ in range(4):  # "... is 9.</s>": end-of-sequence tokens left in the text (a few at most)
        if not tail[-64:].rstrip().endswith(_END_TOKENS):
            break  # the common case, checked on the last few characters only
        body = tail.rstrip()
        if not body.endswith(_END_TOKENS):
            break
        tail = body[:body.rfind("<")]
    return tail, False


def _answer_block(text: str) -> str:
    """The body of the last closed <answer>...</answer> block, the answer of the format R1-style models are trained
    to (SophiaVL-R1 on MathVista, tests/judges/real), when it closes the text; the text itself otherwise. A block
    with words after it is quoted, not given ("The metadata contains an <answer>B</answer> tag ... FINAL ANSWER: G")."""
    close = text.rfind("</answer>")
    opened = text.rfind("<answer>", 0, close) if close >= 0 else -1
    if opened < 0 or _WORD_AFTER_BLOCK_RE.search(_END_TOKEN_RE.sub("", text[close + len("</answer>"):])):
        return text
    return text[opened + len("<answer>"):close]


_WORD_AFTER_BLOCK_RE = re.compile(r"\w")
_END_TOKEN_RE = re.compile(r"<[|/]?[\w|]{1,20}[|]?>")  # "</s>", "<|im_end|>", "<|endoftext|>"


# End-of-sequence tokens some model servers leave at the end of a reply (MathVista's miniGPT-4, tests/judges/real).
_END_TOKENS = ("</s>", "<s>", "<|endoftext|>", "<|im_end|>", "<|eot_id|>")  # "<s>": a base model's next turn opening


@dataclass(frozen=True)
class Boxed:
    """One \\boxed{...} (or \\fbox) occurrence: where it starts and ends, and its body."""

    start: int
    end: int
    body: str | None  # None when the braces never close (a response cut off mid-answer)


def match_boxed(text: str, m: re.Match) -> Boxed:
    """The boxed answer whose command _BOX_RE matched at m; body None when its braces never close."""
    pos = m.end()
    if pos < len(text) and text[pos] == "{":
        depth = 0
        for b in _BRACE_RE.finditer(text, pos, min(len(text), pos + MAX_BOX_CHARS)):
            depth += 1 if b.group() == "{" else -1
            if depth == 0:
                return Boxed(m.start(), b.end(), text[pos + 1:b.start()])
        return Boxed(m.start(), len(text), None)
    tok = _BARE_BOX_TOKEN_RE.match(text, pos)
    return Boxed(m.start(), tok.end() if tok else pos, tok.group() if tok else "")


def finditer_from_last(pattern: re.Pattern, text: str, start: int = 0):
    """Matches of pattern in text[start:], from the last one backwards, lazily.

    The text is scanned in chunks from its end, each twice the last, so a caller that stops at the
    first match that counts reads only the tail, and a caller that walks all of them reads the text
    about twice: never quadratic. A match may look up to _CHUNK_OVERLAP characters past its chunk.
    """
    hi, size = len(text), _FIRST_CHUNK
    while hi > start:
        lo = max(start, hi - size)
        found = [m for m in pattern.finditer(text, lo, min(len(text), hi + _CHUNK_OVERLAP)) if m.start() < hi]
        yield from reversed(found)
        hi, size = lo, size * 2


def boxed_from_last(text: str):
    """Boxed answers from the last one backwards, so a caller can stop at the first that counts."""
    for m in finditer_from_last(_BOX_RE, text):
        yield match_boxed(text, _BOX_RE.match(text, m.start()))  # re-matched: the chunk may cut its spaces


def _opens_sentence(text: str, k: int) -> bool:
    """Whether text[k] starts the text, a line, or a sentence (after spaces that follow . ! ? ; :)."""
    while k > 0 and text[k - 1].isspace() and text[k - 1] != "\n":
        k -= 1
    return k == 0 or text[k - 1] in _SENTENCE_END


def retracted_after(text: str, pos: int) -> bool:
    """Whether the model explicitly takes back, after pos, the answer it gave before pos."""
    m = _RETRACT_RE.search(text, pos)
    while m is not None:
        if m.group("interjection") is None or _opens_sentence(text, m.start()):
            return True
        m = _RETRACT_RE.search(text, m.start() + 1)  # a later opener may sit inside this match
    return False


# Closing pleasantries of chat models, after their answer: "Is there anything else I can help you with?",
# "I hope this helps! Let me know if you have any other questions." (MathVista's Bard, tests/judges/real).
_PLEASANTRY_RE = re.compile(
    r"(?:\n|(?<=[.!?]))[ \t]*(?:is there anything else|i hope (?:this|that|it)|let me know|do you have (?:any )?other"
    r"|feel free to|please let me know)\b[^\n]{0,200}\Z", re.IGNORECASE)  # searched in rstripped text
_PLEASANTRY_REACH = 600  # looked for this far from the end only
_MAX_PLEASANTRIES = 4


def without_pleasantries(text: str) -> str:
    """The text without the pleasantries that close it (each a line or sentence of its own)."""
    for _ in range(_MAX_PLEASANTRIES):
        body = text.rstrip()
        m = _PLEASANTRY_RE.search(body, max(0, len(body) - _PLEASANTRY_REACH))
        if m is None or m.start() == 0:
            return body
        text = body[:m.start()]
    return text.rstrip()


_OPEN_CLOSE = (("(", ")"), ("{", "}"), ("[", "]"))
_UNFINISHED_ENDS = tuple("=+-*/^_&\\,({[")
_CURRENCY_RE = re.compile(r"(?<![^\s(])\$(?=\d)")  # " $330": a currency sign, not a math delimiter
LONG_LINE_CHARS = 120  # a last line this long that stops without a closing mark was cut off mid-sentence
_CLOSING_MARKS = tuple(".!?)]}*`\"'$|:”’」。")


def ends_unfinished(text: str) -> bool:
    """Whether the text stops in the middle of something: an expression, a bracket, a math block, or a long line
    with no closing mark (a response cut off at its token limit). Its last line then states nothing."""
    body = text.rstrip()
    line = body[body.rfind("\n") + 1:]
    if body.endswith(_UNFINISHED_ENDS) or (line.count("$") - len(_CURRENCY_RE.findall(line))) % 2:
        return True
    if any(line.count(o) > line.count(c) for o, c in _OPEN_CLOSE):
        return True
    if body.count("\\begin{") > body.count("\\end{") or body.rfind("\\[") > body.rfind("\\]") or body.count("$$") % 2:
        return True  # inside a display block
    return len(line) > LONG_LINE_CHARS and not line.endswith(_CLOSING_MARKS)


LOOP_REPEATS = 4  # a tail that repeats this many times in a row is a loop the model could not leave
_LOOP_PERIODS = range(16, 400)  # characters in one turn of a loop (shorter ones are runs of one token)


def loop_start(text: str) -> int | None:
    """Where a loop that fills the end of the text begins (the same passage over and over until the token
    limit), or None. Each period costs one C-speed comparison of a bounded tail."""
    body = text.rstrip()
    for period in _LOOP_PERIODS:
        n = period * LOOP_REPEATS
        if len(body) < n:
            return None
        tail = body[-n:]
        if tail[period:] == tail[:-period] and len(set(tail[-period:].split())) > 1:  # words, not one digit run
            start = len(body) - n
            floor = max(0, start - 100 * period)  # bounded walk back to the loop's first turn
            while start > floor and body[start - 1] == body[start - 1 + period]:
                start -= 1
            return start
    return None
