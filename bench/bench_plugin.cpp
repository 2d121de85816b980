// bench_plugin.cpp — a plugin op against built-in ops of the same kind,
// through the C ABI, in one run: the example plugin's bias_gelu
// (examples/plugin_custom_op: out = gelu(a + b), a binary op loaded with
// ct_library_load and called by id through ct_binary) against
//   add       the built-in binary op ct_binary(CT_OP_ADD): the same entry
//             point, validation and dispatch, the cheapest kernel (at 1
//             element: what the plugin path costs over the built-in one);
//   add_gelu  ct_binary(add) then ct_unary(gelu): the same result from two
//             built-in calls (what fusing into a plugin op buys or costs);
//   plain     a plain C++ loop computing what the plugin's kernel computes
//             (gelu through erfc in double, one thread): the kernel's own
//             speed without ctensor around it;
//   plain_add a plain loop computing add;
//   bench_add the benchmark's own plugin (bench/plugin_add.c): add as a
//             plugin op, its kernel a plain loop like plain_add's, through
//             the same ct_binary: the direct answer to "does a plugin op
//             cost more than a built-in one". bench_add_vs_add (1 element:
//             against add, both NULL stream) and bench_add_vs_add_1t (1e7:
//             one thread each) are that ratio (target: at most 1).
// Built-in ops run with ctensor's default threads (NULL stream) and with one
// thread (a CTCpuStream of num_threads = 1, "_1t"); the plugin's kernel is
// single-threaded (it ignores the stream).
//
// Rows (Google Benchmark, real time, one row per size):
//   BM_plugin_vs_builtin/1         median ns of 32-call batches, each variant
//                                  measured in turn, 5 rounds (--ct_quick: 3),
//                                  the median round reported
//   BM_plugin_vs_builtin/10000000  mean ms of 3 calls per variant and round,
//                                  variants interleaved, 7 rounds (3), median
// The row's time is bias_gelu's. Counters: <variant>_ns or <variant>_ms,
// GBps at 1e7 (bytes read and written: binary 12 B/element, add_gelu 20),
// and the ratios bias_gelu_vs_<variant> (> 1: the plugin op is slower).
// Before timing, bias_gelu's output is checked against add_gelu's
// (check_max_rel_err; the row fails above 1e-5).
//
// The plugin is found at the path CMake compiled in (CT_BENCH_CUSTOM_OPS) or
// given by --ct_plugin=PATH; bench_add likewise (--ct_plugin_add=PATH).
// Extra flags: --ct_quick.
#include <ctensor/ctensor.h>

#include <benchmark/benchmark.h>
#include <omp.h>

#include "bench_common.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

using ctbench::Clock;
using ctbench::seconds_since;
using ctbench::status_message;

bool g_quick = false;
std::string g_plugin = CT_BENCH_CUSTOM_OPS;
std::string g_plugin_add = CT_BENCH_PLUGIN_ADD;
int32_t g_bias_gelu = -1, g_bench_add = -1;

struct Operands {
  int64_t n;
  float *a, *b, *out, *tmp;
  int64_t shape[1];
  CTensor ta, tb, to, tt;
  explicit Operands(int64_t n_) : n(n_) {
    a = static_cast<float*>(ctbench::alloc64(n * sizeof(float)));
    b = static_cast<float*>(ctbench::alloc64(n * sizeof(float)));
    out = static_cast<float*>(ctbench::alloc64(n * sizeof(float)));
    tmp = static_cast<float*>(ctbench::alloc64(n * sizeof(float)));
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      a[i] = ctbench::hash_float(i, 1, -4.0f, 4.0f);
      b[i] = ctbench::hash_float(i, 2, -1.0f, 1.0f);
      out[i] = tmp[i] = 0.0f;
    }
    shape[0] = n;
    ta = view(a);
    tb = view(b);
    to = view(out);
    tt = view(tmp);
  }
  ~Operands() {
    std::free(a);
    std::free(b);
    std::free(out);
    std::free(tmp);
  }
  CTensor view(float* p) const {
    CTensor t;
    std::memset(&t, 0, sizeof t);
    t.data = p;
    t.device = {CT_CPU, 0};
    t.ndim = 1;
    t.dtype = {CT_FLOAT, 32, 1};
    t.shape = const_cast<int64_t*>(shape);
    return t;
  }
};

struct Variant {
  const char* name;
  double bytes_per_elem;
  std::function<CTStatus()> call;
};

