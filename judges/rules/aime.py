"""AIME grading: the last committed final answer, read exactly as an integer 0-999."""
from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import islice

from judges.rules import sympy_pool
from judges.rules.aime_plain import (closing_equation, closing_statement, concluding_sentence, one_number_reply,
                                     opening_count, opening_statement)
from judges.rules.deadline import Deadline, SampleTimeout
from judges.rules.extract import (Boxed, boxed_from_last, committed_text, finditer_from_last, lower_same_length,
                                  retracted_after)
from judges.rules.invented_problem import before_invented_problem
from judges.rules.normalise import final_answer_text, fullwidth
from judges.rules.numbers import MAX_ANSWER_CHARS, evaluate, integer_value, needs_sympy
from judges.rules.thinking import closed_thinking, unsettled

# Bump whenever a change can flip a verdict (grades of older runs then stay apart).
PARSER_VERSION = "aime-v10"
TIME_LIMIT_S = 5.0  # per sample: reading the answer plus evaluating it; past it the sample is a judge_error
_CHECK_EVERY = 64  # candidate answers examined between two looks at the clock

# Boxed bodies that repeat the prompt's instruction rather than answer it.
_PLACEHOLDERS = {"", "answer", "your answer", "final answer", "your final answer", "the answer",
                 "...", "\\ldots", "\\dots", "\\cdots", "n", "x", "ans"}

# Candidate anchors are found in the lower-cased text, walked backwards from its end, and checked precisely
# at their position (a case-insensitive alternation scanned over 10k+ characters is slow). The lookahead
# keeps "answer" in running prose from costing a precise check each.
_CANDIDATE_RE = re.compile(r"answer(?=[ \t]*(?:\*\*|__)?[ \t]*(?:is[ \t]*)?[:：]|\s+(?:to\s+(?:the|this)\s+question\s+)?is\b"
                           r"|[ \t*_]*(?:\n|$))|答案|[оО]твет(?=[ \t]*(?:\*\*|__)?[ \t]*[:：]|[^.\n:]{0,60}?[ \t](?:равен|равна|равно|составляет)\b)")
_AT_ANSWER_RE = re.compile(
    r"answer[ \t]*(?:\*\*|__)?[ \t]*(?:is[ \t]*)?[:：]"       # Answer: / **Final Answer:** / answer is:
    r"|answer\s+(?:to\s+(?:the|this)\s+question\s+)?is\b(?:\s*:)?",  # "the answer (to the question) is", lead words checked below
    re.IGNORECASE,
)
_THE_BEFORE_RE = re.compile(r"\b(?:the|my|our)\s+(?:final\s+|correct\s+)?(?:integer\s+|numerical\s+|numeric\s+)?$",
                            re.IGNORECASE)  # "the final integer answer is 0"
_HEADING_PREFIX_RE = re.compile(r"[ \t#>*_]*final[ \t]+", re.IGNORECASE)
_HEADING_PREFIX_MAX = 40  # "### **Final ": a longer run before "answer" is not a heading
_HEADING_RE = re.compile(r"answer[ \t*_]*$", re.IGNORECASE | re.MULTILINE)  # a "**Final Answer**" heading
_AT_ZH_RE = re.compile(r"答案\s*(?:是|为)?\s*[:：]?")                      # 答案：25 / 最终答案是 25
_AT_RU_RE = re.compile(r"[оО]твет[ \t]*(?:\*\*|__)?[ \t]*[:：]"                 # Ответ: 40 (Russian "Answer:")
                       r"|[оО]твет[^.\n:]{0,60}?[ \t](?:равен|равна|равно|составляет)[ \t]*")  # "Ответ ... равен $-5463$"
_LEAD_RE = re.compile(r"[\s*_:>#]*")
_BOXED_AHEAD_RE = re.compile(r"(?:\$\$?|\\\[|\\\()?\s*\\(?:boxed|fbox)(?![A-Za-z])")
# Where an answer given in prose ends: a sentence stop, a clause, a closing dollar.
_SPAN_END_RE = re.compile(
    r"\.(?!\d)|,\s|;|\s\(|\s[-–—]\s|\$|\\\)|\\\]"
    r"|\s(?:since|because|which|as|so|and|but|for|where|when|if|from|by)\b",
    re.IGNORECASE,
)
_DIGIT_RE = re.compile(r"\d")
_SENTENCE_STOP_RE = re.compile(r"[.!?](?=\s|$)")
_WHICH_IS_RE = re.compile(r"(?<![ \t]),?[ \t]+(?:which|that)[ \t]+(?:is|equals|comes[ \t]+to)[ \t]+(?:equal[ \t]+to[ \t]+)?"
                          r"\$?(?P<v>[-+]?\d{1,3}(?:,\d{3})+|[-+]?\d+)\$?(?:[ \t]+[A-Za-z]+)?[ \t*_]*$")
