// What the hardware can do, measured: the best sustainable memory bandwidth
// of plain streaming kernels (read, copy, STREAM triad) and the float32 FMA
// peak; and the last-level cache size the machine reports. The tool reports
// every op as a fraction of these, not of a datasheet figure.
#pragma once
#include <immintrin.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ctensor/ctensor.h"

namespace ctprobe {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

inline bool has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
}
inline bool has_avx2_fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
inline const char* simd_level() { return has_avx512() ? "AVX-512" : has_avx2_fma() ? "AVX2+FMA" : "below AVX2"; }

// "320 MiB", "24 MiB", "1.5 MiB", "0.25 MiB".
inline std::string mib(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, bytes >= 100 * 1048576.0 ? "%.0f MiB" : "%.3g MiB", bytes / 1048576);
  return b;
}

// ---------------------------------------------------------------------------
// The last-level cache
// ---------------------------------------------------------------------------

struct CacheSize {
  int64_t bytes = 0;   // 0: unknown
  std::string source;  // where the figure comes from, and what else was read
};

// The L3 (without one, the L2) size this machine reports, read from both
// places it can be: sysconf (glibc, from CPUID) and the kernel's
// /sys/devices/system/cpu/cpu*/cache (one instance's size, times the
// distinct instances the online CPUs use). They can disagree tenfold: on an
// AMD EPYC guest sysconf gives the whole socket's L3 (320 MiB on a 2-vCPU
// VM, up to 480 MiB on hosts of that kind) where /sys gives the slice shared
// by the guest's CPUs (32 MiB). The larger is the answer: sizes meant to
// reach DRAM must exceed every figure the machine reports, and a working
// set below it may be running from cache.
inline CacheSize last_level_cache() {
  CacheSize c;
  long sc = sysconf(_SC_LEVEL3_CACHE_SIZE);
  const char* sc_level = "L3";
  if (sc <= 0) sc = sysconf(_SC_LEVEL2_CACHE_SIZE), sc_level = "L2";
  int64_t sys_one = 0, sys_level = 0;
  std::set<std::string> instances;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  for (long cpu = 0; cpu < std::max(1L, cpus); ++cpu) {
    for (int idx = 0; idx < 8; ++idx) {
      const std::string dir =
          "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/index" + std::to_string(idx) + "/";
      std::ifstream lf(dir + "level"), tf(dir + "type"), sf(dir + "size"), shf(dir + "shared_cpu_list");
      int level = 0;
      std::string type, size, shared;
      if (!(lf >> level) || !(tf >> type) || !(sf >> size) || type == "Instruction") continue;
      shf >> shared;
      int64_t bytes = std::atoll(size.c_str());
      const char unit = size.empty() ? 'B' : size.back();
      bytes *= unit == 'K' ? 1024 : unit == 'M' ? 1048576 : unit == 'G' ? 1073741824 : 1;
      if (level < 2 || level < sys_level) continue;
      if (level > sys_level) sys_level = level, instances.clear();
      sys_one = bytes;
      instances.insert(shared);
    }
  }
  const int64_t sys_total = sys_one * int64_t(instances.size());
  c.bytes = std::max<int64_t>(sc > 0 ? sc : 0, sys_total);
  std::string src;
  if (sc > 0) src = std::string("sysconf ") + sc_level + " " + mib(double(sc));
  if (sys_total > 0)
    src += (src.empty() ? "" : "; ") + std::string("/sys L") + std::to_string(sys_level) + " " +
           std::to_string(instances.size()) + " x " + mib(double(sys_one));
  c.source = src.empty() ? "not reported" : src;
  return c;
}

// ---------------------------------------------------------------------------
// Memory bandwidth
// ---------------------------------------------------------------------------
//
// Why the limit is the best of several kernels, thread counts, sizes and
// store kinds: a memory-bound op's rate counts every tensor argument once
// (read or written) over its time, and the ops reach DRAM through more than
// one access pattern: relu is a copy (1 read, 1 write stream), add a triad
// (2 reads, 1 write), sum a read-only stream; their outputs of 2 MiB and more
// per thread go out with non-temporal stores. The ceiling every one of them
// can be held against is the most useful bytes per second any plain
// streaming kernel moves under the same counting, so the probe runs each
// pattern, with regular and with non-temporal stores, on 1 thread up to the
// default threads, over working sets of 2x and 4x the last-level cache the
// machine reports, and keeps the best. On the 2-core EPYC guest this was
// written on, a quiet machine's triad read 36-43 GB/s where relu reached
// 42-46 (a copy kernel 43-46), and a single configuration on a busy machine
// much less. Chunks are handed out
// dynamically, 8 per thread, as ctensor's parallel_for does: a static split
// waits for the slowest thread, so one thread descheduled by other work
// pulls the whole figure down while the ops' dynamic chunks do not wait.

