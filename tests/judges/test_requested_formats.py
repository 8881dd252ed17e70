"""Answer formats real models write when the prompt asks for them (shapes from tests/judges/real/)."""
from __future__ import annotations

import pytest

from judges.rules.aime import read_aime
from judges.rules.gpqa import read_letter

JSON_REPLY = '{\n  "reasoning": "4 + 6 + 8 = 18 hours in all.",\n  "answer": "18"\n}'


@pytest.mark.parametrize("response, value", [
    (JSON_REPLY, 18),
    ("Step 3: the least value is 14.\n\nThe final answer is:\n```json\n{\n  \"reasoning\": \"... 30, 26, 14, 18; "
     "the least is 14.\",\n  \"answer\": \"14\"\n}\n```", 14),
    ('{"reasoning": "...", "answer": -28}', -28),
    ('{"reasoning": "...", "answer": "10%"}', 10),
    ('{"reasoning": "...", "answer": "\\"$26\\""}', 26),
    ('{"reasoning": "...", "answer": "6 miles per hour"}', 6),
    ("So 27 + 55 + 75 = <<27+55+75=157>>157\nA: 157", 157),
    ("The total is 1550 fruits.\nA: 1550\n\n", 1550),
    ("Monthly total is $40 x 12 = $480\n\nThe answer is $480 in expected monthly earnings.", 480),
    ("The final answer is 0 Lego sets.", 0),
    # prose after the reply that restates the answer keeps it, whatever other numbers it mentions
    ('{"reasoning": "...", "answer": "34"}\n\nSo the tallest tree is 17 x 2 = 34 feet.\n\n'
     "Therefore, the tallest tree is 34 feet tall.", 34),
    ('{"reasoning": "...", "answer": "5"}\n\nTherefore, she babysits 5 times to bake 15 cakes.', 5),
    ('{"reasoning": "...", "answer": "1520"}\n\nThe key steps:\n1. Multiply 40 by $20\n2. Take 10% off', 1520),
    # an answer field written as a sentence gives its one number
    ('{"reasoning": "...", "answer": "Angela will be charged a total of $324.00."}', 324),
    ('{"reasoning": "...", "answer": "The difference is $95 - $29 = $66. Therefore, it costs $66 more."}', 66),
    # an inline-quoted reply is the format instruction echoed, not the answer
    ('Reply with `{"answer": "42"}`.\n\n{"reasoning": "...", "answer": "17"}', 17),
    ('{"reasoning": "...", "answer": "-10°F"}', -10),
    ("The answer is 64 distinct polynomials that meet the given criteria.", 64),
])
def test_requested_formats_are_read(response, value):
    assert read_aime(response).value == value


def test_prose_that_works_the_number_out_again_revises_the_json_reply():
    # the JSON reply is not read; the prose's own conclusion is
    response = '{"reasoning": "...", "answer": "$60"}\n\nStep by step: the bracelet costs $30 ... Therefore, David saves $6.'
    assert read_aime(response).value == 6


@pytest.mark.parametrize("response", [
    '{"reasoning": "no value", "answer": "see above"}',
    # long prose after the reply that is cut off mid-sentence: what it was concluding is unknown
    '{"reasoning": "...", "answer": "42"}\n\n' + "Constraint 4 holds since 21 is odd. " * 40 + "However, based on",
    '{"reasoning": "...", "answer": "Either 3 or 4 pens."}',
    "A: the area of the triangle",       # a closing "A:" line that is not a number
    "The answer is 7 or more apples.",   # hedged value words in the noun phrase
])
def test_unsure_shapes_give_no_number(response):
    assert read_aime(response).value is None


def test_a_question_the_model_invents_after_answering_is_not_read():
    response = ("Environmental scanning identifies the factors that affect an organization. The answer is (J).\n\n"
                "Question:\nWhich of the following is a type of nonverbal communication?\nOptions:\n"
                "A. Facial expressions\nB. Emails\nC. Letters\nD. Memos\nAnswer: Let's think step by step. "
                "Facial expressions are nonverbal. The answer is (A).")
    assert read_letter(response, tuple("ABCDEFGHIJ")).letter == "J"


def test_a_question_echoed_at_the_start_is_not_cut():
    response = "Question:\nWhich is largest?\nOptions:\nA. 1\nB. 2\n\nThe largest is 2. The answer is (B)."
    assert read_letter(response, ("A", "B")).letter == "B"


