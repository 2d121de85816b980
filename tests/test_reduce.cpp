// test_reduce.cpp — ct_reduce and ct_along_axis (issue 3, notes/SEMANTICS.md
// "Broadcast / reduce semantics"): every reduction x dtype over many axis
// sets (all, one, several, none; negative axes; keepdims 0/1) and layouts
// (transposed, negative strides, byte_offset, stride-0), against a reference
// written here in long double / int64; accuracy of float32 sums (1e7 values,
// against NumPy's pairwise summation and the exact sum); first-occurrence
// and NaN rules of argmax/argmin; NaN in max/min; empty reductions; int64
// accumulation; var/std corrections; logsumexp at +-1e4 and -inf; sizes that
// go multi-threaded. Then softmax / log_softmax / cumsum / cumprod along
// every axis, and every error path with out's bytes untouched.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_ref.h"
#include "test_util.h"

using namespace ctt;

namespace {

const CTDevice kCpu = {CT_CPU, 0};
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

const unsigned B = 1u << DT_BOOL;
const unsigned I = (1u << DT_I8) | (1u << DT_I16) | (1u << DT_I32) | (1u << DT_I64) | (1u << DT_U8) | (1u << DT_U16) |
                   (1u << DT_U32) | (1u << DT_U64);
const unsigned F = (1u << DT_F16) | (1u << DT_BF16) | (1u << DT_F32) | (1u << DT_F64) | (1u << DT_F8E4M3FN) |
                   (1u << DT_F8E5M2) | (1u << DT_F8E4M3FNUZ) | (1u << DT_F8E5M2FNUZ);
const unsigned ALL = B | I | F;

struct RedOp {
  const char* name;
  int op;
  unsigned mask;
  int rule;  // CT_OUTPUT_*
  int nparams;
};

const RedOp kRed[] = {
    {"sum", CT_OP_SUM, ALL, CT_OUTPUT_ACCUM, 0},        {"mean", CT_OP_MEAN, ALL, CT_OUTPUT_FLOAT, 0},
    {"prod", CT_OP_PROD, ALL, CT_OUTPUT_ACCUM, 0},      {"max", CT_OP_MAX, ALL, CT_OUTPUT_SAME, 0},
    {"min", CT_OP_MIN, ALL, CT_OUTPUT_SAME, 0},         {"argmax", CT_OP_ARGMAX, ALL, CT_OUTPUT_INT64, 0},
    {"argmin", CT_OP_ARGMIN, ALL, CT_OUTPUT_INT64, 0},  {"any", CT_OP_ANY, ALL, CT_OUTPUT_BOOL, 0},
    {"all", CT_OP_ALL, ALL, CT_OUTPUT_BOOL, 0},         {"norm2", CT_OP_NORM2, I | F, CT_OUTPUT_FLOAT, 0},
    {"logsumexp", CT_OP_LOGSUMEXP, F, CT_OUTPUT_SAME, 0}, {"var", CT_OP_VAR, I | F, CT_OUTPUT_FLOAT, 1},
    {"std", CT_OP_STD, I | F, CT_OUTPUT_FLOAT, 1},
    {"nansum", CT_OP_NANSUM, ALL, CT_OUTPUT_ACCUM, 0}, {"nanmean", CT_OP_NANMEAN, ALL, CT_OUTPUT_FLOAT, 0},
    {"count_nonzero", CT_OP_COUNT_NONZERO, ALL, CT_OUTPUT_INT64, 0},
    {"median", CT_OP_MEDIAN, I | F, CT_OUTPUT_SAME, 0},  {"nanmedian", CT_OP_NANMEDIAN, I | F, CT_OUTPUT_SAME, 0},
    {"quantile", CT_OP_QUANTILE, I | F, CT_OUTPUT_FLOAT, 1},
    {"nanquantile", CT_OP_NANQUANTILE, I | F, CT_OUTPUT_FLOAT, 1},
    {"kthvalue", CT_OP_KTHVALUE, I | F, CT_OUTPUT_SAME, 1},
    {"mode", CT_OP_MODE, I | F, CT_OUTPUT_SAME, 0},
};

struct AlongOp {
  const char* name;
  int op;
  unsigned mask;
  int rule;
};
const AlongOp kAlong[] = {
    {"softmax", CT_OP_SOFTMAX, F, CT_OUTPUT_SAME},
    {"log_softmax", CT_OP_LOG_SOFTMAX, F, CT_OUTPUT_SAME},
    {"cumsum", CT_OP_CUMSUM, ALL, CT_OUTPUT_ACCUM},
    {"cumprod", CT_OP_CUMPROD, ALL, CT_OUTPUT_ACCUM},
    {"logcumsumexp", CT_OP_LOGCUMSUMEXP, F, CT_OUTPUT_SAME},
    {"softmin", CT_OP_SOFTMIN, F, CT_OUTPUT_SAME},
    {"sort", CT_OP_SORT, ALL, CT_OUTPUT_SAME},
    {"argsort", CT_OP_ARGSORT, ALL, CT_OUTPUT_INT64},
    {"cummax", CT_OP_CUMMAX, ALL, CT_OUTPUT_SAME},
    {"cummin", CT_OP_CUMMIN, ALL, CT_OUTPUT_SAME},
};

const RedOp& red_op(int op) {
  for (const RedOp& r : kRed)
    if (r.op == op) return r;
  return kRed[0];
}


struct Mismatch {
  int64_t count = 0;
  std::string first;
  void add(const std::string& s) {
    if (count++ < 4) first += s + "\n";
  }
};

std::string axes_str(bool null_axes, const std::vector<int>& axes) {
  if (null_axes) return "NULL";
  std::string r = "(";
  for (size_t i = 0; i < axes.size(); ++i) r += (i ? "," : "") + std::to_string(axes[i]);
  return r + ")";
}

// Accumulation precision of reductions' sums (SEMANTICS.md: every float dtype in f64, pairwise).
double eps_acc(int) { return std::ldexp(1.0, -53); }
// ... and of cumsum/cumprod's running values (f64 for f32 and f64, f32 for the half types).
double eps_cum(int d) { return dtype(d).is_narrow() ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53); }
// Precision a float op may compute in (halves and float32: float32).
double eps_calc(int d) { return d == DT_F64 ? std::ldexp(1.0, -52) : std::ldexp(1.0, -23); }
double log2n(int64_t n) { return n > 1 ? std::ceil(std::log2((double)n)) : 0.0; }

// ---------------------------------------------------------------------------
// Layouts
// ---------------------------------------------------------------------------

// 0: compact (strides NULL)   1: column-major (transposed)
// 2: negative outer stride, step 2 in the last dim (offset via byte_offset)
// 3: padded rows (usable as an output)   4: zero stride in dim 0 (input only)

// ---------------------------------------------------------------------------
// The reduction plan: out's shape, and which x elements each output reduces
// (tests/reference's groups: row-major within the reduced axes, in x's axis
// order), for the tolerances and the messages.
// ---------------------------------------------------------------------------

struct Plan {
  std::vector<int32_t> axes;
  bool null_axes = false;
  std::vector<int64_t> out_shape;
  std::vector<std::vector<int64_t>> groups;
};

Plan make_plan(const std::vector<int64_t>& xs, bool null_axes, const std::vector<int>& axes, bool keep) {
  Plan p;
  p.axes.assign(axes.begin(), axes.end());
  p.null_axes = null_axes;
  const size_t nd = xs.size();
  std::vector<char> red(nd, null_axes ? 1 : 0);
  for (int a : axes) red[(size_t)((a + (int)nd) % (int)nd)] = 1;
  for (size_t i = 0; i < nd; ++i) {
    if (!red[i]) p.out_shape.push_back(xs[i]);
    else if (keep) p.out_shape.push_back(1);
  }
  std::string why;
  const bool ok = ctref::reduction_groups(xs, p.axes, null_axes, &p.groups, &why);
  INFO(why);
  REQUIRE(ok);
  return p;
}

// ---------------------------------------------------------------------------
// Expected values: the reference's (tests/reference), with the tolerance this
// suite allows. For float outputs, `v` is the (high-precision) value and `tol`
// the allowed |got - v| (NaN and inf must match exactly; tol < 0: exact,
// either sign of zero (-1) or bit for bit (-2)).
// ---------------------------------------------------------------------------

struct Expect {
  bool fout = true;
  double v = 0;
  int64_t iv = 0;
  double tol = 0;
};

double sum_abs(const std::vector<double>& v) {
  long double s = 0;
  for (double x : v) s += std::fabs(x);
  return (double)s;
}

// Output o of op on the group v (x's values, float or integer as doubles),
// from the reference's result `want`.
Expect expect_of(int op, int d, int dout, const std::vector<double>& v, double corr, const ctref::Array& want,
                 int64_t o) {
  Expect e;
  e.fout = dtype(dout).is_float();
  if (!e.fout) {
    e.iv = want.i[(size_t)o];
    return e;
  }
  e.v = want.f[(size_t)o];
  const int64_t n = (int64_t)v.size();
  if (!dtype(d).is_float()) {  // integer and bool inputs: float64 results
    switch (op) {
      case CT_OP_MEAN: case CT_OP_NANMEAN: e.tol = -2; break;  // the test's values keep the float64 sum exact
      case CT_OP_NORM2: e.tol = 4 * ulp_of(e.v, DT_F64); break;
      default: e.tol = 1e-13 * std::fabs(e.v) + 4 * ulp_of(e.v, DT_F64); break;  // var, std
    }
    return e;
  }
  std::vector<double> kept;  // nansum / nanmean: the elements that are not NaN
  for (double x : v)
    if (!std::isnan(x)) kept.push_back(x);
  const int64_t nk = (int64_t)kept.size();
  switch (op) {
    case CT_OP_SUM: e.tol = ulp_of(e.v, dout) + (log2n(n) + 2) * eps_acc(d) * sum_abs(v); break;
    case CT_OP_NANSUM: e.tol = ulp_of(e.v, dout) + (log2n(nk) + 2) * eps_acc(d) * sum_abs(kept); break;
    case CT_OP_NANMEAN:
      e.tol = ulp_of(e.v, dout) + (nk ? (log2n(nk) + 2) * eps_acc(d) * sum_abs(kept) / (double)nk : 0) +
              eps_calc(d) * std::fabs(e.v);
      break;
    case CT_OP_MEAN:
      e.tol = ulp_of(e.v, dout) + (n ? (log2n(n) + 2) * eps_acc(d) * sum_abs(v) / (double)n : 0) +
              eps_calc(d) * std::fabs(e.v);
      break;
    // (the accumulation of prod is not specified: allow float32 for float32)
    case CT_OP_PROD: e.tol = ulp_of(e.v, dout) + (double)(n + 1) * eps_calc(d) * std::fabs(e.v); break;
    case CT_OP_MAX:
    case CT_OP_MIN:
    case CT_OP_MEDIAN:
    case CT_OP_NANMEDIAN:
    case CT_OP_KTHVALUE:
    case CT_OP_MODE: e.tol = -1; break;  // an element
    case CT_OP_QUANTILE:
    case CT_OP_NANQUANTILE: {  // a + w (b - a) in the dtype's arithmetic (float for the narrow ones)
      double m = 0;
      for (double x : v)
        if (!std::isnan(x)) m = std::max(m, std::fabs(x));
      e.tol = ulp_of(e.v, dout) + 4 * eps_calc(d) * m;
      break;
    }
    case CT_OP_NORM2: e.tol = ulp_of(e.v, dout) + (log2n(n) + 2) * eps_acc(d) * e.v + eps_calc(d) * e.v; break;
    case CT_OP_LOGSUMEXP: {
      double m = -kInf;
      for (double x : v) m = std::max(m, x);
      e.tol = 2 * ulp_of(e.v, dout) + (double)(n + 4) * eps_calc(d) + eps_calc(d) * std::fabs(m);
      break;
    }
    case CT_OP_VAR:
    case CT_OP_STD: {
      // Two-pass with a rounded mean m + dm adds n * dm^2 / den to the
      // variance (dm <= (n + 2) eps |mean|: the mean of identical values need
      // not be exact, so their variance need not be exactly 0).
      double den = std::max((double)n - corr, 0.0);
      double dm = (double)(n + 2) * eps_calc(d) * (n ? sum_abs(v) / (double)n : 0.0);
      double extra = den > 0 ? 2.0 * (double)n * dm * dm / den : 0.0;
      e.tol = 4 * ulp_of(e.v, dout) + 8 * (log2n(n) + 2) * eps_calc(d) * std::fabs(e.v) +
              (op == CT_OP_VAR ? extra : std::sqrt(extra));
      break;
    }
  }
  return e;
}

bool matches_value(const Expect& e, const HostTensor& out, int64_t i) {
  if (!e.fout) return out.get_i(i) == e.iv;
  double g = out.get(i);
  if (std::isnan(e.v) || std::isinf(e.v)) return same_double(g, e.v);
  if (e.tol >= 0 && !std::isfinite(round_to(e.v, out.d)))  // overflows the dtype: +-inf, or NaN (float8 without inf)
    return same_double(g, round_to(e.v, out.d));
  if (e.tol == -1) return g == e.v;  // exact value, either zero
  if (e.tol == -2) return same_double(g, e.v);
  return std::fabs(g - e.v) <= e.tol;
}

// Does out[i] match? The strings are only built for a mismatch.
bool matches(const Expect& e, const HostTensor& out, int64_t i, std::string& got_s, std::string& exp_s) {
  if (matches_value(e, out, i)) return true;
  if (!e.fout) {
    got_s = std::to_string(out.get_i(i));
    exp_s = std::to_string(e.iv);
  } else {
    got_s = fmt(out.get(i));
    exp_s = fmt(e.v) + " (tol " + fmt(e.tol) + ")";
  }
  return false;
}

// Check every output of a reduction of x against the reference.
void check_reduce(int op, const HostTensor& x, const Plan& p, const std::vector<double>& params,
                  const HostTensor& out, const std::vector<unsigned char>& before, Mismatch& mm) {
  int d = x.d, dout = out.d;
  bool fl = dtype(d).is_float();
  ctref::Call call = ref_call(op);
  call.params = params;
  call.axes = p.axes;
  call.all_axes = p.null_axes;
  const ctref::Array xs = ref_in(x);
  const ctref::Array want = reference_of(call, {&xs}, {{dout, p.out_shape}})[0];
  const double corr = params.empty() ? 0.0 : params[0];
  std::vector<double> gv;
  for (size_t o = 0; o < p.groups.size(); ++o) {
    gv.clear();
    for (int64_t k : p.groups[o]) gv.push_back(fl ? xs.f[(size_t)k] : (double)xs.i[(size_t)k]);
    Expect e = expect_of(op, d, dout, gv, corr, want, (int64_t)o);
    std::string g, ex;
    if (!matches(e, out, (int64_t)o, g, ex)) {
      std::ostringstream s;
      s << "out[" << o << "] got " << g << " expected " << ex << " from (";
      for (size_t k = 0; k < gv.size() && k < 8; ++k) s << (k ? ", " : "") << fmt(gv[k]);
      s << (gv.size() > 8 ? ", ...)" : ")");
      mm.add(s.str());
    }
  }
  std::vector<char> cov = covered(out);
  std::vector<unsigned char> after = out.bytes();
  for (size_t k = 0; k < after.size(); ++k)
    if (!cov[k] && after[k] != before[k]) {
      mm.add("wrote outside the output's elements at byte " + std::to_string(k));
      break;
    }
}

