"""`data show|prepare` and `generate --data hf:...` through the CLI, against caches built offline in the test."""
import json

import datasets
import pytest

from harness.cli import main
from tasks import get_task
from tests.support.scripted_server import Reply, ScriptedServer
from tests.tasks.hub_fixtures import add_to_datasets_cache, offline_hf_home  # noqa: F401  (a fixture)
from tests.tasks.test_sources import COMMIT_A, COMMIT_B, gpqa_rows

pytestmark = pytest.mark.usefixtures("offline_hf_home")
GPQA = "hf:Idavidrein/gpqa:gpqa_diamond"


@pytest.fixture
def gpqa_cache(offline_hf_home, tmp_path):
    for commit, tag in ((COMMIT_A, ""), (COMMIT_B, "")):  # two revisions holding the same questions
        add_to_datasets_cache(offline_hf_home, "Idavidrein/gpqa", "gpqa_diamond", commit,
                              {"train": datasets.Dataset.from_list(gpqa_rows(4, tag))}, tmp_path)
    return offline_hf_home


def test_data_show_prints_count_columns_examples_and_hash(gpqa_cache, capsys):
    assert main(["data", "show", "gpqa", "--data", f"{GPQA}@{COMMIT_A}"]) == 0
    out, err = capsys.readouterr()
    assert "items:       4" in out
    assert f"hf:Idavidrein/gpqa, config gpqa_diamond, split train, revision {COMMIT_A}, commit {COMMIT_A}" in out
    assert "question <- Question" in out and "correct_answer <- Correct Answer" in out and "ids:         column Record ID" in out
    assert out.count("--- example ") == 3 and "Question 0?" in out and "Question 3?" not in out
    assert "\nA) " in out and "Answer: X" in out  # rendered through the prompt template
    sha = get_task("gpqa").load_dataset(f"{GPQA}@{COMMIT_A}").sha256
    assert f"sha256:      {sha}" in out and "fingerprint: " in out
    assert "columns used:" in err


def test_data_show_error_is_one_line_without_traceback(capsys):
    assert main(["data", "show", "gpqa", "--data", "hf:Idavidrein/gpqa"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: hf:Idavidrein/gpqa: not in the local cache") and "Traceback" not in err


def test_data_prepare_writes_the_default_csv_that_loads_back_the_same(gpqa_cache, tmp_path, capsys):
    out = tmp_path / "data" / "gpqa" / "gpqa_diamond.csv"
    assert main(["data", "prepare", "gpqa", "--data", GPQA, "--out", str(out)]) == 0
    assert "wrote 4 items" in capsys.readouterr().out
    header = out.read_text().splitlines()[0]
    assert header == "Record ID,Question,Correct Answer,Incorrect Answer 1,Incorrect Answer 2,Incorrect Answer 3,High-level domain,Subdomain"
    from_hub, from_file = get_task("gpqa").load(GPQA), get_task("gpqa").load(out)
    assert [(i.id, i.fields["answers"], i.category) for i in from_hub] == [(i.id, i.fields["answers"], i.category) for i in from_file]
    assert main(["data", "prepare", "gpqa", "--data", GPQA, "--out", str(out)]) == 2  # never overwritten silently
    assert "already exists" in capsys.readouterr().err


def test_data_prepare_aime_jsonl_keeps_hashed_ids(tmp_path, capsys):
    src = tmp_path / "aime25.jsonl"
    src.write_text("".join(json.dumps({"problem": f"p{i}", "answer": str(i)}) + "\n" for i in range(3)))
    out = tmp_path / "aime.jsonl"
    assert main(["data", "prepare", "aime", "--data", str(src), "--out", str(out)]) == 0
    assert "no id" in capsys.readouterr().err  # said once, on stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == [i.id for i in get_task("aime").load(src)] and rows[0]["problem"] == "p0"


def generate(base_url, out, data):
    return main(["generate", "--task", "gpqa", "--data", data, "--engine", "openai", "--base-url", base_url,
                 "--model", "test-model", "--samples", "1", "--out", str(out), "--no-progress", "--max-retries", "0"])


def test_generate_from_hf_records_the_source_and_refuses_another_revision_on_resume(gpqa_cache, tmp_path, capsys):
    out = tmp_path / "run"
    with ScriptedServer(Reply(text="Answer: A")) as server:
        assert generate(server.base_url, out, f"{GPQA}@{COMMIT_A}") == 0
        spec = json.loads((out / "run.json").read_text())
        src = spec["dataset_source"]
        assert (src["kind"], src["hub_name"], src["config"], src["split"], src["revision"], src["commit"]) == (
            "hf", "Idavidrein/gpqa", "gpqa_diamond", "train", COMMIT_A, COMMIT_A)
        assert src["fingerprint"] and spec["dataset_sha256"] == src["sha256"] and spec["dataset_path"] == f"{GPQA}@{COMMIT_A}"
        assert src["columns"]["id"] == "Record ID" and len(spec["item_ids"]) == 4
        # the same commit named by a prefix: the same run, resumed with nothing left to do
        assert generate(server.base_url, out, f"{GPQA}@{COMMIT_A[:8]}") == 0
        sent = len(server.requests)
        capsys.readouterr()
        assert generate(server.base_url, out, f"{GPQA}@{COMMIT_B}") == 2
        err = capsys.readouterr().err
        assert "holds a different run" in err and "data: " in err and COMMIT_B in err
        assert len(server.requests) == sent  # refused before any request
    assert json.loads((out / "run.json").read_text())["dataset_source"]["commit"] == COMMIT_A


def test_hle_show_and_prepare_turn_struct_images_into_data_uris(tmp_path, capsys):
    from tests.tasks.test_sources import hle_dataset, hle_rows

    hle_dataset(hle_rows()).save_to_disk(str(tmp_path / "saved"))
    assert main(["data", "show", "hle", "--data", str(tmp_path / "saved")]) == 0
    out = capsys.readouterr().out
    assert "items:       2" in out and "<image image/png, " in out and "base64" not in out
    target = tmp_path / "hle.jsonl"
    assert main(["data", "prepare", "hle", "--data", str(tmp_path / "saved"), "--out", str(target)]) == 0
    rows = [json.loads(line) for line in target.read_text().splitlines()]
    assert rows[0]["image"] == "" and rows[1]["image"].startswith("data:image/png;base64,")
    reloaded = get_task("hle").load(target)
    assert [(i.id, i.fields) for i in reloaded] == [(i.id, i.fields) for i in get_task("hle").load(tmp_path / "saved")]
