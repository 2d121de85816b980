// bench_nn_cases.cpp — the rows of ct_bench_nn: ctensor's conv2d, matmul and
// plan calls next to the oneDNN pipelines of bench_nn_baselines.cpp, on the
// same buffers, timed interleaved in rounds (conv and matmul rows), as
// creation times (plan rows) and as per-call latency (the overhead row).
// Every row first checks ctensor's output against oneDNN's, and counts the
// primitives ctensor created inside its timed loop. bench_nn.cpp says what
// runs, in which order, and what the counters are.

#include "bench_nn.h"

#include <ctensor/ctensor.h>

#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace ctbench::nn {

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

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

namespace {

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

}  // namespace

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

namespace {

void BM_nn_matmul_geom(benchmark::State& st, const MatmulGeom& g) {
  Buf a = make_buf(g.a_elems(), 51), b = make_buf(g.K * g.N, 53), c_ct = make_buf(g.c_elems(), 57),
      c_dn = make_buf(g.c_elems(), 59);
  Pipe pipe;
  try {
    pipe = build_matmul_pipe(g, a.get(), b.get(), c_dn.get());
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

}  // namespace

void BM_nn_matmul(benchmark::State& st) {
  const int64_t n = st.range(0);
  BM_nn_matmul_geom(st, MatmulGeom{0, n, n, n});
}

// The transformer shape: (8, 512, 768) @ (768, 3072).
void BM_nn_matmul_bert(benchmark::State& st) { BM_nn_matmul_geom(st, MatmulGeom{st.range(0), 512, 768, 3072}); }

// ---------------------------------------------------------------------------
// 5. Plan / primitive creation
// ---------------------------------------------------------------------------

namespace {

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

}  // namespace

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
  auto dnnl_w = [&] { create_conv_primitives(g, kWAny); };
  auto dnnl_all = [&] { create_conv_primitives(g, kAllAny); };
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

namespace {

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

}  // namespace

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

}  // namespace ctbench::nn
