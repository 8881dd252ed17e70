"""Tiny random checkpoints: a Llama in HF layout (config.json, safetensors, tokenizer.json) for fast
engine sweeps; written with safetensors and tokenizers only."""
from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import save_file
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

HIDDEN, FFN, LAYERS, HEADS, KV_HEADS, MAX_POS = 64, 128, 2, 4, 2, 1024


def write_word_tokenizer(folder: Path, vocab_size: int) -> Path:
    """A word-level tokenizer.json (w0..wN) for tiny checkpoints whose vocabulary is below 256."""
    tok = Tokenizer(models.WordLevel({f"w{i}": i for i in range(vocab_size)}, unk_token="w0"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.save(str(folder / "tokenizer.json"))
    return folder


def write_tiny_llama(folder: Path, seed: int = 0, hidden: int = HIDDEN, ffn: int = FFN, layers: int = LAYERS) -> Path:
    """A random Llama (default: the tiny test dimensions; benchmarks pass larger ones)."""
    folder.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, show_progress=False, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(["the quick brown fox jumps over the lazy dog"] * 4, trainer)
    tok.save(str(folder / "tokenizer.json"))
    vocab = tok.get_vocab_size()
    head_dim = hidden // HEADS
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": vocab,
              "hidden_size": hidden, "intermediate_size": ffn, "num_hidden_layers": layers,
              "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS, "max_position_embeddings": MAX_POS,
              "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": True,
              "bos_token_id": 1, "eos_token_id": 2}
    (folder / "config.json").write_text(json.dumps(config))
    g = torch.Generator().manual_seed(seed)
    rnd = lambda *shape: torch.randn(*shape, generator=g) * 0.05  # noqa: E731
    t = {"model.embed_tokens.weight": rnd(vocab, hidden), "model.norm.weight": torch.ones(hidden)}
    for i in range(layers):
        p = f"model.layers.{i}."
        t |= {p + "self_attn.q_proj.weight": rnd(HEADS * head_dim, hidden),
              p + "self_attn.k_proj.weight": rnd(KV_HEADS * head_dim, hidden),
              p + "self_attn.v_proj.weight": rnd(KV_HEADS * head_dim, hidden),
              p + "self_attn.o_proj.weight": rnd(hidden, HEADS * head_dim),
              p + "mlp.gate_proj.weight": rnd(ffn, hidden), p + "mlp.up_proj.weight": rnd(ffn, hidden),
              p + "mlp.down_proj.weight": rnd(hidden, ffn),
              p + "input_layernorm.weight": torch.ones(hidden), p + "post_attention_layernorm.weight": torch.ones(hidden)}
    save_file(t, str(folder / "model.safetensors"))
    return folder
