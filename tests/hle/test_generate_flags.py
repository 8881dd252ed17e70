"""`generate --task hle` through the CLI: the prompt choice lands in run.json, parameters follow the model."""
from __future__ import annotations

import json

from harness.cli import main
from tests.support import ScriptedServer
from tests.support.reasoning_model import reasoning_model

ANSWER = "Explanation: because.\nExact Answer: 42\nConfidence: 80%"


def generate(server, out, *extra):
    return main(["generate", "--task", "hle", "--engine", "openai", "--base-url", server.base_url,
                 "--model", server.models[0], "--limit", "2", "--max-tokens", "64", "--out", str(out),
                 "--no-progress", *extra])


def test_hle_prompt_choice_is_recorded_and_used(tmp_path):
    with ScriptedServer(ANSWER) as server:
        assert generate(server, tmp_path / "official") == 0
        assert generate(server, tmp_path / "ours", "--hle-prompt", "harness") == 0
        systems = [b["messages"][0]["content"] for b in server.requests]
    official = json.loads((tmp_path / "official" / "run.json").read_text())
    ours = json.loads((tmp_path / "ours" / "run.json").read_text())
    assert official["task_options"]["prompt"] == "official" and ours["task_options"]["prompt"] == "harness"
    assert systems[0].startswith("Your response should be in the following format:")
    assert not systems[-1].startswith("Your response should be")


def test_hle_prompt_flag_is_refused_for_other_tasks(tmp_path, capsys):
    assert main(["generate", "--task", "aime", "--engine", "openai", "--base-url", "http://127.0.0.1:1/v1",
                 "--model", "m", "--hle-prompt", "official", "--out", str(tmp_path / "x")]) == 2
    assert "--hle-prompt applies to --task hle" in capsys.readouterr().err


def test_reasoning_model_gets_max_completion_tokens_and_no_temperature(tmp_path):
    with ScriptedServer(reasoning_model(lambda body: ANSWER), model="o4-mini") as server:
        assert generate(server, tmp_path / "o4") == 0
        bodies = server.requests
    assert len(bodies) == 2 and all(b["max_completion_tokens"] == 64 for b in bodies)
    assert not any({"max_tokens", "temperature", "top_p"} & b.keys() for b in bodies)
    spec = json.loads((tmp_path / "o4" / "run.json").read_text())
    assert spec["engine"]["request_params"]["token_param"] == "max_completion_tokens"


def test_flags_choose_the_parameters_for_any_model(tmp_path):
    with ScriptedServer(ANSWER, model="served-name") as server:
        assert generate(server, tmp_path / "r", "--token-param", "max_completion_tokens",
                        "--send-temperature", "no") == 0
        body = server.requests[-1]
    assert body["max_completion_tokens"] == 64 and "temperature" not in body and "max_tokens" not in body
