"""Llama-family decoder: RMSNorm, RoPE, GQA, SwiGLU. Also Qwen2/2.5 (q/k/v biases), Qwen3 (RMSNorm on each q and
k head) and Mistral (sliding-window attention); Qwen3-MoE builds on it (qwen3_moe.py)."""
from __future__ import annotations

import dataclasses
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

from engine.native import int4_weights, kernels, one_row_step, packed_weights
from engine.native.attention import AttentionMetadata, KVCacheSpec, compiled_kernels_for, paged_attention
from engine.native.config import ModelConfig
from engine.native.kv_quant import quantize_rows

# The model registry (engine/native/models/__init__.py): family name -> the other names it answers to.
ARCHITECTURES = {"llama": ("LlamaForCausalLM", "MistralForCausalLM", "mistral"), "qwen2": ("Qwen2ForCausalLM",),
                 "qwen3": ("Qwen3ForCausalLM",)}
MODEL_CLASS = "LlamaModel"


def _rope_tables(config: ModelConfig, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    # Same arithmetic as HF's default rope (fp32 inv_freq, cos/sin of cat(freqs, freqs)).
    d = config.head_dim
    inv_freq = 1.0 / (config.rope_theta ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    pos = torch.arange(config.max_position, dtype=torch.float32)
    freqs = torch.outer(pos, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(device), emb.sin().to(device)


class LlamaLayer(nn.Module):
    def __init__(self, config: ModelConfig, w: dict[str, torch.Tensor], index: int = 0):
        super().__init__()
        self.c = config
        self.window = config.window_of(index)
        self.q_size = config.num_heads * config.head_dim
        self.kv_size = config.num_kv_heads * config.head_dim
        self.qkv_w = nn.Parameter(w["qkv_w"], False)
        self.qkv_b = nn.Parameter(w["qkv_b"], False) if "qkv_b" in w else None
        self.o_w = nn.Parameter(w["o_w"], False)
        # absent in a mixture-of-experts layer (qwen3_moe.py), whose experts replace the MLP
        self.gate_up_w = nn.Parameter(w["gate_up_w"], False) if "gate_up_w" in w else None
        self.down_w = nn.Parameter(w["down_w"], False) if "down_w" in w else None
        self.q_norm = nn.Parameter(w["q_norm"], False) if "q_norm" in w else None
        self.k_norm = nn.Parameter(w["k_norm"], False) if "k_norm" in w else None
        self.in_norm = nn.Parameter(w["in_norm"], False)
        self.post_norm = nn.Parameter(w["post_norm"], False)
        self.kv_cache: torch.Tensor | None = None  # [2 * kv_heads, slots, head_dim]
        self.int4: dict[str, int4_weights.Int4Linear] = {}  # 4-bit forms of the matrices, for steps of few rows
        self.packed: dict[str, packed_weights.PackedLinear] = {}  # oneDNN-packed bf16 forms, for larger steps
        self.vnni: dict[str, int4_weights.VnniLinear] = {}  # codes x 8-bit activations, 13+ rows, no AMX
        self.tp = None  # a ParallelGroup when this layer holds one tensor-parallel shard
        # Compiled ops (engine/native/kernels; bind_kv_cache decides): RoPE with the cache write in any dtype;
        # in bf16 also residual add with RMSNorm and SiLU times up (float32 keeps the torch ops, whose rounding
        # its greedy output must keep bitwise).
        self.fused_rope = False
        self.fused_norm = False

    def _linear(self, x: torch.Tensor, name: str, bias: torch.Tensor | None = None) -> torch.Tensor:
        rows = x.shape[0]
        if rows <= int4_weights.MAX_ROWS:
            q = self.int4.get(name)
        else:
            q = self.vnni.get(name) if self.vnni and int4_weights.vnni_enabled() else None
        if q is None:
            p = self.packed.get(name) if self.packed and packed_weights.enabled() else None
            return F.linear(x, getattr(self, name), bias) if p is None else p(x, bias)
        return q(x) if bias is None else q(x) + bias

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, attn: AttentionMetadata) -> torch.Tensor:
        c = self.c
        T = x.shape[0]
        h = self._norm(x, None, self.in_norm)[1]
        qkv = self._linear(h, "qkv_w", self.qkv_b)
        if self.q_norm is not None:
            qkv = self._qk_norm(qkv)
        if self.fused_rope:  # same arithmetic as below, rounded the same way, in one op instead of ten
            kernels.rope_and_cache(qkv, cos, sin, self.kv_cache, attn.slot_mapping, c.num_heads, c.num_kv_heads)
            q = qkv[:, : self.q_size].view(T, c.num_heads, c.head_dim)
            k = qkv[:, self.q_size: self.q_size + self.kv_size].view(T, c.num_kv_heads, c.head_dim)
            v = qkv[:, self.q_size + self.kv_size:].view(T, c.num_kv_heads, c.head_dim)
        else:
            qk = qkv[:, : self.q_size + self.kv_size].view(T, c.num_heads + c.num_kv_heads, c.head_dim)
            v = qkv[:, self.q_size + self.kv_size:].view(T, c.num_kv_heads, c.head_dim)
            half = c.head_dim // 2
            rot = torch.cat((-qk[..., half:], qk[..., :half]), dim=-1)
            qk = qk * cos + rot * sin
            q, k = qk[:, : c.num_heads], qk[:, c.num_heads:]
            kv = torch.cat((k, v), 1).transpose(0, 1)
            self.kv_cache.index_copy_(1, attn.slot_mapping, quantize_rows(kv) if self.kv_cache.dtype == torch.int8 else kv)
        o = paged_attention(q, k, v, self.kv_cache, attn, self.window)
        x, h = self._norm(x, self._reduce(self._linear(o, "o_w")), self.post_norm)
        return x + self._mlp(h)

    def _qk_norm(self, qkv: torch.Tensor) -> torch.Tensor:
        """Qwen3: RMSNorm over each query and key head (before RoPE); v passes through."""
        c, T = self.c, qkv.shape[0]
        q = qkv[:, : self.q_size].view(T, c.num_heads, c.head_dim)
        k = qkv[:, self.q_size: self.q_size + self.kv_size].view(T, c.num_kv_heads, c.head_dim)
        q = F.rms_norm(q, (c.head_dim,), self.q_norm, c.rms_norm_eps)
        k = F.rms_norm(k, (c.head_dim,), self.k_norm, c.rms_norm_eps)
        return torch.cat((q.reshape(T, -1), k.reshape(T, -1), qkv[:, self.q_size + self.kv_size:]), 1)

    def _mlp(self, h: torch.Tensor) -> torch.Tensor:
        """SwiGLU on the post-attention-normed rows (summed over ranks under tensor parallelism)."""
        gu = self._linear(h, "gate_up_w")
        # bf16 decode-sized steps: one op (torch's vectorised exp wins on long prefills)
        if self.fused_norm and h.shape[0] <= 64:
            a = kernels.silu_mul(gu)
        else:
            g, u = gu.chunk(2, dim=-1)
            a = F.silu(g).mul_(u)  # in place: the same bits as F.silu(g) * u without a second [T, F] tensor
        return self._reduce(self._linear(a, "down_w"))

    def _norm(self, x: torch.Tensor, residual: torch.Tensor | None,
              weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(x + residual, RMSNorm of it); one compiled op in bf16."""
        if self.fused_norm:
            return kernels.add_rms_norm(x, residual, weight, self.c.rms_norm_eps)
        if residual is not None:
            x = x + residual
        return x, F.rms_norm(x, (self.c.hidden_size,), weight, self.c.rms_norm_eps)

    def _reduce(self, partial: torch.Tensor) -> torch.Tensor:
        # o and down are row-parallel: each rank holds the columns of its own heads / FFN slice.
        return partial if self.tp is None else self.tp.all_reduce(partial)


class LlamaModel(nn.Module):
    """forward(input_ids, positions, attn) -> final-normed hidden states; compute_logits on chosen rows."""

    PARALLEL_MODE = "tp"  # the launch flag that splits this model over ranks (shard.load_shard)
    LOGITS_NEED_PEERS = True  # vocab-parallel head: every rank joins the logits gather
    LAYER = LlamaLayer  # subclasses swap in their own layer (qwen3_moe.py)
    ONE_ROW_LAYER = LlamaLayer  # the layer one_row_step's compiled stack reproduces (any other takes the loop)

    def __init__(self, config: ModelConfig, tensors: dict[str, torch.Tensor]):
        super().__init__()
        self.config = config
        self.embed = nn.Parameter(tensors["embed"], False)
        self.layers = nn.ModuleList(
            self.LAYER(config, {k.split(".", 2)[2]: v for k, v in tensors.items() if k.startswith(f"layers.{i}.")}, i)
            for i in range(config.num_layers))
        self.norm = nn.Parameter(tensors["norm"], False)
        lm_head = tensors.get("lm_head")
        self.lm_head = self.embed if (config.tie_embeddings or lm_head is None) else nn.Parameter(lm_head, False)
        self.cos: torch.Tensor | None = None
        self.sin: torch.Tensor | None = None
        self.lm_head_fp16: torch.Tensor | None = None  # single-row logits (see enable_int4)
        self.lm_head_int8: tuple[torch.Tensor, torch.Tensor] | None = None  # codes, scales (see enable_int4)
        self.lm_head_packed: packed_weights.PackedLinear | None = None  # oneDNN-packed bf16 head (enable_packed)
        self.lm_head_vnni: int4_weights.VnniLinear | None = None  # 8-bit head codes for 13+ rows (enable_int4)
        self.tp = None  # ParallelGroup under tensor parallelism (vocab-parallel embedding and logits)
        self.vocab_start, self.vocab_part = 0, config.vocab_size
        self.one_row_stack = None  # one_row_step's compiled layer stack, built on first use

    @classmethod
    def kv_cache_spec(cls, config: ModelConfig) -> KVCacheSpec:
        # K heads then V heads in one head-major tensor per layer: one gather fetches both, already in
        # the [head, seq, pos, dim] order batched matmuls want.
        return KVCacheSpec(num_layers=config.num_layers, k_shape=(2 * config.num_kv_heads, config.head_dim),
                           v_shape=None, slot_axis=1)

    # Our fused matrices and the HF matrices stacked (by rows) into each.
    FUSED = {"qkv_w": ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"), "o_w": ("self_attn.o_proj",),
             "gate_up_w": ("mlp.gate_proj", "mlp.up_proj"), "down_w": ("mlp.down_proj",)}

    @classmethod
    def convert_weights(cls, config: ModelConfig, hf: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """HF-named tensors -> this class's layout (fused q/k/v and gate/up); the weight cache stores the result
        so a cached load maps tensors straight in without copies. 4-bit parts of a matrix (int4_weights) are
        fused the same way when every source matrix has them."""
        out = {"embed": hf["model.embed_tokens.weight"], "norm": hf["model.norm.weight"]}
        if not config.tie_embeddings and "lm_head.weight" in hf:
            out["lm_head"] = hf["lm_head.weight"]
        for i in range(config.num_layers):
            p = f"model.layers.{i}."
            for ours, sources in cls.FUSED.items():
                for suffix in ("",) + int4_weights.SUFFIXES:
                    names = [f"{p}{s}.weight{suffix}" for s in sources]
                    if all(n in hf for n in names):
                        out[f"layers.{i}.{ours}{suffix}"] = torch.cat([hf[n] for n in names])
            if config.qkv_bias:
                out[f"layers.{i}.qkv_b"] = torch.cat([hf[p + f"self_attn.{x}_proj.bias"] for x in "qkv"])
            if config.qk_norm:
                out[f"layers.{i}.q_norm"] = hf[p + "self_attn.q_norm.weight"]
                out[f"layers.{i}.k_norm"] = hf[p + "self_attn.k_norm.weight"]
            out[f"layers.{i}.in_norm"] = hf[p + "input_layernorm.weight"]
            out[f"layers.{i}.post_norm"] = hf[p + "post_attention_layernorm.weight"]
        return out

    @classmethod
    def from_weights(cls, config: ModelConfig, tensors: dict[str, torch.Tensor], dtype: torch.dtype,
                     device: torch.device, parallel=None) -> "LlamaModel":
        """`tensors` are the whole model, or with `parallel` (a ParallelGroup) this rank's shard_weights()."""
        model = cls(config if parallel is None else cls.shard_config(config, parallel.size), tensors)
        model = model.to(device=device, dtype=dtype)
        if parallel is not None:
            model.tp, model.full_vocab = parallel, config.vocab_size
            model.vocab_start = _vocab_range(config.vocab_size, parallel.rank, parallel.size)[0]
            model.vocab_part = _vocab_part(config.vocab_size, parallel.size)
            for layer in model.layers:
                layer.tp = parallel
        model.set_rope(dtype, device)
        return model

    def set_rope(self, dtype: torch.dtype, device: torch.device) -> None:
        cos, sin = _rope_tables(self.config, device)
        self.cos, self.sin = cos.to(dtype).unsqueeze(1), sin.to(dtype).unsqueeze(1)

    # ---- tensor parallelism -------------------------------------------------------------------------
    @classmethod
    def shard_config(cls, config: ModelConfig, size: int) -> ModelConfig:
        """One rank's view: its query heads, the KV heads they read, its slice of the FFN."""
        hq, hkv, inter = config.num_heads, config.num_kv_heads, config.intermediate_size
        problems = []
        if hq % size:
            problems.append(f"{hq} query heads do not split over {size} ranks")
        if hkv % size and size % hkv:
            problems.append(f"{hkv} KV heads neither split over nor replicate evenly to {size} ranks")
        if inter % size:
            problems.append(f"the FFN width {inter} does not split over {size} ranks")
        if problems:
            fits = [n for n in range(1, hq + 1) if not (hq % n or (hkv % n and n % hkv) or inter % n)]
            raise ValueError(f"--tp {size}: " + "; ".join(problems) + f"; this model splits over --tp "
                             + ", ".join(map(str, fits)))
        return dataclasses.replace(config, num_heads=hq // size, num_kv_heads=max(hkv // size, 1),
                                   intermediate_size=inter // size)

    @classmethod
    def shard_weights(cls, config: ModelConfig, get: Callable[[str], object], names: list[str], rank: int,
                      size: int) -> dict[str, torch.Tensor]:
        """This rank's slices of the converted tensors. get(name) returns a tensor or a lazy safetensors slice:
        only the rows/columns named here are read. Column-parallel q/k/v and gate/up (rows of this rank's heads
        and FFN slice), row-parallel o and down (the matching columns), vocab-parallel embedding and head."""
        local = cls.shard_config(config, size)
        d, hq, hkv = config.head_dim, config.num_heads, config.num_kv_heads
        q0 = rank * local.num_heads
        # Fewer KV heads than ranks: the ranks of one KV group each keep a copy of that head.
        k0 = rank * local.num_kv_heads if hkv % size == 0 else q0 // (hq // hkv)
        nk = local.num_kv_heads
        i0, ni, inter = rank * local.intermediate_size, local.intermediate_size, config.intermediate_size
        v0, v1 = _vocab_range(config.vocab_size, rank, size)
        qkv_rows = [(q0 * d, (q0 + local.num_heads) * d), ((hq + k0) * d, (hq + k0 + nk) * d),
                    ((hq + hkv + k0) * d, (hq + hkv + k0 + nk) * d)]
        out: dict[str, torch.Tensor] = {}
        for name in names:
            if name.endswith(int4_weights.SUFFIXES):
                continue  # 4-bit parts are whole-matrix packs; tensor-parallel ranks use the dense shards
            part = name.rsplit(".", 1)[-1]
            t = get(name)
            if name in ("embed", "lm_head"):
                out[name] = t[v0:v1]
            elif part in ("qkv_w", "qkv_b"):
                out[name] = torch.cat([t[a:b] for a, b in qkv_rows])
            elif part == "gate_up_w":
                out[name] = torch.cat([t[i0:i0 + ni], t[inter + i0:inter + i0 + ni]])
            elif part == "o_w":
                out[name] = t[:, q0 * d:(q0 + local.num_heads) * d]
            elif part == "down_w":
                out[name] = t[:, i0:i0 + ni]
            else:  # norms
                out[name] = t[:]
        return {k: v.contiguous() for k, v in out.items()}

    def enable_int4(self, tensors: dict[str, torch.Tensor]) -> int:
        """Use the 4-bit forms of the layer matrices that have them (steps of up to int4_weights.MAX_ROWS
        rows); returns their bytes. The dense weights stay for larger steps."""
        total = 0
        self.one_row_stack = None
        vnni = int4_weights.vnni_wanted()  # 13+ rows without AMX: the codes against 8-bit activations
        for i, layer in enumerate(self.layers):
            for name in self.FUSED:
                parts = [tensors.get(f"layers.{i}.{name}{s}") for s in int4_weights.SUFFIXES]
                if all(p is not None for p in parts):
                    layer.int4[name] = int4_weights.Int4Linear(*parts, dtype=layer.qkv_w.dtype)
                    total += layer.int4[name].nbytes()
                    if vnni:
                        layer.vnni[name] = int4_weights.VnniLinear.from_int4(*parts)
                        total += layer.vnni[name].nbytes()
        if total and self.embed.shape[1] % 32 == 0 and kernels.load():
            # One-row logits from 8-bit codes with a scale per 32 inputs (half the bytes of fp16; a GGUF's Q8_0
            # embedding has this very form, and llama.cpp reads it so). Error per weight <= half a group step.
            self.lm_head_int8 = kernels.quantize_int8_groups(self.lm_head.detach())
            total += sum(t.numel() * t.element_size() for t in self.lm_head_int8)
            if vnni:  # the same 8-bit head codes for 13+ rows
                self.lm_head_vnni = int4_weights.VnniLinear.from_int8(*self.lm_head_int8)
                total += self.lm_head_vnni.nbytes()
            return total
        head = self.lm_head.detach().half()
        if total and bool(torch.isfinite(head).all()):
            # torch's CPU matrix-vector product reads fp16 ~1.5x faster than bf16 (one row only; from two rows
            # on fp16 is far slower). fp16 holds the bf16 values: more mantissa bits, and embedding values sit
            # well inside its range (checked above).
            self.lm_head_fp16 = head
            total += head.numel() * 2
        return total

    def enable_packed(self) -> int:
        """Pack the bf16 layer matrices and the logits head for oneDNN (packed_weights) when this model runs in bf16
        on a CPU, except those with a VNNI form; returns how many were packed. The plain weights stay (F.linear when
        packing is switched off, tests, sharding)."""
        if not packed_weights.available(self.embed.dtype, self.embed.device):
            return 0
        for layer in self.layers:
            for name in self.FUSED:
                w = getattr(layer, name, None)
                if w is not None and name not in layer.vnni:  # a VNNI form already serves every step it would
                    layer.packed[name] = packed_weights.PackedLinear(w)
        if self.lm_head_vnni is None:
            self.lm_head_packed = packed_weights.PackedLinear(self.lm_head)
        return sum(len(layer.packed) for layer in self.layers) + (self.lm_head_packed is not None)

    def bind_kv_cache(self, caches: list[tuple[torch.Tensor, torch.Tensor | None]]) -> None:
        self.one_row_stack = None
        for layer, (kv, _) in zip(self.layers, caches):
            layer.kv_cache = kv
            layer.fused_rope = compiled_kernels_for(kv)
            layer.fused_norm = layer.fused_rope and layer.in_norm.dtype == torch.bfloat16

    def _embed(self, input_ids: torch.Tensor) -> torch.Tensor:
        if self.tp is None:
            return F.embedding(input_ids, self.embed)
        # Vocab-parallel: each rank looks up the ids it holds, zeros elsewhere, and the all-reduce fills in.
        local = input_ids - self.vocab_start
        mine = (local >= 0) & (local < self.embed.shape[0])
        x = F.embedding(local.clamp(0, max(self.embed.shape[0] - 1, 0)), self.embed) * mine[:, None]
        return self.tp.all_reduce(x)

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor, attn: AttentionMetadata) -> torch.Tensor:
        one_row = one_row_step.forward(self, input_ids, positions, attn)  # one decode row: the compiled stack
        if one_row is not None:
            return one_row
        x = self._embed(input_ids)
        cos, sin = self.cos[positions], self.sin[positions]
        for layer in self.layers:
            x = layer(x, cos, sin, attn)
        return F.rms_norm(x, (self.config.hidden_size,), self.norm, self.config.rms_norm_eps)

    def compute_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        if hidden.shape[0] == 1 and self.lm_head_int8 is not None:
            return kernels.int8_matvec(hidden, *self.lm_head_int8)
        if hidden.shape[0] == 1 and self.lm_head_fp16 is not None:
            return F.linear(hidden.half(), self.lm_head_fp16)
        rows = hidden.shape[0]
        if self.lm_head_vnni is not None and int4_weights.vnni_enabled() and rows > int4_weights.MAX_ROWS:
            logits = self.lm_head_vnni(hidden)
        elif self.lm_head_packed is not None and packed_weights.enabled():
            logits = self.lm_head_packed(hidden)
        else:
            logits = F.linear(hidden, self.lm_head)
        if self.tp is None:
            return logits
        # Every rank's vocab slice padded to one width, gathered in rank order, the padding cut off.
        logits = F.pad(logits, (0, self.vocab_part - logits.shape[1]))
        return self.tp.all_gather_cols(logits)[:, :self.full_vocab]


def _vocab_part(vocab: int, size: int) -> int:
    return -(-vocab // size)


def _vocab_range(vocab: int, rank: int, size: int) -> tuple[int, int]:
    part = _vocab_part(vocab, size)
    return min(rank * part, vocab), min((rank + 1) * part, vocab)
