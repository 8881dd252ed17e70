// Decode attention read in place from the paged KV cache (no per-step gather of each sequence's context).
//
// kv_cache is one layer's [2*Hkv, slots, D] tensor (K heads, then V heads); a sequence's context is the
// blocks its block table names, block_size slots each. One work item is (sequence, KV head, split of
// SPLIT tokens): it computes the G query heads of that KV head over its split with a two-pass softmax in
// float32, and leaves (max, sum, unnormalised output) for a merge pass. Splitting the context keeps both
// cores busy on a single long sequence (flash-decoding); the split count depends only on a sequence's own
// length, so a sequence's result never depends on what else is in the batch.
// With D 64 or 128 the items run tiled (item_tiled: 16 tokens' scores at a time, P.V in registers), adding in the
// same order as the row-at-a-time item_avx512, so both give the same bits; `tiled` false keeps the latter (A/B).
// Measured (1 thread CPU time, 64 rows x 250 tokens, 9/3 heads of 64, bf16, load ~8): 1.7 vs 2.1 ms per layer
// over blocks scattered as the engine deals them; 0.74 vs 1.35 ms with the blocks in cache: what remains is
// mostly the fetch of ~12 MB of K/V per layer.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <vector>
#ifdef __AVX512F__
#include <immintrin.h>
#endif

void harness_rope_f32(float* x, const float* cos, const float* sin, int64_t T, int64_t heads, int64_t row_stride,
                      int64_t D);
void harness_rope_bf16(uint16_t* x, const uint16_t* cos, const uint16_t* sin, int64_t T, int64_t heads,
                       int64_t row_stride, int64_t D);
void harness_quantize_q8_f32(const float* src, int8_t* dst, int64_t D);
void harness_quantize_q8_bf16(const uint16_t* src, int8_t* dst, int64_t D);

namespace {

constexpr int64_t SPLIT = 256;  // tokens per work item; a multiple of every block size the engine uses

inline float to_float(float x) { return x; }
inline float to_float(c10::BFloat16 x) {
  uint32_t bits = static_cast<uint32_t>(x.x) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// One row of D values as float32 (bf16 rows are widened once and then read by all G query heads).
template <typename T>
inline const float* row_as_float(const T* src, float* tmp, int64_t D) {
  for (int64_t d = 0; d < D; ++d) tmp[d] = to_float(src[d]);
  return tmp;
}
template <>
inline const float* row_as_float<float>(const float* src, float*, int64_t) { return src; }

// 8-bit K/V rows (engine/native/kv_quant.py, kv_cache_dtype int8): a row is D codes, then one float32 scale per 32
// codes, so a slot's row is row_elems(D) elements of the cache and a value is code * scale.
template <typename T>
constexpr int64_t row_elems(int64_t D) { return D; }
template <>
constexpr int64_t row_elems<int8_t>(int64_t D) { return D + D / 32 * 4; }

inline float q8_scale(const int8_t* row, int64_t D, int64_t group) {
  float s;
  std::memcpy(&s, row + D + 4 * group, sizeof s);
  return s;
}
template <>
inline const float* row_as_float<int8_t>(const int8_t* src, float* tmp, int64_t D) {
  for (int64_t d = 0; d < D; ++d) tmp[d] = static_cast<float>(src[d]) * q8_scale(src, D, d / 32);
  return tmp;
}

#ifdef __AVX512F__
// 16 values as float32 lanes.
inline __m512 load16(const float* p) { return _mm512_loadu_ps(p); }
inline __m512 load16(const c10::BFloat16* p) {
  __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

// Chunk c (values 16c..16c+15) of a row of D = 16 * C values, as float32 lanes.
template <int C>
inline __m512 load_chunk(const float* row, int c) { return load16(row + 16 * c); }
template <int C>
inline __m512 load_chunk(const c10::BFloat16* row, int c) { return load16(row + 16 * c); }
template <int C>
inline __m512 load_chunk(const int8_t* row, int c) {
  const __m128i codes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 16 * c));
  return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(codes)), _mm512_set1_ps(q8_scale(row, 16 * C, c / 2)));
}

// exp(x) for x <= 0 (scores minus their max): 2^n * p(r) with a degree-6 polynomial, ~2 ulp.
inline __m512 exp16(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.3981999507e-3f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.f)));
  return _mm512_scalef_ps(p, n);
}