_THERE_ARE_PHRASE_RE = re.compile(r"(?i:there)[ \t]+(?:are|is|were|will[ \t]+be)[ \t]+(?:a[ \t]+total[ \t]+of[ \t]+)?"
                                  r"(?P<v>\d{1,3}(?:,\d{3})+|\d+)[ \t]+(?!(?:or|to|and|more|less|fewer|times)\b)[A-Za-z]")
_LIST_ITEM_RE = re.compile(r"\d{1,2}[.)][ \t]+[A-Za-z]")
# Two formats real models write when a prompt asks for them (tests/judges/real): a JSON reply
# ({"reasoning": ..., "answer": "18"}, in a code fence or not) and a closing "A: 157" line (the GSM8K
# paper's format). Both are read only when they come after every boxed or prose answer.
_JSON_ANSWER_RE = re.compile(
    r'"(?:final_)?answer"[ \t]*:[ \t]*(?:"((?:[^"\\\n]|\\.){1,600})"|([-+]?\d[\d,]*(?:\.\d+)?))')
_LAST_LINE_A_RE = re.compile(r"(?:^|\n)[ \t*_]*A:[ \t*_]*([^\n]{1,80})\Z")
_LAST_LINE_WINDOW = 120  # characters from the end in which the closing "A:" line is looked for
_BARE_NUMBER_RE = re.compile(r"[\s*_$]*([-+−]?\d{1,3}(?:,\d{3})*(?:\.\d+)?|[-+−]?\d+(?:\.\d+)?)[\s*_$.]*")
# A prose answer starts like math: a number, sign, bracket, command, or a one-letter variable in an
# expression ("m + n = 25", "N \\equiv 42"); "an integer between 0 and 999" and "not 25" are prose.
_MATH_START_RE = re.compile(r"[-+−(\[{\\\d.]|[A-Za-z]\s*[-+=*/^_<>\\]")
# Prose may name what it counts after the number ("the answer is 12 triangles."): one word, never one
# that changes the value or hedges it ("12 squared", "7 or more" are no integer).
_PROSE_NOUN_RE = re.compile(r"\$?([-+]?\d{1,3}(?:,\d{3})+|[-+]?\d+)((?:\s+[A-Za-z][A-Za-z'-]+){1,8})")  # "480 in monthly earnings"
# A physical unit written as one symbol after the number ("2180 N", "48W", "76 g"): in an answer phrase or box the symbol
# is the unit, as TheoremQA's answers write it (tests/judges/real); alone in an expression it may be a variable.
_ONE_SYMBOL_UNIT_RE = re.compile(r"\$?([-+]?\d{1,3}(?:,\d{3})+|[-+]?\d+)[ \t]?(?:[kMGmµμ]?(?:W|N|g|m|s|J|V|A|K|C|T|L|Ω))\.?")
# "20% of the cars are semi-automatic": a percentage stated with what it is a share of, as an answer to "what percent".
_COUNT_CLAUSE_RE = re.compile(r"\$?(\d+)(?:%[ \t]+of[ \t]+the)?[ \t]+([A-Za-z][A-Za-z'-]+)[ \t]+"
                              r"(?:have|has|are|is|were|was|can|will|lie|fit)\b")
_ALTERNATIVE_RE = re.compile(r"\b(?:or|and)[ \t]+\$?\d")
_VALUE_WORDS = {"more", "less", "fewer", "than", "not", "and", "times", "plus", "minus", "over", "squared", "cubed",
                "factorial", "mod", "modulo", "divided", "choose", "dozen", "hundred", "thousand", "million", "billion",
                "or", "to", "of", "out", "by", "point", "percent", "tenths", "hundredths", "thousandths", "halves",
                "thirds", "quarters", "fifths", "sixths", "eighths", "ninths", "tens", "hundreds", "thousands",
                "decimal", "approximately", "about", "around", "roughly", "nearly", "almost", "least", "most",
                "ago", "before", "after"}