CTStatus call_reduce(int op, HostTensor& x, bool null_axes, const std::vector<int>& axes, int keep,
                     const std::vector<double>& params, HostTensor& out, void* stream = nullptr,
                     bool x_offset_in_byte_offset = true) {
  static const int32_t dummy = 0;
  std::vector<int32_t> ax(axes.begin(), axes.end());
  const int32_t* ap = null_axes ? nullptr : (ax.empty() ? &dummy : ax.data());
  CTensor xv = x.view(x_offset_in_byte_offset), ov = out.view();
  return ct_reduce(op, &xv, ap, (int32_t)ax.size(), keep, params.empty() ? nullptr : params.data(),
                   (int32_t)params.size(), &ov, stream);
}

// Run a reduction of x and check it against the reference.
void run_reduce(int op, HostTensor& x, bool null_axes, const std::vector<int>& axes, int keep,
                const std::vector<double>& params, int out_variant, void* stream = nullptr) {
  const RedOp& r = red_op(op);
  Plan p = make_plan(x.shape, null_axes, axes, keep != 0);
  int dout = output_dtype_for(r.rule, x.d);
  HostTensor out = make_layout(dout, p.out_shape, out_variant);
  out.fill_bytes(0xA5);
  std::vector<unsigned char> before = out.bytes();
  std::ostringstream desc;
  desc << r.name << " " << dtype(x.d).name << " x" << shape_str(x.shape) << " strides" << shape_str(x.strides)
       << " axes " << axes_str(null_axes, axes) << " keepdims " << keep << " out" << shape_str(p.out_shape) << " "
       << dtype(dout).name;
  for (double c : params) desc << " correction " << c;
  INFO(desc.str());
  CTStatus s = call_reduce(op, x, null_axes, axes, keep, params, out, stream, (x.numel() % 2) == 0);
  INFO("status " << s << " " << ct_status_string(s) << ": " << ct_last_error());
  REQUIRE(s == CT_OK);
  Mismatch mm;
  check_reduce(op, x, p, params, out, before, mm);
  INFO(mm.first);
  CHECK(mm.count == 0);
}

void fill_for(int op, HostTensor& x, Rng& rng) {
  int d = x.d;
  int64_t n = x.numel();
  if (dtype(d).is_float()) {
    for (int64_t i = 0; i < n; ++i) {
      double v;
      switch (op) {
        case CT_OP_PROD: v = rng.uniform(0.7, 1.4) * ((rng.next() & 1) ? 1 : -1); break;
        case CT_OP_MAX: case CT_OP_MIN: case CT_OP_ARGMAX: case CT_OP_ARGMIN:
          v = std::round(rng.uniform(-3, 3) * 2) / 2;  // ties
          break;
        case CT_OP_ANY: case CT_OP_ALL: case CT_OP_COUNT_NONZERO:
          v = rng.uniform() < 0.2 ? 0.0 : rng.uniform() < 0.1 ? kNaN : rng.uniform(-1, 1);
          break;
        case CT_OP_NANSUM: case CT_OP_NANMEAN: v = rng.uniform() < 0.25 ? kNaN : rng.uniform(-10, 10); break;
        case CT_OP_MEDIAN: case CT_OP_NANMEDIAN: case CT_OP_KTHVALUE: case CT_OP_MODE:  // ties, -0, NaN, infinities
          v = rng.uniform() < 0.08 ? kNaN : rng.uniform() < 0.05 ? (rng.next() & 1 ? kInf : -kInf)
              : rng.uniform() < 0.1 ? -0.0 : std::round(rng.uniform(-3, 3) * 2) / 2;
          break;
        case CT_OP_QUANTILE: v = rng.uniform() < 0.02 ? kNaN : rng.uniform(-10, 10); break;
        case CT_OP_NANQUANTILE: v = rng.uniform() < 0.2 ? kNaN : rng.uniform(-10, 10); break;
        case CT_OP_LOGSUMEXP: v = rng.uniform(-20, 20); break;
        default: v = rng.uniform(-10, 10); break;
      }
      x.set(i, v);
    }
    return;
  }
  if (d == DT_BOOL) {
    for (int64_t i = 0; i < n; ++i) x.set_i(i, (int64_t)(rng.uniform() < 0.7));
    return;
  }
  int64_t lo = int_min(d), hi = int_max(d);
  // small values: [-1000, 1000], or [0, 1000] unsigned (uint64's int64s below 0 are above 2^63)
  const int64_t small_lo = dtype(d).is_uint() ? 0 : std::max<int64_t>(lo, -1000);
  for (int64_t i = 0; i < n; ++i) {
    int64_t v;
    switch (op) {
      case CT_OP_SUM: case CT_OP_PROD: v = rng.int_in(lo, hi); break;  // wraps in 64 bits for (u)int64
      case CT_OP_MAX: case CT_OP_MIN: case CT_OP_ARGMAX: case CT_OP_ARGMIN: case CT_OP_MEDIAN:
      case CT_OP_NANMEDIAN: case CT_OP_KTHVALUE: case CT_OP_QUANTILE: case CT_OP_NANQUANTILE: case CT_OP_MODE:
        // ties near 0, and for uint64 near its top (-3..-1 are its max - 2 .. max)
        v = (i % 5 == 0) ? rng.int_in(lo, hi) : rng.int_in(std::max<int64_t>(lo, -3), 3);
        break;
      case CT_OP_ANY: case CT_OP_ALL: case CT_OP_COUNT_NONZERO: v = rng.uniform() < 0.2 ? 0 : rng.int_in(lo, hi); break;
      default: v = rng.int_in(small_lo, std::min<int64_t>(hi, 1000)); break;
    }
    x.set_i(i, v);
  }
}

struct RCase {
  std::vector<int64_t> shape;
  bool null_axes;
  std::vector<int> axes;
};

const RCase kCases[] = {
    {{5}, true, {}},           {{5}, false, {0}},        {{5}, false, {-1}},         {{5}, false, {}},
    {{3, 4, 5}, true, {}},     {{3, 4, 5}, false, {0}},  {{3, 4, 5}, false, {1}},    {{3, 4, 5}, false, {2}},
    {{3, 4, 5}, false, {-1}},  {{3, 4, 5}, false, {-3}}, {{3, 4, 5}, false, {0, 2}}, {{3, 4, 5}, false, {2, 0}},
    {{3, 4, 5}, false, {}},    {{3, 4, 5}, false, {0, 1, 2}}, {{3, 4, 5}, false, {1, -1}},
    {{2, 3, 4, 5}, false, {0, 2}}, {{2, 3, 4, 5}, false, {1, 3}}, {{2, 3, 4, 5}, false, {-1, 0}},
    {{2, 3, 4, 5}, true, {}},  {{}, true, {}},           {{}, false, {}},            {{7, 1}, false, {1}},
    {{1, 7}, false, {0}},      {{40, 3}, false, {0}},    {{3, 40}, false, {-1}},
};

}  // namespace

// ---------------------------------------------------------------------------
// Reductions
// ---------------------------------------------------------------------------

TEST_CASE("reduce: registry facts and ct_op_supported per SEMANTICS.md", "[reduce]") {
  for (const RedOp& r : kRed) {
    CTOpInfo info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE(ct_op_info(r.op, &info) == CT_OK);
    INFO("op " << r.name);
    CHECK(std::string(info.name) == r.name);
    CHECK(info.kind == CT_KIND_REDUCE);
    CHECK(info.category == CT_CATEGORY_BROADCAST_REDUCE);
    CHECK(info.num_inputs == 1);
    CHECK(info.num_params == r.nparams);
    CHECK(info.output_dtype == r.rule);
    for (int d = 0; d < DT_COUNT; ++d) {
      INFO("dtype " << dtype(d).name);
      CHECK(ct_op_supported(r.op, kCpu, dtype(d).dt) == (((r.mask >> d) & 1u) ? CT_OK : CT_ERR_UNSUPPORTED));
    }
  }
  for (const AlongOp& a : kAlong) {
    CTOpInfo info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE(ct_op_info(a.op, &info) == CT_OK);
    INFO("op " << a.name);
    CHECK(info.kind == CT_KIND_ALONG_AXIS);
    CHECK(info.num_inputs == 1);
    CHECK(info.num_params == 0);
    CHECK(info.output_dtype == a.rule);
    for (int d = 0; d < DT_COUNT; ++d) {
      INFO("dtype " << dtype(d).name);
      CHECK(ct_op_supported(a.op, kCpu, dtype(d).dt) == (((a.mask >> d) & 1u) ? CT_OK : CT_ERR_UNSUPPORTED));
    }
  }
}

TEST_CASE("reduce: every op x dtype over axis sets, keepdims and layouts", "[reduce]") {
  const int in_variants[] = {0, 1, 2, 4};
  int runs = 0;
  for (const RedOp& r : kRed) {
    for (int d = 0; d < DT_COUNT; ++d) {
      if (!((r.mask >> d) & 1u)) continue;
      Rng rng((uint64_t)r.op * 1009 + (uint64_t)d);
      int k = 0;
      for (const RCase& c : kCases) {
        for (int keep = 0; keep < 2; ++keep) {
          int vin = in_variants[k % 4], vout = (k % 3 == 0) ? 3 : 0;
          ++k;
          HostTensor x = make_layout(d, c.shape, vin);
          fill_for(r.op, x, rng);
          std::vector<double> params;
          if (r.op == CT_OP_KTHVALUE) {  // every rank in turn
            const Plan p = make_plan(c.shape, c.null_axes, c.axes, keep != 0);
            const int64_t count = p.groups.empty() ? 1 : (int64_t)p.groups[0].size();
            params.push_back(double(1 + k % count));
          } else if (r.op == CT_OP_QUANTILE || r.op == CT_OP_NANQUANTILE) {
            const double qs[] = {0.0, 0.25, 0.5, 0.7, 0.999, 1.0, 1.0 / 3};
            params.push_back(qs[k % 7]);
          } else if (r.nparams) {
            params.push_back(k % 2 ? 1.0 : 0.0);
          }
          run_reduce(r.op, x, c.null_axes, c.axes, keep, params, vout);
          ++runs;
        }
      }
    }
  }
  CHECK(runs > 5000);
}

// kthvalue of the 16 smallest and largest ranks takes one pass with a small
// sorted buffer (select.cc's extreme_rank), the ranks between the radix
// select: every rank of lines longer than the insertion-sorted short ones
// (32), contiguous and strided, random (ties, -0, NaN, infinities) and in
// both monotone orders (each element displaces the worst kept one, or none).
TEST_CASE("reduce: kthvalue of every rank of long lines, random and monotone", "[reduce]") {
  const RedOp& r = red_op(CT_OP_KTHVALUE);
  const RCase cases[] = {{{120}, false, {0}}, {{40, 3}, false, {0}}, {{2, 60}, false, {-1}}};
  int runs = 0;
  for (int d = 0; d < DT_COUNT; ++d) {
    if (!((r.mask >> d) & 1u)) continue;
    Rng rng(977 + (uint64_t)d);
    for (const RCase& c : cases) {
      for (int order = 0; order < 3; ++order) {  // random, ascending, descending
        HostTensor x = make_layout(d, c.shape, 0);
        fill_for(CT_OP_KTHVALUE, x, rng);
        const int64_t n = x.numel();
        if (order > 0)  // small integers, exact in every dtype kthvalue takes (int8: 120 of them)
          for (int64_t i = 0; i < n; ++i) x.set(i, double(order == 1 ? i - n / 2 : n / 2 - i));
        const int64_t count = c.shape.size() == 1 ? c.shape[0] : c.axes[0] == 0 ? c.shape[0] : c.shape[1];
        for (int64_t k = 1; k <= count; ++k) {
          run_reduce(CT_OP_KTHVALUE, x, c.null_axes, c.axes, 0, {double(k)}, 0);
          ++runs;
        }
      }
    }
  }
  CHECK(runs > 1000);
}

namespace {

// numpy/_core/src/umath/loops_utils.h.src: @TYPE@_pairwise_sum for float32
// (float accumulators): below 8 a plain loop, up to 128 eight accumulators,
// above that split in two halves (the first a multiple of 8) recursively.
float numpy_pairwise_sum(const float* a, int64_t n) {
  if (n < 8) {
    float res = 0.f;
    for (int64_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    float r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    int64_t i;
    for (i = 8; i < n - (n % 8); i += 8)
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  int64_t n2 = n / 2;
  n2 -= n2 % 8;
  return numpy_pairwise_sum(a, n2) + numpy_pairwise_sum(a + n2, n - n2);
}

}  // namespace

TEST_CASE("reduce: order statistics of long lines (radix passes), strided, and of many short ones", "[reduce]") {
  struct C { std::vector<int64_t> shape; bool null_axes; std::vector<int> axes; int variant; };
  const C cases[] = {{{3, 5001}, false, {1}, 0}, {{20011}, true, {}, 0}, {{300, 70}, false, {0}, 1},
                     {{4000, 3}, false, {1}, 2}, {{50, 40, 3}, false, {0, 2}, 4}};
  for (int op : {CT_OP_MEDIAN, CT_OP_NANMEDIAN, CT_OP_QUANTILE, CT_OP_NANQUANTILE, CT_OP_KTHVALUE, CT_OP_MODE}) {
    for (int d : {DT_F32, DT_F64, DT_F16, DT_BF16, DT_I8, DT_I32, DT_I64, DT_U8, DT_U64}) {
      Rng rng((uint64_t)op * 31 + (uint64_t)d);
      for (const C& c : cases) {
        HostTensor x = make_layout(d, c.shape, c.variant);
        fill_for(op, x, rng);
        const Plan p = make_plan(c.shape, c.null_axes, c.axes, false);
        const int64_t count = (int64_t)p.groups[0].size();
        std::vector<double> params;
        if (op == CT_OP_KTHVALUE) params.push_back((double)(1 + (count * 7) / 10));
        if (op == CT_OP_QUANTILE || op == CT_OP_NANQUANTILE) params.push_back(0.61);
        run_reduce(op, x, c.null_axes, c.axes, 0, params, 0);
      }
    }
  }
}

TEST_CASE("reduce: order statistics' parameters and empty sets", "[reduce]") {
  HostTensor x = HostTensor::compact(DT_F32, {2, 3});
  for (int64_t i = 0; i < 6; ++i) x.set(i, (double)i);
  HostTensor o = HostTensor::compact(DT_F32, {2});
  o.fill_bytes(0x5A);
  const std::vector<unsigned char> before = o.bytes();
  const std::vector<int> ax1 = {1}, none;
  for (double k : {0.0, 4.0, 1.5, -1.0}) {
    INFO("k " << k);
    CHECK(call_reduce(CT_OP_KTHVALUE, x, false, ax1, 0, {k}, o) == CT_ERR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "kthvalue: k="));
    CHECK(contains(last_error(), "[1, 3]"));
    CHECK(o.bytes() == before);
  }
  for (double q : {-0.01, 1.01}) {
    CHECK(call_reduce(CT_OP_QUANTILE, x, false, ax1, 0, {q}, o) == CT_ERR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "is outside [0, 1]"));
    CHECK(o.bytes() == before);
  }
  REQUIRE(call_reduce(CT_OP_KTHVALUE, x, false, ax1, 0, {3.0}, o) == CT_OK);
  CHECK(o.get(0) == 2.0);
  CHECK(o.get(1) == 5.0);
  HostTensor x20 = HostTensor::compact(DT_F32, {2, 0});
  HostTensor o2 = HostTensor::compact(DT_F32, {2});
  o2.fill_bytes(0x5A);
  const std::vector<unsigned char> before2 = o2.bytes();
  for (int op : {CT_OP_MEDIAN, CT_OP_NANMEDIAN, CT_OP_KTHVALUE, CT_OP_MODE}) {
    CHECK(call_reduce(op, x20, false, ax1, 0, op == CT_OP_KTHVALUE ? std::vector<double>{1.0} : std::vector<double>{},
                      o2) == CT_ERR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "has no identity"));
    CHECK(o2.bytes() == before2);
  }
  for (int op : {CT_OP_QUANTILE, CT_OP_NANQUANTILE}) {  // NaN, as NumPy's
    REQUIRE(call_reduce(op, x20, false, ax1, 0, {0.5}, o2) == CT_OK);
    CHECK(std::isnan(o2.get(0)));
    CHECK(std::isnan(o2.get(1)));
  }
  // the element itself: a NaN's payload, and x's -0
  HostTensor n = HostTensor::compact(DT_F64, {3});
  const uint64_t payload = 0x7ff80000deadbeefull;
  double pn;
  std::memcpy(&pn, &payload, 8);
  n.set(0, 1.0);
  n.set(1, pn);
  n.set(2, -0.0);
  HostTensor on = HostTensor::compact(DT_F64, {});
  REQUIRE(call_reduce(CT_OP_MEDIAN, n, true, none, 0, {}, on) == CT_OK);
  uint64_t got;
  const double g = on.get(0);
  std::memcpy(&got, &g, 8);
  CHECK(got == payload);
  REQUIRE(call_reduce(CT_OP_NANMEDIAN, n, true, none, 0, {}, on) == CT_OK);
  CHECK(on.get(0) == 0.0);
  CHECK(std::signbit(on.get(0)));
}

