// The whole layer stack of a Llama-family model for ONE decode row, in one call.
//
// On a one-row step of a small model (SmolLM2-135M: 30 layers, ~1 GFLOP per token) the weight matmuls take a few
// milliseconds and the Python around them (a dozen torch calls per layer, each with its argument parsing,
// dispatch and allocation) as much again. This op runs the same ops in the same order as LlamaLayer.forward's
// bf16 int4 path (models/llama.py), so its tokens are bitwise those of the Python loop, with each op called
// from C++: torch's int4 matmul and this library's norm, RoPE + cache write, paged attention and SiLU kernels,
// through the dispatcher (they live in paged_decode.cpp; their handles are looked up once).
//
// Per layer, `layers` holds 10 tensors: in_norm, qkv codes, qkv scale/zero, o codes, o scale/zero, post_norm,
// gate_up codes, gate_up scale/zero, down codes, down scale/zero (int4_weights.Int4Linear's packed form).
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

namespace {

constexpr int64_t PER_LAYER = 10;
constexpr int64_t INT4_GROUP = 32;

using NormSig = std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const std::optional<at::Tensor>&,
                                                   const at::Tensor&, double);
using RopeSig = void(at::Tensor&, const at::Tensor&, const at::Tensor&, at::Tensor&, const at::Tensor&, int64_t,
                     int64_t);
using AttnSig = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, int64_t, double,
                           bool);
using SiluSig = at::Tensor(const at::Tensor&);

template <typename Sig>
c10::TypedOperatorHandle<Sig> handle(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Sig>();
}

struct Ops {
  c10::TypedOperatorHandle<NormSig> norm = handle<NormSig>("harness_native::add_rms_norm");
  c10::TypedOperatorHandle<RopeSig> rope = handle<RopeSig>("harness_native::rope_and_cache");
  c10::TypedOperatorHandle<AttnSig> attn = handle<AttnSig>("harness_native::paged_decode_attention");
  c10::TypedOperatorHandle<SiluSig> silu = handle<SiluSig>("harness_native::silu_mul");
};

const Ops& ops() {
  static const Ops o;  // first use, after the library's ops are registered
  return o;
}

inline at::Tensor int4_mm(const at::Tensor& x, const at::Tensor& codes, const at::Tensor& scale_zero) {
  return at::_weight_int4pack_mm_for_cpu(x, codes, INT4_GROUP, scale_zero);
}

// x: [1, H] bf16 embedded row; cos, sin: [1, 1, D]; kv_caches: one [2*Hkv, slots, D] bf16 tensor per layer (or
// int8 8-bit rows, paged_decode.cpp);
// slot_mapping [1], block_table [1, nb], lens [1] (int64) as AttentionMetadata holds them. Returns the hidden
// row after the last layer's residual add, before the final norm (the caller applies it, as LlamaModel does).
at::Tensor decode_layers(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, at::TensorList layers,
                         at::TensorList kv_caches, const at::Tensor& slot_mapping, const at::Tensor& block_table,
                         const at::Tensor& lens, int64_t block_size, double scale, int64_t num_heads,
                         int64_t num_kv_heads, double eps, bool tiled) {
  const int64_t L = static_cast<int64_t>(kv_caches.size());
  TORCH_CHECK(static_cast<int64_t>(layers.size()) == PER_LAYER * L, "decode_layers: ", layers.size(),
              " layer tensors for ", L, " KV caches (", PER_LAYER, " per layer expected)");
  TORCH_CHECK(x.dim() == 2 && x.size(0) == 1 && x.scalar_type() == at::kBFloat16, "decode_layers: x must be bf16 [1, H]");
  const int64_t D = cos.size(-1);  // the head size (a cache row is longer when it holds 8-bit codes and scales)
  const int64_t q_width = num_heads * D;
  const Ops& op = ops();
  at::Tensor h_in = x, mlp;  // the residual stream and the last MLP output still to be added to it
  for (int64_t i = 0; i < L; ++i) {
    const at::Tensor* w = layers.data() + PER_LAYER * i;
    at::Tensor kv = kv_caches[i];
    // x = x + mlp (torch's bf16 add), then RMSNorm with no residual: LlamaLayer.forward's order exactly.
    if (mlp.defined()) h_in = at::add(h_in, mlp);
    auto [res, h] = op.norm.call(h_in, std::nullopt, w[0], eps);
    at::Tensor qkv = int4_mm(h, w[1], w[2]);
    op.rope.call(qkv, cos, sin, kv, slot_mapping, num_heads, num_kv_heads);
    at::Tensor q = qkv.narrow(1, 0, q_width).view({1, num_heads, D});
    at::Tensor o = op.attn.call(q, kv, block_table, lens, block_size, scale, tiled);
    auto [res2, h2] = op.norm.call(res, int4_mm(o, w[3], w[4]), w[5], eps);
    mlp = int4_mm(op.silu.call(int4_mm(h2, w[6], w[7])), w[8], w[9]);
    h_in = res2;
  }
  return mlp.defined() ? at::add(h_in, mlp) : h_in;
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(harness_native, m) {
  m.def("decode_layers(Tensor x, Tensor cos, Tensor sin, Tensor[] layers, Tensor(a!)[] kv_caches, Tensor slot_mapping, "
        "Tensor block_table, Tensor lens, int block_size, float scale, int num_heads, int num_kv_heads, float eps, "
        "bool tiled) "
        "-> Tensor");
  m.impl("decode_layers", c10::DispatchKey::CPU, TORCH_FN(decode_layers));
}
