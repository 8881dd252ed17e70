"""Rules grading throughput: samples/s of RulesJudge over synthetic AIME/GPQA generation records.

The mix imitates reasoning-model output: long <think> blocks with intermediate boxed values, short
direct answers, truncated generations with an open think block, and the odd retraction.

    python benchmarks/bench_grading.py [--records 100000] [--repeats 3] [--stage 20000] [--real 20000] [--ab REF]

--stage N also times the whole grade stage (read generations.jsonl, grade, write samples.jsonl and
summary.json) on N records written to a temporary run directory; 0 skips it. --real N times the stage on
N records whose responses are the real model outputs of tests/judges/real/ (real lengths and phrasings),
and the reading rate in MB/s on the worst hostile shapes of tests/judges/test_gpqa_time_limit.py.
Each stage figure comes with its CPU time: the parent's, and its worker processes' (reaped children),
and an estimate for idle cores (parent CPU + worker CPU / workers); on a shared machine, wall time
measures the other jobs as much as this one.

--ab REF (with --real) times the real-response stage alternately with judges/rules/grade_workers.py as
it was at git commit REF and as it is now, --repeats rounds each, and prints the median ratio: on a
shared machine only such side-by-side ratios mean anything.
--hostile-only prints only those reading rates (every shape).
"""
from __future__ import annotations

import argparse
import asyncio
import gzip
import importlib.util
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from records import GenerationRecord  # noqa: E402
from judges.rules import RulesJudge  # noqa: E402

MATH = [
    "Let $n = {a}$. Then $n^2 = {sq}$, and modulo $1000$ this is ${m}$. So that part is \\boxed{{{m}}}.",
    "We have $\\frac{{{a}}}{{{b}}} + \\frac{{{b}}}{{{a}}} = \\frac{{{a}^2 + {b}^2}}{{{a}\\cdot {b}}}$, which simplifies nicely.",
    "Wait, let me recount the cases where $x \\equiv {b} \\pmod{{7}}$; there are {a} of them, not {b}.",
    "Hmm, consider the triangle with sides ${a}$, ${b}$ and ${c}$. By Heron's formula the area is $\\sqrt{{s(s-a)(s-b)(s-c)}}$.",
    "So far the running total is ${c}$. Let me double check with a smaller case: for $n = 3$ we get $9$, which matches.",
    "Alternatively, use generating functions: the coefficient of $x^{{{a}}}$ in $(1 + x + x^2)^{{{b}}}$ counts the same thing.",
]
SCIENCE = [
    "Option (A) would require a {a} kJ/mol barrier, which is too high at room temperature.",
    "For (B), the spin-orbit coupling of {b} cm^-1 splits the level, consistent with the spectrum.",
    "Hmm, but (C) predicts a quartet at {c}.1 ppm, and the data show a singlet. So not C.",
    "The answer might be D, since the ratio {a}:{b} matches the isotope pattern. Let me verify the masses.",
    "Both A and C involve a carbocation; only one of them is stabilised by resonance.",
    "Using $E = h\\nu$ with $\\nu = {a}\\times 10^{{14}}$ Hz gives about {b}.{c} eV.",
]


def _prose(rng: random.Random, templates: list[str], chars: int) -> str:
    out, size = [], 0
    while size < chars:
        a, b = rng.randint(2, 99), rng.randint(2, 99)
        line = rng.choice(templates).format(a=a, b=b, c=a + b, sq=a * a, m=(a * a) % 1000)
        out.append(line)
        size += len(line) + 1
    return "\n\n".join(out)


def aime_response(rng: random.Random, answer: int) -> tuple[str, str]:
    """A response and its finish_reason."""
    kind = rng.random()
    if kind < 0.35:  # long reasoning, then a short committed answer
        think = _prose(rng, MATH, rng.randint(8_000, 40_000))
        return f"<think>\n{think}\n</think>\n\n{_prose(rng, MATH, 600)}\n\n**Final Answer**\n\\[\n\\boxed{{{answer}}}\n\\]", "stop"
    if kind < 0.70:  # a direct derivation
        tail = rng.choice([f"\\boxed{{{answer}}}", f"Answer: {answer}", f"So the answer is ${answer}$.", f"$m + n = \\boxed{{{answer:03d}}}$"])
        return f"{_prose(rng, MATH, rng.randint(1_000, 4_000))}\n\n{tail}", "stop"
    if kind < 0.85:  # cut off inside the think block
        return f"<think>\n{_prose(rng, MATH, rng.randint(20_000, 40_000))}", "length"
    if kind < 0.95:  # a retracted answer, then the corrected one
        return f"{_prose(rng, MATH, 1_500)}\nSo the answer is {answer + 1}. Wait, that's wrong; recounting, the answer is \\boxed{{{answer}}}.", "stop"
    # No committed answer: prose without intermediate boxes (a boxed value would count as the answer).
    return f"{_prose(rng, MATH[1:], 2_000)}\nI could not finish the count.", "stop"


