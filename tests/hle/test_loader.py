"""HLE loader: both published formats, folders, subsets, and errors that name the place and the fields."""
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tasks import DataError, get_task
from tasks.hle import HleTask

ROWS = [
    {"id": "a1", "question": "What is 2+2?", "image": "", "answer": "4", "answer_type": "exactMatch",
     "category": "Math", "raw_subject": "Arithmetic", "rationale": "2+2=4"},
    {"id": "b2", "question": "Which shape?\nA. circle\nB. square", "image": "data:image/png;base64,iVBORw0KGgo=",
     "answer": "B", "answer_type": "multipleChoice", "category": "Other", "raw_subject": "Shapes", "rationale": ""},
    {"id": "c3", "question": "Name the gas.", "image": None, "answer": "Argon", "answer_type": "exactMatch",
     "category": "Chemistry", "raw_subject": "Gases", "rationale": None},
]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def write_parquet(path, rows):
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def test_jsonl_and_parquet_load_the_same_items(tmp_path):
    task = HleTask()
    from_jsonl = task.load(write_jsonl(tmp_path / "hle.jsonl", ROWS))
    from_parquet = task.load(write_parquet(tmp_path / "hle.parquet", ROWS))
    assert [i.id for i in from_jsonl] == ["a1", "b2", "c3"]
    assert [(i.id, i.fields, i.category) for i in from_jsonl] == [(i.id, i.fields, i.category) for i in from_parquet]
    assert from_jsonl[1].fields["has_image"] is True and from_jsonl[2].fields["image"] == ""


def test_folder_with_one_data_file_loads_it_and_several_must_be_named(tmp_path):
    write_jsonl(tmp_path / "a.jsonl", ROWS)
    (tmp_path / "0.txt").write_text("not data")
    assert [i.id for i in HleTask().load(tmp_path)] == ["a1", "b2", "c3"]
    write_parquet(tmp_path / "a.parquet", ROWS[:1])  # the same name in two formats: parquet is read
    assert [i.id for i in HleTask().load(tmp_path)] == ["a1"]
    write_parquet(tmp_path / "b.parquet", ROWS[1:])
    with pytest.raises(DataError, match=r"several data files found \(a, b\); name one: .*#NAME"):
        HleTask().load(tmp_path)
    assert [i.id for i in HleTask().load(f"{tmp_path}#b")] == ["b2", "c3"]


def test_subsets_keep_text_or_image_questions(tmp_path):
    path = write_jsonl(tmp_path / "hle.jsonl", ROWS)
    assert [i.id for i in get_task("hle", subset="text").load(path)] == ["a1", "c3"]
    assert [i.id for i in get_task("hle", subset="image").load(path)] == ["b2"]
    assert get_task("hle", subset="image").run_options() == {"subset": "image", "prompt": "official"}


def test_unknown_subset_lists_valid_ones():
    with pytest.raises(DataError, match="all, text, image"):
        get_task("hle", subset="audio")


def test_missing_file_names_path_and_format(tmp_path):
    with pytest.raises(DataError) as err:
        HleTask().load(tmp_path / "nope.jsonl")
    assert "nope.jsonl" in str(err.value) and "answer_type" in str(err.value) and "parquet" in str(err.value)


def test_empty_folder_is_an_error(tmp_path):
    with pytest.raises(DataError, match=r"no data file \(\*\.parquet, \*\.jsonl"):
        HleTask().load(tmp_path)


def test_bad_jsonl_row_names_line_and_fields(tmp_path):
    bad = dict(ROWS[0], id="x9")
    del bad["answer"]
    path = write_jsonl(tmp_path / "hle.jsonl", [ROWS[0], bad])
    with pytest.raises(DataError) as err:
        HleTask().load(path)
    message = str(err.value)
    assert "hle.jsonl:2: missing field(s) answer" in message and "id, question, answer, answer_type" in message


def test_invalid_json_line_is_named(tmp_path):
    path = tmp_path / "hle.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n{not json\n")
    with pytest.raises(DataError, match=r"hle.jsonl:2: not valid JSON"):
        HleTask().load(path)


def test_bad_parquet_row_and_missing_column(tmp_path):
    rows = [ROWS[0], dict(ROWS[1], answer_type="freeform")]
    with pytest.raises(DataError, match=r"hle.parquet row 2: answer_type 'freeform' is not one of"):
        HleTask().load(write_parquet(tmp_path / "hle.parquet", rows))
    no_answer_type = [{k: v for k, v in r.items() if k != "answer_type"} for r in ROWS]
    with pytest.raises(DataError, match=r"cols\.parquet: missing column\(s\) answer_type; columns found: id, question"):
        HleTask().load(write_parquet(tmp_path / "cols.parquet", no_answer_type))


def test_image_must_be_a_data_uri_and_ids_unique(tmp_path):
    with pytest.raises(DataError, match="data: URI"):
        HleTask().load(write_jsonl(tmp_path / "u.jsonl", [dict(ROWS[1], image="https://example.org/x.png")]))
    with pytest.raises(DataError, match="duplicate id 'a1'"):
        HleTask().load(write_jsonl(tmp_path / "d.jsonl", [ROWS[0], ROWS[0]]))


def test_demo_set_has_text_and_drawn_image_items():
    task = HleTask()
    items = task.load(task.demo_data_path)
    images = [i for i in items if i.fields["has_image"]]
    assert len(items) >= 6 and images and len(images) < len(items)
    from base64 import b64decode
    from io import BytesIO

    from PIL import Image

    for item in images:
        header, data = item.fields["image"].split(",", 1)
        assert header == "data:image/png;base64"
        assert Image.open(BytesIO(b64decode(data))).format == "PNG"
    assert {i.fields["answer_type"] for i in items} == {"exactMatch", "multipleChoice"}


def test_damaged_parquet_is_a_data_error(tmp_path):
    path = tmp_path / "hle.parquet"
    path.write_bytes(b"PAR1 this is not a parquet file")
    with pytest.raises(DataError, match="cannot read parquet"):
        HleTask().load(path)


def test_extra_published_columns_are_ignored(tmp_path):
    rows = [dict(r, image_preview=b"\x89PNG", author_name="x", canary="c") for r in ROWS]
    assert [i.id for i in HleTask().load(write_parquet(tmp_path / "hle.parquet", rows))] == ["a1", "b2", "c3"]
