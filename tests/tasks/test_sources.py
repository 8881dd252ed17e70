"""Dataset sources as users have them: hf: specs from the local caches, save_to_disk and snapshot folders,
and the column variants of the public AIME, GPQA and HLE files. Everything is built here, offline."""
import io
import json

import datasets
import pytest
from PIL import Image

from tasks import DataError, get_task
from tasks.columns import text_id
from tasks.hub_sources import HfSpec
from tests.tasks.hub_fixtures import add_hub_snapshot, add_to_datasets_cache, write_snapshot

COMMIT_A = "a1" * 20
COMMIT_B = "b2" * 20
GPQA_COLUMNS = ["Record ID", "Question", "Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2",
                "Incorrect Answer 3", "High-level domain", "Subdomain", "Explanation"]


def gpqa_rows(n, tag=""):
    return [dict(zip(GPQA_COLUMNS, [f"rec{i}{tag}", f"Question {i}{tag}?", f"right {i}", f"w{i}a", f"w{i}b", f"w{i}c",
                                    "Physics" if i % 2 else "Biology", "Optics", "because"])) for i in range(n)]


def png(color=(255, 0, 0)):
    buf = io.BytesIO()
    Image.new("RGB", (4, 4), color).save(buf, format="PNG")
    return buf.getvalue()


def hle_rows():
    return [
        {"id": "q1", "question": "2+2?", "image": None, "answer": "4", "answer_type": "exactMatch",
         "category": "Math", "raw_subject": "Arithmetic"},
        {"id": "q2", "question": "Which colour?\nA. red\nB. blue", "image": {"bytes": png(), "path": None},
         "answer": "A", "answer_type": "multipleChoice", "category": "Other", "raw_subject": "Colours"},
    ]


def hle_dataset(rows):
    features = datasets.Features({k: datasets.Value("string") for k in rows[0] if k != "image"}
                                 | {"image": datasets.Image()})
    return datasets.Dataset.from_list(rows, features=features)


# --- hf: specs ---------------------------------------------------------------------------------------------------

def test_hf_spec_parses_every_part_and_rejects_a_bare_name():
    assert HfSpec.parse("hf:Idavidrein/gpqa:gpqa_diamond@abc1234#train") == HfSpec(
        "Idavidrein/gpqa", "gpqa_diamond", "abc1234", "train")
    assert HfSpec.parse("hf:cais/hle#test") == HfSpec("cais/hle", None, None, "test")
    with pytest.raises(DataError, match=r"expected hf:OWNER/NAME\[:CONFIG\]"):
        HfSpec.parse("hf:gpqa")


def test_gpqa_from_the_datasets_cache_records_config_split_commit_and_fingerprint(offline_hf_home, tmp_path):
    add_to_datasets_cache(offline_hf_home, "Idavidrein/gpqa", "gpqa_diamond", COMMIT_A,
                          {"train": datasets.Dataset.from_list(gpqa_rows(5))}, tmp_path)
    # the layout is the one datasets itself reads offline
    own = datasets.load_dataset("Idavidrein/gpqa", "gpqa_diamond", cache_dir=str(offline_hf_home / "datasets"))
    assert own["train"].num_rows == 5

    loaded = get_task("gpqa").load_dataset("hf:Idavidrein/gpqa")  # the task knows its usual config
    src = loaded.source
    assert [i.id for i in loaded.items] == [f"rec{i}" for i in range(5)]
    assert loaded.items[1].fields["answers"] == ["right 1", "w1a", "w1b", "w1c"] and loaded.items[1].category == "Physics"
    assert (src["kind"], src["hub_name"], src["config"], src["split"], src["commit"]) == (
        "hf", "Idavidrein/gpqa", "gpqa_diamond", "train", COMMIT_A)
    assert src["fingerprint"] and len(src["sha256"]) == 64 and src["files"][0].endswith(".arrow")
    assert src["columns"]["question"] == "Question" and src["id_rule"] == "column Record ID"