TEST_CASE("reduce: float32 sum of 1e7 uniform values beats NumPy's pairwise and is within 1 ulp", "[reduce]") {
  const int64_t n = 10000000;
  HostTensor x = HostTensor::compact(DT_F32, {n});
  float* p = reinterpret_cast<float*>(x.buf());
  Rng rng(20240611);
  int64_t K = 0;  // the exact sum in units of 2^-24
  for (int64_t i = 0; i < n; ++i) {
    uint32_t k = (uint32_t)(rng.next() >> 40);  // 24 random bits: k * 2^-24 is uniform in [0,1), exact in float
    p[i] = std::ldexp((float)k, -24);
    K += k;
  }
  const double exact = std::ldexp((double)K, -24);  // exact: K < 2^53
  const double exact32 = (double)(float)exact;
  const float np = numpy_pairwise_sum(p, n);
  HostTensor out = HostTensor::compact(DT_F32, {});
  std::vector<int> none;
  REQUIRE(call_reduce(CT_OP_SUM, x, true, none, 0, {}, out) == CT_OK);
  double got = out.get(0);
  double err = std::fabs(got - exact), np_err = std::fabs((double)np - exact);
  INFO("exact " << fmt(exact) << " (float32 " << fmt(exact32) << "), ctensor " << fmt(got) << " (error " << fmt(err)
                << "), NumPy pairwise " << fmt(np) << " (error " << fmt(np_err) << "), ulp " << fmt(ulp_of(exact32, DT_F32)));
  CHECK(err <= np_err);
  CHECK(std::fabs(got - exact32) <= ulp_of(exact32, DT_F32));
  // mean the same way; and a (1000, 10000) view summed over axis 1 row by row
  HostTensor m = HostTensor::compact(DT_F32, {});
  REQUIRE(call_reduce(CT_OP_MEAN, x, true, none, 0, {}, m) == CT_OK);
  CHECK(std::fabs(m.get(0) - exact / (double)n) <= ulp_of(exact / (double)n, DT_F32));
}

// Long contiguous runs are read as four quarters side by side (the kernels'
// Streams4) plus a tail: the extreme, a NaN and the sum's terms must count
// wherever they sit, in any quarter, at a quarter's edge, or in the tail.
TEST_CASE("reduce: long float runs read in four streams miss no element", "[reduce]") {
  std::vector<int> none;
  for (int d : {DT_F32, DT_F64})
    for (int64_t n : {int64_t(8192), int64_t(8192 + 77), int64_t(70001), int64_t(262144 + 13)}) {
      const int64_t quarter = (n / 4) & ~int64_t(63);
      std::vector<int64_t> spots = {0, quarter - 1, quarter, 2 * quarter + 5, 3 * quarter, 4 * quarter - 1, n - 1};
      if (4 * quarter < n) spots.push_back(4 * quarter);
      HostTensor x = HostTensor::compact(d, {n});
      for (int64_t i = 0; i < n; ++i) x.set(i, (double)(i % 5));  // 0..4
      for (int64_t at : spots) {
        INFO(dtype(d).name << " n " << n << ", the odd element at " << at);
        x.set(at, 9);
        HostTensor o = HostTensor::compact(d, {});
        REQUIRE(call_reduce(CT_OP_MAX, x, true, none, 0, {}, o) == CT_OK);
        CHECK(o.get(0) == 9);
        x.set(at, -9);
        REQUIRE(call_reduce(CT_OP_MIN, x, true, none, 0, {}, o) == CT_OK);
        CHECK(o.get(0) == -9);
        double exact = 0;  // small integers: every order sums them exactly
        for (int64_t i = 0; i < n; ++i) exact += x.get(i);
        REQUIRE(call_reduce(CT_OP_SUM, x, true, none, 0, {}, o) == CT_OK);
        CHECK(o.get(0) == exact);
        x.set(at, kNaN);
        REQUIRE(call_reduce(CT_OP_MAX, x, true, none, 0, {}, o) == CT_OK);
        CHECK(std::isnan(o.get(0)));
        REQUIRE(call_reduce(CT_OP_MIN, x, true, none, 0, {}, o) == CT_OK);
        CHECK(std::isnan(o.get(0)));
        x.set(at, (double)(at % 5));
      }
      // prod: ones with one 2 (or 0, or NaN) at each spot.
      HostTensor ones = HostTensor::compact(d, {n});
      for (int64_t i = 0; i < n; ++i) ones.set(i, 1);
      for (int64_t at : spots) {
        INFO(dtype(d).name << " n " << n << ", prod, the odd element at " << at);
        HostTensor o = HostTensor::compact(d, {});
        for (double v : {2.0, 0.0, kNaN}) {
          ones.set(at, v);
          REQUIRE(call_reduce(CT_OP_PROD, ones, true, none, 0, {}, o) == CT_OK);
          CHECK(same_double(o.get(0), v));
        }
        ones.set(at, 1);
      }
    }
}

TEST_CASE("reduce: argmax/argmin first occurrence, NaN wins; max/min propagate NaN", "[reduce]") {
  auto run1 = [](int op, int d, std::vector<double> vals, std::vector<int64_t> shape, bool null_axes,
                 std::vector<int> axes) {
    HostTensor x = HostTensor::compact(d, shape);
    for (size_t i = 0; i < vals.size(); ++i) x.set((int64_t)i, vals[i]);
    Plan p = make_plan(shape, null_axes, axes, false);
    HostTensor out = HostTensor::compact(output_dtype_for(red_op(op).rule, d), p.out_shape);
    CTStatus s = call_reduce(op, x, null_axes, axes, 0, {}, out);
    INFO(red_op(op).name << " " << dtype(d).name << ": " << ct_last_error());
    REQUIRE(s == CT_OK);
    return out;
  };
  for (int d : {DT_F16, DT_BF16, DT_F32, DT_F64}) {
    INFO("dtype " << dtype(d).name);
    std::vector<double> v = {1, 3, kNaN, 3, kNaN, -1};
    CHECK(run1(CT_OP_ARGMAX, d, v, {6}, true, {}).get_i(0) == 2);
    CHECK(run1(CT_OP_ARGMIN, d, v, {6}, true, {}).get_i(0) == 2);
    CHECK(std::isnan(run1(CT_OP_MAX, d, v, {6}, true, {}).get(0)));
    CHECK(std::isnan(run1(CT_OP_MIN, d, v, {6}, true, {}).get(0)));
    std::vector<double> w = {3, 1, 3, 1, -kInf, kInf, kInf};
    CHECK(run1(CT_OP_ARGMAX, d, w, {7}, true, {}).get_i(0) == 5);
    CHECK(run1(CT_OP_ARGMIN, d, w, {7}, true, {}).get_i(0) == 4);
    std::vector<double> t = {3, 1, 3, 1};
    CHECK(run1(CT_OP_ARGMAX, d, t, {4}, true, {}).get_i(0) == 0);
    CHECK(run1(CT_OP_ARGMIN, d, t, {4}, true, {}).get_i(0) == 1);
    // NaN last: still wins; NaN only in one row of a (2,3) over axis 1
    std::vector<double> u = {1, 2, 3, 4, 5, kNaN};
    CHECK(run1(CT_OP_ARGMIN, d, u, {6}, true, {}).get_i(0) == 5);
    HostTensor am = run1(CT_OP_ARGMAX, d, u, {2, 3}, false, {1});
    CHECK(am.get_i(0) == 2);
    CHECK(am.get_i(1) == 2);
    HostTensor mx = run1(CT_OP_MAX, d, u, {2, 3}, false, {1});
    CHECK(mx.get(0) == 3);
    CHECK(std::isnan(mx.get(1)));
    HostTensor mn = run1(CT_OP_MIN, d, u, {2, 3}, false, {0});
    CHECK(mn.get(0) == 1);
    CHECK(mn.get(1) == 2);
    CHECK(std::isnan(mn.get(2)));
    // over several axes: row-major index within the reduced axes (here all of them)
    std::vector<double> s = {0, 0, 0, kNaN, 7, 7};
    CHECK(run1(CT_OP_ARGMAX, d, s, {2, 3}, false, {0, 1}).get_i(0) == 3);
    std::vector<double> s2 = {0, 0, 0, 1, 7, 7, 0, 7};
    // x (2,2,2) over axes (0,2): for j=0 elements (0,0,0)=0,(0,0,1)=0,(1,0,0)=7,(1,0,1)=7 -> index 2
    HostTensor a02 = run1(CT_OP_ARGMAX, d, s2, {2, 2, 2}, false, {2, 0});
    CHECK(a02.get_i(0) == 2);
    CHECK(a02.get_i(1) == 3);  // j=1: (0,1,0)=0,(0,1,1)=1,(1,1,0)=0,(1,1,1)=7 -> index 3
  }
  // integers and bool
  {
    HostTensor x = HostTensor::compact(DT_I8, {4});
    const int64_t vals[] = {-128, 127, 127, -128};
    for (int i = 0; i < 4; ++i) x.set_i(i, vals[i]);
    HostTensor o = HostTensor::compact(DT_I64, {});
    std::vector<int> none;
    REQUIRE(call_reduce(CT_OP_ARGMAX, x, true, none, 0, {}, o) == CT_OK);
    CHECK(o.get_i(0) == 1);
    REQUIRE(call_reduce(CT_OP_ARGMIN, x, true, none, 0, {}, o) == CT_OK);
    CHECK(o.get_i(0) == 0);
    HostTensor b = HostTensor::compact(DT_BOOL, {4});
    const int64_t bv[] = {0, 1, 1, 0};
    for (int i = 0; i < 4; ++i) b.set_i(i, bv[i]);
    REQUIRE(call_reduce(CT_OP_ARGMAX, b, true, none, 0, {}, o) == CT_OK);
    CHECK(o.get_i(0) == 1);
    REQUIRE(call_reduce(CT_OP_ARGMIN, b, true, none, 0, {}, o) == CT_OK);
    CHECK(o.get_i(0) == 0);
    HostTensor ob = HostTensor::compact(DT_BOOL, {});
    REQUIRE(call_reduce(CT_OP_MAX, b, true, none, 0, {}, ob) == CT_OK);
    CHECK(ob.get_i(0) == 1);
    REQUIRE(call_reduce(CT_OP_MIN, b, true, none, 0, {}, ob) == CT_OK);
    CHECK(ob.get_i(0) == 0);
  }
}

TEST_CASE("reduce: any/all decide at the one element that decides, anywhere in a long run (vector blocks)", "[reduce]") {
  // all zeros but one element (any), all ones but one (all), at every place of
  // the vector blocks and tails; -0.0 is zero, NaN is nonzero
  for (int d : {DT_BOOL, DT_I8, DT_I16, DT_U16, DT_I32, DT_I64, DT_U64, DT_F16, DT_F32, DT_F64, DT_F8E4M3FN}) {
    for (int64_t n : {1, 7, 64, 129, 1000, 70001}) {
      INFO(dtype(d).name << " n=" << n);
      for (int64_t pos : {int64_t(0), n / 3, n - 1}) {
        for (int all : {0, 1}) {
          const int op = all ? CT_OP_ALL : CT_OP_ANY;
          HostTensor x = HostTensor::compact(d, {n});
          for (int64_t i = 0; i < n; ++i) x.set(i, all ? 1.0 : (dtype(d).is_float() && i % 2 ? -0.0 : 0.0));
          HostTensor out = HostTensor::compact(DT_BOOL, {});
          REQUIRE(call_reduce(op, x, true, {}, 0, {}, out) == CT_OK);
          CHECK(out.get_i(0) == all);  // nothing decides
          x.set(pos, all ? 0.0 : (dtype(d).is_float() ? kNaN : 2.0));
          REQUIRE(call_reduce(op, x, true, {}, 0, {}, out) == CT_OK);
          INFO("op " << (all ? "all" : "any") << " deciding element at " << pos);
          CHECK(out.get_i(0) == 1 - all);
        }
      }
    }
  }
}

TEST_CASE("reduce: empty reductions give the identity; max/min/argmax/argmin of nothing are errors", "[reduce]") {
  std::vector<int> none, ax1 = {1}, ax0 = {0};
  for (int d : {DT_F32, DT_F16, DT_F64, DT_I32, DT_U8, DT_BOOL}) {
    INFO("dtype " << dtype(d).name);
    HostTensor x = HostTensor::compact(d, {0});
    HostTensor x20 = HostTensor::compact(d, {2, 0});
    struct W { int op; double v; };
    const W ws[] = {{CT_OP_SUM, 0}, {CT_OP_PROD, 1}, {CT_OP_MEAN, kNaN}, {CT_OP_ANY, 0}, {CT_OP_ALL, 1},
                    {CT_OP_NORM2, 0}, {CT_OP_LOGSUMEXP, -kInf}, {CT_OP_VAR, kNaN}, {CT_OP_STD, kNaN}};
    for (const W& w : ws) {
      const RedOp& r = red_op(w.op);
      if (!((r.mask >> d) & 1u)) continue;
      INFO("op " << r.name);
      std::vector<double> params;
      if (r.nparams) params.push_back(0.0);
      int dout = output_dtype_for(r.rule, d);
      HostTensor o = HostTensor::compact(dout, {});
      CTStatus s = call_reduce(w.op, x, true, none, 0, params, o);
      INFO(ct_last_error());
      REQUIRE(s == CT_OK);
      CHECK(same_double(o.get(0), w.v));
      // (2,0) over axis 1 keepdims: (2,1) of identities
      HostTensor o2 = HostTensor::compact(dout, {2, 1});
      REQUIRE(call_reduce(w.op, x20, false, ax1, 1, params, o2) == CT_OK);
      CHECK(same_double(o2.get(0), w.v));
      CHECK(same_double(o2.get(1), w.v));
      // (2,0) over axis 0: (0,) output, nothing to do
      HostTensor o3 = HostTensor::compact(dout, {0});
      CHECK(call_reduce(w.op, x20, false, ax0, 0, params, o3) == CT_OK);
    }
    for (int op : {CT_OP_MAX, CT_OP_MIN, CT_OP_ARGMAX, CT_OP_ARGMIN}) {
      const RedOp& r = red_op(op);
      INFO("op " << r.name);
      int dout = output_dtype_for(r.rule, d);
      HostTensor o = HostTensor::compact(dout, {});
      o.fill_bytes(0x5A);
      std::vector<unsigned char> before = o.bytes();
      CHECK(call_reduce(op, x, true, none, 0, {}, o) == CT_ERR_INVALID_ARGUMENT);
      std::string msg = last_error();
      INFO(msg);
      CHECK(msg.rfind("ct_reduce", 0) == 0);
      CHECK(contains(msg, r.name));
      CHECK(contains(msg, "[0]"));
      CHECK(o.bytes() == before);
      HostTensor o2 = HostTensor::compact(dout, {2});
      o2.fill_bytes(0x5A);
      std::vector<unsigned char> before2 = o2.bytes();
      CHECK(call_reduce(op, x20, false, ax1, 0, {}, o2) == CT_ERR_INVALID_ARGUMENT);
      CHECK(contains(last_error(), "[2,0]"));
      CHECK(o2.bytes() == before2);
      // (0,3): over axis 1 the output is empty, which is fine; over axis 0 it is 3 empty sets
      HostTensor x03 = HostTensor::compact(d, {0, 3});
      HostTensor e0 = HostTensor::compact(dout, {0});
      CHECK(call_reduce(op, x03, false, ax1, 0, {}, e0) == CT_OK);
      HostTensor e01 = HostTensor::compact(dout, {0, 1});
      CHECK(call_reduce(op, x03, false, ax1, 1, {}, e01) == CT_OK);
      HostTensor e03 = HostTensor::compact(dout, {0, 3});
      CHECK(call_reduce(op, x03, false, none, 0, {}, e03) == CT_OK);  // axes=(): no axis
      HostTensor o3 = HostTensor::compact(dout, {3});
      o3.fill_bytes(0x5A);
      std::vector<unsigned char> before3 = o3.bytes();
      CHECK(call_reduce(op, x03, false, ax0, 0, {}, o3) == CT_ERR_INVALID_ARGUMENT);
      CHECK(o3.bytes() == before3);
      HostTensor o4 = HostTensor::compact(dout, {});
      CHECK(call_reduce(op, x03, true, none, 0, {}, o4) == CT_ERR_INVALID_ARGUMENT);
    }
  }
}

