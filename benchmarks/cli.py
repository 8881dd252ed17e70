"""Plain numeric flags of the benchmark scripts, declared from their defaults."""
from __future__ import annotations

import argparse


def add_numbers(p: argparse.ArgumentParser, **defaults: int | float) -> None:
    """--name for each keyword (underscores become dashes), typed as its default is, with that default."""
    for name, default in defaults.items():
        p.add_argument(f"--{name.replace('_', '-')}", type=type(default), default=default)
