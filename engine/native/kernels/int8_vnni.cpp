// Layer matmuls for steps of more than a few rows on CPUs with AVX-512 VNNI: the model file's 4-bit codes times the
// activations quantized to 8 bits per group of 32 (llama.cpp's Q8_0 form), with vpdpbusd doing 64 int8
// multiply-adds per instruction where a bf16 dot product does 32.
//
// Weights: per output n and group g of 32 inputs, w = d[g,n] * q + c[g,n] with q in 0..15 (the GGUF Q4_0/Q4_1
// codes; c = zero - 8d in int4_weights' terms). Activations: a = e[m,g] * p, p in -127..127, e = amax / 127.
// Then y[m,n] = sum_g d[g,n] e[m,g] sum_j q p + c[g,n] (e[m,g] sum_j p): integer dot products per group,
// scaled once per group in float32. The codes are packed as [N/16][K/4][16][4] bytes, so one 64-byte load
// feeds vpdpbusd for 16 outputs x 4 inputs against 4 activation bytes broadcast from one row.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include <immintrin.h>
#define HARNESS_VNNI 1
#endif

namespace {

constexpr int64_t GROUP = 32;
constexpr int64_t TILE_M = 8;  // rows per register tile: 8 int32 + 8 float32 accumulators of 16 outputs

bool vnni_available() {
#ifdef HARNESS_VNNI
  return true;
#else
  return false;
#endif
}

// codes uint8 [N, K] (values 0..15) -> [ceil(N/16), K/4, 16, 4], padded outputs zero.
at::Tensor vnni_pack_codes(const at::Tensor& codes) {
  TORCH_CHECK(codes.dim() == 2 && codes.scalar_type() == at::kByte, "codes must be uint8 [N, K]");
  auto c = codes.contiguous();
  const int64_t N = c.size(0), K = c.size(1);
  TORCH_CHECK(K % GROUP == 0, "K must be a multiple of 32");
  const int64_t NB = (N + 15) / 16;
  auto out = at::zeros({NB, K / 4, 16, 4}, c.options());
  const uint8_t* src = c.data_ptr<uint8_t>();
  uint8_t* dst = out.data_ptr<uint8_t>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      dst[(((n / 16) * (K / 4) + k / 4) * 16 + n % 16) * 4 + k % 4] = src[n * K + k];
  return out;
}

#ifdef HARNESS_VNNI
inline __m512 bf16x16_to_f32(const uint16_t* p) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)p)), 16));
}

// Round to nearest even, as torch rounds float32 to bf16 (no NaN arises from finite inputs here).
inline __m256i f32x16_to_bf16(__m512 v) {
  __m512i u = _mm512_castps_si512(v);
  __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  u = _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
  return _mm512_cvtepi32_epi16(_mm512_srli_epi32(u, 16));
}
#endif