def test_revision_picks_that_cached_commit_and_an_unknown_one_is_refused(offline_hf_home, tmp_path):
    for commit, tag in ((COMMIT_A, "a"), (COMMIT_B, "b")):
        add_to_datasets_cache(offline_hf_home, "Idavidrein/gpqa", "gpqa_diamond", commit,
                              {"train": datasets.Dataset.from_list(gpqa_rows(2, tag))}, tmp_path)
    gpqa = get_task("gpqa")
    assert gpqa.load(f"hf:Idavidrein/gpqa:gpqa_diamond@{COMMIT_A[:10]}")[0].id == "rec0a"
    pinned = gpqa.load_dataset(f"hf:Idavidrein/gpqa:gpqa_diamond@{COMMIT_B}")
    assert pinned.items[0].id == "rec0b" and pinned.source["commit"] == COMMIT_B
    assert pinned.source["revision"] == COMMIT_B
    with pytest.raises(DataError, match=r"revision 'deadbeef0' is not cached \(cached commits: a1a1.*b2b2"):
        gpqa.load("hf:Idavidrein/gpqa@deadbeef0")
    with pytest.raises(DataError, match=r"cannot resolve revision 'main' offline"):
        gpqa.load("hf:Idavidrein/gpqa@main")
    # a branch name resolves through the hub cache's refs/, the only offline record of it
    add_hub_snapshot(offline_hf_home, "Idavidrein/gpqa", COMMIT_B, {}, ref="main")
    assert gpqa.load_dataset("hf:Idavidrein/gpqa@main").source["commit"] == COMMIT_B


def test_several_cached_configs_must_be_named(offline_hf_home, tmp_path):
    for config in ("AIME2025-I", "AIME2025-II"):
        rows = [{"question": f"{config} problem {i}", "answer": str(i)} for i in range(3)]
        add_to_datasets_cache(offline_hf_home, "opencompass/AIME2025", config, COMMIT_A,
                              {"test": datasets.Dataset.from_list(rows)}, tmp_path)
    aime = get_task("aime")
    with pytest.raises(DataError, match=r"several cached configs found \(AIME2025-I, AIME2025-II\); "
                                        r"name one: hf:opencompass/AIME2025:CONFIG"):
        aime.load("hf:opencompass/AIME2025")
    loaded = aime.load_dataset("hf:opencompass/AIME2025:AIME2025-II#test")
    assert loaded.items[0].fields["problem"] == "AIME2025-II problem 0"
    assert loaded.items[0].id == text_id("AIME2025-II problem 0")  # no id column: a hash of the problem
    assert loaded.source["columns"]["problem"] == "question" and loaded.source["id_rule"] == "sha256(problem)[:12]"
    assert any("no id" in n for n in loaded.notes)
    with pytest.raises(DataError, match=r"no 'validation' among the splits found: test"):
        aime.load("hf:opencompass/AIME2025:AIME2025-I#validation")


def test_not_cached_says_how_to_download_once(offline_hf_home):
    with pytest.raises(DataError) as err:
        get_task("gpqa").load("hf:Idavidrein/gpqa")
    message = str(err.value)
    assert "not in the local cache" in message and str(offline_hf_home) in message and "never downloads" in message
    assert "datasets.load_dataset('Idavidrein/gpqa', 'gpqa_diamond')" in message
    assert "hf download Idavidrein/gpqa --repo-type dataset" in message


def test_hle_from_a_hub_snapshot_folder_with_struct_images(offline_hf_home, tmp_path):
    buf = io.BytesIO()
    hle_dataset(hle_rows()).to_parquet(buf)
    add_hub_snapshot(offline_hf_home, "cais/hle", COMMIT_A, {
        "data/test-00000-of-00001.parquet": buf.getvalue(), "README.md": b"---\nlicense: mit\n---\n"})
    loaded = get_task("hle").load_dataset("hf:cais/hle")
    assert [i.id for i in loaded.items] == ["q1", "q2"]
    assert loaded.items[1].fields["image"].startswith("data:image/png;base64,") and loaded.items[1].fields["has_image"]
    assert loaded.items[0].fields["image"] == ""
    assert (loaded.source["commit"], loaded.source["format"], loaded.source["split"]) == (COMMIT_A, "hub snapshot", "test")
    assert [i.id for i in get_task("hle", subset="image").load("hf:cais/hle#test")] == ["q2"]


