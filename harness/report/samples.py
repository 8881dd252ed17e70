"""Sample data for the report's viewer, as paged JS files loaded lazily with <script src> (file:// forbids fetch).

Per run: data/<rid>-index.js, one compact row per expected (item, sample) for filtering, and
data/<rid>-p<NNNN>.js pages of PAGE_SIZE full records (prompt, response, every judge's verdict),
read only when a sample in them is opened. Each file calls a registration function of report.js.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.report.collect import RunData
from records import GenerationRecord, GradeRecord

PAGE_SIZE = 200
# one letter per judge verdict in the index: R right, W wrong, N no answer, T truncated, A ambiguous,
# G generation error, J judge error, - missing
STATUS_CODE = {"no_answer": "N", "truncated": "T", "ambiguous": "A", "generation_error": "G", "judge_error": "J"}
FINISH_CODE = {"stop": "s", "length": "l", "error": "e"}
IMAGE_PLACEHOLDER = "[image: {kb} KB data URI, not shown]"


def js_json(value: Any) -> str:
    """JSON that is also safe inside any HTML or JS context (no raw <, >, & or line separators)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def verdict_code(g: GradeRecord | None) -> str:
    if g is None:
        return "-"
    if g.status == "graded":
        return "R" if g.correct else "W"
    return STATUS_CODE.get(g.status, "?")


def _text_of(content: Any) -> str:
    """A message's text; image parts become a placeholder so pages stay small."""
    if isinstance(content, str):
        return content
    parts = []
    for part in content or []:
        if part.get("type") == "text":
            parts.append(part.get("text", ""))
        elif part.get("type") == "image_url":
            url = (part.get("image_url") or {}).get("url", "")
            parts.append(IMAGE_PLACEHOLDER.format(kb=len(url) // 1024))
    return "\n".join(parts)


def _record(key: tuple[str, int], gen: GenerationRecord | None, grades: dict[str, GradeRecord | None]) -> dict[str, Any]:
    target = gen.target if gen else next((g.target for g in grades.values() if g and g.target is not None), None)
    return {
        "item": key[0], "sample": key[1], "target": target,
        "messages": [{"role": m.get("role"), "content": _text_of(m.get("content"))} for m in gen.messages] if gen else [],
        "response": gen.response if gen else None, "finish": gen.finish_reason if gen else None,
        "reasoning": gen.reasoning if gen else None,  # shown folded above the response
        "error": gen.error if gen else None, "usage": gen.usage if gen else None,
        "latency_s": gen.latency_s if gen else None, "category": gen.category if gen else None,
        "grades": {j: None if g is None else {"status": g.status, "correct": g.correct, "extracted": g.extracted,
                                              "detail": g.detail} for j, g in grades.items()},
    }


def write_samples(run: RunData, data_dir: Path) -> dict[str, Any]:
    """Write the index and the pages of one run; returns what the page needs to find them."""
    judges = list(run.grades)
    gens = {r.key: r for r in run.generations()}
    index_rows, page, page_no = [], [], 0

    def flush() -> None:
        nonlocal page, page_no
        (data_dir / f"{run.rid}-p{page_no:04d}.js").write_text(
            f"HR.page({js_json(run.rid)},{page_no},{js_json(page)});\n", encoding="utf-8")
        page, page_no = [], page_no + 1

    for key in run.spec.expected_keys():
        gen = gens.get(key)
        grades = {j: run.grades[j].get(key) for j in judges}
        index_rows.append([key[0], key[1], "".join(verdict_code(g) for g in grades.values()),
                           FINISH_CODE.get(gen.finish_reason, "?") if gen else "-"])
        page.append(_record(key, gen, grades))
        if len(page) == PAGE_SIZE:
            flush()
    if page:
        flush()
    meta = {"rid": run.rid, "run": run.path, "judges": judges, "page_size": PAGE_SIZE}
    (data_dir / f"{run.rid}-index.js").write_text(
        f"HR.index({js_json(run.rid)},{js_json(meta)},{js_json(index_rows)});\n", encoding="utf-8")
    return {**meta, "samples": len(index_rows), "pages": page_no}
