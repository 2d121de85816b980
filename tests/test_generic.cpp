// test_generic.cpp — the generic elementwise suite (STYLE habit 11): it walks
// the op REGISTRY (ct_op_count / ct_op_info) x the thirteen dtypes, asks
// ct_op_supported, generates inputs in each op's domain (plus special values),
// runs the op on several sizes and layouts, and compares with its reference
// in tests/reference (plain double precision, libm only, nothing from
// ctensor; looked up by op id) under a per-dtype tolerance. It also checks that the registry rejects
// exactly the dtypes notes/SEMANTICS.md excludes, and all 100 casts.
// Category 2 ops (binary, reduce, along-axis) take part in the registry and
// ct_op_supported checks here; their values are checked in test_binary.cpp
// and test_reduce.cpp, and on every other device against the CPU here.
//
// Every registered device takes part (the CPU, and any backend or plugin:
// the test runner registers the loopback test device, tests/backends): its
// operands are byte-for-byte copies of the host tensors made with ct_copy,
// results come back the same way, and an op x dtype pair that the op's rule
// defines but the device's ct_op_supported refuses is skipped, counted and
// reported (WARN) per device; on the CPU there must be none.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <set>
#include <string>
#include <vector>

#include "test_ref.h"
#include "test_util.h"

using namespace ctt;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// dtype masks
const unsigned B = 1u << DT_BOOL;
const unsigned I = (1u << DT_I8) | (1u << DT_I16) | (1u << DT_I32) | (1u << DT_I64) | (1u << DT_U8) | (1u << DT_U16) |
                   (1u << DT_U32) | (1u << DT_U64);
const unsigned F = (1u << DT_F16) | (1u << DT_BF16) | (1u << DT_F32) | (1u << DT_F64) | (1u << DT_F8E4M3FN) |
                   (1u << DT_F8E5M2) | (1u << DT_F8E4M3FNUZ) | (1u << DT_F8E5M2FNUZ);
const unsigned ALL = B | I | F;

enum Tol {
  EXACT,   // bit-exact (NaN matches any NaN; the sign of zero counts)
  APPROX,  // |got-exp| <= rtol * max(|exp|, 1): few roundings of O(1) values
  TRANS    // |got-exp| <= rtol * |exp| + atol: libm-like functions
};

// What this suite needs to know of each op besides its reference (which is
// tests/reference's, looked up by op id): the dtypes SEMANTICS.md defines it
// for, the tolerance class and the input domain. The ops listed in kRefs
// have them written down here (an independent statement of SEMANTICS.md);
// an op added to the header later takes default facts from its row
// (facts_of): still checked over every dtype and layout against its
// reference, never skipped.
struct OpRef {
  const char* name;
  unsigned mask;  // dtypes SEMANTICS.md defines the op for (of the data inputs)
  Tol tol;
  double lo, hi;  // float input domain
  bool no_inf;    // leave +-inf out of the special values
};

const OpRef kRefs[] = {
    {"neg", I | F, EXACT, -5, 5, false},
    {"abs", B | I | F, EXACT, -5, 5, false},
    {"sign", I | F, EXACT, -5, 5, false},
    {"exp", F, TRANS, -10, 10, false},
    {"expm1", F, TRANS, -10, 10, false},
    {"exp2", F, TRANS, -14, 14, false},
    {"log", F, TRANS, 1e-3, 100, false},
    {"log1p", F, TRANS, -0.999, 10, false},
    {"log2", F, TRANS, 1e-3, 100, false},
    {"sqrt", F, EXACT, 0, 100, false},
    {"rsqrt", F, TRANS, 1e-3, 100, false},
    {"reciprocal", I | F, EXACT, -10, 10, false},
    {"square", I | F, EXACT, -5, 5, false},
    {"sin", F, TRANS, -5, 5, false},
    {"cos", F, TRANS, -5, 5, false},
    {"tan", F, TRANS, -1.3, 1.3, false},
    {"tanh", F, TRANS, -6, 6, false},
    {"sigmoid", F, TRANS, -8, 8, false},
    {"relu", I | F, EXACT, -5, 5, false},
    {"gelu", F, TRANS, -6, 6, true},
    {"gelu_tanh", F, TRANS, -6, 6, true},
    {"silu", F, TRANS, -8, 8, true},
    {"softplus", F, TRANS, -20, 20, false},
    {"erf", F, TRANS, -4, 4, false},
    {"floor", I | F, EXACT, -5, 5, false},
    {"ceil", I | F, EXACT, -5, 5, false},
    {"round", I | F, EXACT, -5, 5, false},
    {"trunc", I | F, EXACT, -5, 5, false},
    {"logical_not", B | I | F, EXACT, -2, 2, false},
    {"bitwise_not", B | I, EXACT, 0, 0, false},
    {"isnan", B | I | F, EXACT, -5, 5, false},
    {"isinf", B | I | F, EXACT, -5, 5, false},
    {"isfinite", B | I | F, EXACT, -5, 5, false},
    {"log10", F, TRANS, 1e-3, 100, false},
    {"sinh", F, TRANS, -10, 10, false},
    {"cosh", F, TRANS, -10, 10, false},
    {"asin", F, TRANS, -1, 1, false},
    {"acos", F, TRANS, -1, 1, false},
    {"atan", F, TRANS, -20, 20, false},
    {"asinh", F, TRANS, -20, 20, false},
    {"acosh", F, TRANS, 1, 20, false},
    {"atanh", F, TRANS, -0.999, 0.999, false},
    {"erfc", F, TRANS, -4, 10, false},
    {"logit", F, TRANS, 1e-3, 0.999, false},
    {"lgamma", F, TRANS, -4.5, 12, false},
    {"digamma", F, TRANS, -4.5, 12, false},
    {"erfinv", F, TRANS, -0.999, 0.999, false},
    {"frac", F, EXACT, -5, 5, false},
    {"hardsigmoid", F, APPROX, -5, 5, false},
    {"mish", F, TRANS, -8, 8, true},
    {"selu", F, TRANS, -8, 8, false},
    {"softsign", F, APPROX, -5, 5, false},
    {"logsigmoid", F, TRANS, -20, 20, false},
    {"signbit", B | I | F, EXACT, -5, 5, false},
    {"leaky_relu", F, APPROX, -5, 5, false},
    {"elu", F, TRANS, -5, 5, false},
    {"celu", F, TRANS, -5, 5, false},
    {"hardshrink", F, EXACT, -5, 5, false},
    {"softshrink", F, APPROX, -5, 5, false},
    {"threshold", F, EXACT, -5, 5, false},
    {"hardtanh", F, EXACT, -5, 5, false},
    {"relu6", I | F, EXACT, -9, 9, false},
    {"tanhshrink", F, TRANS, -5, 5, false},
    {"isposinf", B | I | F, EXACT, -5, 5, false},
    {"isneginf", B | I | F, EXACT, -5, 5, false},
    {"deg2rad", F, APPROX, -400, 400, false},
    {"rad2deg", F, APPROX, -7, 7, false},
    {"sinc", F, TRANS, -5, 5, false},
    {"ndtr", F, TRANS, -8, 8, false},
    {"ndtri", F, TRANS, 1e-4, 0.9999, false},
    {"entr", F, TRANS, 0, 10, false},
    {"clamp", I | F, EXACT, -5, 5, false},
    {"pow_scalar", F, TRANS, -5, 5, false},
    {"add_scalar", I | F, EXACT, -5, 5, false},
    {"mul_scalar", I | F, EXACT, -5, 5, false},
    {"where", ALL, EXACT, -5, 5, false},
    {"fma", I | F, APPROX, -5, 5, false},
    {"lerp", F, APPROX, -5, 5, true},
    {"round_decimals", F, APPROX, -50, 50, false},
    {"positive", I | F, EXACT, -5, 5, false},
    {"softplus_beta", F, TRANS, -20, 20, false},
    {"spherical_bessel_j0", F, TRANS, -20, 20, false},
    {"erfcx", F, TRANS, -9, 30, false},
    {"log_ndtr", F, TRANS, -30, 10, false},
    {"bessel_j0", F, TRANS, -30, 30, false},
    {"bessel_j1", F, TRANS, -30, 30, false},
    {"bessel_y0", F, TRANS, 0.01, 40, false},
    {"bessel_y1", F, TRANS, 0.01, 40, false},
    {"modified_bessel_i0", F, TRANS, -30, 30, false},
    {"modified_bessel_i1", F, TRANS, -30, 30, false},
    {"i0e", F, TRANS, -60, 60, false},
    {"i1e", F, TRANS, -60, 60, false},
    {"modified_bessel_k0", F, TRANS, 0.01, 30, false},
    {"modified_bessel_k1", F, TRANS, 0.01, 30, false},
    {"scaled_modified_bessel_k0", F, TRANS, 0.01, 60, false},
    {"scaled_modified_bessel_k1", F, TRANS, 0.01, 60, false},
    {"polygamma", F, TRANS, 0.1, 12, false},
    {"mvlgamma", F, TRANS, 1.5, 12, false},
    {"addcmul", I | F, APPROX, -5, 5, false},
    {"addcdiv", F, APPROX, -5, 5, false},
    {"clamp_tensor", I | F, EXACT, -5, 5, false},
    {"cast", ALL, EXACT, 0, 0, false},  // handled by its own test case
    // Category 2 (broadcast / reduce, issue 3): only the dtype masks of
    // SEMANTICS.md are used here; the values are checked in test_binary.cpp
    // and test_reduce.cpp.
    {"add", ALL, EXACT, 0, 0, false},
    {"sub", I | F, EXACT, 0, 0, false},
    {"mul", ALL, EXACT, 0, 0, false},
    {"div", ALL, EXACT, 0, 0, false},
    {"floor_div", I | F, EXACT, 0, 0, false},
    {"mod", I | F, EXACT, 0, 0, false},
    {"pow", I | F, EXACT, 0, 0, false},
    {"maximum", ALL, EXACT, 0, 0, false},
    {"minimum", ALL, EXACT, 0, 0, false},
    {"fmax", ALL, EXACT, 0, 0, false},
    {"fmin", ALL, EXACT, 0, 0, false},
    {"atan2", F, EXACT, 0, 0, false},
    {"hypot", F, EXACT, 0, 0, false},
    {"copysign", F, EXACT, 0, 0, false},
    {"bitwise_and", B | I, EXACT, 0, 0, false},
    {"bitwise_or", B | I, EXACT, 0, 0, false},
    {"bitwise_xor", B | I, EXACT, 0, 0, false},
    {"left_shift", I, EXACT, 0, 0, false},
    {"right_shift", I, EXACT, 0, 0, false},
    {"logical_and", ALL, EXACT, 0, 0, false},
    {"logical_or", ALL, EXACT, 0, 0, false},
    {"logical_xor", ALL, EXACT, 0, 0, false},
    {"equal", ALL, EXACT, 0, 0, false},
    {"not_equal", ALL, EXACT, 0, 0, false},
    {"less", ALL, EXACT, 0, 0, false},
    {"less_equal", ALL, EXACT, 0, 0, false},
    {"greater", ALL, EXACT, 0, 0, false},
    {"greater_equal", ALL, EXACT, 0, 0, false},
    {"sum", ALL, EXACT, 0, 0, false},
    {"mean", ALL, EXACT, 0, 0, false},
    {"prod", ALL, EXACT, 0, 0, false},
    {"max", ALL, EXACT, 0, 0, false},
    {"min", ALL, EXACT, 0, 0, false},
    {"argmax", ALL, EXACT, 0, 0, false},
    {"argmin", ALL, EXACT, 0, 0, false},
    {"any", ALL, EXACT, 0, 0, false},
    {"all", ALL, EXACT, 0, 0, false},
    {"norm2", I | F, EXACT, 0, 0, false},
    {"logsumexp", F, EXACT, 0, 0, false},
    {"var", I | F, EXACT, 0, 0, false},
    {"std", I | F, EXACT, 0, 0, false},
    {"softmax", F, EXACT, 0, 0, false},
    {"log_softmax", F, EXACT, 0, 0, false},
    {"cumsum", ALL, EXACT, 0, 0, false},
    {"cumprod", ALL, EXACT, 0, 0, false},
    {"xlog1py", F, EXACT, 0, 0, false},
    {"chebyshev_polynomial_t", F, EXACT, 0, 0, false},
    {"chebyshev_polynomial_u", F, EXACT, 0, 0, false},
    {"chebyshev_polynomial_v", F, EXACT, 0, 0, false},
    {"chebyshev_polynomial_w", F, EXACT, 0, 0, false},
    {"shifted_chebyshev_polynomial_t", F, EXACT, 0, 0, false},
    {"shifted_chebyshev_polynomial_u", F, EXACT, 0, 0, false},
    {"shifted_chebyshev_polynomial_v", F, EXACT, 0, 0, false},
    {"shifted_chebyshev_polynomial_w", F, EXACT, 0, 0, false},
    {"hermite_polynomial_h", F, EXACT, 0, 0, false},
    {"hermite_polynomial_he", F, EXACT, 0, 0, false},
    {"laguerre_polynomial_l", F, EXACT, 0, 0, false},
    {"legendre_polynomial_p", F, EXACT, 0, 0, false},
    {"zeta", F, EXACT, 0, 0, false},
    {"igamma", F, EXACT, 0, 0, false},
    {"igammac", F, EXACT, 0, 0, false},
    {"nansum", ALL, EXACT, 0, 0, false},
    {"nanmean", ALL, EXACT, 0, 0, false},
    {"count_nonzero", ALL, EXACT, 0, 0, false},
    {"logcumsumexp", F, EXACT, 0, 0, false},
    {"softmin", F, EXACT, 0, 0, false},
    {"sort", ALL, EXACT, 0, 0, false},
    {"argsort", ALL, EXACT, 0, 0, false},
    {"median", I | F, EXACT, 0, 0, false},
    {"nanmedian", I | F, EXACT, 0, 0, false},
    {"quantile", I | F, EXACT, 0, 0, false},
    {"nanquantile", I | F, EXACT, 0, 0, false},
    {"kthvalue", I | F, EXACT, 0, 0, false},
    {"mode", I | F, EXACT, 0, 0, false},
    {"cummax", ALL, EXACT, 0, 0, false},
    {"cummin", ALL, EXACT, 0, 0, false},
};

