"""HLE metrics: accuracy over all expected questions, Wald interval, and the official calibration error."""
import math
import random

import numpy as np
import pytest

from records import GenerationRecord, GradeRecord
from tasks.hle import HleTask
from tasks.hle.metrics import corrected_calibration_error, official_calibration_error, wald_accuracy


def official_reference(confidence, correct, beta=100):
    """The official loop as published (centerforaisafety/hle, hle_eval/run_judge_results.py, calib_err, p='2'),
    transcribed as a reference for the restructured implementation."""
    confidence, correct = np.array(confidence, dtype=float), np.array(correct)
    idxs = np.argsort(confidence)
    confidence, correct = confidence[idxs], correct[idxs]
    bins = [[i * beta, (i + 1) * beta] for i in range(len(confidence) // beta)]
    bins[-1] = [bins[-1][0], len(confidence)]
    cerr, total = 0, len(confidence)
    for i in range(len(bins) - 1):
        bin_confidence = confidence[bins[i][0]:bins[i][1]]
        bin_correct = correct[bins[i][0]:bins[i][1]]
        if len(bin_confidence) > 0:
            difference = np.abs(np.nanmean(bin_confidence) - np.nanmean(bin_correct))
            cerr += len(bin_confidence) / total * np.square(difference)
    return np.sqrt(cerr)


def grade(item, correct, confidence=100, status="graded", category="Math"):
    detail = {} if confidence is None else {"confidence": confidence}
    return GradeRecord(item_id=item, sample=0, correct=correct, extracted="x", status=status, judge="llm-j",
                       category=category, detail=detail)


def gen(item, category="Math", answer_type="exactMatch", has_image=False):
    return GenerationRecord(task="hle", item_id=item, sample=0, messages=[], target="t", response="r",
                            finish_reason="stop", usage={}, latency_s=0.0, engine={}, seed=0, category=category,
                            meta={"answer_type": answer_type, "has_image": has_image, "raw_subject": "s"})


def wrong_at_full_confidence(n):
    keys = [(f"q{i}", 0) for i in range(n)]
    return [grade(k[0], False) for k in keys], [gen(k[0]) for k in keys], keys


@pytest.mark.parametrize("n, official", [(2500, 98.0), (250, 63.0), (150, 0.0), (100, 0.0)])
def test_official_calibration_numbers(n, official):
    grades, records, keys = wrong_at_full_confidence(n)
    m = HleTask().summary_metrics(grades, records, keys)
    assert m["calibration_error"] == official
    assert m["calibration_error_corrected"] == 100.0  # every bin counted: all wrong at 100% is fully off
    assert m["calibration_samples"] == n and m["accuracy"] == 0.0


def test_fewer_than_100_samples_is_not_computable():
    grades, records, keys = wrong_at_full_confidence(99)
    m = HleTask().summary_metrics(grades, records, keys)
    assert m["calibration_error"] is None and m["calibration_error_corrected"] is None
    assert "at least 100" in m["calibration_not_computable"]
    with pytest.raises(ValueError):
        official_calibration_error([1.0] * 99, [False] * 99)


def test_matches_the_published_loop_on_random_inputs_with_ties():
    rng = random.Random(4)
    for n in (100, 199, 250, 1000, 2500):
        conf = [rng.choice([0, 5, 50, 80, 95, 100]) / 100 for _ in range(n)]
        corr = [rng.random() < c * 0.6 for c in conf]
        assert official_calibration_error(conf, corr) == pytest.approx(official_reference(conf, corr), abs=0)


def test_corrected_variant_counts_the_last_bin():
    # 150 samples form one bin (the last, absorbing the remainder): the official sum skips it entirely
    conf = [0.5] * 100 + [0.9] * 50
    corr = [i % 2 == 0 for i in range(100)] + [False] * 50
    assert official_calibration_error(conf, corr) == 0.0
    bin_conf, bin_acc = (0.5 * 100 + 0.9 * 50) / 150, 50 / 150
    expected = abs(bin_conf - bin_acc)  # RMS over a single bin is its absolute gap
    assert corrected_calibration_error(conf, corr) == pytest.approx(expected)


def test_accuracy_counts_missing_and_unjudged_as_wrong():
    keys = [(f"q{i}", 0) for i in range(10)]
    grades = [grade("q0", True), grade("q1", True), grade("q2", True), grade("q3", False),
              grade("q4", None, None, "judge_error"), grade("q5", None, None, "generation_error")]
    m = HleTask().summary_metrics(grades, [gen(k[0]) for k in keys], keys)
    assert m["accuracy"] == 30.0 and m["accuracy_n"] == 10 and m["accuracy_correct"] == 3
    assert m["accuracy_ci95_half_width"] == round(1.96 * math.sqrt(30 * 70 / 10), 2) == 28.4
    assert m["calibration_samples"] == 4  # only samples the judge read carry a confidence
    assert wald_accuracy(0, 0) == (None, None)


def test_breakdowns_by_category_answer_type_and_modality():
    keys = [("t1", 0), ("t2", 0), ("i1", 0), ("lost", 0)]
    records = [gen("t1", "Math", "exactMatch"), gen("t2", "Physics", "multipleChoice"),
               gen("i1", "Math", "multipleChoice", has_image=True)]
    grades = [grade("t1", True), grade("t2", False, category="Physics"), grade("i1", True)]
    task = HleTask(subset="all")
    m = task.summary_metrics(grades, records, keys)
    b = m["breakdowns"]
    assert b["category"]["Math"] == {"n": 2, "correct": 2, "accuracy": 100.0, "accuracy_ci95_half_width": 0.0}
    assert b["category"]["Physics"]["accuracy"] == 0.0 and b["category"]["unknown"]["n"] == 1
    assert b["answer_type"]["multipleChoice"]["n"] == 2 and b["answer_type"]["exactMatch"]["correct"] == 1
    assert b["modality"]["image"] == {"n": 1, "correct": 1, "accuracy": 100.0, "accuracy_ci95_half_width": 0.0}
    assert b["modality"]["text"]["n"] == 2 and b["modality"]["unknown"]["n"] == 1
    assert m["subset"] == "all" and m["accuracy"] == 50.0


def test_judge_without_confidence_is_reported_not_computable():
    keys = [(f"q{i}", 0) for i in range(150)]
    grades = [grade(k[0], True, confidence=None) for k in keys]
    m = HleTask().summary_metrics(grades, [gen(k[0]) for k in keys], keys)
    assert m["calibration_error"] is None and "no confidence" in m["calibration_not_computable"]
