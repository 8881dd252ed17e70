"""The LLM judge on the Engine interface: any Engine answers it, the OpenAI backend brings its fault handling,
and `--judge-engine native` runs the built-in engine in-process with the real model."""
import json
from pathlib import Path

import pytest

from engine.base import ChatRequest, Completion, Engine
from harness.cli import main
from judges import JudgeError, create_judge
from judges.llm import LLMJudge
from judges.llm.prompt import RESPONSE_FORMAT
from tests.judges_llm.helpers import JUDGE_MODEL, grade_all, record, verdict_json
from tests.judges_llm.runs import make_run
from tests.support.scripted_server import Reply, ScriptedServer, unused_url

REPO = Path(__file__).resolve().parents[2]


class InProcessJudge(Engine):
    """An Engine in this process that keeps every request; `plain_only` answers response_format with a 400."""

    name = "in-process"

    def __init__(self, plain_only: bool = False) -> None:
        self.plain_only = plain_only
        self.requests: list[ChatRequest] = []
        self.closed = False

    async def chat(self, request: ChatRequest) -> Completion:
        self.requests.append(request)
        if self.plain_only and request.response_format is not None:
            failed = Completion.failed("client_error: HTTP 400: response_format is not supported")
            failed.extra.update(error_kind="client_error", status=400)
            return failed
        correct = "yes" if "Answer: 42" in request.messages[-1]["content"] else "no"
        return Completion(text=verdict_json("42" if correct == "yes" else "41", correct), finish_reason="stop")

    async def aclose(self) -> None:
        self.closed = True


def test_any_engine_answers_the_judge(tmp_path):
    engine = InProcessJudge()
    judge = LLMJudge(JUDGE_MODEL, engine=engine, cache_dir=tmp_path, max_tokens=300, temperature=0.2)
    right, wrong = grade_all(judge, [record("Answer: 42", item="a"), record("Answer: 41", item="b")])
    assert (right.status, right.correct, wrong.correct) == ("graded", True, False)
    assert [r.response_format for r in engine.requests] == [RESPONSE_FORMAT] * 2
    assert {(r.params.max_tokens, r.params.temperature) for r in engine.requests} == {(300, 0.2)}
    assert engine.closed and judge.config()["engine"] == "in-process"
    # the engine is not a verdict setting: the same judge over HTTP shares the id and the cached verdicts
    served = LLMJudge(JUDGE_MODEL, ["http://127.0.0.1:1/v1"], cache_dir=tmp_path, max_tokens=300, temperature=0.2)
    assert judge.judge_id == served.judge_id


def test_an_engine_without_structured_output_gets_plain_text(tmp_path):
    engine = InProcessJudge(plain_only=True)
    judge = LLMJudge(JUDGE_MODEL, engine=engine, cache_dir=tmp_path, concurrency=1)
    first, second = grade_all(judge, [record("Answer: 42", item="a"), record("Answer: 42", item="b")])
    assert (first.status, first.detail["output_mode"], first.detail["attempts"]) == ("graded", "text", 1)
    assert [r.response_format is not None for r in engine.requests] == [True, False, False]
    assert second.status == "graded" and judge.config()["structured_output"] is False


def test_a_dead_base_url_fails_over_without_a_retry(tmp_path):
    # the OpenAI backend's failover: a refused connection moves the request to the live server at once
    with ScriptedServer(Reply(text=verdict_json()), model=JUDGE_MODEL) as s:
        judge = LLMJudge(JUDGE_MODEL, [unused_url(), s.base_url], cache_dir=tmp_path, max_retries=0, timeout_s=5.0)
        verdicts = grade_all(judge, [record("Answer: 42", item=f"q{i}") for i in range(4)])
    assert [v.status for v in verdicts] == ["graded"] * 4


def test_native_judge_refuses_a_base_url_before_loading_anything(tmp_path):
    with pytest.raises(JudgeError, match="drop --judge-base-url"):
        create_judge("llm", judge_engine="native", judge_base_url="http://127.0.0.1:1/v1", cache_dir=tmp_path)


@pytest.mark.slow
def test_native_judge_grades_in_process_with_the_real_model(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    data = tmp_path / "two.jsonl"  # two questions of our own HLE-format demo keep this test short
    data.write_text("".join((REPO / "tasks/hle/demo.jsonl").read_text().splitlines(keepends=True)[:2]))
    run = make_run(tmp_path / "run", "hle", lambda request: "Explanation: counted.\nAnswer: 21\nConfidence: 85%",
                   data=data)
    served = create_judge("llm", judge_model="smollm2-135m", judge_base_url="http://127.0.0.1:1/v1",
                          judge_max_tokens=64)
    code = main(["grade", str(run), "--judge", "llm", "--judge-engine", "native", "--judge-max-tokens", "64",
                 "--no-progress"])
    assert code in (0, 3)  # 3: a 135M judge may ramble to its token limit, which is a judge_error
    [folder] = (run / "grades").glob("llm-*")
    assert folder.name == served.judge_id  # the in-process judge has the id of a served copy of the model
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["judge"]["config"]["engine"] == "native"
    assert summary["judge"]["config"]["structured_output"] is True  # the grammar constraint took the schema
    grades = [json.loads(line) for line in (folder / "samples.jsonl").read_text().splitlines()]
    assert len(grades) == 2
    for grade in grades:
        if grade["status"] == "judge_error":
            assert "cut at max_tokens=64" in grade["detail"]["error"], grade
        else:
            assert grade["status"] in ("graded", "no_answer") and grade["detail"]["output_mode"] == "json_schema"