// Kinds of category 2 (their own test files check the values).
bool is_category2_kind(int kind) {
  return kind == CT_KIND_BINARY || kind == CT_KIND_REDUCE || kind == CT_KIND_ALONG_AXIS;
}

// CTOpInfo.output_dtype per notes/SEMANTICS.md.
int expected_output(const std::string& n) {
  static const char* const kBool[] = {"isnan", "isinf", "isfinite", "logical_not", "logical_and", "logical_or",
                                      "logical_xor", "equal", "not_equal", "less", "less_equal", "greater",
                                      "greater_equal", "any", "all", "signbit", "isposinf", "isneginf"};
  static const char* const kAccum[] = {"sum", "prod", "cumsum", "cumprod", "nansum"};
  static const char* const kFloat[] = {"div", "mean", "norm2", "var", "std", "nanmean", "quantile", "nanquantile"};
  static const char* const kInt64[] = {"argmax", "argmin", "count_nonzero", "argsort"};
  if (n == "cast") return CT_OUTPUT_ANY;
  for (const char* b : kBool)
    if (n == b) return CT_OUTPUT_BOOL;
  for (const char* b : kAccum)
    if (n == b) return CT_OUTPUT_ACCUM;
  for (const char* b : kFloat)
    if (n == b) return CT_OUTPUT_FLOAT;
  for (const char* b : kInt64)
    if (n == b) return CT_OUTPUT_INT64;
  return CT_OUTPUT_SAME;
}

const OpRef* find_ref(const std::string& name) {
  for (const OpRef& r : kRefs)
    if (name == r.name) return &r;
  return nullptr;
}

// The facts of op `info`: kRefs' entry, or defaults from the op's row: the
// row's dtype rule, the libm-like tolerance class for float dtypes (exact
// for integer and bool ones), the generic float domain [-5, 5] with every
// special value (+-inf and NaN included).
OpRef facts_of(const CTOpInfo& info) {
  if (const OpRef* r = find_ref(info.name)) return *r;
  return OpRef{info.name, info.dtype_mask, TRANS, -5, 5, false};
}

// Columns of the header's rows (CT_OP_TABLE) the narrow lists lack.
struct HeaderRow {
  int id;
  int output;
  const char* param_names;
};
const HeaderRow* header_row(int op) {
  static const HeaderRow rows[] = {
#define CTT_ROW_(ID, id, nm, kd, np, pn, tn, dts, out, inpl, shp, dsc, sm) {id, out, pn},
      CT_OP_TABLE(CTT_ROW_)
#undef CTT_ROW_
  };
  for (const HeaderRow& r : rows)
    if (r.id == op) return &r;
  return nullptr;
}

bool is_predicate(const std::string& n) {
  return n == "isnan" || n == "isinf" || n == "isfinite" || n == "logical_not" || n == "signbit" || n == "isposinf" ||
         n == "isneginf";
}

