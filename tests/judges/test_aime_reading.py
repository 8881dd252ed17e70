"""AIME answers read as integers: what counts, what never does, and the reason a grade gives."""
from __future__ import annotations

import pytest

from records import GenerationRecord
from judges.rules import RulesJudge, aime
from judges.rules.normalise import expression_text, final_answer_text


def _grade(response: str, target: str = "540"):
    return RulesJudge().grade(GenerationRecord(
        task="aime", item_id="q", sample=0, messages=[{"role": "user", "content": "q"}], target=target,
        response=response, finish_reason="stop", usage={"prompt_tokens": 1, "completion_tokens": 1},
        latency_s=0.0, engine={}, seed=0, meta={},
    ))


def test_parser_version_is_bumped_for_the_new_reading():
    assert aime.PARSER_VERSION == "aime-v10"
    assert RulesJudge().config()["aime_parser"] == "aime-v10"


@pytest.mark.parametrize("body", ["3x", "12 n", "2 i", "12 e", "7 \\text{ or more}", "540 m", "5x^2", "n!", "\\pi",
                                  "3\\sqrt{x}", "12 \\text{ ways}", "540 \\text{ apples}"])
def test_expressions_with_letters_are_never_integers(body):
    number = int("".join(c for c in body if c.isdigit()) or 0)
    v = _grade(f"\\boxed{{{body}}}", target=str(number % 1000))
    assert (v.status, v.correct, v.detail["reason"]) == ("graded", False, "not an integer")


@pytest.mark.parametrize("body,value", [
    ("540 \\text{ cm}", 540), ("540\\,\\mathrm{cm}", 540), ("540 cm", 540), ("540\\text{ m}", 540),
    ("540 \\text{ degrees}", 540), ("540^\\circ", 540), ("540^{\\circ}", 540), ("540°", 540),
    ("540 units", 540), ("540 \\text{ square units}", 540), ("84 \\text{ cm}^2", 84), ("540 dollars", 540),
    ("\\$540", 540), ("54\\%", 54), ("54%", 54), ("540 \\text{ minutes}", 540),
])
def test_allow_listed_units_are_stripped(body, value):
    v = _grade(f"\\boxed{{{body}}}", target=str(value))
    assert (v.status, v.correct, v.extracted) == ("graded", True, str(value))


@pytest.mark.parametrize("body,value", [
    ("2**3", 8), ("2 ** 3", 8), ("2^{10}-1", 1023), ("\\frac{1080}{2}", 540), ("\\dfrac{1080}{2}", 540),
    ("\\sqrt{324^2 + (-432)^2}", 540), ("\\sqrt{291600}", 540), ("\\binom{10}{3}", 120), ("\\dbinom{10}{3}", 120),
    ("5!", 120), ("\\sqrt[3]{27}", 3), ("(\\sqrt{3}+1)(\\sqrt{3}-1)", 2), ("\\frac{\\sqrt{8}}{\\sqrt{2}}", 2),
    ("3 \\times 180", 540), ("2^{-1} \\cdot 1080", 540), ("1{,}000", 1000), ("1,000", 1000), ("1\\,000", 1000),
])
def test_exact_expressions_that_are_integers_count(body, value):
    v = _grade(f"\\boxed{{{body}}}", target=str(value % 1000))
    assert v.status == "graded" and v.extracted == str(value)
    assert v.correct is (value < 1000)


@pytest.mark.parametrize("body,reason", [
    ("540.0000001", "not an integer"), ("\\sqrt{2}", "not an integer"), ("\\frac{3}{4}", "not an integer"),
    ("\\sqrt{-4}", "not an integer"), ("(3,141)", "not an integer"), ("\\{1,234\\}", "not an integer"),
    ("10**10**10", "too large to evaluate"), ("10^{10^{10}}", "too large to evaluate"),
    ("1000!", "too large to evaluate"), ("2^{100000}", "too large to evaluate"), ("\\sqrt{2^{100000}}", "too large to evaluate"),
    ("\\sqrt{3}^{\\sqrt{2}}", "not an integer"),
])
def test_non_integers_and_giant_numbers_say_why(body, reason):
    v = _grade(f"\\boxed{{{body}}}", target="540")
    assert (v.status, v.correct, v.detail["reason"]) == ("graded", False, reason)


def test_a_bare_number_too_long_for_int_is_graded_not_crashed():
    v = _grade("9" * 5000, target="999")
    assert (v.status, v.correct, v.detail) == ("graded", False, {"via": "bare", "reason": "not an integer"})
    reading = aime.read_aime("1.5")
    assert (reading.via, reading.value, reading.note, reading.reason) == ("bare", None, None, "not an integer")


@pytest.mark.parametrize("text,clean", [
    ("**25**", "25"), ("2**3", "2^3"), ("$m+n = 25$", "25"), ("N \\equiv 42 \\pmod{1000}", "42"),
    ("42 \\ (\\text{mod } 1000)", "42"), ("\\text{25 cm}", "25"), ("7 \\text{ or more}", "7 or more"),
    ("12,345,678", "12345678"), ("(3,141)", "(3,141)"), ("1\u2009000", "1000"),
])
def test_final_answer_text(text, clean):
    assert final_answer_text(text) == clean


@pytest.mark.parametrize("text,clean", [
    ("x = 5", "5"), ("x^2 = 4", "x^2 = 4"), ("1,000", "1000"), ("(3,141)", "(3,141)"), ("\\{1,234\\}", "\\{1,234\\}"),
    ("$\\text{yes}$", "yes"), ("45^\\circ", "45"), ("1\\,000", "1000"),
])
def test_expression_text_keeps_structure(text, clean):
    assert expression_text(text) == clean


@pytest.mark.parametrize("reply, value", [
    # a number as a function's argument names what is stated; it is not a second value
    ("The value of f(0) is 1.", 1),
    ("Reading the graph, the value of g(4) is equal to 3.", 3),
    # a second value in the sentence still makes it unclear
    ("The value of f(0) is 1 and f(1) is 2.", None),
    ("The first root is 3 and the second is 5.", None),
    # numbers before the sentence's verb are in its subject: they say what is stated
    ("The value of f at 0 is 1.", 1),
    ("The ACK number at message 6 is 1000.", 1000),
    ("The estimated sales for 1970 would be 1210 units.", 1210),
])
def test_a_function_argument_is_not_another_value(reply, value):
    assert aime.read_aime(reply).value == value