enum BwKernel { kRead = 0, kCopy = 1, kTriad = 2 };
inline const char* bw_kernel_name(int k) { return k == kRead ? "read" : k == kCopy ? "copy" : "triad"; }
inline int bw_arrays(int k) { return k + 1; }                 // read 1, copy 2, triad 3
inline double bw_bytes_per_elem(int k) { return 4.0 * (k + 1); }  // float32, each array once

// One thread's share [i0, i1) of a kernel; i0 and i1 are multiples of 64.
// A read is a sum with 4 accumulators (its result kept in `sink`); the
// copy and triad write a, with non-temporal stores when nt.
#define CTPROBE_BW_LOOPS(V, LOAD, STORE, STREAM, FMA, ADD, SET1, LANES)                                    \
  if (k == kRead) {                                                                                        \
    V s0 = SET1(0.0f), s1 = s0, s2 = s0, s3 = s0;                                                          \
    for (int64_t i = i0; i < i1; i += 4 * LANES) {                                                         \
      s0 = ADD(s0, LOAD(b + i));                                                                           \
      s1 = ADD(s1, LOAD(b + i + LANES));                                                                   \
      s2 = ADD(s2, LOAD(b + i + 2 * LANES));                                                               \
      s3 = ADD(s3, LOAD(b + i + 3 * LANES));                                                               \
    }                                                                                                      \
    alignas(64) float lanes[LANES];                                                                                 \
    STORE(lanes, ADD(ADD(s0, s1), ADD(s2, s3)));                                                           \
    for (float v : lanes) *sink += v;                                                                      \
  } else if (k == kCopy) {                                                                                 \
    if (nt)                                                                                                \
      for (int64_t i = i0; i < i1; i += 2 * LANES)                                                         \
        STREAM(a + i, LOAD(b + i)), STREAM(a + i + LANES, LOAD(b + i + LANES));                            \
    else                                                                                                   \
      for (int64_t i = i0; i < i1; i += 2 * LANES)                                                         \
        STORE(a + i, LOAD(b + i)), STORE(a + i + LANES, LOAD(b + i + LANES));                              \
  } else {                                                                                                 \
    const V h = SET1(0.5f);                                                                                \
    if (nt)                                                                                                \
      for (int64_t i = i0; i < i1; i += LANES) STREAM(a + i, FMA(h, LOAD(c + i), LOAD(b + i)));            \
    else                                                                                                   \
      for (int64_t i = i0; i < i1; i += LANES) STORE(a + i, FMA(h, LOAD(c + i), LOAD(b + i)));             \
  }

__attribute__((target("avx512f"))) inline void bw_avx512(int k, bool nt, float* a, const float* b, const float* c,
                                                         int64_t i0, int64_t i1, float* sink) {
  CTPROBE_BW_LOOPS(__m512, _mm512_load_ps, _mm512_store_ps, _mm512_stream_ps, _mm512_fmadd_ps, _mm512_add_ps,
                   _mm512_set1_ps, 16)
  _mm_sfence();  // this thread's non-temporal stores are done before the join
}
__attribute__((target("avx2,fma"))) inline void bw_avx2(int k, bool nt, float* a, const float* b, const float* c,
                                                       int64_t i0, int64_t i1, float* sink) {
  CTPROBE_BW_LOOPS(__m256, _mm256_load_ps, _mm256_store_ps, _mm256_stream_ps, _mm256_fmadd_ps, _mm256_add_ps,
                   _mm256_set1_ps, 8)
  _mm_sfence();
}
#undef CTPROBE_BW_LOOPS
inline void bw_scalar(int k, float* a, const float* b, const float* c, int64_t i0, int64_t i1, float* sink) {
  float s = 0;
  for (int64_t i = i0; i < i1; ++i) {
    if (k == kRead) s += b[i];
    else a[i] = k == kCopy ? b[i] : b[i] + 0.5f * c[i];
  }
  *sink += s;
}

struct Measured {
  double value = 0;  // bytes/s or FLOP/s; 0: not measured
  std::string how;   // the configuration that gave it
};

