"""Resume compares what identifies the data (the rows' hash, the hub commit), not how it was found."""
import asyncio
import io

import pytest

from engine.base import SamplingParams
from harness.errors import RunDirError
from harness.generate import GenerateConfig, run_generation
from tasks import get_task
from tests.judges_llm.runs import AnswerEngine
from tests.tasks.hub_fixtures import add_hub_snapshot, add_to_datasets_cache
from tests.tasks.test_sources import COMMIT_A, hle_dataset, hle_rows


def generate(out, data: str):
    task = get_task("hle")
    loaded = task.load_dataset(data)
    cfg = GenerateConfig(task=task, data_path=data, out=out, samples=1, limit=None, sampling=SamplingParams(max_tokens=8),
                         progress=False, dataset_source=loaded.source)
    return loaded, asyncio.run(run_generation(cfg, AnswerEngine(lambda r: "Answer: 4"), loaded.items, "m"))


def snapshot_of(home, rows):
    buf = io.BytesIO()
    hle_dataset(rows).to_parquet(buf)
    add_hub_snapshot(home, "cais/hle", COMMIT_A, {"data/test-00000-of-00001.parquet": buf.getvalue()})


def test_a_run_from_a_snapshot_resumes_once_an_arrow_cache_of_that_commit_appears(offline_hf_home, tmp_path):
    snapshot_of(offline_hf_home, hle_rows())
    first, result = generate(tmp_path / "run", "hf:cais/hle")
    assert first.source["format"] == "hub snapshot" and result.generated == 2
    add_to_datasets_cache(offline_hf_home, "cais/hle", "default", COMMIT_A, {"test": hle_dataset(hle_rows())}, tmp_path)
    again, result = generate(tmp_path / "run", "hf:cais/hle")
    assert again.source["format"] == "datasets cache" and again.source["sha256"] != first.source["sha256"]
    assert again.source["rows_sha256"] == first.source["rows_sha256"]
    assert (result.kept, result.generated) == (2, 0)  # the same rows: resumed, nothing redone


def test_a_refusal_for_other_items_names_the_ids_that_differ(offline_hf_home, tmp_path):
    snapshot_of(offline_hf_home, hle_rows())
    generate(tmp_path / "run", "hf:cais/hle")
    rows = hle_rows()
    rows[1]["id"] = "q9"
    other = tmp_path / "other.parquet"
    hle_dataset(rows).to_parquet(str(other))
    with pytest.raises(RunDirError) as err:
        generate(tmp_path / "run", str(other))
    assert "item_ids: only in run.json: q2; only now: q9" in str(err.value)
    assert "rows_sha256" in str(err.value)
