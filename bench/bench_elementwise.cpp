// bench_elementwise.cpp — the elementwise category through the C ABI, with the
// machine's limit and a baseline measured in the same process (STYLE habit 12).
//
// What runs, in this order (Google Benchmark keeps registration order):
//   1. BM_stream_{copy,triad}/threads:{1,2}: a STREAM-style probe, float32
//      arrays of 2^26 elements, best of several passes. Its 2-thread copy
//      figure is the "limit" every op is reported against (frac_copy_bw).
//   2. BM_accuracy: max ulp error of ctensor's float32 exp and tanh against a
//      float64 reference (measured once in main(), also printed to stderr).
//   3. BM_ct_relu_latency/{0,1}: a 1-element relu through the C ABI,
//      validation and dispatch included, with NULL strides (0) and with the
//      explicit compact strides DLPack 1.2 producers always give (1);
//      counter median_ns.
//   4. For each op and n = 1e3 .. 1e7 (1e8 for relu, cast f32->f16, where):
//      BM_plain_<op>/n (a plain single-threaded loop, the portable baseline)
//      immediately followed by BM_ct_<op>/n, so that the two see the same
//      machine state; the ct benchmark reports vs_plain = t_plain / t_ct.
//
// Extra flags (parsed here, before Google Benchmark's own):
//   --ct_quick          fewer probe passes (for bench/run.py --quick)
//   --ct_max_n=N        skip sizes above N (run.py --quick passes 1e7)
//   --ct_skip_accuracy  do not run the accuracy check
//
// Every benchmark uses real time: ctensor's worker threads do not show up in
// the calling thread's CPU time.

#include <ctensor/ctensor.h>

#include <benchmark/benchmark.h>
#include <omp.h>

#include "bench_common.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using ctbench::alloc64;
using ctbench::Clock;
using ctbench::hash_float;
using ctbench::seconds_since;
using ctbench::status_message;
using ctbench::stream_copy_pass;

bool g_quick = false;
int64_t g_max_n = INT64_MAX;

// ---------------------------------------------------------------------------
// Aligned, first-touched buffers
// ---------------------------------------------------------------------------

// Buffers are shared by all benchmarks and grow on demand, so allocation and
// first touch happen once per size class, not once per benchmark call. Each
// slot holds one kind of content, initialised (in parallel, static schedule,
// like the threads that later use it) when the slot grows.
enum Slot { kA, kB, kC, kOut, kCond, kHalfIn, kHalfOut, kNumSlots };

struct Buffer {
  void* p = nullptr;
  size_t cap = 0;
};
Buffer g_pool[kNumSlots];

void* slot(Slot s, size_t bytes) {
  Buffer& b = g_pool[s];
  if (b.cap >= bytes) return b.p;
  std::free(b.p);
  b.p = alloc64(bytes);
  b.cap = bytes;
  switch (s) {
    case kA:
    case kB:
    case kC: {
      float* f = static_cast<float*>(b.p);
      const int64_t n = static_cast<int64_t>(bytes / sizeof(float));
      const uint64_t salt = static_cast<uint64_t>(s) * 7919u;
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < n; ++i) f[i] = hash_float(static_cast<uint64_t>(i), salt, -5.0f, 5.0f);
      break;
    }
    case kOut: {
      float* f = static_cast<float*>(b.p);
      const int64_t n = static_cast<int64_t>(bytes / sizeof(float));
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < n; ++i) f[i] = 0.0f;
      break;
    }
    case kCond: {
      uint8_t* c = static_cast<uint8_t*>(b.p);
      const int64_t n = static_cast<int64_t>(bytes);
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < n; ++i) c[i] = hash_float(static_cast<uint64_t>(i), 17, 0.0f, 1.0f) < 0.5f;
      break;
    }
    case kHalfIn: {
      _Float16* h = static_cast<_Float16*>(b.p);
      const int64_t n = static_cast<int64_t>(bytes / 2);
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < n; ++i)
        h[i] = static_cast<_Float16>(hash_float(static_cast<uint64_t>(i), 23, -5.0f, 5.0f));
      break;
    }
    case kHalfOut: {
      uint16_t* h = static_cast<uint16_t*>(b.p);
      const int64_t n = static_cast<int64_t>(bytes / 2);
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < n; ++i) h[i] = 0;
      break;
    }
    default:
      break;
  }
  return b.p;
}

