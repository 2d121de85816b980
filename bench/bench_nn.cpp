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

#include <ctensor/ctensor.h>

#include <benchmark/benchmark.h>
#include <immintrin.h>
#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include "bench_common.h"
#include "probes.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#pragma weak ct_conv2d
#pragma weak ct_conv2d_workspace_size
#pragma weak ct_matmul
#pragma weak ct_matmul_workspace_size
#pragma weak ct_plan_create
#pragma weak ct_plan_workspace_size
#pragma weak ct_plan_execute
#pragma weak ct_plan_destroy
#pragma weak ct_plan_cache_info

namespace {

using ctbench::alloc64;
using ctbench::Clock;
using ctbench::hash_float;
using ctbench::seconds_since;
using ctbench::status_message;

using dnnl::memory;
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

bool g_quick = false;

dnnl::engine& eng() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}
dnnl::stream& strm() {
  static dnnl::stream s(eng());
  return s;
}

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Buf = std::unique_ptr<float, FreeDeleter>;

// n floats, 64-byte aligned, first touched in parallel with values in [-1, 1).
Buf make_buf(int64_t n, uint64_t salt) {
  float* f = static_cast<float*>(alloc64(static_cast<size_t>(std::max<int64_t>(n, 1)) * sizeof(float)));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) f[i] = hash_float(static_cast<uint64_t>(i), salt, -1.0f, 1.0f);
  return Buf(f);
}

CTensor make_tensor(void* data, int32_t ndim, int64_t* shape, int64_t* strides) {
  CTensor t;
  t.data = data;
  t.device.device_type = CT_CPU;
  t.device.device_id = 0;
  t.ndim = ndim;
  t.dtype = {CT_FLOAT, 32, 1};
  t.shape = shape;
  t.strides = strides;
  t.byte_offset = 0;
  return t;
}

// max |a - b| / max |b| over n elements.
double rel_err(const float* a, const float* b, int64_t n) {
  double num = 0.0, den = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    num = std::max(num, std::fabs(static_cast<double>(a[i]) - b[i]));
    den = std::max(den, std::fabs(static_cast<double>(b[i])));
  }
  return den > 0 ? num / den : num;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

int64_t primitives_created() {
  if (!ct_plan_cache_info) return -1;
  CTPlanCacheInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  return ct_plan_cache_info(&info) == CT_OK ? info.primitives_created : -1;
}

// "jit:avx512_core" from a primitive_desc, "" if unknown.
std::string impl_name(const dnnl::primitive_desc_base& pd) {
  const char* s = pd.impl_info_str();
  return s ? s : "";
}

// ---------------------------------------------------------------------------
// The FMA probe: the compute limit. 12 independent accumulators hide the FMA
// latency (4 cycles) on two FMA ports; the multiplier and addend keep every
// value finite (the fixed point is 1).
// ---------------------------------------------------------------------------

// The kernels are the tool's (tools/probes.h): one FMA probe for both.
constexpr int kFmaAcc = ctprobe::kFmaChains;
inline float fma_kernel_avx512(int64_t iters) { return ctprobe::fma_avx512(iters); }
inline float fma_kernel_avx2(int64_t iters) { return ctprobe::fma_avx2(iters); }
inline bool fma_has_avx512() { return ctprobe::has_avx512(); }

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

struct ConvShape {
  const char* name;
  int64_t C, H, W, K, R, S, stride, pad;
};

// ResNet-50's layers (the list).
const ConvShape kConvs[] = {
    {"res2_3x3", 64, 56, 56, 64, 3, 3, 1, 1},
    {"res2_1x1", 256, 56, 56, 64, 1, 1, 1, 0},
    {"res3_3x3", 128, 28, 28, 128, 3, 3, 1, 1},
    {"conv1_7x7s2", 3, 224, 224, 64, 7, 7, 2, 3},
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
  dnnl::convolution_forward::primitive_desc pd(ConvVariant v) const {
    const tag io = v == kAllAny ? tag::any : user_tag();
    const tag wt = v == kPlainW ? tag::oihw : tag::any;
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                      src_md(io), wei_md(wt), dst_md(io), {sh.stride, sh.stride},
                                      {sh.pad, sh.pad}, {sh.pad, sh.pad});
    return dnnl::convolution_forward::primitive_desc(d, user_scratchpad(), eng());
  }
};

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

