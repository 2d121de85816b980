// ctensor bench — time per call, GB/s or GFLOP/s, and the fraction of the
// device's measured limit, for every op of the registry on every device.
//
// Category 1/2 ops run on n-element operands (--size, default 2^22; --quick
// 2^20); reductions reduce a (n/1024, 1024) matrix over all axes and the
// along-axis ops run along axis -1 of it. NN ops run one representative shape
// each (see build_nn). Timing: 2 warm-up calls, k calls per batch so that a
// batch takes about target/5 (target 0.25 s, --quick 0.05 s), 5 batches; a row
// reports the median per-call time of the batches (and the best).
//
// A row with FLOPs (matmul, conv2d and its backwards) is compute-bound and is
// measured against the device's float32 peak; every other row is
// memory-bound, against the STREAM triad bandwidth, with bytes = the sum of
// every tensor argument's size (each read or written once).
//
// --compare: NumPy (bench/bench_compare.py through python3, or CT_PYTHON) for
// the category 1/2 ops it has, after ctensor's rows, and oneDNN called
// directly for matmul and conv2d, right after ctensor's row. ratio = baseline
// time / ctensor time (> 1: ctensor is faster).
#include <ctensor/ctensor.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tool.h"

#if !defined(CT_BENCH_NO_DNNL) && __has_include(<oneapi/dnnl/dnnl.hpp>)
#define CT_BENCH_DNNL 1
#include <oneapi/dnnl/dnnl.hpp>

#include <unordered_map>
#endif

namespace ctool {
namespace {

using Clock = std::chrono::steady_clock;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

const CTDataType kF16{CT_FLOAT, 16, 1}, kF32{CT_FLOAT, 32, 1}, kF64{CT_FLOAT, 64, 1}, kBool{CT_BOOL, 8, 1},
    kI64{CT_INT, 64, 1};

double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }
bool is_float(CTDataType d) { return d.code == CT_FLOAT || d.code == CT_BFLOAT; }
bool same(CTDataType a, CTDataType b) { return a.code == b.code && a.bits == b.bits; }

// Memory the host can write directly (inputs are filled through ct_cast there).
bool host_visible(CTDevice d) {
  return d.device_type == CT_CPU || d.device_type == CT_CUDA_HOST || d.device_type == CT_ROCM_HOST ||
         d.device_type == CT_CUDA_MANAGED;
}

// Input values: floats in [0.5, 2) (log, sqrt, pow, div, atan2 are all fine),
// near 1 for running products, small positive integers 1..7 (shifts, pow and
// divisions stay defined), bools half true; zeros for `any` (which may stop
// at the first nonzero value: all zeros make it read everything), nonzero
// values for `all` (bools all true).
enum Domain { kOutput, kValues, kNearOne, kZeros, kNonzero };

float hash01(uint64_t i, uint64_t salt) {
  uint64_t h = (i + salt * 0x632BE59BD9B4E019ull) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return float(h >> 40) * (1.0f / 16777216.0f);
}

// ---------------------------------------------------------------------------
// One benchmark case: its tensors (ct_malloc'd on the device), workspace, the
// call, and its work.
// ---------------------------------------------------------------------------

struct Case {
  explicit Case(CTDevice d) : dev(d) {}
  Case(const Case&) = delete;
  Case& operator=(const Case&) = delete;
  ~Case() {
    for (void* p : mem) ct_free(dev, p);
  }

  CTDevice dev;
  std::deque<std::vector<int64_t>> shapes;
  std::deque<CTensor> tensors;
  std::vector<void*> mem;
  std::vector<double> params;
  uint64_t bytes = 0;  // every tensor argument once
  double flops = 0;
  std::string shape, error;
  void* ws = nullptr;
  size_t ws_bytes = 0;
  std::function<CTStatus()> run;
  std::shared_ptr<void> keep;  // what run refers to (descriptors)
  uint64_t salt = 1;

  void fail(const std::string& what) {
    if (error.empty()) error = what;
  }

  // A tensor argument of the call (counted in bytes); inputs are filled.
  CTensor* tensor(std::vector<int64_t> shp, CTDataType dt, Domain dom = kValues) {
    shapes.push_back(std::move(shp));
    std::vector<int64_t>& s = shapes.back();
    int64_t numel = 1;
    for (int64_t e : s) numel *= e;
    const size_t nbytes = size_t(numel) * (dt.bits / 8);
    bytes += nbytes;
    CTensor t{};
    t.device = dev;
    t.ndim = int32_t(s.size());
    t.dtype = dt;
    t.shape = s.data();
    void* p = nullptr;
    if (ct_malloc(dev, std::max<size_t>(nbytes, 64), &p) != CT_OK) {
      fail("ct_malloc of " + std::to_string(nbytes) + " bytes: " + ct_last_error());
    } else {
      mem.push_back(p);
      t.data = p;
      if (dom != kOutput) fill(t, numel, dom);
    }
    tensors.push_back(t);
    return &tensors.back();
  }

  void fill(CTensor& t, int64_t numel, Domain dom) {
    std::vector<float> v(size_t(std::max<int64_t>(numel, 1)));
    const uint64_t s = salt++;
    const CTDataType dt = t.dtype;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < numel; ++i) {
      const float u = hash01(uint64_t(i), s);
      v[size_t(i)] = dom == kZeros      ? 0.0f
                     : dt.code == CT_BOOL ? (u < 0.5f && dom != kNonzero ? 0.0f : 1.0f)
                     : !is_float(dt)    ? 1.0f + std::floor(7.0f * u)
                     : dom == kNearOne  ? 0.995f + 0.01f * u
                                        : 0.5f + 1.5f * u;
    }
    CTensor src{v.data(), {CT_CPU, 0}, t.ndim, kF32, t.shape, nullptr, 0};
    if (host_visible(dev)) {
      if (ct_cast(&src, &t, nullptr) != CT_OK) fail(std::string("filling an input (ct_cast): ") + ct_last_error());
      return;
    }
    // Another device: copy float32 values there, then cast on the device
    // (values are only a nicety for timing: a failure leaves them as they are).
    void* p = nullptr;
    if (ct_malloc(dev, v.size() * 4, &p) != CT_OK) return;
    CTensor tmp = src;
    tmp.data = p;
    tmp.device = dev;
    if (ct_copy(&src, &tmp, nullptr) == CT_OK) ct_cast(&tmp, &t, nullptr);
    ct_synchronize(dev, nullptr);
    ct_free(dev, p);
  }

