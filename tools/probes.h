// What the hardware can do, measured: a STREAM-style triad for memory
// bandwidth and a register-resident FMA loop for float32 peak FLOP/s. The
// tool reports every op as a fraction of these, not of a datasheet figure.
#pragma once
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>

namespace ctprobe {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The triad a = b + s * c on [begin, end) with non-temporal stores, so the
// stores do not first read a's lines (write-allocate): the traffic is then
// the 12 bytes per element STREAM counts, and kernels that stream their
// outputs (ctensor's do above 8 MiB) are measured against the same rule.
__attribute__((target("avx512f"))) inline void triad_nt_avx512(float* a, const float* b, const float* c,
                                                               int64_t begin, int64_t end) {
  const __m512 s = _mm512_set1_ps(0.5f);
  for (int64_t i = begin; i < end; i += 16)
    _mm512_stream_ps(a + i, _mm512_fmadd_ps(s, _mm512_load_ps(c + i), _mm512_load_ps(b + i)));
}
__attribute__((target("avx2,fma"))) inline void triad_nt_avx2(float* a, const float* b, const float* c,
                                                              int64_t begin, int64_t end) {
  const __m256 s = _mm256_set1_ps(0.5f);
  for (int64_t i = begin; i < end; i += 8)
    _mm256_stream_ps(a + i, _mm256_fmadd_ps(s, _mm256_load_ps(c + i), _mm256_load_ps(b + i)));
}
inline bool has_avx512();
inline bool has_avx2_fma();

// STREAM triad a = b + s * c over `n` float32 elements (12 bytes per element,
// STREAM's counting; non-temporal stores where the CPU has AVX2), first touch
// with the same static split, best of `reps`. Returns bytes per second.
inline double stream_triad(int threads, int64_t n, int reps) {
  n &= ~int64_t(1023);
  auto alloc = [n] { return static_cast<float*>(std::aligned_alloc(64, size_t(n) * sizeof(float))); };
  std::unique_ptr<float, decltype(&std::free)> a(alloc(), &std::free), b(alloc(), &std::free), c(alloc(), &std::free);
  if (!a || !b || !c) return 0.0;
  float *pa = a.get(), *pb = b.get(), *pc = c.get();
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) pa[i] = 0.0f, pb[i] = 1.0f, pc[i] = 2.0f;
  double best = 1e30;
  const int simd = has_avx512() ? 2 : has_avx2_fma() ? 1 : 0;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    if (simd) {
#pragma omp parallel num_threads(threads)
      {
        const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
        const int64_t chunk = (n / nt) & ~int64_t(15);
        const int64_t b0 = t * chunk, e0 = t == nt - 1 ? n : b0 + chunk;
        if (simd == 2) triad_nt_avx512(pa, pb, pc, b0, e0);
        else triad_nt_avx2(pa, pb, pc, b0, e0);
      }
      _mm_sfence();
    } else {
#pragma omp parallel for schedule(static) num_threads(threads)
      for (int64_t i = 0; i < n; ++i) pa[i] = pb[i] + 0.5f * pc[i];
    }
    best = std::min(best, since(t0));
  }
  volatile float sink = pa[n / 2];
  (void)sink;
  return 12.0 * double(n) / best;
}

// 12 independent FMA chains cover the FMA latency on two ports; multiplier
// and addend keep every value finite.
constexpr int kFmaChains = 12;
#define CTPROBE_FMA12(OP, M, C)                                                                   \
  a0 = OP(a0, M, C); a1 = OP(a1, M, C); a2 = OP(a2, M, C); a3 = OP(a3, M, C); a4 = OP(a4, M, C); \
  a5 = OP(a5, M, C); a6 = OP(a6, M, C); a7 = OP(a7, M, C); a8 = OP(a8, M, C); a9 = OP(a9, M, C); \
  a10 = OP(a10, M, C); a11 = OP(a11, M, C)

__attribute__((target("avx512f,fma"), noinline)) inline float fma_avx512(int64_t iters) {
  __m512 a0 = _mm512_set1_ps(1.01f), a1 = _mm512_set1_ps(1.02f), a2 = _mm512_set1_ps(1.03f),
         a3 = _mm512_set1_ps(1.04f), a4 = _mm512_set1_ps(1.05f), a5 = _mm512_set1_ps(1.06f),
         a6 = _mm512_set1_ps(1.07f), a7 = _mm512_set1_ps(1.08f), a8 = _mm512_set1_ps(1.09f),
         a9 = _mm512_set1_ps(1.10f), a10 = _mm512_set1_ps(1.11f), a11 = _mm512_set1_ps(1.12f);
  const __m512 m = _mm512_set1_ps(0.9999999f), c = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
    CTPROBE_FMA12(_mm512_fmadd_ps, m, c);
  }
  __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                           _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
  s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
  float lanes[16];
  _mm512_storeu_ps(lanes, s);
  float r = 0.0f;
  for (float v : lanes) r += v;
  return r;
}

__attribute__((target("avx2,fma"), noinline)) inline float fma_avx2(int64_t iters) {
  __m256 a0 = _mm256_set1_ps(1.01f), a1 = _mm256_set1_ps(1.02f), a2 = _mm256_set1_ps(1.03f),
         a3 = _mm256_set1_ps(1.04f), a4 = _mm256_set1_ps(1.05f), a5 = _mm256_set1_ps(1.06f),
         a6 = _mm256_set1_ps(1.07f), a7 = _mm256_set1_ps(1.08f), a8 = _mm256_set1_ps(1.09f),
         a9 = _mm256_set1_ps(1.10f), a10 = _mm256_set1_ps(1.11f), a11 = _mm256_set1_ps(1.12f);
  const __m256 m = _mm256_set1_ps(0.9999999f), c = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
    CTPROBE_FMA12(_mm256_fmadd_ps, m, c);
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                           _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
  s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
  float lanes[8];
  _mm256_storeu_ps(lanes, s);
  float r = 0.0f;
  for (float v : lanes) r += v;
  return r;
}
#undef CTPROBE_FMA12

inline bool has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
}
inline bool has_avx2_fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
inline const char* simd_level() { return has_avx512() ? "AVX-512" : has_avx2_fma() ? "AVX2+FMA" : "below AVX2"; }

// float32 FLOP/s of `threads` threads running the FMA chains (best of reps).
inline double fma_peak(int threads, int reps, double seconds_per_rep = 0.1) {
  const bool wide = has_avx512();
  if (!wide && !has_avx2_fma()) return 0.0;
  const int lanes = wide ? 16 : 8;
  const double flops_per_iter = 2.0 * kFmaChains * lanes;
  auto pass = [&](int64_t iters) {
    float sink[64] = {};
    auto t0 = Clock::now();
#pragma omp parallel num_threads(threads)
    sink[omp_get_thread_num() & 63] = wide ? fma_avx512(iters) : fma_avx2(iters);
    const double s = since(t0);
    volatile float keep = sink[0];
    (void)keep;
    return s;
  };
  pass(10000);
  const double t = pass(200000);
  const int64_t iters = std::max<int64_t>(10000, int64_t(200000 * seconds_per_rep / std::max(t, 1e-6)));
  double best = 1e30;
  for (int r = 0; r < reps; ++r) best = std::min(best, pass(iters));
  return flops_per_iter * double(iters) * threads / best;
}

}  // namespace ctprobe