@dataclass
class AimeReading:
    """What the parser found: the answer text (None if none), how, its integer value, and why not one."""

    text: str | None
    via: str | None
    value: int | None
    note: str | None = None  # why no answer was found
    reason: str | None = None  # why the answer found has no usable value


def _phrase_answer(text: str, end: int) -> str | None:
    """The answer written after an anchor, on the same line or the next non-empty one."""
    lead = _LEAD_RE.match(text, end)
    pos = lead.end() if lead else end
    limit = min(len(text), pos + MAX_ANSWER_CHARS + 50)
    if not _DIGIT_RE.search(text, pos, limit):
        return None  # "the answer is correct", "Answer: see above"
    if _BOXED_AHEAD_RE.match(text, pos):
        return None  # the boxed candidate covers it
    line_end = text.find("\n", pos, limit)
    line = text[pos:line_end if line_end >= 0 else limit]
    if "\n" in text[end:pos] and _LIST_ITEM_RE.match(line):
        return None  # "Here's how I got the answer:\n\n1. We know that ...": a numbered list, not a value
    if line.startswith("$$") or line.startswith("\\["):
        inner = line[2:]
        close = inner.find(line[:2] if line[0] == "$" else "\\]")
        span = inner[:close] if close >= 0 else inner
    elif line.startswith("$") or line.startswith("\\("):
        inner = line[1:] if line[0] == "$" else line[2:]
        close = inner.find("$" if line[0] == "$" else "\\)")
        span = inner[:close] if close >= 0 else inner
    else:
        if not _MATH_START_RE.match(line):
            # "the answer is the number of pairs we counted, which is 73.": the value the description comes to
            there = _THERE_ARE_PHRASE_RE.match(line)  # "the answer is: there are 72 different arrangements"
            if there:
                return there.group("v")
            stop = _SENTENCE_STOP_RE.search(line)
            named = _WHICH_IS_RE.search(line, 0, stop.start() if stop else len(line))
            return named.group("v") if named else None  # checked before the (slower) search for where the span ends
        stop = _SPAN_END_RE.search(line)
        span = _within_braces(line[:stop.start()] if stop else line)
    span = span.strip().strip("*_").strip()
    if not span or not _DIGIT_RE.search(span) or not _MATH_START_RE.match(span):
        return None
    return span


def _within_braces(span: str) -> str:
    """The span up to a "}" that closes a brace opened before it: "\\text{Answer: 500}" gives "500"."""
    depth = 0
    for i, c in enumerate(span):
        depth += (c == "{") - (c == "}")
        if depth < 0:
            return span[:i]
    return span


def _anchor_end(text: str, low: str, p: int) -> int | None:
    """Where the answer after the anchor at trigger position p begins, or None if p is no anchor."""
    if low.startswith("答案", p):
        return _AT_ZH_RE.match(text, p).end()
    if low.startswith(("ответ", "Ответ"), p):
        ru = _AT_RU_RE.match(text, p)
        return ru.end() if ru and not (p > 0 and low[p - 1].isalpha()) else None
    if p > 0 and (low[p - 1].isascii() and low[p - 1].isalnum() or low[p - 1] == "_"):
        return None  # inside a longer word
    m = _AT_ANSWER_RE.match(text, p)
    if m and (m.group().endswith((":", "：")) or _THE_BEFORE_RE.search(text, max(0, p - 30), p)):
        return m.end()
    # A "**Final Answer**" heading: its line starts a few characters before p (looked up in a bounded
    # window, since searching back to the line start from every trigger would be quadratic).
    window = max(0, p - _HEADING_PREFIX_MAX)
    line_start = text.rfind("\n", window, p) + 1
    if (line_start > 0 or window == 0) and _HEADING_PREFIX_RE.fullmatch(text, line_start, p):
        h = _HEADING_RE.match(text, p)
        if h:
            return h.end()
    return None


