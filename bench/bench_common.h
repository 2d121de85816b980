// bench_common.h — helpers shared by the ctensor benchmark binaries: aligned
// buffers, deterministic data, the STREAM-style probe every benchmark reports
// its figures against (STYLE habit 12), and a median-of-batches latency timer.
//
// Header-only, every function inline (ct_bench_nn includes it from several
// files; the other benchmarks are one translation unit each).

#ifndef CTENSOR_BENCH_COMMON_H_
#define CTENSOR_BENCH_COMMON_H_

#include <ctensor/ctensor.h>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace ctbench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// 64-byte aligned, never NULL (exits on failure: a benchmark cannot go on).
inline void* alloc64(size_t bytes) {
  void* p = nullptr;
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  if (posix_memalign(&p, 64, rounded) != 0) {
    std::fprintf(stderr, "bench: cannot allocate %zu bytes\n", bytes);
    std::exit(2);
  }
  return p;
}

// A deterministic pseudo-random float in [lo, hi) for index i.
inline float hash_float(uint64_t i, uint64_t salt, float lo, float hi) {
  uint64_t h = (i + salt) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
  return lo + (hi - lo) * u;
}

// "CT_ERR_UNSUPPORTED: ct_reduce: ..." for SkipWithError.
inline std::string status_message(CTStatus s) {
  return std::string(ct_status_string(s)) + ": " + ct_last_error();
}

// ---------------------------------------------------------------------------
// STREAM-style probe: float32 arrays of 2^26 elements (768 MiB for three:
// far beyond any cache), first touch in parallel, best of `reps` passes, the
// variants interleaved so that drift of the shared host hits all of them.
// STREAM counting: copy 8 B per element, add and triad 12 (no write-allocate).
// ---------------------------------------------------------------------------

constexpr int64_t kStreamN = int64_t(1) << 26;

enum StreamKind { kStreamCopy = 0, kStreamAdd = 1, kStreamTriad = 2 };

inline const char* stream_kind_name(StreamKind k) {
  return k == kStreamCopy ? "copy" : (k == kStreamAdd ? "add" : "triad");
}
inline double stream_bytes_per_elem(StreamKind k) { return k == kStreamCopy ? 8.0 : 12.0; }

struct StreamFigures {
  // configuration, set by main() before the first benchmark runs
  int reps = 10;
  bool with_add = true;  // false: copy and triad only (the elementwise probe)
  // results
  bool done = false;
  double best_s[3][3] = {};  // [kind][threads]: best seconds per pass
  // bytes/s of `kind` with `threads` threads (0 if not measured)
  double bw(StreamKind kind, int threads) const {
    const double s = best_s[kind][threads];
    return s > 0 ? stream_bytes_per_elem(kind) * static_cast<double>(kStreamN) / s : 0.0;
  }
};

inline StreamFigures& stream_figures() {
  static StreamFigures f;
  return f;
}

inline double stream_copy_pass(const float* a, float* c, int64_t n, int threads) {
  auto t0 = Clock::now();
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) c[i] = a[i];
  return seconds_since(t0);
}

inline double stream_add_pass(const float* a, const float* b, float* c, int64_t n, int threads) {
  auto t0 = Clock::now();
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
  return seconds_since(t0);
}

inline double stream_triad_pass(float* a, const float* b, const float* c, float s, int64_t n,
                                int threads) {
  auto t0 = Clock::now();
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
  return seconds_since(t0);
}

// Runs once per process, on first use; later calls return at once.
inline void run_stream_probe() {
  StreamFigures& g = stream_figures();
  if (g.done) return;
  const int reps = g.reps;
  const bool with_add = g.with_add;
  const int64_t n = kStreamN;
  float* a = static_cast<float*>(alloc64(n * sizeof(float)));
  float* b = static_cast<float*>(alloc64(n * sizeof(float)));
  float* c = static_cast<float*>(alloc64(n * sizeof(float)));
  // First touch with the same static split the passes use (2 threads).
#pragma omp parallel for schedule(static) num_threads(2)
  for (int64_t i = 0; i < n; ++i) {
    a[i] = 1.0f;
    b[i] = 2.0f;
    c[i] = 0.0f;
  }
  for (int k = 0; k < 3; ++k)
    for (int t = 1; t <= 2; ++t) g.best_s[k][t] = with_add || k != kStreamAdd ? 1e30 : 0.0;
  for (int r = 0; r < reps; ++r) {
    for (int t = 1; t <= 2; ++t) {
      double& copy = g.best_s[kStreamCopy][t];
      copy = std::min(copy, stream_copy_pass(a, c, n, t));
      if (with_add) {
        double& add = g.best_s[kStreamAdd][t];
        add = std::min(add, stream_add_pass(a, b, c, n, t));
      }
      double& triad = g.best_s[kStreamTriad][t];
      triad = std::min(triad, stream_triad_pass(a, b, c, 3.0f, n, t));
    }
  }
  benchmark::DoNotOptimize(a[n / 2]);
  std::free(a);
  std::free(b);
  std::free(c);
  g.done = true;
}

// Reports one probe figure as a benchmark (its time is the best pass).
inline void BM_stream(benchmark::State& st, StreamKind kind, int threads) {
  run_stream_probe();
  const StreamFigures& g = stream_figures();
  const double best = g.best_s[kind][threads];
  if (best <= 0) {
    st.SkipWithError("this STREAM variant is not measured in this binary");
    return;
  }
  const double bytes = stream_bytes_per_elem(kind) * static_cast<double>(kStreamN);
  for (auto _ : st) st.SetIterationTime(best);
  st.SetBytesProcessed(static_cast<int64_t>(bytes) * st.iterations());
  st.counters["GBps"] = bytes / best * 1e-9;
  st.counters["n"] = static_cast<double>(kStreamN);
  st.counters["reps"] = g.reps;
}

inline void register_stream(StreamKind kind) {
  for (int t = 1; t <= 2; ++t) {
    benchmark::RegisterBenchmark(
        (std::string("BM_stream_") + stream_kind_name(kind) + "/threads:" + std::to_string(t)).c_str(),
        BM_stream, kind, t)
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

// ---------------------------------------------------------------------------
// Latency: the median of many short batches, robust to the shared host's
// preemptions (a mean over one long loop is not).
// ---------------------------------------------------------------------------

struct Latency {
  double median_ns, p10_ns, p90_ns;
};

template <class F>
Latency median_latency(F&& call, int samples, int batch = 32) {
  std::vector<double> ns(static_cast<size_t>(samples));
  for (int i = 0; i < samples; ++i) {
    auto t0 = Clock::now();
    for (int k = 0; k < batch; ++k) {
      call();
      benchmark::ClobberMemory();
    }
    ns[static_cast<size_t>(i)] = seconds_since(t0) * 1e9 / batch;
  }
  std::sort(ns.begin(), ns.end());
  return {ns[ns.size() / 2], ns[ns.size() / 10], ns[ns.size() * 9 / 10]};
}

}  // namespace ctbench

#endif  // CTENSOR_BENCH_COMMON_H_
