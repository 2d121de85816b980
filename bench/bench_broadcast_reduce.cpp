// bench_broadcast_reduce.cpp — category 2 (broadcasting binary ops,
// reductions, along-axis ops) through the C ABI, with the machine's limit
// measured in the same process (STYLE habit 12). bench/run.py --suite
// broadcast_reduce runs this binary, then NumPy on the same shapes, and
// prints one table with the ratios and the targets.
//
// What runs, in this order (Google Benchmark keeps registration order):
//   1. BM_stream_{copy,add,triad}/threads:{1,2}: the STREAM-style probe of
//      bench_common.h (float32, 2^26 elements, best of several passes). Its
//      2-thread add figure is the limit every row is reported against
//      (frac_stream_add): add is the access pattern of a binary op.
//   2. BM_ct_add_latency/{1,1000}: one ct_binary add call of n elements
//      (NULL stream: the library's default, which must not start threads at
//      these sizes); counter median_ns is the median of 32-call batches.
//   3. BM_ct_<row>/<n>: one row per (op, shape), ctensor's default threads.
//      1-D rows take n elements; the others take the side of a square matrix
//      (4096 = a (4096, 4096) float32 matrix, 64 MiB).
//
// Counters of every row: bytes (moved per call: each input read once, the
// output written once — a broadcast operand counts at its own, small, size),
// GBps, frac_stream_add (GBps over the 2-thread STREAM add), elems. Binary rows
// with >= 1e7 output elements also measure a 2-thread STREAM add over the
// same element count right after the op (stream_add_same_n_GBps,
// frac_stream_add_same_n): at 1e7 the 120 MB working set partly fits the
// shared L3, so the 2^26 probe is not the only fair limit there.
//
// Ops that return an error (CT_ERR_UNSUPPORTED while the category lands) are
// reported as skipped rows with the library's message, not as a crash.
//
// Extra flags (parsed here, before Google Benchmark's own):
//   --ct_quick     fewer probe passes and latency samples (run.py --quick)
//   --ct_max_n=N   skip 1-D sizes above N (run.py --quick passes 1e7)
//
// Every benchmark uses real time: ctensor's worker threads do not show up in
// the calling thread's CPU time.

#include <ctensor/ctensor.h>

#include <benchmark/benchmark.h>
#include <omp.h>

#include "bench_common.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// Weak references to the category-2 entry points, so that this binary links
// and runs (reporting every row as skipped) against a libctensor that
// predates them; they are called only after a null check.
#pragma weak ct_binary
#pragma weak ct_reduce
#pragma weak ct_along_axis

namespace {

using ctbench::alloc64;
using ctbench::Clock;
using ctbench::hash_float;
using ctbench::seconds_since;
using ctbench::status_message;

bool g_quick = false;
int64_t g_max_n = INT64_MAX;

constexpr int64_t kSide = 4096;  // matrix rows: (kSide, kSide)

// ---------------------------------------------------------------------------
// Buffers: one per kind of content, grown on demand and first-touched in
// parallel (static schedule, like the threads that later use them), so that
// allocation and page faults happen once per size class, not per benchmark.
// ---------------------------------------------------------------------------

enum Slot { kInA, kInB, kOutF32, kOutBool, kOutI64, kInF16, kInBF16, kNumSlots };

struct Buffer {
  void* p = nullptr;
  size_t cap = 0;
};
Buffer g_pool[kNumSlots];

uint16_t f32_to_bf16(float f) {  // round to nearest even; inputs are finite
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

void* slot(Slot s, size_t bytes) {
  Buffer& b = g_pool[s];
  if (b.cap >= bytes) return b.p;
  std::free(b.p);
  b.p = alloc64(bytes);
  b.cap = bytes;
  const uint64_t salt = static_cast<uint64_t>(s) * 7919u;
  switch (s) {
    case kInA:
    case kInB: {
      float* f = static_cast<float*>(b.p);
      const int64_t n = static_cast<int64_t>(bytes / sizeof(float));
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < n; ++i) f[i] = hash_float(static_cast<uint64_t>(i), salt, -5.0f, 5.0f);
      break;
    }
    case kInF16: {
      _Float16* h = static_cast<_Float16*>(b.p);
      const int64_t n = static_cast<int64_t>(bytes / 2);
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < n; ++i)
        h[i] = static_cast<_Float16>(hash_float(static_cast<uint64_t>(i), salt, -5.0f, 5.0f));
      break;
    }
    case kInBF16: {
      uint16_t* h = static_cast<uint16_t*>(b.p);
      const int64_t n = static_cast<int64_t>(bytes / 2);
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < n; ++i) h[i] = f32_to_bf16(hash_float(static_cast<uint64_t>(i), salt, -5.0f, 5.0f));
      break;
    }
    default: {  // outputs: zeros
      char* c = static_cast<char*>(b.p);
      const int64_t n = static_cast<int64_t>(bytes);
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < n; ++i) c[i] = 0;
      break;
    }
  }
  return b.p;
}

