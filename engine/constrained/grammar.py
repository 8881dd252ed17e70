"""xgrammar-backed grammars over a tokenizer's vocabulary, and the per-request matcher as a TokenConstraint."""
from __future__ import annotations

import json
import threading
from typing import Any, Callable, Protocol

import torch

from engine.constrained.worker import CompileWorker

_DEFAULT_OBJECT = {"type": "object"}


class TokenConstraint(Protocol):
    def mask_logits(self, logits: torch.Tensor) -> None: ...
    def accept_token(self, token_id: int) -> bool: ...
    def is_terminated(self) -> bool: ...
    def rollback(self, num_tokens: int) -> None: ...


def constraints_available() -> bool:
    try:
        import xgrammar  # noqa: F401
    except Exception:  # ImportError, or a broken native library
        return False
    return True


class _Workers:
    """One compile worker (a child process) per tokenizer; the parent keeps the tokenizer info to load results."""

    def __init__(self) -> None:
        self._by_tokenizer: dict[int, tuple[CompileWorker, Any]] = {}
        self._lock = threading.Lock()

    def get(self, tokenizer: Any, vocab_size: int | None, stop_ids: list[int]) -> tuple[CompileWorker, Any]:
        key = id(tokenizer)
        with self._lock:
            if key not in self._by_tokenizer:
                import xgrammar as xgr
                info = _tokenizer_info(xgr, tokenizer, vocab_size, stop_ids)
                self._by_tokenizer[key] = (CompileWorker(info), info)
            return self._by_tokenizer[key]

    def cancel(self, tokenizer: Any) -> None:
        entry = self._by_tokenizer.get(id(tokenizer))
        if entry is not None:
            entry[0].kill()

    def close(self, tokenizer: Any) -> None:
        with self._lock:
            entry = self._by_tokenizer.pop(id(tokenizer), None)
        if entry is not None:
            entry[0].close()


_WORKERS = _Workers()


def _tokenizer_info(xgr: Any, tokenizer: Any, vocab_size: int | None, stop_ids: list[int]) -> Any:
    inner = getattr(tokenizer, "_tk", None)  # the `tokenizers.Tokenizer` inside engine.native.tokenizer
    if inner is None:
        raise ValueError("constrained decoding needs a `tokenizers`-based tokenizer")
    vocab = inner.get_vocab(with_added_tokens=True)
    size = max(vocab_size or 0, max(vocab.values()) + 1)
    encoded = [""] * size
    for tok, i in vocab.items():
        encoded[i] = tok
    decoder = json.loads(inner.to_str()).get("decoder") or {}
    kinds = {decoder.get("type")} | {d.get("type") for d in decoder.get("decoders", []) or []}
    if "ByteLevel" in kinds:
        vocab_type = xgr.VocabType.BYTE_LEVEL  # GPT-2-style: bytes mapped to printable characters
    elif "ByteFallback" in kinds:
        vocab_type = xgr.VocabType.BYTE_FALLBACK  # SentencePiece-style: <0x0A> tokens and U+2581 spaces
    else:
        vocab_type = xgr.VocabType.RAW
    return xgr.TokenizerInfo(encoded, vocab_type=vocab_type, vocab_size=size, stop_token_ids=stop_ids)


class GrammarConstraint:
    """One request's grammar state; not thread-safe (the engine thread owns it while it runs)."""

    def __init__(self, compiled: Any, vocab_size: int) -> None:
        import xgrammar as xgr
        self._xgr = xgr
        self.matcher = xgr.GrammarMatcher(compiled)
        self.vocab_size = vocab_size
        self.bitmask = xgr.allocate_token_bitmask(1, vocab_size)
        self.consumed = 0  # output tokens the matcher has seen
        self.rejected = 0  # tokens the matcher refused (should stay 0 while masks are applied)

    def sync(self, output_token_ids: list[int]) -> None:
        for tok in output_token_ids[self.consumed:]:
            self.accept_token(tok)

    def mask_logits(self, logits: torch.Tensor) -> None:
        if self.matcher.is_terminated():
            return
        self.matcher.fill_next_token_bitmask(self.bitmask)
        row = logits.view(1, -1)
        self._xgr.apply_token_bitmask_inplace(row, self.bitmask.to(row.device), vocab_size=min(row.shape[-1], self.vocab_size))

    def accept_token(self, token_id: int) -> bool:
        self.consumed += 1
        if self.matcher.is_terminated():
            return False
        ok = bool(self.matcher.accept_token(int(token_id)))
        self.rejected += not ok
        return ok

    def is_terminated(self) -> bool:
        return bool(self.matcher.is_terminated())

    def rollback(self, num_tokens: int) -> None:
        self.matcher.rollback(num_tokens)
        self.consumed -= num_tokens


def compile_response_format(tokenizer: Any, kind: str, schema: dict[str, Any] | None = None,
                            vocab_size: int | None = None, stop_ids: list[int] | None = None,
                            timeout_s: float = 30.0) -> Callable[[], GrammarConstraint]:
    """Compile once per schema (in a child process, stopped after `timeout_s`); the factory makes a fresh matcher
    per choice. ValueError for a schema xgrammar cannot compile, CompileTimeout, CompileCancelled (see
    `cancel_compile`), RuntimeError when xgrammar is missing."""
    if not constraints_available():
        raise RuntimeError("constrained decoding needs the `xgrammar` package (pip install xgrammar)")
    if kind not in ("json_object", "json_schema"):
        raise ValueError(f"unsupported response_format type {kind!r}")
    vocab_size = vocab_size or getattr(tokenizer, "vocab_size", None)
    stop_ids = list(stop_ids if stop_ids is not None else getattr(tokenizer, "stop_token_ids", []) or [])
    worker, info = _WORKERS.get(tokenizer, vocab_size, stop_ids)
    compiled = worker.compile(json.dumps(schema if kind == "json_schema" else _DEFAULT_OBJECT), timeout_s)
    size = info.vocab_size
    return lambda: GrammarConstraint(compiled, size)


def cancel_compile(tokenizer: Any) -> None:
    """Stop the compile running for `tokenizer` (its client left); it raises CompileCancelled."""
    _WORKERS.cancel(tokenizer)


def close_compiler(tokenizer: Any) -> None:
    """Stop `tokenizer`'s compiler process, if one was started (the engine is closing)."""
    _WORKERS.close(tokenizer)