def _find_answer(text: str, deadline: Deadline) -> tuple[int, int, str, str] | str | None:
    """(start, end, answer text, via) of the last committed answer; a note string when it is unreadable."""
    best: tuple[int, int, str, str] | None = None
    cut_off: int | None = None
    boxes = boxed_from_last(text)
    for i, box in enumerate(boxes):
        if i % _CHECK_EVERY == 0:
            deadline.check("reading the answer")
        if box.body is None:
            cut_off = box.start  # every earlier box comes before it, so none can be the answer
            break
        body = box.body.strip()
        if body.lower().strip("$ ") not in _PLACEHOLDERS:
            paired = _PAIRED_BOX_RE.search(text, max(0, box.start - _PAIRED_BOX_REACH), box.start)
            if paired and paired.group("body").strip() != body:
                return f"two boxed values together ({paired.group('body').strip()} and {body})"
            best = (box.start, box.end, body, "boxed")
            final = _final_box_before(text, body, islice(boxes, _RESTATED_REACH))
            if final is not None:
                best = (final.start, final.end, final.body.strip(), "boxed")
            break
    # Only the last anchor with a readable answer after the box can win, so walk them backwards.
    # A prose answer has a digit, so a tail without one has none (and costs no walk).
    after = best[0] if best else 0
    low = lower_same_length(text) if _DIGIT_RE.search(text, after) else ""
    for i, candidate in enumerate(finditer_from_last(_CANDIDATE_RE, low, after)):
        if i % _CHECK_EVERY == 0:
            deadline.check("reading the answer")
        p = candidate.start()
        end = _anchor_end(text, low, p)
        span = _phrase_answer(text, end) if end is not None else None
        if span is not None:
            best = (p, end + len(span), span, "phrase")
            break
    if cut_off is not None and (best is None or cut_off > best[0]):
        return "last boxed answer not closed"  # the answer it was writing is unknown
    for later in (_json_answer(text, after), _closing_a_line(text)):
        if later is not None and (best is None or later[0] > best[0]):
            best = later
    return best


# A box right before the last one in the same sentence, joined by "and"/"or": "$\boxed{5}$ hours and $\boxed{20}$
# minutes" gives two values, no single integer (ToRA on GSM8K, tests/judges/real).
_PAIRED_BOX_RE = re.compile(r"\\boxed\{(?P<body>[^{}\n]{1,30})\}[^.!?\n\\]{0,30}?\b(?:and|or)\b[^.!?\n\\]{0,10}\Z")
_PAIRED_BOX_REACH = 90
_RESTATED_REACH = 8  # earlier boxes looked at for a final answer that a later box only restates a step of
_FINAL_LABEL_RE = re.compile(r"(?:final[ \t]+answer|answer[ \t]+is)[ \t*_:]*(?:(?:\$\$?|\\\[|\\\()[ \t]*)?$", re.IGNORECASE)


def _final_box_before(text: str, last_body: str, earlier) -> Boxed | None:
    """The box labelled as the final answer before the last box, when the last one restates a step's result
    boxed before that label ("Final answer: \\boxed{73}. Recall the first step gave \\boxed{12}."), else None."""
    final = None
    for box in earlier:
        if box.body is None:
            return None
        body = box.body.strip()
        if final is None:
            if body != last_body and _FINAL_LABEL_RE.search(text, max(0, box.start - 40), box.start):
                final = box
        elif body == last_body:
            return final
    return None


def _json_answer(text: str, after: int) -> tuple[int, int, str, str] | None:
    """The last `"answer": value` of a JSON reply that starts after every other answer found.

    Only when nothing after the reply's closing brace has a digit: prose after it that works a number
    out again may revise the answer, and is read (or not) by the other rules instead.
    """
    # A reply quoted inline (`{"answer": "42"}` in an instruction the model echoes) is an example, not an answer.
    found = next((m for m in islice(finditer_from_last(_JSON_ANSWER_RE, text, after), 8)
                  if not text.startswith("`", m.end())), None)
    if found is None:
        return None
    value = (found.group(1) or found.group(2)).replace('\\"', '"').strip().strip('"').strip()
    if _LETTER_RE.search(final_answer_text(value)):
        # A sentence in the answer field ("Angela will be charged a total of $324.00."): its one number, or the result
        # its last equation comes to ("... off by 1800 - 1440 = 360 red jelly beans.").
        last = value.rsplit(". ", 1)[-1]
        numbers = _NUMBER_RE.findall(last)
        result = _RESULT_AT_END_RE.search(last)
        if len(numbers) != 1 and result is None:
            return None
        value = numbers[0] if len(numbers) == 1 else result.group(1)
    if not _DIGIT_RE.search(value):
        return None
    close = text.find("}", found.end())
    if _concluded_otherwise(text[close + 1 if close >= 0 else found.end():], value):
        return None
    return (found.start(), found.end(), value, "json")