// Parameter sets to run, per op and dtype (integral and representable for
// ints); an op not named here gets 0.5, 1.5, ... (ints: 1, 2, ...).
std::vector<std::vector<double>> params_for(const std::string& n, int d, int num_params) {
  bool isint = dtype(d).is_int();
  bool u = dtype(d).is_uint();
  // unsigned: the largest integral double <= the dtype's max (2^64 - 2048 for
  // uint64), a parameter at the top of the range
  const double top = d == DT_U64 ? 18446744073709549568.0 : (double)int_max(d);
  if (n == "leaky_relu") return {{0.1}};
  if (n == "elu") return {{0.5}};
  if (n == "celu") return {{0.5}, {2.0}};
  if (n == "hardshrink" || n == "softshrink") return {{0.5}, {1.25}};
  if (n == "threshold") return {{0.5, -2.0}, {-1.0, 3.0}};
  if (n == "clamp") return isint ? (u ? std::vector<std::vector<double>>{{3, 200}, {2, top}, {top, top}}
                                      : std::vector<std::vector<double>>{{-100, 100}, {-1, 2}})
                                 : std::vector<std::vector<double>>{{-1, 2}};
  if (n == "pow_scalar") return {{2.5}, {3.0}};
  // {} runs ct_ternary: the row's default (value=1)
  if (n == "addcmul") return isint ? std::vector<std::vector<double>>{{}, {u ? 3.0 : -3.0}}
                                   : std::vector<std::vector<double>>{{}, {-0.75}};
  if (n == "addcdiv") return {{}, {0.5}};
  if (n == "round_decimals") return {{0}, {2}, {-1}};
  if (n == "polygamma") return {{0}, {1}, {3}};
  if (n == "mvlgamma") return {{1}, {3}};
  if (n == "softplus_beta") return {{1, 20}, {2.5, 10}, {0.5, 3}};
  if (n == "add_scalar") return isint ? (u ? std::vector<std::vector<double>>{{3}, {top}}
                                           : std::vector<std::vector<double>>{{3}, {-7}})
                                      : std::vector<std::vector<double>>{{1.5}};
  if (n == "mul_scalar") return isint ? (u ? std::vector<std::vector<double>>{{3}, {top}}
                                           : std::vector<std::vector<double>>{{-3}})
                                      : std::vector<std::vector<double>>{{-2.5}};
  std::vector<double> p;
  for (int k = 0; k < num_params; ++k) p.push_back(isint ? k + 1.0 : k + 0.5);
  return {p};
}

// float8: one ulp of the format (computed in float32, the result may round
// to the neighbour of the correctly rounded value): 2^-3 (e4m3) or 2^-2
// (e5m2) relative, and the smallest subnormal near 0.
double rtol_of(int d) {
  switch (d) {
    case DT_F16: return 1e-3;
    case DT_BF16: return 1e-2;
    case DT_F32: return 1e-5;
    case DT_F8E4M3FN: case DT_F8E4M3FNUZ: return 0.126;
    case DT_F8E5M2: case DT_F8E5M2FNUZ: return 0.251;
    default: return 1e-12;
  }
}
double atol_of(int d) {
  switch (d) {
    case DT_F16: return 1e-5;
    case DT_BF16: return 1e-5;
    case DT_F32: return 1e-6;
    case DT_F8E4M3FN: case DT_F8E4M3FNUZ: return std::ldexp(1.0, -9);
    case DT_F8E5M2: case DT_F8E5M2FNUZ: return std::ldexp(1.0, -16);
    default: return 1e-13;
  }
}


// ---------------------------------------------------------------------------
// Layouts
// ---------------------------------------------------------------------------

// 0: compact, strides NULL   1: column-major (transposed)
// 2: negative outer stride, step 2 in the last dim, offset in byte_offset
// 3: padded rows (non-contiguous, usable as an output), sentinel padding
// 4: zero stride in dim 0 (broadcast input)
HostTensor elementwise_layout(int d, const std::vector<int64_t>& shape, int variant) {
  size_t nd = shape.size();
  std::vector<int64_t> st(nd, 0);
  switch (variant) {
    case 0: return HostTensor::compact(d, shape, true);
    case 1: {
      int64_t s = 1;
      for (size_t i = 0; i < nd; ++i) { st[i] = s; s *= shape[i]; }
      return HostTensor::strided(d, shape, st, 0);
    }
    case 2: {
      int64_t s = 2;
      for (size_t i = nd; i-- > 0;) { st[i] = s; s *= shape[i] + (i + 1 == nd ? 1 : 0); }
      if (nd >= 1) st[0] = -st[0];
      return HostTensor::strided(d, shape, st, 2);
    }
    case 3: {
      int64_t s = 1;
      for (size_t i = nd; i-- > 0;) { st[i] = s; s *= shape[i] + (i + 1 == nd ? 3 : 0); }
      return HostTensor::strided(d, shape, st, 5);
    }
    case 4: {
      int64_t s = 1;
      for (size_t i = nd; i-- > 0;) { st[i] = s; s *= shape[i]; }
      if (nd >= 2) st[0] = 0;
      return HostTensor::strided(d, shape, st, 1);
    }
  }
  return HostTensor::compact(d, shape, true);
}

// ---------------------------------------------------------------------------
// Input generation
// ---------------------------------------------------------------------------

std::vector<double> float_specials(bool no_inf) {
  std::vector<double> s = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1e-3, 3.0, kNaN};
  if (!no_inf) { s.push_back(kInf); s.push_back(-kInf); }
  return s;
}

void fill_float(HostTensor& t, Rng& rng, double lo, double hi, const std::vector<double>& specials) {
  int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) t.set(i, rng.uniform(lo, hi));
  if (n >= 16) {
    size_t ns = std::min<size_t>(specials.size(), (size_t)n / 2);
    for (size_t k = 0; k < ns; ++k) t.set((int64_t)(k * (size_t)n / ns), specials[k]);
  } else if (n > 0) {
    // small sizes: one special, rotated by size
    t.set(0, specials[(size_t)n % specials.size()]);
  }
}

void fill_int(HostTensor& t, Rng& rng) {
  int64_t n = t.numel();
  int d = t.d;
  int64_t lo = int_min(d), hi = int_max(d);
  for (int64_t i = 0; i < n; ++i) t.set_i(i, rng.int_in(lo, hi));
  if (d == DT_BOOL) return;
  const int64_t edges[] = {0, 1, -1, 2, -2, lo, hi, lo + 1, hi - 1};
  if (n >= 32)
    for (size_t k = 0; k < sizeof edges / sizeof edges[0]; ++k) {
      int64_t v = edges[k];
      if (v < lo || v > hi) continue;
      t.set_i((int64_t)(k * 3 + 1), v);
    }
  else if (n > 0)
    t.set_i(0, edges[(size_t)n % 9] < lo ? 0 : edges[(size_t)n % 9]);
}

// ---------------------------------------------------------------------------
// Running one op on one set of operands, and checking it
// ---------------------------------------------------------------------------

// Runs op on views of its operands (any device).
CTStatus run_views(int op, int kind, std::vector<CTensor>& v, CTensor& o, const std::vector<double>& params,
                   void* stream) {
  switch (kind) {
    case CT_KIND_UNARY: return ct_unary(op, &v[0], &o, stream);
    case CT_KIND_UNARY_PARAM:
      return ct_unary_param(op, &v[0], params.empty() ? nullptr : params.data(), (int32_t)params.size(), &o,
                            stream);
    case CT_KIND_TERNARY:
      if (params.empty()) return ct_ternary(op, &v[0], &v[1], &v[2], &o, stream);  // the row's defaults
      return ct_ternary_param(op, &v[0], &v[1], &v[2], params.data(), (int32_t)params.size(), &o, stream);
    case CT_KIND_CAST: return ct_cast(&v[0], &o, stream);
    case CT_KIND_BINARY: return ct_binary(op, &v[0], &v[1], &o, stream);
    case CT_KIND_REDUCE:  // over every axis
      return ct_reduce(op, &v[0], nullptr, 0, 0, params.empty() ? nullptr : params.data(), (int32_t)params.size(),
                       &o, stream);
    case CT_KIND_ALONG_AXIS: return ct_along_axis(op, &v[0], -1, &o, stream);
    case CT_KIND_INDEX:  // take, gather: (x, index); the scatters: (x, index, src); along the last axis
      return ct_index(op, &v[0], -1, &v[1], v.size() > 2 ? &v[2] : nullptr, params.empty() ? nullptr : params.data(),
                      (int32_t)params.size(), &o, stream);
  }
  return CT_ERR_INTERNAL;
}

// Mirrors of a set of host tensors on one device (the tensors themselves on the CPU).
struct Staged {
  std::vector<std::unique_ptr<DeviceMirror>> m;
  Staged(CTDevice dev, std::vector<HostTensor*> ts) {
    for (HostTensor* t : ts) m.emplace_back(new DeviceMirror(dev, *t));
  }
  bool ok() const {
    for (const auto& x : m)
      if (x->status() != CT_OK) return false;
    return true;
  }
};

