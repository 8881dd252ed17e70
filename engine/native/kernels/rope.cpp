// Rotary embedding of q and k heads in place, with the rounding of the PyTorch expression it replaces:
//   rot = cat(-x[half:], x[:half]);  x = x * cos + rot * sin
// Each product and the sum are rounded to the element type, as torch rounds each op's result. Built without
// -ffast-math and with -ffp-contract=off (no fused multiply-add), so float32 results are bitwise torch's.
// No torch headers: the wrapper in paged_decode.cpp passes raw pointers.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace {

inline float bf16_to_float(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline uint16_t float_to_bf16(float f) {  // round to nearest even, as c10::BFloat16 does
  if (f != f) return 0x7FC0;
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits += ((bits >> 16) & 1) + 0x7FFF;
  return static_cast<uint16_t>(bits >> 16);
}

inline float round_bf16(float f) { return bf16_to_float(float_to_bf16(f)); }

// How an element type is read, how a product is rounded to it, and how a value is stored in it.
struct F32 {
  using T = float;
  static float load(float v) { return v; }
  static float round(float f) { return f; }
  static float store(float f) { return f; }
};

struct BF16 {
  using T = uint16_t;
  static float load(uint16_t v) { return bf16_to_float(v); }
  static float round(float f) { return round_bf16(f); }
  static uint16_t store(float f) { return float_to_bf16(f); }
};

// x: T rows of `heads` heads of D values (row stride in elements); cos, sin: [T, D].
template <typename E>
void rope(typename E::T* x, const typename E::T* cos, const typename E::T* sin, int64_t T, int64_t heads,
          int64_t row_stride, int64_t D) {
  const int64_t half = D / 2;
  for (int64_t t = 0; t < T; ++t) {
    const typename E::T* c = cos + t * D;
    const typename E::T* s = sin + t * D;
    for (int64_t h = 0; h < heads; ++h) {
      typename E::T* v = x + t * row_stride + h * D;
      for (int64_t d = 0; d < half; ++d) {
        const float a = E::load(v[d]), b = E::load(v[d + half]);
        const float lo = E::round(a * E::load(c[d])), lo_r = E::round(-b * E::load(s[d]));
        const float hi = E::round(b * E::load(c[d + half])), hi_r = E::round(a * E::load(s[d + half]));
        v[d] = E::store(lo + lo_r);
        v[d + half] = E::store(hi + hi_r);
      }
    }
  }
}

// One head row of D values -> D signed 8-bit codes, then one float32 scale per 32 values (amax / 127; code =
// round-half-even(value / scale)): the row form of engine/native/kv_quant.py, which this matches bit for bit
// (IEEE division and nearbyint here, as torch's `/` and round).
template <typename E>
void quantize_q8(const typename E::T* src, int8_t* dst, int64_t D) {
  for (int64_t g = 0; g < D / 32; ++g) {
    const typename E::T* s = src + 32 * g;
    float amax = 0.f;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(E::load(s[i])));
    const float scale = amax / 127.f;
    for (int i = 0; i < 32; ++i) {
      const float c = scale > 0.f ? std::nearbyint(E::load(s[i]) / scale) : 0.f;
      dst[32 * g + i] = static_cast<int8_t>(std::min(127.f, std::max(-127.f, c)));
    }
    std::memcpy(dst + D + 4 * g, &scale, sizeof scale);
  }
}

}  // namespace

void harness_quantize_q8_f32(const float* src, int8_t* dst, int64_t D) { quantize_q8<F32>(src, dst, D); }

void harness_quantize_q8_bf16(const uint16_t* src, int8_t* dst, int64_t D) { quantize_q8<BF16>(src, dst, D); }

void harness_rope_f32(float* x, const float* cos, const float* sin, int64_t T, int64_t heads, int64_t row_stride,
                      int64_t D) {
  rope<F32>(x, cos, sin, T, heads, row_stride, D);
}

void harness_rope_bf16(uint16_t* x, const uint16_t* cos, const uint16_t* sin, int64_t T, int64_t heads,
                       int64_t row_stride, int64_t D) {
  rope<BF16>(x, cos, sin, T, heads, row_stride, D);
}