  // The workspace of an NN call, from the status and size of its query.
  void workspace(CTStatus query, size_t n) {
    if (query != CT_OK) return fail(std::string(ct_status_string(query)) + ": " + ct_last_error());
    ws_bytes = n;
    if (n && ct_malloc(dev, n, &ws) != CT_OK) fail("ct_malloc of the workspace: " + std::string(ct_last_error()));
    if (ws) mem.push_back(ws);
  }
};

// ---------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------

struct Timing {
  double median = kNaN, min = kNaN;
  std::string error;
};

// 2 warm-ups, k calls per batch so that a batch takes ~target/5, 5 batches.
Timing time_calls(const std::function<CTStatus()>& call, CTDevice dev, double target) {
  Timing r;
  auto err = [&](CTStatus s) {
    r.error = std::string(ct_status_string(s)) + ": " + ct_last_error();
    return r;
  };
  double one = 0;
  for (int w = 0; w < 2; ++w) {
    const auto t0 = Clock::now();
    if (CTStatus s = call(); s != CT_OK) return err(s);
    ct_synchronize(dev, nullptr);
    one = seconds(t0, Clock::now());
  }
  const int64_t k = std::clamp<int64_t>(std::llround(target / 5 / std::max(one, 1e-9)), 1, 1000000);
  std::vector<double> per;
  for (int b = 0; b < 5; ++b) {
    CTStatus s = CT_OK;
    const auto t0 = Clock::now();
    for (int64_t i = 0; i < k && s == CT_OK; ++i) s = call();
    ct_synchronize(dev, nullptr);
    const double t = seconds(t0, Clock::now());
    if (s != CT_OK) return err(s);
    per.push_back(t / double(k));
  }
  std::sort(per.begin(), per.end());
  r.median = per[per.size() / 2];
  r.min = per.front();
  return r;
}

// ---------------------------------------------------------------------------
// Rows
// ---------------------------------------------------------------------------

struct Baseline {
  double time_s = kNaN, min_s = kNaN;
  std::string note;  // oneDNN: the pipeline and implementation
};

struct Row {
  std::string device, op, category, dtype, shape, bound, status;
  double time_s = kNaN, time_min_s = kNaN, gbps = kNaN, gflops = kNaN, fraction = kNaN, flops = 0;
  uint64_t bytes = 0;
  std::map<std::string, Baseline> baselines;  // "numpy", "onednn"
  // What bench_compare.py needs to build the same case in NumPy.
  int kind = 0;
  std::string out_dtype;
  std::vector<int64_t> np_shape;
  std::vector<double> params;
  bool ok() const { return status == "ok"; }
};

std::string fmt_time(double s) {
  if (!(s > 0)) return "-";
  char b[32];
  if (s < 1e-6) std::snprintf(b, sizeof b, "%.1f ns", s * 1e9);
  else if (s < 1e-3) std::snprintf(b, sizeof b, "%.2f us", s * 1e6);
  else if (s < 1) std::snprintf(b, sizeof b, "%.3f ms", s * 1e3);
  else std::snprintf(b, sizeof b, "%.3f s", s);
  return b;
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string dims(const std::vector<int64_t>& s, const char* sep = "x") {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) r += (i ? sep : "") + std::to_string(s[i]);
  return r;
}

// ---------------------------------------------------------------------------
// Category 1/2 cases
// ---------------------------------------------------------------------------

CTDataType output_dtype(const CTOpInfo& info, CTDataType in) {
  switch (info.output_dtype) {
    case CT_OUTPUT_BOOL: return kBool;
    case CT_OUTPUT_INT64: return kI64;
    case CT_OUTPUT_ACCUM: return is_float(in) ? in : kI64;
    case CT_OUTPUT_FLOAT: return is_float(in) ? in : kF64;
    default: return in;
  }
}

std::vector<double> op_params(const std::string& op, CTDataType dt) {
  const bool f = is_float(dt);
  if (op == "leaky_relu") return {f ? 0.01 : 1.0};
  if (op == "elu") return {1.0};
  if (op == "clamp") return f ? std::vector<double>{0.75, 1.5} : std::vector<double>{2, 5};
  if (op == "pow_scalar") return {f ? 1.5 : 2.0};
  if (op == "add_scalar") return {1.0};
  if (op == "mul_scalar") return {2.0};
  if (op == "var" || op == "std") return {0.0};  // NumPy's default ddof
  return {};
}

void build_elementwise(Case& c, const CTOpInfo& info, CTDataType dt, int64_t n, Row& row) {
  const std::string op = info.name;
  const CTDataType odt = output_dtype(info, dt);
  const Domain dom = (op == "prod" || op == "cumprod") ? kNearOne : op == "any" ? kZeros
                    : op == "all"                        ? kNonzero
                                                         : kValues;
  c.params = op_params(op, dt);
  const std::vector<double>* prm = &c.params;
  const int32_t np = int32_t(c.params.size());
  const int32_t id = info.op;
  row.kind = info.kind;
  row.params = c.params;
  row.out_dtype = dtype_name(odt);
  switch (info.kind) {
    case CT_KIND_UNARY: {
      CTensor *x = c.tensor({n}, dt, dom), *y = c.tensor({n}, odt, kOutput);
      c.run = [=] { return ct_unary(id, x, y, nullptr); };
      break;
    }
    case CT_KIND_UNARY_PARAM: {
      CTensor *x = c.tensor({n}, dt, dom), *y = c.tensor({n}, odt, kOutput);
      c.run = [=] { return ct_unary_param(id, x, prm->data(), np, y, nullptr); };
      break;
    }
    case CT_KIND_TERNARY: {
      CTensor* a = c.tensor({n}, op == "where" ? kBool : dt);
      CTensor *b = c.tensor({n}, dt), *d = c.tensor({n}, dt), *y = c.tensor({n}, odt, kOutput);
      c.run = [=] { return ct_ternary(id, a, b, d, y, nullptr); };
      break;
    }
    case CT_KIND_CAST: {
      const CTDataType to = same(dt, kF16) ? kF32 : kF16;
      row.out_dtype = dtype_name(to);
      CTensor *x = c.tensor({n}, dt), *y = c.tensor({n}, to, kOutput);
      c.run = [=] { return ct_cast(x, y, nullptr); };
      c.shape = std::to_string(n) + " to " + dtype_name(to);
      break;
    }
    case CT_KIND_BINARY: {
      CTensor *a = c.tensor({n}, dt), *b = c.tensor({n}, dt), *y = c.tensor({n}, odt, kOutput);
      c.run = [=] { return ct_binary(id, a, b, y, nullptr); };
      break;
    }
    case CT_KIND_REDUCE:
    case CT_KIND_ALONG_AXIS: {
      const int64_t cols = std::min<int64_t>(1024, n), rows = std::max<int64_t>(1, n / cols);
      row.np_shape = {rows, cols};
      CTensor* x = c.tensor({rows, cols}, dt, dom);
      if (info.kind == CT_KIND_REDUCE) {
        CTensor* y = c.tensor({}, odt, kOutput);
        c.run = [=] { return ct_reduce(id, x, nullptr, 0, 0, prm->data(), np, y, nullptr); };
        c.shape = dims(row.np_shape) + " all axes";
      } else {
        CTensor* y = c.tensor({rows, cols}, odt, kOutput);
        c.run = [=] { return ct_along_axis(id, x, -1, y, nullptr); };
        c.shape = dims(row.np_shape) + " axis -1";
      }
      return;
    }
    default: c.fail("no benchmark for kind " + std::string(kind_name(info.kind)));
  }
  row.np_shape = {n};
  if (c.shape.empty()) c.shape = std::to_string(n);
}