// Blocks sit anywhere in the cache, so the hardware prefetcher stalls at each block boundary: fetch the next
// block of this row's context while the current one is computed.
template <typename T>
inline void prefetch_next_block(const T* base, const int64_t* bt, int64_t block_size, int64_t t, int64_t t1,
                                int64_t D) {  // D: the row's length in elements (row_elems)
  const int64_t next = t / block_size + 2;  // two blocks ahead: one block of compute is shorter than a fetch
  if (t % block_size || next * block_size >= t1) return;
  const char* p = reinterpret_cast<const char*>(base + bt[next] * block_size * D);
  for (int64_t off = 0; off < static_cast<int64_t>(block_size * D * sizeof(T)); off += 64)
    _mm_prefetch(p + off, _MM_HINT_T0);
}

// Softmax statistics of each query head's scores sc[g * SPLIT + i], i < n: the scores become exp(s - max) in place,
// res[g * (D + 2)] gets the max and res[g * (D + 2) + 1] the sum.
inline void softmax_rows(float* sc, int64_t n, int64_t G, int64_t D, float* res) {
  for (int64_t g = 0; g < G; ++g) {
    float* sg = sc + g * SPLIT;
    float m = -FLT_MAX;
    for (int64_t i = 0; i < n; ++i) m = std::max(m, sg[i]);
    const __m512 mv = _mm512_set1_ps(m);
    __m512 lv = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      const __m512 e = exp16(_mm512_sub_ps(_mm512_loadu_ps(sg + i), mv));
      _mm512_storeu_ps(sg + i, e);
      lv = _mm512_add_ps(lv, e);
    }
    if (i < n) {
      const __mmask16 mk = static_cast<__mmask16>((1u << (n - i)) - 1);
      const __m512 e = exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(mk, sg + i), mv));
      _mm512_mask_storeu_ps(sg + i, mk, e);
      lv = _mm512_add_ps(lv, _mm512_maskz_mov_ps(mk, e));
    }
    res[g * (D + 2)] = m;
    res[g * (D + 2) + 1] = _mm512_reduce_add_ps(lv);
  }
}

// One work item with D a multiple of 16: scores, softmax and P.V over tokens [t0, t1) of one sequence and KV
// head; res gets (max, sum, D unnormalised outputs) per query head. qf: G scaled query rows; sc: G * SPLIT.
template <typename T>
void item_avx512(const float* qf, const T* kbase, const T* vbase, const int64_t* bt, int64_t block_size, int64_t t0,
                 int64_t t1, int64_t G, int64_t D, float* sc, float* res) {
  const int64_t n = t1 - t0, C = D / 16;
  for (int64_t t = t0; t < t1; ++t) {
    prefetch_next_block(kbase, bt, block_size, t, t1, D);
    const int64_t slot = bt[t / block_size] * block_size + t % block_size;
    const T* k = kbase + slot * D;
    __m512 kc[16];  // D <= 256
    for (int64_t c = 0; c < C; ++c) kc[c] = load16(k + 16 * c);
    for (int64_t g = 0; g < G; ++g) {
      __m512 acc = _mm512_mul_ps(load16(qf + g * D), kc[0]);
      for (int64_t c = 1; c < C; ++c) acc = _mm512_fmadd_ps(load16(qf + g * D + 16 * c), kc[c], acc);
      sc[g * SPLIT + (t - t0)] = _mm512_reduce_add_ps(acc);
    }
  }
  softmax_rows(sc, n, G, D, res);
  for (int64_t g = 0; g < G; ++g) std::fill(res + g * (D + 2) + 2, res + (g + 1) * (D + 2), 0.f);
  for (int64_t t = t0; t < t1; ++t) {
    prefetch_next_block(vbase, bt, block_size, t, t1, D);
    const int64_t slot = bt[t / block_size] * block_size + t % block_size;
    const T* v = vbase + slot * D;
    __m512 vc[16];
    for (int64_t c = 0; c < C; ++c) vc[c] = load16(v + 16 * c);
    for (int64_t g = 0; g < G; ++g) {
      const __m512 p = _mm512_set1_ps(sc[g * SPLIT + (t - t0)]);
      float* o = res + g * (D + 2) + 2;
      for (int64_t c = 0; c < C; ++c) _mm512_storeu_ps(o + 16 * c, _mm512_fmadd_ps(p, vc[c], _mm512_loadu_ps(o + 16 * c)));
    }
  }
}

// The tiled form of item_avx512, with the same arithmetic in the same order (so the same bits out), fewer instructions:
// scores 16 tokens at a time, whose 16 sums are formed together by shuffles (reduce16) instead of one horizontal
// sum per token; each K row widened to float32 once for all G query heads; and P.V accumulated in registers over
// the whole split instead of a load and a store of the output per token.

