"""LLM judge settings: every setting that changes a verdict is in the judge id and the cache key; request
parameters follow the model (OpenAI reasoning models); references that read like 'no answer' are answers."""
import json

import pytest

from harness.cli import main
from judges import create_judge
from judges.llm import LLMJudge
from tests.judges_llm.helpers import JUDGE_MODEL, grade_all, honest_judge, record, verdict_json
from tests.judges_llm.runs import make_run
from tests.support.reasoning_model import reasoning_model
from tests.support.scripted_server import Reply, ScriptedServer


def judge_for(server, tmp_path, model=JUDGE_MODEL, **kw):
    return LLMJudge(model, [server.base_url], cache_dir=tmp_path / "cache", max_retries=1, retry_base_delay_s=0.01,
                    timeout_s=5.0, **kw)


BASE = dict(judge_model="judge-model", judge_base_url="http://127.0.0.1:1/v1")


@pytest.mark.parametrize("change", [
    {"judge_model": "judge/model"}, {"judge_temperature": 0.7}, {"judge_max_tokens": 4096},
    {"judge_structured_output": False}, {"judge_reasoning_effort": "high"}, {"judge_pass_images": True},
    {"judge_send_temperature": "no"},
])
def test_every_verdict_setting_changes_the_judge_id(tmp_path, change):
    same = create_judge("llm", **BASE, cache_dir=tmp_path)
    again = create_judge("llm", **BASE, cache_dir=tmp_path)
    other = create_judge("llm", **{**BASE, **change}, cache_dir=tmp_path)
    assert same.judge_id == again.judge_id != other.judge_id


def test_settings_that_change_nothing_keep_the_judge_id(tmp_path):
    a = create_judge("llm", **BASE, cache_dir=tmp_path)
    b = create_judge("llm", **BASE, cache_dir=tmp_path, judge_concurrency=3, judge_token_param="max_completion_tokens",
                     judge_max_retries=9)
    assert a.judge_id == b.judge_id  # how the limit is spelled or how often to retry cannot change a verdict


def test_a_cached_verdict_is_never_reused_under_other_settings(tmp_path):
    with ScriptedServer(Reply(text=verdict_json()), model=JUDGE_MODEL) as s:
        grade_all(judge_for(s, tmp_path), [record("Answer: 42")])
        grade_all(judge_for(s, tmp_path), [record("Answer: 42")])
        assert len(s.requests) == 1  # same settings: the cache answers
        grade_all(judge_for(s, tmp_path, temperature=0.5), [record("Answer: 42")])
        grade_all(judge_for(s, tmp_path, max_tokens=512), [record("Answer: 42")])
        grade_all(judge_for(s, tmp_path, reasoning_effort="low"), [record("Answer: 42")])
        assert len(s.requests) == 4
        assert s.requests[-1]["reasoning_effort"] == "low" and s.requests[-2]["max_tokens"] == 512


def test_reasoning_model_judge_gets_max_completion_tokens_and_no_temperature(tmp_path):
    with ScriptedServer(reasoning_model(lambda body: verdict_json()), model="o3-mini") as s:
        judge = judge_for(s, tmp_path, model="o3-mini", max_tokens=300)
        [v] = grade_all(judge, [record("Answer: 42")])
        [body] = s.requests
    assert v.status == "graded" and v.correct is True
    assert body["max_completion_tokens"] == 300 and "max_tokens" not in body and "temperature" not in body
    assert judge.config()["temperature"] is None


def test_a_400_naming_a_parameter_is_retried_once_and_remembered(tmp_path):
    # a reasoning model behind a name that gives no hint: learn from its 400s, not one judge_error per sample
    with ScriptedServer(reasoning_model(honest_judge), model="house-judge") as s:
        judge = judge_for(s, tmp_path, model="house-judge", concurrency=1)
        verdicts = grade_all(judge, [record("Answer: 42", item=f"q{i}") for i in range(5)])
        bodies = s.requests
    assert [v.status for v in verdicts] == ["graded"] * 5 and all(v.detail["attempts"] == 1 for v in verdicts)
    assert len(bodies) == 5 + 2  # max_tokens rejected once, temperature rejected once, then one request each
    assert judge.config()["request_params"]["adjusted_after_400"] == ["max_tokens -> max_completion_tokens",
                                                                      "temperature dropped"]