// ---------------------------------------------------------------------------
// NN cases: one representative shape each
// ---------------------------------------------------------------------------

struct ConvGeom {
  int64_t N = 1, C = 64, H = 56, W = 56, K = 64, R = 3, S = 3, pad = 1;
  int64_t P() const { return H + 2 * pad - R + 1; }
  int64_t Q() const { return W + 2 * pad - S + 1; }
  double flops() const { return 2.0 * N * K * P() * Q() * C * R * S; }
};

int64_t matmul_size(bool quick) { return quick ? 512 : 1024; }

// One representative call of an NN op, from its row alone: inputs chosen by
// its shape rule and tensor roles (ResNet-50-like layers, a BERT-base layer
// norm), outputs from ct_op_output_info, the run through ct_nn. Optional
// bias and index arguments are left out (the inference form); optional
// scale/shift and statistics are given.
void build_nn(Case& c, const CTOpInfo& info, CTDataType dt, bool quick) {
  struct Descs {
    CTMatmulDesc mm;
    CTConv2dDesc conv;
    CTPool2dDesc pool;
    CTBatchNormDesc bn;
    CTLayerNormDesc ln;
  };
  auto d = std::make_shared<Descs>();
  std::memset(d.get(), 0, sizeof *d);
  d->mm.struct_size = sizeof d->mm;
  d->conv.struct_size = sizeof d->conv;
  d->pool.struct_size = sizeof d->pool;
  d->bn.struct_size = sizeof d->bn;
  d->ln.struct_size = sizeof d->ln;
  d->bn.epsilon = d->ln.epsilon = 1e-5;
  d->ln.normalized_ndim = 1;
  bool has_index = false;
  for (int i = 0; i < info.num_tensors; ++i) has_index = has_index || info.tensor_roles[i] == CT_ROLE_INDEX;
  const ConvGeom g;
  std::vector<std::vector<int64_t>> in;  // by position; empty: left out
  int64_t extent[2] = {0, 0};
  const void* desc = nullptr;
  switch (info.shape_rule) {
    case CT_SHAPE_MATMUL: {
      const int64_t m = matmul_size(quick);
      in = {{m, m}, {m, m}, {}};
      c.flops = 2.0 * m * m * m;
      c.shape = std::to_string(m) + "x" + std::to_string(m) + " @ " + std::to_string(m) + "x" + std::to_string(m);
      desc = &d->mm;
      break;
    }
    case CT_SHAPE_CONV2D:
    case CT_SHAPE_CONV2D_BACKWARD_DATA:
    case CT_SHAPE_CONV2D_BACKWARD_WEIGHT: {
      CTConv2dDesc& cd = d->conv;
      cd.pad_begin[0] = cd.pad_begin[1] = cd.pad_end[0] = cd.pad_end[1] = g.pad;
      const std::vector<int64_t> xs{g.N, g.C, g.H, g.W}, wsh{g.K, g.C, g.R, g.S}, ys{g.N, g.K, g.P(), g.Q()};
      in = info.shape_rule == CT_SHAPE_CONV2D              ? std::vector<std::vector<int64_t>>{xs, wsh, {}}
           : info.shape_rule == CT_SHAPE_CONV2D_BACKWARD_DATA ? std::vector<std::vector<int64_t>>{ys, wsh}
                                                              : std::vector<std::vector<int64_t>>{xs, ys};
      if (info.shape_rule == CT_SHAPE_CONV2D_BACKWARD_DATA) extent[0] = g.H, extent[1] = g.W;
      if (info.shape_rule == CT_SHAPE_CONV2D_BACKWARD_WEIGHT) extent[0] = g.R, extent[1] = g.S;
      c.flops = g.flops();
      c.shape = dims(xs) + " k" + std::to_string(g.K) + " " + std::to_string(g.R) + "x" + std::to_string(g.S) +
                " pad " + std::to_string(g.pad);
      desc = &cd;
      break;
    }
    case CT_SHAPE_POOL2D:
    case CT_SHAPE_POOL2D_BACKWARD: {
      const int64_t N = 8, C = 64, H = 56, W = 56, k = has_index ? 3 : 2, pad = has_index ? 1 : 0;
      const int64_t P = (H + 2 * pad - k) / 2 + 1, Q = (W + 2 * pad - k) / 2 + 1;
      CTPool2dDesc& pd = d->pool;
      pd.kernel[0] = pd.kernel[1] = k;
      pd.stride[0] = pd.stride[1] = 2;
      pd.pad_begin[0] = pd.pad_begin[1] = pd.pad_end[0] = pd.pad_end[1] = pad;
      const std::vector<int64_t> xs{N, C, H, W}, ys{N, C, P, Q};
      if (info.shape_rule == CT_SHAPE_POOL2D) {
        in = {xs};
      } else {
        in.assign(info.num_inputs, ys);
        extent[0] = H, extent[1] = W;
      }
      c.shape = dims(xs) + " k" + std::to_string(k) + " s2" + (pad ? " pad 1" : "");
      desc = &pd;
      break;
    }
    case CT_SHAPE_NORM: {
      const bool ln = info.desc_type == CT_DESC_LAYER_NORM;
      const std::vector<int64_t> xs = ln ? std::vector<int64_t>{4096, 768} : std::vector<int64_t>{8, 64, 56, 56};
      const std::vector<int64_t> stat = ln ? std::vector<int64_t>{4096} : std::vector<int64_t>{64};
      const std::vector<int64_t> par = ln ? std::vector<int64_t>{768} : std::vector<int64_t>{64};
      for (int i = 0; i < info.num_inputs; ++i) {
        const int32_t r = info.tensor_roles[i];
        in.push_back(r == CT_ROLE_DATA ? xs : r == CT_ROLE_STAT ? stat : par);
      }
      c.shape = dims(xs) + (ln ? " last axis" : "");
      desc = ln ? (const void*)&d->ln : (const void*)&d->bn;
      break;
    }
    default: return c.fail(std::string("no benchmark shape for NN op ") + info.name);
  }
  // Inputs (an index input holds the forward's indices, made on an input of its own).
  std::vector<const CTensor*> t(info.num_tensors, nullptr);
  for (int i = 0; i < info.num_inputs; ++i) {
    if (in[i].empty()) continue;
    const int32_t r = info.tensor_roles[i];
    const CTDataType tdt = r == CT_ROLE_STAT || r == CT_ROLE_PARAM ? kF32 : r == CT_ROLE_INDEX ? kI64 : dt;
    t[i] = c.tensor(in[i], tdt, r == CT_ROLE_INDEX ? kOutput : kValues);
  }
  for (int i = 0; i < info.num_inputs; ++i)
    if (t[i] && info.tensor_roles[i] == CT_ROLE_INDEX) {
      std::string fwd = info.name;
      fwd = fwd.substr(0, fwd.rfind("_backward"));
      int32_t fop = -1;
      Case f(c.dev);
      const std::vector<int64_t> xs{in[0][0], in[0][1], extent[0], extent[1]};
      CTensor* fx = f.tensor(xs, dt);
      CTensor* fy = f.tensor(in[0], dt, kOutput);
      const CTensor* ft[3] = {fx, fy, t[i]};
      size_t n = 0;
      CTStatus s = ct_op_find(fwd.c_str(), &fop);
      if (s == CT_OK) s = ct_nn_workspace_size(fop, desc, ft, 3, &n);
      f.workspace(s, n);
      if (s == CT_OK && f.error.empty()) s = ct_nn(fop, desc, ft, 3, f.ws, f.ws_bytes, nullptr);
      if (s != CT_OK) f.fail(std::string(ct_status_string(s)) + ": " + ct_last_error());
      ct_synchronize(c.dev, nullptr);
      if (!f.error.empty()) return c.fail(fwd + " forward for the indices: " + f.error);
    }
  // Outputs, as the library says.
  CTOpArgs a;
  std::memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.desc = desc;
  a.extent[0] = extent[0];
  a.extent[1] = extent[1];
  std::vector<CTOutputInfo> outs(info.num_outputs);
  if (CTStatus s = ct_op_output_info(info.op, &a, t.data(), info.num_inputs, outs.data(), info.num_outputs))
    return c.fail(std::string("ct_op_output_info: ") + ct_status_string(s) + ": " + ct_last_error());
  for (int j = 0; j < info.num_outputs; ++j) {
    const int i = info.num_inputs + j;
    const int32_t r = info.tensor_roles[i];
    if (((info.optional_mask >> i) & 1u) && (r == CT_ROLE_BIAS || r == CT_ROLE_INDEX)) continue;
    t[i] = c.tensor(std::vector<int64_t>(outs[j].shape, outs[j].shape + outs[j].ndim), outs[j].dtype, kOutput);
  }
  size_t n = 0;
  const int32_t op = info.op, nt = info.num_tensors;
  const CTStatus qs = ct_nn_workspace_size(op, desc, t.data(), nt, &n);
  c.workspace(qs, n);
  void* ws = c.ws;
  const size_t wb = c.ws_bytes;
  c.run = [=] { return ct_nn(op, desc, t.data(), nt, ws, wb, nullptr); };
  c.keep = d;  // the descriptors desc points to live as long as c.run
}