_RESULT_AT_END_RE = re.compile(r"=[ \t]*\$?([-+]?\d[\d,]*(?:\.\d+)?)(?:[ \t]+[A-Za-z][A-Za-z'-]*){0,4}[ \t]*\.?[ \t]*$")
_RELATIVE_CLAUSE_RE = re.compile(r"(?<!\s)\s+(?:that|which|who)\s")
_LETTER_RE = re.compile(r"[A-Za-z]{2,}")
_NUMBER_RE = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?")
# A sentence of the prose after a JSON reply that concludes ("Therefore, David saves $6.").
_CONCLUSION_RE = re.compile(r"\b(?:therefore|thus|hence|in conclusion|the (?:final |correct )?answer|the result)\b", re.IGNORECASE)
_PROSE_SENTENCE_RE = re.compile(r"[^.!?\n]*(?:\.(?=\d)[^.!?\n]*)*(?:[.!?\n]|$)")  # "$324.00" stays whole
_MAX_PROSE_CHARS = 4000
_CLOSING_MARKS = tuple(".!?)]}*`\"'$|")  # what a finished reply may end with  # how much prose after a JSON reply is read for a different conclusion


def _plain_number(text: str) -> str | None:
    """ "$1,520.00" -> "1520"; None when the text is no plain number."""
    m = _NUMBER_RE.fullmatch(text.strip().lstrip("$").rstrip(".").strip())
    if m is None:
        return None
    number = m.group().replace(",", "")
    return number.split(".")[0] if re.fullmatch(r"[-+]?\d+\.0*", number) else number


def _concluded_otherwise(prose: str, value: str) -> bool:
    """Whether the prose after a JSON reply concludes with another number than the reply's answer.

    A restatement ("Therefore, the tallest tree is 34 feet tall.") keeps the answer; a conclusion that
    works out another value ("Therefore, David saves $6.") revises it, and the other rules read that.
    """
    if not _DIGIT_RE.search(prose):
        return False
    want = _plain_number(final_answer_text(value))
    if want is None:
        return True
    if prose.rstrip()[-1:] not in _CLOSING_MARKS and len(prose) > _MAX_PROSE_CHARS // 4:
        return True  # long prose cut off mid-sentence: what it was concluding is unknown
    last = None
    for sentence in _PROSE_SENTENCE_RE.findall(prose[:_MAX_PROSE_CHARS]):
        if _CONCLUSION_RE.search(sentence) and _DIGIT_RE.search(sentence):
            last = sentence
    return last is not None and want not in {_plain_number(n) for n in _NUMBER_RE.findall(last)}


def _closing_a_line(text: str) -> tuple[int, int, str, str] | None:
    """A last line "A: 157", as the GSM8K paper's answers end."""
    body = text.rstrip()
    window = max(0, len(body) - _LAST_LINE_WINDOW)
    found = _LAST_LINE_A_RE.search(body, window)
    if found is None:
        return None
    value = found.group(1).strip().strip("*_").strip()
    if not _MATH_START_RE.match(value) or not _DIGIT_RE.search(value):
        return None
    return (found.start(), found.end(), value, "closing line")


class ReadFailed(Exception):
    """The reading could not finish: the time limit passed, or no sympy worker runs. The message says which."""


def read_aime(response: str, deadline: Deadline | None = None, cut_off: bool = False) -> AimeReading:
    """Find the last committed final answer in a response and read its integer value.

    cut_off: the response stopped at the token limit with no thinking split off; if it never closed a
    thinking block, it may end inside the thinking its chat template opened, and only a settled answer
    counts (judges/rules/thinking.py).
    Raises ReadFailed when the deadline (default: TIME_LIMIT_S from now) passes first, or when an
    expression needs sympy and no worker runs.
    """
    try:
        return _read(response, deadline or Deadline(TIME_LIMIT_S), cut_off and not closed_thinking(response))
    except (SampleTimeout, sympy_pool.WorkerUnavailable) as exc:
        raise ReadFailed(str(exc)) from exc


