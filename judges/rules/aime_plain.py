"""Integer answers given without an answer word, read only when the AIME reader found no other answer.

Short replies of chat and vision-language models (tests/judges/real, MathVista) state their answer in the
closing sentence: "The missing number is 9.", "The number of years is: 6", "Thus, 196 has **9** divisors.",
"There are three objects left." Each rule reads one such shape, and only when it states one integer.
"""
from __future__ import annotations

import re

from judges.rules.extract import ends_unfinished, without_pleasantries

_INT = r"[-−]?(?:\d{1,3}(?:,\d{3})+|\d{1,7})"
# Number words a short reply counts in ("There are three objects left", "Two").
NUMBER_WORDS = {w: n for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_WORD = "(?:" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + ")"
_VALUE = rf"(?P<n>{_INT}|(?i:{_WORD})\b)"
# "... is 9.", "... is: 6", "... is **2013**", "... is 99%", "... is 10 years." (a unit may follow).
_STATEMENT_RE = re.compile(
    rf"(?:\b(?:is|are|was|were|equals|is\s+equal\s+to|would\s+be|will\s+be)|\b(?i:final\s+value))[ \t]*(?::[ \t]*)?"
    rf"[*_$]*(?:\\\([ \t]*)?{_VALUE}(?:\.0+(?=[*_$]*[.!]))?[*_$]*(?:[ \t]*\\\))?"  # "is **9**", "is \\( 14 \\)"
    r"(?P<unit>[ \t]*%|(?:[ \t]+[A-Za-z][A-Za-z'-]*){1,2})?[ \t*_.!]*\Z")
# "There are three objects left ...": a count opening a short reply's closing sentence.
# A leading clause may come first: "After subtracting the cubes, there are 4 objects left."
_THERE_ARE_RE = re.compile(rf"[ \t*_]*(?:so,?[ \t]+|therefore,?[ \t]+|[^,.\n \t*_][^,.\n]{{0,120}},[ \t]+)?there[ \t]+"
                           rf"(?:are|is|were|was|will[ \t]+be)[ \t]+(?:a[ \t]+total[ \t]+of[ \t]+)?{_VALUE}[ \t]+[A-Za-z]",
                           re.IGNORECASE)
# A concluding sentence that marks one integer in bold ("Thus, ... **9** ...", "... = **18 feet**.").
_CONCLUDES_RE = re.compile(r"\s*(?:thus|therefore|so|hence|in conclusion)\b", re.IGNORECASE)
_BOLD_RE = re.compile(rf"\*\*\$?(?P<n>{_INT})\$?(?P<unit>(?:[ \t]+[A-Za-z][A-Za-z'-]*){{0,2}})\*\*")
_BOLD_CLOSES_RE = re.compile(r"[ \t.!]*\Z")
_WORD_ALONE_RE = re.compile(rf"[\s*_]*(?P<n>(?i:{_WORD}))[\s*_.!]*")
_WORDS_RE = re.compile(r"[A-Za-z]+")
_DESCRIBES_RE = re.compile(r"\b(?:the|these|those|both|than|of|with|exactly|least|most|over|under|above|below)"
                           r"[ \t]+\$?\Z", re.IGNORECASE)
_HEDGED_RE = re.compile(r"\b(?:if|not|suppose|assuming|whether|unless|cannot|can't|maybe|perhaps|or)\b", re.IGNORECASE)
_NUMBER_RE = re.compile(r"\d[\d,]*(?:\.\d+)?")
_SENTENCE_STOP_RE = re.compile(r"[.!?](?=\s)|\n")
# A sentence that gives the reason for the one before it.
_EXPLAINS_RE = re.compile(r"[ \t]*(?:this|that|it)[ \t]+is[ \t]+(?:because|since|due|why)\b", re.IGNORECASE)
_OPENING_BOLD_RE = re.compile(rf"\b(?:is|are|was|were|equals)[ \t]*(?::[ \t]*)?\*\*\$?(?P<n>{_INT})\$?\*\*(?=[ \t]*(?:[.!][ \t]*)?\Z)")
_EQUATION_END_RE = re.compile(rf"=[ \t]*[*_$]*(?P<n>{_INT})[*_$]*[ \t]*(?:[.!][ \t]*)?\Z")
# A clause that adds detail to the statement before it ("..., with one aged 23"), not a second statement.
_DETAIL_RE = re.compile(r"(?:with|as|since|because|which|given|meaning|based|according)\b", re.IGNORECASE)
# What makes a one-sentence reply no answer: a blank left to fill ("___"), or a contrast of two claims.
_UNSURE_RE = re.compile(r"__|\b(?:but|however|while)\b", re.IGNORECASE)
_SIGNED_NUMBER_RE = re.compile(r"(?:(?<![\w)\]}])[-−])?\d[\d,]*(?:\.\d+)?")  # "=-52", not the "-" of "5-year"
_FIRST_VERB_RE = re.compile(r"\b(?:is|are|was|were|equals|would[ \t]+be|will[ \t]+be)\b")
_COPULA_AFTER_RE = re.compile(r"\b(?:is|are|was|were|equals)\b")
# A closing sentence that opens with a count and what it counts, then a verb: "Ten men can stay ...".
_OPENING_COUNT_RE = re.compile(rf"[*_]*(?P<n>{_INT}|(?i:{_WORD})\b)[*_]*(?:%[ \t]+of(?:[ \t]+the)?)?[ \t]+(?P<counted>[A-Za-z][A-Za-z'-]*(?:[ \t]+[A-Za-z][A-Za-z'-]*)?)"
                               r"[ \t]+(?:were|was|are|is|will|would|can|could|did|do|does|have|has|had|need|needs|must|should"
                               r"|[a-z]+ed|accept|get|got|remain|remains)\b")
# "did not", "were not": a negation inside what is counted, not a hedge on the count.
_COUNTED_NEGATION_RE = re.compile(r"\b(?:did|do|does|were|was|are|is|can|could|will|would)[ \t]+not\b", re.IGNORECASE)
_FINISHED_MARKS = tuple(".!)]*$\"'”’")
ONE_SENTENCE_CHARS = 200  # a one-sentence reply this short with one number gives that number
OPENING_REPLY_CHARS = 1200  # a reply whose opening sentence states the answer in bold: short ones only
CLOSING_SENTENCE_CHARS = 300  # the last sentence is looked for this far from the end
SHORT_REPLY_CHARS = 400  # counts in words and "There are N ..." are read in short replies only


def _last_sentence(body: str) -> str:
    tail = body[-CLOSING_SENTENCE_CHARS:]
    stops = [m.end() for m in _SENTENCE_STOP_RE.finditer(tail)]
    return tail[stops[-1]:] if stops else tail


def closing_statement(text: str, value_words: set[str]) -> str | None:
    """The integer a reply's closing sentence states, or None. value_words: words that, after the number,
    change or hedge it ("7 or more", "12 squared"), so that no integer is read."""
    body = without_pleasantries(text[-CLOSING_SENTENCE_CHARS - 700:])
    sentence = _last_sentence(body)
    if _EXPLAINS_RE.match(sentence) and body[:len(body) - len(sentence)].strip():
        # "... there are 3 objects left. This is because ...": the reason given after a statement states nothing.
        body = body[:len(body) - len(sentence)].rstrip()
        sentence = _last_sentence(body)
    if _HEDGED_RE.search(sentence):
        return None
    bold = list(_BOLD_RE.finditer(sentence))
    if len(bold) == 1 and not value_words.intersection(bold[0].group("unit").lower().split()) and (
            _CONCLUDES_RE.match(sentence) or _BOLD_CLOSES_RE.match(sentence, bold[0].end())):
        return _integer(bold[0].group("n"))
    short = len(text) <= SHORT_REPLY_CHARS
    word = _WORD_ALONE_RE.fullmatch(body)
    if word:  # the whole reply is a count in words: "Two", "**three**."
        return _integer(word.group("n"))
    # "There are 4 objects left." in a short reply; in a long one only as its conclusion ("Therefore, there are 10 ways ...")
    m = _STATEMENT_RE.search(sentence) or (_THERE_ARE_RE.match(sentence) if short or _CONCLUDES_RE.match(sentence) else None)
    if m is None or (not short and not m.group("n")[-1:].isdigit()):
        return None
    if _other_values(sentence, m.span("n")):
        return None  # another number in the sentence ("four cars and one bus"): which one answers is unclear
    unit = (m.groupdict().get("unit") or "").lower().split()
    if value_words.intersection(unit):
        return None
    value = _integer(m.group("n"))
    before = [s for s in _SENTENCE_STOP_RE.split(body[:len(body) - len(sentence)]) if s.strip()]
    earlier = _STATEMENT_RE.search(before[-1].rstrip()) if before else None
    if earlier and _integer(earlier.group("n")) != value:
        return None  # "The combined share is 43%. The remaining share is 57%.": two statements in a row, two values
    return value


def opening_count(text: str, value_words: set[str]) -> str | None:
    """The count a reply's closing sentence opens with: "Four containers were imported on the second day.", "20 guests
    did not get a second hotdog." (ToRA's GSM8K answers after their code's output, tests/judges/real). The sentence
    holds no other number and no hedge; what follows the count is what it counts, a negation included."""
    if ends_unfinished(text):
        return None
    body = without_pleasantries(text[-CLOSING_SENTENCE_CHARS - 700:]).rstrip()
    sentence = _last_sentence(body).strip()
    m = _OPENING_COUNT_RE.match(sentence) if sentence.endswith((".", "!")) else None
    if m is None or value_words.intersection(w.lower() for w in m.group("counted").split()):
        return None  # "5 times 4 is 20.", "3 more cookies ...": the words after the number change it
    if _HEDGED_RE.search(_COUNTED_NEGATION_RE.sub(" ", sentence)):
        return None
    count = _integer(m.group("n"))
    if _other_values(sentence, m.span("n")) and (count != _last_program_output(body) or _SECOND_COUNT_RE.search(sentence)):
        # "Three trucks will be needed to carry 80 stones." is read only when the code printed 3, and not when a
        # second count joins the first ("Four crates ... on the second day and 6 on the third.")
        return None
    return count


_SECOND_COUNT_RE = re.compile(rf"\b(?:and|or)[ \t]+(?:\$?\d|(?i:{_WORD})\b)")
# The printed result of the program a tool-integrated answer ran last ("```output\n3.0\n```"), as an integer.
_OUTPUT_BLOCK_RE = re.compile(r"```output[ \t]*\n[ \t]*(?P<n>-?\d{1,9})(?:\.0+)?[ \t]*\n```")


def _last_program_output(body: str) -> str | None:
    found = None
    for found in _OUTPUT_BLOCK_RE.finditer(body):
        pass
    return found.group("n") if found else None


def concluding_sentence(text: str, value_words: set[str]) -> str | None:
    """The one integer of a closing sentence that concludes with a verb of its own: "Therefore, Chase will spend $18 in
    total.", "Therefore, David saves $6 by buying a bracelet for all 9 rides." (a clause saying how or why may follow,
    its numbers are not the answer)."""
    if ends_unfinished(text):
        return None
    body = without_pleasantries(text[-CLOSING_SENTENCE_CHARS - 700:]).rstrip()
    sentence = _last_sentence(body).strip()
    if not sentence.endswith((".", "!")) or not _CONCLUDING_RE.match(sentence) or _HEDGED_RE.search(sentence):
        return None
    first = _SIGNED_NUMBER_RE.search(sentence)
    clause = _MEANS_CLAUSE_RE.search(sentence, first.end()) if first else None
    main = sentence[:clause.start()] if clause else sentence
    numbers = list(_SIGNED_NUMBER_RE.finditer(main))
    if len(numbers) != 1 or "." in numbers[0].group() or _other_values(main, numbers[0].span()):
        return None
    after = main[numbers[0].end():].lower().split()
    if after and after[0].strip(".,") in value_words:
        return None  # "3 more", "5 times"
    return _integer(numbers[0].group())


_CONCLUDING_RE = re.compile(r"[ \t*_]*(?:therefore|thus|hence|so|in\s+conclusion)\b", re.IGNORECASE)
# Where a clause saying how or why begins after the value.
_MEANS_CLAUSE_RE = re.compile(r"\s(?:by|because|since|as|which|instead\s+of|after|when|compared|rather\s+than)\b",
                              re.IGNORECASE)


def one_number_reply(text: str, value_words: set[str]) -> str | None:
    """The integer of a reply that is one short sentence giving one number ("The hand points to the number 3."),
    or whose main clause states one before a clause that adds detail ("The gap is 23 years, with one aged ...")."""
    body = without_pleasantries(text).strip().strip("*_ \t")
    if len(body) > ONE_SENTENCE_CHARS or body.endswith("?") or _HEDGED_RE.search(body) or _UNSURE_RE.search(body):
        return None
    stops = [m.end() for m in _SENTENCE_STOP_RE.finditer(body)]
    if stops and body[stops[0]:].strip():
        return None  # more than one sentence
    if not body.endswith(_FINISHED_MARKS) and not body[:1].isdigit():
        return None  # "Working: 12 so far, then": cut off before its statement ("3 centimeters" is a whole reply)
    sentence = body.rstrip(".! \t")
    clause, _, detail = sentence.partition(", ")
    m = _STATEMENT_RE.search(clause)
    if m and _DETAIL_RE.match(detail) and "=" not in detail and not _other_values(clause, m.span("n")):
        unit = (m.group("unit") or "").lower().split()
        return None if value_words.intersection(unit) else _integer(m.group("n"))
    numbers = list(_SIGNED_NUMBER_RE.finditer(sentence))
    if len(numbers) != 1 or _other_values(sentence, numbers[0].span()) or "." in numbers[0].group():
        return None
    if _DESCRIBES_RE.search(sentence, 0, numbers[0].start()):
        return None  # "the shipments with exactly 56 boxes": the number says what is counted, not how many
    if _COPULA_AFTER_RE.search(sentence, numbers[0].end()):
        return None  # the number is in the subject: "The limit as x approaches -1 is undefined."
    after = sentence[numbers[0].end():].lower().split()
    if after and after[0] in value_words:
        return None  # "3 times", "7 or more"
    return _integer(numbers[0].group())


def opening_statement(text: str) -> str | None:
    """The integer a short reply states in bold in its first sentence ("The lowest year was **2013**. ..."), when
    no other bold number follows: the answer first, then what supports it."""
    body = without_pleasantries(text).strip()
    if len(body) > OPENING_REPLY_CHARS:
        return None
    stop = _SENTENCE_STOP_RE.search(body)
    first = body[:stop.end() if stop else len(body)]
    m = _OPENING_BOLD_RE.search(first)
    if m is None or _HEDGED_RE.search(first):
        return None
    bold = {_integer(b.group("n")) for b in _BOLD_RE.finditer(body)}
    value = _integer(m.group("n"))
    return value if bold == {value} else None


def closing_equation(text: str) -> str | None:
    """The integer that ends the reply's last line as the result of an equation ("40 + 33 = 73"), when the reply
    finished (a line cut off at the token limit may stop at any "=")."""
    body = without_pleasantries(text[-CLOSING_SENTENCE_CHARS - 700:])
    line = body[body.rfind("\n") + 1:]
    m = _EQUATION_END_RE.search(line, max(0, len(line) - 40))
    if m is None or ends_unfinished(body):
        return None
    return _integer(m.group("n"))


def _other_values(sentence: str, value: tuple[int, int]) -> int:
    """How many numbers, in digits or in words, the sentence gives besides the value at that span. A number that
    only describes what is counted does not count: "the two people", "values smaller than 0", "with 56 boxes"."""
    found = [m for m in _WORDS_RE.finditer(sentence) if m.group().lower() in NUMBER_WORDS]
    found += list(_NUMBER_RE.finditer(sentence))
    # The value as the result of an equation too ("Since BE + CF = 8, EF is 8") is the same value, said twice.
    same = _integer(sentence[value[0]:value[1]])
    # Numbers before the sentence's first verb, the value after it, name the subject: "The ACK number at message 6 is
    # 1000.", "The sales for 1970 would be 1210 units."
    # A phrase set off by a comma before the subject ("Of the 5 people, ...", "In 2012, ...") is not part of it.
    verb = _FIRST_VERB_RE.search(sentence)
    subject = (sentence.rfind(",", 0, verb.start()), verb.start()) if verb and verb.end() <= value[0] else (0, -1)
    return sum(1 for m in found if not (m.start() < value[1] and value[0] < m.end())
               and not subject[0] < m.start() < subject[1]
               and not _DESCRIBES_RE.search(sentence, 0, m.start())
               and not _is_argument(sentence, m.start(), m.end())
               and not (_integer(m.group()) == same and sentence[:m.start()].rstrip(" \t$").endswith("=")))


def _is_argument(sentence: str, start: int, end: int) -> bool:
    """A number as a function's argument names what is stated, it is not a value: "The value of f(0) is 1."."""
    return sentence[start - 2:start - 1].isalpha() and sentence[start - 1:start] == "(" and sentence[end:end + 1] == ")"


def _integer(written: str) -> str:
    low = written.lower()
    if low in NUMBER_WORDS:
        return str(NUMBER_WORDS[low])
    return written.replace("−", "-").replace(",", "")
