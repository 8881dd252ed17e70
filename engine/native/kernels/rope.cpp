// Rotary embedding of q and k heads in place, with the rounding of the PyTorch expression it replaces:
//   rot = cat(-x[half:], x[:half]);  x = x * cos + rot * sin
// Each product and the sum are rounded to the element type, as torch rounds each op's result. Built without
// -ffast-math and with -ffp-contract=off (no fused multiply-add), so float32 results are bitwise torch's.
// No torch headers: the wrapper in paged_decode.cpp passes raw pointers.
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

}  // namespace

// x: T rows of `heads` heads of D values (row stride in elements); cos, sin: [T, D].
void harness_rope_f32(float* x, const float* cos, const float* sin, int64_t T, int64_t heads, int64_t row_stride,
                      int64_t D) {
  const int64_t half = D / 2;
  for (int64_t t = 0; t < T; ++t) {
    const float* c = cos + t * D;
    const float* s = sin + t * D;
    for (int64_t h = 0; h < heads; ++h) {
      float* v = x + t * row_stride + h * D;
      for (int64_t d = 0; d < half; ++d) {
        const float a = v[d], b = v[d + half];
        const float lo = a * c[d], lo_r = (-b) * s[d];
        const float hi = b * c[d + half], hi_r = a * s[d + half];
        v[d] = lo + lo_r;
        v[d + half] = hi + hi_r;
      }
    }
  }
}

void harness_rope_bf16(uint16_t* x, const uint16_t* cos, const uint16_t* sin, int64_t T, int64_t heads,
                       int64_t row_stride, int64_t D) {
  const int64_t half = D / 2;
  for (int64_t t = 0; t < T; ++t) {
    const uint16_t* c = cos + t * D;
    const uint16_t* s = sin + t * D;
    for (int64_t h = 0; h < heads; ++h) {
      uint16_t* v = x + t * row_stride + h * D;
      for (int64_t d = 0; d < half; ++d) {
        const float a = bf16_to_float(v[d]), b = bf16_to_float(v[d + half]);
        const float lo = round_bf16(a * bf16_to_float(c[d])), lo_r = round_bf16(-b * bf16_to_float(s[d]));
        const float hi = round_bf16(b * bf16_to_float(c[d + half]));
        const float hi_r = round_bf16(a * bf16_to_float(s[d + half]));
        v[d] = float_to_bf16(lo + lo_r);
        v[d + half] = float_to_bf16(hi + hi_r);
      }
    }
  }
}
