"""Reasoning kept apart in generation records (generate --engine openai against a real local server), and
graded from the response alone: a sample cut off inside its thinking counts as truncated."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from engine import ChatRequest, EngineOptions, SamplingParams, create_engine
from harness.cli import main
from tasks import get_task
from tests.support.scripted_server import Reply, ScriptedServer

AIME = get_task("aime")
ITEMS = AIME.load(AIME.demo_data_path)
ANSWERS = {it.fields["problem"]: int(it.fields["answer"]) for it in ITEMS}


def _problem(body: dict) -> str:
    return body["messages"][-1]["content"].split("\n\n", 1)[1]


def thinking_oracle(mode: str):
    """Answers each AIME demo problem correctly after a thinking block that boxes a wrong value first.
    mode: "tags" (the block inside content), "field" (sent as reasoning_content), "cut" (the first item is
    cut off by the token limit inside its thinking)."""
    first = ITEMS[0].fields["problem"]

    def handler(body: dict) -> Reply:
        answer = ANSWERS[_problem(body)]
        thinking = f"Try \\boxed{{{answer + 1}}}? No, recount."
        if mode == "cut" and _problem(body) == first:
            return Reply(text=f"<think>\n{thinking} Still checking \\boxed{{{answer}}}", finish_reason="length")
        if mode == "field":
            return Reply(text=f"The answer is \\boxed{{{answer}}}.", reasoning=thinking)
        return Reply(text=f"<think>\n{thinking}\n</think>\n\n"
                          f"The answer is \\boxed{{{answer}}}.")
    return handler


def _generate(server: ScriptedServer, out: Path, *extra: str) -> int:
    return main(["generate", "--task", "aime", "--engine", "openai", "--base-url", server.base_url,
                 "--model", "test-model", "--out", str(out), "--no-progress", "--samples", "1",
                 "--max-retries", "0", *extra])


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "generations.jsonl").read_text().splitlines()]


def _grade(out: Path) -> tuple[dict, dict[str, dict]]:
    assert main(["grade", str(out), "--judge", "rules", "--no-progress"]) == 0
    folder = out / "grades" / "rules-v11"
    grades = {g["item_id"]: g for g in map(json.loads, (folder / "samples.jsonl").read_text().splitlines())}
    return json.loads((folder / "summary.json").read_text()), grades


def test_think_tags_in_content_are_split_and_only_the_answer_is_graded(tmp_path):
    out = tmp_path / "run"
    with ScriptedServer(thinking_oracle("tags")) as server:
        assert _generate(server, out, "--chat-template-kwargs", '{"enable_thinking": true}') == 0
        sent = server.requests
    assert all(body["chat_template_kwargs"] == {"enable_thinking": True} for body in sent)
    records = _records(out)
    for r in records:
        assert r["reasoning"].startswith("Try \\boxed{") and "<think>" not in r["reasoning"]
        assert r["response"].startswith("The answer is \\boxed{") and "Try" not in r["response"]
    engine = json.loads((out / "run.json").read_text())["engine"]
    assert engine["reasoning_parser"] == "auto" and engine["chat_template_kwargs"] == {"enable_thinking": True}
    summary, _ = _grade(out)
    assert summary["pass@1"] == 1.0 and summary["counts"]["graded"] == len(ITEMS)


def test_reasoning_content_field_from_the_server_is_recorded(tmp_path):
    out = tmp_path / "run"
    with ScriptedServer(thinking_oracle("field")) as server:
        assert _generate(server, out) == 0
    for r in _records(out):
        assert r["reasoning"].startswith("Try \\boxed{") and r["response"].startswith("The answer is")
    assert _grade(out)[0]["pass@1"] == 1.0


def test_cut_off_inside_thinking_has_no_answer_and_counts_as_truncated(tmp_path):
    out = tmp_path / "run"
    with ScriptedServer(thinking_oracle("cut")) as server:
        assert _generate(server, out) == 0
    cut = next(r for r in _records(out) if r["item_id"] == ITEMS[0].id)
    assert cut["finish_reason"] == "length" and cut["response"] == ""
    assert cut["reasoning"].endswith(f"Still checking \\boxed{{{ANSWERS[ITEMS[0].fields['problem']]}}}")
    summary, grades = _grade(out)
    assert grades[ITEMS[0].id]["status"] == "truncated" and grades[ITEMS[0].id]["correct"] is False
    assert summary["counts"]["truncated"] == 1 and summary["pass@1"] == pytest.approx((len(ITEMS) - 1) / len(ITEMS))


@pytest.mark.parametrize("mode", ["tags", "cut"])
def test_records_written_before_reasoning_existed_grade_the_same(tmp_path, mode):
    parsed, raw = tmp_path / "parsed", tmp_path / "raw"
    with ScriptedServer(thinking_oracle(mode)) as server:
        assert _generate(server, parsed) == 0
        assert _generate(server, raw, "--reasoning-parser", "none") == 0
    old_style = []  # what generate wrote before this change: the whole output in response, no reasoning key
    for r in _records(raw):
        assert r.pop("reasoning") is None and "<think>" in r["response"]
        old_style.append(json.dumps(r))
    (raw / "generations.jsonl").write_text("\n".join(old_style) + "\n")
    summary_parsed, grades_parsed = _grade(parsed)
    summary_raw, grades_raw = _grade(raw)
    assert summary_raw["pass@1"] == summary_parsed["pass@1"] and summary_raw["counts"] == summary_parsed["counts"]
    for item_id, g in grades_parsed.items():
        assert (grades_raw[item_id]["status"], grades_raw[item_id]["extracted"]) == (g["status"], g["extracted"])


def test_openai_stream_reads_reasoning_content():
    chunks = ["The ", "answer ", "is 4."]
    with ScriptedServer(Reply(chunks=chunks, reasoning="two plus two")) as server:
        engine = create_engine("openai", EngineOptions(model="test-model", base_urls=[server.base_url], max_retries=0))

        async def run():
            try:
                return [d async for d in engine.stream(ChatRequest("r", [{"role": "user", "content": "2+2?"}],
                                                                   SamplingParams(max_tokens=8)))]
            finally:
                await engine.aclose()
        deltas = asyncio.run(run())
    final = deltas[-1].final
    assert final.text == "The answer is 4." and final.extra["reasoning"] == "two plus two"