TEST_CASE("reduce: integer sums accumulate in int64 (unsigned: uint64)", "[reduce]") {
  std::vector<int> none;
  {
    HostTensor x = HostTensor::compact(DT_I8, {100000});
    std::memset(x.buf(), 127, 100000);
    HostTensor o = HostTensor::compact(DT_I64, {});
    REQUIRE(call_reduce(CT_OP_SUM, x, true, none, 0, {}, o) == CT_OK);
    CHECK(o.get_i(0) == 12700000);
    HostTensor m = HostTensor::compact(DT_F64, {});
    REQUIRE(call_reduce(CT_OP_MEAN, x, true, none, 0, {}, m) == CT_OK);
    CHECK(m.get(0) == 127.0);
  }
  {
    HostTensor x = HostTensor::compact(DT_U8, {100000});
    std::memset(x.buf(), 255, 100000);
    HostTensor o = HostTensor::compact(DT_U64, {});  // NumPy: sum of uint8 is uint64
    REQUIRE(call_reduce(CT_OP_SUM, x, true, none, 0, {}, o) == CT_OK);
    CHECK(o.get_i(0) == 25500000);
    HostTensor wrong = HostTensor::compact(DT_I64, {});
    CHECK(call_reduce(CT_OP_SUM, x, true, none, 0, {}, wrong) == CT_ERR_DTYPE_MISMATCH);
    CHECK(contains(last_error(), "sum of uint8 gives uint64"));
  }
  {
    // uint16 / uint32 at their top: no wrap in the uint64 accumulator
    HostTensor x16 = HostTensor::compact(DT_U16, {70000});
    std::memset(x16.buf(), 0xFF, x16.buffer_bytes);
    HostTensor o = HostTensor::compact(DT_U64, {});
    REQUIRE(call_reduce(CT_OP_SUM, x16, true, none, 0, {}, o) == CT_OK);
    CHECK((uint64_t)o.get_i(0) == 70000ull * 65535ull);
    HostTensor x32 = HostTensor::compact(DT_U32, {3});
    std::memset(x32.buf(), 0xFF, x32.buffer_bytes);
    REQUIRE(call_reduce(CT_OP_SUM, x32, true, none, 0, {}, o) == CT_OK);
    CHECK((uint64_t)o.get_i(0) == 3ull * 4294967295ull);
    REQUIRE(call_reduce(CT_OP_PROD, x32, true, none, 0, {}, o) == CT_OK);
    CHECK((uint64_t)o.get_i(0) == 4294967295ull * 4294967295ull * 4294967295ull);  // modulo 2^64
  }
  {
    // uint64: sums and products wrap modulo 2^64; max/min/argmax compare as unsigned
    HostTensor x = HostTensor::compact(DT_U64, {4});
    const uint64_t v[4] = {UINT64_MAX, 2, uint64_t(1) << 63, 7};
    for (int i = 0; i < 4; ++i) x.set_i(i, (int64_t)v[i]);
    HostTensor o = HostTensor::compact(DT_U64, {});
    REQUIRE(call_reduce(CT_OP_SUM, x, true, none, 0, {}, o) == CT_OK);
    CHECK((uint64_t)o.get_i(0) == (uint64_t(1) << 63) + 8);  // (2^64 - 1) + 2 + 2^63 + 7 mod 2^64
    REQUIRE(call_reduce(CT_OP_MAX, x, true, none, 0, {}, o) == CT_OK);
    CHECK((uint64_t)o.get_i(0) == UINT64_MAX);
    REQUIRE(call_reduce(CT_OP_MIN, x, true, none, 0, {}, o) == CT_OK);
    CHECK((uint64_t)o.get_i(0) == 2);
    HostTensor i = HostTensor::compact(DT_I64, {});
    REQUIRE(call_reduce(CT_OP_ARGMAX, x, true, none, 0, {}, i) == CT_OK);
    CHECK(i.get_i(0) == 0);
    REQUIRE(call_reduce(CT_OP_ARGMIN, x, true, none, 0, {}, i) == CT_OK);
    CHECK(i.get_i(0) == 1);
    HostTensor m = HostTensor::compact(DT_F64, {});
    REQUIRE(call_reduce(CT_OP_MEAN, x, true, none, 0, {}, m) == CT_OK);  // float64, as NumPy
    CHECK(m.get(0) == (18446744073709551616.0 + 2 + 9223372036854775808.0 + 7) / 4);
  }
  {
    HostTensor x = HostTensor::compact(DT_BOOL, {100000});
    std::memset(x.buf(), 1, 100000);
    HostTensor o = HostTensor::compact(DT_I64, {});
    REQUIRE(call_reduce(CT_OP_SUM, x, true, none, 0, {}, o) == CT_OK);
    CHECK(o.get_i(0) == 100000);
  }
  {
    HostTensor x = HostTensor::compact(DT_I32, {3});
    x.set_i(0, INT32_MAX);
    x.set_i(1, INT32_MAX);
    x.set_i(2, 2);
    HostTensor o = HostTensor::compact(DT_I64, {});
    REQUIRE(call_reduce(CT_OP_SUM, x, true, none, 0, {}, o) == CT_OK);
    CHECK(o.get_i(0) == 2 * (int64_t)INT32_MAX + 2);
    REQUIRE(call_reduce(CT_OP_PROD, x, true, none, 0, {}, o) == CT_OK);
    CHECK(o.get_i(0) == (int64_t)((uint64_t)INT32_MAX * (uint64_t)INT32_MAX * 2u));
  }
  {
    HostTensor x = HostTensor::compact(DT_I8, {3});
    for (int i = 0; i < 3; ++i) x.set_i(i, 100);
    HostTensor o = HostTensor::compact(DT_I64, {});
    REQUIRE(call_reduce(CT_OP_PROD, x, true, none, 0, {}, o) == CT_OK);
    CHECK(o.get_i(0) == 1000000);
  }
  {
    HostTensor x = HostTensor::compact(DT_I64, {2});
    x.set_i(0, INT64_MAX);
    x.set_i(1, 1);
    HostTensor o = HostTensor::compact(DT_I64, {});
    REQUIRE(call_reduce(CT_OP_SUM, x, true, none, 0, {}, o) == CT_OK);
    CHECK(o.get_i(0) == INT64_MIN);  // wraps
  }
}

TEST_CASE("reduce: integer means are summed in float64; keepdims is any nonzero; NULL data when empty", "[reduce]") {
  std::vector<int> none;
  HostTensor x = HostTensor::compact(DT_I64, {2});
  x.set_i(0, INT64_MAX);
  x.set_i(1, INT64_MAX);
  HostTensor m = HostTensor::compact(DT_F64, {});
  REQUIRE(call_reduce(CT_OP_MEAN, x, true, none, 0, {}, m) == CT_OK);
  CHECK(m.get(0) == 9223372036854775808.0);  // not the wrapped int64 sum (-2) / 2
  x.set_i(0, (int64_t)1 << 62);
  x.set_i(1, (int64_t)1 << 62);
  REQUIRE(call_reduce(CT_OP_MEAN, x, true, none, 0, {}, m) == CT_OK);
  CHECK(m.get(0) == 4611686018427387904.0);
  // keepdims = 7 keeps the dims
  HostTensor y = HostTensor::compact(DT_F32, {2, 3});
  for (int i = 0; i < 6; ++i) y.set(i, i);
  HostTensor o = HostTensor::compact(DT_F32, {2, 1});
  std::vector<int> ax1 = {1};
  REQUIRE(call_reduce(CT_OP_SUM, y, false, ax1, 7, {}, o) == CT_OK);
  CHECK(o.get(0) == 3);
  CHECK(o.get(1) == 12);
  // empty x and out with NULL data
  int64_t s03[2] = {0, 3}, s0[1] = {0};
  const CTDataType f32 = {CT_FLOAT, 32, 1};
  CTensor xe = {nullptr, {CT_CPU, 0}, 2, f32, s03, nullptr, 0};
  CTensor oe = {nullptr, {CT_CPU, 0}, 1, f32, s0, nullptr, 0};
  int32_t a1 = 1;
  CHECK(ct_reduce(CT_OP_MAX, &xe, &a1, 1, 0, nullptr, 0, &oe, nullptr) == CT_OK);
  CHECK(ct_reduce(CT_OP_SUM, &xe, &a1, 1, 0, nullptr, 0, &oe, nullptr) == CT_OK);
  CTensor oa = {nullptr, {CT_CPU, 0}, 2, f32, s03, nullptr, 0};
  CHECK(ct_along_axis(CT_OP_SOFTMAX, &xe, 0, &oa, nullptr) == CT_OK);
  CHECK(ct_along_axis(CT_OP_CUMSUM, &xe, 1, &oa, nullptr) == CT_OK);
  float r[3] = {-1, -1, -1};
  int64_t s3[1] = {3};
  CTensor o3 = {r, {CT_CPU, 0}, 1, f32, s3, nullptr, 0};
  int32_t a0 = 0;
  REQUIRE(ct_reduce(CT_OP_SUM, &xe, &a0, 1, 0, nullptr, 0, &o3, nullptr) == CT_OK);
  CHECK(r[0] == 0.0f);
  CHECK(r[2] == 0.0f);
}

TEST_CASE("reduce: var and std with corrections, against NumPy", "[reduce]") {
  std::vector<int> none;
  auto run = [&](int op, int d, std::vector<double> vals, double corr) {
    HostTensor x = HostTensor::compact(d, {(int64_t)vals.size()});
    for (size_t i = 0; i < vals.size(); ++i) x.set((int64_t)i, vals[i]);
    HostTensor o = HostTensor::compact(output_dtype_for(CT_OUTPUT_FLOAT, d), {});
    CTStatus s = call_reduce(op, x, true, none, 0, {corr}, o);
    INFO(ct_last_error());
    REQUIRE(s == CT_OK);
    return o.get(0);
  };
  for (int d : {DT_F64, DT_F32, DT_I32, DT_F16, DT_I64}) {
    INFO("dtype " << dtype(d).name);
    double tol = d == DT_F16 ? 2e-3 : d == DT_F32 ? 1e-6 : 1e-14;
    std::vector<double> v = {1, 2, 3, 4};  // sum of squared deviations 5
    CHECK(std::fabs(run(CT_OP_VAR, d, v, 0) - 1.25) <= tol * 1.25);
    CHECK(std::fabs(run(CT_OP_VAR, d, v, 1) - 5.0 / 3) <= tol * 5 / 3);
    CHECK(std::fabs(run(CT_OP_VAR, d, v, 0.5) - 5.0 / 3.5) <= tol * 5 / 3.5);
    CHECK(std::fabs(run(CT_OP_VAR, d, v, -1) - 1.0) <= tol);
    CHECK(std::fabs(run(CT_OP_STD, d, v, 0) - std::sqrt(1.25)) <= tol * 1.2);
    CHECK(std::fabs(run(CT_OP_STD, d, v, 1) - std::sqrt(5.0 / 3)) <= tol * 1.3);
    // correction >= count: x / 0 as NumPy (inf, or NaN for 0 / 0)
    CHECK(run(CT_OP_VAR, d, v, 4) == kInf);
    CHECK(run(CT_OP_VAR, d, v, 7.5) == kInf);
    CHECK(run(CT_OP_STD, d, v, 4) == kInf);
    std::vector<double> c = {2, 2, 2};
    CHECK(run(CT_OP_VAR, d, c, 0) == 0.0);
    CHECK(std::isnan(run(CT_OP_VAR, d, c, 3)));
    CHECK(std::isnan(run(CT_OP_STD, d, c, 5)));
    CHECK(std::isnan(run(CT_OP_VAR, d, {5}, 1)));  // one element, sample variance
    CHECK(run(CT_OP_VAR, d, {5}, 0) == 0.0);
  }
  // two-pass: a large offset does not cancel the variance away
  CHECK(std::fabs(run(CT_OP_VAR, DT_F64, {1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4}, 0) - 1.25) <= 1e-6);
  CHECK(std::fabs(run(CT_OP_VAR, DT_F32, {10001, 10002, 10003, 10004}, 0) - 1.25) <= 1e-5);
  // NaN in the data
  CHECK(std::isnan(run(CT_OP_VAR, DT_F32, {1, kNaN, 3}, 0)));
}

TEST_CASE("reduce: logsumexp at +-1e4, -inf, inf and NaN", "[reduce]") {
  std::vector<int> none;
  auto run = [&](int d, std::vector<double> vals) {
    HostTensor x = HostTensor::compact(d, {(int64_t)vals.size()});
    for (size_t i = 0; i < vals.size(); ++i) x.set((int64_t)i, vals[i]);
    HostTensor o = HostTensor::compact(d, {});
    CTStatus s = call_reduce(CT_OP_LOGSUMEXP, x, true, none, 0, {}, o);
    INFO(ct_last_error());
    REQUIRE(s == CT_OK);
    return o.get(0);
  };
  for (int d : {DT_F16, DT_BF16, DT_F32, DT_F64}) {
    INFO("dtype " << dtype(d).name);
    double big = round_to(1e4, d);
    double rt = d == DT_F64 ? 1e-15 : d == DT_F32 ? 1e-7 : d == DT_F16 ? 1e-3 : 8e-3;
    auto near = [&](double got, double want) { return std::fabs(got - want) <= 2 * ulp_of(want, d) + rt; };
    CHECK(near(run(d, {big, big}), big + std::log(2.0)));
    CHECK(near(run(d, {-big, -big}), -big + std::log(2.0)));
    CHECK(near(run(d, {big, -big}), big));
    CHECK(near(run(d, {big, big, big, big, -kInf}), big + std::log(4.0)));
    CHECK(near(run(d, {-kInf, 0}), 0.0));
    CHECK(near(run(d, {-kInf, 1, 1}), 1 + std::log(2.0)));
    CHECK(run(d, {-kInf, -kInf}) == -kInf);
    CHECK(run(d, {-kInf}) == -kInf);
    CHECK(run(d, {kInf, 1}) == kInf);
    CHECK(run(d, {kInf, -kInf}) == kInf);
    CHECK(std::isnan(run(d, {kNaN, 1})));
    CHECK(std::isnan(run(d, {-kInf, kNaN})));
    CHECK(near(run(d, {3}), 3.0));
  }
}

