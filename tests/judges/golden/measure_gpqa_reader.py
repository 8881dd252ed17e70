"""Measure a GPQA letter reader on the free-form corpus, overall and per kind of response.

    python tests/judges/golden/measure_gpqa_reader.py                  # this tree's judges/rules/gpqa.py
    git show main:judges/rules/gpqa.py > /tmp/old_gpqa.py
    python tests/judges/golden/measure_gpqa_reader.py /tmp/old_gpqa.py # another version of the reader

A reader older than the option-text rules takes no options and has no "ambiguous" reading: it is
scored strictly (an expected "ambiguous" needs that reading) and leniently (no answer counts there).
"""
from __future__ import annotations

import importlib.util
import inspect
import json
import sys
from collections import defaultdict
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "gpqa_freeform.jsonl"


def load_reader(path: str | None):
    if path is None:
        from judges.rules import gpqa
        return gpqa.read_letter
    spec = importlib.util.spec_from_file_location("gpqa_under_test", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module.read_letter


def reading(read_letter, case: dict) -> str | None:
    takes_options = "options" in inspect.signature(read_letter).parameters
    r = read_letter(case["response"], ("A", "B", "C", "D"), case["options"]) if takes_options else \
        read_letter(case["response"], ("A", "B", "C", "D"))
    return "ambiguous" if getattr(r, "ambiguous", None) else r.letter


def main(argv: list[str]) -> None:
    read_letter = load_reader(argv[0] if argv else None)
    cases = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    strict = lenient = 0
    per_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for case in cases:
        got, want = reading(read_letter, case), case["expected"]
        strict += got == want
        lenient += got == want or (want == "ambiguous" and got is None)
        per_kind[case["kind"]][0] += got == want
        per_kind[case["kind"]][1] += 1
    n = len(cases)
    print(f"{n} responses: {strict / n:.1%} read as expected ({strict}); "
          f"{lenient / n:.1%} counting no answer as right where 'ambiguous' is expected ({lenient})")
    for kind, (ok, total) in sorted(per_kind.items()):
        print(f"  {kind:14s} {ok:4d} / {total}")


if __name__ == "__main__":
    main(sys.argv[1:])
