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
])
def test_requested_formats_are_read(response, value):
    assert read_aime(response).value == value


@pytest.mark.parametrize("response", [
    # prose after the JSON reply works the number out again: it may revise the answer, so no JSON read
    '{"reasoning": "...", "answer": "$60"}\n\nStep by step: the bracelet costs $30 ... Therefore, David saves $6.',
    '{"reasoning": "no value", "answer": "see above"}',
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
