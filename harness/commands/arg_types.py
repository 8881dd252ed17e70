"""argparse types that reject nonsense at parse time, before any data or model loads."""
from __future__ import annotations

import argparse
import math
from typing import Callable


def _bounded(cast: Callable[[str], float], what: str, ok: Callable[[float], bool], rule: str):
    def parse(text: str):
        try:
            value = cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what} {rule}, got {text!r}") from None
        if not (math.isfinite(value) and ok(value)):
            raise argparse.ArgumentTypeError(f"must be {'a finite number ' if cast is float else ''}{rule}, got {text}")
        return value
    return parse


# Counts of samples, tokens, items or requests: 0 is an error, never "the default".
positive_int = _bounded(int, "a whole number", lambda v: v >= 1, ">= 1")
non_negative_int = _bounded(int, "a whole number", lambda v: v >= 0, ">= 0")
# Seconds, GiB, MB.
positive_float = _bounded(float, "a number", lambda v: v > 0, "> 0")
non_negative_float = _bounded(float, "a number", lambda v: v >= 0, ">= 0")
# TCP ports (0 asks the system for a free one).
port_number = _bounded(int, "a whole number", lambda v: 0 <= v <= 65535, "in 0..65535")
# Nucleus mass: a value that rounds to 0 in float32 is still > 0 here; the sampler treats it as greedy.
probability = _bounded(float, "a number", lambda v: 0 < v <= 1, "in (0, 1]")


def device_name(text: str) -> str:
    """cpu, cuda or npu, optionally with an index (cuda:1); whether the device exists is checked when it loads."""
    from engine.native.device_names import DEVICE_KINDS  # torch-free

    kind, _, index = text.partition(":")
    if kind not in DEVICE_KINDS or (index and not index.isdigit()) or text.endswith(":"):
        raise argparse.ArgumentTypeError(f"expected one of {', '.join(DEVICE_KINDS)} (optionally :INDEX, e.g. "
                                         f"cuda:1), got {text!r}")
    return text
