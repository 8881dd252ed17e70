"""The one place that turns a final-answer string into plain math text: every clean-up regex lives here.

Two flavours share the same steps: `final_answer_text` reads an answer as one value (AIME: the right-hand
side of "m+n=25", units and "\\pmod" dropped), `expression_text` keeps its structure for math_equiv.
"""
from __future__ import annotations

import re

from judges.rules.vocabulary import WRAPPER_RE_PART

# \text{25}, \textbf{25}, \mathrm{cm}: the wrapper goes, its content stays.
_WRAPPER_RE = re.compile(rf"\\{WRAPPER_RE_PART}\s*\{{([^{{}}]*)\}}")
# Degrees, with the temperature scale after them if any ("-10°F", "25^\circ C").
_DEGREE_RE = re.compile(r"(?:\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ|\\degree|°|º)(?:[ \t]?[CF](?![A-Za-z]))?")
_DELIMITER_RE = re.compile(r"\$|\\\(|\\\)|\\\[|\\\]|\\left(?![A-Za-z])|\\right(?![A-Za-z])|\\displaystyle")
_SPACING_RE = re.compile(r"\\[,!;: ]|~|\\q?quad(?![A-Za-z])")
_WHITESPACE_RE = re.compile(r"\s+")


class CharMap:
    """One character for one character (every index stays in place), skipping texts that hold none of them:
    str.translate looks each character up in a dict (~1 ms per 10k characters), a character-class search
    is ~50x faster, and most real responses that are not ASCII hold only a curly quote or a dash."""

    def __init__(self, mapping: dict[str, str]) -> None:
        self.table = str.maketrans(mapping)
        self._any = re.compile("[" + "".join(re.escape(c) for c in mapping) + "]")

    def __call__(self, text: str) -> str:
        return text.translate(self.table) if self._any.search(text) else text


# Spaces as typeset by models and editors: THIN, NARROW NO-BREAK, NO-BREAK and IDEOGRAPHIC SPACE; and the
# invisible ZERO WIDTH SPACE, WORD JOINER and BYTE ORDER MARK, read as a space ("\u200b\u200b(D) 122" opens with "(D)").
unicode_spaces = CharMap({"\u2009": " ", "\u202f": " ", "\u00a0": " ", "\u3000": " ",
                          "\u200b": " ", "\u2060": " ", "\ufeff": " "})
# Full-width letters, digits and punctuation (CJK-locale outputs) as ASCII.
fullwidth = CharMap(
    {**{chr(0xFF21 + i): chr(0x41 + i) for i in range(26)},
     **{chr(0xFF41 + i): chr(0x61 + i) for i in range(26)},
     **{chr(0xFF10 + i): chr(0x30 + i) for i in range(10)},
     "：": ":", "（": "(", "）": ")", "［": "[", "］": "]", "｛": "{", "｝": "}", "．": ".", "，": ",", "。": "."}
)

# A whole answer that is one number with thousands separators: 1,000 / 1{,}000 / 1\,000 / 12,345,678
# (LaTeX spacing is a plain space by then).
# Only a whole answer: "(3,141)" is a pair and "\{1,234\}" a set, never 3141 or 1234.
_THOUSANDS_RE = re.compile(r"[+-]?\d{1,3}(?:(?:,|\{,\}| )\d{3})+(?:\.\d+)?")
_THOUSANDS_SEP_RE = re.compile(r",|\{,\}| ")
# Markdown emphasis around the whole answer (**25**, __25__); "2**3" inside is a power, not bold.
_EMPHASIS_RE = re.compile(r"^(\*\*|__|\*|_)(.+)\1$", re.DOTALL)
# "\\pmod{1000}", "(\\bmod 1000)", "(\\text{mod } 1000)" after a remainder.
_MOD_RE = re.compile(r"\\pmod\s*\{[^{}]*\}|\\pmod\s*\d+"
                     r"|\(\s*(?:\\(?:text|textrm|mathrm|operatorname)\s*\{\s*mod\s*\}|\\?b?mod)\s*\{?\s*\d+\s*\}?\s*\)")