// out[i] = the sum of a[i]'s 16 lanes, added in the order _mm512_reduce_add_ps adds them (lanes i and i + 8, then
// the results i and i + 4, then i and i + 2, then the last two), for 16 vectors at once.
inline __m512 reduce16(const __m512* a) {
  __m512 s[8], t[4], u[2];
  for (int p = 0; p < 8; ++p)
    s[p] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * p], a[2 * p + 1], 0x44),
                         _mm512_shuffle_f32x4(a[2 * p], a[2 * p + 1], 0xEE));  // token 2p in lanes 0-7, 2p+1 in 8-15
  for (int q = 0; q < 4; ++q)
    t[q] = _mm512_add_ps(_mm512_shuffle_f32x4(s[2 * q], s[2 * q + 1], 0x88),
                         _mm512_shuffle_f32x4(s[2 * q], s[2 * q + 1], 0xDD));  // token 4q+k in 128-bit lane k
  for (int r = 0; r < 2; ++r)
    u[r] = _mm512_add_ps(_mm512_shuffle_ps(t[2 * r], t[2 * r + 1], 0x44),
                         _mm512_shuffle_ps(t[2 * r], t[2 * r + 1], 0xEE));  // lane k: tokens 8r+k, 8r+4+k (2 each)
  const __m512 v = _mm512_add_ps(_mm512_shuffle_ps(u[0], u[1], 0x88), _mm512_shuffle_ps(u[0], u[1], 0xDD));
  // v's lane 4k + j holds token 4j + k: transpose the 4 x 4 back into token order.
  return _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), v);
}

// P.V for query heads [0, GC) of one item over tokens [t0, t1): o[g] = sum_t p[g][t] v_t, in token order.
template <typename T, int C, int GC>
inline void pv_rows(const float* sc, const T* vbase, const int64_t* bt, int64_t block_size, int64_t t0, int64_t t1,
                    float* res) {
  constexpr int64_t D = 16 * C, RS = row_elems<T>(D);
  __m512 o[GC][C];
  for (int g = 0; g < GC; ++g)
    for (int c = 0; c < C; ++c) o[g][c] = _mm512_setzero_ps();
  for (int64_t t = t0; t < t1; ++t) {
    prefetch_next_block(vbase, bt, block_size, t, t1, RS);
    const T* v = vbase + (bt[t / block_size] * block_size + t % block_size) * RS;
    __m512 vc[C];
    for (int c = 0; c < C; ++c) vc[c] = load_chunk<C>(v, c);
    for (int g = 0; g < GC; ++g) {
      const __m512 p = _mm512_set1_ps(sc[g * SPLIT + (t - t0)]);
      for (int c = 0; c < C; ++c) o[g][c] = _mm512_fmadd_ps(p, vc[c], o[g][c]);
    }
  }
  for (int g = 0; g < GC; ++g)
    for (int c = 0; c < C; ++c) _mm512_storeu_ps(res + g * (D + 2) + 2 + 16 * c, o[g][c]);
}

// D = 16 * C; kf: scratch for 16 widened K rows.
template <typename T, int C>
void item_tiled(const float* qf, const T* kbase, const T* vbase, const int64_t* bt, int64_t block_size, int64_t t0,
                int64_t t1, int64_t G, float* sc, float* kf, float* res) {
  constexpr int64_t D = 16 * C, RS = row_elems<T>(D);
  for (int64_t tb = t0; tb < t1; tb += 16) {
    const int64_t nt = std::min<int64_t>(16, t1 - tb);
    for (int64_t i = 0; i < nt; ++i) {
      prefetch_next_block(kbase, bt, block_size, tb + i, t1, RS);
      const T* k = kbase + (bt[(tb + i) / block_size] * block_size + (tb + i) % block_size) * RS;
      for (int c = 0; c < C; ++c) _mm512_storeu_ps(kf + i * D + 16 * c, load_chunk<C>(k, c));
    }
    for (int64_t g = 0; g < G; ++g) {
      __m512 qv[C], acc[16];
      for (int c = 0; c < C; ++c) qv[c] = _mm512_loadu_ps(qf + g * D + 16 * c);
      for (int i = 0; i < 16; ++i) {
        if (i >= nt) {
          acc[i] = _mm512_setzero_ps();
          continue;
        }
        acc[i] = _mm512_mul_ps(qv[0], _mm512_loadu_ps(kf + i * D));
        for (int c = 1; c < C; ++c) acc[i] = _mm512_fmadd_ps(qv[c], _mm512_loadu_ps(kf + i * D + 16 * c), acc[i]);
      }
      const __m512 r = reduce16(acc);
      _mm512_mask_storeu_ps(sc + g * SPLIT + (tb - t0), static_cast<__mmask16>((1u << nt) - 1), r);
    }
  }
  softmax_rows(sc, t1 - t0, G, D, res);
  // As many query heads per pass as keep their accumulators in 16 registers.
  constexpr int GMAX = C <= 4 ? 16 / C : 1;
  for (int64_t g0 = 0; g0 < G; g0 += GMAX) {
    const float* s = sc + g0 * SPLIT;
    float* r = res + g0 * (D + 2);
    switch (std::min<int64_t>(GMAX, G - g0)) {
      case 1: pv_rows<T, C, 1>(s, vbase, bt, block_size, t0, t1, r); break;
      case 2: pv_rows<T, C, (GMAX >= 2 ? 2 : 1)>(s, vbase, bt, block_size, t0, t1, r); break;
      case 3: pv_rows<T, C, (GMAX >= 3 ? 3 : 1)>(s, vbase, bt, block_size, t0, t1, r); break;
      default: pv_rows<T, C, GMAX>(s, vbase, bt, block_size, t0, t1, r); break;
    }
  }
}
#endif

