"""LLMEngine: the step-level API (add_request / step / abort) over scheduler, runner, sampler, detokenizer."""
from __future__ import annotations

import itertools
import math
import sys
import time
from pathlib import Path
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import torch

from engine.base import EngineError, SamplingParams
from engine.native import int4_weights
from engine.native.block_manager import BlockManager
from engine.native.config import EngineConfig
from engine.native.detokenizer import Detokenizer
from engine.native.device import dtype_name, resolve_device, resolve_dtype, set_threads
from engine.native.kv_quant import resolve_kv_dtype
from engine.native.model_registry import resolve_model
from engine.native.ranks import check_parallel, device_for, join_parallel
from engine.native.sampler import sample
from engine.native.scheduler import ScheduledBatch, Scheduler
from engine.native.sequence import Sequence
from engine.native.tokenizer import Tokenizer, generation_eos_ids
from engine.native.shard import build_shard, make_runner

if TYPE_CHECKING:
    from engine.native.spec_decode import SpecStats


# Edits one request's float32 logits row in place before sampling: (output token ids so far, row) -> None.
LogitsProcessor = Callable[[list[int], torch.Tensor], None]


@dataclass
class RequestOutput:
    """A request's progress after a step: new_text is what may be shown now (stop-string prefixes held back)."""

    request_id: str
    prompt_token_ids: list[int]
    token_ids: list[int]
    new_token_ids: list[int]
    text: str
    new_text: str
    finished: bool
    finish_reason: str | None = None  # "stop" | "length" | "error"
    error: str | None = None
    logprobs: list[float] | None = None
    num_cached_tokens: int = 0
    arrival_time: float = 0.0
    first_token_time: float | None = None
    finish_time: float | None = None
    spec_stats: SpecStats | None = None  # a finished request's draft accounting (SpecLLMEngine only)


@dataclass
class StepStats:
    num_seqs: int = 0
    num_prefill_tokens: int = 0  # prompt tokens computed this step (excludes prefix-cache hits)
    num_cached_tokens: int = 0  # prompt tokens served from the prefix cache for sequences admitted this step
    num_decode_tokens: int = 0
    num_preempted: int = 0
    elapsed_s: float = 0.0


@dataclass
class StepOutput:
    outputs: list[RequestOutput] = field(default_factory=list)
    stats: StepStats = field(default_factory=StepStats)


