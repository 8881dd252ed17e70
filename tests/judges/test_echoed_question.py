"""A chat model given a few-shot prompt in one turn may open with a line of its own and then copy the question
asked, with its options, before answering it (Llama-3.1-8B-Instruct on MMLU-Pro, tests/judges/real). That copy is
not a question the model made up after answering (issue 20). The texts are ours, shaped like the real ones."""
from __future__ import annotations

from judges.rules.gpqa import read_letter

LETTERS = tuple("ABCD")
ECHO = ("Question:\nWhich gas makes up most of the air we breathe?\nOptions:\nA. Oxygen\nB. Nitrogen\n"
        "C. Argon\nD. Carbon dioxide\n\n")
OTHER = ("Question:\nWhich planet is closest to the Sun?\nOptions:\nA. Mercury\nB. Venus\nC. Mars\nD. Earth\n"
         "Answer: Let's think step by step. Mercury has the smallest orbit. The answer is (A).\n")


def test_question_copied_after_an_opening_line_is_answered():
    response = ("Let's go through the question carefully.\n\n" + ECHO +
                "About four fifths of dry air is nitrogen; oxygen is about a fifth. The answer is (B).")
    assert read_letter(response, LETTERS).letter == "B"


def test_copied_question_then_more_questions_is_no_answer():
    # Several questions answered after the copy: which of them was asked cannot be told from the response.
    response = ("Let's go through the question carefully.\n\n" + ECHO +
                "Most of the air is nitrogen. The answer is (B).\n\n" + OTHER)
    assert read_letter(response, LETTERS).letter is None


def test_question_made_up_after_an_answer_is_still_cut():
    response = "Most of the air is nitrogen. The answer is (B).\n\n" + OTHER
    assert read_letter(response, LETTERS).letter == "B"


def test_opening_line_that_gives_a_letter_is_not_an_echo():
    # "C" on its own line is an answer, so the question after it is one the model made up.
    response = "C\n\n" + ECHO + "Most of the air is nitrogen. The answer is (B)."
    assert read_letter(response, LETTERS).letter == "C"


# With the sample's options known, the block listing exactly those options under their own letters is the question
# asked, wherever it comes among the questions answered (rules-v10; shapes of Llama-3.1-8B-Instruct re-answering
# MMLU-Pro's worked examples, tests/judges/real).
AIR = ["Oxygen", "Nitrogen", "Argon", "Carbon dioxide"]


def test_several_questions_answered_the_block_with_the_samples_options_is_read():
    response = ("Let's go through each question.\n\n" + OTHER + "\n" + ECHO +
                "Answer: Let's think step by step. Most of the air is nitrogen. The answer is (B).\n\n" + OTHER)
    assert read_letter(response, LETTERS, AIR).letter == "B"


def test_the_asked_question_answered_first_then_questions_made_up():
    response = ("Let's go through each question.\n\n" + ECHO +
                "Answer: Let's think step by step. Most of the air is nitrogen. The answer is (B).\n\n" + OTHER)
    assert read_letter(response, LETTERS, AIR).letter == "B"


def test_no_block_with_the_samples_options_is_still_no_answer():
    response = "Let's go through each question.\n\n" + OTHER + "\n" + OTHER
    assert read_letter(response, LETTERS, AIR).letter is None


def test_the_samples_options_under_other_letters_do_not_make_a_block_the_one_asked():
    shuffled = ECHO.replace("A. Oxygen\nB. Nitrogen", "A. Nitrogen\nB. Oxygen")
    response = ("Let's go through each question.\n\n" + OTHER + "\n" + shuffled +
                "Answer: Nitrogen is most of the air. The answer is (A).\n\n" + OTHER)
    assert read_letter(response, LETTERS, AIR).letter is None