// Seconds of one pass of kernel k over n float32 elements per array, on
// `threads` threads taking 8 chunks each, dynamically.
inline double bw_pass(int k, bool nt, float* a, const float* b, const float* c, int64_t n, int threads) {
  const int simd = has_avx512() ? 2 : has_avx2_fma() ? 1 : 0;
  const int64_t chunks = int64_t(threads) * 8, step = (n / chunks) & ~int64_t(63);
  float sink[64] = {};
  const auto t0 = Clock::now();
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (int64_t ch = 0; ch < chunks; ++ch) {
    const int64_t i0 = ch * step, i1 = ch + 1 == chunks ? n : i0 + step;
    float* s = &sink[omp_get_thread_num() & 63];
    if (simd == 2) bw_avx512(k, nt, a, b, c, i0, i1, s);
    else if (simd == 1) bw_avx2(k, nt, a, b, c, i0, i1, s);
    else bw_scalar(k, a, b, c, i0, i1, s);
  }
  const double t = since(t0);
  volatile float keep = sink[0];
  (void)keep;
  return t;
}

// The best sustainable bandwidth (bytes/s, each array counted once per pass)
// over kernels x store kinds x thread counts x working sets, best of `reps`
// passes each. Working sets are multiples of llc_bytes (at least 256 MiB in
// all); `full` runs every configuration, otherwise the short check: read,
// copy and triad with non-temporal stores, the default threads, the larger
// working set.
inline Measured memory_bandwidth(int max_threads, int64_t llc_bytes, bool full, int reps) {
  Measured best;
  const int64_t min_ws = int64_t(256) << 20;
  std::vector<int64_t> sets{std::max(min_ws, 4 * llc_bytes)};
  if (full) sets.insert(sets.begin(), std::max(min_ws / 2, 2 * llc_bytes));
  const int64_t floats = sets.back() / 4;
  // From ct_malloc, as the ops' large buffers come (huge pages on Linux):
  // the limit is what such a buffer reaches.
  void* raw = nullptr;
  if (ct_malloc(CTDevice{CT_CPU, 0}, size_t(floats) * 4 + 4096, &raw) != CT_OK) return best;
  std::unique_ptr<void, void (*)(void*)> buf(raw, [](void* q) { ct_free(CTDevice{CT_CPU, 0}, q); });
  float* p = static_cast<float*>(raw);
#pragma omp parallel for schedule(dynamic, 1 << 16) num_threads(max_threads)
  for (int64_t i = 0; i < floats; ++i) p[i] = 1.0f;  // first touch
  std::vector<int> threads{max_threads};
  if (full)
    for (int t = max_threads / 2; t >= 1; t /= 2) threads.push_back(t);
  const int stores_full[2] = {1, 0};
  for (int64_t ws : sets)
    for (int k : {kRead, kCopy, kTriad})
      for (int s = 0; s < (k == kRead ? 1 : full ? 2 : 1); ++s)
        for (int t : threads) {
          const bool nt = k != kRead && stores_full[s];
          // Arrays of equal length, one after another in the buffer, each
          // 4 KiB-aligned (a multiple of 1024 floats).
          const int64_t n = (ws / 4 / bw_arrays(k)) & ~int64_t(1023);
          float *b = p, *c = p + n, *a = p + int64_t(bw_arrays(k) - 1) * n;
          double t_best = 1e30;
          for (int r = 0; r < reps; ++r) t_best = std::min(t_best, bw_pass(k, nt, a, b, c, n, t));
          const double bps = bw_bytes_per_elem(k) * double(n) / t_best;
          if (bps > best.value) {
            best.value = bps;
            best.how = std::string(bw_kernel_name(k)) +
                       (k == kRead ? "" : nt ? ", non-temporal stores" : ", regular stores") + ", " +
                       std::to_string(t) + (t == 1 ? " thread, " : " threads, ") + std::to_string(bw_arrays(k)) +
                       " x " + mib(double(n) * 4);
          }
        }
  return best;
}

// ---------------------------------------------------------------------------
// Compute: the float32 FMA peak
// ---------------------------------------------------------------------------
//
// C independent accumulator chains per thread: a chain's next FMA waits for
// the last (4 cycles), so the FMA ports stay full only with latency x ports
// x (vectors each port takes per cycle) chains in flight: 8 on two 512-bit
// or two 256-bit FMA units with 4-cycle latency, more where the latency is
// longer. The probe tries 8, 12 and 16 chains (AVX2: 8, 12, 14 of its 16
// registers; AVX-512: also 24 of its 32) on every width the CPU has (AVX2
// too on an AVX-512 CPU: some run 256-bit FMAs at a higher clock) and keeps
// the best. Multiplier and addend keep every value finite.