# --- folders -------------------------------------------------------------------------------------------------------

def test_save_to_disk_folder_picks_the_task_split_or_the_named_one(tmp_path):
    # AIME 2024 as Maxwell-Jia/AIME_2024 publishes it: ID, Problem, Solution, Answer (an integer)
    rows = [{"ID": f"2024-I-{i}", "Problem": f"Problem {i}", "Solution": "...", "Answer": i * 7} for i in range(1, 4)]
    dd = datasets.DatasetDict({"train": datasets.Dataset.from_list(rows[:1]), "test": datasets.Dataset.from_list(rows)})
    dd.save_to_disk(str(tmp_path / "aime"))
    aime = get_task("aime")
    loaded = aime.load_dataset(tmp_path / "aime")
    assert [(i.id, i.fields["answer"]) for i in loaded.items] == [("2024-I-1", "7"), ("2024-I-2", "14"), ("2024-I-3", "21")]
    assert loaded.source["split"] == "test" and loaded.source["format"] == "save_to_disk" and loaded.source["fingerprint"]
    assert loaded.source["columns"] == {"id": "ID", "problem": "Problem", "answer": "Answer"}
    assert [i.id for i in aime.load(f"{tmp_path / 'aime'}#train")] == ["2024-I-1"]


def test_parquet_loaded_with_load_dataset_then_saved_keeps_its_images(tmp_path):
    path = tmp_path / "hle.parquet"
    hle_dataset(hle_rows()).to_parquet(str(path))
    ds = datasets.load_dataset("parquet", data_files={"test": str(path)}, cache_dir=str(tmp_path / "cache"))
    ds.save_to_disk(str(tmp_path / "saved"))
    items = get_task("hle").load(tmp_path / "saved")
    assert items[1].fields["image"].startswith("data:image/png;base64,")
    # the same parquet read as a file: the image struct is {bytes, path} there too
    assert get_task("hle").load(path)[1].fields["image"] == items[1].fields["image"]


def test_snapshot_folder_of_parquet_shards_with_a_card(tmp_path):
    rows = [{"problem": f"p{i}", "answer": str(i), "id": str(i)} for i in range(6)]
    write_snapshot(tmp_path / "snap", "default", {"test": datasets.Dataset.from_list(rows),
                                                  "train": datasets.Dataset.from_list(rows[:2])}, shards=3)
    aime = get_task("aime")
    loaded = aime.load_dataset(tmp_path / "snap")  # the task prefers test
    assert [i.id for i in loaded.items] == [str(i) for i in range(6)]
    assert loaded.source["split"] == "default/test" and len(loaded.source["files"]) == 3
    assert [i.id for i in aime.load(f"{tmp_path / 'snap'}#train")] == ["0", "1"]


def test_ambiguous_folder_lists_what_it_found(tmp_path):
    for name in ("gpqa_main", "gpqa_extended"):
        datasets.Dataset.from_list(gpqa_rows(1)).to_csv(str(tmp_path / f"{name}.csv"), index=False)
    with pytest.raises(DataError, match=r"several data files found \(gpqa_extended, gpqa_main\); name one: .*#NAME"):
        get_task("gpqa").load(tmp_path)
    datasets.Dataset.from_list(gpqa_rows(2)).to_csv(str(tmp_path / "gpqa_diamond.csv"), index=False)
    assert len(get_task("gpqa").load(tmp_path)) == 2  # the task's usual file wins


# --- column variants, ids, images ----------------------------------------------------------------------------------