// ---------------------------------------------------------------------------
// oneDNN called directly (--compare): matmul and conv2d, the same shapes
// ---------------------------------------------------------------------------

#ifdef CT_BENCH_DNNL
struct DnnlPipe {
  std::vector<std::pair<dnnl::primitive, std::unordered_map<int, dnnl::memory>>> steps;
  std::string impl;
};

dnnl::engine& dnnl_engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// A memory object with its own buffer; inputs get positive values (bytes 0x3c:
// 0.0115 as float32, ~1.06 as float16).
dnnl::memory dnnl_mem(const dnnl::memory::desc& d, bool input) {
  dnnl::memory m(d, dnnl_engine());
  if (input) std::memset(m.get_data_handle(), 0x3c, d.get_size());
  return m;
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

// The user's layouts in and out (row-major a, b, out; NCHW x, y, OIHW w).
// conv2d: any_io = false keeps x, y in NCHW for the conv (weights reordered
// from OIHW to the conv's choice in every call, as ct_conv2d must); true lets
// the conv pick every layout and reorders x and y inside the call too.
DnnlPipe dnnl_pipe(const std::string& op, dnnl::memory::data_type t, bool quick, bool any_io) {
  using tag = dnnl::memory::format_tag;
  using md = dnnl::memory::desc;
  DnnlPipe p;
  auto& eng = dnnl_engine();
  if (op == "matmul") {
    const int64_t m = matmul_size(quick);
    md a({m, m}, t, tag::ab), b({m, m}, t, tag::ab), y({m, m}, t, tag::ab);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, y), user_scratchpad(), eng);
    p.impl = pd.impl_info_str();
    p.steps.push_back({dnnl::matmul(pd),
                       {{DNNL_ARG_SRC, dnnl_mem(a, true)},
                        {DNNL_ARG_WEIGHTS, dnnl_mem(b, true)},
                        {DNNL_ARG_DST, dnnl_mem(y, false)},
                        {DNNL_ARG_SCRATCHPAD, dnnl_mem(pd.scratchpad_desc(), false)}}});
    return p;
  }
  const ConvGeom g;
  md ux({g.N, g.C, g.H, g.W}, t, tag::nchw), uw({g.K, g.C, g.R, g.S}, t, tag::oihw),
      uy({g.N, g.K, g.P(), g.Q()}, t, tag::nchw);
  md ax({g.N, g.C, g.H, g.W}, t, tag::any), aw({g.K, g.C, g.R, g.S}, t, tag::any),
      ay({g.N, g.K, g.P(), g.Q()}, t, tag::any);
  dnnl::convolution_forward::desc cd(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                     any_io ? ax : ux, aw, any_io ? ay : uy, {1, 1}, {g.pad, g.pad},
                                     {g.pad, g.pad});
  dnnl::convolution_forward::primitive_desc pd(cd, user_scratchpad(), eng);
  p.impl = pd.impl_info_str();
  dnnl::memory mx = dnnl_mem(ux, true), mw = dnnl_mem(uw, true), my = dnnl_mem(uy, false);
  auto to_conv = [&](dnnl::memory user, const md& want) {
    if (want == user.get_desc()) return user;
    dnnl::memory m = dnnl_mem(want, false);
    p.steps.push_back({dnnl::reorder(user, m), {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, m}}});
    return m;
  };
  dnnl::memory cx = to_conv(mx, pd.src_desc()), cw = to_conv(mw, pd.weights_desc());
  dnnl::memory cy = pd.dst_desc() == uy ? my : dnnl_mem(pd.dst_desc(), false);
  p.steps.push_back({dnnl::convolution_forward(pd),
                     {{DNNL_ARG_SRC, cx},
                      {DNNL_ARG_WEIGHTS, cw},
                      {DNNL_ARG_DST, cy},
                      {DNNL_ARG_SCRATCHPAD, dnnl_mem(pd.scratchpad_desc(), false)}}});
  if (cy != my) p.steps.push_back({dnnl::reorder(cy, my), {{DNNL_ARG_FROM, cy}, {DNNL_ARG_TO, my}}});
  return p;
}