// The user-side tensors of one conv: x, w (OIHW), y_ct, y_ref.
struct ConvData {
  ConvGeom g;
  Buf x, w, y_ct, y_dnnl, y_ref;
  int64_t xs[4], xst[4], wsh[4], ys[4], yst[4];
  CTensor tx{}, tw{}, ty{};
  CTConv2dDesc d{};
  explicit ConvData(const ConvGeom& geom) : g(geom) {
    x = make_buf(g.x_elems(), 11);
    w = make_buf(g.w_elems(), 23);
    y_ct = make_buf(g.y_elems(), 37);
    y_dnnl = make_buf(g.y_elems(), 41);
    y_ref = make_buf(g.y_elems(), 43);
    const ConvShape& s = g.sh;
    int64_t xv[4] = {g.N, s.C, s.H, s.W}, wv[4] = {s.K, s.C, s.R, s.S}, yv[4] = {g.N, s.K, g.P, g.Q};
    std::memcpy(xs, xv, sizeof xs);
    std::memcpy(wsh, wv, sizeof wsh);
    std::memcpy(ys, yv, sizeof ys);
    // NHWC is only strides: the (N, C, H, W) view with strides (H*W*C, 1, W*C, C).
    int64_t xsv[4] = {s.H * s.W * s.C, 1, s.W * s.C, s.C}, ysv[4] = {g.P * g.Q * s.K, 1, g.Q * s.K, s.K};
    std::memcpy(xst, xsv, sizeof xst);
    std::memcpy(yst, ysv, sizeof yst);
    tx = make_tensor(x.get(), 4, xs, g.nhwc ? xst : nullptr);
    tw = make_tensor(w.get(), 4, wsh, nullptr);
    ty = make_tensor(y_ct.get(), 4, ys, g.nhwc ? yst : nullptr);
    d.struct_size = sizeof d;
    d.groups = 1;
    d.stride[0] = d.stride[1] = s.stride;
    d.pad_begin[0] = d.pad_begin[1] = d.pad_end[0] = d.pad_end[1] = s.pad;
    d.dilation[0] = d.dilation[1] = 1;
  }
};

// ctensor's direct call on ConvData, workspace allocated once.
struct CtConv {
  ConvData* c = nullptr;
  Buf ws;
  size_t ws_bytes = 0;
  std::string error;  // non-empty: cannot run
  explicit CtConv(ConvData& cd) : c(&cd) {
    if (!ct_conv2d || !ct_conv2d_workspace_size) {
      error = "ct_conv2d is not exported by this libctensor";
      return;
    }
    CTStatus s = ct_conv2d_workspace_size(&c->d, &c->tx, &c->tw, nullptr, &c->ty, &ws_bytes);
    if (s != CT_OK) {
      error = status_message(s);
      return;
    }
    ws.reset(static_cast<float*>(alloc64(std::max<size_t>(ws_bytes, 64))));
    std::memset(ws.get(), 0, std::max<size_t>(ws_bytes, 64));
    s = call();
    if (s != CT_OK) error = status_message(s);
  }
  CTStatus call() { return ct_conv2d(&c->d, &c->tx, &c->tw, nullptr, &c->ty, ws.get(), ws_bytes, nullptr); }
};

// ---------------------------------------------------------------------------
// Interleaved timing of several implementations of one row
// ---------------------------------------------------------------------------

struct Impl {
  std::string key;  // counter prefix: "ct", "dnnl_w", ...
  std::function<void()> call;
  std::vector<double> per_call;  // one per round
};