template <int C>
__attribute__((target("avx512f,fma"), noinline)) float fma_chains_avx512(int64_t iters) {
  __m512 acc[C];
  for (int j = 0; j < C; ++j) acc[j] = _mm512_set1_ps(1.0f + 0.01f * float(j + 1));
  const __m512 m = _mm512_set1_ps(0.9999999f), c = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 32
    for (int j = 0; j < C; ++j) acc[j] = _mm512_fmadd_ps(acc[j], m, c);
  }
  __m512 s = acc[0];
  for (int j = 1; j < C; ++j) s = _mm512_add_ps(s, acc[j]);
  float lanes[16];
  _mm512_storeu_ps(lanes, s);
  float r = 0.0f;
  for (float v : lanes) r += v;
  return r;
}

template <int C>
__attribute__((target("avx2,fma"), noinline)) float fma_chains_avx2(int64_t iters) {
  __m256 acc[C];
  for (int j = 0; j < C; ++j) acc[j] = _mm256_set1_ps(1.0f + 0.01f * float(j + 1));
  const __m256 m = _mm256_set1_ps(0.9999999f), c = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 32
    for (int j = 0; j < C; ++j) acc[j] = _mm256_fmadd_ps(acc[j], m, c);
  }
  __m256 s = acc[0];
  for (int j = 1; j < C; ++j) s = _mm256_add_ps(s, acc[j]);
  float lanes[8];
  _mm256_storeu_ps(lanes, s);
  float r = 0.0f;
  for (float v : lanes) r += v;
  return r;
}

// 12 chains: the kernels bench/bench_nn_baselines.cpp times as its FMA probe.
constexpr int kFmaChains = 12;
inline float fma_avx512(int64_t iters) { return fma_chains_avx512<kFmaChains>(iters); }
inline float fma_avx2(int64_t iters) { return fma_chains_avx2<kFmaChains>(iters); }

struct FmaKernel {
  int lanes, chains;
  float (*run)(int64_t);
};
// The kernels the CPU can run: every width it has, each chain count.
inline std::vector<FmaKernel> fma_kernels() {
  std::vector<FmaKernel> v;
  if (has_avx512())
    v.insert(v.end(), {{16, 8, fma_chains_avx512<8>}, {16, 12, fma_chains_avx512<12>},
                       {16, 16, fma_chains_avx512<16>}, {16, 24, fma_chains_avx512<24>}});
  if (has_avx2_fma())
    v.insert(v.end(), {{8, 8, fma_chains_avx2<8>}, {8, 12, fma_chains_avx2<12>}, {8, 14, fma_chains_avx2<14>}});
  return v;
}

// float32 FLOP/s of `threads` threads running the FMA chains, best of `reps`
// passes of about seconds_per_rep each. `full`: every kernel of
// fma_kernels(); otherwise the widest width's kernels of 12 chains or more.
inline Measured fma_peak(int threads, int reps, double seconds_per_rep, bool full) {
  Measured best;
  std::vector<FmaKernel> ks = fma_kernels();
  if (!full && !ks.empty()) {
    const int w = ks.front().lanes;
    ks.erase(std::remove_if(ks.begin(), ks.end(),
                            [w](const FmaKernel& k) { return k.lanes != w || k.chains < 12; }),
             ks.end());
  }
  for (const FmaKernel& k : ks) {
    auto pass = [&](int64_t iters) {
      float sink[64] = {};
      const auto t0 = Clock::now();
#pragma omp parallel num_threads(threads)
      sink[omp_get_thread_num() & 63] = k.run(iters);
      const double s = since(t0);
      volatile float keep = sink[0];
      (void)keep;
      return s;
    };
    pass(2000);
    const double t = pass(100000);
    const int64_t iters = std::max<int64_t>(10000, int64_t(100000 * seconds_per_rep / std::max(t, 1e-6)));
    double t_best = 1e30;
    for (int r = 0; r < reps; ++r) t_best = std::min(t_best, pass(iters));
    const double flops = 2.0 * k.chains * k.lanes * double(iters) * threads / t_best;
    if (flops > best.value) {
      best.value = flops;
      best.how = std::string(k.lanes == 16 ? "AVX-512" : "AVX2") + " FMA, " + std::to_string(k.chains) +
                 " chains x " + std::to_string(threads) + (threads == 1 ? " thread" : " threads");
    }
  }
  return best;
}

}  // namespace ctprobe