// ---------------------------------------------------------------------------
// The rows
// ---------------------------------------------------------------------------

enum Kind { kBinary, kReduce, kAlong };
// kVec: 1-D of n elements. kMat: (n, n). kRowB: (n, n) op (n,). kColB: (n, n) op (n, 1).
enum Layout { kVec, kMat, kRowB, kColB };
enum Dt { kF32, kF16, kBF16 };

constexpr int32_t kAllAxes = -100;  // reduce over every axis (axes = NULL)

struct Row {
  std::string name;  // BM_ct_<name>/<n>
  Kind kind;
  int32_t op;
  Layout layout;
  Dt dt;
  int32_t axis;  // reduce: kAllAxes, 0 or 1; along: the axis
  int32_t num_params;
  double param;  // var: the correction (0: population variance, as np.var)
  std::vector<int64_t> sizes;
};

const std::vector<int64_t> k1e7 = {10000000};
const std::vector<int64_t> kMatSide = {kSide};

std::vector<Row> make_rows() {
  std::vector<Row> r;
  // Binary ops, 1-D.
  r.push_back({"add", kBinary, CT_OP_ADD, kVec, kF32, 0, 0, 0,
               {1000, 10000, 100000, 1000000, 10000000, 100000000}});
  r.push_back({"mul", kBinary, CT_OP_MUL, kVec, kF32, 0, 0, 0, k1e7});
  r.push_back({"maximum", kBinary, CT_OP_MAXIMUM, kVec, kF32, 0, 0, 0, k1e7});
  r.push_back({"less", kBinary, CT_OP_LESS, kVec, kF32, 0, 0, 0, k1e7});
  // Broadcasting.
  r.push_back({"add_bcast_row", kBinary, CT_OP_ADD, kRowB, kF32, 0, 0, 0, kMatSide});
  r.push_back({"add_bcast_col", kBinary, CT_OP_ADD, kColB, kF32, 0, 0, 0, kMatSide});
  // Reductions: over all of a 1e7 vector, over axis 0 and axis 1 of a matrix.
  struct R {
    const char* name;
    int32_t op;
    int32_t np;
  };
  const R reds[] = {{"sum", CT_OP_SUM, 0},       {"max", CT_OP_MAX, 0},   {"argmax", CT_OP_ARGMAX, 0},
                    {"mean", CT_OP_MEAN, 0},     {"var", CT_OP_VAR, 1},   {"logsumexp", CT_OP_LOGSUMEXP, 0}};
  for (const R& d : reds) r.push_back({d.name, kReduce, d.op, kVec, kF32, kAllAxes, d.np, 0.0, k1e7});
  for (int axis = 0; axis <= 1; ++axis) {
    for (const R& d : reds) {
      r.push_back({std::string(d.name) + "_axis" + std::to_string(axis), kReduce, d.op, kMat, kF32, axis, d.np,
                   0.0, kMatSide});
    }
  }
  // Along one axis.
  r.push_back({"softmax", kAlong, CT_OP_SOFTMAX, kMat, kF32, -1, 0, 0, kMatSide});
  r.push_back({"log_softmax", kAlong, CT_OP_LOG_SOFTMAX, kMat, kF32, -1, 0, 0, kMatSide});
  r.push_back({"cumsum", kAlong, CT_OP_CUMSUM, kVec, kF32, 0, 0, 0, k1e7});
  // Half types: sum of 1e7 (accumulated in float32).
  r.push_back({"sum_f16", kReduce, CT_OP_SUM, kVec, kF16, kAllAxes, 0, 0, k1e7});
  r.push_back({"sum_bf16", kReduce, CT_OP_SUM, kVec, kBF16, kAllAxes, 0, 0, k1e7});
  return r;
}

const CTDataType kDtF32 = {CT_FLOAT, 32, 1};
const CTDataType kDtF16 = {CT_FLOAT, 16, 1};
const CTDataType kDtBF16 = {CT_BFLOAT, 16, 1};
const CTDataType kDtBool = {CT_BOOL, 8, 1};
const CTDataType kDtI64 = {CT_INT, 64, 1};

CTensor make_tensor(void* data, int32_t ndim, int64_t* shape, CTDataType dt) {
  CTensor t;
  t.data = data;
  t.device.device_type = CT_CPU;
  t.device.device_id = 0;
  t.ndim = ndim;
  t.dtype = dt;
  t.shape = shape;
  t.strides = nullptr;
  t.byte_offset = 0;
  return t;
}

