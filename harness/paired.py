"""Two runs of one task graded by one judge, compared item by item (the data behind `compare A B`)."""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from harness.errors import RunDirError
from harness.report.text import plural
from harness.rundir import RunDir
from harness.same_items import check_item_content
from harness.stats import items_needed, mcnemar_exact, paired_difference, plain_language, sign_flip_test


def item_accuracies(run: RunDir, judge: str) -> tuple[dict[str, float], int]:
    """Per-item share of expected samples judged correct (missing = wrong), and samples per item."""
    spec = run.read_spec()
    correct: dict[str, int] = {i: 0 for i in spec.item_ids}
    expected = set(spec.expected_keys())
    for g in run.read_grades(judge):
        if g.correct is True and g.key in expected:
            correct[g.item_id] += 1
    return {i: c / spec.samples for i, c in correct.items()}, spec.samples


def shared_judge(a: RunDir, b: RunDir, judge: str | None) -> str:
    """The judge whose grades both runs are compared by: the one asked for, or the only one they share."""
    ja, jb = a.list_judges(), b.list_judges()
    if judge:
        in_a, in_b = a.resolve_judge(judge), b.resolve_judge(judge)  # a short name (`rules`) or a full id
        if in_a != in_b:
            raise RunDirError(f"judge {judge!r} is {in_a} in {a.path} but {in_b} in {b.path}; give the full id")
        return in_a
    common = [j for j in ja if j in jb]
    if len(common) == 1:
        return common[0]
    if not common:
        raise RunDirError(f"{a.path} and {b.path} share no judge ({', '.join(ja) or 'none'} vs "
                          f"{', '.join(jb) or 'none'}); grade both with the same --judge")
    raise RunDirError(f"{a.path} and {b.path} share judges {', '.join(common)}; choose one with --judge")


def compare_runs(path_a: str | Path, path_b: str | Path, judge: str | None = None, seed: int = 0,
                 resamples: int = 10_000, allow_different_data: bool = False) -> dict[str, Any]:
    """Paired difference B - A of Pass@1 on the items both runs have, with a test fit to the design.

    Refuses runs whose shared item ids hold different questions, unless `allow_different_data` (then warns).
    """
    a, b = RunDir.open(path_a), RunDir.open(path_b)
    spec_a, spec_b = a.read_spec(), b.read_spec()
    if spec_a.task != spec_b.task:
        raise RunDirError(f"{a.path} is task {spec_a.task} and {b.path} is task {spec_b.task}; "
                          "a paired comparison needs the same task")
    judge = shared_judge(a, b, judge)
    acc_a, samples_a = item_accuracies(a, judge)
    acc_b, samples_b = item_accuracies(b, judge)
    items = [i for i in acc_a if i in acc_b]
    if not items:
        raise RunDirError(f"{a.path} and {b.path} have no item in common")
    content = check_item_content(a, spec_a, b, spec_b, items)
    data_note = content.describe(spec_a, spec_b)
    if content.differing and not allow_different_data:
        raise RunDirError(f"{a.path} and {b.path} were made from {data_note}; refusing to compare "
                          "(--allow-different-data compares them anyway, with a warning)")
    xa, xb = [acc_a[i] for i in items], [acc_b[i] for i in items]
    diff = paired_difference(xa, xb, seed=seed, resamples=resamples)
    d = [y - x for x, y in zip(xa, xb)]
    if samples_a == 1 and samples_b == 1:
        a_only = sum(1 for x, y in zip(xa, xb) if x > y)
        b_only = sum(1 for x, y in zip(xa, xb) if y > x)
        test = {"name": "McNemar exact", "a_only": a_only, "b_only": b_only, "p_value": mcnemar_exact(a_only, b_only)}
    else:
        p, how = sign_flip_test(d, seed=seed)
        test = {"name": f"paired sign-flip permutation ({how})", "p_value": p}
    needed = items_needed(d)
    coverage = {str(r.path): r.read_summary(judge).coverage_complete if r.summary_path(judge).exists()
                else None for r in (a, b)}
    return {
        "a": str(path_a), "b": str(path_b), "task": spec_a.task, "judge": judge,
        "samples_per_item": {"a": samples_a, "b": samples_b},
        "items": len(items), "items_only_in_a": len(acc_a) - len(items), "items_only_in_b": len(acc_b) - len(items),
        "coverage_complete": coverage,
        "difference": {**asdict(diff), "ci95": list(diff.ci95), "bootstrap_ci95": list(diff.bootstrap_ci95),
                       "bootstrap_resamples": resamples, "seed": seed},
        "test": test,
        "wins": {"a": sum(1 for x in d if x < 0), "b": sum(1 for x in d if x > 0), "tied": sum(1 for x in d if x == 0)},
        "items_needed_80pct_power": needed,
        "verdict": plain_language(diff, test["p_value"], needed),
        "data_warning": f"WARNING: {data_note}" if content.differing else data_note,
    }


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def format_comparison(r: dict[str, Any]) -> str:
    """The comparison as a few lines of text; percent with one decimal, differences in points."""
    d, t = r["difference"], r["test"]
    lines = [r["data_warning"]] if r.get("data_warning") else []
    lines += [f"task {r['task']}, judge {r['judge']}, {plural(r['items'], 'shared item')}"
              + (f" ({r['items_only_in_a']} only in A, {r['items_only_in_b']} only in B, left out)"
                 if r["items_only_in_a"] or r["items_only_in_b"] else ""),
              f"  A = {r['a']}: Pass@1 {_pct(d['mean_a'])} ({plural(r['samples_per_item']['a'], 'sample per item', 'samples per item')})",
              f"  B = {r['b']}: Pass@1 {_pct(d['mean_b'])} ({plural(r['samples_per_item']['b'], 'sample per item', 'samples per item')})"]
    se = "n/a" if d["stderr"] is None else f"{100 * d['stderr']:.1f}"
    lo, hi = d["bootstrap_ci95"]
    lines.append(f"B - A: {100 * d['diff']:+.1f} points, SE {se} (clustered by item), "
                 f"paired bootstrap 95% CI {100 * lo:+.1f} to {100 * hi:+.1f} ({d['bootstrap_resamples']:,} resamples, seed {d['seed']})")
    extra = f": A right and B wrong on {t['a_only']}, B right and A wrong on {t['b_only']}" if "a_only" in t else ""
    lines.append(f"{t['name']}{extra}; p = {t['p_value']:.3g}")
    w = r["wins"]
    lines.append(f"items won: A {w['a']}, B {w['b']}, tied {w['tied']}")
    lines.append(r["verdict"])
    bad = [run for run, ok in r["coverage_complete"].items() if ok is False]
    if bad:
        lines.append(f"NOT VALID: coverage incomplete in {', '.join(bad)}; missing samples count as wrong")
    return "\n".join(lines)
