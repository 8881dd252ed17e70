"""Load / save a VisionEncoder from a folder with config.json + *.safetensors (ours or HF ViTModel)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import torch
from safetensors.torch import save_file

from engine.native.hf_weights import read_hf_tensors
from engine.native.vision.config import VisionConfig
from engine.native.vision.model import VisionEncoder

_HF_LAYER = re.compile(r"^encoder\.layer\.(\d+)\.(.+)$")
_HF_LAYER_NAMES = {
    "layernorm_before": "norm1", "layernorm_after": "norm2", "attention.output.dense": "attn.proj",
    "intermediate.dense": "mlp.fc1", "output.dense": "mlp.fc2",
}
_HF_TOP = {
    "embeddings.cls_token": "cls_token", "embeddings.position_embeddings": "pos_embed",
    "embeddings.patch_embeddings.projection.weight": "patch_embed.weight",
    "embeddings.patch_embeddings.projection.bias": "patch_embed.bias",
    "layernorm.weight": "norm.weight", "layernorm.bias": "norm.bias",
}


def _read_config(folder: Path) -> tuple[VisionConfig, bool]:
    path = folder / "config.json"
    if not path.exists():
        raise FileNotFoundError(f"{path}: missing (a vision encoder folder needs config.json + *.safetensors)")
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("model_type") == "vit":
        return VisionConfig.from_hf(data, str(path)), True
    return VisionConfig.from_dict(data, str(path)), False


def read_vision_config(folder: str | Path) -> VisionConfig:
    """The VisionConfig of a saved encoder folder (ours or HF ViT), without loading tensors."""
    return _read_config(Path(folder))[0]


def _from_hf(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """HF ViTModel names -> ours; q, k, v fused into one qkv projection; pooler dropped."""
    out: dict[str, torch.Tensor] = {}
    qkv: dict[tuple[int, str, str], torch.Tensor] = {}
    for name, t in tensors.items():
        name = name.removeprefix("vit.")
        if name.startswith(("pooler.", "classifier.")):
            continue
        if name in _HF_TOP:
            out[_HF_TOP[name]] = t
            continue
        m = _HF_LAYER.match(name)
        if not m:
            out[name] = t  # reported as unexpected below
            continue
        layer, rest = int(m.group(1)), m.group(2)
        qkv_m = re.match(r"attention\.attention\.(query|key|value)\.(weight|bias)$", rest)
        if qkv_m:
            qkv[(layer, qkv_m.group(2), qkv_m.group(1))] = t
            continue
        stem, _, leaf = rest.rpartition(".")
        out[f"blocks.{layer}.{_HF_LAYER_NAMES.get(stem, stem)}.{leaf}"] = t
    for layer, kind in sorted({(k[0], k[1]) for k in qkv}):
        parts = [qkv.get((layer, kind, p)) for p in ("query", "key", "value")]
        if any(p is None for p in parts):
            raise ValueError(f"layer {layer}: query/key/value {kind} tensors incomplete")
        out[f"blocks.{layer}.attn.qkv.{kind}"] = torch.cat(parts, dim=0)  # type: ignore[arg-type]
    return out


def load_vision_encoder(folder: str | Path, dtype: torch.dtype = torch.float32,
                        device: str = "cpu") -> VisionEncoder:
    """Build the encoder from config.json + safetensors; missing or unexpected tensors are named."""
    folder = Path(folder)
    cfg, is_hf = _read_config(folder)
    tensors = read_hf_tensors(folder)
    if is_hf:
        tensors = _from_hf(tensors)
    model = VisionEncoder(cfg)
    expected = model.state_dict()
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    if missing or unexpected:
        raise ValueError(f"{folder}: missing tensor(s) {missing[:8]}, unexpected tensor(s) {unexpected[:8]}")
    for name, t in tensors.items():
        if tuple(t.shape) != tuple(expected[name].shape):
            raise ValueError(f"{folder}: tensor {name} has shape {tuple(t.shape)}, "
                             f"config implies {tuple(expected[name].shape)}")
    model.load_state_dict(tensors)
    return model.to(device=device, dtype=dtype).eval()


def save_vision_encoder(model: VisionEncoder, folder: str | Path) -> Path:
    """Write config.json + model.safetensors in our own names."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(model.config.to_dict(), indent=2), encoding="utf-8")
    state = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    save_file(state, str(folder / "model.safetensors"))
    return folder