namespace {

struct Pool {
  std::mutex mu;
  std::atomic<int> calls{0};
};

void pool_parallel_for(void* user, int64_t n, int64_t grain, CTParallelBody body, void* ctx) {
  Pool* p = static_cast<Pool*>(user);
  p->calls++;
  if (grain < 1) grain = 1;
  int64_t chunk = std::max<int64_t>(grain, (n + 4) / 5);
  std::vector<std::pair<int64_t, int64_t>> rs;
  for (int64_t b = 0; b < n; b += chunk) rs.push_back({b, std::min(n, b + chunk)});
  std::vector<std::thread> ts;
  for (size_t i = rs.size(); i-- > 0;) {
    if (i % 2) ts.emplace_back([=] { body(ctx, rs[i].first, rs[i].second); });
    else body(ctx, rs[i].first, rs[i].second);
  }
  for (auto& t : ts) t.join();
}

}  // namespace

// var and logsumexp of float32/float64 take one sweep of L1-sized blocks
// (2048 elements) joined pairwise: over many blocks, threads and a value in
// one block only, they match the two-pass results in long double.
TEST_CASE("reduce: var and logsumexp in one sweep of blocks: many blocks, an offset mean, specials in one block", "[reduce]") {
  std::vector<int> none;
  const int64_t n = 300007;  // 146 blocks and a partial one; split over threads
  auto run = [&](int op, int d, const std::vector<double>& v, double corr) {
    HostTensor x = HostTensor::compact(d, {(int64_t)v.size()});
    for (size_t i = 0; i < v.size(); ++i) x.set((int64_t)i, v[i]);
    HostTensor o = HostTensor::compact(d, {});
    const std::vector<double> prm = op == CT_OP_LOGSUMEXP ? std::vector<double>{} : std::vector<double>{corr};
    REQUIRE(call_reduce(op, x, true, none, 0, prm, o) == CT_OK);
    return o.get(0);
  };
  for (int d : {DT_F32, DT_F64}) {
    INFO("dtype " << dtype(d).name);
    const double rt = d == DT_F32 ? 2e-7 : 1e-15;  // float64: the shifted means keep two passes' accuracy
    for (double offset : {0.0, 1e4}) {  // 1e4: a mean far from 0 with a spread of ~1 (the cancelling case)
      std::vector<double> v((size_t)n);
      for (int64_t i = 0; i < n; ++i) v[(size_t)i] = round_to(offset + std::sin(0.001 * (double)i) + 0.25 * (double)(i % 7), d);
      long double mean = 0, m2 = 0, mx = -INFINITY, se = 0;
      for (double e : v) mean += e, mx = std::max<long double>(mx, e);
      mean /= n;
      for (double e : v) m2 += (e - mean) * (e - mean), se += std::exp((long double)e - mx);
      const double var = (double)(m2 / (n - 1)), lse = (double)(mx + std::log(se));
      INFO("offset " << offset);
      {
        const double got = run(CT_OP_VAR, d, v, 1);
        INFO("var got " << std::setprecision(17) << got << " want " << var << " rel " << std::fabs(got - var) / var);
        CHECK(std::fabs(got - var) <= rt * var);
      }
      CHECK(std::fabs(run(CT_OP_LOGSUMEXP, d, v, 0) - lse) <= rt * std::fabs(lse) + 2 * ulp_of(lse, d));
      // one special in one block (not the first) decides the result
      std::vector<double> w = v;
      w[(size_t)(n / 3)] = kNaN;
      CHECK(std::isnan(run(CT_OP_VAR, d, w, 1)));
      CHECK(std::isnan(run(CT_OP_LOGSUMEXP, d, w, 0)));
      w[(size_t)(n / 3)] = kInf;
      CHECK(std::isnan(run(CT_OP_VAR, d, w, 1)));
      CHECK(run(CT_OP_LOGSUMEXP, d, w, 0) == kInf);
      w[(size_t)(n / 3)] = -kInf;
      CHECK(std::isnan(run(CT_OP_VAR, d, w, 1)));
      CHECK(std::fabs(run(CT_OP_LOGSUMEXP, d, w, 0) - lse) <= 1e-3 * std::fabs(lse));  // one term fewer
      // the first element is var's shift: a special there decides alone too
      w = v;
      w[0] = kNaN;
      CHECK(std::isnan(run(CT_OP_VAR, d, w, 1)));
      w[0] = kInf;
      CHECK(std::isnan(run(CT_OP_VAR, d, w, 1)));
    }
    if (d == DT_F64) {  // values whose squares overflow: inf, as two passes give (no shift near 1e200)
      std::vector<double> big((size_t)n);
      for (int64_t i = 0; i < n; ++i) big[(size_t)i] = (i % 2 ? -1e200 : 1e200);
      CHECK(run(CT_OP_VAR, d, big, 1) == kInf);
    }
    // logsumexp's later blocks are shifted by the max so far, and summed
    // again with their own max where theirs is above it: values rising
    // slowly, steeply (past e^88 of the max before: no finite sum to keep),
    // and falling far below it
    for (double slope : {40.0 / 2048, 300.0 / 2048, -300.0 / 2048}) {
      std::vector<double> r((size_t)n);
      long double mx = -INFINITY, se = 0;
      for (int64_t i = 0; i < n; ++i) {
        r[(size_t)i] = round_to(slope * (double)(i - n / 2) + 0.5 * std::sin(0.01 * (double)i), d);
        mx = std::max<long double>(mx, r[(size_t)i]);
      }
      for (double e : r) se += std::exp((long double)e - mx);
      const double lse = (double)(mx + std::log(se)), got = run(CT_OP_LOGSUMEXP, d, r, 0);
      INFO("slope " << slope << " got " << std::setprecision(17) << got << " want " << lse);
      CHECK(std::fabs(got - lse) <= 4 * ulp_of(lse, d) + (d == DT_F32 ? 1e-5 : 1e-12));
    }
    std::vector<double> ninf((size_t)n, -kInf);
    ninf[(size_t)(n - 1)] = 2.0;  // every block but the last is all -inf
    CHECK(std::fabs(run(CT_OP_LOGSUMEXP, d, ninf, 0) - 2.0) <= 2 * ulp_of(2.0, d));
    ninf[(size_t)(n - 1)] = -kInf;
    CHECK(run(CT_OP_LOGSUMEXP, d, ninf, 0) == -kInf);
  }
}

TEST_CASE("reduce: large inputs (threads), both axes of (1000, 1000) and everything", "[reduce]") {
  Pool pool;
  CTCpuStream st;
  std::memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  st.parallel_for = pool_parallel_for;
  st.user = &pool;
  struct C { int op, d, variant; bool null_axes; std::vector<int> axes; std::vector<int64_t> shape; };
  const std::vector<int64_t> big = {1000, 1000}, mid = {300, 701};  // both above two grains (threads)
  const C cases[] = {
      {CT_OP_SUM, DT_F32, 0, false, {0}, big},      {CT_OP_SUM, DT_F32, 0, false, {1}, big},
      {CT_OP_SUM, DT_F32, 1, true, {}, big},        {CT_OP_MEAN, DT_F64, 2, false, {0}, big},
      {CT_OP_MAX, DT_I32, 0, false, {1}, mid},      {CT_OP_ARGMAX, DT_F32, 0, false, {0}, mid},
      {CT_OP_ARGMIN, DT_F16, 1, false, {1}, mid},   {CT_OP_SUM, DT_BF16, 0, false, {1}, mid},
      {CT_OP_NORM2, DT_F32, 0, false, {0}, mid},    {CT_OP_VAR, DT_F64, 0, false, {1}, mid},
      {CT_OP_ANY, DT_U8, 0, false, {0}, mid},       {CT_OP_SUM, DT_I8, 0, true, {}, mid},
      {CT_OP_LOGSUMEXP, DT_F32, 0, false, {1}, mid}, {CT_OP_MIN, DT_F32, 0, false, {0, 1}, mid},
      {CT_OP_PROD, DT_I64, 4, false, {0}, mid},     {CT_OP_STD, DT_F32, 2, false, {0}, mid},
      // more than 2048 columns; more than 64 rows; long rows; a middle axis
      {CT_OP_SUM, DT_F32, 0, false, {0}, {70, 3001}},   {CT_OP_ARGMAX, DT_F64, 0, false, {0}, {70, 3001}},
      {CT_OP_MEAN, DT_F16, 0, false, {1}, {3001, 70}},  {CT_OP_SUM, DT_F64, 0, false, {1}, {3, 100003}},
      {CT_OP_MAX, DT_BF16, 0, false, {1}, {50, 97, 41}}, {CT_OP_SUM, DT_F32, 2, false, {0, 2}, {50, 97, 41}},
      {CT_OP_LOGSUMEXP, DT_F64, 0, false, {0}, {200, 2500}},
  };
  for (const C& c : cases) {
    Rng rng((uint64_t)c.op * 3 + (uint64_t)c.d);
    HostTensor x = make_layout(c.d, c.shape, c.variant);
    fill_for(c.op, x, rng);
    std::vector<double> params;
    if (red_op(c.op).nparams) params.push_back(1.0);
    // keepdims 1 through a caller's parallel_for for a few, keepdims 0 on the default threads for the rest
    if (&c - cases < 4) run_reduce(c.op, x, c.null_axes, c.axes, 1, params, 0, &st);
    else run_reduce(c.op, x, c.null_axes, c.axes, 0, params, 0);
  }
  CHECK(pool.calls.load() > 0);
  // a NaN in the middle of a large f32 max: only its column / the total is NaN
  HostTensor x = HostTensor::compact(DT_F32, {400, 500});
  Rng rng(8);
  fill_for(CT_OP_MAX, x, rng);
  x.set(123456, kNaN);
  run_reduce(CT_OP_MAX, x, false, {0}, 0, {}, 0);
  run_reduce(CT_OP_MAX, x, true, {}, 0, {}, 0);
  run_reduce(CT_OP_ARGMIN, x, true, {}, 0, {}, 0);
  run_reduce(CT_OP_SUM, x, false, {1}, 0, {}, 0);
}

TEST_CASE("reduce: results do not depend on the thread count (SEMANTICS.md: determinism)", "[reduce]") {
  Pool pool;
  CTCpuStream streams[4];
  for (int i = 0; i < 4; ++i) {
    std::memset(&streams[i], 0, sizeof streams[i]);
    streams[i].struct_size = sizeof streams[i];
  }
  streams[0].num_threads = 1;
  streams[1].num_threads = 2;
  streams[2].num_threads = 3;
  streams[3].parallel_for = pool_parallel_for;
  streams[3].user = &pool;
  struct C { int op, d; bool null_axes; std::vector<int> axes; std::vector<int64_t> shape; int variant; };
  const C cases[] = {
      {CT_OP_SUM, DT_F32, true, {}, {1000003}, 0},       {CT_OP_SUM, DT_F32, false, {0}, {1000, 1000}, 0},
      {CT_OP_SUM, DT_F32, false, {1}, {1000, 1000}, 1},  {CT_OP_MEAN, DT_F64, true, {}, {1000, 1000}, 2},
      {CT_OP_NORM2, DT_F16, false, {0}, {2000, 300}, 0}, {CT_OP_VAR, DT_F32, false, {1}, {300, 3001}, 0},
      {CT_OP_LOGSUMEXP, DT_F32, false, {0}, {5000, 40}, 0},
  };
  for (const C& c : cases) {
    const RedOp& r = red_op(c.op);
    INFO(r.name << " " << dtype(c.d).name << " x" << shape_str(c.shape) << " axes " << axes_str(c.null_axes, c.axes));
    Rng rng(c.shape[0]);
    HostTensor x = make_layout(c.d, c.shape, c.variant);
    fill_for(c.op, x, rng);
    std::vector<double> params;
    if (r.nparams) params.push_back(1.0);
    Plan p = make_plan(c.shape, c.null_axes, c.axes, false);
    int dout = output_dtype_for(r.rule, c.d);
    HostTensor ref = HostTensor::compact(dout, p.out_shape);
    REQUIRE(call_reduce(c.op, x, c.null_axes, c.axes, 0, params, ref) == CT_OK);
    for (int i = 0; i < 4; ++i) {
      INFO("stream " << i);
      HostTensor o = HostTensor::compact(dout, p.out_shape);
      REQUIRE(call_reduce(c.op, x, c.null_axes, c.axes, 0, params, o, &streams[i]) == CT_OK);
      CHECK(o.bytes() == ref.bytes());
    }
  }
}

// ---------------------------------------------------------------------------
// Reduction errors
// ---------------------------------------------------------------------------

namespace {

void expect_reduce_fail(int op, HostTensor& x, bool null_axes, std::vector<int32_t> axes, int32_t num_axes,
                        int keep, const double* params, int32_t num_params, HostTensor& out, CTStatus want,
                        std::vector<std::string> subs = {}) {
  out.fill_bytes(0x5A);
  std::vector<unsigned char> before = out.bytes();
  CTensor xv = x.view(), ov = out.view();
  static const int32_t dummy = 0;
  const int32_t* ap = null_axes ? nullptr : (axes.empty() ? &dummy : axes.data());
  CTStatus s = ct_reduce(op, &xv, ap, num_axes, keep, params, num_params, &ov, nullptr);
  std::string msg = last_error();
  INFO("x" << shape_str(x.shape) << " " << dtype(x.d).name << " axes "
           << axes_str(null_axes, std::vector<int>(axes.begin(), axes.end())) << " num_axes " << num_axes
           << " keepdims " << keep << " num_params " << num_params << " out" << shape_str(out.shape) << " "
           << dtype(out.d).name);
  INFO("status " << s << " (" << ct_status_string(s) << "), want " << ct_status_string(want) << "; message: \""
                 << msg << "\"");
  CHECK(s == want);
  CHECK(msg.rfind("ct_reduce", 0) == 0);
  for (const std::string& sub : subs) {
    INFO("substring " << sub);
    CHECK(contains(msg, sub));
  }
  CHECK(out.bytes() == before);
}

}  // namespace

TEST_CASE("reduce errors: axes", "[reduce]") {
  HostTensor x = HostTensor::compact(DT_F32, {3, 4, 5});
  HostTensor o35 = HostTensor::compact(DT_F32, {3, 5}), o = HostTensor::compact(DT_F32, {});
  const int inv = CT_ERR_INVALID_ARGUMENT;
  expect_reduce_fail(CT_OP_SUM, x, false, {3}, 1, 0, nullptr, 0, o35, inv, {"3"});
  expect_reduce_fail(CT_OP_SUM, x, false, {-4}, 1, 0, nullptr, 0, o35, inv, {"-4"});
  expect_reduce_fail(CT_OP_SUM, x, false, {1, 1}, 2, 0, nullptr, 0, o35, inv);
  expect_reduce_fail(CT_OP_SUM, x, false, {1, -2}, 2, 0, nullptr, 0, o35, inv);  // the same axis twice
  expect_reduce_fail(CT_OP_SUM, x, false, {0, 2, -1}, 3, 0, nullptr, 0, o, inv);
  expect_reduce_fail(CT_OP_SUM, x, false, {1}, -1, 0, nullptr, 0, o35, inv);
  expect_reduce_fail(CT_OP_SUM, x, true, {}, 1, 0, nullptr, 0, o35, inv);  // NULL with num_axes > 0
  expect_reduce_fail(CT_OP_SUM, x, false, {0, 1, 2, 0}, 4, 0, nullptr, 0, o, inv);  // more than ndim
  expect_reduce_fail(CT_OP_MAX, x, false, {100}, 1, 0, nullptr, 0, o35, inv);
  HostTensor s = HostTensor::compact(DT_F32, {});
  HostTensor os = HostTensor::compact(DT_F32, {});
  // 0-d: axis 0 or -1 once (see the next test); nothing else
  expect_reduce_fail(CT_OP_SUM, s, false, {1}, 1, 0, nullptr, 0, os, inv, {"axes[0]=1", "[-1, 1)"});
  expect_reduce_fail(CT_OP_SUM, s, false, {-2}, 1, 0, nullptr, 0, os, inv, {"axes[0]=-2"});
  expect_reduce_fail(CT_OP_SUM, s, false, {0, -1}, 2, 0, nullptr, 0, os, inv, {"num_axes=2"});
  expect_reduce_fail(CT_OP_SUM, s, false, {0, 0}, 2, 1, nullptr, 0, os, inv, {"num_axes=2"});
  HostTensor o1 = HostTensor::compact(DT_F32, {1});
  expect_reduce_fail(CT_OP_SUM, s, false, {0}, 1, 1, nullptr, 0, o1, CT_ERR_SHAPE_MISMATCH, {"[]"});  // keepdims: 0-d
}