// Rounds of: for each impl, (a warm-up call when short, then) k timed calls.
void time_interleaved(std::vector<Impl>& impls) {
  const int rounds = g_quick ? 5 : 9;
  const double target = g_quick ? 0.02 : 0.06;
  std::vector<int64_t> k(impls.size());
  std::vector<bool> warm(impls.size());
  for (size_t i = 0; i < impls.size(); ++i) {
    impls[i].call();  // warm-up (caches, pages, plan cache)
    auto t0 = Clock::now();
    impls[i].call();
    const double t1 = seconds_since(t0);
    k[i] = std::max<int64_t>(1, std::min<int64_t>(100000, static_cast<int64_t>(target / std::max(t1, 1e-9))));
    warm[i] = t1 < 0.05;
  }
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < impls.size(); ++i) {
      if (warm[i]) impls[i].call();
      auto t0 = Clock::now();
      int64_t j = 0;
      while (j < k[i]) {
        impls[i].call();
        benchmark::ClobberMemory();
        ++j;
        // A loaded host can make calls 10x slower than at calibration: cap
        // the round at 4x its target (the mean is over the calls made).
        if (seconds_since(t0) > 4 * target) break;
      }
      impls[i].per_call.push_back(seconds_since(t0) / static_cast<double>(j));
    }
  }
}

void report_impls(benchmark::State& st, std::vector<Impl>& impls, double flops) {
  double first = 0.0;
  for (Impl& im : impls) {
    const double med = median(im.per_call);
    if (first == 0.0) first = med;
    st.counters[im.key + "_s"] = med;
    st.counters[im.key + "_min_s"] = *std::min_element(im.per_call.begin(), im.per_call.end());
    st.counters[im.key + "_GFLOPs"] = flops / med * 1e-9;
  }
  st.counters["flops"] = flops;
  st.counters["rounds"] = impls.empty() ? 0 : static_cast<double>(impls[0].per_call.size());
  const double peak = peak_gflops_2t();
  if (peak > 0) st.counters["peak_GFLOPs"] = peak;
  for (auto _ : st) st.SetIterationTime(first > 0 ? first : 1e-9);
}

// ---------------------------------------------------------------------------
// 3. Conv rows
// ---------------------------------------------------------------------------

void BM_nn_conv(benchmark::State& st, const ConvShape* shape, bool nhwc) {
  const ConvGeom g(*shape, st.range(0), nhwc);
  ConvData c(g);
  std::string label;
  std::vector<Impl> impls;
  // oneDNN first: its dnnl_w output is the reference.
  Pipe pw, pall;
  try {
    pw = build_conv_pipe(g, kWAny, c.x.get(), c.w.get(), c.y_ref.get());
    pw.run();
    pall = build_conv_pipe(g, kAllAny, c.x.get(), c.w.get(), c.y_dnnl.get());
    pall.run();
    // Time both into y_dnnl (y_ref keeps the reference).
    pw = build_conv_pipe(g, kWAny, c.x.get(), c.w.get(), c.y_dnnl.get());
  } catch (const dnnl::error& e) {
    st.SkipWithError((std::string("oneDNN: ") + e.what()).c_str());
    return;
  }
  st.counters["dnnl_all_check_rel_err"] = rel_err(c.y_dnnl.get(), c.y_ref.get(), g.y_elems());
  label = "dnnl_w=" + pw.impl + "|dnnl_all=" + pall.impl;

  CtConv ct(c);
  if (ct.error.empty()) {
    st.counters["check_rel_err"] = rel_err(c.y_ct.get(), c.y_ref.get(), g.y_elems());
    st.counters["ct_workspace_bytes"] = static_cast<double>(ct.ws_bytes);
    impls.push_back({"ct", [&] { ct.call(); }, {}});
  }
  impls.push_back({"dnnl_w", [&] { pw.run(); }, {}});
  impls.push_back({"dnnl_all", [&] { pall.run(); }, {}});

  const int64_t prims0 = primitives_created();
  time_interleaved(impls);
  const int64_t prims1 = primitives_created();
  if (ct.error.empty() && prims0 >= 0 && prims1 >= 0)
    st.counters["ct_primitives_created_in_loop"] = static_cast<double>(prims1 - prims0);
  if (!ct.error.empty()) label += "|ct_error=" + ct.error;
  report_impls(st, impls, g.flops());
  st.counters["N"] = static_cast<double>(g.N);
  st.SetLabel(label.c_str());
}