# A short reply's closing sentence that states one integer (shapes paraphrased from MathVista outputs).
@pytest.mark.parametrize("response, value", [
    ("The missing number in the diagram is 9.</s>", 9),
    ("The age gap between the two people in the photo is 10 years.", 10),
    ("The highest accuracy in the chart is 99%.", 99),
    ("Step one removes 4 cubes.\n\nThe number of years is: 6", 6),
    ("So the total for all years is $1,500,000.", 1500000),
    ("Okay, step by step: 4 - 4 = 0.\n\nThe final integer answer is 0.", 0),
    ("</think>\n\n196 = 2^2 x 7^2, so (2+1)(2+1) = 9.\n\nThus, 196 has **9** positive divisors.", 9),
    # prose after a JSON reply that concludes with another value revises it: the closing statement is read
    ('{"reasoning": "...", "answer": "$150"}\n\nThus, the answer is the total, which is $1,500.', 1500),
    ("Therefore, the perimeter of ABCD is 2(3 + 3) = 12.\n\nFinal value: 12.", 12),
    ("The age gap between these two people in the image is 10 years.", 10),
    ("The highest accuracy reported in the whole chart is 10.0.", 10),
    ("The answer to the question is 2, as there are two items that sold more than 3 units.", 2),
    # a one-sentence reply that gives one number, approximate or not (the real-output corpus's label)
    ("An average city bus gets about 3 miles per gallon.", 3),
    # premises stated earlier do not count against the closing statement; the statement right before it does
    ("- The center person is 25 years old\n- So the age gap is 25 - 20 = 5\n\nTherefore, the age gap is 5 years.", 5),
])
def test_closing_statement_is_read(response, value):
    assert read_aime(response).value == value


@pytest.mark.parametrize("response", [
    "The range of the numbers is 3 to 7.",              # two values
    "Thus, **3** or **4** pens are left.",               # two bold values
    "If so, **9** divisors remain.",                    # a condition
    "If the width is 4, the area is 12.",               # a condition
    "The answer cannot be determined, but the count is not 5.",
    "The total is 7 or more apples.",                   # value words after the number
    "There are 12 boxes, and the number of shipments is 3 with 56 boxes.",  # a second number in its clause
    "The total for 30 years is $40 x 12, which is $480.",   # other numbers in the sentence
    "There are four little cars and one small bus.",     # two counts in words
    "The function has four zeros, as the curve meets the axis where y is zero.",
    "The combined share is 43%. The remaining share is 57%.",  # two statements, two values
])
def test_closing_statement_needs_one_plain_value(response):
    assert read_aime(response).value is None


@pytest.mark.parametrize("response, value", [
    # the answer before a chat model's closing pleasantries
    ("The perimeter is 2 * (6 feet + 3 feet) = 2 * 9 feet = **18 feet**.\n\nIs there anything else I can help you with?", 18),
    ("Therefore, the perimeter of the rectangle is **6 yards**.\n\nI hope this helps! Let me know if you have any "
     "other questions.", 6),
    # counts in words, in short replies
    ("Two", 2),
    ("There are three objects left on the table after you take away the blocks.", 3),
    ("After subtracting the cubes, there are two people in the image who were not born after 1945.", None),
])
def test_short_reply_shapes(response, value):
    assert read_aime(response).value == value


@pytest.mark.parametrize("response, value", [
    ("There are 10 cubes in total.\n\nAnswer: 10</s>", 10),          # an end-of-sequence token left in the text
    ("After removing the red cubes, there are a total of 4 objects left on the table.", 4),
    ("After subtracting all small balls, there are three objects left.", 3),
])
def test_end_tokens_and_counts_after_a_leading_clause(response, value):
    assert read_aime(response).value == value


def test_chinese_answer_word_before_a_letter():
    assert read_letter("所以∠AOE等于135°\n\n回答:C", tuple("ABCD")).letter == "C"


def test_a_numbered_list_after_answer_colon_is_no_value():
    response = "The length of CD is **19**.\n\nHere's how I got the answer:\n\n1. We know that AB + CD = AD + BC."
    assert read_aime(response).value != 1
    assert read_aime("The relative increase is $0.0").value is None  # cut off inside a number


@pytest.mark.parametrize("response, value", [
    ("There are 2 bars with values smaller than 0.", 2),           # numbers that describe what is counted
    ("There were 3 shipments with exactly 56 boxes.", 3),
    ("Of the 5 people, the number born after 1945 is 3.", 3),      # numbers in the subject say what is counted
    ("Of the 5 people, 2 were born after 1945 and the number is 3.", None),  # a count of something else first
    ("The total number of objects is −16.", -16),
    ("There are 4 small green cubes and 2 large cylinders remaining.", None),  # two counts
    ("In 2012, the share of schools with electricity was 88%.", None),
])
def test_numbers_that_describe_what_is_counted(response, value):
    assert read_aime(response).value == value
