"""The verdict cache: a rerun is free, only judge errors are asked again, and nothing is reused across judges."""

from judges.llm import LLMJudge
from tests.judges_llm.helpers import JUDGE_MODEL, fenced_response, grade_all, record, verdict_json
from tests.support.scripted_server import Reply, ScriptedServer


def judge_at(server, cache_dir, model=JUDGE_MODEL):
    return LLMJudge(model, [server.base_url], cache_dir=cache_dir, max_retries=1, retry_base_delay_s=0.01)


RECORDS = [record(f"Answer: {40 + i}", item=f"q{i}") for i in range(5)]


def test_second_run_sends_no_requests(tmp_path):
    with ScriptedServer(Reply(text=verdict_json("42", "yes", 70)), model=JUDGE_MODEL) as s:
        first = grade_all(judge_at(s, tmp_path), RECORDS)
        assert len(s.requests) == 5
        s.reset()
        again = judge_at(s, tmp_path)
        second = grade_all(again, RECORDS)
        assert s.requests == [] and again.requests_sent == 0
    assert [(v.status, v.correct, v.extracted, v.detail["confidence"]) for v in first] == \
           [(v.status, v.correct, v.extracted, v.detail["confidence"]) for v in second]
    assert all(v.detail["cached"] for v in second) and not any(v.detail["cached"] for v in first)
    cache_file = tmp_path / again.judge_id / "cache.jsonl"
    assert len(cache_file.read_text().splitlines()) == 5


def test_only_judge_errors_are_asked_again(tmp_path):
    def flaky(body):
        _, response = fenced_response(body)
        return Reply(status=500) if response == "Answer: 42" else Reply(text=verdict_json())

    with ScriptedServer(flaky, model=JUDGE_MODEL) as s:
        first = grade_all(judge_at(s, tmp_path), RECORDS)
        assert [v.status for v in first].count("judge_error") == 1
        s.set_handler(Reply(text=verdict_json()))
        s.reset()
        second = grade_all(judge_at(s, tmp_path), RECORDS)
        assert len(s.requests) == 1 and fenced_response(s.requests[0])[1] == "Answer: 42"
    assert all(v.status == "graded" for v in second)


def test_other_model_edited_reference_or_response_are_not_reused(tmp_path):
    with ScriptedServer(Reply(text=verdict_json()), model=[JUDGE_MODEL, "other-judge"]) as s:
        grade_all(judge_at(s, tmp_path), RECORDS[:1])
        s.reset()
        grade_all(judge_at(s, tmp_path, "other-judge"), RECORDS[:1])
        assert len(s.requests) == 1
        s.reset()
        edited = [record("Answer: 40", item="q0", target="40"), record("Answer: 40 ", item="q0"),
                  record("Answer: 40", item="q0", sample=1)]
        grade_all(judge_at(s, tmp_path), edited)
        assert len(s.requests) == 3


def test_torn_cache_line_is_skipped_and_not_glued_to(tmp_path):
    with ScriptedServer(Reply(text=verdict_json()), model=JUDGE_MODEL) as s:
        judge = judge_at(s, tmp_path)
        grade_all(judge, RECORDS[:2])
        cache_file = judge.cache.path
        lines = cache_file.read_text().splitlines()
        cache_file.write_text(lines[0] + "\n" + lines[1][: len(lines[1]) // 2])  # killed mid-write
        s.reset()
        grade_all(judge_at(s, tmp_path), RECORDS[:3])
        assert len(s.requests) == 2  # the torn verdict and the new one
        s.reset()
        grade_all(judge_at(s, tmp_path), RECORDS[:3])
        assert s.requests == []


def test_cache_can_live_in_the_run_directory(tmp_path):
    with ScriptedServer(Reply(text=verdict_json()), model=JUDGE_MODEL) as s:
        judge = judge_at(s, tmp_path / "elsewhere")
        judge.bind_grades_dir(tmp_path / "run" / "grades" / judge.judge_id)
        grade_all(judge, RECORDS[:2])
        cache_file = tmp_path / "run" / "grades" / judge.judge_id / "cache.jsonl"
        assert len(cache_file.read_text().splitlines()) == 2 and not (tmp_path / "elsewhere").exists()
        s.reset()
        again = judge_at(s, tmp_path / "elsewhere")
        again.bind_grades_dir(tmp_path / "run" / "grades" / again.judge_id)
        grade_all(again, RECORDS[:2])
        assert s.requests == []
