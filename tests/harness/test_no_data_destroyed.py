"""No command destroys data it did not create: report -o, grade --out, a full disk, a killed writer, newer records."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from harness.cli import main
from tests.judges_llm.runs import make_run, snapshot
from tests.support.scripted_server import Reply, ScriptedServer

ROOT = Path(__file__).resolve().parents[2]


def graded_run(path: Path, answer: str = "The answer is \\boxed{1}.") -> Path:
    make_run(path, "aime", lambda r: answer, samples=2)
    assert main(["grade", str(path), "--judge", "rules", "--no-progress"]) == 0
    return path


def test_report_into_a_project_folder_is_refused_and_force_deletes_no_user_file(tmp_path, capsys, monkeypatch):
    run = graded_run(tmp_path / "runs" / "x")
    project = tmp_path / "project"
    (project / "data" / "aime").mkdir(parents=True)
    (project / "data" / "aime" / "aime_2026.jsonl").write_text('{"id": "1", "problem": "p", "answer": "1"}\n')
    (project / "notes.txt").write_text("mine")
    before = snapshot(project)
    monkeypatch.chdir(project)
    assert main(["report", str(run), "-o", "."]) == 2  # `report runs/x -o .` in a project folder
    assert "is not a report" in capsys.readouterr().err and snapshot(project) == before
    assert main(["report", str(run), "-o", str(project), "--force"]) == 0
    after = snapshot(project)
    assert all(after[name] == data for name, data in before.items())  # every user file still there, unchanged
    assert "index.html" in after and any(n.startswith("data/") and n.endswith("-index.js") for n in after)
    assert main(["report", str(run), "-o", str(project)]) == 0  # now a report: a rebuild needs no --force
    assert all(snapshot(project)[name] == data for name, data in before.items())


def test_report_rebuild_replaces_only_its_own_pages(tmp_path):
    a, b = graded_run(tmp_path / "a"), graded_run(tmp_path / "b")
    out = tmp_path / "report"
    assert main(["report", str(a), str(b), "-o", str(out)]) == 0
    manifest = json.loads((out / ".harness-report.json").read_text())["files"]
    (out / "data" / "mine.txt").write_text("a user file beside the pages")
    assert main(["report", str(a), "-o", str(out)]) == 0
    now = json.loads((out / ".harness-report.json").read_text())["files"]
    assert len(now) < len(manifest) and all((out / f).is_file() for f in now)
    assert not any((out / f).exists() for f in set(manifest) - set(now))  # the old run's pages are gone
    assert (out / "data" / "mine.txt").read_text() == "a user file beside the pages"


def test_grade_out_onto_another_run_is_refused_and_its_grades_kept(tmp_path, capsys):
    victim = graded_run(tmp_path / "victim")
    other = make_run(tmp_path / "other", "aime", lambda r: "no idea", samples=2)
    before = snapshot(victim)
    assert main(["grade", str(other), "--out", str(victim), "--no-progress"]) == 2
    assert "is a run of its own" in capsys.readouterr().err
    assert snapshot(victim) == before
    assert main(["grade", str(victim), "--out", str(victim), "--no-progress"]) == 0  # its own folder: plain grade
    assert not (victim / "grades-of.json").exists()


def test_orphaned_temp_files_of_a_dead_grade_are_removed_and_a_live_writers_kept(tmp_path, capsys):
    run = graded_run(tmp_path / "run")
    judge_dir = run / "grades" / "rules-v11"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    orphans = [judge_dir / f".samples.jsonl.{dead.stdout.strip()}.k3j2h1g0.tmp", judge_dir / ".summary.json.x9y8z7w6.tmp"]
    live = judge_dir / f".samples.jsonl.{os.getppid()}.a1b2c3d4.tmp"  # a live process's write in flight
    for path in (*orphans, live):
        path.write_text('{"item_id": "half wri')
    assert main(["grade", str(run), "--judge", "rules", "--no-progress"]) == 0
    assert not any(p.exists() for p in orphans) and live.exists()
    assert "left by a grade that was killed" in capsys.readouterr().err


def test_a_record_of_a_newer_schema_is_refused_naming_file_and_line(tmp_path, capsys):
    run = make_run(tmp_path / "run", "aime", lambda r: "\\boxed{1}", samples=1)
    gens = run / "generations.jsonl"
    lines = gens.read_text().splitlines()
    newer = {**json.loads(lines[2]), "schema_version": 2}
    gens.write_text("\n".join(lines[:2] + [json.dumps(newer)] + lines[3:]) + "\n")
    assert main(["grade", str(run), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"{gens}:3: schema_version 2 is newer than this code reads (up to 1)" in err
    spec = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**spec, "schema_version": 7}))
    assert main(["summary", str(run)]) == 2 and f"{run / 'run.json'}: schema_version 7" in capsys.readouterr().err


def _limited(args: list[str], max_bytes: int, cwd: Path) -> subprocess.CompletedProcess:
    """Run the CLI with files capped at max_bytes: a real EFBIG from the kernel at the write, as on a full disk."""
    code = ("import resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
            f"resource.setrlimit(resource.RLIMIT_FSIZE, ({max_bytes}, {max_bytes})); "
            "from harness.cli import main; sys.exit(main(sys.argv[1:]))")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=120)


def test_grade_on_a_full_disk_is_one_line_naming_the_file_and_keeps_the_old_grades(tmp_path):
    run = graded_run(tmp_path / "run")
    before = snapshot(run)
    done = _limited(["grade", str(run), "--no-progress"], 600, tmp_path)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"error: {run / 'grades' / 'rules-v11' / 'samples.jsonl'}: cannot write") and "large" in line
    assert snapshot(run) == before  # the earlier grades are intact and no temp file is left


def test_generate_on_a_full_disk_is_one_line_and_a_rerun_resumes(tmp_path):
    full = make_run(tmp_path / "full", "aime", lambda r: "\\boxed{1}", samples=1)
    size, lines = (full / "generations.jsonl").stat().st_size, (full / "generations.jsonl").read_text().splitlines()
    with ScriptedServer(Reply(text="\\boxed{1}")) as server:
        args = ["generate", "--task", "aime", "--engine", "openai", "--base-url", server.base_url, "--model", "test-model",
                "--out", str(tmp_path / "run"), "--samples", "1", "--no-progress", "--concurrency", "1"]
        done = _limited(args, size // 2, tmp_path)
        assert done.returncode == 2, done.stderr
        [line] = [x for x in done.stderr.strip().splitlines() if x.startswith("error")]
        assert "Traceback" not in done.stderr and "generations.jsonl: cannot append a record" in line
        kept = (tmp_path / "run" / "generations.jsonl").read_text().splitlines()
        assert kept and all(json.loads(x) for x in kept[:-1])  # earlier records intact; only the last may be torn
        assert main(args) == 0  # space again: resumes, repairs the torn tail, finishes
    records = [json.loads(x) for x in (tmp_path / "run" / "generations.jsonl").read_text().splitlines()]
    assert len(records) == len(lines) and len({r["item_id"] for r in records}) == len(lines)
