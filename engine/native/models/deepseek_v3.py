"""DeepSeek-V3-style decoder: MLA attention with a latent KV cache, DeepSeekMoE, MTP draft modules.

Load with `DeepseekV3Model.from_folder(path)` or, inside the engine, `from_weights(config, tensors, ...)`.
The model's KV layout is one latent row (kv_lora_rank + qk_rope_head_dim values) per token per layer,
for the main layers and then the MTP modules (which attend over their own cached positions).

Expert parallelism (`--ep N`, see deepseek_v3_moe for the dispatch): the main layers' routed experts are
split over the ranks; attention, dense layers, shared experts, embedding and head are replicated. The MTP
modules live whole on rank 0 only: the drafter runs there (SpecLLMEngine), so drafting needs no
collectives and no extra messages, at the price of one MoE layer's experts held whole on rank 0.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

from engine.native.attention import AttentionMetadata, KVCacheSpec
from engine.native.models.deepseek_v3_config import DeepseekV3Args, parse_config
from engine.native.models.deepseek_v3_loader import build_state, read_folder
from engine.native.models.deepseek_v3_mla import MLAttention, rope_inv_freq
from engine.native.models.deepseek_v3_moe import MoE, DenseMLP

# The model registry (engine/native/models/__init__.py): family name -> the other names it answers to.
ARCHITECTURES = {"DeepseekV3ForCausalLM": ("deepseek_v3",)}
MODEL_CLASS = "DeepseekV3Model"

FP32_PARAMS = ("gate.weight", "gate.e_score_correction_bias")  # routing stays fp32 (HF keeps these fp32 too)


class DecoderLayer(nn.Module):
    def __init__(self, args: DeepseekV3Args, moe: bool, num_local_experts: int | None = None):
        super().__init__()
        self.eps, self.d = args.rms_norm_eps, args.hidden_size
        self.input_layernorm = nn.Parameter(torch.empty(args.hidden_size), False)
        self.post_attention_layernorm = nn.Parameter(torch.empty(args.hidden_size), False)
        self.self_attn = MLAttention(args)
        self.mlp = MoE(args, num_local_experts) if moe else DenseMLP(args.hidden_size, args.intermediate_size)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, attn: AttentionMetadata) -> torch.Tensor:
        if x.shape[0]:  # a DP-attention rank without rows this step skips attention, joins the MoE
            x = x + self.self_attn(F.rms_norm(x, (self.d,), self.input_layernorm, self.eps), cos, sin, attn)
        return x + self.mlp(F.rms_norm(x, (self.d,), self.post_attention_layernorm, self.eps))


class MTPModule(nn.Module):
    """One multi-token-prediction module: [enorm(embed(next token)); hnorm(hidden)] -> eh_proj -> block."""

    def __init__(self, args: DeepseekV3Args):
        super().__init__()
        d = args.hidden_size
        self.enorm = nn.Parameter(torch.empty(d), False)
        self.hnorm = nn.Parameter(torch.empty(d), False)
        self.eh_proj = nn.Parameter(torch.empty(d, 2 * d), False)
        self.shared_head_norm = nn.Parameter(torch.empty(d), False)
        self.block = DecoderLayer(args, moe=True)


class DeepseekV3Model(nn.Module):
    """Main model plus MTP modules; forward returns final-norm hidden states, compute_logits the vocab logits."""

    FP32_WEIGHTS = FP32_PARAMS  # the engine's weight cache keeps these fp32 whatever the model dtype
    PARALLEL_MODE = "ep"  # the launch flag that splits this model over ranks (shard.load_shard)
    LOGITS_NEED_PEERS = False  # the head is replicated: rank 0 computes logits alone

    def __init__(self, args: DeepseekV3Args, num_mtp: int, ep_size: int = 1):
        super().__init__()
        self.args = args
        d = args.hidden_size
        self.embed_tokens = nn.Parameter(torch.empty(args.vocab_size, d), False)
        self.norm = nn.Parameter(torch.empty(d), False)
        if not args.tie_word_embeddings:
            self.lm_head = nn.Parameter(torch.empty(args.vocab_size, d), False)
        self.layers = nn.ModuleList(DecoderLayer(args, i >= args.first_k_dense_replace,
                                                 args.n_routed_experts // ep_size)
                                    for i in range(args.num_hidden_layers))
        self.mtp = nn.ModuleList(MTPModule(args) for _ in range(num_mtp))
        inv_freq, self.rope_scale = rope_inv_freq(args)
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    # ---- construction -------------------------------------------------------------------------------------
    @classmethod
    def from_state(cls, args: DeepseekV3Args, state: dict[str, torch.Tensor], dtype: torch.dtype = torch.float32,
                   device: torch.device | str = "cpu", parallel=None) -> "DeepseekV3Model":
        """Build from tensors already in our layout (see `convert_weights`); with `parallel` (a ParallelGroup)
        `state` is this rank's shard_weights() and the main layers' MoE combine over the group."""
        n_mtp = len({k.split(".")[1] for k in state if k.startswith("mtp.")})
        state = {k: v.to(device=device, dtype=torch.float32 if k.endswith(FP32_PARAMS) else dtype).contiguous()
                 for k, v in state.items()}
        size = 1 if parallel is None else parallel.size
        with torch.device("meta"):
            model = cls(args, n_mtp, size)
        model.load_state_dict(state, strict=True, assign=True)
        model.inv_freq = rope_inv_freq(args)[0].to(device)
        if parallel is not None:
            for layer in model.layers:
                if isinstance(layer.mlp, MoE):
                    layer.mlp.ep, layer.mlp.expert_start = parallel, parallel.rank * layer.mlp.w_gate_up.shape[0]
        return model.eval()

    @classmethod
    def from_folder(cls, folder: str | Path, dtype: torch.dtype = torch.float32,
                    device: torch.device | str = "cpu") -> "DeepseekV3Model":
        """Load an HF-style folder (config.json + safetensors, FP8 block-scaled weights dequantised)."""
        cfg, tensors = read_folder(folder)
        args = parse_config(cfg, str(Path(folder) / "config.json"))
        state, _ = build_state(tensors, args, str(folder), lambda k, v: v)
        return cls.from_state(args, state, dtype, device)

    @staticmethod
    def args_of(config) -> DeepseekV3Args:
        """Our arguments from the engine's ModelConfig (the raw config.json rides in `extra["hf_config"]`)."""
        raw = (config.extra or {}).get("hf_config")
        if raw is None:
            raise ValueError("DeepseekV3 needs the raw config.json in ModelConfig.extra['hf_config']")
        return parse_config(raw, "config.json")

    @classmethod
    def convert_weights(cls, config, hf: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """Checkpoint tensors -> our layout (FP8 dequantised, experts stacked); the engine caches the result."""
        state, _ = build_state(hf, cls.args_of(config), "checkpoint", lambda k, v: v)
        return state

    @classmethod
    def from_weights(cls, config, tensors: dict[str, torch.Tensor], dtype: torch.dtype,
                     device: torch.device, parallel=None) -> "DeepseekV3Model":
        """Engine entry point: tensors come from `convert_weights` (possibly via the weight cache), or with
        `parallel` this rank's shard_weights()."""
        model = cls.from_state(cls.args_of(config), tensors, dtype, device, parallel)
        model.config = config  # the engine sizes each rank's KV cache from it (the same on every rank)
        return model

    # ---- expert parallelism -------------------------------------------------------------------------------
    @classmethod
    def shard_weights(cls, config, get: Callable[[str], object], names: list[str], rank: int,
                      size: int) -> dict[str, torch.Tensor]:
        """This rank's tensors: experts [rank * E/N, (rank + 1) * E/N) of each main MoE layer (get(name) may be
        a lazy safetensors slice: only those experts are read), everything else whole; the MTP modules on
        rank 0 only (the drafter runs there)."""
        experts = cls.args_of(config).n_routed_experts
        if experts % size:
            raise ValueError(f"--ep {size}: {experts} routed experts do not split over {size} ranks")
        n = experts // size
        out: dict[str, torch.Tensor] = {}
        for name in names:
            if name.startswith("mtp."):
                if rank == 0:
                    out[name] = get(name)[:]
            elif name.endswith(("mlp.w_gate_up", "mlp.w_down")):
                out[name] = get(name)[rank * n:(rank + 1) * n]
            else:
                out[name] = get(name)[:]
        return {k: v.contiguous() for k, v in out.items()}

    def set_dp_rows(self, rows: list[int], rank: int) -> None:
        """DP attention: this step's rows per rank (x holds rank `rank`'s); the main MoE layers gather them all."""
        for layer in self.layers:
            if isinstance(layer.mlp, MoE):
                layer.mlp.dp_rows, layer.mlp.dp_start = rows, sum(rows[:rank])

    def routed_expert_bytes(self) -> int:
        """Bytes of the main layers' routed experts this model holds (1/N of them per rank under --ep N)."""
        return sum(p.numel() * p.element_size() for layer in self.layers if isinstance(layer.mlp, MoE)
                   for p in (layer.mlp.w_gate_up, layer.mlp.w_down))

    @classmethod
    def kv_cache_spec(cls, config) -> KVCacheSpec:
        """One latent row per token per layer; MTP modules get layers after the main ones."""
        args = cls.args_of(config)
        return KVCacheSpec(num_layers=args.num_hidden_layers + args.num_nextn_predict_layers,
                           k_shape=(args.latent_width,), v_shape=None)

    def bind_kv_cache(self, caches: list[tuple[torch.Tensor, torch.Tensor | None]]) -> None:
        attns = [l.self_attn for l in self.layers] + [m.block.self_attn for m in self.mtp]
        if len(caches) < len(attns):
            raise ValueError(f"need {len(attns)} cache layers, got {len(caches)}")
        for a, (k, _) in zip(attns, caches):
            a.cache = k

    # ---- forward ------------------------------------------------------------------------------------------
    def rope(self, positions: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        freqs = positions.float()[:, None] * self.inv_freq[None]
        cos, sin = freqs.cos() * self.rope_scale, freqs.sin() * self.rope_scale
        return cos.to(dtype)[:, None], sin.to(dtype)[:, None]

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor, attn: AttentionMetadata) -> torch.Tensor:
        x = F.embedding(input_ids, self.embed_tokens)
        cos, sin = self.rope(positions, x.dtype)
        for layer in self.layers:
            x = layer(x, cos, sin, attn)
        return F.rms_norm(x, (self.args.hidden_size,), self.norm, self.args.rms_norm_eps)

    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        return F.linear(hidden, self.embed_tokens if self.args.tie_word_embeddings else self.lm_head)

    @property
    def num_mtp(self) -> int:
        return len(self.mtp)

    def mtp_forward(self, k: int, input_ids: torch.Tensor, positions: torch.Tensor, prev_hidden: torch.Tensor,
                    attn: AttentionMetadata) -> torch.Tensor:
        """MTP module k at `positions`: token ids are the tokens one step ahead of prev_hidden's positions."""
        m, a = self.mtp[k], self.args
        d, eps = a.hidden_size, a.rms_norm_eps
        e = F.rms_norm(F.embedding(input_ids, self.embed_tokens), (d,), m.enorm, eps)
        h = F.rms_norm(prev_hidden, (d,), m.hnorm, eps)
        x = F.linear(torch.cat([e, h], dim=-1), m.eh_proj)
        cos, sin = self.rope(positions, x.dtype)
        return m.block(x, cos, sin, attn)

    def mtp_logits(self, k: int, hidden: torch.Tensor) -> torch.Tensor:
        a = self.args
        return self.compute_logits(F.rms_norm(hidden, (a.hidden_size,), self.mtp[k].shared_head_norm, a.rms_norm_eps))

    def kv_bytes_per_token(self, dtype: torch.dtype = torch.bfloat16, include_mtp: bool = False) -> dict[str, int]:
        """Latent-cache bytes per token vs a per-head K/V layout of the same model."""
        a, size = self.args, torch.empty((), dtype=dtype).element_size()
        n = a.num_hidden_layers + (self.num_mtp if include_mtp else 0)
        return {"latent": n * a.latent_width * size, "full_kv": n * a.full_kv_width * size}