// x bf16 [M, K]; packed from vnni_pack_codes; d, c float32 [K/32, NB*16]. Returns bf16 [M, N].
at::Tensor int8_int4_matmul(const at::Tensor& x, const at::Tensor& packed, const at::Tensor& d, const at::Tensor& c,
                            int64_t N) {
  TORCH_CHECK(vnni_available(), "int8_int4_matmul needs AVX-512 VNNI (built without it)");
  TORCH_CHECK(x.dim() == 2 && x.scalar_type() == at::kBFloat16, "x must be bf16 [M, K]");
  auto xc = x.contiguous();
  const int64_t M = xc.size(0), K = xc.size(1), G = K / GROUP, NB = packed.size(0);
  TORCH_CHECK(K % GROUP == 0 && packed.size(1) == K / 4 && d.size(0) == G && d.size(1) == NB * 16 &&
              c.sizes() == d.sizes() && N <= NB * 16, "int8_int4_matmul: shapes do not match");
  auto out = at::empty({M, N}, xc.options());
#ifdef HARNESS_VNNI
  const int64_t MP = (M + TILE_M - 1) / TILE_M * TILE_M;
  // Activations to 8-bit codes per row and group (padding rows stay zero), with e and e * sum(p).
  auto qa = at::zeros({MP, K}, xc.options().dtype(at::kChar));
  auto ea = at::zeros({MP, G}, xc.options().dtype(at::kFloat));
  auto sa = at::zeros({MP, G}, xc.options().dtype(at::kFloat));
  const uint16_t* xs = reinterpret_cast<const uint16_t*>(xc.data_ptr<at::BFloat16>());
  int8_t* q = qa.data_ptr<int8_t>();
  float* e = ea.data_ptr<float>();
  float* s = sa.data_ptr<float>();
  at::parallel_for(0, M, 8, [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m)
      for (int64_t g = 0; g < G; ++g) {
        const uint16_t* p = xs + m * K + g * GROUP;
        __m512 a0 = bf16x16_to_f32(p), a1 = bf16x16_to_f32(p + 16);
        float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(a0), _mm512_abs_ps(a1)));
        float scale = amax / 127.0f;
        __m512 inv = _mm512_set1_ps(amax > 0 ? 127.0f / amax : 0.0f);
        __m512i i0 = _mm512_cvtps_epi32(_mm512_mul_ps(a0, inv)), i1 = _mm512_cvtps_epi32(_mm512_mul_ps(a1, inv));
        _mm_storeu_si128((__m128i*)(q + m * K + g * GROUP), _mm512_cvtsepi32_epi8(i0));
        _mm_storeu_si128((__m128i*)(q + m * K + g * GROUP + 16), _mm512_cvtsepi32_epi8(i1));
        e[m * G + g] = scale;
        s[m * G + g] = scale * (float)_mm512_reduce_add_epi32(_mm512_add_epi32(i0, i1));
      }
  });
  const uint8_t* w = packed.data_ptr<uint8_t>();
  const float* dw = d.data_ptr<float>();
  const float* cw = c.data_ptr<float>();
  uint16_t* y = reinterpret_cast<uint16_t*>(out.data_ptr<at::BFloat16>());
  const int64_t MT = MP / TILE_M, NP = NB * 16;
  at::parallel_for(0, NB * MT, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t nb = t / MT, m0 = (t % MT) * TILE_M;
      const uint8_t* wb = w + nb * (K / 4) * 64;
      const int8_t* qb = q + m0 * K;
      __m512 accf[TILE_M];
      for (int r = 0; r < TILE_M; ++r) accf[r] = _mm512_setzero_ps();
      for (int64_t g = 0; g < G; ++g) {
        __m512i acci[TILE_M];
        for (int r = 0; r < TILE_M; ++r) acci[r] = _mm512_setzero_si512();
        for (int64_t k4 = 0; k4 < GROUP / 4; ++k4) {
          const int64_t k = g * GROUP + k4 * 4;
          __m512i wv = _mm512_loadu_si512(wb + (k / 4) * 64);
          for (int r = 0; r < TILE_M; ++r) {
            int32_t a4;
            std::memcpy(&a4, qb + r * K + k, 4);
            acci[r] = _mm512_dpbusd_epi32(acci[r], wv, _mm512_set1_epi32(a4));
          }
        }
        __m512 dv = _mm512_loadu_ps(dw + g * NP + nb * 16), cv = _mm512_loadu_ps(cw + g * NP + nb * 16);
        for (int r = 0; r < TILE_M; ++r) {
          accf[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acci[r]), _mm512_mul_ps(dv, _mm512_set1_ps(e[(m0 + r) * G + g])),
                                    accf[r]);
          accf[r] = _mm512_fmadd_ps(cv, _mm512_set1_ps(s[(m0 + r) * G + g]), accf[r]);
        }
      }
      const int64_t n0 = nb * 16, valid = N - n0 < 16 ? N - n0 : 16;
      const __mmask16 mask = (__mmask16)((1u << valid) - 1);
      for (int r = 0; r < TILE_M && m0 + r < M; ++r)
        _mm256_mask_storeu_epi16(y + (m0 + r) * N + n0, mask, f32x16_to_bf16(accf[r]));
    }
  });
#endif
  return out;
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(harness_native, m) {
  m.def("vnni_available", &vnni_available);
  m.def("vnni_pack_codes(Tensor codes) -> Tensor");
  m.impl("vnni_pack_codes", c10::DispatchKey::CPU, TORCH_FN(vnni_pack_codes));
  m.def("int8_int4_matmul(Tensor x, Tensor packed, Tensor d, Tensor c, int N) -> Tensor");
  m.impl("int8_int4_matmul", c10::DispatchKey::CPU, TORCH_FN(int8_int4_matmul));
}