// The faster oneDNN pipeline for the row's op, or a note why there is none.
Baseline onednn_baseline(const std::string& op, CTDataType dt, bool quick, double target) {
  Baseline best;
  dnnl::memory::data_type t;
  if (same(dt, kF32)) t = dnnl::memory::data_type::f32;
  else if (same(dt, kF16)) t = dnnl::memory::data_type::f16;
  else if (dt.code == CT_BFLOAT) t = dnnl::memory::data_type::bf16;
  else {
    best.note = "no oneDNN type for " + dtype_name(dt);
    return best;
  }
  for (bool any_io : {false, true}) {
    if (op == "matmul" && any_io) break;
    try {
      DnnlPipe p = dnnl_pipe(op, t, quick, any_io);
      dnnl::stream s(dnnl_engine());
      Timing r = time_calls(
          [&] {
            for (auto& st : p.steps) st.first.execute(s, st.second);
            s.wait();
            return CT_OK;
          },
          CTDevice{CT_CPU, 0}, target);
      if (r.median < best.time_s || !(best.time_s > 0)) {
        best.time_s = r.median;
        best.min_s = r.min;
        best.note = std::string(op == "matmul" ? "row-major" : any_io ? "any layout, reorders per call"
                                                                      : "NCHW, weights reordered per call") +
                    "; " + p.impl;
      }
    } catch (const dnnl::error& e) {
      if (!(best.time_s > 0)) best.note = std::string("oneDNN: ") + e.what();
    }
  }
  return best;
}
#endif

// ---------------------------------------------------------------------------
// Helper scripts (bench_compare.py, plot_bench.py) and running them
// ---------------------------------------------------------------------------

std::string exe_dir() {
  char b[4096];
  const ssize_t n = readlink("/proc/self/exe", b, sizeof b - 1);
  if (n <= 0) return "";
  std::string p(b, size_t(n));
  return p.substr(0, p.rfind('/'));
}

bool readable(const std::string& p) { return access(p.c_str(), R_OK) == 0; }

// The script next to an installed tool (<bindir>/../share/ctensor), in the
// install's data dir, or in the source tree's bench/ (a build tree's tool).
std::string find_script(const std::string& name) {
  std::vector<std::string> dirs;
  if (const char* d = std::getenv("CT_BENCH_SCRIPTS"); d && *d) dirs.push_back(d);
  const std::string exe = exe_dir();
#ifdef CT_BIN_TO_DATADIR  // e.g. "../share/ctensor" from file(RELATIVE_PATH ...) in CMake
  if (!exe.empty()) dirs.push_back(exe + "/" CT_BIN_TO_DATADIR);
#endif
  if (!exe.empty()) dirs.insert(dirs.end(), {exe + "/../share/ctensor", exe});
#ifdef CT_INSTALL_DATADIR
  dirs.push_back(CT_INSTALL_DATADIR);
#endif
#ifdef CT_SOURCE_DIR
  dirs.push_back(std::string(CT_SOURCE_DIR) + "/bench");
#endif
  if (!exe.empty()) dirs.push_back(exe + "/../../bench");  // build/tools/ctensor inside the source tree
  for (const std::string& d : dirs)
    if (readable(d + "/" + name)) return d + "/" + name;
  return "";
}

std::string python() {
  const char* p = std::getenv("CT_PYTHON");
  return p && *p ? p : "python3";
}

