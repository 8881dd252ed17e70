"""The one safetensors folder reader: every shard's tensors, and a clear error for a folder without any."""
from __future__ import annotations

import pytest
import torch
from safetensors.torch import save_file

from engine.base import EngineError
from engine.native.hf_weights import read_hf_tensors
from engine.native.models.deepseek_v3_loader import read_folder
from engine.native.vision import load_vision_encoder


def test_every_shard_is_read(tmp_path):
    save_file({"a": torch.ones(2)}, str(tmp_path / "model-00001-of-00002.safetensors"))
    save_file({"b": torch.zeros(3)}, str(tmp_path / "model-00002-of-00002.safetensors"))
    tensors = read_hf_tensors(str(tmp_path))
    assert sorted(tensors) == ["a", "b"] and tensors["b"].shape == (3,)


@pytest.mark.parametrize("reader", [read_hf_tensors, read_folder, load_vision_encoder])
def test_a_folder_without_safetensors_names_itself(tmp_path, reader):
    (tmp_path / "config.json").write_text('{"model_type": "vit", "image_size": 32, "patch_size": 16, '
                                          '"hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2, '
                                          '"intermediate_size": 16}')
    with pytest.raises(EngineError, match=rf"{tmp_path}: no \*\.safetensors files"):
        reader(tmp_path)
