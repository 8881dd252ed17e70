"""Timing whole steps with device synchronisation; medians; optional torch profiler trace."""
from __future__ import annotations

import contextlib
import statistics
import time
from pathlib import Path
from typing import Callable, Iterator, TypeVar

import torch

T = TypeVar("T")


def synchronize(device: str) -> None:
    """Wait for queued device work so a wall-clock interval covers it."""
    kind = device.split(":")[0]
    if kind == "cuda":
        torch.cuda.synchronize(device)
    elif kind == "npu":
        torch.npu.synchronize()  # type: ignore[attr-defined]


@contextlib.contextmanager
def maybe_profile(trace_path: Path | None) -> Iterator[None]:
    """Run the body under torch.profiler and write a Chrome trace when a path is given."""
    if trace_path is None:
        yield
        return
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)
    with profile(activities=activities, record_shapes=True) as prof:
        yield
    trace_path.parent.mkdir(parents=True, exist_ok=True)
    prof.export_chrome_trace(str(trace_path))


def timed(step: Callable[[], T], device: str) -> tuple[float, T]:
    """(seconds, result) of one call of `step`, bracketed by device synchronisation."""
    synchronize(device)
    t0 = time.perf_counter()
    result = step()
    synchronize(device)
    return time.perf_counter() - t0, result


def time_steps(step: Callable[[], object], warmup: int, measured: int, device: str,
               trace_path: Path | None = None) -> list[float]:
    """Seconds per measured call of `step`, each bracketed by device synchronisation."""
    for _ in range(warmup):
        step()
    synchronize(device)
    with maybe_profile(trace_path):
        return [timed(step, device)[0] for _ in range(measured)]


def median(values: list[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolated percentile (q in [0, 100]), as numpy's default."""
    if not values:
        return float("nan")
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return float(xs[lo] + (xs[hi] - xs[lo]) * (pos - lo))