std::string shell_quote(const std::string& s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

// The exit status of a shell command (127: not found).
int run_shell(const std::string& cmd) {
  std::fflush(stdout);
  std::fflush(stderr);
  const int st = std::system(cmd.c_str());
  if (st == -1) return 127;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

std::string temp_file(const char* suffix) {
  const char* dir = std::getenv("TMPDIR");
  std::string t = std::string(dir && *dir ? dir : "/tmp") + "/ctensor-bench-XXXXXX" + suffix;
  std::vector<char> b(t.begin(), t.end());
  b.push_back(0);
  const int fd = mkstemps(b.data(), int(std::strlen(suffix)));
  if (fd < 0) return "";
  close(fd);
  return b.data();
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A tiny reader for the script's flat answer: {"numpy_version": "...",
// "times": {"key": seconds, ...}, "min_times": {...}}.
std::map<std::string, double> parse_times(const std::string& text, const std::string& field) {
  std::map<std::string, double> r;
  size_t p = text.find("\"" + field + "\"");
  if (p == std::string::npos) return r;
  p = text.find('{', p);
  const size_t end = text.find('}', p);
  while (p != std::string::npos && p < end) {
    const size_t k0 = text.find('"', p);
    if (k0 == std::string::npos || k0 > end) break;
    const size_t k1 = text.find('"', k0 + 1);
    const size_t colon = text.find(':', k1);
    char* e = nullptr;
    const double v = std::strtod(text.c_str() + colon + 1, &e);
    if (e != text.c_str() + colon + 1) r[text.substr(k0 + 1, k1 - k0 - 1)] = v;
    p = size_t(e - text.c_str());
  }
  return r;
}

std::string parse_string(const std::string& text, const std::string& field) {
  size_t p = text.find("\"" + field + "\"");
  if (p == std::string::npos) return "";
  p = text.find('"', text.find(':', p));
  const size_t e = text.find('"', p + 1);
  return p == std::string::npos || e == std::string::npos ? "" : text.substr(p + 1, e - p - 1);
}

// NumPy baselines for the ok category 1/2 rows, in one run of the script.
void numpy_baselines(std::vector<Row>& rows, double target) {
  std::ostringstream req;
  req << "[";
  size_t n = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    if (!r.ok() || r.category == "nn" || r.np_shape.empty()) continue;
    int64_t numel = 1;
    for (int64_t e : r.np_shape) numel *= e;
    req << (n++ ? ",\n " : "") << "{\"key\": \"" << i << "\", \"op\": \"" << json_escape(r.op) << "\", \"kind\": \""
        << kind_name(r.kind) << "\", \"dtype\": \"" << r.dtype << "\", \"out_dtype\": \"" << r.out_dtype
        << "\", \"shape\": [" << dims(r.np_shape, ", ") << "], \"n\": " << numel << ", \"params\": [";
    for (size_t k = 0; k < r.params.size(); ++k) req << (k ? ", " : "") << json_num(r.params[k]);
    req << "], \"axis\": " << (r.kind == CT_KIND_ALONG_AXIS ? "-1" : "null") << ", \"target_s\": " << json_num(target)
        << "}";
  }
  req << "]\n";
  if (!n) return;
  const std::string script = find_script("bench_compare.py");
  if (script.empty()) {
    std::printf("NumPy baselines skipped: bench_compare.py not found (looked next to the tool, in "
                "../share/ctensor and the source tree's bench/; set CT_BENCH_SCRIPTS to its folder)\n");
    return;
  }
  const std::string in = temp_file(".json"), out = temp_file(".json");
  if (in.empty() || out.empty() || !write_file(in, req.str())) {
    std::printf("NumPy baselines skipped: cannot write a temporary file\n");
    return;
  }
  std::fprintf(stderr, "ctensor: timing %zu NumPy baselines with %s ...\n", n, python().c_str());
  const int rc = run_shell(shell_quote(python()) + " " + shell_quote(script) + " < " + shell_quote(in) + " > " +
                           shell_quote(out));
  const std::string text = read_text(out);
  std::remove(in.c_str());
  std::remove(out.c_str());
  if (rc == 127) {
    std::printf("NumPy baselines skipped: %s not found (set CT_PYTHON to a Python with NumPy)\n", python().c_str());
    return;
  }
  if (rc == 3) {
    std::printf("NumPy baselines skipped: NumPy is not installed for %s (pip install numpy, or set CT_PYTHON)\n",
                python().c_str());
    return;
  }
  if (rc != 0) {
    std::printf("NumPy baselines skipped: %s %s failed (exit status %d)\n", python().c_str(), script.c_str(), rc);
    return;
  }
  const auto med = parse_times(text, "times"), mins = parse_times(text, "min_times");
  std::string none;  // requested rows NumPy has no function for
  for (size_t i = 0; i < rows.size(); ++i)
    if (req.str().find("{\"key\": \"" + std::to_string(i) + "\"") != std::string::npos &&
        !med.count(std::to_string(i)))
      none += (none.empty() ? "" : ", ") + rows[i].op + (rows[i].dtype == "float32" ? "" : " " + rows[i].dtype);
  if (!none.empty()) std::printf("NumPy has no equivalent of: %s\n", none.c_str());
  for (const auto& [key, t] : med) {
    const size_t i = std::strtoull(key.c_str(), nullptr, 10);
    if (i >= rows.size() || !(t > 0)) continue;
    Baseline b;
    b.time_s = t;
    b.min_s = mins.count(key) ? mins.at(key) : kNaN;
    b.note = "NumPy " + parse_string(text, "numpy_version");
    rows[i].baselines["numpy"] = b;
  }
}

// ---------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------

const char* kRowFmt = "%-24s %-8s %-28s %11s %15s %7s  %s\n";

void print_row(const Row& r) {
  if (!r.ok()) {
    std::printf("%-24s %-8s %-28s %s\n", r.op.c_str(), r.dtype.c_str(), r.shape.c_str(), r.status.c_str());
    return;
  }
  const bool compute = r.bound == "compute";
  const std::string rate = compute ? fmt("%.1f GFLOP/s", r.gflops) : fmt("%.2f GB/s", r.gbps);
  std::string line = fmt_time(r.time_s);
  std::printf("%-24s %-8s %-28s %11s %15s %7s  %s", r.op.c_str(), r.dtype.c_str(), r.shape.c_str(), line.c_str(),
              rate.c_str(), std::isfinite(r.fraction) ? fmt("%.1f%%", 100 * r.fraction).c_str() : "-",
              r.bound.c_str());
  for (const auto& [name, b] : r.baselines)
    if (b.time_s > 0) std::printf("   %s %.2fx", name.c_str(), b.time_s / r.time_s);
  std::printf("\n");
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string r = "\"";
  for (char c : s) r += c == '"' ? std::string("\"\"") : std::string(1, c);
  return r + "\"";
}

std::string num_or_empty(double v) { return std::isfinite(v) ? json_num(v) : ""; }

std::string flops_str(double f) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f", f);
  return b;
}

struct DevOut {
  Device dev;
  Limits lim;
};

std::string to_json(const Options& o, const std::vector<DevOut>& devs, const std::vector<Row>& rows,
                    double other_load) {
  std::ostringstream js;
  js << "{\n  \"tool\": \"ctensor bench\",\n  \"version\": \"" << json_escape(ct_version_string())
     << "\",\n  \"quick\": " << (o.quick ? "true" : "false") << ",\n  \"compare\": " << (o.compare ? "true" : "false")
     << ",\n  \"date\": \"" << json_escape(now_string()) << "\",\n  \"other_load\": " << json_num(other_load)
     << ",\n  \"devices\": [";
  for (size_t i = 0; i < devs.size(); ++i) {
    const auto& d = devs[i];
    js << (i ? "," : "") << "\n    {\"label\": \"" << json_escape(d.dev.label) << "\", \"name\": \""
       << json_escape(d.dev.info.name) << "\", \"backend\": \"" << json_escape(d.dev.info.backend)
       << "\", \"threads\": " << d.dev.info.default_threads << ", \"limits\": {\"bandwidth_Bps\": "
       << json_num(d.lim.bandwidth) << ", \"peak_flops\": " << json_num(d.lim.peak_flops) << ", \"measured\": \""
       << json_escape(d.lim.measured) << "\", \"note\": \"" << json_escape(d.lim.note) << "\"}}";
  }
  js << "\n  ],\n  \"rows\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    js << (i ? "," : "") << "\n    {\"device\": \"" << json_escape(r.device) << "\", \"op\": \"" << json_escape(r.op)
       << "\", \"category\": \"" << r.category << "\", \"dtype\": \"" << r.dtype << "\", \"shape\": \""
       << json_escape(r.shape) << "\", \"time_s\": " << json_num(r.time_s) << ", \"time_min_s\": "
       << json_num(r.time_min_s) << ", \"bytes\": " << r.bytes << ", \"flops\": " << flops_str(r.flops)
       << ", \"gbps\": " << json_num(r.gbps) << ", \"gflops\": " << json_num(r.gflops)
       << ", \"fraction\": " << json_num(r.fraction) << ", \"bound\": \"" << r.bound << "\", \"status\": \""
       << json_escape(r.status) << "\"";
    if (o.compare) {
      js << ", \"baselines\": {";
      bool first = true;
      for (const auto& [name, b] : r.baselines) {
        if (!(b.time_s > 0)) continue;
        js << (first ? "" : ", ") << "\"" << name << "\": {\"time_s\": " << json_num(b.time_s)
           << ", \"time_min_s\": " << json_num(b.min_s) << ", \"ratio\": " << json_num(b.time_s / r.time_s)
           << ", \"note\": \"" << json_escape(b.note) << "\"}";
        first = false;
      }
      js << "}";
    }
    js << "}";
  }
  js << "\n  ]\n}\n";
  return js.str();
}

std::string to_csv(const Options& o, const std::vector<Row>& rows) {
  std::ostringstream cs;
  cs << "device,op,category,dtype,shape,time_s,time_min_s,bytes,flops,gbps,gflops,fraction,bound,status";
  if (o.compare) cs << ",numpy_time_s,numpy_ratio,onednn_time_s,onednn_ratio";
  cs << "\n";
  for (const Row& r : rows) {
    cs << csv_field(r.device) << "," << csv_field(r.op) << "," << r.category << "," << r.dtype << ","
       << csv_field(r.shape) << "," << num_or_empty(r.time_s) << "," << num_or_empty(r.time_min_s) << "," << r.bytes
       << "," << flops_str(r.flops) << "," << num_or_empty(r.gbps) << "," << num_or_empty(r.gflops) << ","
       << num_or_empty(r.fraction) << "," << r.bound << "," << csv_field(r.status);
    if (o.compare)
      for (const char* name : {"numpy", "onednn"}) {
        auto it = r.baselines.find(name);
        const double t = it == r.baselines.end() ? kNaN : it->second.time_s;
        cs << "," << num_or_empty(t) << "," << num_or_empty(t / r.time_s);
      }
    cs << "\n";
  }
  return cs.str();
}

void print_baselines(const std::vector<Row>& rows) {
  std::vector<std::string> names;  // the baselines some row has
  for (const char* name : {"numpy", "onednn"})
    for (const Row& r : rows)
      if (r.baselines.count(name)) {
        names.push_back(name);
        break;
      }
  if (names.empty()) return;
  std::printf("\nbaselines (ratio = baseline time / ctensor time; > 1: ctensor is faster)\n");
  std::printf("%-8s %-24s %-8s %11s", "device", "op", "dtype", "ctensor");
  for (const std::string& name : names) std::printf(" %11s %7s", name.c_str(), "ratio");
  std::printf("\n");
  std::map<std::string, std::pair<double, int>> logs;  // name: (sum of log ratios, rows)
  for (const Row& r : rows) {
    if (r.baselines.empty()) continue;
    std::printf("%-8s %-24s %-8s %11s", r.device.c_str(), r.op.c_str(), r.dtype.c_str(), fmt_time(r.time_s).c_str());
    for (const std::string& name : names) {
      auto it = r.baselines.find(name);
      if (it == r.baselines.end()) {
        std::printf(" %11s %7s", "-", "-");
        continue;
      }
      const double ratio = it->second.time_s / r.time_s;
      std::printf(" %11s %7s", fmt_time(it->second.time_s).c_str(), fmt("%.2fx", ratio).c_str());
      logs[name].first += std::log(ratio);
      logs[name].second += 1;
    }
    std::printf("\n");
  }
  for (const auto& [name, l] : logs)
    std::printf("geometric mean of the %s ratios over %d rows: %.2fx\n", name.c_str(), l.second,
                std::exp(l.first / l.second));
}

// CPU time of the whole machine (not idle, steal included) and of this
// process and its children, to tell how much other work ran beside the bench.
struct CpuSample {
  double busy_s = 0, ours_s = 0;
  bool ok = false;
};

CpuSample cpu_sample() {
  CpuSample s;
  std::ifstream f("/proc/stat");
  std::string cpu;
  uint64_t v[8] = {}, total = 0;
  f >> cpu;
  for (uint64_t& x : v) f >> x, total += x;
  const long hz = sysconf(_SC_CLK_TCK);
  if (cpu != "cpu" || !f || hz <= 0) return s;
  s.busy_s = double(total - v[3] - v[4]) / double(hz);  // all but idle and iowait
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage ru{};
    getrusage(who, &ru);
    s.ours_s += ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  }
  s.ok = true;
  return s;
}