// ---------------------------------------------------------------------------
// 4. Matmul rows
// ---------------------------------------------------------------------------

struct MatmulGeom {
  int64_t batch, M, K, N;  // a (batch, M, K) (batch 0: 2-d), b (K, N), out (batch, M, N)
  double flops() const { return 2.0 * std::max<int64_t>(batch, 1) * M * N * K; }
  int64_t a_elems() const { return std::max<int64_t>(batch, 1) * M * K; }
  int64_t c_elems() const { return std::max<int64_t>(batch, 1) * M * N; }
};

void BM_nn_matmul_geom(benchmark::State& st, const MatmulGeom& g) {
  Buf a = make_buf(g.a_elems(), 51), b = make_buf(g.K * g.N, 53), c_ct = make_buf(g.c_elems(), 57),
      c_dn = make_buf(g.c_elems(), 59);
  Pipe pipe;
  try {
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
                          {{DNNL_ARG_SRC, memory(amd, eng(), a.get())},
                           {DNNL_ARG_WEIGHTS, memory(bmd, eng(), b.get())},
                           {DNNL_ARG_DST, memory(cmd, eng(), c_dn.get())}}});
    attach_scratchpad(pipe, {pd.scratchpad_desc()});
    pipe.run();
  } catch (const dnnl::error& e) {
    st.SkipWithError((std::string("oneDNN: ") + e.what()).c_str());
    return;
  }
  std::string label = "dnnl=" + pipe.impl;

  // ctensor
  int64_t ash[3], bsh[2] = {g.K, g.N}, csh[3];
  const int32_t nd = g.batch > 0 ? 3 : 2;
  if (g.batch > 0) {
    int64_t av[3] = {g.batch, g.M, g.K}, cv[3] = {g.batch, g.M, g.N};
    std::memcpy(ash, av, sizeof ash);
    std::memcpy(csh, cv, sizeof csh);
  } else {
    ash[0] = g.M; ash[1] = g.K;
    csh[0] = g.M; csh[1] = g.N;
  }
  CTensor ta = make_tensor(a.get(), nd, ash, nullptr), tb = make_tensor(b.get(), 2, bsh, nullptr),
          tc = make_tensor(c_ct.get(), nd, csh, nullptr);
  CTMatmulDesc md{};
  md.struct_size = sizeof md;
  md.activation = CT_ACTIVATION_NONE;
  std::string ct_error;
  size_t ws_bytes = 0;
  Buf ws;
  if (!ct_matmul || !ct_matmul_workspace_size) {
    ct_error = "ct_matmul is not exported by this libctensor";
  } else {
    CTStatus s = ct_matmul_workspace_size(&md, &ta, &tb, nullptr, &tc, &ws_bytes);
    if (s == CT_OK) {
      ws.reset(static_cast<float*>(alloc64(std::max<size_t>(ws_bytes, 64))));
      std::memset(ws.get(), 0, std::max<size_t>(ws_bytes, 64));
      s = ct_matmul(&md, &ta, &tb, nullptr, &tc, ws.get(), ws_bytes, nullptr);
    }
    if (s != CT_OK) ct_error = status_message(s);
  }
  std::vector<Impl> impls;
  if (ct_error.empty()) {
    st.counters["check_rel_err"] = rel_err(c_ct.get(), c_dn.get(), g.c_elems());
    st.counters["ct_workspace_bytes"] = static_cast<double>(ws_bytes);
    impls.push_back({"ct", [&] { ct_matmul(&md, &ta, &tb, nullptr, &tc, ws.get(), ws_bytes, nullptr); }, {}});
  }
  impls.push_back({"dnnl", [&] { pipe.run(); }, {}});
  const int64_t prims0 = primitives_created();
  time_interleaved(impls);
  const int64_t prims1 = primitives_created();
  if (ct_error.empty() && prims0 >= 0 && prims1 >= 0)
    st.counters["ct_primitives_created_in_loop"] = static_cast<double>(prims1 - prims0);
  if (!ct_error.empty()) label += "|ct_error=" + ct_error;
  report_impls(st, impls, g.flops());
  st.counters["batch"] = static_cast<double>(g.batch);
  st.counters["M"] = static_cast<double>(g.M);
  st.counters["K"] = static_cast<double>(g.K);
  st.counters["N"] = static_cast<double>(g.N);
  st.SetLabel(label.c_str());
}

