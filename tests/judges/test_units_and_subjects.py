"""Integer answers in physics units, numbers that only name a sentence's subject, and counts a program printed
(shapes from TheoremQA, MMMU and ToRA outputs in tests/judges/real, written here in our own words)."""
import pytest

from judges.rules.aime import read_aime
from judges.rules.normalise import final_answer_text


@pytest.mark.parametrize("text, clean", [
    ("48V^2/\\Omega", "48"), ("12 m/s^2", "12"), ("5 kJ/mol", "5"), ("9 eV", "9"), ("30 \\Omega", "30"),
    ("4 N·m", "4"), ("7 kPa", "7"),
    # a one-letter symbol alone, or with only a power, may be a variable: kept
    ("3 m", "3 m"), ("2 m^2", "2 m^2"), ("5 s", "5 s"), ("2 x/y", "2 x/y"),
])
def test_si_units_after_a_number(text, clean):
    assert final_answer_text(text) == clean


@pytest.mark.parametrize("response, value", [
    ("Work done.\nThe answer is 48V^2/\\Omega.", 48),
    ("So the speed is found.\nThe answer is 14 m/s.", 14),
    ("The answer is 3 m^2.", None),  # m may be a variable
])
def test_phrase_answers_with_units(response, value):
    assert read_aime(response).value == value


@pytest.mark.parametrize("response, value", [
    ("We track the segments.\nThe acknowledgement number at segment 4 is 2400.", 2400),
    ("Following the trend, the estimated output for 1980 would be 950 units.", 950),
    ("The first root is 3 and the second is 5.", None),  # values after the verb are two answers
    ("In 2019, the share of homes with internet was 71%.", None),  # a phrase set off by a comma is not the subject
])
def test_numbers_in_the_subject_name_it(response, value):
    assert read_aime(response).value == value


def test_a_count_in_words_that_the_program_printed():
    code = "```python\nprint(math.ceil(90 * 40 / 1500))\n```\n```output\n3.0\n```\n"
    assert read_aime(code + "Three vans are needed to move 90 boxes in one trip.").value == 3
    # the program printed another number: the sentence's other value leaves the count unclear
    assert read_aime(code.replace("3.0", "2.4") + "Three vans are needed to move 90 boxes in one trip.").value is None
    # a second count joined to the first: which one answers is unclear, whatever was printed
    assert read_aime(code + "Three vans left on Monday and 2 on Tuesday.").value is None


@pytest.mark.parametrize("response, value", [
    ("Adding the two costs.\nTherefore, Maria will pay $27 in total.", 27),
    ("Comparing both plans.\nTherefore, Ben saves $8 by taking the pass instead of paying for all 12 trips.", 8),
    ("Therefore, we need 3 more boxes.", None),       # the word after the number changes it
    ("So 4 apples and 5 pears remain.", None),        # two values
    ("Therefore, if we use 3 cups, the cake rises.", None),  # a condition
    ("Therefore, the total cost comes to 2.5 dollars.", None),  # no integer
])
def test_a_concluding_sentence_with_one_value(response, value):
    assert read_aime(response).value == value


@pytest.mark.parametrize("text, clean", [
    ("52_8", "52"), ("204_{5}", "204"), ("10_2", "10"),
    ("59_8", "59_8"),  # 9 is no digit of base 8: not a number written in that base
    ("x_1", "x_1"),
    ("12^{\\mathrm{th}}", "12"), ("3rd", "3"), ("21st", "21"),
])
def test_numbers_written_in_a_base_and_ordinals(text, clean):
    assert final_answer_text(text) == clean


@pytest.mark.parametrize("response, value", [
    ("Therefore, the final answer is: $\\boxed{12^{\\mathrm{th}}}$ grade.\n\nANSWER: 12th grade", 12),
    ("The product in base 8 is $\\boxed{52_8}$.", 52),
    ("We solve for the area.\n\n**Answer:**  \nThe area of triangle \\( ACD \\) is \\( 14 \\).", 14),
    ("```python\nprint(12 / 20 * 100)\n```\n```output\n60.0\n```\n60% of the students signed up for painting.", 60),
])
def test_values_in_the_shapes_r1_distills_and_tora_write(response, value):
    assert read_aime(response).value == value


CUT_IN_THINKING = ("Okay, so the area depends on n. Let me try n = 13: too small. Perhaps the answer is n = 14, "
                   "since the next formula gives")


def test_an_answer_cut_off_while_thinking_is_no_answer():
    # the chat template opened <think>: the response shows no tag, and the token limit stopped it mid-thought
    assert read_aime(CUT_IN_THINKING).value == 14  # finished normally, the tentative statement is still read
    assert read_aime(CUT_IN_THINKING, cut_off=True).value is None
    assert read_aime("Hmm, so 14 works. Let me check 15 as well, which", cut_off=True).value is None
    settled = "</think>\n\nThe answer is 14."
    assert read_aime(CUT_IN_THINKING + settled, cut_off=True).value == 14  # the thinking closed: read as usual


@pytest.mark.parametrize("response, value", [
    # a unit written as one symbol after the number, in an answer phrase (TheoremQA's zero-shot runs)
    ("The power is found from P = V^2/R.\nTherefore, the answer is 48W.", 48),
    ("Summing the forces, the answer is 2180 N.", 2180),
    ("So the answer is 76 g.", 76),
    ("So the answer is 3 m^2.", None),  # with a power it may be an expression in m
    # a longer noun phrase, thousands commas
    ("Therefore, the answer is 150 different ice cream cones we can make.", 150),
    ("Therefore, the answer is 1,555 ways.", 1555),
    # "there are N ..." as the answer phrase
    ("Therefore, the answer is: there are 72 different 6-letter arrangements.", 72),
    ("Therefore, the answer is there are 362,880 equivalent parameter settings.", 362880),
    ("Therefore, the answer is: there are 3 or 4 ways.", None),
])
def test_answer_phrases_of_zero_shot_chain_of_thought(response, value):
    assert read_aime(response).value == value


def test_a_concluding_there_are_in_a_long_reply():
    work = "We count the colourings one case at a time, fixing the top face first. " * 8
    assert read_aime(work + "\n\nTherefore, there are 6 ways to color the faces.").value == 6
    assert read_aime(work + "\n\nThere are 6 ways to color the faces.").value is None  # a long reply's step, not its end


def test_a_base_models_next_turn_token_is_not_text():
    assert read_aime("The total is 9 + 5 = 14.</s><s>").value == 14