// Regression: ct_reduce refused axis 0 / -1 on a 0-d x, which NumPy's
// reductions accept (np.sum(np.float32(3), axis=0) is 3) and ct_along_axis
// already did: the one element is reduced, out is 0-d with or without keepdims.
TEST_CASE("reduce: a 0-d x takes axis 0 or -1", "[reduce]") {
  const int32_t ops[] = {CT_OP_SUM, CT_OP_MEAN, CT_OP_PROD, CT_OP_MAX, CT_OP_MIN, CT_OP_ARGMAX, CT_OP_ARGMIN,
                         CT_OP_ANY, CT_OP_ALL, CT_OP_NORM2, CT_OP_LOGSUMEXP, CT_OP_VAR, CT_OP_STD};
  for (int d : {DT_F32, DT_I32, DT_F64}) {
    for (int32_t op : ops) {
      CTOpInfo info;
      std::memset(&info, 0, sizeof info);
      info.struct_size = sizeof info;
      REQUIRE(ct_op_info(op, &info) == CT_OK);
      if (!(info.dtype_mask & (1u << d))) continue;
      HostTensor x = HostTensor::compact(d, {});
      x.set(0, -3.0);
      const int od = output_dtype_for(info.output_dtype, d);
      double want;
      switch (op) {
        case CT_OP_ARGMAX: case CT_OP_ARGMIN: want = 0; break;
        case CT_OP_ANY: case CT_OP_ALL: want = 1; break;
        case CT_OP_NORM2: want = 3; break;
        case CT_OP_VAR: case CT_OP_STD: want = 0; break;
        default: want = -3; break;
      }
      for (int32_t axis : {0, -1})
        for (int keep = 0; keep < 2; ++keep) {
          INFO(info.name << " " << dtype(d).name << " axis " << axis << " keepdims " << keep);
          HostTensor o = HostTensor::compact(od, {});
          o.fill_bytes(0x5A);
          CTensor xv = x.view(), ov = o.view();
          double corr = 0.0;
          const int np = info.num_params;
          REQUIRE(ct_reduce(op, &xv, &axis, 1, keep, np ? &corr : nullptr, np, &ov, nullptr) == CT_OK);
          CHECK(o.get(0) == want);
        }
    }
  }
  // NULL axes and axes=() on a 0-d x keep working
  HostTensor x = HostTensor::compact(DT_F32, {}), o = HostTensor::compact(DT_F32, {});
  x.set(0, 2.5);
  CTensor xv = x.view(), ov = o.view();
  REQUIRE(ct_reduce(CT_OP_SUM, &xv, nullptr, 0, 1, nullptr, 0, &ov, nullptr) == CT_OK);
  CHECK(o.get(0) == 2.5);
  const int32_t none = 0;
  REQUIRE(ct_reduce(CT_OP_PROD, &xv, &none, 0, 0, nullptr, 0, &ov, nullptr) == CT_OK);
  CHECK(o.get(0) == 2.5);
}

TEST_CASE("reduce errors: out shape and dtype, params, op, unsupported, overlap", "[reduce]") {
  HostTensor x = HostTensor::compact(DT_F32, {3, 4, 5});
  HostTensor xi = HostTensor::compact(DT_I32, {3, 4, 5});
  SECTION("out shape names the expected shape") {
    HostTensor o35 = HostTensor::compact(DT_F32, {3, 5}), o315 = HostTensor::compact(DT_F32, {3, 1, 5});
    HostTensor o1 = HostTensor::compact(DT_F32, {1}), o53 = HostTensor::compact(DT_F32, {5, 3});
    const int sm = CT_ERR_SHAPE_MISMATCH;
    expect_reduce_fail(CT_OP_SUM, x, false, {1}, 1, 1, nullptr, 0, o35, sm, {"[3,5]", "[3,1,5]"});
    expect_reduce_fail(CT_OP_SUM, x, false, {1}, 1, 0, nullptr, 0, o315, sm, {"[3,1,5]", "[3,5]"});
    expect_reduce_fail(CT_OP_SUM, x, false, {1}, 1, 0, nullptr, 0, o53, sm, {"[5,3]", "[3,5]"});
    expect_reduce_fail(CT_OP_MEAN, x, true, {}, 0, 0, nullptr, 0, o1, sm, {"[1]", "[]"});
    HostTensor o111 = HostTensor::compact(DT_F32, {1, 1, 1});
    expect_reduce_fail(CT_OP_MAX, x, true, {}, 0, 0, nullptr, 0, o111, sm, {"[1,1,1]"});
    expect_reduce_fail(CT_OP_SUM, x, false, {}, 0, 0, nullptr, 0, o35, sm, {"[3,4,5]"});  // axes=() keeps the shape
  }
  SECTION("out dtype") {
    const int dm = CT_ERR_DTYPE_MISMATCH;
    HostTensor oi32 = HostTensor::compact(DT_I32, {}), of32 = HostTensor::compact(DT_F32, {});
    HostTensor of64 = HostTensor::compact(DT_F64, {}), oi64 = HostTensor::compact(DT_I64, {});
    HostTensor ob = HostTensor::compact(DT_BOOL, {});
    expect_reduce_fail(CT_OP_SUM, xi, true, {}, 0, 0, nullptr, 0, oi32, dm);   // int sum -> int64
    expect_reduce_fail(CT_OP_MEAN, xi, true, {}, 0, 0, nullptr, 0, oi64, dm);  // int mean -> float64
    expect_reduce_fail(CT_OP_MEAN, xi, true, {}, 0, 0, nullptr, 0, of32, dm);
    expect_reduce_fail(CT_OP_MAX, xi, true, {}, 0, 0, nullptr, 0, oi64, dm);   // max keeps int32
    expect_reduce_fail(CT_OP_ARGMAX, x, true, {}, 0, 0, nullptr, 0, oi32, dm);  // argmax -> int64
    expect_reduce_fail(CT_OP_ARGMIN, x, true, {}, 0, 0, nullptr, 0, of32, dm);
    expect_reduce_fail(CT_OP_ANY, x, true, {}, 0, 0, nullptr, 0, of32, dm);    // any -> bool
    expect_reduce_fail(CT_OP_SUM, x, true, {}, 0, 0, nullptr, 0, of64, dm);    // float32 sum stays float32
    expect_reduce_fail(CT_OP_NORM2, x, true, {}, 0, 0, nullptr, 0, of64, dm);
    double one = 1.0;
    expect_reduce_fail(CT_OP_VAR, xi, true, {}, 0, 0, &one, 1, oi32, dm);
    expect_reduce_fail(CT_OP_ALL, xi, true, {}, 0, 0, nullptr, 0, oi32, dm);
    (void)ob;
  }
  SECTION("params") {
    const int inv = CT_ERR_INVALID_ARGUMENT;
    HostTensor of32 = HostTensor::compact(DT_F32, {});
    double two[2] = {1.0, 1.0}, nan = kNaN, inf = kInf, minf = -kInf, one = 1.0;
    expect_reduce_fail(CT_OP_VAR, x, true, {}, 0, 0, nullptr, 0, of32, inv);
    expect_reduce_fail(CT_OP_VAR, x, true, {}, 0, 0, two, 2, of32, inv);
    expect_reduce_fail(CT_OP_STD, x, true, {}, 0, 0, nullptr, 1, of32, inv);
    expect_reduce_fail(CT_OP_VAR, x, true, {}, 0, 0, &nan, 1, of32, inv);
    expect_reduce_fail(CT_OP_STD, x, true, {}, 0, 0, &inf, 1, of32, inv);
    expect_reduce_fail(CT_OP_VAR, x, true, {}, 0, 0, &minf, 1, of32, inv);
    expect_reduce_fail(CT_OP_SUM, x, true, {}, 0, 0, &one, 1, of32, inv);
  }
  SECTION("op ids and kinds, unsupported dtypes") {
    HostTensor of32 = HostTensor::compact(DT_F32, {});
    expect_reduce_fail(CT_OP_ADD, x, true, {}, 0, 0, nullptr, 0, of32, CT_ERR_INVALID_ARGUMENT, {"add"});
    expect_reduce_fail(CT_OP_SOFTMAX, x, true, {}, 0, 0, nullptr, 0, of32, CT_ERR_INVALID_ARGUMENT, {"softmax"});
    expect_reduce_fail(CT_OP_EXP, x, true, {}, 0, 0, nullptr, 0, of32, CT_ERR_INVALID_ARGUMENT, {"exp"});
    expect_reduce_fail(9999, x, true, {}, 0, 0, nullptr, 0, of32, CT_ERR_NOT_FOUND, {"9999"});
    HostTensor oi32 = HostTensor::compact(DT_I32, {}), of64 = HostTensor::compact(DT_F64, {});
    expect_reduce_fail(CT_OP_LOGSUMEXP, xi, true, {}, 0, 0, nullptr, 0, oi32, CT_ERR_UNSUPPORTED,
                       {"logsumexp", "int32"});
    HostTensor xb = HostTensor::compact(DT_BOOL, {3, 4, 5});
    double zero = 0.0;
    expect_reduce_fail(CT_OP_VAR, xb, true, {}, 0, 0, &zero, 1, of64, CT_ERR_UNSUPPORTED, {"var", "bool"});
    expect_reduce_fail(CT_OP_NORM2, xb, true, {}, 0, 0, nullptr, 0, of64, CT_ERR_UNSUPPORTED, {"norm2", "bool"});
  }
  SECTION("out overlaps x, or itself") {
    HostTensor buf = HostTensor::compact(DT_F32, {16});
    buf.fill_bytes(0x3F);
    std::vector<unsigned char> before = buf.bytes();
    int64_t sh[1] = {8}, sh1[1] = {1}, sh4[1] = {4}, st0[1] = {0};
    const CTDataType f32 = {CT_FLOAT, 32, 1};
    CTensor xv = {buf.buf(), {CT_CPU, 0}, 1, f32, sh, nullptr, 0};
    CTensor o1 = {buf.buf(), {CT_CPU, 0}, 1, f32, sh1, nullptr, 12};  // inside x
    int32_t ax0 = 0;
    CHECK(ct_reduce(CT_OP_SUM, &xv, &ax0, 1, 1, nullptr, 0, &o1, nullptr) == CT_ERR_INVALID_ARGUMENT);
    // exactly x, with axes=() (same shape): still not allowed for a reduction
    CHECK(ct_reduce(CT_OP_SUM, &xv, &ax0, 0, 0, nullptr, 0, &xv, nullptr) == CT_ERR_INVALID_ARGUMENT);
    // out overlapping itself
    HostTensor y = HostTensor::compact(DT_F32, {4, 3});
    CTensor yv = y.view();
    CTensor o4 = {buf.buf(), {CT_CPU, 0}, 1, f32, sh4, st0, 0};
    int32_t ax1 = 1;
    CHECK(ct_reduce(CT_OP_SUM, &yv, &ax1, 1, 0, nullptr, 0, &o4, nullptr) == CT_ERR_INVALID_ARGUMENT);
    CHECK(buf.bytes() == before);
    CHECK(ct_reduce(CT_OP_SUM, nullptr, &ax1, 1, 0, nullptr, 0, &o4, nullptr) == CT_ERR_INVALID_ARGUMENT);
    CHECK(ct_reduce(CT_OP_SUM, &yv, &ax1, 1, 0, nullptr, 0, nullptr, nullptr) == CT_ERR_INVALID_ARGUMENT);
  }
}

// ---------------------------------------------------------------------------
// Along-axis ops
// ---------------------------------------------------------------------------

namespace {

// The expected values of one line of an along-axis op: the reference's
// (tests/reference, `want` at the line's positions `at`), with tolerances as
// in expect_of.
void along_expect(int op, int d, int dout, const std::vector<double>& fv, const ctref::Array& want,
                  const std::vector<int64_t>& at, std::vector<Expect>& out) {
  const size_t n = at.size();
  out.assign(n, Expect());
  if (!dtype(dout).is_float()) {  // cumsum / cumprod of ints and bool: int64, wrapping
    for (size_t k = 0; k < n; ++k) {
      out[k].fout = false;
      out[k].iv = want.i[(size_t)at[k]];
    }
    return;
  }
  for (size_t k = 0; k < n; ++k) out[k].v = want.f[(size_t)at[k]];
  if (op == CT_OP_CUMSUM || op == CT_OP_CUMPROD) {
    long double absacc = 0;
    for (size_t k = 0; k < n; ++k) {
      absacc += std::fabs(fv[k]);
      out[k].tol = op == CT_OP_CUMSUM ? ulp_of(out[k].v, dout) + (double)(k + 2) * eps_cum(d) * (double)absacc
                                      : ulp_of(out[k].v, dout) + (double)(k + 2) * eps_cum(d) * std::fabs(out[k].v);
    }
    return;
  }
  if (op == CT_OP_SORT || op == CT_OP_CUMMAX || op == CT_OP_CUMMIN) {  // the values themselves (either zero where -0 and 0 tie)
    for (size_t k = 0; k < n; ++k) out[k].tol = -1;
    return;
  }
  if (op == CT_OP_LOGCUMSUMEXP) {  // each step rounds once in the accumulator, once when stored
    for (size_t k = 0; k < n; ++k)
      out[k].tol = ulp_of(out[k].v, dout) + (double)(k + 2) * eps_cum(d) * (std::fabs(out[k].v) + 1.0);
    return;
  }
  // softmax / log_softmax; softmin is softmax of -x
  const bool neg = op == CT_OP_SOFTMIN;
  double m = -kInf;
  for (double x : fv)
    if ((neg ? -x : x) > m) m = neg ? -x : x;
  double rt = (double)(8 + n) * eps_calc(d) + 2 * (d == DT_F64 ? std::ldexp(1.0, -53) : ulp_of(1.0, dout));
  double at_ = ulp_of(0.0, dout) * 4 + (dout == DT_F32 || dout == DT_BF16 ? std::ldexp(1.0, -126) : 0.0);
  for (size_t k = 0; k < n; ++k) {
    const double v = out[k].v;
    if (op != CT_OP_LOG_SOFTMAX) {
      // (exp of x - m, itself rounded: relative error ~ eps * |x - m|)
      const double xm = (neg ? -fv[k] : fv[k]) - m;
      double exm = std::isfinite(xm) ? eps_calc(d) * std::fabs(xm) : 0.0;
      out[k].tol = (rt + exm) * std::fabs(v) + at_;
    } else {
      out[k].tol = rt * std::fabs(v) + (double)(n + 8) * eps_calc(d) + at_;
    }
  }
}

void check_along(int op, const HostTensor& x, int axis, const HostTensor& out, const std::vector<unsigned char>& before,
                 Mismatch& mm) {
  int d = x.d, dout = out.d;
  int nd = (int)x.shape.size();
  int ax = nd == 0 ? 0 : (axis + nd) % nd;
  int64_t outer = 1, len = nd == 0 ? 1 : x.shape[(size_t)ax], inner = 1;
  for (int i = 0; i < ax && nd; ++i) outer *= x.shape[(size_t)i];
  for (int i = ax + 1; i < nd; ++i) inner *= x.shape[(size_t)i];
  ctref::Call call = ref_call(op);
  call.axis = axis;
  const ctref::Array want = reference(call, {&x}, {{dout, x.shape}})[0];
  std::vector<double> fv((size_t)len);
  std::vector<int64_t> at((size_t)len);
  std::vector<Expect> ex;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t k = 0; k < len; ++k) {
        at[(size_t)k] = (o * len + k) * inner + i;
        fv[(size_t)k] = x.d == DT_BOOL ? (double)(x.get_i(at[(size_t)k]) != 0) : x.get(at[(size_t)k]);
      }
      along_expect(op, d, dout, fv, want, at, ex);
      for (int64_t k = 0; k < len; ++k) {
        int64_t lin = at[(size_t)k];
        std::string g, e;
        if (!matches(ex[(size_t)k], out, lin, g, e)) {
          std::ostringstream s;
          s << "out[" << lin << "] (line " << o << "," << i << " position " << k << ") got " << g << " expected " << e
            << "; line (";
          for (int64_t j = 0; j < len && j < 8; ++j) s << (j ? ", " : "") << fmt(fv[(size_t)j]);
          s << (len > 8 ? ", ...)" : ")");
          mm.add(s.str());
        }
      }
    }
  std::vector<char> cov = covered(out);
  std::vector<unsigned char> after = out.bytes();
  for (size_t k = 0; k < after.size(); ++k)
    if (!cov[k] && after[k] != before[k]) {
      mm.add("wrote outside the output's elements at byte " + std::to_string(k));
      break;
    }
}

