"""The real-output corpus files are well-formed; nothing here depends on how well the reader reads them."""
from __future__ import annotations

import gzip
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from tests.judges.real.build_corpus import ELEVENTH_BATCH, SEVENTEENTH_BATCH, TWENTYFIRST_BATCH
from tests.judges.real.measure import OUTCOMES, SPLITS, corpus_path, load, measure, outcome, table
from tests.judges.real.sources import MAX_RESPONSE_CHARS

HERE = Path(__file__).parent
SOURCES_MD = (HERE / "SOURCES.md").read_text(encoding="utf-8")
REQUIRED = ("id", "shape", "response", "model", "family", "reasoning_model", "source", "label",
            "label_method", "why", "split", "trimmed_chars", "asked_format")
MIN_RECORDS = 1000
MAX_TOTAL_BYTES = 8_000_000  # both gz files; they passed 5 MB with the nineteenth and twenty-first batches, 6 MB with the twenty-fourth


def _records(split: str) -> list[tuple[int, dict]]:
    with gzip.open(corpus_path(split), "rt", encoding="utf-8") as f:
        return [(n, json.loads(line)) for n, line in enumerate(f, 1)]


@pytest.fixture(scope="module")
def corpus() -> dict[str, list[tuple[int, dict]]]:
    return {split: _records(split) for split in SPLITS}


def test_every_record_is_complete(corpus):
    for split, rows in corpus.items():
        for n, rec in rows:
            where = f"{corpus_path(split).name}:{n}"
            missing = [k for k in REQUIRED if k not in rec]
            assert not missing, f"{where}: missing {missing}"
            assert rec["split"] == split, f"{where}: split {rec['split']!r} in the {split} file"
            assert isinstance(rec["response"], str) and rec["response"].strip(), f"{where}: empty response"
            assert len(rec["response"]) <= MAX_RESPONSE_CHARS, f"{where}: response over the cap"
            assert isinstance(rec["trimmed_chars"], int) and rec["trimmed_chars"] >= 0, where
            assert rec["asked_format"], f"{where}: no asked_format"
            src = rec["source"]
            assert re.fullmatch(r"[0-9a-f]{40}", src["commit"]), f"{where}: commit {src['commit']!r}"
            assert src["path"] and isinstance(src["index"], int) and src["license"], where
            assert f"`{src['repo']}`" in SOURCES_MD and src["commit"] in SOURCES_MD, \
                f"{where}: source {src['repo']}@{src['commit'][:8]} is not in SOURCES.md"
            if rec["label"] is None:
                assert rec["why"], f"{where}: a record with no answer says why"


def test_labels_fit_their_shape(corpus):
    for split, rows in corpus.items():
        for n, rec in rows:
            where = f"{corpus_path(split).name}:{n}"
            if rec["shape"] == "gpqa":
                letters = rec["letters"]
                assert len(letters) >= 2 and all(re.fullmatch(r"[A-Z]", x) for x in letters), where
                assert rec["label"] is None or rec["label"] in letters, f"{where}: label {rec['label']!r}"
                assert rec.get("choices") is None or len(rec["choices"]) == len(letters), where
            else:
                assert rec["shape"] == "aime", f"{where}: unknown shape {rec['shape']!r}"
                assert rec["label"] is None or type(rec["label"]) is int, f"{where}: label {rec['label']!r}"


def test_no_duplicates(corpus):
    ids = Counter(rec["id"] for rows in corpus.values() for _, rec in rows)
    assert not [i for i, c in ids.items() if c > 1]
    # One file can hold several models' answers to an item: "member"/"field" tell them apart.
    places = Counter((rec["source"]["repo"], rec["source"]["path"], rec["source"].get("member"),
                      rec["source"]["index"], rec["source"].get("field"))
                     for rows in corpus.values() for _, rec in rows)
    assert not [p for p, c in places.items() if c > 1]


def test_sizes_and_split(corpus):
    n = {split: len(rows) for split, rows in corpus.items()}
    assert sum(n.values()) >= MIN_RECORDS
    assert 0.17 <= n["heldout"] / sum(n.values()) <= 0.23
    assert sum(corpus_path(s).stat().st_size for s in SPLITS) <= MAX_TOTAL_BYTES
    # Stratified: every source/model with at least five records has some in each split (the eleventh, seventeenth and
    # twenty-first batches' strata are whole sources, their models sampled together: there the source is the stratum).
    strata: dict[str, Counter] = defaultdict(Counter)
    for split, rows in corpus.items():
        for _, rec in rows:
            source = rec["id"].split(":", 1)[0]
            whole = source in ELEVENTH_BATCH or source in SEVENTEENTH_BATCH or source in TWENTYFIRST_BATCH
            strata[source if whole else f"{source}:{rec['model']}"][split] += 1
    for key, c in strata.items():
        if sum(c.values()) >= 5:
            assert c["heldout"] and c["tuning"], f"{key}: {dict(c)}"


def test_breadth(corpus):
    recs = [rec for rows in corpus.values() for _, rec in rows]
    assert len({r["family"] for r in recs}) >= 5
    assert {r["reasoning_model"] for r in recs} == {True, False}
    assert {r["shape"] for r in recs} == {"gpqa", "aime"}
    assert any(r["label"] is None for r in recs), "some responses commit to no answer"


def test_outcome_counts_each_kind_of_mistake():
    assert outcome("B", "B") == "correct" and outcome(None, None) == "correct"
    assert outcome("B", "C") == "wrong" and outcome(12, 13) == "wrong"
    assert outcome("B", None) == "miss" and outcome(None, "B") == "false"


def test_no_gpqa_material(corpus):
    # GPQA's authors ask that its questions stay out of plain text online: no record may come from it.
    for split, rows in corpus.items():
        for n, rec in rows:
            src = rec["source"]
            where = " ".join((rec["id"], src["repo"], src["path"], str(src.get("member", "")))).lower()
            assert "gpqa" not in where, f"{corpus_path(split).name}:{n}: {where}"


def test_measure_counts_every_record_once():
    records = load("all")
    results = list(measure(records))
    assert len(results) == len(records)
    assert {r.outcome for r in results} <= set(OUTCOMES)
    total_line = [line for line in table(results, "source").splitlines() if line.startswith("TOTAL")][0]
    assert int(total_line.split()[1]) == len(records)