// T: the type of q and the output; KT: the cache's (T, or int8_t for 8-bit rows).
template <typename T, typename KT>
void decode_kernel(const at::Tensor& q, const at::Tensor& kv, const at::Tensor& block_table,
                   const at::Tensor& lens, int64_t block_size, double scale, bool tiled, at::Tensor& out) {
  const int64_t nd = q.size(0), Hq = q.size(1), D = q.size(2), RS = row_elems<KT>(D);
  const int64_t Hkv = kv.size(0) / 2, S = kv.size(1), G = Hq / Hkv;
  const int64_t nb = block_table.size(1);
  const int64_t q_s0 = q.stride(0), q_s1 = q.stride(1);
  const T* qp = q.data_ptr<T>();
  const KT* kvp = kv.data_ptr<KT>();
  const int64_t* bt = block_table.data_ptr<int64_t>();
  const int64_t* len = lens.data_ptr<int64_t>();
  T* op = out.data_ptr<T>();

  // Work items: for each sequence, Hkv * splits of it. first[b] = index of sequence b's first item.
  std::vector<int64_t> first(nd + 1, 0), splits(nd);
  for (int64_t b = 0; b < nd; ++b) {
    splits[b] = (len[b] + SPLIT - 1) / SPLIT;
    first[b + 1] = first[b] + Hkv * splits[b];
  }
  const int64_t items = first[nd];
  // Per item and query head: max, sum, then D output values.
  std::vector<float> part(static_cast<size_t>(items * G * (D + 2)));
  float* pp = part.data();
  const float fscale = static_cast<float>(scale);

  at::parallel_for(0, items, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> qf(G * D), sc(G * SPLIT), krow(D), vrow(D), kf(16 * D);
    int64_t b = 0;
    for (int64_t it = begin; it < end; ++it) {
      while (first[b + 1] <= it) ++b;
      const int64_t local = it - first[b];
      const int64_t h = local / splits[b], s = local % splits[b];
      const int64_t t0 = s * SPLIT, t1 = std::min(len[b], t0 + SPLIT), n = t1 - t0;
      for (int64_t g = 0; g < G; ++g) {
        const T* src = qp + b * q_s0 + (h * G + g) * q_s1;
        for (int64_t d = 0; d < D; ++d) qf[g * D + d] = to_float(src[d]) * fscale;
      }
      const KT* kbase = kvp + h * S * RS;
      const KT* vbase = kvp + (Hkv + h) * S * RS;
      float* res = pp + it * G * (D + 2);
#ifdef __AVX512F__
      if (tiled && (D == 64 || D == 128)) {
        if (D == 64) item_tiled<KT, 4>(qf.data(), kbase, vbase, bt + b * nb, block_size, t0, t1, G, sc.data(), kf.data(), res);
        else item_tiled<KT, 8>(qf.data(), kbase, vbase, bt + b * nb, block_size, t0, t1, G, sc.data(), kf.data(), res);
        continue;
      }
      if constexpr (std::is_same_v<KT, T>) {  // 8-bit rows take the tiled items or the plain loop below
        if (D % 16 == 0 && D <= 256) {
          item_avx512<T>(qf.data(), kbase, vbase, bt + b * nb, block_size, t0, t1, G, D, sc.data(), res);
          continue;
        }
      }
#endif
      // Pass 1: scores of every token of the split, block by block in place.
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t slot = bt[b * nb + t / block_size] * block_size + t % block_size;
        const float* k = row_as_float(kbase + slot * RS, krow.data(), D);
        for (int64_t g = 0; g < G; ++g) {
          const float* qg = qf.data() + g * D;
          float acc = 0.f;
#pragma omp simd reduction(+ : acc)
          for (int64_t d = 0; d < D; ++d) acc += qg[d] * k[d];
          sc[g * SPLIT + (t - t0)] = acc;
        }
      }
      for (int64_t g = 0; g < G; ++g) {
        float* sg = sc.data() + g * SPLIT;
        float m = -FLT_MAX;
        for (int64_t i = 0; i < n; ++i) m = std::max(m, sg[i]);
        float l = 0.f;
#pragma omp simd reduction(+ : l)
        for (int64_t i = 0; i < n; ++i) {
          sg[i] = std::exp(sg[i] - m);
          l += sg[i];
        }
        res[g * (D + 2)] = m;
        res[g * (D + 2) + 1] = l;
        std::fill(res + g * (D + 2) + 2, res + (g + 1) * (D + 2), 0.f);
      }
      // Pass 2: probabilities times V rows.
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t slot = bt[b * nb + t / block_size] * block_size + t % block_size;
        const float* v = row_as_float(vbase + slot * RS, vrow.data(), D);
        for (int64_t g = 0; g < G; ++g) {
          const float p = sc[g * SPLIT + (t - t0)];
          float* o = res + g * (D + 2) + 2;
#pragma omp simd
          for (int64_t d = 0; d < D; ++d) o[d] += p * v[d];
        }
      }
    }
  });

  // Merge the splits of each (sequence, query head).
  at::parallel_for(0, nd * Hq, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> acc(D);
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = r / Hq, hq = r % Hq, h = hq / G, g = hq % G;
      const float* base = pp + (first[b] + h * splits[b]) * G * (D + 2) + g * (D + 2);
      const int64_t stride = G * (D + 2);
      float m = -FLT_MAX;
      for (int64_t s = 0; s < splits[b]; ++s) m = std::max(m, base[s * stride]);
      float l = 0.f;
      std::fill(acc.begin(), acc.end(), 0.f);
      for (int64_t s = 0; s < splits[b]; ++s) {
        const float* p = base + s * stride;
        const float w = std::exp(p[0] - m);
        l += w * p[1];
        for (int64_t d = 0; d < D; ++d) acc[d] += w * p[2 + d];
      }
      T* o = op + b * Hq * D + hq * D;
      const float inv = 1.f / l;
      for (int64_t d = 0; d < D; ++d) o[d] = static_cast<T>(acc[d] * inv);
    }
  });
}

