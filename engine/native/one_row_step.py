"""One decode row through the compiled layer stack (kernels/decode_step.cpp) instead of the Python layer loop.

A single-stream decode step of a small model spends about as long in Python around each of its ~400 torch calls
as in the weight matmuls themselves; the compiled stack makes the same calls, in the same order, from C++, so the
tokens are bitwise those of the loop (tests/engine_native/test_one_row_step.py). It serves a Llama-family model
in bf16 on a CPU whose every layer has 4-bit weights (int4_weights), the fused bf16 norm and RoPE kernels, no
biases, q/k norms or sliding window, on one rank, for a step that is one decode row read in place from the paged
cache. Anything else takes the Python loop. HARNESS_DECODE_STEP=0 turns it off (A/B, fallback).
"""
from __future__ import annotations

import os

import torch
import torch.nn.functional as F

from engine.native import kernels
from engine.native.attention import AttentionMetadata, reads_in_place

MATRICES = ("qkv_w", "o_w", "gate_up_w", "down_w")  # in decode_step.cpp's per-layer order, each after its norm

_enabled = os.environ.get("HARNESS_DECODE_STEP", "1") != "0"


def enabled() -> bool:
    return _enabled


def set_enabled(on: bool) -> None:
    """Use the compiled stack for one-row steps (True) or the Python loop (benchmarks compare both)."""
    global _enabled
    _enabled = on


class OneRowStack:
    """The flat tensor lists decode_layers takes, gathered once from a model's layers."""

    def __init__(self, model):
        c = model.config
        self.layers: list[torch.Tensor] = []
        for layer in model.layers:
            q = layer.int4
            self.layers += [layer.in_norm, q["qkv_w"].packed, q["qkv_w"].scale_zero, q["o_w"].packed,
                            q["o_w"].scale_zero, layer.post_norm, q["gate_up_w"].packed, q["gate_up_w"].scale_zero,
                            q["down_w"].packed, q["down_w"].scale_zero]
        self.kv_caches = [layer.kv_cache for layer in model.layers]
        self.num_heads, self.num_kv_heads, self.eps = c.num_heads, c.num_kv_heads, c.rms_norm_eps
        self.scale = c.head_dim ** -0.5

    @staticmethod
    def supports(model) -> bool:
        """Whether every layer has what the compiled stack assumes (see the module docstring)."""
        layer_type = getattr(model, "ONE_ROW_LAYER", None)  # the layer class whose forward the stack reproduces
        if layer_type is None or model.tp is not None or not model.layers or not kernels.load():
            return False
        for layer in model.layers:
            if (type(layer) is not layer_type or not layer.fused_norm or not layer.fused_rope
                    or layer.qkv_b is not None or layer.q_norm is not None or layer.window is not None
                    or any(name not in layer.int4 for name in MATRICES)):
                return False
        return True

    def __call__(self, model, input_ids: torch.Tensor, positions: torch.Tensor,
                 attn: AttentionMetadata) -> torch.Tensor:
        x = F.embedding(input_ids, model.embed)
        cos, sin = model.cos[positions], model.sin[positions]
        x = kernels.decode_layers(x, cos, sin, self.layers, self.kv_caches, attn.slot_mapping, attn.decode_blocks,
                                  attn.decode_lens, attn.block_size, self.scale, self.num_heads, self.num_kv_heads,
                                  self.eps)
        return F.rms_norm(x, (model.config.hidden_size,), model.norm, model.config.rms_norm_eps)


_UNBUILT = object()


def forward(model, input_ids: torch.Tensor, positions: torch.Tensor, attn: AttentionMetadata) -> torch.Tensor | None:
    """The final-normed hidden row of a one-row decode step through the compiled stack, or None where it does not
    apply (the caller runs its Python loop). The stack is built on first use and kept on the model
    (model.one_row_stack; set it back to None when the layers' weights or caches change)."""
    if not _enabled or attn.num_decode != 1 or attn.prefills or input_ids.shape[0] != 1:
        return None
    stack = getattr(model, "one_row_stack", None)
    if stack is None:
        stack = model.one_row_stack = OneRowStack(model) if OneRowStack.supports(model) else _UNBUILT
    if stack is _UNBUILT or not reads_in_place(stack.kv_caches[0], attn):
        return None
    return stack(model, input_ids, positions, attn)