def gpqa_response(rng: random.Random, letter: str) -> tuple[str, str]:
    kind = rng.random()
    if kind < 0.35:
        think = _prose(rng, SCIENCE, rng.randint(6_000, 30_000))
        return f"<think>\n{think}\n</think>\n\n{_prose(rng, SCIENCE, 500)}\n\n**Answer: {letter}**", "stop"
    if kind < 0.70:
        tail = rng.choice([f"Answer: {letter}", f"Answer: ({letter})", f"The correct answer is {letter}.", f"\\boxed{{{letter}}}", f"**Answer:** {letter}"])
        return f"{_prose(rng, SCIENCE, rng.randint(800, 3_000))}\n\n{tail}", "stop"
    if kind < 0.85:
        return f"<think>\n{_prose(rng, SCIENCE, rng.randint(15_000, 30_000))}", "length"
    if kind < 0.95:
        return letter, "stop"
    return f"{_prose(rng, SCIENCE, 1_000)}\nAnswer: Cannot be determined.", "stop"


def build_records(n: int, seed: int = 0, distinct: int = 4_000) -> list[GenerationRecord]:
    """n records over a pool of distinct responses (100,000 distinct long texts would need gigabytes)."""
    rng = random.Random(seed)
    pool = []
    for i in range(distinct):
        if i % 2 == 0:
            answer = rng.randint(0, 999)
            response, finish = aime_response(rng, answer)
            pool.append(("aime", f"{answer:03d}", response, finish, {}))
        else:
            letter = rng.choice("ABCD")
            response, finish = gpqa_response(rng, letter)
            pool.append(("gpqa", letter, response, finish, {"letters": "ABCD", "gold_letter": letter}))
    records = []
    for i in range(n):
        task, target, response, finish, meta = pool[i % distinct]
        records.append(GenerationRecord(
            task=task, item_id=f"{task}-{(i // 8) % 5000}", sample=i % 8, messages=[{"role": "user", "content": "..."}],
            target=target, response=response, finish_reason=finish,
            usage={"prompt_tokens": 200, "completion_tokens": len(response) // 4}, latency_s=1.0,
            engine={"name": "openai"}, seed=i, meta=meta,
        ))
    return records


def time_judge(records: list[GenerationRecord], repeats: int) -> tuple[float, float, Counter]:
    """Median wall-clock and CPU-time rates; on a shared machine the CPU rate is the steadier one."""
    judge = RulesJudge()
    for rec in records[:2_000]:  # warm up regex caches
        judge.grade(rec)
    wall, cpu, statuses = [], [], Counter()
    for _ in range(repeats):
        statuses = Counter()
        start, start_cpu = time.perf_counter(), time.process_time()
        for rec in records:
            verdict = judge.grade(rec)
            statuses[verdict.status] += 1
            statuses["correct"] += verdict.correct is True
        wall.append(len(records) / (time.perf_counter() - start))
        cpu.append(len(records) / (time.process_time() - start_cpu))
    return statistics.median(wall), statistics.median(cpu), statuses


@dataclass
class StageTime:
    """One timing of the grade stage: samples, wall seconds, CPU seconds of the parent and of its workers."""

    samples: int
    wall_s: float
    parent_cpu_s: float
    workers_cpu_s: float
    # On idle cores the stage would take about the parent's CPU time plus its workers' divided among them
    # (an estimate for a shared machine, where wall time measures the other jobs as much as this one).
    idle_estimate_s: float

    @property
    def rate(self) -> float:
        return self.samples / self.wall_s

    def describe(self) -> str:
        cpu = self.parent_cpu_s + self.workers_cpu_s
        return (f"{self.rate:,.0f} samples/s wall; CPU: parent {self.parent_cpu_s:.2f} s, workers "
                f"{self.workers_cpu_s:.2f} s ({self.samples / cpu:,.0f} samples per CPU second; on idle cores "
                f"~{self.samples / self.idle_estimate_s:,.0f} samples/s)")


def _cpu_s() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def time_stage(records: list[GenerationRecord]) -> StageTime:
    """The grade stage (harness.grade.grade_run) timed on records, split into one run directory per task."""
    from harness.grade import grade_run
    from harness.rundir import RunDir, RunSpec

    from judges.rules.grade_workers import worker_count

    total, elapsed, parent_cpu, workers_cpu, idle_estimate = 0, 0.0, 0.0, 0.0, 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for task in ("aime", "gpqa"):
            recs = [r for r in records if r.task == task]
            by_item: dict[str, int] = Counter(r.item_id for r in recs)
            samples = max(by_item.values())
            recs = [r for r in recs if by_item[r.item_id] == samples]
            run = RunDir(Path(tmp) / task)
            run.path.mkdir(parents=True)
            run.write_spec(RunSpec(task=task, dataset_path="synthetic", dataset_sha256="0" * 64,
                                   item_ids=sorted(by_item, key=lambda k: int(k.rsplit("-", 1)[1])), samples=samples,
                                   engine_name="openai", model="synthetic", engine={}, sampling={}, seed=0))
            item_ids = {r.item_id for r in recs}
            spec = run.read_spec()
            spec.item_ids = [i for i in spec.item_ids if i in item_ids]
            run.write_spec(spec)
            with open(run.generations_path, "w") as f:
                for r in recs:
                    f.write(json.dumps(r.to_dict()) + "\n")
            (own, children), start = _cpu_s(), time.perf_counter()
            asyncio.run(grade_run(run.path, RulesJudge(), show_progress=False))
            elapsed += time.perf_counter() - start
            own, children = _cpu_s()[0] - own, _cpu_s()[1] - children
            parent_cpu, workers_cpu = parent_cpu + own, workers_cpu + children
            idle_estimate += own + children / worker_count(len(recs))
            total += len(recs)
    return StageTime(total, elapsed, parent_cpu, workers_cpu, idle_estimate)


def ab_stage(records: list[GenerationRecord], ref: str, rounds: int) -> dict[str, list[StageTime]]:
    """The stage with grade_workers.py of git REF and of the working tree, alternately, rounds times each."""
    import harness.grade as grade_stage

    root = Path(__file__).resolve().parents[1]
    source = subprocess.run(["git", "show", f"{ref}:judges/rules/grade_workers.py"], cwd=root, check=True,
                            capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "grade_workers_ref.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location("grade_workers_ref", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
    now = grade_stage.grade_in_workers
    out: dict[str, list[StageTime]] = {ref: [], "now": []}
    try:
        for _ in range(rounds):
            for name, grade_in_workers in ((ref, module.grade_in_workers), ("now", now)):
                grade_stage.grade_in_workers = grade_in_workers
                out[name].append(time_stage(records))
                print(f"  {name:>10}: {out[name][-1].describe()}", flush=True)
    finally:
        grade_stage.grade_in_workers = now
    return out


def real_records(n: int) -> list[GenerationRecord]:
    """n GPQA/AIME records cycling over the real responses of the corpus, with their options and labels."""
    real = Path(__file__).resolve().parents[1] / "tests" / "judges" / "real"
    rows = [json.loads(line) for split in ("tuning", "heldout")
            for line in gzip.open(real / f"corpus_{split}.jsonl.gz", "rt")]
    out = []
    for i in range(n):
        row = rows[i % len(rows)]
        gpqa_shape = row["shape"] == "gpqa"
        meta = {"letters": "".join(row["letters"]), "choices": row.get("choices")} if gpqa_shape else {}
        target = str(row["label"] or (row["letters"][0] if gpqa_shape else "0"))
        out.append(GenerationRecord(
            task=row["shape"], item_id=f"{row['shape']}-{i // 8}", sample=i % 8, messages=[{"role": "user", "content": "..."}],
            target=target, response=row["response"], finish_reason="stop",
            usage={"prompt_tokens": 200, "completion_tokens": len(row["response"]) // 4}, latency_s=1.0,
            engine={"name": "openai"}, seed=i, meta={k: v for k, v in meta.items() if v is not None}))
    return out


def hostile_mb_per_s() -> dict[str, float]:
    """Reading rate on 1 MB of each hostile shape of the time-limit test (the worst one is the floor)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from judges.rules import gpqa
    from judges.rules.deadline import Deadline
    from tests.judges.test_gpqa_time_limit import HOSTILE, OPTIONS

    rates = {}
    for name, unit in HOSTILE.items():
        text = unit * (1_000_000 // len(unit))
        start = time.perf_counter()
        gpqa.read_letter(text, options=OPTIONS, deadline=Deadline(3600))
        rates[name] = len(text) / 1e6 / (time.perf_counter() - start)
    return rates


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--stage", type=int, default=20_000, help="records for the whole-stage timing (0: skip)")
    parser.add_argument("--real", type=int, default=20_000, help="records of real responses for the stage (0: skip)")
    parser.add_argument("--ab", metavar="REF", help="with --real: the stage with grade_workers.py of git REF and "
                        "of now, alternately, --repeats rounds each")
    parser.add_argument("--hostile-only", action="store_true", help="only the 1 MB hostile-shape reading rates")
    args = parser.parse_args()
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores")
    if args.hostile_only:
        rates = hostile_mb_per_s()
        print("reading 1 MB hostile shapes (MB/s, goal >= 1): " + ", ".join(f"{k} {v:.2f}" for k, v in rates.items()))
        return

    t0 = time.perf_counter()
    records = build_records(args.records)
    chars = sum(len(r.response) for r in records) / len(records)
    print(f"built {len(records):,} records ({Counter(r.task for r in records)}) in {time.perf_counter() - t0:.1f}s; "
          f"mean response {chars:,.0f} chars; {sum(r.finish_reason == 'length' for r in records):,} truncated")
    rate, cpu_rate, statuses = time_judge(records, args.repeats)
    print(f"RulesJudge.grade: {rate:,.0f} samples/s wall, {cpu_rate:,.0f} samples/s of CPU time, one thread "
          f"(median of {args.repeats}; goal >= 5,000/s)  statuses: {dict(statuses)}")
    # Every synthetic response that commits an answer commits the right one: a parser regression shows here.
    assert statuses["correct"] == statuses["graded"], statuses
    result = {"records": len(records), "judge_samples_per_s": round(rate), "judge_samples_per_cpu_s": round(cpu_rate)}
    if args.stage:
        stage = time_stage(build_records(args.stage, seed=1, distinct=min(args.stage, 4_000)))
        print(f"grade stage (read JSONL, grade, write samples.jsonl + summary.json) on {args.stage:,} records: "
              f"{stage.describe()}")
        result["stage_samples_per_s"] = round(stage.rate)
    if args.real:
        real = real_records(args.real)
        chars = sum(len(r.response) for r in real) / len(real)
        stage = time_stage(real)
        print(f"grade stage on {args.real:,} real responses (mean {chars:,.0f} chars; goal >= 5,000/s): {stage.describe()}")
        result["real_stage_samples_per_s"] = round(stage.rate)
        result["real_stage_samples_per_cpu_s"] = round(stage.samples / (stage.parent_cpu_s + stage.workers_cpu_s))
        result["real_stage_idle_estimate_per_s"] = round(stage.samples / stage.idle_estimate_s)
        if args.ab:
            print(f"the same stage, grade_workers.py of {args.ab} and now, alternately ({args.repeats} rounds):")
            runs = ab_stage(real, args.ab, args.repeats)
            ratio = statistics.median(t.rate for t in runs["now"]) / statistics.median(t.rate for t in runs[args.ab])
            cpu = {k: statistics.median(t.samples / (t.parent_cpu_s + t.workers_cpu_s) for t in v) for k, v in runs.items()}
            idle = {k: statistics.median(t.samples / t.idle_estimate_s for t in v) for k, v in runs.items()}
            print(f"median wall ratio now / {args.ab}: {ratio:.2f}; samples per CPU second {cpu[args.ab]:,.0f} -> "
                  f"{cpu['now']:,.0f} ({cpu['now'] / cpu[args.ab]:.2f}x); on idle cores ~{idle[args.ab]:,.0f} -> "
                  f"~{idle['now']:,.0f} samples/s ({idle['now'] / idle[args.ab]:.2f}x)")
            result["ab_wall_ratio"] = round(ratio, 2)
            result["ab_cpu_ratio"] = round(cpu["now"] / cpu[args.ab], 2)
            result["ab_idle_estimate_ratio"] = round(idle["now"] / idle[args.ab], 2)
        rates = hostile_mb_per_s()
        worst = min(rates, key=rates.get)
        print(f"reading 1 MB hostile shapes: worst {worst} {rates[worst]:.2f} MB/s (goal >= 1 MB/s); "
              + ", ".join(f"{k} {v:.1f}" for k, v in rates.items()))
        result["hostile_worst_mb_per_s"] = round(rates[worst], 2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
