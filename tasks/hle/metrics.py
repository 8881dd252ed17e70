"""HLE scores: accuracy with a Wald interval and calibration error, as the official scorer computes them.

The official computation is `hle_eval/run_judge_results.py` in github.com/centerforaisafety/hle
(its `calib_err` comes from hendrycks/outlier-exposure). Reproduced here on purpose, quirks included:
unjudged questions count as wrong, confidences are sorted with numpy's default (unstable) argsort,
bins hold 100 samples, the last bin absorbs the remainder and is left out of the sum, and the
reported value is 100 * round(rms, 2). `calibration_error_corrected` keeps every bin and sorts stably.
"""
from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Iterable

import numpy as np

BIN_SIZE = 100
JUDGED_STATUSES = ("graded", "no_answer", "truncated")  # statuses where the judge read the response


def wald_accuracy(correct: int, n: int) -> tuple[float | None, float | None]:
    """Accuracy in percent and its 95% Wald half-width, rounded as the official scorer rounds."""
    if n <= 0:
        return None, None
    accuracy = round(100 * correct / n, 2)
    half_width = round(1.96 * math.sqrt(accuracy * (100 - accuracy) / n), 2)
    return accuracy, half_width


def _bins(n: int, beta: int) -> list[tuple[int, int]]:
    bins = [(i * beta, (i + 1) * beta) for i in range(n // beta)]
    bins[-1] = (bins[-1][0], n)  # the last bin absorbs the remainder
    return bins


def _rms(confidence: np.ndarray, correct: np.ndarray, bins: list[tuple[int, int]]) -> float:
    total = len(confidence)
    cerr = 0.0
    for lo, hi in bins:
        if hi > lo:
            diff = abs(np.nanmean(confidence[lo:hi]) - np.nanmean(correct[lo:hi]))
            cerr += (hi - lo) / total * diff**2
    return float(np.sqrt(cerr))


def official_calibration_error(confidence: Iterable[float], correct: Iterable[bool], beta: int = BIN_SIZE) -> float:
    """RMS calibration error exactly as the official HLE code (confidence in 0..1); needs >= beta samples."""
    conf = np.asarray(list(confidence), dtype=float)
    corr = np.asarray(list(correct), dtype=bool)
    if len(conf) < beta:
        raise ValueError(f"calibration error needs at least {beta} samples, got {len(conf)}")
    idx = np.argsort(conf)  # default kind, as the official code: ties are not kept in input order
    bins = _bins(len(conf), beta)
    return _rms(conf[idx], corr[idx], bins[:-1])  # the official loop stops before the last bin


def corrected_calibration_error(confidence: Iterable[float], correct: Iterable[bool], beta: int = BIN_SIZE) -> float:
    """The same RMS error with every bin counted and a stable sort, so ties keep input order."""
    conf = np.asarray(list(confidence), dtype=float)
    corr = np.asarray(list(correct), dtype=bool)
    if len(conf) < beta:
        raise ValueError(f"calibration error needs at least {beta} samples, got {len(conf)}")
    idx = np.argsort(conf, kind="stable")
    return _rms(conf[idx], corr[idx], _bins(len(conf), beta))


def _report(value: float) -> float:
    # official: 100 * round(value, 2); the outer round only removes float noise such as 56.99999999999999
    return round(100 * round(value, 2), 2)


def calibration(grades: list) -> dict[str, Any]:
    """Both calibration errors over the samples the judge read, or null with the reason."""
    pairs = [
        (g.detail.get("confidence"), bool(g.correct))
        for g in grades
        if g.status in JUDGED_STATUSES and isinstance(g.detail.get("confidence"), (int, float))
    ]
    out: dict[str, Any] = {"calibration_error": None, "calibration_error_corrected": None,
                           "calibration_samples": len(pairs), "calibration_bin_size": BIN_SIZE}
    if not pairs and grades:
        out["calibration_not_computable"] = "the judge reports no confidence for these samples"
    elif len(pairs) < BIN_SIZE:
        out["calibration_not_computable"] = (
            f"needs at least {BIN_SIZE} judged samples with a confidence, got {len(pairs)}")
    else:
        conf = [c / 100 for c, _ in pairs]
        corr = [ok for _, ok in pairs]
        out["calibration_error"] = _report(official_calibration_error(conf, corr))
        out["calibration_error_corrected"] = _report(corrected_calibration_error(conf, corr))
    return out


def _table(groups: dict[str, list[bool]]) -> dict[str, dict[str, Any]]:
    table = {}
    for name in sorted(groups):
        flags = groups[name]
        accuracy, half_width = wald_accuracy(sum(flags), len(flags))
        table[name] = {"n": len(flags), "correct": sum(flags), "accuracy": accuracy,
                       "accuracy_ci95_half_width": half_width}
    return table


def hle_metrics(grades: list, records: list, expected_keys: list[tuple[str, int]],
                item_meta: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Accuracy over every expected sample (missing or unjudged = wrong), calibration, breakdowns."""
    correct_by_key = {g.key: g.correct is True for g in grades}
    meta: dict[str, dict[str, Any]] = dict(item_meta or {})
    for r in records:  # what the generation records say wins over what a dataset load said
        meta[r.item_id] = {**meta.get(r.item_id, {}), **(r.meta or {}), "category": r.category}
    for g in grades:
        if g.category is not None:
            meta.setdefault(g.item_id, {}).setdefault("category", g.category)

    n = len(expected_keys)
    n_correct = sum(correct_by_key.get(k, False) for k in expected_keys)
    accuracy, half_width = wald_accuracy(n_correct, n)
    by: dict[str, dict[str, list[bool]]] = {"category": defaultdict(list), "answer_type": defaultdict(list),
                                             "modality": defaultdict(list)}
    for key in expected_keys:
        m = meta.get(key[0], {})
        ok = correct_by_key.get(key, False)
        by["category"][m.get("category") or "unknown"].append(ok)
        by["answer_type"][m.get("answer_type") or "unknown"].append(ok)
        has_image = m.get("has_image")
        by["modality"]["unknown" if has_image is None else ("image" if has_image else "text")].append(ok)

    return {
        "accuracy": accuracy,
        "accuracy_ci95_half_width": half_width,
        "accuracy_n": n,
        "accuracy_correct": n_correct,
        **calibration(grades),
        "breakdowns": {name: _table(groups) for name, groups in by.items()},
    }