// q: [nd, Hq, D] (rows and heads may be strided, dim contiguous); kv_cache: [2*Hkv, slots, D] contiguous, of q's
// dtype, or int8 [2*Hkv, slots, row_elems<int8_t>(D)] (8-bit rows);
// block_table: [nd, nb] int64; lens: [nd] int64 context lengths (each >= 1). Returns [nd, Hq*D].
at::Tensor paged_decode_attention(const at::Tensor& q, const at::Tensor& kv_cache, const at::Tensor& block_table,
                                  const at::Tensor& lens, int64_t block_size, double scale, bool tiled) {
  TORCH_CHECK(q.dim() == 3 && q.stride(2) == 1, "q must be [nd, Hq, D] with a contiguous last dim");
  TORCH_CHECK(kv_cache.dim() == 3 && kv_cache.is_contiguous(), "kv_cache must be a contiguous [2*Hkv, slots, D]");
  const bool q8 = kv_cache.scalar_type() == at::kChar;
  TORCH_CHECK(q8 || q.scalar_type() == kv_cache.scalar_type(), "q and kv_cache dtypes differ");
  TORCH_CHECK(!q8 || q.size(2) % 32 == 0, "8-bit K/V rows need a head size that is a multiple of 32");
  TORCH_CHECK((q8 ? row_elems<int8_t>(q.size(2)) : q.size(2)) == kv_cache.size(2) &&
              q.size(1) % (kv_cache.size(0) / 2) == 0, "head shapes disagree");
  TORCH_CHECK(SPLIT % block_size == 0, "block_size must divide ", SPLIT);
  auto bt = block_table.contiguous();
  auto ln = lens.contiguous();
  TORCH_CHECK(bt.scalar_type() == at::kLong && ln.scalar_type() == at::kLong, "block_table and lens must be int64");
  TORCH_CHECK(bt.size(0) == q.size(0) && ln.size(0) == q.size(0), "one block table row and length per query row");
  // Every index the kernel follows is checked once here, so a bad table is an error, not a stray read.
  const int64_t num_blocks = kv_cache.size(1) / block_size;
  const int64_t* btp = bt.data_ptr<int64_t>();
  for (int64_t i = 0; i < bt.numel(); ++i)
    TORCH_CHECK(btp[i] >= 0 && btp[i] < num_blocks, "block table entry ", btp[i], " outside 0..", num_blocks - 1);
  for (int64_t b = 0; b < ln.size(0); ++b)
    TORCH_CHECK(ln.data_ptr<int64_t>()[b] >= 1 && ln.data_ptr<int64_t>()[b] <= bt.size(1) * block_size,
                "context length ", ln.data_ptr<int64_t>()[b], " outside 1..", bt.size(1) * block_size);
  auto out = at::empty({q.size(0), q.size(1) * q.size(2)}, q.options());
  if (q.size(0) == 0) return out;
  if (q.scalar_type() == at::kFloat) {
    if (q8) decode_kernel<float, int8_t>(q, kv_cache, bt, ln, block_size, scale, tiled, out);
    else decode_kernel<float, float>(q, kv_cache, bt, ln, block_size, scale, tiled, out);
  } else if (q.scalar_type() == at::kBFloat16) {
    if (q8) decode_kernel<c10::BFloat16, int8_t>(q, kv_cache, bt, ln, block_size, scale, tiled, out);
    else decode_kernel<c10::BFloat16, c10::BFloat16>(q, kv_cache, bt, ln, block_size, scale, tiled, out);
  } else {
    TORCH_CHECK(false, "paged_decode_attention supports float32 and bfloat16, not ", q.scalar_type());
  }
  return out;
}