// Runs op on `dev` with copies of ins and out there; out (padding included)
// comes back into the host tensor.
CTStatus run_op(const CTDevice& dev, int op, int kind, std::vector<HostTensor>& ins, HostTensor& out,
                const std::vector<double>& params, void* stream, std::string* message) {
  std::vector<HostTensor*> all;
  for (HostTensor& t : ins) all.push_back(&t);
  all.push_back(&out);
  Staged st(dev, all);
  INFO("staging on the device: " << ct_last_error());
  REQUIRE(st.ok());
  std::vector<CTensor> v;
  for (size_t i = 0; i < ins.size(); ++i) v.push_back(st.m[i]->view(i % 2 == 0));
  CTensor o = st.m.back()->view(true);
  const CTStatus s = run_views(op, kind, v, o, params, stream);
  *message = ct_last_error();  // before the copy back clears it
  REQUIRE(st.m.back()->fetch() == CT_OK);
  return s;
}

struct Mismatch {
  int64_t count = 0;
  std::string first;
  void add(const std::string& s) {
    if (count++ < 3) first += s + "\n";
  }
};

bool close_enough(double got, double exp, int d, Tol tol) {
  if (tol == EXACT) return same_double(got, exp);
  if (std::isnan(exp) || std::isnan(got)) return std::isnan(exp) && std::isnan(got);
  if (std::isinf(exp) || std::isinf(got)) return got == exp;
  double err = std::fabs(got - exp);
  if (tol == APPROX) return err <= rtol_of(d) * std::max(std::fabs(exp), 1.0);
  return err <= rtol_of(d) * std::fabs(exp) + atol_of(d);
}

// Check out against the reference (tests/reference, run on the inputs'
// values) for every element; also that out's padding bytes (not part of any
// element) kept the sentinel.
void check_result(int op, const OpRef& ref, int d, int dout, std::vector<HostTensor>& ins, const HostTensor& out,
                  const std::vector<double>& params, const std::vector<unsigned char>& before, Mismatch& mm) {
  const std::string opname = ref.name;
  ctref::Call call = ref_call(op);
  call.params = params;
  if (params.empty()) {  // ct_ternary ran with the row's defaults ("value=1")
    CTOpInfo info{};
    info.struct_size = sizeof info;
    REQUIRE(ct_op_info(op, &info) == CT_OK);
    for (const char* q = info.param_names; q && *q;) {
      const char* eq = std::strchr(q, '=');
      if (!eq) break;
      call.params.push_back(std::strtod(eq + 1, nullptr));
      q = std::strchr(eq, ',');
      if (q) ++q;
      else break;
    }
  }
  std::vector<const HostTensor*> in_ptrs;
  for (const HostTensor& t : ins) in_ptrs.push_back(&t);
  const ctref::Array want = reference(call, in_ptrs, {{dout, out.shape}})[0];
  int64_t n = out.numel();
  bool float_path = dtype(d).is_float();
  for (int64_t i = 0; i < n; ++i) {
    bool ok;
    std::string got_s, exp_s;
    if (dtype(dout).is_float()) {
      const double e = round_to(want.f[(size_t)i], dout), g = out.get(i);
      ok = close_enough(g, e, dout, ref.tol);
      got_s = fmt(g);
      exp_s = fmt(e);
    } else {  // integers wrapped to dout, bool 0 / 1
      const int64_t e = want.i[(size_t)i], g = out.get_i(i);
      ok = g == e;
      got_s = std::to_string(g);
      exp_s = std::to_string(e);
    }
    if (!ok) {
      std::ostringstream s;
      s << opname << " " << dtype(d).name << " index " << i << " input (";
      for (size_t k = 0; k < ins.size(); ++k)
        s << (k ? ", " : "") << (float_path ? fmt(ins[k].get(i)) : std::to_string(ins[k].get_i(i)));
      s << ") got " << got_s << " expected " << exp_s;
      mm.add(s.str());
    }
  }
  // padding untouched
  std::vector<char> cov = covered(out);
  std::vector<unsigned char> after = out.bytes();
  for (size_t b = 0; b < after.size(); ++b)
    if (!cov[b] && after[b] != before[b]) {
      mm.add(opname + " " + dtype(d).name + ": wrote outside the output's elements at byte " + std::to_string(b));
      break;
    }
}

struct RunSpec {
  std::vector<int64_t> shape;
  std::vector<int> in_variants;  // one per input
  int out_variant;
};

void fill_inputs(const std::string& name, const OpRef& ref, std::vector<HostTensor>& ins, Rng& rng) {
  for (size_t k = 0; k < ins.size(); ++k) {
    HostTensor& t = ins[k];
    if (name == "where" && k == 0) {  // cond
      fill_int(t, rng);
      continue;
    }
    if (dtype(t.d).is_float()) {
      double lo = ref.lo, hi = ref.hi;
      std::vector<double> sp = float_specials(ref.no_inf);
      if (name == "lerp" && k == 2) {
        lo = -0.25;
        hi = 1.25;
        sp = {0.0, 1.0, 0.5, 0.25, 0.75};
      }
      if (name == "reciprocal") {  // keep away from 0 except the specials
        fill_float(t, rng, 0.1, 10, sp);
        for (int64_t i = 0; i < t.numel(); ++i)
          if ((i % 2) && !std::isnan(t.get(i)) && t.get(i) > 0.09) t.set(i, -t.get(i));
        continue;
      }
      fill_float(t, rng, lo, hi, sp);
    } else {
      fill_int(t, rng);
    }
  }
}

void run_case(const TestDevice& dev, int op, const CTOpInfo& info, const OpRef& ref, int d, const RunSpec& rs,
              const std::vector<double>& params, Rng& rng, void* stream = nullptr) {
  std::string name = info.name;
  int dout = info.output_dtype == CT_OUTPUT_BOOL ? DT_BOOL : d;
  std::vector<HostTensor> ins;
  for (size_t k = 0; k < rs.in_variants.size(); ++k) {
    int dk = (name == "where" && k == 0) ? DT_BOOL : d;
    ins.push_back(elementwise_layout(dk, rs.shape, rs.in_variants[k]));
  }
  fill_inputs(name, ref, ins, rng);
  HostTensor out = elementwise_layout(dout, rs.shape, rs.out_variant);
  out.fill_bytes(0xA5);
  std::vector<unsigned char> before = out.bytes();

  std::ostringstream desc;
  desc << dev.label << ": " << name << " " << dtype(d).name << " shape [";
  for (size_t i = 0; i < rs.shape.size(); ++i) desc << (i ? "," : "") << rs.shape[i];
  desc << "] in-layouts";
  for (int v : rs.in_variants) desc << " " << v;
  desc << " out-layout " << rs.out_variant << " params";
  for (double p : params) desc << " " << p;
  INFO(desc.str());

  std::string msg;
  CTStatus s = run_op(dev.dev, op, info.kind, ins, out, params, stream, &msg);
  INFO("status " << s << " " << ct_status_string(s) << ": " << msg);
  REQUIRE(s == CT_OK);
  Mismatch mm;
  check_result(op, ref, d, dout, ins, out, params, before, mm);
  INFO(mm.first);
  CHECK(mm.count == 0);
}

int64_t numel_of(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t e : s) n *= e;
  return n;
}

std::string header_name(int op) {
  switch (op) {
#define CTT_NAME_(ID, n, k, p, s) \
  case CT_OP_##ID:                \
    return #n;
    CT_ELEMENTWISE_OPS(CTT_NAME_)
    CT_BROADCAST_REDUCE_OPS(CTT_NAME_)
    CT_NN_OPS(CTT_NAME_)
#undef CTT_NAME_
  }
  return "";
}
int header_kind(int op) {
  switch (op) {
#define CTT_KIND_(ID, n, k, p, s) \
  case CT_OP_##ID:                \
    return k;
    CT_ELEMENTWISE_OPS(CTT_KIND_)
    CT_BROADCAST_REDUCE_OPS(CTT_KIND_)
    CT_NN_OPS(CTT_KIND_)
#undef CTT_KIND_
  }
  return 0;
}
int header_nparams(int op) {
  switch (op) {
#define CTT_NP_(ID, n, k, p, s) \
  case CT_OP_##ID:              \
    return p;
    CT_ELEMENTWISE_OPS(CTT_NP_)
    CT_BROADCAST_REDUCE_OPS(CTT_NP_)
    CT_NN_OPS(CTT_NP_)
#undef CTT_NP_
  }
  return -1;
}

