"""A ViT-style vision encoder (as used by multimodal models): patch-embedding conv, optional class
token, learned position embedding, pre-norm transformer blocks, final LayerNorm.

Loads safetensors in this package's own names (timm-style) or HF `ViTModel` names; random
initialisation is allowed for timing. Used by the encoder sweep.
"""
from __future__ import annotations

from engine.native.vision.config import VisionConfig
from engine.native.vision.loader import load_vision_encoder, read_vision_config, save_vision_encoder
from engine.native.vision.model import VisionEncoder

__all__ = ["VisionConfig", "VisionEncoder", "load_vision_encoder", "read_vision_config", "save_vision_encoder"]
