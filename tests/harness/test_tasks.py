import json

import pytest

from harness.generate import resolve_data_path
from tasks import DataError, get_task
from tasks.gpqa import choice_permutation


def test_unknown_task_lists_valid_ones():
    with pytest.raises(DataError, match="valid tasks: aime, gpqa, hle"):
        get_task("mmlu")


def test_aime_keeps_zero_padded_answers_as_strings(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps({"id": 1, "problem": "p", "answer": "025"}) + "\n"
                    + json.dumps({"id": 2, "problem": "q", "answer": 7}) + "\n")
    items = get_task("aime").load(path)
    assert [it.fields["answer"] for it in items] == ["025", "7"]
    assert [it.id for it in items] == ["1", "2"]


@pytest.mark.parametrize("line,msg", [
    ('{"id": 1, "problem": "p"}', r"a\.jsonl:2: missing field\(s\) answer"),
    ("{not json", r"a\.jsonl:2: not valid JSON"),
    ('{"id": 1, "problem": "p", "answer": "x12"}', r"a\.jsonl:2: field answer must be an integer"),
    ('[1, 2]', r"a\.jsonl:2: expected a JSON object"),
])
def test_aime_bad_rows_name_file_and_line(tmp_path, line, msg):
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps({"id": 0, "problem": "ok", "answer": 1}) + "\n" + line + "\n")
    with pytest.raises(DataError, match=msg):
        get_task("aime").load(path)


def test_missing_dataset_names_path_and_format(tmp_path):
    with pytest.raises(DataError, match=r"nope\.jsonl: dataset file not found; expected JSONL.*\"id\".*\"problem\".*\"answer\""):
        resolve_data_path(get_task("aime"), str(tmp_path / "nope.jsonl"))


def test_gpqa_header_and_row_errors(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("Question,Correct Answer\nq,a\n")
    with pytest.raises(DataError, match=r"g\.csv: missing column\(s\) Incorrect Answer 1, Incorrect Answer 2, "
                                        r"Incorrect Answer 3; columns found: Question, Correct Answer"):
        get_task("gpqa").load(path)
    path.write_text("Question,Correct Answer,Incorrect Answer 1,Incorrect Answer 2,Incorrect Answer 3\n"
                    "q,a,b,c,d\nq2,a,,c,d\n")
    with pytest.raises(DataError, match=r"g\.csv:3: missing field\(s\) incorrect_answer_1 \(column 'Incorrect Answer 1'\)"):
        get_task("gpqa").load(path)


def test_gpqa_shuffle_is_deterministic_and_gold_letter_points_at_correct_answer():
    task = get_task("gpqa")
    items = task.load(task.demo_data_path)
    letters_seen = set()
    for item in items:
        for sample in range(8):
            p1, p2 = task.render(item, sample, 7), task.render(item, sample, 7)
            assert p1 == p2
            gold = p1.target
            letters_seen.add(gold)
            line = next(l for l in p1.messages[0]["content"].splitlines() if l.startswith(f"{gold}) "))
            assert line == f"{gold}) {item.fields['answers'][0]}"
            assert p1.meta["permutation"] == choice_permutation(7, item.id, sample)
    assert letters_seen == {"A", "B", "C", "D"}  # the shuffle actually moves the answer


def test_demo_sets_load():
    assert len(get_task("aime").load(get_task("aime").demo_data_path)) >= 5
    gpqa = get_task("gpqa")
    assert {it.category for it in gpqa.load(gpqa.demo_data_path)} == {"Physics", "Chemistry", "Biology"}