@pytest.mark.parametrize("row,expected_id", [
    ({"ID": "2024-II-4", "Problem": "P", "Answer": 33}, "2024-II-4"),         # Maxwell-Jia/AIME_2024
    ({"id": "0", "problem": "P", "answer": "33"}, "0"),                         # math-ai/aime25
    ({"question": "P", "answer": "33"}, text_id("P")),                          # opencompass/AIME2025
    ({"problem_idx": 4, "problem": "P", "answer": 33}, "4"),                    # MathArena exports
])
def test_aime_column_variants(tmp_path, row, expected_id):
    path = tmp_path / "aime.jsonl"
    path.write_text(json.dumps(row) + "\n")
    items = get_task("aime").load(path)
    assert [(i.id, i.fields["problem"], i.fields["answer"]) for i in items] == [(expected_id, "P", "33")]


def test_missing_ids_are_hashes_stable_under_reordering_and_duplicates_name_both_rows(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    rows = [{"problem": "one", "answer": 1}, {"problem": "two", "answer": 2}]
    a.write_text("".join(json.dumps(r) + "\n" for r in rows))
    b.write_text("".join(json.dumps(r) + "\n" for r in reversed(rows)))
    ids_a = {i.fields["problem"]: i.id for i in get_task("aime").load(a)}
    assert ids_a == {i.fields["problem"]: i.id for i in get_task("aime").load(b)}
    a.write_text(a.read_text() + json.dumps({"problem": "one", "answer": 1}) + "\n")
    with pytest.raises(DataError, match=rf"a\.jsonl:3: duplicate id '{ids_a['one']}' \(first at .*a\.jsonl:1\)"):
        get_task("aime").load(a)
    dup = tmp_path / "d.parquet"
    datasets.Dataset.from_list([{"id": "x", "problem": "p", "answer": 1}] * 2).to_parquet(str(dup))
    with pytest.raises(DataError, match=r"d\.parquet row 2: duplicate id 'x' \(first at .*d\.parquet row 1\)"):
        get_task("aime").load(dup)


def test_gpqa_snake_case_variant_and_hashed_ids(tmp_path):
    path = tmp_path / "gpqa.parquet"
    rows = [{"question": "Why?", "correct_answer": "a", "incorrect_answer_1": "b", "incorrect_answer_2": "c",
             "incorrect_answer_3": "d", "high_level_domain": "Chemistry"}]
    datasets.Dataset.from_list(rows).to_parquet(str(path))
    loaded = get_task("gpqa").load_dataset(path)
    assert loaded.items[0].id == text_id("Why?") and loaded.items[0].category == "Chemistry"
    assert loaded.items[0].fields["answers"] == ["a", "b", "c", "d"]


def test_hle_images_as_raw_bytes_pil_or_path_only(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [dict(hle_rows()[1], image=png((0, 0, 255)))]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "bytes.parquet")
    assert get_task("hle").load(tmp_path / "bytes.parquet")[0].fields["image"].startswith("data:image/png;base64,")
    # a decoded Image feature (PIL) saved to disk reads back undecoded and becomes the same PNG data URI
    hle_dataset(hle_rows()).save_to_disk(str(tmp_path / "saved"))
    assert get_task("hle").load(tmp_path / "saved")[1].fields["image"].startswith("data:image/png;base64,")
    path_only = [dict(hle_rows()[1], image={"bytes": None, "path": "images/q2.png"})]
    pq.write_table(pa.Table.from_pylist(path_only), tmp_path / "path.parquet")
    with pytest.raises(DataError, match=r"path\.parquet row 1: image struct has a path \('images/q2\.png'\) but no bytes"):
        get_task("hle").load(tmp_path / "path.parquet")


def test_a_revision_or_config_missing_from_the_datasets_cache_is_read_from_a_hub_snapshot(offline_hf_home, tmp_path):
    add_to_datasets_cache(offline_hf_home, "Idavidrein/gpqa", "gpqa_diamond", COMMIT_A,
                          {"train": datasets.Dataset.from_list(gpqa_rows(2, "a"))}, tmp_path)
    gpqa = get_task("gpqa")
    with pytest.raises(DataError, match=r"config 'gpqa_main' is not cached \(cached configs: gpqa_diamond\)"):
        gpqa.load("hf:Idavidrein/gpqa:gpqa_main")
    # `hf download` of another commit: the official layout, one CSV per config at the root
    csv_path = tmp_path / "main.csv"
    datasets.Dataset.from_list(gpqa_rows(3, "b")).to_csv(str(csv_path), index=False)
    add_hub_snapshot(offline_hf_home, "Idavidrein/gpqa", COMMIT_B, {
        "gpqa_main.csv": csv_path.read_bytes(), "gpqa_diamond.csv": csv_path.read_bytes()})
    loaded = gpqa.load_dataset(f"hf:Idavidrein/gpqa:gpqa_main@{COMMIT_B[:12]}")
    assert [i.id for i in loaded.items] == ["rec0b", "rec1b", "rec2b"]
    # named as the datasets cache names it: a root file is a config whose one split is train
    assert (loaded.source["commit"], loaded.source["format"], loaded.source["config"], loaded.source["split"]) == (
        COMMIT_B, "hub snapshot", "gpqa_main", "train")
    assert gpqa.load_dataset("hf:Idavidrein/gpqa").source["commit"] == COMMIT_A  # the datasets cache comes first


def test_a_split_or_config_missing_from_a_hub_snapshot_is_an_error_listing_what_is_there(offline_hf_home, tmp_path):
    buf = io.BytesIO()
    hle_dataset(hle_rows()).to_parquet(buf)
    add_hub_snapshot(offline_hf_home, "cais/hle", COMMIT_A, {"data/test-00000-of-00001.parquet": buf.getvalue()})
    hle = get_task("hle")
    with pytest.raises(DataError, match=r"hf:cais/hle hub snapshot .*: no split 'validation'; splits there: test"):
        hle.load("hf:cais/hle#validation")
    with pytest.raises(DataError, match=r"no config 'nosuchconfig'; configs there: default"):
        hle.load("hf:cais/hle:nosuchconfig")
    loaded = hle.load_dataset("hf:cais/hle#test")
    assert (loaded.source["config"], loaded.source["split"]) == (None, "test")
    assert loaded.notes[0].startswith("hle: 2 items from hf:cais/hle#test;")  # no ':None' in the label
    csv_path = tmp_path / "main.csv"
    datasets.Dataset.from_list(gpqa_rows(3)).to_csv(str(csv_path), index=False)
    add_hub_snapshot(offline_hf_home, "Idavidrein/gpqa", COMMIT_B, {"gpqa_main.csv": csv_path.read_bytes(),
                                                                          "gpqa_diamond.csv": csv_path.read_bytes()})
    with pytest.raises(DataError, match=r"no config 'gpqa_extended'; configs there: gpqa_diamond, gpqa_main"):
        get_task("gpqa").load("hf:Idavidrein/gpqa:gpqa_extended")
    with pytest.raises(DataError, match=r"no split 'test'; splits there: train"):
        get_task("gpqa").load("hf:Idavidrein/gpqa:gpqa_main#test")
    assert get_task("gpqa").load_dataset("hf:Idavidrein/gpqa").source["config"] == "gpqa_diamond"


def test_a_revision_in_no_cache_lists_the_cached_commits(offline_hf_home):
    buf = io.BytesIO()
    hle_dataset(hle_rows()).to_parquet(buf)
    add_hub_snapshot(offline_hf_home, "cais/hle", COMMIT_A, {"data/test-00000-of-00001.parquet": buf.getvalue()})
    with pytest.raises(DataError, match=rf"revision 'deadbeef' is not cached \(cached commits: {COMMIT_A}\)"):
        get_task("hle").load("hf:cais/hle@deadbeef")
