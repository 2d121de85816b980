// bench_nn_baselines.cpp — what ct_bench_nn measures ctensor against: the
// FMA probe (the machine's float32 peak, the limit every GFLOP/s figure is
// reported against), and the oneDNN primitives a framework calling oneDNN
// directly runs per call (conv2d pipelines in the user's layouts with their
// reorders, matmul on plain row-major layouts), built once with user-mode
// scratchpads. See bench_nn.cpp for what runs.

#include "bench_nn.h"

#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace ctbench::nn {

dnnl::engine& eng() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}
dnnl::stream& strm() {
  static dnnl::stream s(eng());
  return s;
}

// ---------------------------------------------------------------------------
// The FMA probe: the compute limit. 12 independent accumulators hide the FMA
// latency (4 cycles) on two FMA ports; the multiplier and addend keep every
// value finite (the fixed point is 1).
// ---------------------------------------------------------------------------

namespace {

// The kernels are the tool's (tools/probes.h): one FMA probe for both.
inline float fma_kernel_avx512(int64_t iters) { return ctprobe::fma_avx512(iters); }
inline float fma_kernel_avx2(int64_t iters) { return ctprobe::fma_avx2(iters); }

int fma_lanes() { return fma_has_avx512() ? 16 : 8; }

// Seconds for one OpenMP region of `threads` threads, each running `iters`.
double fma_pass(int threads, int64_t iters) {
  const bool wide = fma_has_avx512();
  float sink[64] = {};
  auto t0 = Clock::now();
#pragma omp parallel num_threads(threads)
  {
    const float r = wide ? fma_kernel_avx512(iters) : fma_kernel_avx2(iters);
    sink[omp_get_thread_num() & 63] = r;
  }
  const double s = seconds_since(t0);
  benchmark::DoNotOptimize(sink);
  return s;
}

struct FmaFigures {
  bool done = false;
  double gflops[3] = {0, 0, 0};  // [threads]
  int64_t iters = 0;
};

FmaFigures& fma_figures(bool at_end = false) {
  static FmaFigures start, end;
  return at_end ? end : start;
}

// The probe at the start of the run (at_end = false) or again at its end:
// a limit is the best the machine did, and a shared host may have been busy
// during one of them (run.py reports the larger).
void run_fma_probe(bool at_end = false) {
  FmaFigures& f = fma_figures(at_end);
  if (f.done) return;
  const double flops_per_iter = 2.0 * kFmaAcc * fma_lanes();
  // Calibrate to ~0.1 s per pass (0.05 with --ct_quick) on one thread.
  fma_pass(1, 100000);
  const double t = fma_pass(1, 1000000);
  const double target = g_quick ? 0.05 : 0.1;
  f.iters = std::max<int64_t>(100000, static_cast<int64_t>(1e6 * target / std::max(t, 1e-6)));
  const int reps = g_quick ? 3 : 5;
  double best[3] = {1e30, 1e30, 1e30};
  for (int r = 0; r < reps; ++r)  // interleaved: drift hits both
    for (int th = 1; th <= 2; ++th) best[th] = std::min(best[th], fma_pass(th, f.iters));
  for (int th = 1; th <= 2; ++th) f.gflops[th] = th * flops_per_iter * static_cast<double>(f.iters) / best[th] * 1e-9;
  f.done = true;
}

}  // namespace

void BM_fma_peak(benchmark::State& st, int threads, bool at_end) {
  run_fma_probe(at_end);
  const FmaFigures& f = fma_figures(at_end);
  const double flops = threads * 2.0 * kFmaAcc * fma_lanes() * static_cast<double>(f.iters);
  const double secs = flops / (f.gflops[threads] * 1e9);
  for (auto _ : st) st.SetIterationTime(secs);
  st.counters["GFLOPs"] = f.gflops[threads];
  st.counters["vector_bits"] = fma_lanes() * 32;
  st.counters["accumulators"] = kFmaAcc;
  st.counters["iters_per_thread"] = static_cast<double>(f.iters);
}

double peak_gflops_2t() {
  run_fma_probe();
  return fma_figures().gflops[2];
}

// ---------------------------------------------------------------------------
// oneDNN pipelines: the primitives a framework calling oneDNN directly runs
// per call, with memory objects and argument maps built once.
// ---------------------------------------------------------------------------

namespace {

// "jit:avx512_core" from a primitive_desc, "" if unknown.
std::string impl_name(const dnnl::primitive_desc_base& pd) {
  const char* s = pd.impl_info_str();
  return s ? s : "";
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

// Adds the scratchpad argument to each step (one buffer of the largest size).
void attach_scratchpad(Pipe& p, const std::vector<memory::desc>& descs) {
  size_t most = 0;
  for (const memory::desc& d : descs) most = std::max(most, d.get_size());
  p.scratch.reset(static_cast<float*>(alloc64(std::max<size_t>(most, 64))));
  for (size_t i = 0; i < p.steps.size(); ++i)
    if (descs[i].get_size() > 0) p.steps[i].args[DNNL_ARG_SCRATCHPAD] = memory(descs[i], eng(), p.scratch.get());
}

// A reorder step from `from` to `to`, scratchpad desc appended to `sp`.
Step reorder_step(const memory& from, const memory& to, std::vector<memory::desc>& sp) {
  dnnl::reorder::primitive_desc rpd(eng(), from.get_desc(), eng(), to.get_desc(), user_scratchpad());
  sp.push_back(rpd.scratchpad_desc());
  return {dnnl::reorder(rpd), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}};
}

}  // namespace

