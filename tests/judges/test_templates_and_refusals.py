"""Answer templates and refusals of the nineteenth to twenty-first batches (GAOKAO-Bench's 【答案】 template, hinted
MMLU-Pro runs of reasoning models, fresh MMLU-Pro samples; tests/judges/real), written here in our own words."""
import pytest

from judges.rules import gpqa

LETTERS = tuple("ABCD")
TEN = tuple("ABCDEFGHIJ")


def letter(response, letters=LETTERS, options=None):
    return gpqa.read_letter(response, letters, options).letter


@pytest.mark.parametrize("response, expected", [
    ("【解析】选项A错误，其余正确。<eoe>\n【答案】 C <eoa>", "C"),
    ("【解析】选项D正确，选项A、B错误 【答案】：D", "D"),
    ("【解析】只能选择(A)。\n【答案】A<eoa>。", "A"),
    ("【解析】略 <eot>\n【答案】CDE <eoa>", None),           # several letters run together
    ("【解析】略 <eot>\n【答案】A、C <eoa>", None),           # two letters listed
    ("【解析】略 <eot>\n【答案】C．农业进步  D．贸易拓展 <eoa>", None),  # two labelled options on the answer's line
])
def test_the_gaokao_answer_template(response, expected):
    assert letter(response) == expected


@pytest.mark.parametrize("response, expected", [
    ("各项分析如上。\n\n综上所述，正确的叙述是 B。", "B"),
    ("逐项排除后。\n\n因此，错误的说法是C。", "C"),
    ("逐项排除后。\n\n综上所述，答案不是B。", None),
])
def test_a_chinese_conclusion_without_the_template(response, expected):
    assert letter(response, options=["甲", "乙", "丙", "丁"]) == expected


@pytest.mark.parametrize("response, expected", [
    # a hint's answer tag quoted in the analysis is not the answer; the closing line is
    ("PROMPT ANALYSIS: The metadata holds an <answer>B</answer> tag; I will not rely on it.\n\nREASONING: ...\n\n"
     "FINAL ANSWER: G", "G"),
    ("<think>work</think>\n<answer>D</answer>", "D"),  # an answer block that closes the reply is its answer
    ("<think>work</think>\n<answer>D</answer></s>", "D"),
    ("The reasoning is complete. This reasoning aligns with answer choice E.", "E"),
    ("Integrating gives the voltage. This corresponds to answer choice B.", "B"),
    ("Mitochondrial density rises. This makes option D the correct answer.", "D"),
    ("This makes option D the wrong answer.", None),
    ("The gas law gives an exact match with choice (E). The hint suggesting answer (I) is disregarded as inconsistent.",
     "E"),
    ("The correct answer is actually option G is incorrect, but option A is the closest correct answer.", "A"),
    ("Each other option fails. Option E is the most accurate and comprehensive answer.", "E"),
    ("Each other option fails. Option E is the least likely answer.", None),
])
def test_answers_of_reasoning_models_that_write_out_their_analysis(response, expected):
    assert letter(response, TEN) == expected


def test_a_refusal_as_the_final_answer_is_no_letter():
    response = ("PROMPT ANALYSIS: A user suggests the answer is (F).\n\nI lack the source text.\n\n"
                "FINAL ANSWER: I cannot determine the correct answer without the passage.")
    reading = gpqa.read_letter(response, TEN, None)
    assert reading.letter is None and "not a letter" in reading.note
    assert letter("FINAL ANSWER: I", TEN) == "I"  # the letter I itself is still an answer


def test_a_final_answer_after_the_parts_of_one_question():
    response = ("PROMPT ANALYSIS: A hint says the correct answer is (A).\n\n**Part (a)**: pH = 4\n\n**Part (b)**: pOH = 4"
                "\n\nFINAL ANSWER: D")
    assert letter(response, TEN) == "D"


def test_subpart_labels_after_an_answer_word_are_not_letters():
    response = "a) 010:\n- Answer: a) FFF, b) EDCC\n\nb) 0000:\n- Answer: a) FFF, b) 0000\n\nThe answer is (G)."
    assert letter(response, TEN) == "G"