// ---------------------------------------------------------------------------
// STREAM-style probe (bench_common.h): copy and triad, 1 and 2 threads. Its
// 2-thread copy figure is the limit every op is reported against.
// ---------------------------------------------------------------------------

// 2-thread STREAM copy, bytes/s (STREAM counting: 8 B per float32 element).
double copy_bw_2t() {
  ctbench::run_stream_probe();  // lazily, when the probe benchmarks were filtered out
  return ctbench::stream_figures().bw(ctbench::kStreamCopy, 2);
}

// ---------------------------------------------------------------------------
// Plain single-threaded loops: the portable baseline. This file is compiled
// with -O3 and the default x86-64 target (no -march), so these are what a
// user's straightforward loop gets; ctensor reaches wider vectors through
// run-time dispatch. noinline keeps each one a real call, as ctensor's is.
// ---------------------------------------------------------------------------

#define CT_BENCH_NOINLINE __attribute__((noinline))

CT_BENCH_NOINLINE void plain_relu(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] < 0.0f ? 0.0f : x[i];
}
CT_BENCH_NOINLINE void plain_exp(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}
CT_BENCH_NOINLINE void plain_tanh(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
}
CT_BENCH_NOINLINE void plain_sigmoid(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + std::exp(-x[i]));
}
CT_BENCH_NOINLINE void plain_gelu(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * 0.70710678118654752f));
}
CT_BENCH_NOINLINE void plain_cast_f32_f16(const float* x, _Float16* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<_Float16>(x[i]);
}
CT_BENCH_NOINLINE void plain_cast_f16_f32(const _Float16* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(x[i]);
}
CT_BENCH_NOINLINE void plain_where(const uint8_t* c, const float* a, const float* b, float* y,
                                   int64_t n) {
  // Both loads unconditional, so GCC if-converts and vectorises this: with
  // `c[i] ? a[i] : b[i]` it keeps a branch, and a random cond makes the
  // baseline a branch-misprediction benchmark (8 ns/element here).
  for (int64_t i = 0; i < n; ++i) {
    const float av = a[i], bv = b[i];
    y[i] = c[i] ? av : bv;
  }
}
CT_BENCH_NOINLINE void plain_fma(const float* a, const float* b, const float* c, float* y,
                                 int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::fma(a[i], b[i], c[i]);
}
CT_BENCH_NOINLINE void plain_clamp(const float* x, float lo, float hi, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::min(std::max(x[i], lo), hi);
}
CT_BENCH_NOINLINE void plain_add_scalar(const float* x, float s, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] + s;
}

// ---------------------------------------------------------------------------
// The ops
// ---------------------------------------------------------------------------

enum Kind { kUnary, kParam, kTernary, kCast };
enum PlainId {
  kRelu, kExp, kTanh, kSigmoid, kGelu, kCastF32F16, kCastF16F32, kWhere, kFma, kClamp, kAddScalar
};

struct OpSpec {
  const char* name;  // benchmark suffix: BM_ct_<name>, BM_plain_<name>
  PlainId id;
  Kind kind;
  int32_t ct_op;
  int32_t num_params;
  double params[2];
  int bytes_per_elem;  // read + written, per element
  int64_t max_n;
};

const OpSpec kOps[] = {
    {"relu", kRelu, kUnary, CT_OP_RELU, 0, {0, 0}, 8, 100000000},
    {"exp", kExp, kUnary, CT_OP_EXP, 0, {0, 0}, 8, 10000000},
    {"tanh", kTanh, kUnary, CT_OP_TANH, 0, {0, 0}, 8, 10000000},
    {"sigmoid", kSigmoid, kUnary, CT_OP_SIGMOID, 0, {0, 0}, 8, 10000000},
    {"gelu", kGelu, kUnary, CT_OP_GELU, 0, {0, 0}, 8, 10000000},
    {"cast_f32_f16", kCastF32F16, kCast, CT_OP_CAST, 0, {0, 0}, 6, 100000000},
    {"cast_f16_f32", kCastF16F32, kCast, CT_OP_CAST, 0, {0, 0}, 6, 10000000},
    {"where", kWhere, kTernary, CT_OP_WHERE, 0, {0, 0}, 13, 100000000},
    {"fma", kFma, kTernary, CT_OP_FMA, 0, {0, 0}, 16, 10000000},
    {"clamp", kClamp, kParam, CT_OP_CLAMP, 2, {-1.0, 1.0}, 8, 10000000},
    {"add_scalar", kAddScalar, kParam, CT_OP_ADD_SCALAR, 1, {1.5, 0}, 8, 10000000},
};