void BM_nn_matmul(benchmark::State& st) {
  const int64_t n = st.range(0);
  BM_nn_matmul_geom(st, MatmulGeom{0, n, n, n});
}

// The transformer shape: (8, 512, 768) @ (768, 3072).
void BM_nn_matmul_bert(benchmark::State& st) { BM_nn_matmul_geom(st, MatmulGeom{st.range(0), 512, 768, 3072}); }

// ---------------------------------------------------------------------------
// 5. Plan / primitive creation
// ---------------------------------------------------------------------------

// Median seconds of `runs` calls of f.
template <class F>
double median_time(int runs, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    f();
    t.push_back(seconds_since(t0));
  }
  return median(t);
}

void BM_plan_create_conv(benchmark::State& st, const ConvShape* shape, bool nhwc) {
  const ConvGeom g(*shape, st.range(0), nhwc);
  // Descriptors only: ct_plan_create does not read data pointers (a dummy
  // non-null one stands in for each tensor).
  static float dummy[16];
  int64_t xs[4] = {g.N, shape->C, shape->H, shape->W}, wsh[4] = {shape->K, shape->C, shape->R, shape->S},
          ys[4] = {g.N, shape->K, g.P, g.Q};
  int64_t xst[4] = {shape->H * shape->W * shape->C, 1, shape->W * shape->C, shape->C},
          yst[4] = {g.P * g.Q * shape->K, 1, g.Q * shape->K, shape->K};
  CTensor tx = make_tensor(dummy, 4, xs, nhwc ? xst : nullptr), tw = make_tensor(dummy, 4, wsh, nullptr),
          ty = make_tensor(dummy, 4, ys, nhwc ? yst : nullptr);
  CTConv2dDesc d{};
  d.struct_size = sizeof d;
  d.groups = 1;
  d.stride[0] = d.stride[1] = shape->stride;
  d.pad_begin[0] = d.pad_begin[1] = d.pad_end[0] = d.pad_end[1] = shape->pad;
  d.dilation[0] = d.dilation[1] = 1;
  const CTensor* tensors[4] = {&tx, &tw, nullptr, &ty};
  const int runs = g_quick ? 3 : 5;

  std::string ct_error;
  auto ct_create = [&] {
    CTPlan* plan = nullptr;
    const CTStatus s = ct_plan_create(CT_OP_CONV2D, &d, tensors, 4, nullptr, &plan);
    if (s != CT_OK && ct_error.empty()) ct_error = status_message(s);
    ct_plan_destroy(plan);
  };
  // The primitives of a pipeline: the conv and the reorders build_conv_pipe
  // would run (w: the weight reorder; all: src, weights and dst as needed).
  auto dnnl_create = [&](ConvVariant v) {
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
  };
  auto dnnl_w = [&] { dnnl_create(kWAny); };
  auto dnnl_all = [&] { dnnl_create(kAllAny); };
  const bool have_ct = ct_plan_create && ct_plan_destroy;
  if (!have_ct) ct_error = "ct_plan_create is not exported by this libctensor";
  const int cap = dnnl::get_primitive_cache_capacity();
  try {
    // With the cache (warm: the conv rows and the first run here fill it).
    dnnl_w();
    dnnl_all();
    st.counters["dnnl_w_cache_s"] = median_time(runs, dnnl_w);
    st.counters["dnnl_all_cache_s"] = median_time(runs, dnnl_all);
    if (have_ct) {
      ct_create();
      if (ct_error.empty()) st.counters["ct_cache_s"] = median_time(runs, ct_create);
    }
    // Without: every creation generates its kernels.
    dnnl::set_primitive_cache_capacity(0);
    st.counters["dnnl_w_nocache_s"] = median_time(runs, dnnl_w);
    st.counters["dnnl_all_nocache_s"] = median_time(runs, dnnl_all);
    if (have_ct && ct_error.empty()) st.counters["ct_nocache_s"] = median_time(runs, ct_create);
    dnnl::set_primitive_cache_capacity(cap);
  } catch (const dnnl::error& e) {
    dnnl::set_primitive_cache_capacity(cap);
    st.SkipWithError((std::string("oneDNN: ") + e.what()).c_str());
    return;
  }
  st.counters["dnnl_cache_capacity"] = cap;
  st.counters["runs"] = runs;
  const double t = st.counters.count("ct_cache_s") ? static_cast<double>(st.counters["ct_cache_s"])
                                                   : static_cast<double>(st.counters["dnnl_w_cache_s"]);
  for (auto _ : st) st.SetIterationTime(t);
  if (!ct_error.empty()) st.SetLabel(("ct_error=" + ct_error).c_str());
}

