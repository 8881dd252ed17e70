"""Incremental detokenisation and stop strings; streamed text holds back a possible stop-string prefix."""
from __future__ import annotations

from engine.native.tokenizer import Tokenizer


class Detokenizer:
    """Tracks one sequence's output text; `feed` returns (text safe to emit now, stop string hit)."""

    def __init__(self, tokenizer: Tokenizer, stops: tuple[str, ...]):
        self.tk = tokenizer
        self.stops = tuple(s for s in stops if s)
        self.max_stop = max((len(s) for s in self.stops), default=0)
        self.ids: list[int] = []
        self.text = ""
        self.emitted = 0
        self._prefix = 0  # token window start for incremental decoding
        self._read = 0

    def feed(self, token_ids: list[int], final: bool = False) -> tuple[str, bool]:
        self.ids.extend(token_ids)
        # Decode a short window so each step costs O(1); wait while a multi-byte character is incomplete.
        prefix_text = self.tk.decode(self.ids[self._prefix:self._read])
        full = self.tk.decode(self.ids[self._prefix:])
        if len(full) > len(prefix_text) and (final or not full.endswith("\ufffd")):
            new = full[len(prefix_text):]
            start = max(0, len(self.text) - self.max_stop + 1)
            self.text += new
            self._prefix, self._read = self._read, len(self.ids)
            if self.stops:
                hit = min(((i, s) for s in self.stops if (i := self.text.find(s, start)) >= 0), default=None)
                if hit is not None:
                    self.text = self.text[:hit[0]]
                    return self._emit(len(self.text)), True
        if final:
            return self._emit(len(self.text)), False
        return self._emit(len(self.text) - self._held()), False

    def _held(self) -> int:
        # Longest suffix of the text that is a proper prefix of some stop string.
        for n in range(min(self.max_stop - 1, len(self.text)), 0, -1):
            tail = self.text[-n:]
            if any(s.startswith(tail) for s in self.stops):
                return n
        return 0

    def _emit(self, upto: int) -> str:
        if upto <= self.emitted:
            return ""
        out = self.text[self.emitted:upto]
        self.emitted = upto
        return out
