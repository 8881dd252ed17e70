"""compare's arithmetic and table on hand-made verdicts: what counts as decided, and long lists cut short."""
from harness.judge_agreement import compare_pair, format_report
from records import GradeRecord


def g(item, correct, status="graded", extracted="x", judge="j"):
    return GradeRecord(item_id=item, sample=0, correct=correct, extracted=extracted, status=status, judge=judge,
                       target="5")


def test_agreement_counts_only_samples_both_judges_decided():
    a = [g("1", True), g("2", False, "no_answer", None), g("3", None, "judge_error", None), g("4", True),
         g("5", False, "truncated", None)]
    b = [g("1", True), g("2", True, extracted="5"), g("3", True), g("4", None, "generation_error", None),
         g("5", False)]
    pair = compare_pair("A", a, "B", b)
    assert pair["both_decided"] == 3 and pair["agree"] == 2 and pair["agreement"] == 2 / 3
    assert pair["only_decided_by"] == {"A": 1, "B": 1}
    [d] = pair["disagreements"]
    assert d == {"item_id": "2", "sample": 0, "target": "5",
                 "A": {"correct": False, "status": "no_answer", "extracted": None},
                 "B": {"correct": True, "status": "graded", "extracted": "5"}}


def test_table_shows_both_readings_and_cuts_long_lists():
    a = [g(str(i), True, extracted=f"a{i}") for i in range(30)]
    b = [g(str(i), False, extracted=f"b{i}") for i in range(30)]
    report = {"run": "runs/x", "judges": ["A", "B"], "pairs": [compare_pair("A", a, "B", b)]}
    text = format_report(report, show=5)
    assert "agreement 0.0% (0 of 30 samples both decided; 30 disagree" in text
    assert "right  a0" in text and "wrong  b0" in text and "... 25 more" in text
    rows = [line for line in text.splitlines() if line.lstrip().split(" ")[0].isdigit()]
    assert len(rows) == 5 and "a7" not in text


def test_no_shared_samples_has_no_rate():
    pair = compare_pair("A", [g("1", True)], "B", [g("2", True)])
    assert pair["agreement"] is None and "agreement - (0 of 0" in format_report(
        {"run": "r", "judges": ["A", "B"], "pairs": [pair]}, show=5)