const AlongOp& along_op(int op) {
  for (const AlongOp& a : kAlong)
    if (a.op == op) return a;
  return kAlong[0];
}

void run_along(int op, HostTensor& x, int axis, int out_variant, void* stream = nullptr) {
  const AlongOp& a = along_op(op);
  int dout = output_dtype_for(a.rule, x.d);
  HostTensor out = make_layout(dout, x.shape, out_variant);
  out.fill_bytes(0xA5);
  std::vector<unsigned char> before = out.bytes();
  INFO(a.name << " " << dtype(x.d).name << " x" << shape_str(x.shape) << " strides" << shape_str(x.strides)
              << " axis " << axis << " out layout " << out_variant);
  CTensor xv = x.view(axis % 2 == 0), ov = out.view();
  CTStatus s = ct_along_axis(op, &xv, axis, &ov, stream);
  INFO("status " << s << " " << ct_status_string(s) << ": " << ct_last_error());
  REQUIRE(s == CT_OK);
  Mismatch mm;
  check_along(op, x, axis, out, before, mm);
  INFO(mm.first);
  CHECK(mm.count == 0);
}

void fill_along(int op, HostTensor& x, Rng& rng, bool specials) {
  int d = x.d;
  int64_t n = x.numel();
  const bool sort = op == CT_OP_SORT || op == CT_OP_ARGSORT || op == CT_OP_CUMMAX || op == CT_OP_CUMMIN;
  if (dtype(d).is_float()) {
    for (int64_t i = 0; i < n; ++i) {
      double v = op == CT_OP_CUMPROD ? rng.uniform(0.7, 1.4) * ((rng.next() & 1) ? 1 : -1) : rng.uniform(-5, 5);
      if (sort) {  // ties, -0 and 0, infinities, NaN
        const double u = rng.uniform();
        v = u < 0.05 ? kNaN : u < 0.1 ? -0.0 : u < 0.15 ? 0.0 : u < 0.18 ? kInf : u < 0.21 ? -kInf
                                                                      : std::round(v * 2) / 2;
      }
      x.set(i, v);
    }
    if (specials && n > 10) {  // softmax: large magnitudes and -inf entries here and there
      x.set(1, 1e4);
      x.set(n / 2, -1e4);
      x.set(n - 2, -kInf);
      x.set(n / 3, round_to(-1e4 + 3, d));
    }
    return;
  }
  if (d == DT_BOOL) {
    for (int64_t i = 0; i < n; ++i) x.set_i(i, (int64_t)(rng.uniform() < 0.7));
    return;
  }
  int64_t lo = int_min(d), hi = int_max(d);
  for (int64_t i = 0; i < n; ++i)
    x.set_i(i, op == CT_OP_CUMPROD || (sort && i % 3) ? rng.int_in(std::max<int64_t>(lo, -3), 3) : rng.int_in(lo, hi));
}

}  // namespace

TEST_CASE("along-axis: every op x dtype along every axis of a 3-d tensor, strided inputs", "[reduce]") {
  const int in_variants[] = {0, 1, 2, 4};
  int runs = 0;
  for (const AlongOp& a : kAlong) {
    for (int d = 0; d < DT_COUNT; ++d) {
      if (!((a.mask >> d) & 1u)) continue;
      Rng rng((uint64_t)a.op * 41 + (uint64_t)d);
      int k = 0;
      for (std::vector<int64_t> shape : {std::vector<int64_t>{3, 4, 5}, {2, 7, 3}}) {
        for (int axis : {0, 1, 2, -1, -2, -3}) {
          int vin = in_variants[k % 4], vout = (k % 3 == 0) ? 3 : 0;
          ++k;
          HostTensor x = make_layout(d, shape, vin);
          fill_along(a.op, x, rng, a.op == CT_OP_SOFTMAX || a.op == CT_OP_LOG_SOFTMAX);
          run_along(a.op, x, axis, vout);
          ++runs;
        }
      }
      // 1-d and a long line, 0-d
      HostTensor x1 = make_layout(d, {300}, 2);
      fill_along(a.op, x1, rng, a.op == CT_OP_SOFTMAX || a.op == CT_OP_LOG_SOFTMAX);
      if (a.op == CT_OP_CUMPROD && dtype(d).is_float())  // keep the running product in range
        for (int64_t i = 0; i < 300; ++i) x1.set(i, i % 2 ? 1.0 / 1.25 : 1.25);
      run_along(a.op, x1, 0, 0);
      HostTensor x0 = HostTensor::compact(d, {});
      fill_along(a.op, x0, rng, false);
      run_along(a.op, x0, 0, 0);
      run_along(a.op, x0, -1, 3);
      runs += 3;
    }
  }
  CHECK(runs > 100);
}

TEST_CASE("along-axis: softmax / log_softmax at +-1e4, -inf, NaN; rows sum to 1", "[reduce]") {
  for (int d : {DT_F16, DT_BF16, DT_F32, DT_F64}) {
    INFO("dtype " << dtype(d).name);
    const double rows[][4] = {
        {1e4, 1e4, 1e4, 1e4},       {-1e4, -1e4, -1e4, -1e4},  {1e4, -1e4, 0, 1},
        {-kInf, 0, 1, 2},           {-kInf, -kInf, 3, -kInf},  {-kInf, -kInf, -kInf, -kInf},
        {kNaN, 1, 2, 3},            {-1e4, -1e4 + 1, -1e4 + 2, -1e4 + 3}, {0, 0, 0, 0},
        {kInf, 1, 2, 3},  // NumPy's expression: inf - inf = NaN, so the row is NaN
    };
    const int R = 10;
    HostTensor x = HostTensor::compact(d, {R, 4});
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < 4; ++c) x.set(r * 4 + c, rows[r][c]);
    for (int op : {CT_OP_SOFTMAX, CT_OP_LOG_SOFTMAX, CT_OP_SOFTMIN}) {  // softmin: the min decides (+inf rows NaN)
      run_along(op, x, 1, 0);
      run_along(op, x, -1, 3);
    }
    HostTensor out = HostTensor::compact(d, {R, 4});
    CTensor xv = x.view(), ov = out.view();
    REQUIRE(ct_along_axis(CT_OP_SOFTMAX, &xv, 1, &ov, nullptr) == CT_OK);
    double tol = d == DT_F64 ? 1e-14 : d == DT_F32 ? 1e-6 : d == DT_F16 ? 4e-3 : 3e-2;
    for (int r = 0; r < R; ++r) {
      if (r == 5 || r == 6 || r == 9) {  // all -inf, NaN, +inf: the whole row is NaN
        for (int c = 0; c < 4; ++c) CHECK(std::isnan(out.get(r * 4 + c)));
        continue;
      }
      double s = 0;
      for (int c = 0; c < 4; ++c) {
        double v = out.get(r * 4 + c);
        CHECK(std::isfinite(v));
        CHECK(v >= 0);
        s += v;
      }
      INFO("row " << r << " sums to " << fmt(s));
      CHECK(std::fabs(s - 1) <= tol);
    }
    CHECK(out.get(3 * 4 + 0) == 0.0);  // -inf entries give 0
    CHECK(out.get(4 * 4 + 2) == 1.0);
    CHECK(out.get(0) == 0.25);
  }
  // along axis 0 of a transposed, large tensor (threads) and axis 1
  HostTensor big = make_layout(DT_F32, {1000, 1000}, 1);
  Rng rng(77);
  fill_along(CT_OP_SOFTMAX, big, rng, true);
  run_along(CT_OP_SOFTMAX, big, 0, 0);
  run_along(CT_OP_LOG_SOFTMAX, big, 1, 0);
  // softmin of contiguous lines past the staging buffers (4096) and one with +-inf
  HostTensor wide = HostTensor::compact(DT_F32, {3, 5000});
  fill_along(CT_OP_SOFTMIN, wide, rng, true);
  wide.set(2, -kInf);
  wide.set(5000 + 9, kInf);
  run_along(CT_OP_SOFTMIN, wide, 1, 0);
  HostTensor bigc = HostTensor::compact(DT_F64, {300, 701});
  fill_along(CT_OP_CUMSUM, bigc, rng, false);
  run_along(CT_OP_CUMSUM, bigc, 0, 0);
  run_along(CT_OP_CUMSUM, bigc, 1, 0);
}

TEST_CASE("along-axis: long lines (online softmax), strided and contiguous", "[reduce]") {
  // Lines longer than the library's in-cache buffers: the running max must be
  // rescaled when a later chunk has a larger value.
  for (int d : {DT_F32, DT_F64, DT_F16}) {
    for (int variant : {0, 1}) {
      if (d != DT_F32 && variant == 0) continue;  // (the contiguous online path is one template for f32/f64)
      // variant 0: (2, 33000) along axis 1 (contiguous lines); 1: (2500, 2) along axis 0 (strided lines)
      std::vector<int64_t> shape = variant == 0 ? std::vector<int64_t>{2, 33000} : std::vector<int64_t>{2500, 2};
      int axis = variant == 0 ? 1 : 0;
      int64_t len = shape[(size_t)axis];
      HostTensor x = HostTensor::compact(d, shape);
      Rng rng((uint64_t)d * 7 + (uint64_t)variant);
      for (int64_t i = 0; i < x.numel(); ++i) x.set(i, rng.uniform(-5, 5));
      auto at = [&](int line, int64_t k) { return variant == 0 ? line * len + k : k * 2 + line; };
      // line 0: larger maxima late in the line (rescaling), a -inf entry, -1e4
      x.set(at(0, len - 1), 60.0);
      x.set(at(0, len / 2), 30.0);
      x.set(at(0, 3), -kInf);
      x.set(at(0, len - 100), round_to(-1e4, d));
      // line 1: NaN near the end (contiguous), +inf in the middle (strided)
      if (variant == 0) x.set(at(1, len - 3), kNaN);
      else x.set(at(1, len / 3), kInf);
      for (int op : {CT_OP_SOFTMAX, CT_OP_LOG_SOFTMAX, CT_OP_CUMSUM}) {
        if (op == CT_OP_CUMSUM && d == DT_F16) continue;  // long f16 running sums leave its range
        run_along(op, x, axis, 0);
      }
      // all -inf lines
      HostTensor y = HostTensor::compact(d, shape);
      for (int64_t i = 0; i < y.numel(); ++i) y.set(i, -kInf);
      run_along(CT_OP_SOFTMAX, y, axis, 0);
      run_along(CT_OP_LOG_SOFTMAX, y, axis, 0);
    }
  }
}

// An output past 8 MiB is written once, with streaming stores from a staged
// line (and a scalar head up to the first aligned address): every row must
// be bit for bit the row computed alone, in cache.
TEST_CASE("along-axis: softmax / log_softmax / softmin into a large (streamed) output equal each row alone", "[reduce]") {
  for (int d : {DT_F32, DT_F64}) {
    const int64_t rows = d == DT_F32 ? 2200 : 1100, cols = 1000;  // 8.8 MB, rows not a whole number of vectors
    HostTensor x = HostTensor::compact(d, {rows, cols});
    Rng rng(11 + (uint64_t)d);
    for (int64_t i = 0; i < x.numel(); ++i) x.set(i, rng.uniform(-30, 30));
    x.set(5 * cols + 7, -kInf);
    const int64_t item = d == DT_F32 ? 4 : 8;
    std::vector<unsigned char> ybuf((size_t)((rows * cols + 1) * item));
    for (int op : {CT_OP_SOFTMAX, CT_OP_LOG_SOFTMAX, CT_OP_SOFTMIN}) {
      for (int64_t off : {int64_t(0), item}) {  // out aligned to a vector, and one element past
        INFO(dtype(d).name << " " << ctref::op_name(op) << " byte_offset " << off);
        int64_t shape[2] = {rows, cols};
        CTensor xv = x.view();
        CTensor yv{ybuf.data(), {CT_CPU, 0}, 2, xv.dtype, shape, nullptr, (uint64_t)off};
        REQUIRE(ct_along_axis(op, &xv, 1, &yv, nullptr) == CT_OK);
        for (int64_t r : {int64_t(0), int64_t(5), rows / 2, rows - 1}) {
          int64_t one[2] = {1, cols};
          CTensor xr = xv, yr = xv;
          xr.shape = yr.shape = one;
          xr.byte_offset = (uint64_t)(r * cols * item);
          std::vector<unsigned char> alone((size_t)(cols * item));
          yr.data = alone.data();
          yr.byte_offset = 0;
          REQUIRE(ct_along_axis(op, &xr, 1, &yr, nullptr) == CT_OK);
          CHECK(std::memcmp(alone.data(), ybuf.data() + off + r * cols * item, (size_t)(cols * item)) == 0);
        }
      }
    }
  }
}

TEST_CASE("along-axis: sort and argsort of long lines, every dtype, in place and into strided outputs", "[reduce]") {
  // Lines longer than any vector block and than 2^15 (their own task); the
  // argsort of 8-byte keys (uint128 pairs), of narrow keys written straight
  // into a contiguous int64 output and through scratch into a strided one;
  // sort of the dtypes vqsort takes, in place and not, and of the gathered
  // ones (bool, 8-bit, half and float8 types). Ties everywhere, NaN, +-0, +-inf.
  for (int op : {CT_OP_SORT, CT_OP_ARGSORT}) {
    for (int d = 0; d < DT_COUNT; ++d) {
      Rng rng((uint64_t)op * 7919 + (uint64_t)d);
      for (const std::vector<int64_t>& shape : {std::vector<int64_t>{3, 40000}, {5000, 3}}) {
        const int axis = shape[0] == 3 ? 1 : 0;
        HostTensor x = make_layout(d, shape, 0);
        fill_along(op, x, rng, false);
        run_along(op, x, axis, 0);
        run_along(op, x, axis, 3);  // a strided output
      }
      if (op == CT_OP_SORT) {  // in place
        HostTensor x = make_layout(d, {2, 9000}, 0);
        fill_along(op, x, rng, false);
        HostTensor x0 = x;
        std::vector<unsigned char> before = x.bytes();
        CTensor xv = x.view();
        INFO("sort in place " << dtype(d).name);
        REQUIRE(ct_along_axis(op, &xv, -1, &xv, nullptr) == CT_OK);
        Mismatch mm;
        check_along(op, x0, -1, x, before, mm);
        INFO(mm.first);
        CHECK(mm.count == 0);
      }
    }
  }
}