// The share of the machine's CPUs other work used between a and b (0..1), or NaN.
double other_load(const CpuSample& a, const CpuSample& b, double wall) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (!a.ok || !b.ok || cpus <= 0 || wall <= 0) return kNaN;
  return std::clamp(((b.busy_s - a.busy_s) - (b.ours_s - a.ours_s)) / (wall * double(cpus)), 0.0, 1.0);
}

// Picks the row's dtype; false (with the reason) when it is not supported.
bool pick_dtype(const Options& o, const CTOpInfo& info, const Device& d, CTDataType* dt, std::string* why) {
  if (!o.dtype.empty()) {
    dtype_from_name(o.dtype, dt);
    if (ct_op_supported(info.op, d.info.device, *dt) == CT_OK) return true;
    *why = ct_last_error();
    return false;
  }
  std::vector<CTDataType> tries{kF32};
  if (info.category != CT_CATEGORY_NN) tries.insert(tries.end(), {{CT_INT, 32, 1}, kBool, {CT_INT, 8, 1}});
  for (size_t i = 0; i < tries.size(); ++i) {
    if (ct_op_supported(info.op, d.info.device, tries[i]) == CT_OK) {
      *dt = tries[i];
      return true;
    }
    if (i == 0) *why = ct_last_error();
  }
  *dt = kF32;
  return false;
}

}  // namespace

// ---------------------------------------------------------------------------
// bench
// ---------------------------------------------------------------------------