// qkv: [T, (Hq + 2*Hkv) * D] contiguous rows of fused q, k, v heads; cos, sin: [T, 1, D]. Rotates the q and k
// heads in place (rope.cpp) and copies each row's k and v heads into kv_cache[:, slot_mapping[t]] (as 8-bit rows
// when the cache is int8): the dozen small PyTorch ops this replaces cost more than the arithmetic on a one-row
// decode step.
void rope_and_cache(at::Tensor& qkv, const at::Tensor& cos, const at::Tensor& sin, at::Tensor& kv_cache,
                    const at::Tensor& slot_mapping, int64_t num_heads, int64_t num_kv_heads) {
  TORCH_CHECK(qkv.dim() == 2 && qkv.is_contiguous() && kv_cache.is_contiguous() && kv_cache.dim() == 3,
              "qkv must be contiguous [T, width] and kv_cache contiguous [2*Hkv, slots, D]");
  const bool q8 = kv_cache.scalar_type() == at::kChar;
  const int64_t T = qkv.size(0), S = kv_cache.size(1), row = qkv.size(1), RS = kv_cache.size(2);
  const int64_t D = row / (num_heads + 2 * num_kv_heads);
  TORCH_CHECK(kv_cache.size(0) == 2 * num_kv_heads && row == (num_heads + 2 * num_kv_heads) * D && D % 2 == 0 &&
              RS == (q8 ? row_elems<int8_t>(D) : D) && (!q8 || D % 32 == 0),
              "qkv width, head counts and kv_cache shape disagree");
  TORCH_CHECK((q8 || qkv.scalar_type() == kv_cache.scalar_type()) && cos.scalar_type() == qkv.scalar_type() &&
              sin.scalar_type() == qkv.scalar_type(), "qkv, cos, sin and kv_cache must share one dtype");
  auto c = cos.contiguous(), s = sin.contiguous();
  TORCH_CHECK(c.numel() == T * D && s.numel() == T * D, "cos and sin must be [T, 1, D]");
  auto slots = slot_mapping.contiguous();
  TORCH_CHECK(slots.scalar_type() == at::kLong && slots.numel() == T, "one int64 slot per row");
  const int64_t* sp = slots.data_ptr<int64_t>();
  for (int64_t t = 0; t < T; ++t) TORCH_CHECK(sp[t] >= 0 && sp[t] < S, "slot ", sp[t], " outside 0..", S - 1);
  const int64_t H = num_heads + num_kv_heads, es = qkv.element_size();
  if (qkv.scalar_type() == at::kFloat) {
    harness_rope_f32(qkv.data_ptr<float>(), c.data_ptr<float>(), s.data_ptr<float>(), T, H, row, D);
  } else if (qkv.scalar_type() == at::kBFloat16) {
    harness_rope_bf16(reinterpret_cast<uint16_t*>(qkv.data_ptr()), reinterpret_cast<const uint16_t*>(c.data_ptr()),
                      reinterpret_cast<const uint16_t*>(s.data_ptr()), T, H, row, D);
  } else {
    TORCH_CHECK(false, "rope_and_cache supports float32 and bfloat16, not ", qkv.scalar_type());
  }
  if (q8) {
    int8_t* dst = kv_cache.data_ptr<int8_t>();
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < 2 * num_kv_heads; ++h) {
        int8_t* d = dst + (h * S + sp[t]) * RS;
        const int64_t off = t * row + (num_heads + h) * D;
        if (qkv.scalar_type() == at::kFloat) harness_quantize_q8_f32(qkv.data_ptr<float>() + off, d, D);
        else harness_quantize_q8_bf16(reinterpret_cast<const uint16_t*>(qkv.data_ptr()) + off, d, D);
      }
    return;
  }
  const char* src = static_cast<const char*>(qkv.data_ptr());
  char* dst = static_cast<char*>(kv_cache.data_ptr());
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < 2 * num_kv_heads; ++h)  // k heads then v heads, as they follow q in each row
      std::memcpy(dst + ((h * S) + sp[t]) * D * es, src + (t * row + (num_heads + h) * D) * es, D * es);
}

