"""Real run and sweep folders for the report tests: the real generate and grade stages on scripted answers."""
from __future__ import annotations

import json
import re
from pathlib import Path

from harness.cli import main
from sweep.records import ResultsFile, SweepRecord
from tasks import get_task
from tests.judges_llm.helpers import JUDGE_MODEL, fenced_response, honest_judge, verdict_json
from tests.judges_llm.runs import make_run
from tests.support.scripted_server import Reply, ScriptedServer

AIME = get_task("aime")
ANSWERS = {it.id: it.fields["answer"] for it in AIME.load(AIME.demo_data_path)}
IDS = sorted(ANSWERS)
INJECTED = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> $\\frac{a}{b}$ **bold**'
INJECTED_ITEM = IDS[1]
UNBOXED_ITEM = IDS[0]  # hedged: the rules judge sees no committed answer here; the LLM judge reads the number
LONG_ITEM = IDS[4]


def aime_answer_a(request) -> str:
    item, sample = request.request_id.split("#")
    answer = int(ANSWERS[item])
    if item == UNBOXED_ITEM:
        return f"My working gives {answer}, if I have not slipped."
    if item == INJECTED_ITEM:
        return f"{INJECTED}\nThe answer is \\boxed{{{answer}}}."
    if item == LONG_ITEM:
        return "Let me think. " * 300 + f"The answer is \\boxed{{{answer}}}."
    return f"The answer is \\boxed{{{answer + (sample == '1')}}}."


def aime_answer_b(request) -> str:
    item, _ = request.request_id.split("#")
    return f"The answer is \\boxed{{{int(ANSWERS[item]) + (item in IDS[5:])}}}."


def last_number_judge(body) -> Reply:
    """A lenient judge: the response's last number against the reference; its reasoning carries markup."""
    user = body["messages"][-1]["content"]
    reference = re.search(r"<reference-[0-9a-z]+>\n(.*?)\n</reference-", user, re.S).group(1)
    numbers = re.findall(r"\d+", fenced_response(body)[1])
    extracted = numbers[-1] if numbers else "None"
    ok = bool(numbers) and int(extracted) == int(reference)
    return Reply(text=verdict_json(extracted, "yes" if ok else "no",
                                   reasoning="<b onmouseover=alert(1)>last number</b> compared"))


def llm_grade(run: Path, server: ScriptedServer) -> None:
    assert main(["grade", str(run), "--judge", "llm", "--judge-model", JUDGE_MODEL,
                 "--judge-base-url", server.base_url, "--no-progress"]) == 0


HLE = get_task("hle")
HLE_ITEMS = sorted(HLE.load(HLE.demo_data_path), key=lambda it: it.id)


def hle_answer(request) -> str:
    """Right with confidence 90 on every other question, wrong with confidence 30 on the rest."""
    n = next(i for i, it in enumerate(HLE_ITEMS) if it.id == request.request_id.split("#")[0])
    answer = HLE_ITEMS[n].fields["answer"] if n % 2 == 0 else "nothing"
    return f"Explanation: worked.\nAnswer: {answer}\nConfidence: {90 if n % 2 == 0 else 30}%"


def write_sweep(root: Path, tag: str, scale: float) -> Path:
    """Sweep points through the sweep's own results writer (no engine run: the numbers are illustrative)."""
    f = ResultsFile(root / tag / "results.jsonl")
    for r in (1, 2, 4, 8):
        f.append(SweepRecord(tag=tag, kind="decode", point={"requests": r}, status="ok",
                             metrics={"intvty": scale * 60 / (1 + 0.2 * r),
                                      "output_tput_per_gpu": scale * 60 * r / (1 + 0.2 * r)},
                             provenance={"model": "smollm2-135m", "device_name": "cpu"}))
    f.append(SweepRecord(tag=tag, kind="decode", point={"requests": 16}, status="oom", reason="KV cache full"))
    return f.path.parent


def build_fixture(root: Path) -> dict[str, Path]:
    """AIME run A (rules + LLM judge), AIME run B (rules), an HLE run (LLM judge), two decode sweeps."""
    a = make_run(root / "runs" / "aime-a", "aime", aime_answer_a, samples=2)
    b = make_run(root / "runs" / "aime-b", "aime", aime_answer_b, samples=2)
    hle = make_run(root / "runs" / "hle", "hle", hle_answer)
    for run in (a, b):
        assert main(["grade", str(run), "--judge", "rules", "--no-progress"]) == 0
    with ScriptedServer(last_number_judge, model=JUDGE_MODEL) as server:
        llm_grade(a, server)
    with ScriptedServer(honest_judge, model=JUDGE_MODEL) as server:
        llm_grade(hle, server)
    s1, s2 = write_sweep(root / "sweeps", "ce-2k", 1.0), write_sweep(root / "sweeps", "ce-2k-int4", 1.4)
    return {"a": a, "b": b, "hle": hle, "sweep": s1, "sweep2": s2}


def summaries(run: Path) -> dict[str, dict]:
    return {p.name: json.loads((p / "summary.json").read_text()) for p in sorted((run / "grades").iterdir())}