int64_t numel(const CTensor& t) {
  int64_t n = 1;
  for (int32_t d = 0; d < t.ndim; ++d) n *= t.shape[d];
  return n;
}

double nbytes(const CTensor& t) { return static_cast<double>(numel(t)) * (t.dtype.bits / 8); }

// One configured call: tensors with their shapes, and what it moves.
struct Call {
  const Row* row = nullptr;
  int64_t a_shape[2] = {0, 0}, b_shape[2] = {0, 0}, out_shape[2] = {0, 0};
  CTensor a{}, b{}, out{};
  int32_t axis = 0;
  double param = 0.0;
  double bytes = 0.0;    // read + written per call
  int64_t elems = 0;     // elements of the (largest) input

  Call(const Row& r, int64_t n) : row(&r) {
    const CTDataType in_dt = r.dt == kF16 ? kDtF16 : (r.dt == kBF16 ? kDtBF16 : kDtF32);
    const size_t in_size = in_dt.bits / 8;
    const bool mat = r.layout != kVec;
    elems = mat ? n * n : n;
    int32_t in_ndim = mat ? 2 : 1;
    a_shape[0] = n;
    a_shape[1] = n;
    const Slot in_slot = r.dt == kF16 ? kInF16 : (r.dt == kBF16 ? kInBF16 : kInA);
    a = make_tensor(slot(in_slot, static_cast<size_t>(elems) * in_size), in_ndim, a_shape, in_dt);
    param = r.param;
    switch (r.kind) {
      case kBinary: {
        int32_t b_ndim = in_ndim;
        int64_t b_elems = elems;
        if (r.layout == kRowB) {  // (n,)
          b_ndim = 1;
          b_shape[0] = n;
          b_elems = n;
        } else if (r.layout == kColB) {  // (n, 1)
          b_shape[0] = n;
          b_shape[1] = 1;
          b_elems = n;
        } else {
          b_shape[0] = n;
          b_shape[1] = n;
        }
        b = make_tensor(slot(kInB, static_cast<size_t>(b_elems) * in_size), b_ndim, b_shape, in_dt);
        out_shape[0] = n;
        out_shape[1] = n;
        const bool pred = r.op >= CT_OP_EQUAL && r.op <= CT_OP_GREATER_EQUAL;
        out = pred ? make_tensor(slot(kOutBool, static_cast<size_t>(elems)), in_ndim, out_shape, kDtBool)
                   : make_tensor(slot(kOutF32, static_cast<size_t>(elems) * in_size), in_ndim, out_shape,
                                 in_dt);
        bytes = nbytes(a) + nbytes(b) + nbytes(out);
        break;
      }
      case kReduce: {
        axis = r.axis;
        int32_t out_ndim = 0;  // keepdims = 0
        if (r.axis != kAllAxes) {
          out_ndim = 1;
          out_shape[0] = n;  // square matrix: either axis leaves n
        }
        const int64_t out_elems = out_ndim ? n : 1;
        const bool idx = r.op == CT_OP_ARGMAX || r.op == CT_OP_ARGMIN;
        out = idx ? make_tensor(slot(kOutI64, static_cast<size_t>(out_elems) * 8), out_ndim, out_shape, kDtI64)
                  : make_tensor(slot(kOutF32, static_cast<size_t>(out_elems) * in_size), out_ndim, out_shape,
                                in_dt);
        bytes = nbytes(a) + nbytes(out);
        break;
      }
      case kAlong: {
        axis = r.axis;
        out_shape[0] = n;
        out_shape[1] = n;
        out = make_tensor(slot(kOutF32, static_cast<size_t>(elems) * in_size), in_ndim, out_shape, in_dt);
        bytes = nbytes(a) + nbytes(out);
        break;
      }
    }
  }

  // NULL when the entry point is missing from this libctensor.
  const char* missing() const {
    switch (row->kind) {
      case kBinary: return ct_binary ? nullptr : "ct_binary is not exported by this libctensor";
      case kReduce: return ct_reduce ? nullptr : "ct_reduce is not exported by this libctensor";
      case kAlong: return ct_along_axis ? nullptr : "ct_along_axis is not exported by this libctensor";
    }
    return nullptr;
  }

  CTStatus operator()() {
    switch (row->kind) {
      case kBinary: return ct_binary(row->op, &a, &b, &out, nullptr);
      case kReduce: {
        const double* params = row->num_params ? &param : nullptr;
        if (axis == kAllAxes) return ct_reduce(row->op, &a, nullptr, 0, 0, params, row->num_params, &out, nullptr);
        return ct_reduce(row->op, &a, &axis, 1, 0, params, row->num_params, &out, nullptr);
      }
      case kAlong: return ct_along_axis(row->op, &a, axis, &out, nullptr);
    }
    return CT_ERR_INTERNAL;
  }
};