def test_a_parameter_rejected_after_the_retry_stops_grading_with_the_flag(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    run = make_run(tmp_path / "run", "hle", lambda request: "Answer: 4")

    def rejects_any_token_limit(body):
        sent = "max_tokens" if "max_tokens" in body else "max_completion_tokens"
        other = "max_completion_tokens" if sent == "max_tokens" else "max_tokens"
        return Reply(status=400, error_message=f"Unsupported parameter: '{sent}' is not supported with this "
                                               f"model. Use '{other}' instead.")

    with ScriptedServer(rejects_any_token_limit, model=JUDGE_MODEL) as s:
        code = main(["grade", str(run), "--judge", "llm", "--judge-model", JUDGE_MODEL, "--judge-base-url",
                     s.base_url, "--judge-concurrency", "1", "--no-progress"])
        sent = len(s.requests)
        err = capsys.readouterr().err
        assert code == 2 and "Traceback" not in err and "--judge-token-param" in err
        assert "'max_completion_tokens' is not supported" in err
        assert sent <= 3  # the original name, the renamed one, and not a request per sample
        # many requests in flight: still one message, and the stage stops without stray task errors
        code = main(["grade", str(run), "--judge", "llm", "--judge-model", JUDGE_MODEL, "--judge-base-url",
                     s.base_url, "--judge-concurrency", "16", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("error:") == 1 and "Traceback" not in err and "never retrieved" not in err
    assert not list((run / "grades").glob("*/samples.jsonl"))


@pytest.mark.parametrize("reference", ["None", "N/A", "0", "none"])
def test_references_that_read_like_no_answer_are_graded_as_answers(tmp_path, reference):
    with ScriptedServer(honest_judge, model=JUDGE_MODEL) as s:
        right, wrong = grade_all(judge_for(s, tmp_path), [
            record(f"Explanation: x\nAnswer: {reference}", item="a", target=reference),
            record("Explanation: x\nAnswer: 7", item="b", target=reference),
        ])
    assert (right.status, right.correct, right.extracted) == ("graded", True, reference)
    assert (wrong.status, wrong.correct) == ("graded", False)


def test_no_answer_stays_no_answer_when_the_reference_is_something_else(tmp_path):
    with ScriptedServer(Reply(text=verdict_json("None", "no")), model=JUDGE_MODEL) as s:
        [v] = grade_all(judge_for(s, tmp_path), [record("I give up.", target="42")])
    assert (v.status, v.correct, v.extracted) == ("no_answer", False, None)


def test_grade_cli_passes_the_request_flags(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    run = make_run(tmp_path / "run", "hle", lambda request: "Answer: 4")
    with ScriptedServer(Reply(text=verdict_json()), model=JUDGE_MODEL) as s:
        assert main(["grade", str(run), "--judge", "llm", "--judge-model", JUDGE_MODEL, "--judge-base-url",
                     s.base_url, "--judge-token-param", "max_completion_tokens", "--judge-send-temperature", "no",
                     "--judge-reasoning-effort", "medium", "--no-progress"]) == 0
        body = s.requests[-1]
    assert body["max_completion_tokens"] == 2048 and body["reasoning_effort"] == "medium"
    assert "temperature" not in body and "max_tokens" not in body
    [summary] = [json.loads(p.read_text()) for p in (run / "grades").glob("llm-*/summary.json")]
    config = summary["judge"]["config"]
    assert config["reasoning_effort"] == "medium" and config["temperature"] is None
    assert config["request_params"]["token_param"] == "max_completion_tokens"


def test_a_server_rejecting_response_format_by_name_still_gets_plain_text(tmp_path):
    def no_schema(body):
        if "response_format" in body:
            return Reply(status=400, error_message="Unsupported parameter: 'response_format' is not supported "
                                                   "with this model.")
        return Reply(text="extracted_final_answer: 42\ncorrect: yes")

    with ScriptedServer(no_schema, model=JUDGE_MODEL) as s:
        [v] = grade_all(judge_for(s, tmp_path), [record("Answer: 42")])
    assert (v.status, v.correct, v.detail["output_mode"]) == ("graded", True, "text")