def _read(response: str, deadline: Deadline, thinking_cut: bool) -> AimeReading:
    text, think_open = committed_text(response)
    if not text.isascii():
        text = fullwidth(text)
    text = before_invented_problem(text)
    found = _find_answer(text, deadline)
    if isinstance(found, str):
        return AimeReading(None, None, None, found)
    if found is None and thinking_cut:  # a sentence mid-thought states nothing
        return AimeReading(None, None, None,
                           "think block not closed" if think_open else "cut off before settling on an answer")
    if found is not None and thinking_cut and unsettled(text, found[0], found[1]):
        return AimeReading(None, None, None, f"cut off while still weighing {found[2]!r}")
    if found is None:
        bare = _BARE_NUMBER_RE.fullmatch(text)
        if bare:  # the whole committed text is one number ("25", "**025**", "$25$.")
            value, reason = answer_value(bare.group(1), deadline)
            return AimeReading(bare.group(1), "bare", value, reason=reason)
        closing = closing_statement(text, _VALUE_WORDS)
        if closing is not None:  # "The age gap between the two people is 10 years."
            return AimeReading(closing, "closing statement", int(closing))
        plain = ((lambda t: one_number_reply(t, _VALUE_WORDS), "one-number reply"),
                 (opening_statement, "opening statement"), (closing_equation, "closing equation"),
                 (lambda t: opening_count(t, _VALUE_WORDS), "opening count"),
                 (lambda t: concluding_sentence(t, _VALUE_WORDS), "concluding sentence"))
        for rule, via in plain:
            found_value = rule(text)
            if found_value is not None:
                return AimeReading(found_value, via, int(found_value))
        return AimeReading(None, None, None, "think block not closed" if think_open else None)
    _, end, answer, via = found
    deadline.check("reading the answer")
    if retracted_after(text, end):
        return AimeReading(None, None, None, f"answer {answer!r} retracted afterwards")
    value, reason = answer_value(answer, deadline)
    if value is None and via in ("phrase", "json"):
        # "64 distinct polynomials that meet the criteria": the relative clause says what is counted
        clean = final_answer_text(answer)
        noun = _PROSE_NOUN_RE.fullmatch(_RELATIVE_CLAUSE_RE.split(clean.rstrip("."), 1)[0])
        unit = _ONE_SYMBOL_UNIT_RE.fullmatch(clean)
        if unit:
            value, reason = int(unit.group(1).replace(",", "")), None
        elif noun and not _VALUE_WORDS.intersection(noun.group(2).lower().split()):
            value, reason = int(noun.group(1).replace(",", "")), None
        else:
            # "the answer is 2 bars have values above 4": a count, then a clause about what it counts
            counted = _COUNT_CLAUSE_RE.match(clean)
            if counted and counted.group(2).lower() not in _VALUE_WORDS and not _ALTERNATIVE_RE.search(answer):
                value, reason = int(counted.group(1)), None
    return AimeReading(answer, via, value, reason=reason)


def answer_value(answer: str, deadline: Deadline) -> tuple[int | None, str | None]:
    """The exact integer an answer denotes, and why there is none ("not an integer", "too large").

    Plain arithmetic is evaluated here with fractions; letter-free roots, binomials and factorials
    go to a sympy worker, limited to the time the deadline has left. Never floating point.
    """
    if len(answer) > MAX_ANSWER_CHARS:
        return None, "not an integer"  # prose, or digits far beyond any answer
    if answer.isdigit() and answer.isascii():
        return int(answer), None  # the common case
    clean = final_answer_text(answer)
    value, why = evaluate(clean)
    if value is not None:
        return (int(value), None) if value.denominator == 1 else (None, "not an integer")
    if why == "too large":
        return None, "too large to evaluate"
    if not needs_sympy(clean):
        return None, "not an integer"
    deadline.check("reading the answer")
    try:
        reply = sympy_pool.request({"integer": clean}, timeout_s=deadline.left())
    except sympy_pool.WorkerTimeout:
        raise deadline.timeout(f"evaluating the answer {clean}") from None
    if isinstance(reply.get("integer"), str):
        return int(reply["integer"]), None
    reason = str(reply.get("reason") or "not an integer")
    if "too large" in reason:  # exponent, power, factorial or result past the worker's bounds
        return None, "too large to evaluate"
    return None, reason if reason == "not an integer" else f"not evaluated: {reason}"


def parse_target(target: str) -> int | None:
    """The gold answer as an integer ("025" is 25); None if it is not one."""
    return integer_value(str(target))


def normalised(reading: AimeReading) -> str | None:
    """The extracted answer as recorded: the integer when there is one, else the cleaned text."""
    if reading.text is None:
        return None
    if reading.value is not None:
        return str(reading.value)
    return final_answer_text(reading.text) or reading.text
