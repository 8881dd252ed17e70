"""How reasoning models' MMLU-Pro answers are read (issue 20, tests/judges/real): answer lists for a few-shot
prompt, thinking cut off by the token limit, an option label the question lacks. Phrasings are paraphrased."""
from __future__ import annotations

import pytest

from harness.grade import to_grade
from judges.rules import gpqa
from judges.rules.judge import RulesJudge
from records import GenerationRecord

LETTERS = tuple("ABCDEFGHIJ")
OPTIONS = ["$210", "$180", "$200", "$220", "$205", "$230", "$215", "$190", "$195", "$175"]

# (response, letter the reader must give)
ANSWER_LISTS = {
    # the worked examples answered again, one line each, the question asked last
    "bare-lines": ("The answer is (F)\nThe answer is (D)\nThe answer is (A)\nThe answer is (G)\nThe answer is (J)", "J"),
    "blank-separated": ("\n\nThe answer is (H)\n\nThe answer is (C)\n\nThe answer is (A)\n\nThe answer is (E)", "E"),
    "two-lines": ("The answer is (B)\nThe answer is (C)", "C"),
    "numbered-headings": ("Question 1: acids\n- pH below 7\nThe answer is (J)\n\nQuestion 2: units\n- 1 in = 2.54 cm\n"
                          "The answer is (E)\n\nQuestion 3: the one asked\n- 16.4 cc\nThe answer is (F)", "F"),
    "ends-on-first": ("The answer is (A)\nThe answer is (C)\nThe answer is (B)\nThe answer is (A)", "A"),
    # one line of reasoning that changes its mind: the last commitment, as before
    "revised": ("The answer is (B). Hmm, the units were off; redoing it gives 190. The answer is (H).", "H"),
    # the other side: parts of one question, hedges, questions left unanswered
    "labelled-parts": ("(a) The start current is 600 A. The answer is (I).\n(b) The resistance is 0.2 ohm. "
                       "The answer is (A).\n(c) The back emf is 15 V. The answer is (E).", None),
    "either-or": ("The answer is (A)\nThe answer is (C)\nSo the answer is either (B) or (D).", None),
    "a-or-c": ("The answer is (F)\nThe answer is (D)\nThe answer is (A) or (C)", None),
    "hedged-closing": ("The answer is (F)\nThe answer is (D)\nThe answer is B, or possibly D.", None),
    # restating the choices after the answer is no hedge
    "options-restated": ("The answer is (F)\nThe answer is (C)\n\nThe answer choices: A, B and D were ruled out.", "C"),
    "asks-for-the-question": ("Questions 1-4 are complete. Here are their answers:\n\nThe answer is (B)\n\n"
                              "The answer is (J)\n\nThe answer is (I)\n\nThe answer is (D)\n\nHowever, question 5 "
                              "appears to be incomplete, with no options. Could you please provide the complete "
                              "question?", None),
}


@pytest.mark.parametrize("name", ANSWER_LISTS)
def test_answer_lists(name):
    response, expected = ANSWER_LISTS[name]
    reading = gpqa.read_letter(response, LETTERS, OPTIONS)
    assert reading.letter == expected, (name, reading)


# Thinking the chat template opened, cut off by the token limit: no tag in the response at all.
CUT_OFF = {
    "tentative": ("Option D swaps too often. But the test wants one, and the answer is likely C. Because in some "
                  "cases D might not sort, for example when", None),
    "perhaps": ("I think it is C and H. But since only one is wanted, perhaps the answer is C.\n\nWait", None),
    "questioned-after": ("So it is about the fit, making A the correct one. Therefore, the answer is A.\n\n"
                         "Wait, but the options were:", None),
    "changes-again": ("So the correct answer is F. A call for cooperation.\n\nBut the text never says so, "
                      "so maybe it's D. Confidence in a time of", None),
    "option-words-only": ('Alternatively, the answer is "$190", but I am not certain.\n\nAlternatively, it is', None),
    # settled before the limit: a letter stated and not questioned stays read
    "settled": ("Revenue peaks where 380 - 2P = 0, so P = 190.\n\nThe answer is (H).\n\nTo summarise the "
                "steps: the demand falls by one truck per dollar, so the revenue", "H"),
    "settled-then-explained": ("**Answer: H**\n\nThe revenue peaks at P = 190. However, option G ($215) is what "
                               "a fixed demand would give. But demand falls as", "H"),
    # a response that closed its thinking is read as usual, cut off or not
    "closed-then-cut": ("Maybe C, maybe H.</think>\n\nThe answer is (H). Perhaps C would also", "H"),
}