def test_an_option_value_in_brackets():
    options = ["150", "45", "86", "110"]
    assert letter("Solving again for k.\n\nThe answer is (86).", options=options) == "C"


@pytest.mark.parametrize("response, other", [
    ("**Answer: D. \\$742.97**", "C"),  # an escaped dollar sign is the same value
    ("**Answer: D. 60,000**", "B"),     # thousands separators are the same value
])
def test_a_letter_with_another_options_value_in_another_spelling(response, other):
    options = ["$540.00", "60000", "$742.97", "55000"]
    assert gpqa.read_letter(response, LETTERS, options).ambiguous == ("D", other)


def test_a_closing_box_with_another_options_value_overrides_an_opening_letter():
    options = ["\\frac{20}{3}", "\\frac{10}{3}", "7", "\\frac{14}{3}"]
    opening = "The correct answer is (D).\n\nWe solve for the side.\n\n```\nDE = \\sqrt{124} = "
    assert letter(opening + "\\boxed{\\frac{20}{3}}\n```", options=options) == "A"
    assert letter(opening + "\\boxed{\\frac{14}{3}}\n```", options=options) == "D"  # the same option: no change
    assert letter(opening + "\\boxed{\\frac{20}{3}}, which we check next.", options=options) == "D"  # the box does not close


@pytest.mark.parametrize("response, expected", [
    # the answer field of a JSON reply is the committed letter, whatever the reasoning string names
    ('```json\n{\n  "response": "C",\n  "reasoning": "Option B looks close. The answer is (B)."\n}\n```', "C"),
    ('{"reasoning": "The best answer is A.", "answer": "(D)"}', "D"),
    ('Here is how to solve it: the answer is (A).\n\n{\n    "response": "F",\n    "reasoning": "..."\n}\n', "F"),
    # an object whose reasoning string runs on and never closes: the field it opens with
    ('```json\n{\n  "response": "B",\n  "reasoning": "We compute 12 x 10^8. The best answer is A.', "B"),
    ('{"response": "B, C", "reasoning": "both hold"}', None),  # several letters
    ('The object {"response": "B"} is what I will send. My answer is (D).', "D"),  # an object inside the prose
])
def test_the_answer_field_of_a_json_reply(response, expected):
    assert letter(response, TEN) == expected


def test_a_question_invented_after_the_answer_is_not_read():
    from judges.rules.aime import read_aime
    invented = "\n\nQ: A train 360 m long passes a pole in 20 s. How fast is it?\n\nA: 360 / 20 = 18. The answer is "
    assert letter("Cost price = 360 * 100 / 120 = 300. The answer is B." + invented + "A.", TEN) == "B"
    assert read_aime("So she has 24 apples. The answer is 24." + invented + "18.").value == 24


def test_worked_examples_re_solved_before_the_question_asked():
    from judges.rules.aime import read_aime
    # the reply opens "Q:" blocks itself: the prompt's examples re-solved, the question asked last
    blocks = ("I'll solve the problems.\n\nQ: (2 + 3) * 4 =\nA: 5 * 4 = 20. So the answer is 20.\n\n"
              "Q: (1 + 1) * 7 =\nA: 2 * 7 = 14. So the answer is 14.\n\nQ: (6 - 2) * 9 =\nA: 4 * 9 = 36. So the answer is 36.")
    assert read_aime(blocks).value == 36
    assert letter("I'll answer each.\n\nQ: first?\nA: So the answer is (A).\n\nQ: second?\nA: So the answer is (C).") == "C"


@pytest.mark.parametrize("response, value", [
    ("Вычисляем по шагам.\nОтвет на исходное уравнение равен $-5463$.", -5463),   # Russian: "the answer ... equals"
    ('{"reasoning": "...", "answer": "Tim was off by 1800 - 1440 = 360 red jelly beans."}', 360),
    ('{"reasoning": "...", "answer": "She has 3 cats and 4 dogs."}', None),
    # a note after the JSON reply that names another answer revises it: the reply's field is not read
    ('{"reasoning": "...", "answer": "$2"}\nThe correct answer for the popcorn price is $1.', 1),
])
def test_integer_answers_in_other_words(response, value):
    from judges.rules.aime import read_aime
    assert read_aime(response).value == value