const CTDataType kF32 = {CT_FLOAT, 32, 1};
const CTDataType kF16 = {CT_FLOAT, 16, 1};
const CTDataType kBool = {CT_BOOL, 8, 1};

CTensor tensor1d(void* data, int64_t* shape, CTDataType dt) {
  CTensor t;
  t.data = data;
  t.device.device_type = CT_CPU;
  t.device.device_id = 0;
  t.ndim = 1;
  t.dtype = dt;
  t.shape = shape;
  t.strides = nullptr;
  t.byte_offset = 0;
  return t;
}

// Raw pointers for one (op, n), taken from the pool.
struct Operands {
  float* a;
  float* b;
  float* c;
  float* out;
  uint8_t* cond;
  _Float16* half_in;
  _Float16* half_out;
};

Operands operands_for(const OpSpec& op, int64_t n) {
  const size_t nf = static_cast<size_t>(n) * sizeof(float);
  Operands o{};
  switch (op.id) {
    case kCastF32F16:
      o.a = static_cast<float*>(slot(kA, nf));
      o.half_out = static_cast<_Float16*>(slot(kHalfOut, static_cast<size_t>(n) * 2));
      break;
    case kCastF16F32:
      o.half_in = static_cast<_Float16*>(slot(kHalfIn, static_cast<size_t>(n) * 2));
      o.out = static_cast<float*>(slot(kOut, nf));
      break;
    case kWhere:
      o.cond = static_cast<uint8_t*>(slot(kCond, static_cast<size_t>(n)));
      o.a = static_cast<float*>(slot(kA, nf));
      o.b = static_cast<float*>(slot(kB, nf));
      o.out = static_cast<float*>(slot(kOut, nf));
      break;
    case kFma:
      o.a = static_cast<float*>(slot(kA, nf));
      o.b = static_cast<float*>(slot(kB, nf));
      o.c = static_cast<float*>(slot(kC, nf));
      o.out = static_cast<float*>(slot(kOut, nf));
      break;
    default:
      o.a = static_cast<float*>(slot(kA, nf));
      o.out = static_cast<float*>(slot(kOut, nf));
      break;
  }
  return o;
}

inline void run_plain(const OpSpec& op, const Operands& o, int64_t n) {
  switch (op.id) {
    case kRelu: plain_relu(o.a, o.out, n); break;
    case kExp: plain_exp(o.a, o.out, n); break;
    case kTanh: plain_tanh(o.a, o.out, n); break;
    case kSigmoid: plain_sigmoid(o.a, o.out, n); break;
    case kGelu: plain_gelu(o.a, o.out, n); break;
    case kCastF32F16: plain_cast_f32_f16(o.a, o.half_out, n); break;
    case kCastF16F32: plain_cast_f16_f32(o.half_in, o.out, n); break;
    case kWhere: plain_where(o.cond, o.a, o.b, o.out, n); break;
    case kFma: plain_fma(o.a, o.b, o.c, o.out, n); break;
    case kClamp:
      plain_clamp(o.a, static_cast<float>(op.params[0]), static_cast<float>(op.params[1]), o.out, n);
      break;
    case kAddScalar: plain_add_scalar(o.a, static_cast<float>(op.params[0]), o.out, n); break;
  }
}

// Per-iteration seconds of the last BM_plain_<op>/n call, for vs_plain.
std::map<std::pair<int, int64_t>, double> g_plain_s;

void set_rate_counters(benchmark::State& st, const OpSpec& op, int64_t n) {
  const double bytes = static_cast<double>(n) * op.bytes_per_elem;
  st.SetBytesProcessed(static_cast<int64_t>(bytes) * st.iterations());
  st.SetItemsProcessed(n * st.iterations());
  const double bw = copy_bw_2t();
  if (bw > 0)
    st.counters["frac_copy_bw"] =
        benchmark::Counter(bytes * static_cast<double>(st.iterations()) / bw, benchmark::Counter::kIsRate);
  st.counters["bytes_per_elem"] = op.bytes_per_elem;
}