# "2**3" and "10 ** 10" are powers; any other "**" or "__" is markdown emphasis.
_POWER_STARS_RE = re.compile(r"(?<=[\d)}])\s*\*\*\s*(?=[\d({+-])")
_EMPHASIS_MARKS_RE = re.compile(r"\*\*|__")

# The unit allow-list: only these words may follow a number and be dropped. Anything else with
# letters ("3x", "12 n", "2 i", "7 or more") is an expression or prose, never an integer.
_UNIT_WORDS = (
    r"(?:square\s+|sq\.?\s+|cubic\s+)?units?|cm|mm|km|meters?|metres?|centimeters?|centimetres?|kilometers?"
    r"|inch(?:es)?|ft|feet|foot|yards?|miles?|degrees?|deg|radians?|rad|dollars?|cents?|usd"
    r"|seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|years?|kg|grams?|percent"
    r"|ms|[kmg]?hz|[kmg]?bps|[km]?bytes?|bits?|mph|rpm"  # written glued to the number too ("97ms", "500kbps")
)
# One-letter units (m, s, g, h) are variables when bare; only inside \text{...} / \mathrm{...} are they units.
_WRAPPED_UNIT_RE = re.compile(
    r"\\(?:text|textrm|mathrm|mbox)\s*\{\s*(?:" + _UNIT_WORDS + r"|m|s|g|h)\s*\.?\s*\}"
    r"(?:\s*\^\s*\{?\s*[23]\s*\}?|[²³])?\s*\.?\s*$", re.IGNORECASE)
_BARE_UNIT_RE = re.compile(
    r"(?<=[\d}).])\s*(?:" + _UNIT_WORDS + r")(?:\s*\^\s*\{?\s*[23]\s*\}?|[²³])?\s*\.?\s*$", re.IGNORECASE)
# SI units as physics answers write them (TheoremQA, tests/judges/real): "48V^2/\\Omega", "12 m/s^2", "5 kJ/mol".
# A one-letter symbol stays a variable ("3 m", "2 m^2"); a unit is read only as a quotient or a product of symbols,
# or as a symbol of two or more characters.
_SI_SYMBOL = r"(?:[kMGmµμn]?(?:m|s|g|V|J|N|W|Pa|Hz|A|K|eV|mol|L|T|Ω|\\Omega)|h|min)"
_SI_TERM = _SI_SYMBOL + r"(?:\s*\^\s*\{?\s*-?\d\s*\}?|[²³])?"
_SI_UNIT_RE = re.compile(
    r"(?<=[\d}).])\s*(?:" + _SI_TERM + r"(?:\s*(?:/|\\cdot|·|\*)\s*" + _SI_TERM + r")+"
    r"|[kMGmµμ](?:m|s|g|V|J|N|W|Pa|Hz|A|eV|mol)|eV|mol|Pa|Ω|\\Omega)"
    r"\s*\.?\s*$")
# An ordinal ("12th", "12^{\\mathrm{th}}" once unwrapped to "12^{ th }") names the number: "the 12th grade" reads as 12.
_ORDINAL_RE = re.compile(r"(?<=\d)(?:\^\s*\{?\s*(?:st|nd|rd|th)\s*\}?|(?:st|nd|rd|th)\b)")
# A number written in the base the problem asks for ("52_8", "204_{5}"): its digits are the answer as written. Read only
# when every digit is a digit of that base.
_BASE_SUBSCRIPT_RE = re.compile(r"^(\d+)_\{?\s*(\d{1,2})\s*\}?$")
_PERCENT_TAIL_RE = re.compile(r"(?<!\s)\s*\\?%\s*$")  # starts only where a space run does: linear
# LaTeX written as the Unicode symbol a model may type instead: \hbar/ħ, \sqrt{2}/√2, \frac{a}{b}/a/b.
_HBAR_RE = re.compile(r"\\hbar\b")
_SQRT_RE = re.compile(r"\\sqrt\b")
_FRAC_RE = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_LEFT_VARIABLE_RE = re.compile(r"^\s*[A-Za-z](?:_\{?\w+\}?)?\s*=(?!=)")