TEST_CASE("along-axis: sort and argsort order NaN last, keep -0/0 and ties stable, and handle payloads", "[reduce]") {
  HostTensor x = HostTensor::compact(DT_F32, {10});
  const double v[] = {kNaN, 1.0, -0.0, kInf, 0.0, -kInf, 1.0, -kNaN, -0.0, 2.0};
  for (int i = 0; i < 10; ++i) x.set(i, v[i]);
  HostTensor idx = HostTensor::compact(DT_I64, {10}), srt = HostTensor::compact(DT_F32, {10});
  CTensor xv = x.view(), iv = idx.view(), sv = srt.view();
  REQUIRE(ct_along_axis(CT_OP_ARGSORT, &xv, 0, &iv, nullptr) == CT_OK);
  const int64_t want[] = {5, 2, 4, 8, 1, 6, 9, 3, 0, 7};  // -inf, the zeros in order, 1s in order, 2, inf, NaNs
  for (int i = 0; i < 10; ++i) CHECK(idx.get_i(i) == want[i]);
  REQUIRE(ct_along_axis(CT_OP_SORT, &xv, 0, &sv, nullptr) == CT_OK);
  CHECK(srt.get(0) == -kInf);
  for (int i = 1; i < 4; ++i) CHECK(srt.get(i) == 0.0);
  CHECK(srt.get(4) == 1.0);
  CHECK(srt.get(6) == 2.0);
  CHECK(srt.get(7) == kInf);
  CHECK((std::isnan(srt.get(8)) && std::isnan(srt.get(9))));
  HostTensor u = HostTensor::compact(DT_U64, {4});  // unsigned keys: 2^63 and above sort last
  const int64_t uv[] = {-1, 5, INT64_MIN, 0};
  for (int i = 0; i < 4; ++i) u.set_i(i, uv[i]);
  HostTensor ui = HostTensor::compact(DT_I64, {4});
  CTensor uvv = u.view(), uiv = ui.view();
  REQUIRE(ct_along_axis(CT_OP_ARGSORT, &uvv, 0, &uiv, nullptr) == CT_OK);
  const int64_t uw[] = {3, 1, 2, 0};
  for (int i = 0; i < 4; ++i) CHECK(ui.get_i(i) == uw[i]);
}

TEST_CASE("along-axis: 0-d input, in place, int64 accumulation", "[reduce]") {
  for (int d : {DT_F32, DT_F16, DT_F64}) {
    HostTensor x = HostTensor::compact(d, {});
    x.set(0, 1e4);
    for (int axis : {0, -1}) {
      HostTensor o = HostTensor::compact(d, {});
      CTensor xv = x.view(), ov = o.view();
      REQUIRE(ct_along_axis(CT_OP_SOFTMAX, &xv, axis, &ov, nullptr) == CT_OK);
      CHECK(o.get(0) == 1.0);
      REQUIRE(ct_along_axis(CT_OP_LOG_SOFTMAX, &xv, axis, &ov, nullptr) == CT_OK);
      CHECK(same_double(o.get(0), 0.0));
      REQUIRE(ct_along_axis(CT_OP_CUMSUM, &xv, axis, &ov, nullptr) == CT_OK);
      CHECK(o.get(0) == round_to(1e4, d));
    }
  }
  SECTION("in place: out exactly x") {
    for (int op : {CT_OP_SOFTMAX, CT_OP_LOG_SOFTMAX, CT_OP_CUMSUM, CT_OP_CUMPROD}) {
      for (int d : {DT_F32, DT_F64, DT_BF16}) {
        for (int axis : {0, 1, -1}) {
          INFO(along_op(op).name << " " << dtype(d).name << " axis " << axis);
          Rng rng((uint64_t)op * 13 + (uint64_t)d);
          HostTensor x = make_layout(d, {37, 29}, axis == 1 ? 2 : 0);
          fill_along(op, x, rng, op == CT_OP_SOFTMAX);
          HostTensor x0 = x;
          std::vector<unsigned char> before = x.bytes();
          CTensor xv = x.view();
          CTStatus s = ct_along_axis(op, &xv, axis, &xv, nullptr);
          INFO(ct_last_error());
          REQUIRE(s == CT_OK);
          Mismatch mm;
          check_along(op, x0, axis, x, before, mm);
          INFO(mm.first);
          CHECK(mm.count == 0);
        }
      }
    }
  }
  SECTION("cumsum / cumprod of integers into int64") {
    HostTensor x = HostTensor::compact(DT_I8, {4, 3});
    const int64_t v[] = {127, 127, 127, 127, 127, 127, -128, -128, -128, 2, 3, 4};
    for (int i = 0; i < 12; ++i) x.set_i(i, v[i]);
    HostTensor o = HostTensor::compact(DT_I64, {4, 3});
    CTensor xv = x.view(), ov = o.view();
    REQUIRE(ct_along_axis(CT_OP_CUMSUM, &xv, 1, &ov, nullptr) == CT_OK);
    CHECK(o.get_i(2) == 381);
    CHECK(o.get_i(8) == -384);
    REQUIRE(ct_along_axis(CT_OP_CUMSUM, &xv, 0, &ov, nullptr) == CT_OK);
    CHECK(o.get_i(3) == 254);
    CHECK(o.get_i(9) == 128);
    REQUIRE(ct_along_axis(CT_OP_CUMPROD, &xv, 1, &ov, nullptr) == CT_OK);
    CHECK(o.get_i(2) == 127 * 127 * 127);
    CHECK(o.get_i(8) == -128 * 128 * 128);
    CHECK(o.get_i(11) == 24);
    HostTensor b = HostTensor::compact(DT_BOOL, {5});
    const int64_t bv[] = {1, 0, 1, 1, 0};
    for (int i = 0; i < 5; ++i) b.set_i(i, bv[i]);
    HostTensor ob = HostTensor::compact(DT_I64, {5});
    CTensor bvv = b.view(), obv = ob.view();
    REQUIRE(ct_along_axis(CT_OP_CUMSUM, &bvv, 0, &obv, nullptr) == CT_OK);
    const int64_t ws[] = {1, 1, 2, 3, 3};
    for (int i = 0; i < 5; ++i) CHECK(ob.get_i(i) == ws[i]);
    REQUIRE(ct_along_axis(CT_OP_CUMPROD, &bvv, -1, &obv, nullptr) == CT_OK);
    const int64_t wp[] = {1, 0, 0, 0, 0};
    for (int i = 0; i < 5; ++i) CHECK(ob.get_i(i) == wp[i]);
  }
}

namespace {

void expect_along_fail(int op, HostTensor& x, int axis, HostTensor& out, CTStatus want,
                       std::vector<std::string> subs = {}) {
  out.fill_bytes(0x5A);
  std::vector<unsigned char> before = out.bytes();
  CTensor xv = x.view(), ov = out.view();
  CTStatus s = ct_along_axis(op, &xv, axis, &ov, nullptr);
  std::string msg = last_error();
  INFO("x" << shape_str(x.shape) << " " << dtype(x.d).name << " axis " << axis << " out" << shape_str(out.shape) << " "
           << dtype(out.d).name);
  INFO("status " << s << " (" << ct_status_string(s) << "), want " << ct_status_string(want) << "; message: \""
                 << msg << "\"");
  CHECK(s == want);
  CHECK(msg.rfind("ct_along_axis", 0) == 0);
  for (const std::string& sub : subs) {
    INFO("substring " << sub);
    CHECK(contains(msg, sub));
  }
  CHECK(out.bytes() == before);
}

}  // namespace

TEST_CASE("along-axis errors", "[reduce]") {
  HostTensor x = HostTensor::compact(DT_F32, {3, 4, 5});
  HostTensor o = HostTensor::compact(DT_F32, {3, 4, 5});
  const int inv = CT_ERR_INVALID_ARGUMENT;
  expect_along_fail(CT_OP_SOFTMAX, x, 3, o, inv, {"3"});
  expect_along_fail(CT_OP_SOFTMAX, x, -4, o, inv, {"-4"});
  expect_along_fail(CT_OP_CUMSUM, x, 100, o, inv);
  HostTensor s = HostTensor::compact(DT_F32, {}), so = HostTensor::compact(DT_F32, {});
  expect_along_fail(CT_OP_SOFTMAX, s, 1, so, inv);
  expect_along_fail(CT_OP_SOFTMAX, s, -2, so, inv);
  HostTensor bad = HostTensor::compact(DT_F32, {3, 5, 4});
  expect_along_fail(CT_OP_SOFTMAX, x, 1, bad, CT_ERR_SHAPE_MISMATCH, {"[3,5,4]", "[3,4,5]"});
  HostTensor red = HostTensor::compact(DT_F32, {3, 1, 5});
  expect_along_fail(CT_OP_CUMSUM, x, 1, red, CT_ERR_SHAPE_MISMATCH, {"[3,1,5]"});
  HostTensor xi = HostTensor::compact(DT_I32, {3, 4, 5});
  HostTensor oi = HostTensor::compact(DT_I32, {3, 4, 5}), of64 = HostTensor::compact(DT_F64, {3, 4, 5});
  expect_along_fail(CT_OP_CUMSUM, xi, 0, oi, CT_ERR_DTYPE_MISMATCH);    // int cumsum -> int64
  expect_along_fail(CT_OP_CUMPROD, xi, 0, of64, CT_ERR_DTYPE_MISMATCH);
  expect_along_fail(CT_OP_SOFTMAX, x, 0, of64, CT_ERR_DTYPE_MISMATCH);  // float32 stays float32
  expect_along_fail(CT_OP_SOFTMAX, xi, 0, oi, CT_ERR_UNSUPPORTED, {"softmax", "int32"});
  HostTensor xb = HostTensor::compact(DT_BOOL, {3, 4, 5}), ob = HostTensor::compact(DT_BOOL, {3, 4, 5});
  expect_along_fail(CT_OP_LOG_SOFTMAX, xb, 0, ob, CT_ERR_UNSUPPORTED, {"log_softmax", "bool"});
  expect_along_fail(CT_OP_SUM, x, 0, o, inv, {"sum"});
  expect_along_fail(CT_OP_ADD, x, 0, o, inv, {"add"});
  expect_along_fail(CT_OP_EXP, x, 0, o, inv, {"exp"});
  expect_along_fail(9999, x, 0, o, CT_ERR_NOT_FOUND, {"9999"});
  // partial overlap with x, and out overlapping itself
  HostTensor buf = HostTensor::compact(DT_F32, {16});
  buf.fill_bytes(0x3F);
  std::vector<unsigned char> before = buf.bytes();
  int64_t sh[1] = {8}, st0[1] = {0};
  const CTDataType f32 = {CT_FLOAT, 32, 1};
  CTensor xv = {buf.buf(), {CT_CPU, 0}, 1, f32, sh, nullptr, 0};
  CTensor ov = {buf.buf(), {CT_CPU, 0}, 1, f32, sh, nullptr, 4};
  CHECK(ct_along_axis(CT_OP_CUMSUM, &xv, 0, &ov, nullptr) == inv);
  CHECK(ct_along_axis(CT_OP_SOFTMAX, &ov, 0, &xv, nullptr) == inv);
  int64_t st_rev[1] = {-1};
  CTensor rv = {buf.buf(), {CT_CPU, 0}, 1, f32, sh, st_rev, 28};  // x reversed: same bytes, other strides
  CHECK(ct_along_axis(CT_OP_CUMSUM, &xv, 0, &rv, nullptr) == inv);
  HostTensor y = HostTensor::compact(DT_F32, {8});
  CTensor yv = y.view();
  CTensor o0 = {buf.buf(), {CT_CPU, 0}, 1, f32, sh, st0, 0};
  CHECK(ct_along_axis(CT_OP_CUMSUM, &yv, 0, &o0, nullptr) == inv);
  CHECK(buf.bytes() == before);
}

TEST_CASE("reduce / along-axis errors: devices, dtypes outside the ten, malformed tensors", "[reduce]") {
  HostTensor x = HostTensor::compact(DT_F32, {2, 3});
  HostTensor o = HostTensor::compact(DT_F32, {2}), oa = HostTensor::compact(DT_F32, {2, 3});
  o.fill_bytes(0x5A);
  oa.fill_bytes(0x5A);
  std::vector<unsigned char> before = o.bytes(), before_a = oa.bytes();
  CTensor xv = x.view(), ov = o.view(), oav = oa.view();
  int32_t ax = 1;
  auto fails = [&](CTStatus got, CTStatus want, const char* fn) {
    std::string msg = last_error();
    INFO("status " << ct_status_string(got) << " want " << ct_status_string(want) << ": " << msg);
    CHECK(got == want);
    CHECK(msg.rfind(fn, 0) == 0);
  };
  {
    CTensor y = ov, ya = oav;
    y.device = ya.device = {CT_CUDA, 0};
    fails(ct_reduce(CT_OP_SUM, &xv, &ax, 1, 0, nullptr, 0, &y, nullptr), CT_ERR_DEVICE_MISMATCH, "ct_reduce");
    fails(ct_along_axis(CT_OP_CUMSUM, &xv, 1, &ya, nullptr), CT_ERR_DEVICE_MISMATCH, "ct_along_axis");
    CTensor x2 = xv, y2 = ov, ya2 = oav;
    x2.device = y2.device = ya2.device = {CT_VPI, 0};
    fails(ct_reduce(CT_OP_SUM, &x2, &ax, 1, 0, nullptr, 0, &y2, nullptr), CT_ERR_UNSUPPORTED, "ct_reduce");
    fails(ct_along_axis(CT_OP_CUMSUM, &x2, 1, &ya2, nullptr), CT_ERR_UNSUPPORTED, "ct_along_axis");
  }
  {
    CTensor x2 = xv, y2 = ov, ya2 = oav;
    x2.dtype = y2.dtype = ya2.dtype = {CT_FLOAT, 32, 4};
    fails(ct_reduce(CT_OP_MAX, &x2, &ax, 1, 0, nullptr, 0, &y2, nullptr), CT_ERR_UNSUPPORTED, "ct_reduce");
    fails(ct_along_axis(CT_OP_SOFTMAX, &x2, 1, &ya2, nullptr), CT_ERR_UNSUPPORTED, "ct_along_axis");
  }
  {
    int64_t neg[2] = {2, -3};
    CTensor x2 = xv;
    x2.shape = neg;
    fails(ct_reduce(CT_OP_SUM, &x2, &ax, 1, 0, nullptr, 0, &ov, nullptr), CT_ERR_INVALID_ARGUMENT, "ct_reduce");
    fails(ct_along_axis(CT_OP_CUMSUM, &x2, 1, &oav, nullptr), CT_ERR_INVALID_ARGUMENT, "ct_along_axis");
    CTensor x3 = xv;
    x3.data = nullptr;
    x3.byte_offset = 0;
    fails(ct_reduce(CT_OP_SUM, &x3, &ax, 1, 0, nullptr, 0, &ov, nullptr), CT_ERR_INVALID_ARGUMENT, "ct_reduce");
    fails(ct_along_axis(CT_OP_SOFTMAX, &x3, 1, &oav, nullptr), CT_ERR_INVALID_ARGUMENT, "ct_along_axis");
    fails(ct_along_axis(CT_OP_SOFTMAX, nullptr, 1, &oav, nullptr), CT_ERR_INVALID_ARGUMENT, "ct_along_axis");
    fails(ct_along_axis(CT_OP_SOFTMAX, &xv, 1, nullptr, nullptr), CT_ERR_INVALID_ARGUMENT, "ct_along_axis");
  }
  CHECK(o.bytes() == before);
  CHECK(oa.bytes() == before_a);
}