void BM_plain(benchmark::State& st, const OpSpec* op) {
  const int64_t n = st.range(0);
  Operands o = operands_for(*op, n);
  run_plain(*op, o, n);  // warm up (page in, caches)
  auto t0 = Clock::now();
  for (auto _ : st) {
    run_plain(*op, o, n);
    benchmark::ClobberMemory();
  }
  const double per_iter = seconds_since(t0) / static_cast<double>(st.iterations());
  g_plain_s[{op->id, n}] = per_iter;
  set_rate_counters(st, *op, n);
}

// 2-thread STREAM copy on this benchmark's own buffers (n floats), best of 3:
// at n = 1e7 the 80 MB working set partly fits the 105 MB shared L3, so the
// 2^26 probe is not the only fair limit there.
double copy_bw_same_n(int64_t n) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  const float* src = static_cast<const float*>(slot(kA, bytes));
  float* dst = static_cast<float*>(slot(kOut, bytes));
  double best = 1e30;
  for (int r = 0; r < 3; ++r) best = std::min(best, stream_copy_pass(src, dst, n, 2));
  return 8.0 * static_cast<double>(n) / best;
}

void BM_ct(benchmark::State& st, const OpSpec* op) {
  const int64_t n = st.range(0);
  Operands o = operands_for(*op, n);
  int64_t shape[1] = {n};
  CTensor a{}, b{}, c{}, out{};
  switch (op->id) {
    case kCastF32F16:
      a = tensor1d(o.a, shape, kF32);
      out = tensor1d(o.half_out, shape, kF16);
      break;
    case kCastF16F32:
      a = tensor1d(o.half_in, shape, kF16);
      out = tensor1d(o.out, shape, kF32);
      break;
    case kWhere:
      a = tensor1d(o.cond, shape, kBool);
      b = tensor1d(o.a, shape, kF32);
      c = tensor1d(o.b, shape, kF32);
      out = tensor1d(o.out, shape, kF32);
      break;
    case kFma:
      a = tensor1d(o.a, shape, kF32);
      b = tensor1d(o.b, shape, kF32);
      c = tensor1d(o.c, shape, kF32);
      out = tensor1d(o.out, shape, kF32);
      break;
    default:
      a = tensor1d(o.a, shape, kF32);
      out = tensor1d(o.out, shape, kF32);
      break;
  }
  const int32_t ct_op = op->ct_op;
  const double* params = op->params;
  const int32_t np = op->num_params;
  auto call = [&]() -> CTStatus {
    switch (op->kind) {
      case kUnary: return ct_unary(ct_op, &a, &out, nullptr);
      case kParam: return ct_unary_param(ct_op, &a, params, np, &out, nullptr);
      case kTernary: return ct_ternary(ct_op, &a, &b, &c, &out, nullptr);
      case kCast: return ct_cast(&a, &out, nullptr);
    }
    return CT_ERR_INTERNAL;
  };
  const CTStatus s = call();  // also warms up
  if (s != CT_OK) {
    st.SkipWithError(status_message(s).c_str());
    return;
  }
  auto t0 = Clock::now();
  for (auto _ : st) {
    call();
    benchmark::ClobberMemory();
  }
  const double per_iter = seconds_since(t0) / static_cast<double>(st.iterations());
  set_rate_counters(st, *op, n);
  auto it = g_plain_s.find({op->id, n});
  if (it != g_plain_s.end() && per_iter > 0) st.counters["vs_plain"] = it->second / per_iter;
  if (n >= 10000000) {
    const double local = copy_bw_same_n(n);
    const double bytes = static_cast<double>(n) * op->bytes_per_elem;
    st.counters["copy_bw_same_n"] = local;
    st.counters["frac_copy_bw_same_n"] = bytes / per_iter / local;
  }
}

// ---------------------------------------------------------------------------
// Latency: one element through the whole C ABI path
// ---------------------------------------------------------------------------

