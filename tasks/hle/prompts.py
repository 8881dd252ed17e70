"""HLE system prompts: the HLE release's own wording (default, so scores compare with published HLE
numbers) or the harness's (tasks/hle/system.jinja). Which one a run used is in run.json task_options.prompt."""
from __future__ import annotations

HLE_PROMPTS = ("official", "harness")
DEFAULT_PROMPT = "official"

# A fact carried over, not our prose: these strings must match the HLE release byte for byte for scores to be
# comparable. Source: github.com/centerforaisafety/hle, hle_eval/run_model_predictions.py, SYSTEM_EXACT_ANSWER
# and SYSTEM_MC, chosen by the question's answer_type. (Later revisions of that file send the multipleChoice
# wording to every question; see docs/hle.md.)
OFFICIAL_EXACT_ANSWER = ("Your response should be in the following format:\n"
                         "Explanation: {your explanation for your final answer}\n"
                         "Exact Answer: {your succinct, final answer}\n"
                         "Confidence: {your confidence score between 0% and 100% for your answer}")
OFFICIAL_MULTIPLE_CHOICE = ("Your response should be in the following format:\n"
                            "Explanation: {your explanation for your answer choice}\n"
                            "Answer: {your chosen answer}\n"
                            "Confidence: {your confidence score between 0% and 100% for your answer}")


def official_system_prompt(answer_type: str) -> str:
    return OFFICIAL_MULTIPLE_CHOICE if answer_type == "multipleChoice" else OFFICIAL_EXACT_ANSWER
