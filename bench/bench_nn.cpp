// bench_nn.cpp — category 3 (NN ops with a workspace query) through the C
// ABI, next to the same oneDNN primitives called directly in the same
// process, with the machine's limit measured in the same run (STYLE habit
// 12). bench/run.py --suite nn runs this binary, then NumPy's matmul
// (OpenBLAS) on the same shapes, and prints one table and the targets.
//
// What runs, in this order (Google Benchmark keeps registration order):
//   1. BM_fma_peak/threads:{1,2}: the FMA probe, the compute limit every
//      GFLOP/s figure is reported against: independent FMAs on 12 vector
//      accumulators (AVX-512 when the CPU has it, else AVX2, chosen at run
//      time), one OpenMP region of 1 or 2 threads, best of several passes.
//      It runs again at the end (BM_fma_peak_end/threads:{1,2}); run.py
//      takes the larger figure (a shared host may be busy during one).
//   2. BM_overhead_conv_small: a 1x1 conv N=1, C=16, 8x8, K=16, NHWC, 1 call
//      at a time: ct_conv2d (plan-cache hit), ct_plan_execute, and the same
//      oneDNN primitive(s) executed directly with prebuilt memory objects and
//      argument maps (variants below); medians of 32-call batches, the
//      variants interleaved in rounds. Counters *_ns.
//   3. BM_nn_conv_<layer>_<layout>/<N>: one ResNet-50 layer at batch N, NHWC
//      (channels-last strides) or NCHW: ct_conv2d (workspace allocated once,
//      outside the timed loop) and two oneDNN pipelines:
//        dnnl_w   src/dst in the user's layout (format_tag nhwc / nchw),
//                 weights format_tag::any, the reorder from the user's OIHW
//                 weights inside the timed loop (a framework passing new
//                 weights every call must do it, as ctensor must);
//        dnnl_all src, weights and dst format_tag::any, every reorder to and
//                 from the user's layout inside the timed loop.
//      Both use scratchpad_mode::user (one buffer allocated outside the loop).
//   4. BM_nn_matmul/<n> (square n x n @ n x n) and BM_nn_matmul_bert/8
//      ((8, 512, 768) @ (768, 3072), the batch dim of b broadcast): ct_matmul
//      and the oneDNN matmul primitive on the same plain row-major layouts.
//   5. BM_plan_create_conv_<layer>_<layout>/<N>: medians of a few runs of
//      ct_plan_create + ct_plan_destroy, and of the direct oneDNN
//      primitive_desc + primitive creation of the dnnl_w and dnnl_all
//      pipelines (the conv and its reorders), each with oneDNN's primitive
//      cache at its capacity and with it disabled (dnnl::set_primitive_cache_capacity(0): this
//      process and libctensor share libdnnl.so, so it holds for both).
//
// Rows 3 and 4 interleave the implementations: 9 rounds (5 with --ct_quick),
// each running every implementation for ~0.06 s (0.02 s) after one untimed
// warm-up call when a call is short. A row reports, per implementation, the
// median over rounds of the mean per-call time (counters ct_s, dnnl_w_s,
// dnnl_all_s / dnnl_s) and the best round (*_min_s). On a shared 2-vCPU host
// the drift between two benchmarks run a minute apart, and the hypervisor's
// steal time, are larger than the 5 % the targets resolve; interleaving
// exposes both implementations to the same conditions. Before timing,
// every row checks ctensor's output against oneDNN's (check_rel_err: max
// |diff| / max |oneDNN|) and counts the backend primitives ctensor created
// inside its timed loop (ct_primitives_created_in_loop; must be 0).
//
// The label of a row names oneDNN's implementations ("dnnl_w=brg:avx512_core
// |dnnl_all=...") and, last, "ct_error=<message>" when ctensor could not run
// it (the oneDNN figures are still reported).
//
// Threads: ctensor with a NULL stream (its default: OpenMP's max threads)
// and oneDNN (OpenMP runtime, omp_get_max_threads()) both use the machine's
// threads; the context records omp_max_threads.
//
// Extra flags (parsed here, before Google Benchmark's own):
//   --ct_quick   batch-1 convs, matmul 256 and 1024, fewer rounds and shorter
//                ones, fewer latency samples and creation runs (run.py --quick)
//
// The ctensor NN entry points are referenced weakly, so that this binary
// links and runs against a libctensor without them (oneDNN columns only).
//
// Files: this one (registration and main), bench_nn_baselines.cpp (the FMA
// probe and the oneDNN pipelines), bench_nn_cases.cpp (the rows), bench_nn.h
// (what they share).