double stream_add_bw_2t() {
  ctbench::run_stream_probe();  // lazily, when the probe benchmarks were filtered out
  return ctbench::stream_figures().bw(ctbench::kStreamAdd, 2);
}

// 2-thread STREAM add over n float32 elements of this benchmark's own
// buffers, best of 3, bytes/s (12 B per element).
double stream_add_bw_same_n(int64_t n) {
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  const float* a = static_cast<const float*>(slot(kInA, bytes));
  const float* b = static_cast<const float*>(slot(kInB, bytes));
  float* c = static_cast<float*>(slot(kOutF32, bytes));
  double best = 1e30;
  for (int r = 0; r < 3; ++r) best = std::min(best, ctbench::stream_add_pass(a, b, c, n, 2));
  return 12.0 * static_cast<double>(n) / best;
}

void BM_ct(benchmark::State& st, const Row* row) {
  Call call(*row, st.range(0));
  if (const char* why = call.missing()) {
    st.SkipWithError(why);
    return;
  }
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
  st.SetBytesProcessed(static_cast<int64_t>(call.bytes) * st.iterations());
  st.SetItemsProcessed(call.elems * st.iterations());
  const double gbps = call.bytes / per_iter * 1e-9;
  st.counters["bytes"] = call.bytes;
  st.counters["elems"] = static_cast<double>(call.elems);
  st.counters["GBps"] = gbps;
  const double bw = stream_add_bw_2t();
  if (bw > 0) st.counters["frac_stream_add"] = gbps * 1e9 / bw;
  if (row->kind == kBinary && call.elems >= 10000000) {
    const double local = stream_add_bw_same_n(call.elems);
    st.counters["stream_add_same_n_GBps"] = local * 1e-9;
    st.counters["frac_stream_add_same_n"] = gbps * 1e9 / local;
  }
}

// One add of n elements through the C ABI, validation and dispatch included.
void BM_ct_add_latency(benchmark::State& st) {
  static const Row row = {"add", kBinary, CT_OP_ADD, kVec, kF32, 0, 0, 0, {}};
  Call call(row, st.range(0));
  if (const char* why = call.missing()) {
    st.SkipWithError(why);
    return;
  }
  const CTStatus s = call();
  if (s != CT_OK) {
    st.SkipWithError(status_message(s).c_str());
    return;
  }
  for (auto _ : st) {
    call();
    benchmark::ClobberMemory();
  }
  const ctbench::Latency lat = ctbench::median_latency([&] { call(); }, g_quick ? 2000 : 10000);
  st.counters["median_ns"] = lat.median_ns;
  st.counters["p10_ns"] = lat.p10_ns;
  st.counters["p90_ns"] = lat.p90_ns;
  st.counters["bytes"] = call.bytes;
}

// ---------------------------------------------------------------------------
// Registration and main
// ---------------------------------------------------------------------------

void register_all() {
  ctbench::register_stream(ctbench::kStreamCopy);
  ctbench::register_stream(ctbench::kStreamAdd);
  ctbench::register_stream(ctbench::kStreamTriad);
  benchmark::RegisterBenchmark("BM_ct_add_latency", BM_ct_add_latency)
      ->Arg(1)
      ->Arg(1000)
      ->UseRealTime()
      ->Unit(benchmark::kNanosecond);
  static const std::vector<Row> rows = make_rows();
  for (const Row& row : rows) {
    for (int64_t n : row.sizes) {
      if (row.layout == kVec && n > g_max_n) continue;
      const int64_t elems = row.layout == kVec ? n : n * n;
      benchmark::TimeUnit unit = elems >= 1000000 ? benchmark::kMillisecond : benchmark::kMicrosecond;
      benchmark::RegisterBenchmark(("BM_ct_" + row.name).c_str(), BM_ct, &row)
          ->Arg(n)
          ->UseRealTime()
          ->Unit(unit);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strcmp(a, "--ct_quick") == 0) {
      g_quick = true;
    } else if (std::strncmp(a, "--ct_max_n=", 11) == 0) {
      g_max_n = static_cast<int64_t>(std::strtod(a + 11, nullptr));
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  ctbench::stream_figures().reps = g_quick ? 5 : 10;
  ctbench::stream_figures().with_add = true;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("ctensor_version", ct_version_string());
  benchmark::AddCustomContext("omp_max_threads", std::to_string(omp_get_max_threads()));
  benchmark::AddCustomContext("stream_counting", "STREAM: copy 8 B/elem, add and triad 12 B/elem");
  benchmark::AddCustomContext("matrix_side", std::to_string(kSide));
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
