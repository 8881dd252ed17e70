"""`compare RUN_A RUN_B` on real run directories written by the generate and grade stages."""
import json

import pytest

from harness.cli import main
from harness.rundir import RunDir
from harness.stats import mcnemar_exact
from tasks import get_task
from tests.judges_llm.runs import make_run

AIME = get_task("aime")
ANSWERS = {it.id: it.fields["answer"] for it in AIME.load(AIME.demo_data_path)}
IDS = sorted(ANSWERS)


def answers_right_on(right: set[str], wrong_samples: set[tuple[str, str]] = frozenset()):
    def answer(request):
        item_id, sample = request.request_id.split("#")
        ok = item_id in right and (item_id, sample) not in wrong_samples
        return f"The answer is \\boxed{{{int(ANSWERS[item_id]) + (0 if ok else 1)}}}."
    return answer


def graded(path, answer, samples=1):
    make_run(path, "aime", answer, samples=samples)
    assert main(["grade", str(path), "--judge", "rules", "--no-progress"]) == 0
    return path


def test_one_sample_per_item_uses_exact_mcnemar(tmp_path, capsys):
    a = graded(tmp_path / "a", answers_right_on(set(IDS[:3])))
    b = graded(tmp_path / "b", answers_right_on(set(IDS[:7])))
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["judge"] == RunDir(a).list_judges()[0] and r["items"] == 8
    assert r["test"]["name"] == "McNemar exact" and (r["test"]["a_only"], r["test"]["b_only"]) == (0, 4)
    assert r["test"]["p_value"] == pytest.approx(mcnemar_exact(0, 4)) == pytest.approx(2 / 16)
    assert r["difference"]["diff"] == pytest.approx(4 / 8)
    assert r["wins"] == {"a": 0, "b": 4, "tied": 4}
    assert main(["compare", str(a), str(b)]) == 0
    text = capsys.readouterr().out
    assert "Pass@1 37.5%" in text and "Pass@1 87.5%" in text and "B - A: +50.0 points" in text
    assert "within noise" in text and "items would be needed" in text


def test_several_samples_per_item_use_the_sign_flip_test(tmp_path, capsys):
    a = graded(tmp_path / "a", answers_right_on(set(IDS[:4]), {(IDS[0], "1"), (IDS[1], "2")}), samples=4)
    b = graded(tmp_path / "b", answers_right_on(set(IDS)), samples=4)
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    # per-item differences: 0.25, 0.25, 0, 0, 1, 1, 1, 1 -> six non-zero, only the all-positive pattern and
    # its mirror reach |sum| = 4.5, so p = 2 / 64
    assert r["test"]["name"] == "paired sign-flip permutation (exact)"
    assert r["test"]["p_value"] == pytest.approx(2 / 64)
    assert r["verdict"].startswith("B is ahead by 56.2 points")


def test_different_tasks_and_missing_judge_are_clear_errors(tmp_path, capsys):
    a = graded(tmp_path / "a", answers_right_on(set(IDS)))
    g = make_run(tmp_path / "g", "gpqa", lambda r: "Answer: A")
    assert main(["grade", str(g), "--judge", "rules", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["compare", str(a), str(g)]) == 2
    assert "same task" in capsys.readouterr().err
    b = graded(tmp_path / "b", answers_right_on(set(IDS)))
    assert main(["compare", str(a), str(b), "--judge", "llm-x"]) == 2
    assert "no grades for llm-x" in capsys.readouterr().err


def test_judge_pair_reports_kappa_by_hand():
    from harness.judge_agreement import compare_pair, format_report
    from records import GradeRecord

    def grades(flags, judge):
        return [GradeRecord(item_id=str(i), sample=0, correct=f, extracted="1", status="graded", judge=judge)
                for i, f in enumerate(flags)]
    # both right 3, both wrong 3, A only 1, B only 1: po = 6/8, pe = 0.5 -> kappa 0.5
    a = grades([True] * 3 + [False] * 3 + [True, False], "A")
    b = grades([True] * 3 + [False] * 3 + [False, True], "B")
    pair = compare_pair("A", a, "B", b)
    assert pair["kappa"] == pytest.approx(0.5)
    assert "Cohen's kappa 0.50" in format_report({"run": "r", "judges": ["A", "B"], "pairs": [pair]}, show=5)


def test_runs_of_different_datasets_sharing_ids_are_refused_unless_asked(tmp_path, capsys):
    a = graded(tmp_path / "a", answers_right_on(set(IDS)))
    other = tmp_path / "other.jsonl"  # another dataset that happens to number its items the same way
    other.write_text("".join(json.dumps({"id": i, "problem": f"What is {n} + 1?", "answer": str(n + 1)}) + "\n"
                             for n, i in enumerate(IDS)))
    make_run(tmp_path / "b", "aime", lambda r: "\\boxed{1}", data=other)
    assert main(["grade", str(tmp_path / "b"), "--judge", "rules", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["compare", str(a), str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert "different datasets" in err and f"{len(IDS)} of the {len(IDS)} shared item ids" in err and IDS[0] in err
    assert main(["compare", str(a), str(tmp_path / "b"), "--allow-different-data"]) == 0
    assert capsys.readouterr().out.startswith("WARNING: different datasets")
    subset = tmp_path / "subset.jsonl"  # the same questions, fewer of them: another file, the same items
    subset.write_text("".join(AIME.demo_data_path.read_text().splitlines(keepends=True)[:5]))
    c = tmp_path / "c"
    make_run(c, "aime", answers_right_on(set(IDS)), data=subset)
    assert main(["grade", str(c), "--judge", "rules", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["compare", str(a), str(c)]) == 0
    assert "note: different datasets" in capsys.readouterr().out


def test_piped_into_head_exits_quietly_and_counts_read_well(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    a = graded(tmp_path / "a", answers_right_on(set(IDS[:3])))
    b = graded(tmp_path / "b", answers_right_on(set(IDS[:7])))
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    for verb in (["compare", str(a), str(b)], ["summary", str(a), "--json"], ["grade", "--help"]):
        # `true` leaves before the harness has started: its first write meets a closed pipe, as with `| head`
        done = subprocess.run(f"{sys.executable} -m harness {' '.join(verb)} | true", shell=True, cwd=root, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.stderr == "", done.stderr
    text = subprocess.run([sys.executable, "-m", "harness", "compare", str(a), str(b)], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120).stdout
    assert "(1 sample per item)" in text and "1 samples" not in text
    out = subprocess.run([sys.executable, "-m", "harness", "report", str(a), "-o", str(tmp_path / "r")], cwd=root,
                         env=env, capture_output=True, text=True, timeout=120).stdout
    assert ": 1 run (8 samples), 0 sweeps" in out
