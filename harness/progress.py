"""A progress bar with counts, rate and ETA (tqdm), quiet when not wanted."""
from __future__ import annotations

import sys

from tqdm import tqdm


class Progress:
    def __init__(self, total: int, initial: int = 0, desc: str = "", enabled: bool = True):
        self._bar = tqdm(
            total=total, initial=initial, desc=desc, unit="sample", file=sys.stderr, dynamic_ncols=True,
            disable=not enabled, mininterval=0.5, smoothing=0.1,
        )

    def update(self, n: int = 1, **postfix) -> None:
        if postfix and any(postfix.values()):
            self._bar.set_postfix(postfix, refresh=False)
        self._bar.update(n)

    def close(self) -> None:
        self._bar.close()
