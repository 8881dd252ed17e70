"""DeepSeek-V3 config.json -> validated arguments; unknown fields and unsupported values fail by name."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from engine.base import EngineError

# Fields we read. Everything else in config.json must be in IGNORED_FIELDS or loading fails, naming it,
# so a checkpoint that relies on a feature we do not implement is never run silently wrong.
REQUIRED_FIELDS = (
    "vocab_size", "hidden_size", "intermediate_size", "moe_intermediate_size", "num_hidden_layers",
    "num_attention_heads", "n_routed_experts", "num_experts_per_tok", "kv_lora_rank",
    "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim",
)
OPTIONAL_FIELDS = (
    "q_lora_rank", "n_shared_experts", "routed_scaling_factor", "n_group", "topk_group",
    "first_k_dense_replace", "norm_topk_prob", "rms_norm_eps", "max_position_embeddings", "rope_theta",
    "rope_scaling", "rope_parameters", "rope_interleave", "num_nextn_predict_layers", "num_mtp_layers",
    "tie_word_embeddings", "bos_token_id", "eos_token_id", "hidden_act", "scoring_func", "topk_method",
    "moe_layer_freq", "attention_bias", "quantization_config", "num_key_value_heads",
)
# Training-only, bookkeeping or derived fields (HF writes head_dim/qk_head_dim; DeepSeek's release writes
# ep_size, seq_aux, aux_loss_alpha, auto_map).
IGNORED_FIELDS = frozenset({
    "architectures", "model_type", "torch_dtype", "dtype", "transformers_version", "auto_map", "use_cache",
    "initializer_range", "pad_token_id", "attention_dropout", "pretraining_tp", "output_router_logits",
    "aux_loss_alpha", "seq_aux", "ep_size", "head_dim", "qk_head_dim", "router_aux_loss_coef",
    "_name_or_path", "name_or_path", "output_hidden_states", "output_attentions", "return_dict",
    "chunk_size_feed_forward", "is_encoder_decoder", "tie_encoder_decoder", "id2label", "label2id",
    "problem_type", "tokenizer_class", "use_return_dict",
})
KNOWN_ROPE_KEYS = frozenset({"type", "rope_type", "rope_theta", "factor", "original_max_position_embeddings",
                             "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor", "truncate"})


@dataclass(frozen=True)
class DeepseekV3Args:
    """Architecture facts of one DeepSeek-V3-style checkpoint (names as in config.json)."""

    vocab_size: int
    hidden_size: int
    intermediate_size: int
    moe_intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    n_routed_experts: int
    num_experts_per_tok: int
    kv_lora_rank: int
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int
    q_lora_rank: int | None = None
    n_shared_experts: int = 0
    routed_scaling_factor: float = 1.0
    n_group: int = 1
    topk_group: int = 1
    first_k_dense_replace: int = 0
    norm_topk_prob: bool = True
    rms_norm_eps: float = 1e-6
    max_position_embeddings: int = 4096
    rope: dict[str, Any] = field(default_factory=dict)
    rope_interleave: bool = True
    num_nextn_predict_layers: int = 0
    tie_word_embeddings: bool = False
    bos_token_id: int | None = None
    eos_token_ids: tuple[int, ...] = ()
    fp8_block: tuple[int, int] | None = None

    @property
    def qk_head_dim(self) -> int:
        return self.qk_nope_head_dim + self.qk_rope_head_dim

    @property
    def latent_width(self) -> int:
        """Values cached per token per layer in the absorbed form: compressed latent + shared rope key."""
        return self.kv_lora_rank + self.qk_rope_head_dim

    @property
    def full_kv_width(self) -> int:
        """Values per token per layer if K and V were cached per head (the layout MLA avoids)."""
        return self.num_attention_heads * (self.qk_head_dim + self.v_head_dim)

    def softmax_scale(self) -> float:
        # As HF `yarn_apply_mscale` / DeepSeek's reference: scale *= mscale(factor, mscale_all_dim)^2.
        scale = self.qk_head_dim ** -0.5
        if self.rope.get("rope_type", "default") != "default" and self.rope.get("mscale_all_dim"):
            m = yarn_mscale(float(self.rope["factor"]), float(self.rope["mscale_all_dim"]))
            scale *= m * m
        return scale


def yarn_mscale(scale: float, mscale: float = 1.0) -> float:
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def _fail(source: str, msg: str) -> EngineError:
    return EngineError(f"{source}: {msg}")


def parse_config(cfg: dict[str, Any], source: str = "config.json") -> DeepseekV3Args:
    """Validate a DeepSeek-V3 config dict; every problem names the field."""
    known = set(REQUIRED_FIELDS) | set(OPTIONAL_FIELDS) | IGNORED_FIELDS
    unknown = sorted(k for k in cfg if k not in known)
    if unknown:
        raise _fail(source, f"unknown config field(s) {', '.join(repr(k) for k in unknown)} for DeepseekV3ForCausalLM")
    missing = [k for k in REQUIRED_FIELDS if cfg.get(k) is None]
    if missing:
        raise _fail(source, f"missing config field(s) {', '.join(repr(k) for k in missing)}")
    expect = {"hidden_act": "silu", "scoring_func": "sigmoid", "topk_method": "noaux_tc", "moe_layer_freq": 1,
              "attention_bias": False}
    for k, v in expect.items():
        if k in cfg and cfg[k] != v:
            raise _fail(source, f"config field {k!r}={cfg[k]!r} is not supported (only {v!r})")
    rope = _parse_rope(cfg, source)
    fp8_block = _parse_quant(cfg.get("quantization_config"), source)
    eos = cfg.get("eos_token_id")
    eos_ids = tuple(int(e) for e in eos) if isinstance(eos, list) else ((int(eos),) if eos is not None else ())
    nextn = cfg.get("num_nextn_predict_layers", cfg.get("num_mtp_layers", 0)) or 0
    args = DeepseekV3Args(
        **{k: int(cfg[k]) for k in REQUIRED_FIELDS},
        q_lora_rank=int(cfg["q_lora_rank"]) if cfg.get("q_lora_rank") else None,
        n_shared_experts=int(cfg.get("n_shared_experts") or 0),
        routed_scaling_factor=float(cfg.get("routed_scaling_factor", 1.0)),
        n_group=int(cfg.get("n_group") or 1),
        topk_group=int(cfg.get("topk_group") or 1),
        first_k_dense_replace=int(cfg.get("first_k_dense_replace") or 0),
        norm_topk_prob=bool(cfg.get("norm_topk_prob", True)),
        rms_norm_eps=float(cfg.get("rms_norm_eps", 1e-6)),
        max_position_embeddings=int(cfg.get("max_position_embeddings", 4096)),
        rope=rope,
        rope_interleave=bool(cfg.get("rope_interleave", True)),
        num_nextn_predict_layers=int(nextn),
        tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)),
        bos_token_id=cfg.get("bos_token_id"),
        eos_token_ids=eos_ids,
        fp8_block=fp8_block,
    )
    if args.n_routed_experts % args.n_group:
        raise _fail(source, f"n_routed_experts={args.n_routed_experts} is not divisible by n_group={args.n_group}")
    if not 1 <= args.topk_group <= args.n_group:
        raise _fail(source, f"topk_group={args.topk_group} must be in [1, n_group={args.n_group}]")
    if args.num_experts_per_tok > args.topk_group * (args.n_routed_experts // args.n_group):
        raise _fail(source, "num_experts_per_tok exceeds the experts in the selected groups")
    if args.qk_rope_head_dim % 2:
        raise _fail(source, f"qk_rope_head_dim={args.qk_rope_head_dim} must be even")
    return args


def _parse_rope(cfg: dict[str, Any], source: str) -> dict[str, Any]:
    # DeepSeek's release writes rope_theta + rope_scaling{"type": "yarn", ...}; HF 5.x writes rope_parameters.
    rope = dict(cfg.get("rope_parameters") or cfg.get("rope_scaling") or {})
    bad = sorted(set(rope) - KNOWN_ROPE_KEYS)
    if bad:
        raise _fail(source, f"unknown rope field(s) {', '.join(repr(k) for k in bad)}")
    rope_type = rope.pop("type", None) or rope.get("rope_type") or "default"
    rope["rope_type"] = rope_type
    rope.setdefault("rope_theta", float(cfg.get("rope_theta", 10000.0)))
    if rope_type not in ("default", "yarn"):
        raise _fail(source, f"rope type {rope_type!r} is not supported (default or yarn)")
    if rope_type == "yarn":
        rope.setdefault("original_max_position_embeddings", cfg.get("max_position_embeddings", 4096))
        if rope.get("factor") is None:
            rope["factor"] = cfg.get("max_position_embeddings", 4096) / rope["original_max_position_embeddings"]
    return rope


def _parse_quant(q: dict[str, Any] | None, source: str) -> tuple[int, int] | None:
    if not q:
        return None
    if q.get("quant_method") != "fp8" or q.get("fmt", "e4m3") != "e4m3":
        raise _fail(source, f"quantization_config {q!r} is not supported (block-scaled fp8 e4m3 only)")
    block = q.get("weight_block_size") or [128, 128]
    return int(block[0]), int(block[1])