std::vector<Variant> variants(Operands& o, CTCpuStream* one) {
  return {
      {"bias_gelu", 12, [&o] { return ct_binary(g_bias_gelu, &o.ta, &o.tb, &o.to, nullptr); }},
      {"add", 12, [&o] { return ct_binary(CT_OP_ADD, &o.ta, &o.tb, &o.to, nullptr); }},
      {"add_1t", 12, [&o, one] { return ct_binary(CT_OP_ADD, &o.ta, &o.tb, &o.to, one); }},
      {"add_gelu", 20,
       [&o] {
         const CTStatus s = ct_binary(CT_OP_ADD, &o.ta, &o.tb, &o.tt, nullptr);
         return s != CT_OK ? s : ct_unary(CT_OP_GELU, &o.tt, &o.to, nullptr);
       }},
      {"add_gelu_1t", 20,
       [&o, one] {
         const CTStatus s = ct_binary(CT_OP_ADD, &o.ta, &o.tb, &o.tt, one);
         return s != CT_OK ? s : ct_unary(CT_OP_GELU, &o.tt, &o.to, one);
       }},
      {"plain", 12,
       [&o] {
         const float* a = o.a;
         const float* b = o.b;
         float* out = o.out;
         for (int64_t i = 0; i < o.n; ++i) {
           const double x = (double)(a[i] + b[i]);
           out[i] = (float)(0.5 * x * std::erfc(x * -0.70710678118654752440));
         }
         benchmark::ClobberMemory();
         return CT_OK;
       }},
      {"bench_add", 12, [&o] { return ct_binary(g_bench_add, &o.ta, &o.tb, &o.to, nullptr); }},
      {"plain_add", 12,
       [&o] {
         const float* a = o.a;
         const float* b = o.b;
         float* out = o.out;
         for (int64_t i = 0; i < o.n; ++i) out[i] = a[i] + b[i];
         benchmark::ClobberMemory();
         return CT_OK;
       }},
  };
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void BM_plugin_vs_builtin(benchmark::State& st) {
  const int64_t n = st.range(0);
  Operands o(n);
  CTCpuStream one;
  std::memset(&one, 0, sizeof one);
  one.struct_size = sizeof one;
  one.num_threads = 1;
  std::vector<Variant> vs = variants(o, &one);

  // Every variant runs, and bias_gelu agrees with add then gelu.
  for (Variant& v : vs)
    if (CTStatus s = v.call()) {
      st.SkipWithError((std::string(v.name) + ": " + status_message(s)).c_str());
      return;
    }
  std::vector<float> fused(o.out, o.out + n);
  if (CTStatus s = vs[0].call()) {
    st.SkipWithError(status_message(s).c_str());
    return;
  }
  std::memcpy(fused.data(), o.out, n * sizeof(float));
  vs[3].call();  // add_gelu into out
  double err = 0, scale = 0;
  for (int64_t i = 0; i < n; ++i) {
    err = std::max(err, (double)std::fabs(fused[(size_t)i] - o.out[i]));
    scale = std::max(scale, (double)std::fabs(o.out[i]));
  }
  const double rel = scale > 0 ? err / scale : err;
  st.counters["check_max_rel_err"] = rel;
  if (rel > 1e-5) {
    st.SkipWithError("bias_gelu differs from add then gelu by more than 1e-5 (relative to the largest output)");
    return;
  }

  const bool tiny = n < 1000;
  const int rounds = tiny ? (g_quick ? 3 : 5) : (g_quick ? 3 : 7);
  std::vector<std::vector<double>> per(vs.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t k = 0; k < vs.size(); ++k) {
      if (tiny) {
        per[k].push_back(ctbench::median_latency([&] { vs[k].call(); }, g_quick ? 300 : 1000).median_ns);
      } else {
        vs[k].call();  // warm
        const auto t0 = Clock::now();
        for (int i = 0; i < 3; ++i) vs[k].call();
        per[k].push_back(seconds_since(t0) / 3 * 1e9);
      }
    }
  std::vector<double> ns(vs.size());
  for (size_t k = 0; k < vs.size(); ++k) ns[k] = median(per[k]);
  for (auto _ : st) st.SetIterationTime(ns[0] * 1e-9);
  for (size_t k = 0; k < vs.size(); ++k) {
    const std::string v = vs[k].name;
    if (tiny) {
      st.counters[v + "_ns"] = ns[k];
    } else {
      st.counters[v + "_ms"] = ns[k] * 1e-6;
      st.counters[v + "_GBps"] = vs[k].bytes_per_elem * (double)n / ns[k];
    }
    if (k > 0) st.counters["bias_gelu_vs_" + v] = ns[0] / ns[k];
  }
  if (tiny) {
    auto at = [&](const char* name) {
      for (size_t k = 0; k < vs.size(); ++k)
        if (std::strcmp(vs[k].name, name) == 0) return ns[k];
      return 0.0;
    };
    st.counters["bench_add_vs_add"] = at("bench_add") / at("add");
  } else {
    double add_1t = 0, bench_add = 0;
    for (size_t k = 0; k < vs.size(); ++k) {
      if (std::strcmp(vs[k].name, "add_1t") == 0) add_1t = ns[k];
      if (std::strcmp(vs[k].name, "bench_add") == 0) bench_add = ns[k];
    }
    st.counters["bench_add_vs_add_1t"] = bench_add / add_1t;
  }
  st.counters["elems"] = (double)n;
}

}  // namespace

int main(int argc, char** argv) {
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strcmp(a, "--ct_quick") == 0) g_quick = true;
    else if (std::strncmp(a, "--ct_plugin=", 12) == 0) g_plugin = a + 12;
    else if (std::strncmp(a, "--ct_plugin_add=", 16) == 0) g_plugin_add = a + 16;
    else argv[kept++] = argv[i];
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  CTLibrary *lib = nullptr, *lib_add = nullptr;
  if (ct_library_load(g_plugin.c_str(), &lib) != CT_OK || ct_op_find("bias_gelu", &g_bias_gelu) != CT_OK) {
    std::fprintf(stderr, "ct_bench_plugin: %s: %s\n", g_plugin.c_str(), ct_last_error());
    return 1;
  }
  if (ct_library_load(g_plugin_add.c_str(), &lib_add) != CT_OK || ct_op_find("bench_add", &g_bench_add) != CT_OK) {
    std::fprintf(stderr, "ct_bench_plugin: %s: %s\n", g_plugin_add.c_str(), ct_last_error());
    return 1;
  }
  benchmark::AddCustomContext("ctensor_version", ct_version_string());
  benchmark::AddCustomContext("omp_max_threads", std::to_string(omp_get_max_threads()));
  benchmark::AddCustomContext("plugin", g_plugin);
  benchmark::RegisterBenchmark("BM_plugin_vs_builtin", BM_plugin_vs_builtin)
      ->Arg(1)
      ->Arg(10000000)
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  ct_library_unload(lib_add);
  ct_library_unload(lib);
  return 0;
}