void BM_ct_relu_latency(benchmark::State& st) {
  float xs[1] = {-1.0f};
  float ys[1] = {0.0f};
  int64_t shape[1] = {1};
  int64_t strides[1] = {1};
  CTensor x = tensor1d(xs, shape, kF32);
  CTensor y = tensor1d(ys, shape, kF32);
  if (st.range(0)) x.strides = y.strides = strides;
  const CTStatus s = ct_unary(CT_OP_RELU, &x, &y, nullptr);
  if (s != CT_OK) {
    st.SkipWithError(status_message(s).c_str());
    return;
  }
  for (auto _ : st) {
    ct_unary(CT_OP_RELU, &x, &y, nullptr);
    benchmark::ClobberMemory();
  }
  // The target is a median: time many short batches and take their median,
  // which is robust to the shared host's preemptions.
  const ctbench::Latency lat = ctbench::median_latency(
      [&] { ct_unary(CT_OP_RELU, &x, &y, nullptr); }, g_quick ? 2000 : 10000);
  st.counters["median_ns"] = lat.median_ns;
  st.counters["p10_ns"] = lat.p10_ns;
  st.counters["p90_ns"] = lat.p90_ns;
}

// ---------------------------------------------------------------------------
// Accuracy: max ulp error of exp and tanh against a float64 reference
// ---------------------------------------------------------------------------

struct Accuracy {
  bool done = false;
  CTStatus status = CT_OK;
  double max_ulp = 0.0;
  float worst_x = 0.0f;
  float worst_y = 0.0f;
  int64_t count = 0;
};
Accuracy g_acc_exp, g_acc_tanh;

// The size of one float32 ulp at the magnitude of r (a float64 value).
double ulp_at(double r) {
  const double m = std::fabs(r);
  if (m < 0x1p-126) return 0x1p-149;  // subnormal range: fixed spacing
  int e = 0;
  std::frexp(m, &e);  // m = f * 2^e, f in [0.5, 1)
  return std::ldexp(1.0, e - 24);
}

Accuracy measure_ulp(int32_t op, double (*ref)(double), float lo, float hi) {
  std::vector<float> xs;
  const size_t nrand = 10000000;
  xs.reserve(nrand + 9000000);
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (size_t i = 0; i < nrand; ++i) xs.push_back(dist(rng));
  // Dense sweep near 0: every 251st float32 bit pattern in [0, 1), both signs
  // (all exponents, subnormals included), clipped to the domain.
  for (uint32_t bits = 0; bits < 0x3f800000u; bits += 251) {
    float v;
    std::memcpy(&v, &bits, sizeof v);
    if (v <= hi) xs.push_back(v);
    if (-v >= lo) xs.push_back(-v);
  }
  xs.push_back(lo);
  xs.push_back(hi);
  const int64_t n = static_cast<int64_t>(xs.size());
  std::vector<float> ys(xs.size(), 0.0f);
  int64_t shape[1] = {n};
  CTensor x = tensor1d(xs.data(), shape, kF32);
  CTensor y = tensor1d(ys.data(), shape, kF32);
  Accuracy acc;
  acc.done = true;
  acc.count = n;
  acc.status = ct_unary(op, &x, &y, nullptr);
  if (acc.status != CT_OK) {
    std::fprintf(stderr, "accuracy: op %d failed: %s\n", op, ct_last_error());
    acc.max_ulp = NAN;
    return acc;
  }
  int nt = omp_get_max_threads();
  std::vector<double> worst(static_cast<size_t>(nt), 0.0);
  std::vector<int64_t> worst_i(static_cast<size_t>(nt), 0);
#pragma omp parallel
  {
    const int t = omp_get_thread_num();
    double w = 0.0;
    int64_t wi = 0;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
      const double r = ref(static_cast<double>(xs[static_cast<size_t>(i)]));
      const double got = static_cast<double>(ys[static_cast<size_t>(i)]);
      double err;
      if (std::isnan(got) || std::isinf(got)) err = (got == r) ? 0.0 : INFINITY;
      else err = std::fabs(got - r) / ulp_at(r);
      if (err > w) {
        w = err;
        wi = i;
      }
    }
    worst[static_cast<size_t>(t)] = w;
    worst_i[static_cast<size_t>(t)] = wi;
  }
  for (size_t t = 0; t < worst.size(); ++t) {
    if (t == 0 || worst[t] > acc.max_ulp) {
      acc.max_ulp = worst[t];
      acc.worst_x = xs[static_cast<size_t>(worst_i[t])];
      acc.worst_y = ys[static_cast<size_t>(worst_i[t])];
    }
  }
  return acc;
}

