"""Bad CLI input is one clear error, exit 2, before any engine or model is built."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import harness.commands.generate as generate_command
from harness.cli import main
from tests.harness.read_only import can_make_read_only, run_harness_read_only
from tests.support.scripted_server import Reply, ScriptedServer

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def no_engine(monkeypatch):
    """Fails the test if the command gets as far as building an engine."""
    def refuse(*args, **kwargs):
        raise AssertionError("an engine was built before the input was checked")
    monkeypatch.setattr(generate_command, "create_engine", refuse)


def generate(out, *extra):
    return ["generate", "--task", "aime", "--out", str(out), "--no-progress", *extra]


@pytest.mark.parametrize("flag", ["--samples", "--max-tokens", "--concurrency", "--limit"])
@pytest.mark.parametrize("value", ["0", "-3"])
def test_counts_below_one_are_errors_not_defaults(flag, value, tmp_path, capsys, no_engine):
    with pytest.raises(SystemExit) as info:
        main(generate(tmp_path / "run", flag, value))
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}: must be >= 1, got {int(value)}" in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("args,message", [
    (["--request-timeout", "0"], "argument --request-timeout: must be a finite number > 0"),
    (["--max-retries", "-1"], "argument --max-retries: must be >= 0"),
    (["--samples", "many"], "argument --samples: expected a whole number >= 1, got 'many'"),
])
def test_other_numbers_are_checked_at_parse_time(args, message, tmp_path, capsys, no_engine):
    with pytest.raises(SystemExit) as info:
        main(generate(tmp_path / "run", *args))
    assert info.value.code == 2 and message in capsys.readouterr().err


def test_grade_judge_numbers_are_checked(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["grade", str(tmp_path), "--judge", "llm", "--judge-concurrency", "0"])
    assert info.value.code == 2 and "argument --judge-concurrency: must be >= 1" in capsys.readouterr().err


def test_out_naming_a_file_is_refused_before_the_model_loads(tmp_path, capsys, no_engine):
    target = tmp_path / "results.txt"
    target.write_text("mine")
    assert main(generate(target)) == 2
    err = capsys.readouterr().err
    assert f"error: --out {target}: is a file" in err and "Traceback" not in err
    assert target.read_text() == "mine"


def test_out_below_a_file_is_one_clear_line(tmp_path, capsys, no_engine):
    (tmp_path / "f").write_text("x")
    assert main(generate(tmp_path / "f" / "run")) == 2
    err = capsys.readouterr().err
    assert f"error: --out {tmp_path / 'f' / 'run'}: cannot create this folder" in err and "Traceback" not in err


def test_folder_with_other_files_is_refused_unless_forced(tmp_path, capsys, no_engine, monkeypatch):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "todo.md").write_text("keep me")
    assert main(generate(folder)) == 2
    err = capsys.readouterr().err
    assert "holds other files (todo.md)" in err and "--force" in err
    assert sorted(p.name for p in folder.iterdir()) == ["todo.md"]

    monkeypatch.undo()  # --force: the run is written beside the other files
    with ScriptedServer(Reply(text="\\boxed{1}")) as server:
        assert main(generate(folder, "--engine", "openai", "--base-url", server.base_url, "--model", "test-model",
                             "--samples", "1", "--limit", "1", "--force")) == 0
    assert (folder / "todo.md").read_text() == "keep me" and (folder / "run.json").exists()


def test_samples_default_only_when_absent(tmp_path):
    with ScriptedServer(Reply(text="\\boxed{1}")) as server:
        assert main(generate(tmp_path / "run", "--engine", "openai", "--base-url", server.base_url, "--model",
                             "test-model", "--limit", "1")) == 0
    assert json.loads((tmp_path / "run" / "run.json").read_text())["samples"] == 32  # AIME's default


def test_failed_start_leaves_no_folder_behind(tmp_path, capsys):
    from tests.support.scripted_server import unused_url

    out = tmp_path / "new" / "run"
    assert main(generate(out, "--engine", "openai", "--base-url", unused_url(), "--model", "m")) == 2
    assert "cannot reach" in capsys.readouterr().err and not out.exists()


@pytest.mark.skipif(not can_make_read_only(), reason="cannot make a folder read-only for a child process here")
def test_read_only_out_is_one_clear_line(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    proc = run_harness_read_only(out, *generate(out, "--engine", "openai", "--base-url", "http://127.0.0.1:9/v1",
                                                "--model", "m"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    [error] = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert error.startswith(f"error: cannot write to {out}")


def test_cli_errors_print_no_traceback_in_a_real_process(tmp_path):
    (tmp_path / "file").write_text("x")
    proc = subprocess.run([sys.executable, "-m", "harness", *generate(tmp_path / "file", "--samples", "1")], cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.strip().splitlines()[-1].startswith("error: --out")
    assert "Traceback" not in proc.stderr
