"""Decode sweep: points are requests per data-parallel rank, each with a KV context of `context` tokens
filled (prefilled) before timing; then whole decode steps are timed. With `[parallel] ep = N` and
`dp_attention = true` each of the N ranks runs attention for R requests of its own (the reference's
requests-per-DP-rank), so one engine holds N x R."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.base import SamplingParams
from sweep.acceptance import DEFINITION as ACCEPTANCE_DEFINITION
from sweep.acceptance import expected_acceptance_length
from sweep.config import SweepConfig
from sweep.devices import check_device, gpus_note
from sweep.engine_session import PromptMaker, build_engine, describe, drain
from sweep.runner import Measurement, Outcome
from sweep.timing import maybe_profile, median, timed

DEFINITIONS = {
    "latency_ms": "median wall time of one decode step over all R requests, device-synchronised (ms)",
    "tokens_per_s_per_user": "tokens accepted per request per step / median step time (nextn=0: 1 / step time)",
    "output_tokens_per_s_per_gpu": "R x tokens accepted per request per step / median step time, per device",
    "intvty": "= tokens_per_s_per_user, under InferenceX's name (1000 / median_tpot_ms)",
    "median_tpot_ms": "median step time / tokens accepted per request per step (vLLM's TPOT of a decode step)",
    "output_tput_per_gpu": "= output_tokens_per_s_per_gpu, under InferenceX's name",
}
FILL_MODES = ("unique", "shared_prefix")


class DecodeSweep:
    kind = "decode"

    def __init__(self, cfg: SweepConfig, device: str) -> None:
        if not cfg.context:
            raise ValueError(f"{cfg.path}: decode needs a KV context length (config 'context' or --context)")
        self.fill = cfg.engine.get("decode_fill", "unique")
        if self.fill not in FILL_MODES:
            raise ValueError(f"{cfg.path}: engine.decode_fill must be one of {FILL_MODES}, got {self.fill!r}")
        self.cfg, self.device = cfg, check_device(device)
        self.per_point = cfg.ep if cfg.dp_attention else 1  # engine requests per point's R
        self.engine = None
        self._shared: list[int] = []

    def points(self) -> list[dict[str, Any]]:
        c = self.cfg
        return [{"requests": r, "context": c.context, "nextn": c.nextn, "accept": c.accept if c.nextn else None}
                for r in c.points]

    def setup(self) -> None:
        c = self.cfg
        steps = c.warmup_steps + c.measured_steps
        self.tokens_per_step = c.nextn + 1  # the most a request can gain per step
        # ignore_eos: random prompts may sample EOS; a decode sweep keeps every request running every step.
        most = max(c.points) * self.per_point
        options: dict[str, Any] = {"max_num_seqs": most, "ignore_eos": True}
        if "max_num_batched_tokens" not in c.engine:
            options["max_num_batched_tokens"] = max(2048, most * self.tokens_per_step)
        if c.nextn:
            self.engine = self._build_spec_engine(options)
        else:
            self.engine = build_engine(c, self.device, **options)
        if c.context + steps * self.tokens_per_step + 8 >= self.engine.config.max_model_len:
            raise ValueError(f"context {c.context} + {steps} steps exceeds the model's length "
                             f"{self.engine.config.max_model_len}")
        self.prompts = PromptMaker(self.engine.model_config.vocab_size, c.seed)

    def _build_spec_engine(self, options: dict[str, Any]):
        """The built-in engine with MTP speculative decoding and seeded synthetic acceptance."""
        from engine.base import EngineError
        try:
            from engine.native.spec_engine import SpecLLMEngine
        except ImportError:
            raise ValueError(f"--nextn {self.cfg.nextn}: this build of the engine has no speculative decoding") from None
        try:
            return build_engine(self.cfg, self.device, engine_cls=SpecLLMEngine, nextn=self.cfg.nextn,
                                synthetic_acceptance=self.cfg.accept, spec_seed=self.cfg.acceptance_seed, **options)
        except EngineError as exc:
            if "MTP" not in str(exc):
                raise
            raise ValueError(
                f"--nextn {self.cfg.nextn}: model {self.cfg.model!r} has no draft (MTP) heads, so it cannot run "
                f"speculative decoding; use nextn 0 or a DeepSeek-V3-style checkpoint with MTP weights ({exc})") from None

    def describe(self) -> dict[str, Any]:
        return {**describe(self.engine), "decode_fill": self.fill} if self.engine else {}

    def _fill(self, requests: int, context: int, steps: int) -> list[str]:
        """Prefill R prompts of `context` tokens; returns once every request is decoding."""
        kv = self.engine.stats()
        need = requests * -(-(context + steps * self.tokens_per_step + 8) // kv["block_size"])
        if self.fill == "unique" and need > kv["num_blocks"]:
            raise MemoryError(f"KV cache out of memory: {requests} requests x {context} tokens need {need} blocks, "
                              f"the cache has {kv['num_blocks']}")
        shared = None
        if self.fill == "shared_prefix":  # one prefix per sweep: later points hit the prefix cache
            if len(self._shared) != context - 16:
                self._shared = self.prompts.tokens(context - 16)
            shared = self._shared
        ids = []
        for _ in range(requests):
            prompt = shared + self.prompts.tokens(16) if shared else self.prompts.tokens(context)
            ids.append(self.engine.add_request(prompt, SamplingParams(max_tokens=steps * self.tokens_per_step + 8)))
        pending = set(ids)
        while pending:
            out = self.engine.step()
            for o in out.outputs:
                if o.finished:  # before every request is decoding: the cache cannot hold them all at once
                    raise MemoryError(f"KV cache out of memory: cannot hold {requests} requests of {context} "
                                      f"tokens at once ({o.error or 'a request finished during the fill'})")
                pending.discard(o.request_id)
        return ids

    def _decode_step(self, requests: int) -> tuple[float, int, tuple[int, int] | None]:
        """(seconds, tokens emitted, (drafts, accepted drafts) or None) for one step over all R requests."""
        elapsed, out = timed(self.engine.step, self.device)
        st = out.stats
        if st.num_preempted or st.num_seqs != requests or st.num_prefill_tokens or st.num_decode_tokens < requests:
            raise MemoryError(f"KV cache out of memory: step ran {st.num_seqs} of {requests} requests "
                              f"({st.num_preempted} preempted, {st.num_prefill_tokens} prefill tokens)")
        spec = getattr(self.engine, "last_step_spec", None) if self.cfg.nextn else None
        return elapsed, st.num_decode_tokens, (spec.num_drafts, spec.num_accepted_tokens) if spec else None

    def measure(self, point: dict[str, Any], trace_path: Path | None) -> Measurement:
        r, ctx = point["requests"] * self.per_point, point["context"]
        try:
            self._fill(r, ctx, self.cfg.warmup_steps + self.cfg.measured_steps)
            for _ in range(self.cfg.warmup_steps):
                self._decode_step(r)
            with maybe_profile(trace_path):
                steps = [self._decode_step(r) for _ in range(self.cfg.measured_steps)]
        finally:
            drain(self.engine)  # a failed point must not leave requests behind for the next one
        times = [s[0] for s in steps]
        tokens = sum(s[1] for s in steps)
        info: dict[str, Any] = {"tokens_per_request_per_step": tokens / (r * len(steps))}
        if self.cfg.nextn:
            drafts = sum(s[2][0] for s in steps if s[2])
            accepted = sum(s[2][1] for s in steps if s[2])
            info |= {"drafts": drafts, "accepted_drafts": accepted,
                     "acceptance_length": 1 + accepted / drafts if drafts else None}
        return Measurement(times, work={"requests": r}, info=info)

    def summarise(self, point, step_times_s, work, infos, gpus) -> Outcome:
        lat = median(step_times_s)
        # Tokens accepted per request per step, averaged over ranks (each ran the same R).
        accepted = sum(i["tokens_per_request_per_step"] for i in infos) / len(infos)
        per_gpu = work["requests"] * accepted / lat / gpus
        metrics = {
            "latency_ms": lat * 1e3,
            "tokens_per_s_per_user": accepted / lat,
            "output_tokens_per_s_per_gpu": per_gpu,
            "output_tokens_per_s": per_gpu * gpus,
            "intvty": accepted / lat,  # the field's names for the same numbers (docs/sweeps.md)
            "median_tpot_ms": lat * 1e3 / accepted,
            "output_tput_per_gpu": per_gpu,
            "tokens_per_request_per_step": accepted,
            "kv_tokens_per_rank": point["requests"] * point["context"],
            "step_times_ms": [t * 1e3 for t in step_times_s],
        }
        defs = dict(DEFINITIONS)
        if point["nextn"]:
            if point["accept"] is not None:  # synthetic acceptance; without it, real greedy acceptance
                metrics["acceptance_length_target"] = expected_acceptance_length(point["accept"], point["nextn"])
            drafts = sum(i["drafts"] for i in infos)
            accepted_drafts = sum(i["accepted_drafts"] for i in infos)
            metrics["acceptance_length"] = 1 + accepted_drafts / drafts if drafts else None
            metrics["drafts"] = drafts
            defs["acceptance_length"] = "realised: 1 + accepted drafts / draft rounds over the measured steps"
            defs["acceptance"] = ACCEPTANCE_DEFINITION
        return Outcome(metrics, defs, {"gpus": gpus, "gpus_note": gpus_note(self.device, gpus),
                                       "per_user": "one request"},
                       cost_rates={"output_tokens": per_gpu})

    def close(self) -> None:
        """Idempotent; a tensor/expert-parallel engine releases its worker ranks here."""
        if self.engine is not None:
            self.engine.close()
        self.engine = None