int cmd_bench(const Options& o) {
  const auto t_start = Clock::now();
  const CpuSample cpu_start = cpu_sample();
  const std::vector<Device> devs = select_devices(o);
  std::vector<CTOpInfo> ops;
  for (const CTOpInfo& info : registry())
    if (selected_op(o, info)) ops.push_back(info);
  // Default sizes reach DRAM: the operands of a category 1/2 op together
  // exceed the last-level cache (STREAM's rule is 4x; --quick settles for
  // about 1.5x, so it finishes in a minute or two).
  long llc_bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (llc_bytes <= 0) llc_bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
  auto pow2_at_least = [](double v) { return int64_t(1) << int(std::ceil(std::log2(std::max(v, 1.0)))); };
  const int64_t n = o.size > 0 ? o.size
                  : o.quick ? std::max<int64_t>(int64_t(1) << 20, pow2_at_least(double(llc_bytes) / 8))
                            : std::max<int64_t>(int64_t(1) << 22, pow2_at_least(double(llc_bytes) / 2));
  const double target = o.quick ? 0.05 : 0.25;

  std::vector<DevOut> douts;
  for (const Device& d : devs) douts.push_back({d, device_limits(d, o.remeasure, o.quick)});

  std::vector<Row> rows;
  int errors = 0, skipped = 0;
  Progress progress(devs.size() * ops.size());
  for (const DevOut& dv : douts) {
    const Device& d = dv.dev;
    const Limits& lim = dv.lim;
    progress.finish();
    std::printf("%s%s %s, %d threads: ", rows.empty() ? "" : "\n", d.label.c_str(), d.info.name,
                d.info.default_threads);
    if (lim.bandwidth > 0)
      std::printf("memory %.1f GB/s (STREAM triad), compute %.0f GFLOP/s (float32 FMA)%s\n", lim.bandwidth / 1e9,
                  lim.peak_flops / 1e9, lim.cached ? ", cached" : "");
    else
      std::printf("limits not measured (%s)\n", lim.note.c_str());
    const bool elementwise =
        std::any_of(ops.begin(), ops.end(), [](const CTOpInfo& i) { return i.category != CT_CATEGORY_NN; });
    if (d.info.device.device_type == CT_CPU && elementwise) {
      long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
      if (llc <= 0) llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
      if (llc > 0 && double(n) * 4 * 3 < double(llc))
        std::printf("note: a binary float32 op's operands (%.3g MiB) fit in the %.0f MiB last-level cache: "
                    "memory-bound rows above 100%% run from cache (--size %lld reaches DRAM)\n",
                    double(n) * 12 / 1048576, double(llc) / 1048576,
                    (long long)(int64_t(1) << int(std::ceil(std::log2(double(llc) / 2)))));
    }
    std::printf(kRowFmt, "op", "dtype", "shape", "time/call", "rate", "%limit", "bound");
    std::fflush(stdout);
    for (size_t k = 0; k < ops.size(); ++k) {
      const CTOpInfo& info = ops[k];
      Row r;
      r.device = d.label;
      r.op = info.name;
      r.category = category_name(info.category);
      r.shape = "-";
      r.bound = "-";
      CTDataType dt{};
      std::string why;
      if (!pick_dtype(o, info, d, &dt, &why)) {
        r.dtype = dtype_name(dt);
        r.status = "skipped: " + why;
        ++skipped;
      } else {
        r.dtype = dtype_name(dt);
        Case c(d.info.device);
        if (info.category == CT_CATEGORY_NN) build_nn(c, info, dt, o.quick);
        else build_elementwise(c, info, dt, n, r);
        r.shape = c.shape;
        r.bytes = c.bytes;
        r.flops = c.flops;
        r.bound = c.flops > 0 ? "compute" : "memory";
        Timing t;
        if (c.error.empty()) t = time_calls(c.run, d.info.device, target);
        else t.error = c.error;
        if (!t.error.empty()) {
          r.status = "error: " + t.error;
          ++errors;
        } else {
          r.status = "ok";
          r.time_s = t.median;
          r.time_min_s = t.min;
          r.gbps = double(r.bytes) / t.median / 1e9;
          if (r.flops > 0) r.gflops = r.flops / t.median / 1e9;
          const double limit = r.flops > 0 ? lim.peak_flops : lim.bandwidth;
          if (limit > 0) r.fraction = r.flops > 0 ? r.flops / t.median / limit : double(r.bytes) / t.median / limit;
        }
      }
#ifdef CT_BENCH_DNNL
      if (o.compare && r.ok() && d.info.device.device_type == CT_CPU && (r.op == "matmul" || r.op == "conv2d")) {
        CTDataType bdt{};
        dtype_from_name(r.dtype, &bdt);
        Baseline b = onednn_baseline(r.op, bdt, o.quick, target);
        if (b.time_s > 0) r.baselines["onednn"] = b;
        else std::fprintf(stderr, "ctensor: no oneDNN baseline for %s: %s\n", r.op.c_str(), b.note.c_str());
      }
#endif
      progress.finish();
      print_row(r);
      std::fflush(stdout);
      rows.push_back(std::move(r));
      progress.step(k + 1 < ops.size() ? std::string(ops[k + 1].name) + " ..." : "");  // what runs next
    }
  }
  progress.finish();
  if (o.compare) {
#ifndef CT_BENCH_DNNL
    std::printf("oneDNN baselines skipped: this tool was built without oneDNN's headers\n");
#endif
    numpy_baselines(rows, target);
    print_baselines(rows);
  }

  // Other work on the machine slows multi-threaded ops a lot (a thread waits
  // for a time slice at every barrier): say so, and record it.
  const double wall = seconds(t_start, Clock::now());
  const double load = wall > 2 ? other_load(cpu_start, cpu_sample(), wall) : kNaN;  // jiffies: too coarse below
  if (load > 0.1)
    std::printf("note: other processes (or the hypervisor's steal) used %.0f%% of this machine's CPUs during the run: "
                "times are pessimistic; rerun on an idle machine\n",
                100 * load);

  int rc = errors ? 1 : 0;
  const std::string json = to_json(o, douts, rows, load);
  if (!o.json.empty() && !write_file(o.json, json)) rc = 1;
  if (!o.csv.empty() && !write_file(o.csv, to_csv(o, rows))) rc = 1;
  if (!o.plot.empty()) {
    const std::string script = find_script("plot_bench.py");
    std::string js = o.json;
    if (js.empty()) js = temp_file(".json");
    if (script.empty()) {
      std::fprintf(stderr, "ctensor: plot_bench.py not found (next to the tool, ../share/ctensor, bench/)\n");
      rc = 1;
    } else if (js.empty() || (o.json.empty() && !write_file(js, json))) {
      rc = 1;
    } else {
      const int prc =
          run_shell(shell_quote(python()) + " " + shell_quote(script) + " " + shell_quote(js) + " " + shell_quote(o.plot));
      if (prc == 127)
        std::fprintf(stderr, "ctensor: %s not found: cannot draw %s (set CT_PYTHON)\n", python().c_str(),
                     o.plot.c_str());
      else if (prc == 0)
        std::printf("plot: %s\n", o.plot.c_str());
      if (prc) rc = 1;
    }
    if (o.json.empty() && !js.empty()) std::remove(js.c_str());
  }
  std::printf("%zu rows: %zu ok, %d skipped, %d errors; %.1f s\n", rows.size(), rows.size() - skipped - errors,
              skipped, errors, seconds(t_start, Clock::now()));
  return rc;
}

}  // namespace ctool