@pytest.mark.parametrize("name", CUT_OFF)
def test_cut_off_inside_thinking(name):
    response, expected = CUT_OFF[name]
    assert gpqa.read_letter(response, LETTERS, OPTIONS, cut_off=True).letter == expected, name


def test_cut_off_is_only_used_when_the_grade_stage_says_so():
    # The same words from a response that stopped by itself are an ordinary (hedged but single) answer.
    response = CUT_OFF["questioned-after"][0]
    assert gpqa.read_letter(response, LETTERS, OPTIONS).letter == "A"
    assert gpqa.read_letter(response, LETTERS, OPTIONS, cut_off=True).letter is None


def test_open_think_tag_without_close_is_no_answer():
    reading = gpqa.read_letter("<think>\nThe options... the answer is likely (C). Let me check D", LETTERS, OPTIONS)
    assert reading.letter is None
    assert gpqa.read_letter("<think>\nC or D?\n</think>\n\nThe answer is (D).", LETTERS, OPTIONS).letter == "D"


def _record(response: str, finish_reason: str, reasoning: str | None = None) -> GenerationRecord:
    return GenerationRecord(task="gpqa", item_id="q1", sample=0, messages=[], target="H", response=response,
                            finish_reason=finish_reason, usage={}, latency_s=0.0, engine={}, seed=0,
                            meta={"letters": list(LETTERS), "choices": OPTIONS}, reasoning=reasoning)


def test_grade_stage_tells_the_reader_a_response_was_cut_off():
    judge = RulesJudge()
    thinking = "Perhaps the answer is H, since 380 - 2P = 0.\n\nWait, the demand was"
    cut = to_grade(_record(thinking, "length"), judge.grade(_record(thinking, "length")), judge.judge_id)
    assert (cut.status, cut.extracted) == ("truncated", None)
    stopped = judge.grade(_record(thinking, "stop"))
    assert (stopped.status, stopped.extracted) == ("graded", "H")
    # thinking already split off by the generate stage: the response is the answer, read as usual
    answer = "The answer is (H). Perhaps the units"
    split = judge.grade(_record(answer, "length", reasoning="long thinking"))
    assert (split.status, split.extracted) == ("graded", "H")


OUTSIDE = {
    # a label the question lacks, stated with another option's text: no answer, not that option
    "option-k-with-j-text": ("The best choice is **Option K: $175**. It fits the demand curve.", None),
    "choice-l-colon": ("Choice L: $190", None),
    # the same text under a label the question has, or under no label, is read
    "option-j-with-its-text": ("The best choice is **Option J: $175**.", "J"),
    "text-alone": ("The final answer is $175.", "J"),
    # an option K mentioned earlier does not matter once a real one is labelled last
    "k-then-j": ("Option K: none of these, I first thought.\nOption J: $175 fits.", "J"),
}


@pytest.mark.parametrize("name", OUTSIDE)
def test_label_outside_the_choices(name):
    response, expected = OUTSIDE[name]
    assert gpqa.read_letter(response, LETTERS, OPTIONS).letter == expected, name


def test_letter_with_another_options_text_stays_ambiguous():
    # "G. $190" where G is $215 and $190 is H: not silently graded as either
    reading = gpqa.read_letter("Thus the price is $190.\n\n**Answer: G. $190**", LETTERS, OPTIONS)
    assert reading.letter is None and reading.ambiguous == ("G", "H")