// SEMANTICS.md's parameter names of the ops kRefs lists; the row's for any other.
std::string expected_param_names(const std::string& n, int op) {
  if (!find_ref(n)) return header_row(op) ? header_row(op)->param_names : "?";
  if (n == "leaky_relu") return "negative_slope=0.01";
  if (n == "elu" || n == "celu") return "alpha=1";
  if (n == "hardshrink" || n == "softshrink") return "lambd=0.5";
  if (n == "threshold") return "threshold,value";
  if (n == "hardtanh") return "min_val=-1,max_val=1";
  if (n == "clamp") return "lo,hi";
  if (n == "pow_scalar") return "p";
  if (n == "add_scalar" || n == "mul_scalar") return "s";
  if (n == "addcmul" || n == "addcdiv") return "value=1";
  if (n == "round_decimals") return "decimals=0";
  if (n == "polygamma") return "n";
  if (n == "mvlgamma") return "p";
  if (n == "softplus_beta") return "beta=1,threshold=20";
  if (n == "var" || n == "std") return "correction";
  if (n == "quantile" || n == "nanquantile") return "q";
  if (n == "kthvalue") return "k";
  if (n == "index_add") return "alpha=1";
  return "";
}

bool get_info(int op, CTOpInfo& info) {
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  return ct_op_info(op, &info) == CT_OK;
}

}  // namespace

// ---------------------------------------------------------------------------

TEST_CASE("registry lists every header op with its facts", "[generic]") {
  int32_t count = ct_op_count();
  REQUIRE(count >= (int32_t)CT_OP_END_);
  for (int op = 0; op < count; ++op) {
    if (unloaded_plugin_op(op)) continue;
    CTOpInfo info;
    INFO("op id " << op);
    REQUIRE(get_info(op, info));
    REQUIRE(info.op == op);
    REQUIRE(info.name != nullptr);
    REQUIRE(info.summary != nullptr);
    REQUIRE(info.param_names != nullptr);
    std::string name = info.name;
    INFO("op " << name);
    int32_t found = -1;
    CHECK(ct_op_find(info.name, &found) == CT_OK);
    CHECK(found == op);
    if (op >= (int)CT_OP_END_) continue;  // appended by a newer library / plugin
    // every header op has its one reference in tests/reference, keyed by op id
    CHECK(ctref::find(op) != nullptr);
    CHECK(ctref::op_name(op) == name);
    CHECK(name == header_name(op));
    CHECK(info.kind == header_kind(op));
    CHECK(info.num_params == header_nparams(op));
    CHECK(std::string(info.param_names) == expected_param_names(name, op));
    if (info.kind == CT_KIND_NN) {  // category 3: facts checked here, the ops in test_nn_*.cpp
      CHECK(info.category == CT_CATEGORY_NN);
      CHECK(info.output_dtype == CT_OUTPUT_NN);
      CHECK(info.inplace == 0);
      continue;
    }
    if (info.kind == CT_KIND_INDEX) {  // facts here, the ops in test_index.cpp
      const bool gathers = name == "take" || name == "gather";
      CHECK(info.category == CT_CATEGORY_BROADCAST_REDUCE);
      CHECK(info.num_inputs == (gathers ? 2 : 3));
      CHECK(info.num_tensors == info.num_inputs + 1);
      CHECK(info.tensor_roles[1] == CT_ROLE_INDEX);
      CHECK(info.output_dtype == CT_OUTPUT_SAME);
      CHECK(info.inplace == (gathers ? 0 : 1));  // a scatter may update x in place; a gather reads x everywhere
      continue;
    }
    CHECK(info.category == (is_category2_kind(header_kind(op)) ? CT_CATEGORY_BROADCAST_REDUCE
                                                               : CT_CATEGORY_ELEMENTWISE));
    CHECK(info.num_tensors == info.num_inputs + 1);
    CHECK(info.num_inputs == (info.kind == CT_KIND_TERNARY ? 3 : info.kind == CT_KIND_BINARY ? 2 : 1));
    CHECK(std::string(info.param_names) == expected_param_names(name, op));
    // SEMANTICS.md's output rule for the ops kRefs lists; the row's for any other
    const bool listed = find_ref(name) != nullptr;
    int want_out = listed ? expected_output(name) : header_row(op)->output;
    if (listed && !is_category2_kind(header_kind(op)))
      CHECK(want_out == (name == "cast" ? CT_OUTPUT_ANY : is_predicate(name) ? CT_OUTPUT_BOOL : CT_OUTPUT_SAME));
    CHECK(info.output_dtype == want_out);
    // out may be exactly an input: every SAME elementwise op, every binary and
    // along-axis op but argsort (its indices would overwrite the values they
    // order); never a reduction (SEMANTICS.md, ctensor.h category 2).
    if (info.kind == CT_KIND_REDUCE || name == "argsort") CHECK(info.inplace == 0);
    else if (want_out == CT_OUTPUT_SAME || is_category2_kind(info.kind)) CHECK(info.inplace == 1);
  }
}

TEST_CASE("ct_op_supported matches SEMANTICS.md, and unsupported runs fail cleanly", "[generic]") {
  int32_t count = ct_op_count();
  for (const TestDevice& dev : all_devices()) {
    // On the CPU exactly what SEMANTICS.md defines runs. Another device may
    // refuse more (a device runs a subset), but never runs what the op's rule
    // excludes, and says why it refuses.
    int defined = 0, refused = 0;
    for (int op = 0; op < count; ++op) {
      if (unloaded_plugin_op(op)) continue;
      CTOpInfo info;
      REQUIRE(get_info(op, info));
      if (info.kind == CT_KIND_NN) continue;  // dtype support of NN ops: test_nn_plan.cpp
      if (op >= (int)CT_OP_END_ && !find_ref(info.name)) continue;  // appended by a newer library
      const OpRef facts = facts_of(info);
      const OpRef* ref = &facts;
      for (int d = 0; d < DT_COUNT; ++d) {
        INFO(dev.label << ": op " << info.name << " dtype " << dtype(d).name);
        bool want = (ref->mask >> d) & 1u;
        CHECK(want == (((info.dtype_mask >> d) & 1u) != 0));
        CTStatus s = ct_op_supported(op, dev.dev, dtype(d).dt);
        std::string msg = last_error();
        INFO("ct_op_supported -> " << s << " " << msg);
        defined += want;
        if (want && (dev.cpu || s == CT_OK)) {
          CHECK(s == CT_OK);
          CHECK(msg.empty());
          continue;
        }
        refused += want;
        CHECK(s == CT_ERR_UNSUPPORTED);
        CHECK(!msg.empty());
        CHECK(contains(msg, info.name));
        CHECK(contains(msg, dtype(d).name));
        // running it fails with CT_ERR_UNSUPPORTED and leaves out untouched
        // (the output dtype the op's rule gives, so the dtype check passes and
        // the op x dtype check is what fails)
        std::vector<int64_t> shape = {2, 3};
        int dout = output_dtype_for(info.output_dtype, d);
        std::vector<HostTensor> ins;
        for (int k = 0; k < info.num_inputs; ++k)
          ins.push_back(HostTensor::compact(info.op == CT_OP_WHERE && k == 0    ? DT_BOOL
                                            : info.kind == CT_KIND_INDEX && k == 1 ? DT_I64
                                                                                   : d,
                                            info.kind == CT_KIND_INDEX && k == 1 &&
                                                    (op == CT_OP_TAKE || op == CT_OP_INDEX_ADD)
                                                ? std::vector<int64_t>{3}  // take, index_add: a 1-d index
                                                : shape));
        HostTensor out = HostTensor::compact(dout, info.kind == CT_KIND_REDUCE ? std::vector<int64_t>{} : shape);
        out.fill_bytes(0x5A);
        std::vector<unsigned char> before = out.bytes();
        std::vector<double> params(info.num_params, 1.0);
        std::string rmsg;
        CTStatus r = run_op(dev.dev, op, info.kind, ins, out, params, nullptr, &rmsg);
        INFO("run -> " << r << " " << rmsg);
        CHECK(r == CT_ERR_UNSUPPORTED);
        CHECK(!rmsg.empty());
        CHECK(out.bytes() == before);
      }
    }
    if (dev.cpu) CHECK(refused == 0);
    else
      WARN(dev.label << ": ct_op_supported refuses " << refused << " of the " << defined
                     << " category 1-2 op x dtype pairs the ops' rules define (each refusal checked: it says why, "
                        "and running it fails with the output untouched)");
  }
}