// bf16 only: s = x (+ residual), each sum rounded to bf16 as torch's add; h = rms_norm(s) * w with the rounding
// of F.rms_norm on bf16 (statistics, normalisation and weight in float32, rounded once).
// One op instead of the eight torch runs per norm on a one-row step. float32 keeps F.rms_norm (bitwise).
std::tuple<at::Tensor, at::Tensor> add_rms_norm(const at::Tensor& x, const c10::optional<at::Tensor>& residual,
                                                const at::Tensor& weight, double eps) {
  TORCH_CHECK(x.dim() == 2 && x.scalar_type() == at::kBFloat16 && weight.scalar_type() == at::kBFloat16 &&
              weight.numel() == x.size(1), "add_rms_norm takes bf16 x [T, H] and weight [H]");
  const int64_t T = x.size(0), H = x.size(1);
  auto xc = x.contiguous(), w = weight.contiguous();
  at::Tensor r;
  if (residual.has_value()) {
    r = residual->contiguous();
    TORCH_CHECK(r.sizes() == x.sizes() && r.scalar_type() == at::kBFloat16, "residual must match x");
  }
  auto s = r.defined() ? at::empty_like(xc) : xc;
  auto h = at::empty_like(xc);
  const c10::BFloat16* xp = xc.data_ptr<c10::BFloat16>();
  const c10::BFloat16* rp = r.defined() ? r.data_ptr<c10::BFloat16>() : nullptr;
  const c10::BFloat16* wp = w.data_ptr<c10::BFloat16>();
  c10::BFloat16* sp = s.data_ptr<c10::BFloat16>();
  c10::BFloat16* hp = h.data_ptr<c10::BFloat16>();
  at::parallel_for(0, T, 16, [&](int64_t begin, int64_t end) {
    std::vector<float> row(H);
    for (int64_t t = begin; t < end; ++t) {
      float ss = 0.f;
      for (int64_t i = 0; i < H; ++i) {
        c10::BFloat16 v = rp ? c10::BFloat16(to_float(xp[t * H + i]) + to_float(rp[t * H + i])) : xp[t * H + i];
        if (rp) sp[t * H + i] = v;
        row[i] = to_float(v);
        ss += row[i] * row[i];
      }
      const float rstd = 1.f / std::sqrt(ss / static_cast<float>(H) + static_cast<float>(eps));
      for (int64_t i = 0; i < H; ++i)
        hp[t * H + i] = c10::BFloat16(row[i] * rstd * to_float(wp[i]));
    }
  });
  return {s, h};
}

// bf16 only: silu(gate) * up over rows [gate | up] of gu [T, 2F], each op's result rounded to bf16 as torch
// rounds F.silu(g) * u. One op instead of three on a one-row step.
at::Tensor silu_mul(const at::Tensor& gu) {
  TORCH_CHECK(gu.dim() == 2 && gu.size(1) % 2 == 0 && gu.scalar_type() == at::kBFloat16, "gu must be bf16 [T, 2F]");
  auto x = gu.contiguous();
  const int64_t T = x.size(0), F = x.size(1) / 2;
  auto out = at::empty({T, F}, x.options());
  const c10::BFloat16* xp = x.data_ptr<c10::BFloat16>();
  c10::BFloat16* op = out.data_ptr<c10::BFloat16>();
  at::parallel_for(0, T, 16, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t)
      for (int64_t i = 0; i < F; ++i) {
        const float g = to_float(xp[t * 2 * F + i]);
        const float act = to_float(c10::BFloat16(g / (1.f + std::exp(-g))));
        op[t * F + i] = c10::BFloat16(act * to_float(xp[t * 2 * F + F + i]));
      }
  });
  return out;
}

