"""sweep.timing: one timed call hands back the step's result beside the seconds it took."""
from __future__ import annotations

import time

from sweep.timing import percentile, time_steps, timed


def test_timed_returns_the_result_and_covers_the_call():
    seconds, result = timed(lambda: (time.sleep(0.02), "out")[1], "cpu")
    assert result == "out"
    assert 0.02 <= seconds < 1.0


def test_time_steps_runs_warmup_untimed_and_times_each_measured_call():
    calls = []
    times = time_steps(lambda: calls.append(1), warmup=2, measured=3, device="cpu")
    assert len(calls) == 5 and len(times) == 3


def test_percentile_interpolates_like_numpy():
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([5.0], 99) == 5.0
