"""Model and engine configuration dataclasses."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ModelConfig:
    """Architecture facts read from GGUF metadata or an HF config.json."""

    architecture: str  # normalised family name, e.g. "llama", "qwen2"
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    rope_theta: float = 10000.0
    rms_norm_eps: float = 1e-5
    max_position: int = 2048
    tie_embeddings: bool = True
    qkv_bias: bool = False
    qk_norm: bool = False  # Qwen3: RMSNorm over each q and k head before RoPE
    sliding_window: int | None = None  # Mistral: a token attends to itself and the window - 1 before it
    sliding_layers: tuple[int, ...] | None = None  # layers the window applies to (None: every layer)
    bos_token_id: int | None = None
    eos_token_ids: tuple[int, ...] = ()
    extra: dict = field(default_factory=dict)  # architecture-specific fields (e.g. MLA ranks, MoE sizes)

    def window_of(self, layer: int) -> int | None:
        """The attention window of one layer (None: full causal attention)."""
        if self.sliding_window is None or (self.sliding_layers is not None and layer not in self.sliding_layers):
            return None
        return self.sliding_window


@dataclass
class EngineConfig:
    """Scheduler and cache settings for one LLMEngine."""

    kv_cache_bytes: int = 1 << 30
    block_size: int = 16
    max_num_seqs: int = 256
    max_num_batched_tokens: int = 2048  # token budget per step (prefill chunks + decodes)
    max_model_len: int | None = None  # defaults to the model's context length
    enable_prefix_caching: bool = True
    max_prefill_chunk: int | None = None  # cap one sequence's prefill chunk (None: only the step budget)