// One row of logits from an 8-bit head: x [1, K] bf16, codes [N, K] int8, scales [N, K/32] float32 (one per 32
// inputs, as GGUF Q8_0 stores the embedding). Reads half the bytes of an fp16 head; returns float32 [1, N].
at::Tensor int8_matvec(const at::Tensor& x, const at::Tensor& codes, const at::Tensor& scales) {
  TORCH_CHECK(x.dim() == 2 && x.size(0) == 1 && x.scalar_type() == at::kBFloat16, "x must be bf16 [1, K]");
  TORCH_CHECK(codes.is_contiguous() && codes.scalar_type() == at::kChar && codes.size(1) == x.size(1) &&
              codes.size(1) % 32 == 0, "codes must be contiguous int8 [N, K], K a multiple of 32");
  TORCH_CHECK(scales.is_contiguous() && scales.scalar_type() == at::kFloat && scales.size(0) == codes.size(0) &&
              scales.size(1) * 32 == codes.size(1), "scales must be contiguous float32 [N, K/32]");
  const int64_t N = codes.size(0), K = codes.size(1), G = K / 32;
  std::vector<float> xf(K);
  auto xc = x.contiguous();
  for (int64_t k = 0; k < K; ++k) xf[k] = to_float(xc.data_ptr<c10::BFloat16>()[k]);
  auto out = at::empty({1, N}, x.options().dtype(at::kFloat));
  const int8_t* cp = codes.data_ptr<int8_t>();
  const float* sp = scales.data_ptr<float>();
  float* op = out.data_ptr<float>();
  at::parallel_for(0, N, 256, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) {
      const int8_t* c = cp + n * K;
      const float* sc = sp + n * G;
#ifdef __AVX512F__
      __m512 acc = _mm512_setzero_ps();
      for (int64_t g = 0; g < G; ++g) {
        const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + 32 * g));
        const __m512 lo = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_castsi256_si128(b)));
        const __m512 hi = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_extracti128_si256(b, 1)));
        const __m512 t = _mm512_fmadd_ps(hi, _mm512_loadu_ps(&xf[32 * g + 16]),
                                         _mm512_mul_ps(lo, _mm512_loadu_ps(&xf[32 * g])));
        acc = _mm512_fmadd_ps(t, _mm512_set1_ps(sc[g]), acc);
      }
      op[n] = _mm512_reduce_add_ps(acc);
#else
      float acc = 0.f;
      for (int64_t g = 0; g < G; ++g) {
        float t = 0.f;
        for (int64_t i = 0; i < 32; ++i) t += static_cast<float>(c[32 * g + i]) * xf[32 * g + i];
        acc += t * sc[g];
      }
      op[n] = acc;
#endif
    }
  });
  return out;
}

}  // namespace

TORCH_LIBRARY(harness_native, m) {
  m.def("paged_decode_attention(Tensor q, Tensor kv_cache, Tensor block_table, Tensor lens, int block_size, "
        "float scale, bool tiled) -> Tensor");
  m.impl("paged_decode_attention", c10::DispatchKey::CPU, TORCH_FN(paged_decode_attention));
  m.def("rope_and_cache(Tensor(a!) qkv, Tensor cos, Tensor sin, Tensor(b!) kv_cache, Tensor slot_mapping, "
        "int num_heads, int num_kv_heads) -> ()");
  m.impl("rope_and_cache", c10::DispatchKey::CPU, TORCH_FN(rope_and_cache));
  m.def("add_rms_norm(Tensor x, Tensor? residual, Tensor weight, float eps) -> (Tensor, Tensor)");
  m.impl("add_rms_norm", c10::DispatchKey::CPU, TORCH_FN(add_rms_norm));
  m.def("silu_mul(Tensor gu) -> Tensor");
  m.impl("silu_mul", c10::DispatchKey::CPU, TORCH_FN(silu_mul));
  m.def("int8_matvec(Tensor x, Tensor codes, Tensor scales) -> Tensor");
  m.impl("int8_matvec", c10::DispatchKey::CPU, TORCH_FN(int8_matvec));
}