dnnl::convolution_forward::primitive_desc ConvGeom::pd(ConvVariant v) const {
  const tag io = v == kAllAny ? tag::any : user_tag();
  const tag wt = v == kPlainW ? tag::oihw : tag::any;
  dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                    src_md(io), wei_md(wt), dst_md(io), {sh.stride, sh.stride}, {sh.pad, sh.pad},
                                    {sh.pad, sh.pad});
  return dnnl::convolution_forward::primitive_desc(d, user_scratchpad(), eng());
}

// The pipeline for variant v on the user's buffers x (user layout), w (OIHW)
// and y (user layout).
Pipe build_conv_pipe(const ConvGeom& g, ConvVariant v, float* x, float* w, float* y) {
  Pipe p;
  auto pd = g.pd(v);
  p.impl = impl_name(pd);
  memory ux(g.src_md(g.user_tag()), eng(), x), uw(g.wei_md(tag::oihw), eng(), w),
      uy(g.dst_md(g.user_tag()), eng(), y);
  std::vector<memory::desc> sp;
  memory cx = ux, cw = uw, cy = uy;
  if (pd.src_desc() != ux.get_desc()) {
    cx = memory(pd.src_desc(), eng());
    p.keep.push_back(cx);
    p.steps.push_back(reorder_step(ux, cx, sp));
  }
  if (pd.weights_desc() != uw.get_desc()) {
    cw = memory(pd.weights_desc(), eng());
    p.keep.push_back(cw);
    if (v == kPrebuiltW) {
      dnnl::reorder(uw, cw).execute(strm(), uw, cw);
      strm().wait();
    } else {
      p.steps.push_back(reorder_step(uw, cw, sp));
    }
  }
  const bool dst_reorder = pd.dst_desc() != uy.get_desc();
  if (dst_reorder) {
    cy = memory(pd.dst_desc(), eng());
    p.keep.push_back(cy);
  }
  sp.push_back(pd.scratchpad_desc());
  p.steps.push_back({dnnl::convolution_forward(pd), {{DNNL_ARG_SRC, cx}, {DNNL_ARG_WEIGHTS, cw}, {DNNL_ARG_DST, cy}}});
  if (dst_reorder) p.steps.push_back(reorder_step(cy, uy, sp));
  attach_scratchpad(p, sp);
  return p;
}

void create_conv_primitives(const ConvGeom& g, ConvVariant v) {
  auto pd = g.pd(v);
  dnnl::convolution_forward conv(pd);
  benchmark::DoNotOptimize(conv);
  const memory::desc pairs[3][2] = {{g.src_md(g.user_tag()), pd.src_desc()},
                                    {g.wei_md(tag::oihw), pd.weights_desc()},
                                    {pd.dst_desc(), g.dst_md(g.user_tag())}};
  for (const auto& fromto : pairs) {
    if (fromto[0] == fromto[1]) continue;
    dnnl::reorder::primitive_desc rpd(eng(), fromto[0], eng(), fromto[1], user_scratchpad());
    dnnl::reorder r(rpd);
    benchmark::DoNotOptimize(r);
  }
}

Pipe build_matmul_pipe(const MatmulGeom& g, float* a, float* b, float* c) {
  Pipe pipe;
  memory::desc amd, bmd, cmd;
  if (g.batch > 0) {
    amd = memory::desc({g.batch, g.M, g.K}, dt::f32, tag::abc);
    bmd = memory::desc({1, g.K, g.N}, dt::f32, tag::abc);  // broadcast over the batch
    cmd = memory::desc({g.batch, g.M, g.N}, dt::f32, tag::abc);
  } else {
    amd = memory::desc({g.M, g.K}, dt::f32, tag::ab);
    bmd = memory::desc({g.K, g.N}, dt::f32, tag::ab);
    cmd = memory::desc({g.M, g.N}, dt::f32, tag::ab);
  }
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(amd, bmd, cmd), user_scratchpad(), eng());
  pipe.impl = impl_name(pd);
  pipe.steps.push_back({dnnl::matmul(pd),
                        {{DNNL_ARG_SRC, memory(amd, eng(), a)},
                         {DNNL_ARG_WEIGHTS, memory(bmd, eng(), b)},
                         {DNNL_ARG_DST, memory(cmd, eng(), c)}}});
  attach_scratchpad(pipe, {pd.scratchpad_desc()});
  return pipe;
}

}  // namespace ctbench::nn