def unwrap(text: str) -> str:
    """Drop \\text{...}-style wrappers, keeping their content (nested up to three deep)."""
    for _ in range(3):
        out = _WRAPPER_RE.sub(r" \1 ", text)
        if out == text:
            break
        text = out
    return text


def strip_emphasis(text: str) -> str:
    """Markdown bold or italics around the whole answer: "**25**" -> "25"."""
    for _ in range(3):
        m = _EMPHASIS_RE.match(text)
        if not m:
            break
        text = m.group(2).strip()
    return text


def join_thousands(text: str) -> str:
    """A whole answer written with thousands separators as one plain number; anything else unchanged."""
    if _THOUSANDS_RE.fullmatch(text):
        return _THOUSANDS_SEP_RE.sub("", text)
    return text


def _common(text: str) -> str:
    """Steps both flavours share: typeset minus, spacing, math delimiters, emphasis."""
    s = unicode_spaces(text.replace("−", "-")).replace("\\$", " ")
    s = _SPACING_RE.sub(" ", _DELIMITER_RE.sub(" ", s))
    return strip_emphasis(_WHITESPACE_RE.sub(" ", s).strip())


def final_answer_text(text: str) -> str:
    """An answer reduced to the text of its value: "$m+n = \\boxed{25}$ cm" style wrapping removed.

    Drops the allow-listed units, degrees, a trailing percent sign (never rescaled: 25% reads as 25),
    dollar signs, markdown emphasis, "\\pmod{..}", and keeps the right-hand side of the last "=" or "\\equiv".
    """
    s = _WRAPPED_UNIT_RE.sub("", _common(text))  # before unwrapping: "\\text{ m}" is a unit, a bare "m" is not
    s = _MOD_RE.sub("", unwrap(s))
    s = s.replace("\\equiv", "=").replace("≡", "=")
    if "=" in s:
        s = s.rsplit("=", 1)[1]  # "m+n=25", "x = 25", "N \\equiv 25": the value is the last right-hand side
    s = _DEGREE_RE.sub("", s.strip().rstrip(".").strip())
    s = _PERCENT_TAIL_RE.sub("", s)
    s = _BARE_UNIT_RE.sub("", s).strip().rstrip(".").strip()
    s = _SI_UNIT_RE.sub("", s).strip()
    s = _ORDINAL_RE.sub("", s)
    base = _BASE_SUBSCRIPT_RE.match(s)
    if base and 2 <= int(base.group(2)) <= 36 and all(int(d) < int(base.group(2)) for d in base.group(1)):
        s = base.group(1)
    s = join_thousands(strip_emphasis(s))
    s = _EMPHASIS_MARKS_RE.sub("", _POWER_STARS_RE.sub("^", s))
    return _WHITESPACE_RE.sub(" ", s).strip()


def expression_text(text: str) -> str:
    """An answer cleaned for math_equiv: wrappers, degrees, spacing and "x =" go; sets, tuples, symbols stay."""
    s = _DEGREE_RE.sub("", unwrap(_common(text)))
    s = s.replace("\\%", " ").replace("%", " ")
    s = s.strip().rstrip(".").strip()
    return drop_left_variable(_WHITESPACE_RE.sub(" ", join_thousands(s)).strip())


def drop_left_variable(text: str) -> str:
    """ "x = 5" -> "5", "a_1 = 3" -> "3"; an equation with more on its left ("x^2 = 4") is kept whole."""
    return _LEFT_VARIABLE_RE.sub("", text, count=1).strip()


def latex_symbols(text: str) -> str:
    """LaTeX symbols as their Unicode forms, so "\\hbar/\\sqrt{2}" and "ħ/√2" compare equal (option texts)."""
    return _SQRT_RE.sub("√", _FRAC_RE.sub(r"\1/\2", _HBAR_RE.sub("ħ", text)))