TEST_CASE("every op x dtype against the double reference", "[generic]") {
  int32_t count = ct_op_count();
  // A few ops also run on > 200k elements (threads) and a large transposed view.
  auto large = [](const std::string& n, int d) {
    return (n == "exp" && d == DT_F32) || (n == "add_scalar" && d == DT_I32) || (n == "where" && d == DT_F64) ||
           (n == "neg" && d == DT_F16);
  };
  for (const TestDevice& dev : all_devices()) {
    int runs = 0, pairs = 0, refused = 0;
    std::string refused_names;
    for (int op = 0; op < count; ++op) {
      if (unloaded_plugin_op(op)) continue;
      CTOpInfo info;
      REQUIRE(get_info(op, info));
      if (info.kind == CT_KIND_CAST) continue;  // own test case
      // Category 2 kinds (binary, reduce, along-axis) have their own suites:
      // test_binary.cpp and test_reduce.cpp (and on other devices, the test
      // case below this one).
      if (is_category2_kind(info.kind) || info.kind == CT_KIND_NN || info.kind == CT_KIND_INDEX)
        continue;  // NN ops: test_nn_*.cpp; index ops: test_index.cpp
      std::string name = info.name;
      if (op >= (int)CT_OP_END_ && !find_ref(info.name)) {  // appended by a newer library than this header
        WARN("skipping op " << name << " (newer than this test's header)");
        continue;
      }
      const OpRef facts = facts_of(info);
      const OpRef* ref = &facts;
      int nin = info.num_inputs;
      for (int d = 0; d < DT_COUNT; ++d) {
        if (!((info.dtype_mask >> d) & 1u)) continue;  // the op's rule: not defined (checked above)
        if (ct_op_supported(op, dev.dev, dtype(d).dt) != CT_OK) {  // the device's own gap: counted
          ++refused;
          if (refused <= 12) refused_names += std::string(refused > 1 ? ", " : "") + name + " " + dtype(d).name;
          continue;
        }
        ++pairs;
        Rng rng((uint64_t)op * 131 + (uint64_t)d);
        for (const std::vector<double>& params : params_for(name, d, info.num_params)) {
          std::vector<RunSpec> specs;
          for (int64_t n : {1, 7, 33, 1000}) specs.push_back({{n}, std::vector<int>(nin, 0), 0});
          if (nin == 1) {
            specs.push_back({{23, 19}, {1}, 0});
            specs.push_back({{17, 21}, {0}, 1});
            specs.push_back({{3, 5, 6}, {2}, 3});
            specs.push_back({{4, 9}, {4}, 1});
          } else {
            specs.push_back({{23, 19}, {1, 0, 2}, 0});
            specs.push_back({{17, 21}, {0, 1, 0}, 1});
            specs.push_back({{3, 5, 6}, {2, 4, 1}, 3});
          }
          if (large(name, d)) {
            specs.push_back({{262147}, std::vector<int>(nin, 0), 0});
            specs.push_back({{509, 515}, std::vector<int>(nin, 1), 0});
          }
          for (const RunSpec& rs : specs) {
            run_case(dev, op, info, *ref, d, rs, params, rng);
            ++runs;
          }
        }
      }
    }
    INFO(dev.label);
    CHECK(runs > 0);
    if (dev.cpu) CHECK(refused == 0);
    WARN(dev.label << ": " << pairs << " category 1 op x dtype pairs checked against the reference (" << runs
                   << " runs); " << refused << " pairs the ops' rules define were refused by ct_op_supported and "
                   << "skipped" << (refused ? " (" + refused_names + (refused > 12 ? ", ..." : "") + ")" : ""));
  }
}

// ---------------------------------------------------------------------------
// Category 2 on every other device: the same calls as on the CPU (whose
// values test_binary.cpp and test_reduce.cpp check against references)
// ---------------------------------------------------------------------------

namespace {

std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> r(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t ea = i + a.size() >= n ? a[i + a.size() - n] : 1;
    const int64_t eb = i + b.size() >= n ? b[i + b.size() - n] : 1;
    r[i] = ea == 1 ? eb : ea;
  }
  return r;
}

void fill_values(HostTensor& t, Rng& rng, bool specials) {
  if (!dtype(t.d).is_float()) return fill_int(t, rng);
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) t.set(i, rng.uniform(-5, 5));
  if (specials && n >= 16) {
    const double sp[] = {kNaN, kInf, -kInf, 0.0, -0.0, 1.0};
    for (size_t k = 0; k < 6; ++k) t.set((int64_t)(k * 2 + 1), sp[k]);
  }
}

// got (the device) against exp (the CPU): exact for elementwise maps,
// within a few roundings for reductions and along-axis ops, whose order of
// operations is the backend's own.
bool agrees(double got, double exp, int d, bool exact) {
  if (std::isnan(exp) || std::isnan(got)) return std::isnan(exp) && std::isnan(got);
  if (std::isinf(exp) || std::isinf(got)) return got == exp;
  if (exact) return got == exp;
  const double rtol = d == DT_F16 ? 4e-3 : d == DT_BF16 ? 2e-2 : d == DT_F32 ? 1e-5 : d == DT_F64 ? 1e-12 : rtol_of(d);
  return std::fabs(got - exp) <= rtol * std::max(std::fabs(exp), 1.0);
}

struct Cat2Case {
  std::vector<std::vector<int64_t>> shapes;  // inputs
  std::vector<int> layouts;                  // make_layout variant per input
  std::vector<int32_t> axes;                 // reduce: the axes (all_axes: NULL); along-axis: {axis}
  bool all_axes = false, keepdims = false, inplace = false;
};

std::vector<Cat2Case> cat2_cases(int kind) {
  std::vector<Cat2Case> c;
  if (kind == CT_KIND_BINARY) {
    c.push_back({{{7, 13}, {7, 13}}, {0, 0}, {}});
    c.push_back({{{7, 13}, {7, 13}}, {2, 1}, {}});
    c.push_back({{{7, 1}, {1, 13}}, {0, 3}, {}});       // broadcast both ways
    c.push_back({{{3, 4, 5}, {}}, {2, 0}, {}});        // a 0-d operand
    c.push_back({{{2, 1, 6}, {5, 1}}, {1, 4}, {}});    // rank extension, a stride-0 input
    c.push_back({{{6, 5}, {6, 5}}, {0, 0}, {}, false, false, true});  // in place
    c.push_back({{{}, {}}, {0, 0}, {}});
    c.push_back({{{4, 0}, {1, 0}}, {0, 0}, {}});       // empty
  } else if (kind == CT_KIND_REDUCE) {
    for (int layout : {0, 2}) {
      c.push_back({{{5, 6, 7}}, {layout}, {}, true, false});
      c.push_back({{{5, 6, 7}}, {layout}, {1}, false, false});
      c.push_back({{{5, 6, 7}}, {layout}, {0, 2}, false, true});
      c.push_back({{{5, 6, 7}}, {layout}, {-1}, false, true});
    }
    c.push_back({{{}}, {0}, {}, true, false});
    c.push_back({{{4, 9}}, {4}, {0}, false, false});  // stride-0 input
    c.push_back({{{3, 0, 2}}, {0}, {1}, false, true});  // empty reduction (max: an error on every device)
  } else {
    for (int layout : {0, 1, 2}) {
      c.push_back({{{6, 9}}, {layout}, {0}});
      c.push_back({{{6, 9}}, {layout}, {-1}});
    }
    c.push_back({{{4, 3, 5}}, {0}, {1}, false, false, true});  // in place
    c.push_back({{{}}, {0}, {0}});
  }
  return c;
}

// Runs one case on `dev` and returns the status; out holds the result.
CTStatus run_cat2(const CTDevice& dev, const CTOpInfo& info, const Cat2Case& c, std::vector<HostTensor>& ins,
                  HostTensor& out, std::string* msg) {
  std::vector<HostTensor*> all;
  for (HostTensor& t : ins) all.push_back(&t);
  if (!c.inplace) all.push_back(&out);
  Staged st(dev, all);
  INFO("staging: " << ct_last_error());
  REQUIRE(st.ok());
  std::vector<CTensor> v;
  for (size_t k = 0; k < ins.size(); ++k) v.push_back(st.m[k]->view(k % 2 == 0));
  CTensor o = c.inplace ? v[0] : st.m.back()->view();
  // (quantile's q inside (0, 1): the interpolation between two ranks)
  const std::string nm = info.name;
  const double p0 = nm == "quantile" || nm == "nanquantile" ? 0.37 : 1.0;
  const std::vector<double> params = info.num_params ? std::vector<double>(info.num_params, p0) : std::vector<double>{};
  CTStatus s = CT_ERR_INTERNAL;
  if (info.kind == CT_KIND_BINARY) s = ct_binary(info.op, &v[0], &v[1], &o, nullptr);
  else if (info.kind == CT_KIND_REDUCE)
    s = ct_reduce(info.op, &v[0], c.all_axes ? nullptr : c.axes.data(), c.all_axes ? 0 : (int32_t)c.axes.size(),
                  c.keepdims, params.empty() ? nullptr : params.data(), (int32_t)params.size(), &o, nullptr);
  else s = ct_along_axis(info.op, &v[0], c.axes[0], &o, nullptr);
  *msg = ct_last_error();
  REQUIRE((c.inplace ? st.m[0] : st.m.back())->fetch() == CT_OK);
  if (c.inplace) out = ins[0];
  return s;
}

}  // namespace

