"""VisionConfig: the shape of a ViT-style encoder, from a dict, our config.json or an HF ViTConfig."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

# HF ViTConfig field -> ours; other HF fields (dropout, initializer range...) do not change inference.
_HF_FIELDS = {
    "image_size": "image_size", "patch_size": "patch_size", "num_channels": "num_channels",
    "hidden_size": "hidden_size", "num_hidden_layers": "num_layers", "num_attention_heads": "num_heads",
    "intermediate_size": "intermediate_size", "layer_norm_eps": "layer_norm_eps", "qkv_bias": "qkv_bias",
}


@dataclass(frozen=True)
class VisionConfig:
    image_size: int = 224
    patch_size: int = 16
    num_channels: int = 3
    hidden_size: int = 768
    num_layers: int = 12
    num_heads: int = 12
    intermediate_size: int = 3072
    layer_norm_eps: float = 1e-6
    qkv_bias: bool = True
    class_token: bool = True
    final_norm: bool = True

    def __post_init__(self) -> None:
        if self.image_size % self.patch_size:
            raise ValueError(f"image_size {self.image_size} is not a multiple of patch_size {self.patch_size}")
        if self.hidden_size % self.num_heads:
            raise ValueError(f"hidden_size {self.hidden_size} is not divisible by num_heads {self.num_heads}")

    @property
    def num_patches(self) -> int:
        return (self.image_size // self.patch_size) ** 2

    @property
    def seq_len(self) -> int:
        return self.num_patches + int(self.class_token)

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_heads

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "vision config") -> "VisionConfig":
        """Our own field names; unknown fields are an error naming them."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {', '.join(unknown)}; valid: {', '.join(sorted(names))}")
        return cls(**data)

    @classmethod
    def from_hf(cls, data: dict[str, Any], where: str = "config.json") -> "VisionConfig":
        """An HF ViTConfig dict (model_type 'vit'); only exact-GELU ViTs are supported."""
        act = data.get("hidden_act", "gelu")
        if act != "gelu":
            raise ValueError(f"{where}: hidden_act {act!r} is not supported (only 'gelu')")
        values = {ours: data[hf] for hf, ours in _HF_FIELDS.items() if hf in data}
        return cls(**values, class_token=True, final_norm=True)
