"""RulesJudge: deterministic, offline grading of AIME (integers) and GPQA (choice letters)."""
from __future__ import annotations

from typing import Any

from records import GenerationRecord
from judges.base import Judge, JudgeError, Verdict
from judges.rules import aime, gpqa
from judges.rules.gpqa_options import options_for_record


class RulesJudge(Judge):
    """Grades a record from its response text alone; judge_id changes whenever a parser's verdicts can."""

    # Bump with aime.PARSER_VERSION / gpqa.PARSER_VERSION whenever a change can flip a golden verdict:
    # grades/<judge_id>/ of older runs then stays as it was instead of mixing two parsers.
    judge_id = "rules-v11"
    tasks = ("aime", "gpqa")
    # The grade stage reads in worker processes and stops one that passes this on a sample: a second
    # more than the reader's own limit, so the reader's clearer "timed out after 5 s ..." comes first.
    worker_limit_s = max(aime.TIME_LIMIT_S, gpqa.TIME_LIMIT_S) + 1.0

    @classmethod
    def from_options(cls, **options: Any) -> "RulesJudge":
        # The CLI passes every judge option (judge_model, judge_base_url, ...); rules need none of them.
        return cls()

    def config(self) -> dict[str, Any]:
        return {
            "kind": "rules",
            "aime_parser": aime.PARSER_VERSION,
            "gpqa_parser": gpqa.PARSER_VERSION,
            "graded_text": "after the last </think> (raw harmony output: the final channel)",
        }

    def grade(self, record: GenerationRecord) -> Verdict:
        if record.task == "aime":
            return self._grade_aime(record)
        if record.task == "gpqa":
            return self._grade_gpqa(record)
        raise JudgeError(f"judge {self.judge_id!r} cannot grade task {record.task!r}; it grades: aime, gpqa")

    def _grade_aime(self, record: GenerationRecord) -> Verdict:
        gold = aime.parse_target(record.target)
        if gold is None:
            return Verdict(None, None, "judge_error", {"error": f"AIME target {record.target!r} is not an integer"})
        try:
            # within aime.TIME_LIMIT_S, read per sample; cut off inside thinking, only a settled answer counts
            reading = aime.read_aime(record.response or "",
                                     cut_off=record.finish_reason == "length" and record.reasoning is None)
        except aime.ReadFailed as exc:
            return Verdict(None, None, "judge_error", {"error": str(exc)})
        if reading.text is None:
            return Verdict(False, None, "no_answer", {"note": reading.note} if reading.note else {})
        detail: dict[str, Any] = {"via": reading.via}
        if reading.value is None:
            detail["reason"] = reading.reason or "not an integer"
        elif not 0 <= reading.value <= 999:
            detail["reason"] = "outside 0-999"
        correct = reading.value is not None and 0 <= reading.value <= 999 and reading.value == gold
        return Verdict(correct, aime.normalised(reading), "graded", detail)

    def _grade_gpqa(self, record: GenerationRecord) -> Verdict:
        letters = tuple(str(c).upper() for c in (record.meta or {}).get("letters") or gpqa.DEFAULT_LETTERS)
        gold = str(record.target).strip().upper()
        if gold not in letters:
            return Verdict(None, None, "judge_error",
                           {"error": f"GPQA target {record.target!r} is not one of {', '.join(letters)}"})
        # The option texts let a response that names its choice only in words be read, and expose a
        # letter quoted with another option's text; old records without meta["choices"] use the prompt.
        options = options_for_record(record.meta, record.messages, letters)
        try:
            # A response that hit the token limit with no thinking split off may end inside thinking the
            # chat template opened: only a settled letter counts then (judges/rules/thinking.py).
            reading = gpqa.read_letter(record.response or "", letters, options,  # within gpqa.TIME_LIMIT_S
                                       cut_off=record.finish_reason == "length" and record.reasoning is None)
        except gpqa.ReadFailed as exc:
            return Verdict(None, None, "judge_error", {"error": str(exc)})
        if reading.ambiguous:
            stated, quoted = reading.ambiguous
            return Verdict(False, None, "ambiguous", {"reason": reading.note, "letter": stated, "quoted_option": quoted})
        if reading.letter is None:
            return Verdict(False, None, "no_answer", {"note": reading.note} if reading.note else {})
        return Verdict(reading.letter == gold, reading.letter, "graded", {"via": reading.via})