TEST_CASE("category 2 ops on every other device agree with the CPU", "[generic]") {
  const int32_t count = ct_op_count();
  for (const TestDevice& dev : all_devices()) {
    if (dev.cpu) continue;
    int pairs = 0, refused = 0, runs = 0;
    for (int op = 0; op < count; ++op) {
      if (unloaded_plugin_op(op)) continue;
      CTOpInfo info;
      REQUIRE(get_info(op, info));
      if (!is_category2_kind(info.kind)) continue;
      for (int d = 0; d < DT_COUNT; ++d) {
        if (!((info.dtype_mask >> d) & 1u)) continue;
        if (ct_op_supported(op, dev.dev, dtype(d).dt) != CT_OK) {
          ++refused;
          continue;
        }
        ++pairs;
        const int dout = output_dtype_for(info.output_dtype, d);
        // Binary ops agree exactly, except the transcendental ones (pow,
        // atan2, hypot, logaddexp, logaddexp2, xlogy), which every backend
        // computes within a few ulp.
        const std::string nm = info.name;
        // libm-like binary ops (the special functions: the GPUs compute them in the dtype's compute type, the
        // CPU in double) agree within the tolerance; the others bit for bit
        static const std::set<std::string> kLibmLike = {
            "pow", "atan2", "hypot", "logaddexp", "logaddexp2", "xlogy", "ldexp", "xlog1py",
            "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
            "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
            "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
            "laguerre_polynomial_l", "legendre_polynomial_p", "zeta", "igamma", "igammac"};
        const bool exact = info.kind == CT_KIND_BINARY && !kLibmLike.count(nm);
        Rng rng((uint64_t)op * 977 + (uint64_t)d);
        for (const Cat2Case& c : cat2_cases(info.kind)) {
          if (c.inplace && dout != d) continue;  // in place needs out's dtype to be x's
          std::vector<HostTensor> ins;
          for (size_t k = 0; k < c.shapes.size(); ++k) {
            ins.push_back(make_layout(d, c.shapes[k], c.layouts[k]));
            fill_values(ins.back(), rng, info.kind == CT_KIND_BINARY);
          }
          std::vector<int64_t> oshape = c.shapes[0];
          if (info.kind == CT_KIND_BINARY) oshape = broadcast_shape(c.shapes[0], c.shapes[1]);
          if (info.kind == CT_KIND_REDUCE) {
            const int nd = (int)c.shapes[0].size();
            std::vector<bool> red(nd, c.all_axes);
            for (int32_t a : c.axes) red[a < 0 ? a + nd : a] = true;
            oshape.clear();
            for (int k = 0; k < nd; ++k)
              if (!red[k]) oshape.push_back(c.shapes[0][k]);
              else if (c.keepdims) oshape.push_back(1);
          }
          std::ostringstream desc;
          desc << dev.label << ": " << info.name << " " << dtype(d).name << " shapes";
          for (size_t k = 0; k < c.shapes.size(); ++k) desc << " " << shape_str(c.shapes[k]) << "/" << c.layouts[k];
          desc << " axes";
          for (int32_t a : c.axes) desc << " " << a;
          desc << (c.all_axes ? " all" : "") << (c.keepdims ? " keepdims" : "") << (c.inplace ? " in place" : "");
          INFO(desc.str());
          std::vector<HostTensor> ins_cpu = ins, ins_dev = ins;
          HostTensor out_cpu = make_layout(dout, oshape, oshape.empty() ? 0 : 3);
          out_cpu.fill_bytes(0xA5);
          HostTensor out_dev = out_cpu;
          const std::vector<unsigned char> before = out_dev.bytes();
          std::string mc, md;
          const CTStatus sc = run_cat2(CTDevice{CT_CPU, 0}, info, c, ins_cpu, out_cpu, &mc);
          const CTStatus sd = run_cat2(dev.dev, info, c, ins_dev, out_dev, &md);
          INFO("cpu: " << ct_status_string(sc) << " " << mc << "; " << dev.label << ": " << ct_status_string(sd) << " "
                       << md);
          REQUIRE(sc == sd);
          ++runs;
          if (sd != CT_OK) {
            if (!c.inplace) CHECK(out_dev.bytes() == before);  // untouched on failure
            continue;
          }
          Mismatch mm;
          for (int64_t i = 0; i < out_cpu.numel(); ++i) {
            const bool ok = dtype(dout).is_float() ? agrees(out_dev.get(i), out_cpu.get(i), dout, exact)
                                                   : out_dev.get_i(i) == out_cpu.get_i(i);
            if (!ok)
              mm.add("index " + std::to_string(i) + ": " + dev.label + " " + fmt(out_dev.get(i)) + ", cpu " +
                     fmt(out_cpu.get(i)));
          }
          if (!c.inplace) {
            const std::vector<char> cov = covered(out_dev);
            const std::vector<unsigned char> after = out_dev.bytes();
            for (size_t b = 0; b < after.size(); ++b)
              if (!cov[b] && after[b] != before[b]) {
                mm.add("wrote outside the output's elements at byte " + std::to_string(b));
                break;
              }
          }
          INFO(mm.first);
          CHECK(mm.count == 0);
        }
      }
    }
    INFO(dev.label);
    CHECK(pairs > 0);
    WARN(dev.label << ": " << pairs << " category 2 op x dtype pairs agree with the CPU (" << runs << " runs); "
                   << refused << " pairs the ops' rules define were refused by ct_op_supported and skipped");
  }
}

// ---------------------------------------------------------------------------
// cast: all 100 pairs
// ---------------------------------------------------------------------------

namespace {

// The reference cast of x to dtype dst (tests/reference: values rounded once
// to the target, integers saturated or wrapped).
ctref::Array cast_ref(const HostTensor& x, int dst) {
  return reference(ref_call(CT_OP_CAST), {&x}, {{dst, x.shape}})[0];
}

// Does out[i] hold want[i] exactly (floats: bits up to the NaN payload)?
bool cast_ok(const ctref::Array& want, const HostTensor& out, int64_t i) {
  return want.is_float() ? same_double(out.get(i), want.f[(size_t)i]) : out.get_i(i) == want.i[(size_t)i];
}
std::string cast_str(const ctref::Array& want, int64_t i) {
  return want.is_float() ? fmt(want.f[(size_t)i]) : std::to_string(want.i[(size_t)i]);
}

void fill_cast_source(HostTensor& t, Rng& rng) {
  int64_t n = t.numel();
  if (dtype(t.d).is_float()) {
    const double sp[] = {0.0,   -0.0,   kNaN,  kInf,    -kInf,   0.5,     -0.5,   0.9,     -0.9,    1.5,
                         -1.0,  127.9,  128.5, -128.9,  -129.0,  255.5,   256.0,  300.0,   -300.0,  65504.0,
                         65519.0, 65520.0, 70000.0, -70000.0, 32767.9, -32768.9, 2147483647.0, -2147483649.0,
                         1e10,  -1e10,  3e9,   1e20,    -1e20,   3e38,    -3e38,  1e300,   -1e300,  1e-30,
                         9.3e18, -9.3e18, 1.00048828125, 1.000732421875, 5e-8, 3e-39,
                         // the unsigned tops: 2^16, 2^32 and 2^64 saturate, just below them truncates
                         65535.5, 65536.0, 4294967295.5, 4294967296.0, 18446744073709549568.0,
                         18446744073709551616.0, 1.9e19};
    for (int64_t i = 0; i < n; ++i) {
      double r = rng.uniform();
      double v = r < 0.5 ? rng.uniform(-300, 300) : r < 0.8 ? rng.uniform(-3, 3) : rng.uniform(-1e5, 1e5);
      t.set(i, v);
    }
    size_t ns = sizeof sp / sizeof sp[0];
    for (size_t k = 0; k < ns && (int64_t)k * 3 < n; ++k) t.set((int64_t)k * 3, sp[k]);
  } else if (t.d == DT_BOOL) {
    for (int64_t i = 0; i < n; ++i) t.set_i(i, (int64_t)(rng.next() & 1));
  } else {
    int64_t lo = int_min(t.d), hi = int_max(t.d);
    for (int64_t i = 0; i < n; ++i) {
      // half the values small, so narrowing casts are not all wraps
      t.set_i(i, (rng.next() & 1) ? rng.int_in(lo, hi) : rng.int_in(std::max<int64_t>(lo, -1000), std::min<int64_t>(hi, 1000)));
    }
    const int64_t edges[] = {0, 1, -1, 127, 128, -128, -129, 255, 256, 300, -300, 32767, 32768, 65504, 65520,
                             65536, 2147483647, (int64_t)-2147483647 - 1, 16777217, (1ll << 30) + (1ll << 22) + 1,
                             INT64_MAX, INT64_MIN, (1ll << 53) + 1, (1ll << 62) + (1ll << 38) + 1,
                             (1ll << 62) + (1ll << 54) + 1 /* bf16: one rounding up, via double: tie down */,
                             4294967295, 4294967296,
                             // uint64 above 2^63 (as their int64 bits): to float32, one rounding up
                             (int64_t)((1ull << 63) + (1ull << 39) + 1), (int64_t)(~0ull - (1ull << 11))};
    size_t k2 = 0;
    for (size_t k = 0; k < sizeof edges / sizeof edges[0]; ++k) {
      if (edges[k] < lo || edges[k] > hi) continue;
      if ((int64_t)(k2 * 3 + 1) >= n) break;
      t.set_i((int64_t)(k2++ * 3 + 1), edges[k]);
    }
  }
}

}  // namespace

