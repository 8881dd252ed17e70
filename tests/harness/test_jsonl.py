import json

import pytest

from harness.errors import RunDirError
from harness.jsonl import JsonlWriter, iter_jsonl, repair_torn_tail


def test_torn_last_line_is_cut_and_earlier_records_kept(tmp_path):
    path = tmp_path / "g.jsonl"
    with JsonlWriter(path) as w:
        w.write({"a": 1})
        w.write({"a": 2})
    with open(path, "a") as f:
        f.write('{"a": 3, "resp')  # killed mid-write
    assert repair_torn_tail(path)
    assert [o for _, o in iter_jsonl(path)] == [{"a": 1}, {"a": 2}]
    assert not repair_torn_tail(path)  # idempotent


def test_complete_record_missing_only_its_newline_is_kept(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text('{"a": 1}\n{"a": 2}')
    assert repair_torn_tail(path)
    assert [o["a"] for _, o in iter_jsonl(path)] == [1, 2]
    assert path.read_text().endswith("\n")


def test_torn_only_line(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text('{"a": ')
    repair_torn_tail(path)
    assert path.read_text() == ""


def test_corrupt_line_in_the_middle_names_file_and_line(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps({"a": 1}) + "\nnot json\n" + json.dumps({"a": 3}) + "\n")
    with pytest.raises(RunDirError, match=r"g\.jsonl:2: corrupt record"):
        list(iter_jsonl(path))