#include "bench_nn.h"

#include <ctensor/ctensor.h>

#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace ctbench::nn {

bool g_quick = false;

namespace {

// ResNet-50's layers (the list).
const ConvShape kConvs[] = {
    {"res2_3x3", 64, 56, 56, 64, 3, 3, 1, 1},
    {"res2_1x1", 256, 56, 56, 64, 1, 1, 1, 0},
    {"res3_3x3", 128, 28, 28, 128, 3, 3, 1, 1},
    {"conv1_7x7s2", 3, 224, 224, 64, 7, 7, 2, 3},
};

// ---------------------------------------------------------------------------
// Registration and main
// ---------------------------------------------------------------------------

void register_all() {
  for (int t = 1; t <= 2; ++t)
    benchmark::RegisterBenchmark(("BM_fma_peak/threads:" + std::to_string(t)).c_str(), BM_fma_peak, t, false)
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_overhead_conv_small", BM_overhead_conv_small)
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  const std::vector<int64_t> batches = g_quick ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 8};
  for (int64_t n : batches)
    for (const ConvShape& s : kConvs)
      for (bool nhwc : {true, false})
        benchmark::RegisterBenchmark(
            (std::string("BM_nn_conv_") + s.name + (nhwc ? "_nhwc" : "_nchw")).c_str(), BM_nn_conv, &s, nhwc)
            ->Arg(n)
            ->Iterations(1)
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
  const std::vector<int64_t> sides =
      g_quick ? std::vector<int64_t>{256, 1024} : std::vector<int64_t>{256, 512, 1024, 2048, 4096};
  for (int64_t n : sides)
    benchmark::RegisterBenchmark("BM_nn_matmul", BM_nn_matmul)
        ->Arg(n)
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  if (!g_quick)
    benchmark::RegisterBenchmark("BM_nn_matmul_bert", BM_nn_matmul_bert)
        ->Arg(8)
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  for (int64_t n : batches)
    for (const ConvShape& s : kConvs)
      for (bool nhwc : {true, false})
        benchmark::RegisterBenchmark(
            (std::string("BM_plan_create_conv_") + s.name + (nhwc ? "_nhwc" : "_nchw")).c_str(),
            BM_plan_create_conv, &s, nhwc)
            ->Arg(n)
            ->Iterations(1)
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond);
  for (int t = 1; t <= 2; ++t)
    benchmark::RegisterBenchmark(("BM_fma_peak_end/threads:" + std::to_string(t)).c_str(), BM_fma_peak, t, true)
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
}

}  // namespace

}  // namespace ctbench::nn

int main(int argc, char** argv) {
  using namespace ctbench::nn;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--ct_quick") == 0) {
      g_quick = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const dnnl::version_t* v = dnnl::version();
  benchmark::AddCustomContext("ctensor_version", ct_version_string());
  benchmark::AddCustomContext("omp_max_threads", std::to_string(omp_get_max_threads()));
  benchmark::AddCustomContext("dnnl_version", std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                                                  std::to_string(v->patch) + " (" + v->hash + ")");
  benchmark::AddCustomContext("fma_probe", std::string(fma_has_avx512() ? "avx512" : "avx2") + ", " +
                                               std::to_string(kFmaAcc) + " accumulators");
  benchmark::AddCustomContext("dnnl_primitive_cache_capacity", std::to_string(dnnl::get_primitive_cache_capacity()));
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