// ---------------------------------------------------------------------------
// 2. Per-call overhead on a small conv
// ---------------------------------------------------------------------------

// The median ns per call of up to `samples` batches of `batch` calls, but
// stopping after `budget_s` seconds (at least 5 batches): a loaded host turns
// a 5 us call into milliseconds, and the run must still end.
template <class F>
double median_latency_capped(F&& call, int samples, int batch, double budget_s) {
  std::vector<double> ns;
  auto start = Clock::now();
  for (int i = 0; i < samples; ++i) {
    auto t0 = Clock::now();
    for (int k = 0; k < batch; ++k) {
      call();
      benchmark::ClobberMemory();
    }
    ns.push_back(seconds_since(t0) * 1e9 / batch);
    if (i >= 4 && seconds_since(start) > budget_s) break;
  }
  return median(ns);
}

const ConvShape kSmall = {"small_1x1", 16, 8, 8, 16, 1, 1, 1, 0};

void BM_overhead_conv_small(benchmark::State& st) {
  const ConvGeom g(kSmall, 1, true);
  ConvData c(g);
  std::vector<Impl> impls;  // per_call unused here: latency medians below
  std::string label;
  Pipe pw, pall, pplain, ppre;
  bool have_plain = true;
  try {
    pw = build_conv_pipe(g, kWAny, c.x.get(), c.w.get(), c.y_ref.get());
    pw.run();
    pall = build_conv_pipe(g, kAllAny, c.x.get(), c.w.get(), c.y_dnnl.get());
    ppre = build_conv_pipe(g, kPrebuiltW, c.x.get(), c.w.get(), c.y_dnnl.get());
    pw = build_conv_pipe(g, kWAny, c.x.get(), c.w.get(), c.y_dnnl.get());
  } catch (const dnnl::error& e) {
    st.SkipWithError((std::string("oneDNN: ") + e.what()).c_str());
    return;
  }
  try {
    pplain = build_conv_pipe(g, kPlainW, c.x.get(), c.w.get(), c.y_dnnl.get());
  } catch (const dnnl::error&) {
    have_plain = false;  // no implementation takes plain oihw weights here
  }
  label = "dnnl_w=" + pw.impl + "|dnnl_all=" + pall.impl + "|dnnl_plainw=" + (have_plain ? pplain.impl : "none");

  CtConv ct(c);
  CTPlan* plan = nullptr;
  Buf pws;
  size_t pws_bytes = 0;
  std::string plan_error;
  const CTensor* tensors[4] = {&c.tx, &c.tw, nullptr, &c.ty};
  if (ct.error.empty()) {
    st.counters["check_rel_err"] = rel_err(c.y_ct.get(), c.y_ref.get(), g.y_elems());
    if (!ct_plan_create || !ct_plan_execute || !ct_plan_workspace_size) {
      plan_error = "ct_plan_* is not exported by this libctensor";
    } else {
      CTStatus s = ct_plan_create(CT_OP_CONV2D, &c.d, tensors, 4, nullptr, &plan);
      if (s == CT_OK) s = ct_plan_workspace_size(plan, &pws_bytes);
      if (s == CT_OK) {
        pws.reset(static_cast<float*>(alloc64(std::max<size_t>(pws_bytes, 64))));
        s = ct_plan_execute(plan, tensors, 4, pws.get(), pws_bytes, nullptr);
      }
      if (s != CT_OK) plan_error = status_message(s);
    }
  }

  struct Var {
    const char* key;
    std::function<void()> call;
    std::vector<double> medians;
  };
  std::vector<Var> vars;
  if (ct.error.empty()) vars.push_back({"ct_ns", [&] { ct.call(); }, {}});
  if (ct.error.empty() && plan_error.empty())
    vars.push_back({"ct_plan_ns", [&] { ct_plan_execute(plan, tensors, 4, pws.get(), pws_bytes, nullptr); }, {}});
  vars.push_back({"dnnl_w_ns", [&] { pw.run(); }, {}});
  vars.push_back({"dnnl_all_ns", [&] { pall.run(); }, {}});
  if (have_plain) vars.push_back({"dnnl_plainw_ns", [&] { pplain.run(); }, {}});
  vars.push_back({"dnnl_prebuilt_ns", [&] { ppre.run(); }, {}});

  // Per round and variant ~0.1 s (0.03 s with --ct_quick) of 32-call
  // batches; a slow variant (oneDNN's reference kernel for plain weights:
  // > 20 us a call) is timed call by call, so it takes seconds, not minutes.
  const int rounds = 5;
  const double budget_ns = g_quick ? 3e7 : 1e8;
  std::vector<int> samples, batch;
  for (Var& v : vars) {  // warm-up and estimate
    const double est = std::max(ctbench::median_latency(v.call, 10, 4).median_ns, 1.0);
    batch.push_back(est > 20000.0 ? 1 : 32);
    samples.push_back(static_cast<int>(std::max(5.0, std::min(2000.0, budget_ns / (batch.back() * est)))));
  }
  const int64_t prims0 = primitives_created();
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < vars.size(); ++i)
      vars[i].medians.push_back(median_latency_capped(vars[i].call, samples[i], batch[i], budget_ns * 2e-9));
  const int64_t prims1 = primitives_created();
  if (ct.error.empty() && prims0 >= 0 && prims1 >= 0)
    st.counters["ct_primitives_created_in_loop"] = static_cast<double>(prims1 - prims0);
  double first = 0.0;
  for (Var& v : vars) {
    const double m = median(v.medians);
    st.counters[v.key] = m;
    if (first == 0.0) first = m;
  }
  st.counters["flops"] = g.flops();
  for (auto _ : st) st.SetIterationTime(first * 1e-9);
  if (!ct.error.empty()) label += "|ct_error=" + ct.error;
  else if (!plan_error.empty()) label += "|ct_error=plan: " + plan_error;
  st.SetLabel(label.c_str());
  if (ct_plan_destroy) ct_plan_destroy(plan);
}

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

int main(int argc, char** argv) {
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
