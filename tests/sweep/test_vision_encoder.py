"""The ViT encoder matches HF transformers' ViTModel on the same weights and loads/saves safetensors."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from engine.native.vision import VisionConfig, VisionEncoder, load_vision_encoder, save_vision_encoder


@pytest.fixture(scope="module")
def hf_vit(tmp_path_factory):
    transformers = pytest.importorskip("transformers")
    cfg = transformers.ViTConfig(hidden_size=48, num_hidden_layers=2, num_attention_heads=4,
                                 intermediate_size=96, image_size=32, patch_size=8)
    torch.manual_seed(0)
    model = transformers.ViTModel(cfg).eval()
    with torch.no_grad():  # HF initialises cls/pos near zero; make them matter
        model.embeddings.cls_token.normal_()
        model.embeddings.position_embeddings.normal_()
    folder = tmp_path_factory.mktemp("hf-vit")
    model.save_pretrained(folder)
    return model, folder


def test_matches_hf_vit_hidden_states(hf_vit):
    model, folder = hf_vit
    ours = load_vision_encoder(folder)
    pixels = torch.randn(3, 3, 32, 32)
    with torch.no_grad():
        ref = model(pixel_values=pixels).last_hidden_state
        out = ours(pixels)
    assert out.shape == (3, 17, 48)  # 16 patches + class token
    assert torch.allclose(out, ref, rtol=1e-4, atol=1e-5)


def test_save_load_roundtrip_in_our_names(tmp_path: Path):
    cfg = VisionConfig(image_size=32, patch_size=8, hidden_size=32, num_layers=1, num_heads=2,
                       intermediate_size=64, class_token=False)
    model = VisionEncoder(cfg).init_random(seed=3).eval()
    save_vision_encoder(model, tmp_path)
    loaded = load_vision_encoder(tmp_path)
    pixels = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        assert torch.equal(model(pixels), loaded(pixels))
    assert loaded(pixels).shape == (2, 16, 32)


def test_missing_tensor_is_named(tmp_path: Path):
    cfg = VisionConfig(image_size=32, patch_size=8, hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64)
    save_vision_encoder(VisionEncoder(cfg), tmp_path)
    tensors = load_file(str(tmp_path / "model.safetensors"))
    del tensors["blocks.0.mlp.fc2.weight"]
    save_file(tensors, str(tmp_path / "model.safetensors"))
    with pytest.raises(ValueError, match=r"blocks\.0\.mlp\.fc2\.weight"):
        load_vision_encoder(tmp_path)


def test_unknown_config_field_is_named(tmp_path: Path):
    (tmp_path / "config.json").write_text(json.dumps({"hidden_size": 32, "num_heads": 2, "window": 7}))
    with pytest.raises(ValueError, match="window"):
        load_vision_encoder(tmp_path)