double ref_exp(double v) { return std::exp(v); }
double ref_tanh(double v) { return std::tanh(v); }

void run_accuracy() {
  if (g_acc_exp.done) return;
  g_acc_exp = measure_ulp(CT_OP_EXP, ref_exp, -87.0f, 88.0f);
  g_acc_tanh = measure_ulp(CT_OP_TANH, ref_tanh, -10.0f, 10.0f);
  std::fprintf(stderr, "max_ulp exp=%.3f tanh=%.3f\n", g_acc_exp.max_ulp, g_acc_tanh.max_ulp);
  std::fprintf(stderr,
               "  (exp: %lld inputs in [-87, 88] + sweep near 0, worst x=%.9g -> %.9g, ref %.17g;"
               " tanh: %lld inputs in [-10, 10] + sweep, worst x=%.9g -> %.9g, ref %.17g)\n",
               static_cast<long long>(g_acc_exp.count), g_acc_exp.worst_x, g_acc_exp.worst_y,
               std::exp(static_cast<double>(g_acc_exp.worst_x)),
               static_cast<long long>(g_acc_tanh.count), g_acc_tanh.worst_x, g_acc_tanh.worst_y,
               std::tanh(static_cast<double>(g_acc_tanh.worst_x)));
}

void BM_accuracy(benchmark::State& st) {
  run_accuracy();
  for (auto _ : st) st.SetIterationTime(1e-9);
  if (g_acc_exp.status != CT_OK || g_acc_tanh.status != CT_OK) {
    st.SkipWithError("ct_unary failed for exp or tanh");
    return;
  }
  st.counters["max_ulp_exp"] = g_acc_exp.max_ulp;
  st.counters["max_ulp_tanh"] = g_acc_tanh.max_ulp;
  st.counters["worst_x_exp"] = g_acc_exp.worst_x;
  st.counters["worst_x_tanh"] = g_acc_tanh.worst_x;
  st.counters["inputs"] = static_cast<double>(g_acc_exp.count);
}

// ---------------------------------------------------------------------------
// Registration and main
// ---------------------------------------------------------------------------

void register_all() {
  ctbench::register_stream(ctbench::kStreamCopy);
  ctbench::register_stream(ctbench::kStreamTriad);
  benchmark::RegisterBenchmark("BM_accuracy", BM_accuracy)->Iterations(1)->UseManualTime();
  benchmark::RegisterBenchmark("BM_ct_relu_latency", BM_ct_relu_latency)
      ->Arg(0)
      ->Arg(1)
      ->UseRealTime()
      ->Unit(benchmark::kNanosecond);
  const int64_t sizes[] = {1000, 10000, 100000, 1000000, 10000000, 100000000};
  for (const OpSpec& op : kOps) {
    for (int64_t n : sizes) {
      if (n > op.max_n || n > g_max_n) continue;
      benchmark::TimeUnit unit = n >= 1000000 ? benchmark::kMillisecond : benchmark::kMicrosecond;
      benchmark::RegisterBenchmark((std::string("BM_plain_") + op.name).c_str(), BM_plain, &op)
          ->Arg(n)
          ->UseRealTime()
          ->Unit(unit);
      benchmark::RegisterBenchmark((std::string("BM_ct_") + op.name).c_str(), BM_ct, &op)
          ->Arg(n)
          ->UseRealTime()
          ->Unit(unit);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool skip_accuracy = false;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strcmp(a, "--ct_quick") == 0) {
      g_quick = true;
    } else if (std::strncmp(a, "--ct_max_n=", 11) == 0) {
      g_max_n = static_cast<int64_t>(std::strtod(a + 11, nullptr));
    } else if (std::strcmp(a, "--ct_skip_accuracy") == 0) {
      skip_accuracy = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  ctbench::stream_figures().reps = g_quick ? 5 : 10;
  ctbench::stream_figures().with_add = false;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("ctensor_version", ct_version_string());
  benchmark::AddCustomContext("omp_max_threads", std::to_string(omp_get_max_threads()));
  benchmark::AddCustomContext("copy_bw_counting", "STREAM: copy 8 B/elem, triad 12 B/elem");
  register_all();
  if (!skip_accuracy) run_accuracy();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