class LLMEngine:
    """Owns the model and the KV cache; every call runs on the caller's thread."""

    def __init__(self, model: str | None = None, device: str | None = None, dtype: str | None = None,
                 threads: int | None = None, kv_cache_gib: float = 1.0, block_size: int = 16,
                 max_num_seqs: int = 256, max_num_batched_tokens: int = 2048, max_model_len: int | None = None,
                 enable_prefix_caching: bool = True, max_prefill_chunk: int | None = None,
                 ignore_eos: bool = False, int4: bool | None = None, tp: int = 1, ep: int = 1,
                 dp_attention: bool = False, dist_timeout_s: float = 300.0,
                 chat_template_kwargs: dict | None = None, kv_cache_dtype: str = "auto"):
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)
        self.threads = set_threads(threads, self.device)
        resolved = resolve_model(model)
        t0 = time.perf_counter()
        self.parallel = None
        size, mode = check_parallel(tp, ep, dp_attention)
        self.parallel_sizes = {"tensor_parallel": tp, "expert_parallel": ep, "dp_attention": dp_attention}
        enable_prefix_caching = enable_prefix_caching and not dp_attention  # a hit's rows may be on another rank
        kv_cache_bytes = int(kv_cache_gib * (1 << 30))
        if resolve_kv_dtype(kv_cache_dtype, self.dtype) == torch.int8 and size > 1:
            raise EngineError("kv_cache_dtype int8 runs on one rank (not yet with --tp or --ep)")
        if size > 1:  # this process is rank 0 of a torchrun launch (tensor_parallel.py)
            from engine.native.tensor_parallel import Hello
            self.device = device_for(self.device)
            self.parallel = join_parallel(size, self.device, dist_timeout_s, mode)
            self.parallel.send(Hello.of(resolved, self.dtype, kv_cache_bytes, block_size, mode, dp_attention))
        shard = build_shard(resolved, self.dtype, self.device, kv_cache_bytes, block_size, self.parallel, mode,
                            kv_cache_dtype)
        weights, self.model, self.kv = shard.weights, shard.model, shard.kv
        self.model_name, self.model_path, self.model_sha256 = resolved.name, resolved.path, weights.sha256
        self.model_config = weights.config
        self.int4_bytes = self._enable_int4(int4, weights.tensors)
        del weights.tensors
        self.tokenizer = Tokenizer(weights.tokenizer_json, weights.chat_template, weights.special_tokens,
                                   model=resolved.name, template_kwargs=chat_template_kwargs)
        self.load_s = time.perf_counter() - t0
        self.loaded_from_cache = weights.from_cache
        ctx = self.model_config.max_position
        if max_model_len is not None and max_model_len > ctx:
            raise EngineError(f"max_model_len {max_model_len} exceeds the model's context length {ctx}")
        self.config = EngineConfig(kv_cache_bytes=kv_cache_bytes, block_size=block_size,
                                   max_num_seqs=max_num_seqs, max_num_batched_tokens=max_num_batched_tokens,
                                   max_model_len=max_model_len or ctx, enable_prefix_caching=enable_prefix_caching,
                                   max_prefill_chunk=max_prefill_chunk)
        self.kv_bytes_per_token = self.kv.spec.bytes_per_token(self.kv.dtype)  # all layers, K and V
        print(f"KV cache: {self.kv_bytes_per_token} bytes per token, {self.kv.num_blocks * block_size} tokens in "
              f"{self.kv.bytes / (1 << 20):.1f} MiB", file=sys.stderr)
        self.block_manager = BlockManager(self.kv.num_blocks, block_size, enable_prefix_caching,
                                          on_allocate=self.kv.zero_blocks)
        self.scheduler = Scheduler(self.config, self.block_manager)
        self.runner = make_runner(self.model, self.kv, self.device, self.parallel, dp_attention)
        # ignore_eos is for benchmarks that need a fixed number of output tokens.
        # generation_config.json's end-of-sequence ids win over config.json's, as in transformers.
        eos = generation_eos_ids(Path(resolved.path)) or self.model_config.eos_token_ids
        self.eos_ids = set() if ignore_eos else set(eos)
        self._seqs: dict[str, Sequence] = {}
        self._detok: dict[str, Detokenizer] = {}
        self._pending: list[RequestOutput] = []  # outputs produced outside step() (rejections, aborts)
        self._processors: dict[str, LogitsProcessor] = {}
        self._ids = itertools.count()

    def _enable_int4(self, want: bool | None, tensors: dict) -> int:
        """Multiply with the model file's own 4-bit codes at small batch sizes (int4_weights); None = when possible."""
        reasons = []
        if self.parallel is not None:
            reasons.append("parallel ranks multiply with dense weight shards")
        if self.device.type != "cpu":
            reasons.append(f"the int4 kernel runs on the CPU, not {self.device.type}")
        if self.dtype != torch.bfloat16:
            reasons.append(f"it needs bf16 activations, not {dtype_name(self.dtype)}")
        if not hasattr(self.model, "enable_int4") or not int4_weights.available():
            reasons.append("this model class or torch build has no int4 path")
        if not any(k.endswith(int4_weights.SUFFIXES[0]) for k in tensors):
            reasons.append("the model file has no Q4_0/Q4_1 matrices")
        if reasons:
            if want:
                raise EngineError("int4 weights were asked for, but " + "; ".join(reasons))
            return 0
        return self.model.enable_int4(tensors) if want is not False else 0

    # ---- requests -------------------------------------------------------------------------------
    def add_request(self, prompt_token_ids: list[int], params: SamplingParams | None = None,
                    request_id: str | None = None, logits_processor: LogitsProcessor | None = None) -> str:
        """Queue a request; a request that can never run finishes with an error on the next step.
        logits_processor(output_token_ids, logits_row) may edit the request's float32 logits row in place
        before each token is sampled (structured output, banned tokens). Temperatures below
        GREEDY_TEMPERATURE_FLOOR (1e-5) are greedy; a non-finite sampling value is a ValueError naming it."""
        params = params or SamplingParams()
        for name in ("temperature", "top_p"):  # SamplingParams checks these, unless it was built around that
            value = getattr(params, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"sampling parameter {name} must be a finite number, got {value!r}")
        rid = request_id if request_id is not None else f"req-{next(self._ids)}"
        if rid in self._seqs:
            raise ValueError(f"request id {rid!r} is already in use")
        seq = Sequence(rid, prompt_token_ids, params)
        self._seqs[rid] = seq
        if logits_processor is not None:
            self._processors[rid] = logits_processor
        self._detok[rid] = Detokenizer(self.tokenizer, params.stop)
        vocab = self.model_config.vocab_size
        limit = self.config.max_model_len
        error = None
        if not prompt_token_ids:
            error = "prompt is empty"
        elif any(not 0 <= t < vocab for t in prompt_token_ids):
            error = f"prompt has token ids outside the vocabulary (0..{vocab - 1})"
        elif len(prompt_token_ids) >= limit:
            error = (f"prompt has {len(prompt_token_ids)} tokens; the context length is {limit}, "
                     f"which leaves no room to generate")
        if error:
            self._pending.append(self._fail(seq, error))
        else:
            self.scheduler.add(seq)
        return rid

    def _fail(self, seq: Sequence, error: str) -> RequestOutput:
        """Finish one request with an error and free its blocks; nothing else is touched."""
        self.scheduler.finish(seq)
        seq.finish_reason, seq.error, seq.finish_time = "error", error, time.perf_counter()
        return self._finish_output(seq, "")

    def abort(self, request_id: str) -> bool:
        """Stop a request now and free its KV blocks; False when it is unknown or already finished."""
        seq = self._seqs.get(request_id)
        if seq is None or seq.is_finished or seq.finish_reason:
            return False
        self._pending.append(self._fail(seq, "aborted"))
        return True

    def abort_all(self) -> int:
        """Abort every queued and running request; returns how many were stopped."""
        return sum(self.abort(rid) for rid in list(self._seqs))

    def has_unfinished(self) -> bool:
        return self.scheduler.has_unfinished() or bool(self._pending)

    # ---- one step ---------------------------------------------------------------------------------
    def step(self) -> StepOutput:
        """Schedule, build each sequence's input chunk (hook), one forward, commit tokens (hook)."""
        t0 = time.perf_counter()
        out = StepOutput(outputs=self._pending)
        self._pending = []
        batch, failed = self.scheduler.schedule()
        for seq in failed:  # requests that can never fit in the KV cache (the scheduler already dropped them)
            seq.finish_reason, seq.status, seq.finish_time = "error", seq.status.FINISHED, time.perf_counter()
            out.outputs.append(self._finish_output(seq, ""))
        st = out.stats
        st.num_preempted = batch.num_preempted
        if not batch.empty:
            seqs = batch.seqs
            st.num_seqs = len(seqs)
            decoding = [seq.is_decoding for seq in seqs]
            for seq, n, dec in zip(seqs, batch.num_new_tokens, decoding):
                st.num_prefill_tokens += 0 if dec else n
                if seq.num_cached_tokens and seq.num_computed_tokens == seq.num_cached_tokens:  # admitted now
                    st.num_cached_tokens += seq.num_cached_tokens
            chunks = self._build_inputs(batch)
            hidden, first_row = self.runner.run(seqs, chunks)
            emitted = self._commit(seqs, chunks, hidden, first_row, out)
            # Decode tokens = tokens emitted by decoding requests (a speculative round emits accepted drafts + 1).
            st.num_decode_tokens = sum(e for e, dec in zip(emitted, decoding) if dec)
        st.elapsed_s = time.perf_counter() - t0
        return out

    def _build_inputs(self, batch: ScheduledBatch) -> list[list[int]]:
        """Hook: the token ids each scheduled sequence feeds this step, from its num_computed_tokens on."""
        return [seq.token_ids[seq.num_computed_tokens:seq.num_computed_tokens + n]
                for seq, n in zip(batch.seqs, batch.num_new_tokens)]

    def _commit(self, seqs: list[Sequence], chunks: list[list[int]], hidden: torch.Tensor, first_row: list[int],
                out: StepOutput) -> list[int]:
        """Hook: move each sequence past its chunk and sample a token where the chunk reached its newest
        token (a decode or a prompt's last chunk); returns the tokens emitted per sequence."""
        done = [i for i, (seq, c) in enumerate(zip(seqs, chunks)) if seq.num_computed_tokens + len(c) == seq.num_tokens]
        for seq, c in zip(seqs, chunks):
            seq.advance(len(c))
            self.block_manager.register_computed(seq)
        emitted = [0] * len(seqs)
        if done:
            logits = self._logits(hidden, [first_row[i] + len(chunks[i]) - 1 for i in done])
            for i, ok in zip(done, self._sample_and_emit([seqs[i] for i in done], logits, out)):
                emitted[i] = int(ok)
        return emitted

    def _logits(self, hidden: torch.Tensor, rows: list[int]) -> torch.Tensor:
        """float32 CPU logits of the given hidden rows (per-request generators are CPU generators)."""
        return self.runner.logits(hidden, rows)

    def _sample_and_emit(self, seqs: list[Sequence], logits: torch.Tensor, out: StepOutput) -> list[bool]:
        """Sample one token per row and emit it; a request whose processor or row fails is failed alone."""
        errors = self._process_logits(logits, seqs) if self._processors else {}
        tokens, logprobs, bad_rows = sample(logits, seqs)
        errors = {**{i: f"sampling failed: {e}" for i, e in bad_rows.items()}, **errors}
        sampled = []
        for k, seq in enumerate(seqs):
            if k in errors:
                out.outputs.append(self._fail(seq, errors[k]))
            else:
                self._emit(seq, tokens[k], logprobs[k] if logprobs else None, out)
            sampled.append(k not in errors)
        return sampled

    def _process_logits(self, logits: torch.Tensor, seqs: list[Sequence]) -> dict[int, str]:
        """Run each request's logits processor on its row; returns {row: error} for processors that raised."""
        errors = {}
        # The logits may be inference tensors, which accept in-place writes only in inference mode.
        with torch.inference_mode(logits.is_inference()):
            for r, seq in enumerate(seqs):
                proc = self._processors.get(seq.request_id)
                if proc is not None:
                    try:
                        proc(seq.output_token_ids, logits[r])
                    except Exception as exc:  # a user's processor: its failure is that request's failure
                        errors[r] = f"logits processor failed: {type(exc).__name__}: {exc}"
        return errors

    def _emit(self, seq: Sequence, tok: int, logprob: float | None, out: StepOutput) -> bool:
        """Append one token and report it; False once the request has finished."""
        seq.append_token(tok, logprob)
        o = self._after_token(seq, tok)
        out.outputs.append(o)
        return not o.finished

    def _after_token(self, seq: Sequence, tok: int) -> RequestOutput:
        p = seq.params
        reason = None
        is_stop_token = tok in self.eos_ids or tok in p.stop_token_ids
        if is_stop_token:
            reason = "stop"
        elif seq.num_output_tokens >= p.max_tokens or seq.num_tokens >= self.config.max_model_len:
            reason = "length"
        detok = self._detok[seq.request_id]
        new_text, hit = detok.feed([] if is_stop_token else [tok], final=reason is not None)
        if hit:
            reason = "stop"
        if reason is None:
            return RequestOutput(seq.request_id, seq.token_ids[:seq.num_prompt_tokens], seq.output_token_ids, [tok],
                                 detok.text, new_text, False, logprobs=seq.logprobs,
                                 arrival_time=seq.arrival_time, first_token_time=seq.first_token_time)
        seq.finish_reason = reason
        seq.finish_time = time.perf_counter()
        self.scheduler.finish(seq)
        return self._finish_output(seq, new_text, [tok])

    def _finish_output(self, seq: Sequence, new_text: str, new_ids: list[int] | None = None) -> RequestOutput:
        detok = self._detok.pop(seq.request_id, None)
        self._seqs.pop(seq.request_id, None)
        self._processors.pop(seq.request_id, None)
        seq.status = seq.status.FINISHED
        return RequestOutput(seq.request_id, seq.token_ids[:seq.num_prompt_tokens], seq.output_token_ids,
                             new_ids or [], detok.text if detok else "", new_text, True,
                             finish_reason=seq.finish_reason or "error", error=seq.error, logprobs=seq.logprobs,
                             num_cached_tokens=seq.num_cached_tokens,
                             arrival_time=seq.arrival_time, first_token_time=seq.first_token_time,
                             finish_time=seq.finish_time)

    def close(self) -> None:
        """Release the other parallel ranks (they leave their loop); nothing to do on one rank."""
        if self.parallel is not None:
            self.runner.close()

    # ---- introspection ----------------------------------------------------------------------------
    def stats(self) -> dict:
        """Live counters: requests, KV blocks, prefix cache, preemptions (the server's /metrics reads these)."""
        bm, sched = self.block_manager, self.scheduler
        return {"requests_running": len(sched.running), "requests_waiting": len(sched.waiting),
                "num_blocks": bm.num_blocks, "blocks_free": bm.num_free, "blocks_used": bm.num_used,
                "blocks_cached": len(bm.free),  # free blocks still holding a prefix that a later request may hit
                "block_size": bm.block_size, "kv_cache_bytes": self.kv.bytes,
                "prefix_cache_queries": bm.queries, "prefix_cache_hits": bm.hits,
                "prefix_cache_hit_rate": bm.prefix_hit_rate(), "preemptions": sched.total_preemptions,
                "recomputed_tokens": sched.total_recomputed_tokens}

    def describe(self) -> dict:
        return {"model": self.model_name, "model_path": str(self.model_path), "model_sha256": self.model_sha256,
                "architecture": self.model_config.architecture, "device": str(self.device),
                "dtype": dtype_name(self.dtype), "threads": self.threads,
                "kv_cache_bytes": self.kv.bytes, "kv_cache_tokens": self.kv.num_blocks * self.config.block_size,
                "kv_bytes_per_token": self.kv_bytes_per_token,
                "kv_cache_dtype": "int8" if self.kv.dtype == torch.int8 else dtype_name(self.kv.dtype),
                "chat_template": self.tokenizer.template.origin,
                "chat_template_kwargs": self.tokenizer.template.default_kwargs,
                "block_size": self.config.block_size, "max_model_len": self.config.max_model_len,
                "max_num_seqs": self.config.max_num_seqs,
                "max_num_batched_tokens": self.config.max_num_batched_tokens,
                "prefix_caching": self.config.enable_prefix_caching, "int4_weights": self.int4_bytes > 0,
                **self.parallel_sizes,
                "torch": torch.__version__}