TEST_CASE("cast: all 169 dtype pairs against the reference", "[generic]") {
  int32_t cast_op = -1;
  REQUIRE(ct_op_find("cast", &cast_op) == CT_OK);
  for (const TestDevice& dev : all_devices()) {
    int pairs = 0, refused = 0;
    for (int src = 0; src < DT_COUNT; ++src) {
      if (ct_op_supported(cast_op, dev.dev, dtype(src).dt) != CT_OK) {
        INFO(dev.label << ": ct_op_supported(cast, " << dtype(src).name << "): " << ct_last_error());
        REQUIRE(!dev.cpu);
        refused += DT_COUNT;
        continue;
      }
      for (int dst = 0; dst < DT_COUNT; ++dst) {
        // Layouts on the device; the last one converts between the host and
        // the device in ct_cast itself (x on the host, out on the device).
        struct L { std::vector<int64_t> shape; int vin, vout; bool from_host; };
        const L layouts[] = {{{1000}, 0, 0, false}, {{7}, 0, 0, false}, {{3, 5, 6}, 2, 3, false},
                             {{11, 13}, 1, 0, false}, {{5, 9}, 2, 3, true}};
        Rng rng((uint64_t)src * 17 + (uint64_t)dst);
        bool counted = false;
        for (const L& l : layouts) {
          if (l.from_host && dev.cpu) continue;
          INFO(dev.label << ": cast " << dtype(src).name << " -> " << dtype(dst).name << " numel "
                         << numel_of(l.shape) << " layouts " << l.vin << "/" << l.vout
                         << (l.from_host ? " (x on the host)" : ""));
          HostTensor x = elementwise_layout(src, l.shape, l.vin);
          fill_cast_source(x, rng);
          HostTensor out = elementwise_layout(dst, l.shape, l.vout);
          out.fill_bytes(0xA5);
          std::vector<unsigned char> before = out.bytes();
          DeviceMirror xd(l.from_host ? CTDevice{CT_CPU, 0} : dev.dev, x), od(dev.dev, out);
          REQUIRE(xd.status() == CT_OK);
          REQUIRE(od.status() == CT_OK);
          CTensor xv = xd.view(), ov = od.view(false);
          CTStatus s = ct_cast(&xv, &ov, nullptr);
          const std::string msg = ct_last_error();
          REQUIRE(od.fetch() == CT_OK);
          INFO("status " << s << ": " << msg);
          if (s == CT_ERR_UNSUPPORTED && !dev.cpu) {  // this device has no kernel for the pair: counted
            CHECK(contains(msg, dtype(src).name));
            CHECK(contains(msg, dtype(dst).name));
            CHECK(out.bytes() == before);
            if (!counted) ++refused;
            counted = true;
            continue;
          }
          REQUIRE(s == CT_OK);
          if (!counted) ++pairs;
          counted = true;
          Mismatch mm;
          const ctref::Array want = cast_ref(x, dst);
          int64_t n = x.numel();
          for (int64_t i = 0; i < n; ++i) {
            if (!cast_ok(want, out, i)) {
              std::ostringstream m;
              m << "cast " << dtype(src).name << "->" << dtype(dst).name << " index " << i << " input "
                << (dtype(src).is_float() ? fmt(x.get(i)) : std::to_string(x.get_i(i))) << " got "
                << (dtype(dst).is_float() ? fmt(out.get(i)) : std::to_string(out.get_i(i))) << " expected "
                << cast_str(want, i);
              mm.add(m.str());
            }
          }
          std::vector<char> cov = covered(out);
          std::vector<unsigned char> after = out.bytes();
          for (size_t b = 0; b < after.size(); ++b)
            if (!cov[b] && after[b] != before[b]) {
              mm.add("wrote outside the output's elements");
              break;
            }
          INFO(mm.first);
          CHECK(mm.count == 0);
        }
      }
    }
    if (dev.cpu) CHECK(pairs == DT_COUNT * DT_COUNT);
    CHECK(pairs > 0);
    WARN(dev.label << ": " << pairs << " of the " << DT_COUNT * DT_COUNT << " cast pairs checked against the reference, " << refused
                   << " refused by the device and skipped");
  }
}

TEST_CASE("cast: large contiguous (threads) f32 -> f16 and int64 -> f32", "[generic]") {
  const int pairs[][2] = {{DT_F32, DT_F16}, {DT_I64, DT_F32}};
  for (const auto& pr : pairs) {
    int src = pr[0], dst = pr[1];
    INFO("cast " << dtype(src).name << " -> " << dtype(dst).name);
    Rng rng(99);
    HostTensor x = HostTensor::compact(src, {262147});
    fill_cast_source(x, rng);
    HostTensor out = HostTensor::compact(dst, {262147});
    CTensor xv = x.view(), ov = out.view();
    REQUIRE(ct_cast(&xv, &ov, nullptr) == CT_OK);
    Mismatch mm;
    const ctref::Array want = cast_ref(x, dst);
    for (int64_t i = 0; i < x.numel(); ++i)
      if (!cast_ok(want, out, i))
        mm.add("index " + std::to_string(i) + " got " + fmt(out.get(i)) + " expected " + cast_str(want, i));
    INFO(mm.first);
    CHECK(mm.count == 0);
  }
}

// The reference codec itself, against the compiler's _Float16 where present.
TEST_CASE("reference float16/bfloat16 codec is correct", "[generic]") {
  CHECK(f16_from_double(1.0) == 0x3C00);
  CHECK(f16_from_double(65504.0) == 0x7BFF);
  CHECK(f16_from_double(65520.0) == 0x7C00);
  CHECK(f16_from_double(65519.99) == 0x7BFF);
  CHECK(f16_from_double(std::ldexp(1.0, -24)) == 0x0001);
  CHECK(f16_from_double(std::ldexp(1.0, -25)) == 0x0000);  // tie to even
  CHECK(f16_from_double(1.0 + std::ldexp(1.0, -11)) == 0x3C00);
  CHECK(f16_from_double(1.0 + 3 * std::ldexp(1.0, -11)) == 0x3C02);
  CHECK(f16_from_double(-2.0) == 0xC000);
  CHECK(bf16_from_double(1.0) == 0x3F80);
  CHECK(bf16_from_double(1.0 + std::ldexp(1.0, -8)) == 0x3F80);
  CHECK(bf16_from_double(1.0 + 3 * std::ldexp(1.0, -8)) == 0x3F82);
  CHECK(bf16_from_double(3.0e38) == 0x7F62);
  CHECK(bf16_from_double(3.4e38) == 0x7F80);  // rounds past max bf16 (3.3895e38) -> inf
  CHECK(std::isnan(f16_to_double(0x7E00)));
  CHECK(bf16_to_double(0x0001) == std::ldexp(1.0, -133));
  for (uint32_t h = 0; h < 0x10000; ++h) {
    double v = f16_to_double((uint16_t)h);
    if (!std::isnan(v)) REQUIRE(f16_from_double(v) == h);
    double w = bf16_to_double((uint16_t)h);
    if (!std::isnan(w)) REQUIRE(bf16_from_double(w) == h);
  }
#ifdef CTT_HAVE_FLOAT16
  Rng rng(5);
  for (int i = 0; i < 200000; ++i) {
    double v = std::ldexp(rng.uniform(-2, 2), (int)rng.int_in(-30, 17));
    if (f16_from_double(v) != f16_from_double_hw(v)) {
      FAIL("codec mismatch at " << fmt(v));
    }
  }
  // bf16 against float32 bit rounding (exact when the value is a float)
  for (int i = 0; i < 200000; ++i) {
    float f = (float)std::ldexp(rng.uniform(-2, 2), (int)rng.int_in(-140, 127));
    uint32_t b;
    std::memcpy(&b, &f, 4);
    uint32_t r = (b + 0x7FFF + ((b >> 16) & 1)) >> 16;
    if (bf16_from_double(f) != (uint16_t)r) FAIL("bf16 codec mismatch at " << fmt(f));
  }
#endif
}
