// bench_nn.h — what the files of the NN suite (ct_bench_nn) share:
// bench_nn.cpp (what runs and in which order, registration, main),
// bench_nn_baselines.cpp (the FMA probe, and the oneDNN pipelines a framework
// calling oneDNN directly would run) and bench_nn_cases.cpp (the rows:
// ctensor's calls next to those pipelines, timed interleaved).

#ifndef CTENSOR_BENCH_NN_H_
#define CTENSOR_BENCH_NN_H_

#include <ctensor/ctensor.h>

#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.hpp>

#include "bench_common.h"
#include "probes.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

// The ctensor NN entry points are referenced weakly (in every file that
// includes this), so that ct_bench_nn links and runs against a libctensor
// without them (oneDNN columns only).
#pragma weak ct_conv2d
#pragma weak ct_conv2d_workspace_size
#pragma weak ct_matmul
#pragma weak ct_matmul_workspace_size
#pragma weak ct_plan_create
#pragma weak ct_plan_workspace_size
#pragma weak ct_plan_execute
#pragma weak ct_plan_destroy
#pragma weak ct_plan_cache_info

namespace ctbench::nn {

using dnnl::memory;
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

extern bool g_quick;  // --ct_quick (bench_nn.cpp)

dnnl::engine& eng();
dnnl::stream& strm();

// ---------------------------------------------------------------------------
// Small helpers (bench_nn_cases.cpp)
// ---------------------------------------------------------------------------

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Buf = std::unique_ptr<float, FreeDeleter>;

// n floats, 64-byte aligned, first touched in parallel with values in [-1, 1).
Buf make_buf(int64_t n, uint64_t salt);
CTensor make_tensor(void* data, int32_t ndim, int64_t* shape, int64_t* strides);
// max |a - b| / max |b| over n elements.
double rel_err(const float* a, const float* b, int64_t n);
double median(std::vector<double> v);
// The backend primitives libctensor has created so far (-1: unknown).
int64_t primitives_created();

// ---------------------------------------------------------------------------
// The FMA probe: the compute limit (bench_nn_baselines.cpp). The kernels are
// the tool's (tools/probes.h): one FMA probe for both.
// ---------------------------------------------------------------------------

constexpr int kFmaAcc = ctprobe::kFmaChains;
inline bool fma_has_avx512() { return ctprobe::has_avx512(); }

void BM_fma_peak(benchmark::State& st, int threads, bool at_end);
double peak_gflops_2t();  // GFLOP/s of 2 threads at the start of the run

// ---------------------------------------------------------------------------
// oneDNN pipelines: the primitives a framework calling oneDNN directly runs
// per call, with memory objects and argument maps built once
// (bench_nn_baselines.cpp).
// ---------------------------------------------------------------------------

struct Step {
  dnnl::primitive prim;
  std::unordered_map<int, memory> args;
};

struct Pipe {
  std::vector<Step> steps;
  std::string impl;  // the conv / matmul implementation
  Buf scratch;       // user-mode scratchpad, shared by the steps (they run in turn)
  std::vector<memory> keep;  // intermediate memories
  void run() {
    dnnl::stream& s = strm();
    for (Step& st : steps) st.prim.execute(s, st.args);
    s.wait();
  }
};

struct ConvShape {
  const char* name;
  int64_t C, H, W, K, R, S, stride, pad;
};

enum ConvVariant {
  kWAny,      // src/dst user layout, weights any, weight reorder per call
  kAllAny,    // everything any, every reorder per call
  kPlainW,    // weights in the user's oihw: no reorder at all (often a slower kernel)
  kPrebuiltW  // weights any, reordered once outside the loop: the bare conv (informational)
};

struct ConvGeom {
  ConvShape sh;
  int64_t N;
  bool nhwc;
  int64_t P, Q;
  ConvGeom(const ConvShape& s, int64_t n, bool nh) : sh(s), N(n), nhwc(nh) {
    P = (s.H + 2 * s.pad - (s.R - 1) - 1) / s.stride + 1;
    Q = (s.W + 2 * s.pad - (s.S - 1) - 1) / s.stride + 1;
  }
  double flops() const { return 2.0 * N * sh.K * P * Q * sh.C * sh.R * sh.S; }
  int64_t x_elems() const { return N * sh.C * sh.H * sh.W; }
  int64_t w_elems() const { return sh.K * sh.C * sh.R * sh.S; }
  int64_t y_elems() const { return N * sh.K * P * Q; }
  tag user_tag() const { return nhwc ? tag::nhwc : tag::nchw; }
  memory::desc src_md(tag t) const { return memory::desc({N, sh.C, sh.H, sh.W}, dt::f32, t); }
  memory::desc wei_md(tag t) const { return memory::desc({sh.K, sh.C, sh.R, sh.S}, dt::f32, t); }
  memory::desc dst_md(tag t) const { return memory::desc({N, sh.K, P, Q}, dt::f32, t); }
  dnnl::convolution_forward::primitive_desc pd(ConvVariant v) const;
};

// The pipeline for variant v on the user's buffers x (user layout), w (OIHW)
// and y (user layout).
Pipe build_conv_pipe(const ConvGeom& g, ConvVariant v, float* x, float* w, float* y);

// Creates (and drops) the primitives of variant v's pipeline: the conv and the
// reorders build_conv_pipe would run.
void create_conv_primitives(const ConvGeom& g, ConvVariant v);

struct MatmulGeom {
  int64_t batch, M, K, N;  // a (batch, M, K) (batch 0: 2-d), b (K, N), out (batch, M, N)
  double flops() const { return 2.0 * std::max<int64_t>(batch, 1) * M * N * K; }
  int64_t a_elems() const { return std::max<int64_t>(batch, 1) * M * K; }
  int64_t c_elems() const { return std::max<int64_t>(batch, 1) * M * N; }
};

// The matmul primitive on plain row-major a, b (broadcast over the batch) and c.
Pipe build_matmul_pipe(const MatmulGeom& g, float* a, float* b, float* c);

// ---------------------------------------------------------------------------
// The rows (bench_nn_cases.cpp)
// ---------------------------------------------------------------------------

void BM_overhead_conv_small(benchmark::State& st);
void BM_nn_conv(benchmark::State& st, const ConvShape* shape, bool nhwc);
void BM_nn_matmul(benchmark::State& st);
void BM_nn_matmul_bert(benchmark::State& st);
void BM_plan_create_conv(benchmark::State& st, const ConvShape* shape, bool nhwc);

}  // namespace ctbench::nn

#endif  // CTENSOR_BENCH_NN_H_
