"""Model classes by architecture name (GGUF `general.architecture` or normalised HF `architectures[0]`)."""
from __future__ import annotations

import importlib

from engine.base import EngineError

# architecture name -> "module:Class"; adding a model family is one module plus one line here.
MODEL_CLASSES: dict[str, str] = {
    "llama": "engine.native.models.llama:LlamaModel",
    "qwen2": "engine.native.models.llama:LlamaModel",  # Llama with q/k/v biases
    "DeepseekV3ForCausalLM": "engine.native.models.deepseek_v3:DeepseekV3Model",  # MLA + DeepSeekMoE + MTP
}


def check_architecture(arch: str | None, source: str) -> None:
    """Fail early, naming the architecture, when no model class handles it."""
    if arch not in MODEL_CLASSES:
        raise EngineError(f"{source}: unsupported architecture {arch!r}; supported: {', '.join(sorted(MODEL_CLASSES))}")


def model_class(arch: str):
    check_architecture(arch, "model")
    module_name, _, class_name = MODEL_CLASSES[arch].partition(":")
    return getattr(importlib.import_module(module_name), class_name)
